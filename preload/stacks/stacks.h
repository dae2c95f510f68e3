/* stacks.h — stacks.c's interface: the calling thread's stack (native frames from libunwind
 * merged with Python frames from pyframes.c), interned so each event carries one id. Calls
 * config, thread, pyframes and the writer; called by record.c. */
#ifndef VT_PRELOAD_STACKS_H
#define VT_PRELOAD_STACKS_H

#include <stdint.h>

/* vt__stack_capture: the calling thread's stack, interned; writes the STACK (and SYMBOL /
 * MODULE / CODE) records the first time; returns the id (0 = none). skip = hook frames. */
uint32_t vt__stack_capture(int skip);
/* vt__stack_intern: interns frames[n_native + n_python] (native first); writes the STACK
 * record (and SYMBOL / MODULE records for new native frames) the first time; returns the
 * id (>= 1), or 0 when the table is full or output is off. */
uint32_t vt__stack_intern(const uint64_t *frames, int n_native, int n_python);
/* vt__stack_intern_cut: vt__stack_intern of a stack whose outer Python frames were left out when
 * cut (its STACK record has VT_STACKF_PY_CUT): another stack than the same frames uncut. */
uint32_t vt__stack_intern_cut(const uint64_t *frames, int n_native, int n_python, int cut);

void vt__stacks_fork_prepare(void);
void vt__stacks_fork_parent(void);
void vt__stacks_fork_child(void);

#endif
