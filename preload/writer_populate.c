/* writer_populate.c — the window mapped ahead faulted in by a thread of the preload's own, not by
 * the program's thread whose record crossed the current window's half. Faulting a file's new
 * pages in costs the kernel a zeroed page each, and in a virtual machine whose memory the host
 * gives on first touch that is the slow part of a trace: on the build machine 180-360 MB/s, 28 %
 * of a `--stacks none` run's time, ~50 ns of a 32-byte record's (bench_alloc, 1 thread). The
 * helper starts with the first window of HUGE_SPAN bytes or more (a short run, whose windows are
 * smaller, never has it) in a process that has had a thread besides its first (single_threaded)
 * and takes one job at a time: a range of the spare, faulted in a piece at a time with no lock
 * held. Before any of the writer's mappings is unmapped (vt__populate_forget) the job on it is
 * dropped and the piece in progress waited for: the helper never touches a range that is not the
 * trace's. Where the thread cannot start, the caller faults the range in itself, as before. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/helper.h"
#include "core/quietio.h"
#include "writer_internal.h"

#define PIECE (256u << 10) /* faulted in at once: the process's mmap lock is never held long */

static struct populater {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a job came (the helper waits on it) */
    pthread_cond_t done; /* a piece ended (vt__populate_forget waits on it) */
    char *job;           /* [job + off, job + len) to fault in; NULL: none */
    uint64_t len, off;
    char *busy; /* the piece being faulted in now, without the lock: [busy, busy + busy_len) */
    uint64_t busy_len;
    _Atomic int state; /* 0: no helper yet, 1: running, -1: it could not start (callers do it) */
    uint64_t jobs, pieces;
} pop = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};

void (*vt__populate_test_piece)(void);

/* fault_in: [p, p + n) faulted in writable (older kernels: nothing); -1 when refused */
static int fault_in(char *p, uint64_t n)
{
#ifdef MADV_POPULATE_WRITE
    return madvise(p, (size_t)n, MADV_POPULATE_WRITE) ? -1 : 0;
#else
    (void)p, (void)n;
    return -1;
#endif
}

/* the caller's own way: by pieces, stopping at the first refusal (faulted in before the writers
 * store into it, not a page fault every 4 KiB on their path: concurrent faults on one file
 * serialize) */
static void fault_in_here(char *p, uint64_t len)
{
    for (uint64_t o = 0; o < len; o += PIECE)
        if (fault_in(p + o, len - o < PIECE ? len - o : PIECE))
            break;
}

static void *helper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pop.lock);
    for (;;) {
        while (!pop.job)
            pthread_cond_wait(&pop.wake, &pop.lock);
        uint64_t n = pop.len - pop.off < PIECE ? pop.len - pop.off : PIECE;
        char *at = pop.busy = pop.job + pop.off;
        uint64_t job = pop.jobs; /* (its number: a newer one is not dropped for it) */
        pop.busy_len = n;
        pop.off += n;
        if (pop.off >= pop.len)
            pop.job = NULL;
        pthread_mutex_unlock(&pop.lock);
        if (vt__populate_test_piece)
            vt__populate_test_piece();
        int bad = fault_in(at, n); /* (at stays mapped: an unmap of it waits for busy) */
        pthread_mutex_lock(&pop.lock);
        if (bad && pop.jobs == job) /* (refused: the rest of its job would be too) */
            pop.job = NULL;
        pop.busy = NULL;
        pop.pieces++;
        pthread_cond_broadcast(&pop.done);
    }
    return NULL;
}

/* start: the helper, once (pop.lock held); its stack small, every signal blocked in it. Not
 * where it would take one of the program's threads (`ulimit -u`, core/helper.h): the callers
 * fault their windows in themselves, nothing lost, nothing said */
static void start(void)
{
    pthread_attr_t a;
    pthread_t t;
    unsigned long long limit = 0;
    if (pthread_attr_init(&a)) {
        pop.state = -1;
        return;
    }
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pop.state = vt__helper_start(&t, &a, VT__HELPER_STACK_POPULATE, helper, &limit) ? -1 : 1;
    pthread_attr_destroy(&a);
}

/* glibc (2.32+) clears it when the process makes its first thread; weak: unknown elsewhere */
extern char __libc_single_threaded __attribute__((weak));

/* single_threaded: the process has never had a thread besides its first. A helper is not started
 * then: glibc's single-threaded ways (malloc, stdio without their locks) are the program's until
 * it makes a thread itself, so a signal handler that calls malloc, which it may not, behaves as
 * it did without the tracer (host_cases sigexecfail: with a helper, its handler's failed exec
 * waited for ever on the malloc lock its own interrupted calloc held). Every CUDA program has
 * threads (the driver's): there the helper runs. */
static int single_threaded(void)
{
    return &__libc_single_threaded && __libc_single_threaded;
}

/* the program's signals held while pop.lock is (a handler's record could switch windows and
 * come back here on the same thread) */
static void hold(sigset_t *old)
{
    vt__hold_async(old);
    pthread_mutex_lock(&pop.lock);
}

static void unhold(const sigset_t *old)
{
    pthread_mutex_unlock(&pop.lock);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

void vt__populate(char *p, uint64_t len, int ahead)
{
    if (!ahead || len < HUGE_SPAN) { /* (a short run's windows: at once, no thread) */
        fault_in_here(p, len);
        return;
    }
    sigset_t old;
    hold(&old);
    if (!pop.state && !single_threaded())
        start();
    int here = pop.state != 1;
    if (!here) { /* a job not finished yet is the spare's before, unmapped since or in use */
        pop.job = p, pop.len = len, pop.off = 0;
        pop.jobs++;
        pthread_cond_signal(&pop.wake);
    }
    unhold(&old);
    if (here)
        fault_in_here(p, len);
}

/* overlaps: [a, a + an) and [b, b + bn) share a byte */
static int overlaps(const char *a, uint64_t an, const char *b, uint64_t bn)
{
    return a && b && a < b + bn && b < a + an;
}

void vt__populate_forget(const void *p, uint64_t len)
{
    if (pop.state <= 0) /* (no helper: nothing of it to wait for) */
        return;
    sigset_t old;
    hold(&old);
    if (overlaps(pop.job, pop.len, p, len))
        pop.job = NULL; /* (its pieces not done yet: never) */
    while (overlaps(pop.busy, pop.busy_len, p, len))
        pthread_cond_wait(&pop.done, &pop.lock);
    unhold(&old);
}

/* threads: the process's threads now (/proc/self/stat's 20th field), 0 when not known */
static long threads(void)
{
    char b[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof b - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    b[n] = '\0';
    char *p = strrchr(b, ')'); /* (the command's name may hold anything but ends there) */
    for (int field = 2; p && field < 20; field++)
        p = strchr(p + 1, ' ');
    return p ? strtol(p + 1, NULL, 10) : 0;
}

int vt__populate_alone(void)
{
    return atomic_load(&pop.state) == 1 && threads() == 2;
}

void vt__populate_stats(uint64_t *jobs, uint64_t *pieces)
{
    pthread_mutex_lock(&pop.lock);
    *jobs = pop.jobs, *pieces = pop.pieces;
    pthread_mutex_unlock(&pop.lock);
}

void vt__populate_fork_child(void)
{
    pop.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    pop.wake = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    pop.done = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    pop.job = pop.busy = NULL;
    pop.state = 0; /* (the parent's helper is not here: the child's own starts when needed) */
}
