/* helper.h — whether the preload may start a thread of its own (a bounded trace's packer, the
 * sampler, the page-fault helper) without taking one the program counts on, and the one line that
 * says when it did not. Under a finite RLIMIT_NPROC (`ulimit -u`; not enforced for root) every
 * thread of the user's counts, the preload's too: at `ulimit -u 5` a traced program's fourth
 * pthread_create failed where untraced it did not. Inline: the writer and the sampler use it. */
#ifndef VT_PRELOAD_HELPER_H
#define VT_PRELOAD_HELPER_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "quietio.h"

/* the threads a limit must leave the program beyond every thread now in the system */
#define VT__HELPER_MARGIN 256ull
/* the stacks of the preload's threads, not the default (RLIMIT_STACK's, 8 MiB here): each had
 * taken 8 MiB of the program's address space, and under `ulimit -v` 12-20 MB a traced program's
 * own pthread_create failed where untraced it did not. The packer runs the preload's code and
 * zstd's (a few KiB); the sampler calls the driver (cuMemGetInfo), whose depth is not ours */
#define VT__HELPER_STACK_PACKER (256u << 10)
#define VT__HELPER_STACK_SAMPLER (2u << 20)
#define VT__HELPER_STACK_POPULATE (64u << 10) /* (the page-fault helper: touches pages alone) */

/* vt__helper_read: the start of a /proc file into buf (n bytes, terminated): its length read, or
 * -1 when it cannot be opened */
static inline ssize_t vt__helper_read(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t k = read(fd, buf, n - 1);
    close(fd);
    buf[k > 0 ? k : 0] = '\0';
    return k;
}

/* vt__helper_system_root: this process's user namespace is the system's (uid_map the identity
 * over every uid): its root is exempt from RLIMIT_NPROC. A container's root in a namespace of its
 * own is not (the kernel exempts the initial namespace's alone); an unreadable map counts as
 * such a container. */
static inline int vt__helper_system_root(void)
{
    char buf[128];
    if (vt__helper_read("/proc/self/uid_map", buf, sizeof buf) < 0)
        return 0;
    char *p = buf, *e;
    unsigned long long v[3];
    for (int i = 0; i < 3; i++, p = e) {
        v[i] = strtoull(p, &e, 10);
        if (e == p)
            return 0;
    }
    return v[0] == 0 && v[1] == 0 && v[2] == 4294967295ull;
}

/* vt__helper_user_threads: the threads of the processes of real uid `uid` (what RLIMIT_NPROC
 * counts), from each /proc/PID/status; -1 (all ones) when /proc cannot be read. Once per helper,
 * where the system's total leaves too little room (a busy node: RHEL's 4096 soft limit beside
 * 3,900 threads of other users had kept every helper from starting). */
static inline unsigned long long vt__helper_user_threads(uid_t uid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return ~0ull;
    unsigned long long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%.20s/status", e->d_name);
        if (vt__helper_read(path, buf, sizeof buf) <= 0)
            continue; /* (gone meanwhile) */
        const char *u = strstr(buf, "\nUid:"), *t = strstr(buf, "\nThreads:");
        if (u && t && strtoul(u + 5, NULL, 10) == uid)
            n += strtoull(t + 9, NULL, 10);
    }
    closedir(d);
    return n;
}

/* vt__helper_room: 1 when a thread of the preload's cannot take the program's place: no
 * RLIMIT_NPROC soft limit, the system's root, or a limit above every thread in the system
 * (/proc/loadavg's total) by VT__HELPER_MARGIN, else above the user's own (vt__helper_user_threads)
 * by it. Else 0 and the limit in *limit (a /proc that cannot be read counts as no room). Asked once
 * per helper, never per event. */
static inline int vt__helper_room(unsigned long long *limit)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NPROC, &rl) || rl.rlim_cur == RLIM_INFINITY ||
        (geteuid() == 0 && vt__helper_system_root()))
        return 1;
    *limit = (unsigned long long)rl.rlim_cur;
    char buf[128];
    if (vt__helper_read("/proc/loadavg", buf, sizeof buf) < 0)
        return 0;
    const char *slash = strchr(buf, '/'); /* "0.00 0.01 0.05 1/234 5678": 234 threads */
    if (!slash)
        return 0;
    unsigned long long total = strtoull(slash + 1, NULL, 10);
    if (total && total + VT__HELPER_MARGIN <= *limit)
        return 1;
    unsigned long long mine = vt__helper_user_threads(getuid());
    return mine != ~0ull && mine + VT__HELPER_MARGIN <= *limit;
}

/* vt__helper_start: the preload's thread fn on a stack of `stack` bytes (a's), where
 * vt__helper_room finds room for it: 0 when it runs; -1 when there is none (*limit: the limit),
 * else pthread_create's error. What vt__helper_said says of it. */
static inline int vt__helper_start(pthread_t *t, pthread_attr_t *a, size_t stack,
                                   void *(*fn)(void *), unsigned long long *limit)
{
    pthread_attr_setstacksize(a, stack);
    return vt__helper_room(limit) ? vt__thread_start(t, a, fn) : -1;
}

/* vt__helper_said: says once on stderr (*said) that the preload's `which` thread was not started
 * (err, vt__helper_start's: -1, no room under RLIMIT_NPROC's limit; else pthread_create's) and
 * what that means (`so`). */
static inline void vt__helper_said(int *said, const char *which, unsigned long long limit, int err,
                                   const char *so)
{
    if (*said)
        return;
    *said = 1;
    if (err < 0)
        vt__quiet_stderr("vramtrace: no %s thread (ulimit -u %llu: the program's threads come "
                         "first): %s\n",
                         which, limit, so);
    else
        vt__quiet_stderr("vramtrace: no %s thread (it could not start: %s): %s\n", which,
                         strerror(err), so);
}

#endif
