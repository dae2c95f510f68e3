/* failing_alloc.h — the analyzer's allocator seam (trace/mem.h) made to fail one call, for the
 * unit tests that fail each allocation in turn (test_mem.c, test_allocsim.c): with
 * mem_set_ops(&failing), call g_at (1-based, 0: none) fails and every other is libc's; g_calls
 * counts the calls made. */
#ifndef VT_TEST_FAILING_ALLOC_H
#define VT_TEST_FAILING_ALLOC_H

#include <stddef.h>

#include "mem.h"

static long g_at, g_calls;

static int fails(void)
{
    return ++g_calls == g_at;
}
static void *f_malloc(size_t n)
{
    return fails() ? NULL : mem_libc.malloc(n);
}
static void *f_calloc(size_t n, size_t size)
{
    return fails() ? NULL : mem_libc.calloc(n, size);
}
static void *f_realloc(void *p, size_t n)
{
    return fails() ? NULL : mem_libc.realloc(p, n);
}
static void *f_aligned(size_t align, size_t n)
{
    return fails() ? NULL : mem_libc.aligned_alloc(align, n);
}
static const mem_ops failing = {f_malloc, f_calloc, f_realloc, f_aligned};

#endif
