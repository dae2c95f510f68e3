/* stackview.h — a recorded stack as people read it, for `flame`, the HTML icicle and the
 * memory_viz export: the Python stack is its spine (the program's outermost frame first);
 * CPython's own frames, and the native frames between Python frames (the trace does not record
 * where they sit among them), are folded away; the operation's native frames hang below the
 * innermost Python frame. Frames come from the tables' resolver (trace/tables.c). */
#ifndef VT_ANALYZER_STACKVIEW_H
#define VT_ANALYZER_STACKVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "tables.h"

#define STACKVIEW_MAX 320 /* frames of one view at most: 128 native + 128 Python + markers */

/* One frame of a view: a recorded frame, a run of frames nothing names, or a marker. */
typedef struct stackview_frame {
    const tables_frame *f; /* the (first) recorded frame; NULL for a marker */
    const char *marker;    /* a marker's text when f is NULL: STACKVIEW_M_* below */
    uint32_t run;          /* > 1: f and the run - 1 frames after it, unnamed, of one module */
} stackview_frame;

/* Markers (static strings; each names what the view put in place of frames). */
#define STACKVIEW_M_THREAD "[autograd thread]" /* Python frames lent by the main thread */
#define STACKVIEW_M_CUT "[deeper native frames not recorded]" /* the native stack was cut */
#define STACKVIEW_M_CPYTHON "[CPython]" /* interpreter frames of a native-only stack */
#define STACKVIEW_M_PY_CUT "[outer Python frames not recorded]" /* VT_STACKF_PY_CUT: the root */

enum {
    STACKVIEW_INNER_FIRST = 1, /* innermost first (memory_viz, tracebacks); else outermost first */
    STACKVIEW_EVERY_FRAME = 2, /* no markers but STACKVIEW_M_PY_CUT, unnamed frames one by one
                                * (memory_viz) */
};

/* stackview_build: the readable frames of stack_id into out (room for STACKVIEW_MAX); returns
 * how many (0 for no stack). With Python frames: those, then the native frames below the
 * innermost (those the native stack holds inside its innermost interpreter frame); when the
 * native stack never reaches the interpreter, STACKVIEW_M_CUT (it was cut at the recorded depth)
 * or STACKVIEW_M_THREAD (it starts a thread: its C library start frames folded) before them.
 * Without Python frames: the native frames, each run of interpreter frames one
 * STACKVIEW_M_CPYTHON (the program's entry frames kept), STACKVIEW_M_CUT first when cut. A stack
 * whose outer Python frames were not recorded (VT_STACKF_PY_CUT) starts with STACKVIEW_M_PY_CUT,
 * so its outermost recorded frame is never shown as the program's top. */
size_t stackview_build(tables *t, uint32_t stack_id, int flags, stackview_frame *out);

/* stackview_name: a frame's name (raw trace bytes: escape before printing) into buf: Python
 * "file:line function" (a file under site-packages from the package on, one under the traced
 * process's directory relative to it); a native function without its argument list; an
 * unnamed frame "module+0xoffset", a run "module (N unnamed frames)"; a marker as it is. */
const char *stackview_name(tables *t, const stackview_frame *v, char *buf, size_t len);

/* stackview_interpreter: 1 when a native frame is CPython's own (its module the python
 * executable or libpython, or an unknown module's _Py* / Py* symbol), else 0. */
int stackview_interpreter(const tables_frame *f);

/* stackview_unnamed_note: when frames of the snapshot's stacks stay unnamed, why, in one line
 * into buf ("... have no name: the trace recorded no build-id for them (...)"); "" when none.
 * stacks: stack ids (n of them; 0 skipped). */
const char *stackview_unnamed_note(tables *t, const uint32_t *stacks, size_t n, char *buf,
                                   size_t len);

#endif
