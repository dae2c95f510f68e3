/* thread.h — thread.c's interface: the per-thread re-entrancy guard every hook takes, and
 * each thread's small index and role (THREAD record written on first use). Calls only the
 * writer (output.h). */
#ifndef VT_PRELOAD_THREAD_H
#define VT_PRELOAD_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "attr.h"
#include "output.h"

/* Every hook does (through call.h's vt__call_begin / _end):
 *     int rec = vt__enter();      // 1: record this call; 0: pass through (nested, disabled)
 *     ... real call ...
 *     if (rec) record(...);
 *     vt__leave();                // always, pairs with vt__enter
 * vt__enter increments a thread-local depth (initial-exec TLS) and returns 1 only at depth 1
 * while tracing is enabled. Driver hooks reached from inside a runtime hook (depth > 1) do
 * not record: a cudaMalloc is one event, not two. errno is left as it was by both. */
/* vt__depth: the guard's depth on this thread (0: not inside a hook). Inline: driver hooks
 * reached inside a runtime hook ask it first (call.h's vt__call_nested). */
extern __thread __attribute__((visibility("hidden"))) int vt__t_depth;
/* vt__t_real: the depth of the hook whose real call is under way on this thread (0: none; set by
 * call.h's _begin, put back by its _end). A hook reached one deeper is that call's own (the
 * runtime's cudaMalloc calling the driver's cuMemAlloc): passed through. One reached at another
 * depth inside a hook was made by the program, from a signal handler that interrupted the hook's
 * own work (its recording: the event cannot be written then, the record under way and the
 * writer's lock are the interrupted code's): counted as lost, with that reason. Until 2026-12-06
 * such calls were taken for the driver's and vanished: 3 of 27 events, with no count. */
extern __thread __attribute__((visibility("hidden"))) int vt__t_real;
/* vt__t_unwind: 1 while libunwind runs on this thread for the stacks (stacks.c): a pipe it makes
 * (its memory-validation pipe, made at its first use and again if the program closed it) goes
 * above the program's descriptors (hook_pipe.c); 0 the program's own pipes, untouched */
extern __thread __attribute__((visibility("hidden"))) int vt__t_unwind;
/* the cancellation state the outermost recorded hook found (-1: it changed none): no
 * cancellation point runs inside a hook, the real call's included. A thread the program cancels
 * while the preload opens the trace (close, write), unwinds its stack (libunwind's write to its
 * pipe) or warns had died holding the writer's or the stack table's lock with the runtime's
 * lock the hook was called under: every later CUDA call hung. A cancellation that came
 * meanwhile acts at the program's next cancellation point, as it would have. */
extern __thread __attribute__((visibility("hidden"))) int vt__t_cancel;

/* vt__enter / vt__leave leave errno alone without saving it: what they call does not set it
 * (vt__active's first configuration load keeps it; pthread_setcancelstate returns its error).
 * Inline: every hook takes them, and a call each had cost ~10 instructions an event. */
static inline int vt__enter(void)
{
    int d = ++vt__t_depth;
    int rec = d == 1 && vt__active();
    if (rec)
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &vt__t_cancel);
    return rec;
}

static inline void vt__leave(void)
{
    if (--vt__t_depth == 0 && vt__t_cancel >= 0) {
        if (vt__t_cancel != PTHREAD_CANCEL_DISABLE)
            pthread_setcancelstate(vt__t_cancel, &vt__t_cancel);
        vt__t_cancel = -1;
    }
}
/* vt__cancel_off / vt__cancel_restore: the same for the preload's work outside a hook (the trailer
 * at exit, the trace ended before an exec, a fork child's handler): cancellation off, the state
 * it found returned, then put back. A thread with a cancellation pending had acted on it at the
 * destructor's close() (exit(5) became the thread's end: status 0, other threads left running),
 * at a bounded trace's wait for its packer before an exec (the exec never made) or at the fork
 * child's close() (the child died inside fork(), status 0). */
static inline int vt__cancel_off(void)
{
    int old = PTHREAD_CANCEL_DISABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return old;
}

static inline void vt__cancel_restore(int old)
{
    if (old != PTHREAD_CANCEL_DISABLE)
        pthread_setcancelstate(old, &old);
}
static inline int vt__depth(void)
{
    return vt__t_depth;
}
/* vt__in_real_call: a hook about to enter (vt__depth() > 0) was reached inside the real call of
 * the hook around it: that call's own (the runtime calling the driver), not an event. */
static inline int vt__in_real_call(void)
{
    return vt__t_real == vt__t_depth;
}
/* vt__real_begin / vt__real_end: around a hook's real call (call.c's _begin / _end): the depth
 * whose real call is under way, the one it found kept for _end to put back. */
static inline int vt__real_begin(void)
{
    int outer = vt__t_real;
    vt__t_real = vt__t_depth;
    return outer;
}
static inline void vt__real_end(int outer)
{
    vt__t_real = outer;
}
/* vt__enter_any_depth: vt__enter, but 1 at any depth while tracing is active (contexts: the
 * runtime creates its context inside the first hooked runtime call). Pairs with vt__leave. */
int vt__enter_any_depth(void);
/* vt__guard_forever: nothing is recorded on this thread from now on (the destructor). */
void vt__guard_forever(void);

/* This thread's registration: its index + 1 (0: not registered), the fork generation it was
 * registered in, its role. thread.c's, read inline below: asked on every event. */
typedef struct vt__thread_self {
    uint32_t index;
    uint32_t generation;
    int role;
} vt__thread_self;
extern __thread __attribute__((visibility("hidden"))) vt__thread_self vt__t_self;
extern __attribute__((visibility("hidden"))) _Atomic uint32_t vt__thread_generation;
/* vt__thread_register: registers the calling thread (index, role, THREAD record); its index. */
uint32_t vt__thread_register(void);

/* vt__thread_index: this thread's small index (THREAD record written on first use, and again in
 * a fork child). */
static inline uint32_t vt__thread_index(void)
{
    if (VT__UNLIKELY(!vt__t_self.index ||
                     vt__t_self.generation !=
                         atomic_load_explicit(&vt__thread_generation, memory_order_relaxed)))
        return vt__thread_register();
    return vt__t_self.index - 1;
}
/* vt__thread_role: VT_ROLE_* of the calling thread (from its name, cached). */
static inline int vt__thread_role(void)
{
    vt__thread_index();
    return vt__t_self.role;
}
/* vt__thread_current: vt__thread_index and, in *role, vt__thread_role, in one call. */
static inline uint32_t vt__thread_current(int *role)
{
    uint32_t i = vt__thread_index();
    *role = vt__t_self.role;
    return i;
}
/* vt__thread_fork_child: in a fork child, threads register again (new file, new indices). */
void vt__thread_fork_child(void);

#endif
