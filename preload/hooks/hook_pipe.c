/* hook_pipe.c — pipe2 as a thin shim: the program's pipes pass through untouched; a pipe
 * libunwind makes while it unwinds for the stacks (its memory-validation pipe: at its first use,
 * and again where the program closed it) is moved above the program's descriptors
 * (core/quietio.h's VT_FD_HIGH). It had taken the lowest free ones: 3 and 4, or 1 of a program
 * that closed its stdout, whose next open(log) then got 5 and its output went nowhere. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/attr.h"
#include "core/quietio.h"
#include "core/realsym.h"
#include "core/thread.h"

VT__EXPORT int pipe2(int fds[2], int flags)
{
    typedef int (*fn_t)(int[2], int);
    static fn_t real;
    fn_t f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (fn_t)vt__next("pipe2");
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    int rc = f(fds, flags);
    if (rc == 0 && vt__t_unwind) { /* (libunwind's: its descriptors out of the program's way) */
        int e = errno;
        fds[0] = vt__fd_high(fds[0], (flags & O_CLOEXEC) != 0);
        fds[1] = vt__fd_high(fds[1], (flags & O_CLOEXEC) != 0);
        errno = e;
    }
    return rc;
}
