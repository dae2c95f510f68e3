/* failmalloc.c — an LD_PRELOAD library for the out-of-memory tests (tests/integration/oom_*.sh):
 * counts the allocations a program makes once its main() starts and fails one of them, the
 * C library's own included (stdio, qsort, fopen, libdw), as a full memory would.
 *   VT_FAILMALLOC=N      the Nth allocation fails (ENOMEM), the others succeed
 *   VT_FAILMALLOC=N+     the Nth and every later one fail
 *   VT_FAILMALLOC_COUNT=FILE  the number of allocations made is written there at exit
 * Allocation = malloc, calloc, realloc (to a non-zero size), aligned_alloc, posix_memalign,
 * memalign, valloc; the memory itself is glibc's (__libc_malloc & co.). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static atomic_ulong g_count;
static unsigned long g_at; /* 0: never fail */
static int g_sticky, g_armed;
static const char *g_count_file;

/* fail: counts one allocation; whether it is the one (or one of those) to fail */
static int fail(void)
{
    if (!g_armed)
        return 0;
    unsigned long k = atomic_fetch_add(&g_count, 1) + 1;
    if (g_at && (k == g_at || (g_sticky && k > g_at))) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    return fail() ? NULL : __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    return fail() ? NULL : __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    return n && fail() ? NULL : __libc_realloc(p, n);
}
void *memalign(size_t align, size_t n)
{
    return fail() ? NULL : __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}
void *valloc(size_t n)
{
    return memalign(4096, n);
}
int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

static void write_count(void)
{
    FILE *f = g_count_file ? fopen(g_count_file, "w") : NULL;
    g_armed = 0;
    if (f) {
        fprintf(f, "%lu\n", (unsigned long)atomic_load(&g_count));
        fclose(f);
    }
}

/* __libc_start_main: arms the counter just before main() (the loader's and the libraries'
 * start-up allocations are not the program's) */
typedef int (*main_fn)(int, char **, char **);
static main_fn g_main;

static int armed_main(int argc, char **argv, char **envp)
{
    const char *at = getenv("VT_FAILMALLOC");
    g_count_file = getenv("VT_FAILMALLOC_COUNT");
    if (at) {
        char *end;
        g_at = strtoul(at, &end, 10);
        g_sticky = *end == '+';
    }
    if (g_count_file)
        atexit(write_count);
    g_armed = 1;
    return g_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
    int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
        (int (*)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                 void *))dlsym(RTLD_NEXT, "__libc_start_main");
    g_main = main;
    return real(armed_main, argc, argv, init, fini, rtld_fini, stack_end);
}
