/* stacks.h — stacks.c's interface beyond core.h (fork handling, test hooks). */
#ifndef VT_PRELOAD_STACKS_H
#define VT_PRELOAD_STACKS_H

#include <stdint.h>

void vt__stacks_fork_prepare(void);
void vt__stacks_fork_parent(void);
void vt__stacks_fork_child(void);
/* vt__stack_intern: interns frames[n_native + n_python] (native first); writes the STACK
 * record (and SYMBOL / MODULE records for new native frames) the first time; returns the
 * id (>= 1), or 0 when the table is full or output is off. */
uint32_t vt__stack_intern(const uint64_t *frames, int n_native, int n_python);

#endif
