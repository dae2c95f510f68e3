/* pyframes.h — pyframes.c's interface: the calling thread's Python frames, read without the
 * GIL (see the top of pyframes.c). Calls realsym, thread and the writer; called by stacks.c. */
#ifndef VT_PRELOAD_PYFRAMES_H
#define VT_PRELOAD_PYFRAMES_H

#include <stdint.h>

/* vt__py_capture: reads the calling thread's Python frame chain without the GIL; fills
 * out[] with VT_PYFRAME(code_id, offset), innermost first, writing CODE records for new code
 * objects; returns the count (0 = no Python frames / unsupported version). *cut (cut may be
 * NULL): 1 when outer frames past max (or past the walk's limit) were left out, else 0. */
int vt__py_capture(uint64_t *out, int max, int *cut);
/* vt__py_last_main_stack: the most recent Python frames seen on the main thread (on another
 * thread that is not an autograd thread while the main thread has had none), for events of
 * backward threads; returns the count copied; *cut as vt__py_capture's for them. */
int vt__py_last_main_stack(uint64_t *out, int max, int *cut);

#endif
