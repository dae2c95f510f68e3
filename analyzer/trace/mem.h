/* mem.h — the analyzer's allocations, remembered when one fails: the link wraps malloc, calloc,
 * realloc, aligned_alloc, strdup and strndup (Makefile ANALYZER_LIBS, --wrap) for every object
 * of the analyzer, and cJSON gets the same functions as its hooks, so a failed allocation
 * anywhere is seen by mem_failed() and the command exits 2 "out of memory" instead of printing
 * an answer built without it (main.c). The allocator itself is a seam (as sqlite's aSyscall[]):
 * tests put one in that fails the Nth call (tests/unit/test_mem.c). */
#ifndef VT_ANALYZER_MEM_H
#define VT_ANALYZER_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct mem_ops {
    void *(*malloc)(size_t n);
    void *(*calloc)(size_t n, size_t size);
    void *(*realloc)(void *p, size_t n);
    void *(*aligned_alloc)(size_t align, size_t n);
} mem_ops;

/* mem_libc: the C library's functions (what the link wrapped). */
extern const mem_ops mem_libc;

/* mem_set_ops: the allocator every wrapped call uses from now on (NULL: mem_libc); returns the
 * one before. Not thread-safe: for tests, before any thread starts. */
const mem_ops *mem_set_ops(const mem_ops *ops);

/* mem_failed: whether an allocation of n > 0 bytes failed (or mem_note_failure was called)
 * since the program started or the last mem_reset. Safe from any thread. */
bool mem_failed(void);
/* mem_reset: forgets failures (tests, and the fuzz targets between inputs). */
void mem_reset(void);
/* mem_note_failure: records a failure of an allocation the wrappers do not see (inside libdw,
 * __cxa_demangle, ...) that its caller learned of from an error code. */
void mem_note_failure(void);
/* mem_note_crash: a library the analyzer calls crashed inside one of its calls, caught there
 * (symbolize.c: libdw, its SIGSEGV when one of its own allocations fails), its state no longer
 * trusted: a failure as mem_note_failure's (nothing printed from what it fed), which main says
 * in why's words (a static string: what crashed, its likely cause and what to do) instead of
 * MEM_OOM_MESSAGE's. mem_crash: that why, or NULL. */
void mem_note_crash(const char *why);
const char *mem_crash(void);
/* mem_fmemopen: fmemopen(buf, len, "r"), its FILE the C library's own allocation (no wrapper sees
 * it): NULL with errno, and ENOMEM recorded as a failure (never read as an unreadable file) */
FILE *mem_fmemopen(const void *buf, size_t len);

/* mem_heap_huge: the heap grown ahead and marked for 2 MiB pages (mem.c says why); once, at
 * the start, before any thread. */
void mem_heap_huge(void);

/* mem_malloc / mem_free: cJSON_InitHooks's pair (the wrapped malloc; free). */
void *mem_malloc(size_t n);
void mem_free(void *p);

/* mem_grow: *p holds at least need elements of elem bytes, its capacity (*cap) doubling from
 * first and never past max (0: no bound). 0, or -1 (*p unchanged) when out of memory or when
 * need is past max or the bytes would overflow. The analyzer's one growth of arrays. */
int mem_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first, size_t max);

/* MEM_OOM_MESSAGE: the words every command prints for it (after "vramtrace CMD: "). */
#define MEM_OOM_MESSAGE                                                                            \
    "out of memory (an allocation failed: output written before this is incomplete, do not use "   \
    "it); free memory or raise the limit (ulimit -v) and run it again"

#endif
