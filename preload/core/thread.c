/* thread.c — the per-thread state of the preload: the re-entrancy guard (a depth in
 * initial-exec TLS), each thread's index (THREAD record on first use) and role (from its
 * name: main, autograd, data worker). Interface: thread.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "output.h"
#include "thread.h"
#include "vramtrace/trace_format.h"

/* initial-exec TLS: no allocation, no lock on first touch */
__thread int vt__t_depth;                   /* (thread.h: vt__depth) */
__thread int vt__t_real;                    /* (thread.h: vt__in_real_call) */
__thread int vt__t_unwind;                  /* (thread.h: libunwind's pipes go high) */
__thread vt__thread_self vt__t_self;        /* (thread.h: vt__thread_index) */
_Atomic uint32_t vt__thread_generation = 1; /* bumped in a fork child: re-register threads */
static _Atomic uint32_t g_next_thread;

/* (thread.h: vt__t_cancel, the cancellation state the outermost recorded hook found) */
__thread int vt__t_cancel = -1;

int vt__enter_any_depth(void)
{
    int rec = vt__enter();
    return rec || (vt__t_depth > 1 && vt__active());
}

void vt__guard_forever(void)
{
    vt__t_depth++;
    vt__t_real = vt__t_depth; /* (what the thread calls from now on passes, not counted lost) */
}

static int role_of(const char *name, pid_t tid)
{
    if (!strncmp(name, "pt_autograd", 11))
        return VT_ROLE_AUTOGRAD;
    if (tid == getpid())
        return VT_ROLE_MAIN;
    if (!strncmp(name, "pt_data", 7) || !strncmp(name, "pt_main", 7))
        return VT_ROLE_WORKER;
    return VT_ROLE_OTHER;
}

/* vt__thread_register: see thread.h. Assigns the index and writes the THREAD record (first
 * event only); the index. */
uint32_t vt__thread_register(void)
{
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    pid_t tid = (pid_t)syscall(SYS_gettid);
    uint32_t idx = atomic_fetch_add(&g_next_thread, 1);
    if (idx > 0xfffe)
        idx = 0xffff; /* 65535 threads: the rest share the last index */
    vt__t_self.role = role_of(name, tid);
    vt__t_self.index = idx + 1;
    vt__t_self.generation = atomic_load(&vt__thread_generation);
    vt_rec_thread r = {idx, (uint32_t)tid, (uint32_t)vt__t_self.role, 0};
    const char *s[1] = {name};
    vt__write_strings(VT_REC_THREAD, 0, &r, sizeof r, s, NULL, 1);
    return idx;
}

void vt__thread_fork_child(void)
{
    atomic_fetch_add(&vt__thread_generation, 1);
    atomic_store(&g_next_thread, 0);
}
