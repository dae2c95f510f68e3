/* mem.c — the wrapped allocation functions and the failure flag (mem.h). The linker sends every
 * call of the analyzer's objects to malloc & co. to __wrap_malloc & co. here, and the names
 * __real_malloc & co. to the C library's. */
#include "mem.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

const mem_ops mem_libc = {__real_malloc, __real_calloc, __real_realloc, __real_aligned_alloc};

static const mem_ops *g_ops = &mem_libc;
static atomic_bool g_failed;

const mem_ops *mem_set_ops(const mem_ops *ops)
{
    const mem_ops *old = g_ops;
    g_ops = ops ? ops : &mem_libc;
    return old;
}

bool mem_failed(void)
{
    return atomic_load_explicit(&g_failed, memory_order_relaxed);
}

void mem_reset(void)
{
    atomic_store_explicit(&g_failed, false, memory_order_relaxed);
}

void mem_note_failure(void)
{
    atomic_store_explicit(&g_failed, true, memory_order_relaxed);
}

static void *seen(void *p, size_t n)
{
    if (!p && n)
        mem_note_failure();
    return p;
}

void *__wrap_malloc(size_t n)
{
    return seen(g_ops->malloc(n), n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return seen(g_ops->calloc(n, size), n && size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return seen(g_ops->realloc(p, n), n); /* realloc(p, 0) may free and say NULL */
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return seen(g_ops->aligned_alloc(align, n), n);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = __wrap_malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

char *__wrap_strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *p = __wrap_malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void *mem_malloc(size_t n)
{
    return __wrap_malloc(n);
}

void mem_free(void *p)
{
    free(p);
}
