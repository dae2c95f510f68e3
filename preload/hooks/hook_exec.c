/* hook_exec.c — the exec family as thin shims: before the real exec the trace ends with an
 * EXEC trailer (the new image would otherwise leave it with a zero tail and no trailer); if
 * the exec fails, tracing goes on in the same file. The writer does the work (writer_end.c);
 * glibc's list forms (execl, ...) and execvp do not go through execve, so each is hooked. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "core/attr.h"
#include "core/realsym.h"
#include "core/thread.h"
#include "writer.h"

/* X(name, parameter list, argument list) — the vector forms, each calling its real self. */
#define VT_EXEC_HOOKS(X)                                                                           \
    X(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv, envp))      \
    X(execv, (const char *path, char *const argv[]), (path, argv))                                 \
    X(execvp, (const char *file, char *const argv[]), (file, argv))                                \
    X(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv, envp))     \
    X(fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv, envp))                 \
    X(execveat, (int dirfd, const char *path, char *const argv[], char *const envp[], int flags),  \
      (dirfd, path, argv, envp, flags))

/* The shim: find the real function (ENOSYS if absent, nothing written), end the trace, exec;
 * on return (failure) take the trailer back and keep errno as the real call left it. An exec
 * from a signal handler that interrupted this thread inside a hook (maybe inside the writer) ends
 * the trace only where that is safe, else leaves it cut there, said (it had been left so unsaid:
 * read as killed). */
#define VT_EXEC_SHIM(name, params, args)                                                           \
    VT__EXPORT int name params                                                                     \
    {                                                                                              \
        typedef int(*fn_t) params;                                                                 \
        static fn_t real;                                                                          \
        fn_t f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);                                         \
        if (!f) {                                                                                  \
            f = (fn_t)vt__next(#name);                                                             \
            __atomic_store_n(&real, f, __ATOMIC_RELEASE);                                          \
        }                                                                                          \
        if (!f) {                                                                                  \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        int e = errno;                                                                             \
        int cancel = vt__cancel_off(); /* (thread.h) */                                            \
        if (!vt__depth()) /* not from a signal handler that interrupted a hook on this thread */   \
            vt__writer_exec_prepare();                                                             \
        else                                                                                       \
            vt__writer_exec_interrupted();                                                         \
        vt__cancel_restore(cancel);                                                                \
        errno = e;                                                                                 \
        int r = f args;                                                                            \
        e = errno;                                                                                 \
        cancel = vt__cancel_off();                                                                 \
        vt__writer_exec_failed();                                                                  \
        vt__cancel_restore(cancel);                                                                \
        errno = e;                                                                                 \
        return r;                                                                                  \
    }
VT_EXEC_HOOKS(VT_EXEC_SHIM)
#undef VT_EXEC_SHIM

/* VT_COLLECT_ARGS: declares argv, the list form's arguments from arg0 to the NULL that ends
 * them (NULL included), as glibc's own execl does; leaves ap started after that NULL. */
#define VT_COLLECT_ARGS(arg0, ap, argv)                                                            \
    size_t n_ = 1;                                                                                 \
    va_start(ap, arg0);                                                                            \
    while (va_arg(ap, const char *))                                                               \
        n_++;                                                                                      \
    va_end(ap);                                                                                    \
    char *argv[n_ + 1];                                                                            \
    argv[0] = (char *)arg0;                                                                        \
    va_start(ap, arg0);                                                                            \
    for (size_t i_ = 1; i_ <= n_; i_++)                                                            \
        argv[i_] = va_arg(ap, char *);

VT__EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    VT_COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return execv(path, argv);
}

VT__EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    VT_COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return execvp(file, argv);
}

VT__EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    VT_COLLECT_ARGS(arg, ap, argv)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
