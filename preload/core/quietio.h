/* quietio.h — the preload's own I/O never signals the program: SIGXFSZ (a file past `ulimit -f`)
 * and SIGPIPE (stderr or the manifest a closed pipe) are blocked on the calling thread around
 * each of the preload's writes, and one that the call raised is taken back before the mask is
 * restored, so the call just fails (EFBIG, EPIPE). Inline only (no calls between files): the
 * writer, the settings and every layer use it. Two system calls on the way in and out: used
 * around the writer's real I/O (fallocate, ftruncate, a manifest line, a warning), never per
 * record. */
#ifndef VT_PRELOAD_QUIETIO_H
#define VT_PRELOAD_QUIETIO_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* VT_FD_HIGH: the preload's descriptors (the trace's, libunwind's pipe) are moved to this number
 * or above, out of the program's way: it opens the lowest free ones, and a program that closes
 * stdout and opens its log expects that log at 1 */
#define VT_FD_HIGH 512

/* vt__fd_high: fd moved to VT_FD_HIGH or above (close-on-exec as cloexec says), the low one
 * closed; where the limit on descriptors is below it, fd as it was. The descriptor it is now. */
static inline int vt__fd_high(int fd, int cloexec)
{
    int hi = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, VT_FD_HIGH);
    if (hi < 0)
        return fd;
    close(fd);
    return hi;
}

typedef struct vt__quiet {
    sigset_t old;     /* the thread's mask before */
    sigset_t pending; /* what was pending before: the program's own, left alone */
} vt__quiet;

static inline void vt__quiet_set(sigset_t *s)
{
    sigemptyset(s);
    sigaddset(s, SIGXFSZ);
    sigaddset(s, SIGPIPE);
}

/* vt__thread_start: a thread of the preload's own (the sampler, the packer), started with every
 * signal blocked from its first instruction: the mask is inherited from the calling thread,
 * which blocks them around pthread_create (a thread that blocked them itself once running left
 * an instant where the program's signal could be delivered to it). 0 or pthread_create's error. */
static inline int vt__thread_start(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, a, fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* vt__hold_async: blocks on this thread every signal the program may send or time itself
 * (SIGALRM, SIGTERM, SIGUSR1, ...), not the ones a fault raises (they cannot wait); *old gets
 * the mask to restore with pthread_sigmask(SIG_SETMASK, old, NULL). Around the trace's
 * opening, once a process: a handler that exits or execs runs after it, never in the middle
 * of it (it had left an empty file, or one without its header, read as not a trace). */
static inline void vt__hold_async(sigset_t *old)
{
    sigset_t s;
    sigfillset(&s);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    for (unsigned i = 0; i < sizeof faults / sizeof *faults; i++)
        sigdelset(&s, faults[i]);
    pthread_sigmask(SIG_BLOCK, &s, old);
}

/* vt__quiet_begin: blocks SIGXFSZ and SIGPIPE on this thread (errno kept). */
static inline void vt__quiet_begin(vt__quiet *q)
{
    int e = errno;
    sigset_t s;
    vt__quiet_set(&s);
    pthread_sigmask(SIG_BLOCK, &s, &q->old);
    sigpending(&q->pending);
    errno = e;
}

/* vt__quiet_end: takes back a SIGXFSZ / SIGPIPE that became pending since vt__quiet_begin
 * (the call's own), then restores the mask (errno kept: the caller reads the call's). */
static inline void vt__quiet_end(vt__quiet *q)
{
    int e = errno;
    sigset_t now;
    if (!sigpending(&now)) {
        static const int sigs[2] = {SIGXFSZ, SIGPIPE};
        for (int i = 0; i < 2; i++) {
            if (sigismember(&now, sigs[i]) && !sigismember(&q->pending, sigs[i])) {
                sigset_t one;
                sigemptyset(&one);
                sigaddset(&one, sigs[i]);
                struct timespec zero = {0, 0};
                sigtimedwait(&one, NULL, &zero);
            }
        }
    }
    pthread_sigmask(SIG_SETMASK, &q->old, NULL);
    errno = e;
}

/* the program's stderr when the process started (taken by config.c's constructor, before the
 * program's main): open, its device and inode. The preload writes its warnings there only while
 * fd 2 is still that file: a program that closed its stderr and opened a file of its own, which
 * took fd 2, had them written into that file; one started with fd 2 closed gets none. */
extern struct vt__stderr_id {
    int open;
    dev_t dev;
    ino_t ino;
} vt__stderr_id;

/* vt__stderr_take: fd 2 now is the program's stderr (errno kept) */
static inline void vt__stderr_take(void)
{
    struct stat st;
    int e = errno;
    vt__stderr_id.open = fstat(2, &st) == 0;
    vt__stderr_id.dev = vt__stderr_id.open ? st.st_dev : 0;
    vt__stderr_id.ino = vt__stderr_id.open ? st.st_ino : 0;
    errno = e;
}

/* vt__stderr_same: fd 2 is still the program's stderr of the start (not a file of its own that
 * took fd 2 after it closed its stderr) */
static inline int vt__stderr_same(void)
{
    struct stat st;
    return vt__stderr_id.open && fstat(2, &st) == 0 && st.st_dev == vt__stderr_id.dev &&
           st.st_ino == vt__stderr_id.ino;
}

/* vt__quiet_stderr: one message on stderr without a signal (a closed pipe, a full file), and
 * none where fd 2 is no longer the program's stderr; written with write(2), not the program's
 * stdio stream (its lock, its buffer) */
__attribute__((format(printf, 1, 2))) static inline void vt__quiet_stderr(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    int e = errno;
    vt__quiet q;
    vt__quiet_begin(&q);
    for (size_t at = 0; vt__stderr_same() && at < len;) {
        ssize_t w = write(2, buf + at, len - at);
        if (w <= 0 && errno != EINTR)
            break;
        at += w > 0 ? (size_t)w : 0;
    }
    vt__quiet_end(&q);
    errno = e;
}

#endif
