/* mem.c — the wrapped allocation functions and the failure flag (mem.h). The linker sends every
 * call of the analyzer's objects to malloc & co. to __wrap_malloc & co. here, and the names
 * __real_malloc & co. to the C library's. */
#include "mem.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

const mem_ops mem_libc = {__real_malloc, __real_calloc, __real_realloc, __real_aligned_alloc};

static const mem_ops *g_ops = &mem_libc;
static atomic_bool g_failed;
static const char *_Atomic g_crash; /* mem_note_crash's why */

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
    atomic_store(&g_crash, NULL);
}

void mem_note_failure(void)
{
    atomic_store_explicit(&g_failed, true, memory_order_relaxed);
}

void mem_note_crash(const char *why)
{
    atomic_store(&g_crash, why);
    mem_note_failure();
}

const char *mem_crash(void)
{
    return atomic_load(&g_crash);
}

FILE *mem_fmemopen(const void *buf, size_t len)
{
    FILE *fp = fmemopen((void *)buf, len, "r");
    if (!fp && errno == ENOMEM) /* (a recorded file had been read as not recorded: exit 0) */
        mem_note_failure();
    return fp;
}

/* the heap on 2 MiB pages (mem_heap_huge, below): the heap grown ahead by HEAP_PAD, blocks of
 * HEAP_MMAP_MIN and more in mappings of their own */
#define HEAP_PAD ((size_t)16 << 20)
#define HEAP_MMAP_MIN ((size_t)4 << 20)
#define HEAP_GROWN (4 * HEAP_PAD) /* a block grown past HEAP_MMAP_MIN: room (__wrap_realloc) */
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void huge_advice(void *p, size_t n);
static void mark_huge(uintptr_t from, uintptr_t to);
static int g_huge_on;       /* mem_heap_huge was called: what comes after is marked too */
static uintptr_t g_huge_hi; /* the heap is marked from g_heap_lo up to here */

static void *seen(void *p, size_t n)
{
    if (!p && n)
        mem_note_failure();
    else if (g_huge_on && p)
        huge_advice(p, n);
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

/* g_glibc: the malloc in use is glibc's (its chunk's header may be read: own_mapping), not an
 * allocator preloaded into the analyzer, whose blocks have no such header before them */
static int g_glibc;

/* glibc's chunk header, the two words before a block (its layout since 2.0): for a block of its
 * own mapping, its offset in that mapping, then its size with the flag bits (IS_MMAPPED) */
#define CHUNK_IS_MMAPPED ((size_t)2)
#define CHUNK_FLAGS ((size_t)7)
typedef struct chunk_head {
    size_t offset, size_flags;
} chunk_head;
static chunk_head chunk_of(const void *p)
{
    chunk_head h;
    memcpy(&h, (const char *)p - sizeof h, sizeof h);
    return h;
}

/* own_mapping: glibc gave block p a mapping of its own; 0 under any other malloc */
static int own_mapping(const void *p)
{
    return g_glibc && (chunk_of(p).size_flags & CHUNK_IS_MMAPPED);
}

/* mark_mapping: the whole mapping of block p (own_mapping) marked for 2 MiB pages, its first page
 * (glibc's header, touched) too: marked in part, it would be split in two or three mappings, which
 * mremap cannot move as one (glibc's realloc then copies it) */
static void mark_mapping(const void *p)
{
    chunk_head h = chunk_of(p);
    madvise((char *)p - sizeof h - h.offset, (h.size_flags & ~CHUNK_FLAGS) + h.offset,
            MADV_HUGEPAGE);
}

void *__wrap_realloc(void *p, size_t n)
{
    /* a large block grown from the heap: moved by hand, so that the new block is marked for
     * 2 MiB pages (huge_advice) before the copy touches it, not after glibc's realloc has, into
     * room for HEAP_GROWN bytes: more than the heap's top ever holds, a mapping of its own
     * (address space alone until its pages are touched). One with a mapping of its own grows
     * in it, else glibc's realloc moves its pages (mremap) without copying them or touching
     * fresh ones, and seen marks the rest. (A long trace's lifetimes kept for the snapshots,
     * 20 MB at 10M events, had been copied into fresh pages at each doubling, in the heap's top
     * up to 16 MB) */
    if (g_huge_on && p && n >= HEAP_MMAP_MIN && g_ops == &mem_libc && !own_mapping(p)) {
        size_t old = malloc_usable_size(p);
        if (n > old) {
            void *q = n < HEAP_GROWN ? __real_malloc(HEAP_GROWN) : NULL;
            if (q) /* (refused: the block of n bytes below; no failure to note) */
                huge_advice(q, HEAP_GROWN);
            else
                q = __wrap_malloc(n);
            if (q) {
                memcpy(q, p, old);
                free(p);
            }
            return q;
        }
    }
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

int mem_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first, size_t max)
{
    if (need <= *cap)
        return 0;
    if ((max && need > max) || !elem || !first)
        return -1;
    size_t c = *cap ? *cap : first;
    while (c < need)
        c = c > SIZE_MAX / 2 ? need : c * 2;
    if (max && c > max)
        c = max;
    if (c > SIZE_MAX / elem) {
        mem_note_failure(); /* (no allocation could hold it: out of memory, said) */
        return -1;
    }
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* ---- the heap on 2 MiB pages ----------------------------------------------------------------
 * A report on a small trace touches ~1,000 fresh 4 KiB pages (its tables, the replay's live set,
 * the snapshots); where a page fault costs ~10 us (some virtual machines: 12 us measured on the
 * 2-core VM this project is built on), that was half the report's time. The heap is grown ahead by
 * HEAP_PAD and that range marked for 2 MiB pages (the kernel's transparent huge pages, where
 * enabled for madvise): a few faults instead. So are the heap as it grows past that and the
 * blocks of HEAP_MMAP_MIN and more (their own mappings: a long trace's snapshots and lifetimes,
 * a report on 10M events took 7,961 faults, 1,380 with them marked; livemap.c marks its own
 * tables), as they are made, before anything touches them (huge_advice). Advice only: refused,
 * nothing changes. */
#define HEAP_PROBE ((size_t)256 << 10)

static void *g_heap_pad;    /* (kept: reachable, never freed) */
static uintptr_t g_heap_lo; /* where the marked heap begins (0: no sbrk heap found) */

/* glibc_heap: the malloc in use is glibc's, its chunk headers as own_mapping reads them: malloc
 * defined in libc.so (not an allocator preloaded into the analyzer), not valgrind's (which keeps
 * the symbol's address and gives blocks of its own), and a block larger than the heap's top
 * holds found with a header that says so: its own mapping, at its start. */
static int glibc_heap(void)
{
    Dl_info at;
    if (!dladdr((void *)__real_malloc, &at) || !at.dli_fname || !strstr(at.dli_fname, "/libc.so"))
        return 0;
#if __has_include(<valgrind/valgrind.h>)
    if (RUNNING_ON_VALGRIND)
        return 0;
#endif
    char *p = __real_malloc(HEAP_GROWN); /* more than the heap's top holds: mmap'd, untouched */
    if (!p)
        return 0;
    chunk_head h = chunk_of(p);
    long page = sysconf(_SC_PAGESIZE);
    int ok = (h.size_flags & CHUNK_IS_MMAPPED) && h.offset == 0 && page > 0 &&
             ((uintptr_t)(p - sizeof h) % (uintptr_t)page) == 0 &&
             (h.size_flags & ~CHUNK_FLAGS) >= HEAP_GROWN + sizeof h;
    free(p);
    return ok;
}

void mem_heap_huge(void)
{
    mallopt(M_MMAP_THRESHOLD, (int)HEAP_MMAP_MIN);
    mallopt(M_TOP_PAD, (int)HEAP_PAD);
    mallopt(M_TRIM_THRESHOLD, (int)(2 * HEAP_PAD));
    /* a block larger than a new heap's top: the heap grows by HEAP_PAD past it. Only its header
     * and the top's (right after it) are written: the 2 MiB ranges from lo on are untouched when
     * marked (a range touched before is given 4 KiB pages). */
    g_huge_on = 1;
    g_glibc = glibc_heap();
    char *p = __real_malloc(HEAP_PROBE);
    uintptr_t at = (uintptr_t)p, end = (uintptr_t)sbrk(0);
    if (!p || at >= end || end - at > HEAP_PROBE + 2 * HEAP_PAD) { /* not sbrk's heap */
        free(p);
        return;
    }
    uintptr_t lo = (at + HEAP_PROBE + 4096 + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t hi = end & ~(HUGE_PAGE - 1);
    mark_huge(lo, hi);
    free(p); /* back into the top, which starts at p again */
    /* up to lo, a block never touched past its header and never freed (address space only):
     * the allocations that follow start on the 2 MiB pages, not on 4 KiB ones before them */
    if (hi > lo)
        g_heap_pad = __real_malloc(lo - at - 64);
    g_heap_lo = lo;
    g_huge_hi = hi > lo ? hi : lo;
}

/* mark_huge: the whole 2 MiB ranges in [from, to) marked for 2 MiB pages (advice only) */
static void mark_huge(uintptr_t from, uintptr_t to)
{
    uintptr_t lo = (from + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), hi = to & ~(HUGE_PAGE - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/* huge_advice: after an allocation p of n bytes (mem_heap_huge asked for 2 MiB pages), what it
 * brought that nothing has touched yet marked for them too: the heap past what is marked when
 * it grew (sbrk's end, no system call), and the whole 2 MiB ranges inside a block of its own
 * mapping (HEAP_MMAP_MIN and more: glibc writes its header alone, calloc none of the rest). A
 * range touched before it is marked keeps its 4 KiB pages. */
static void huge_advice(void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, end = (uintptr_t)sbrk(0);
    if (g_heap_lo && end > g_huge_hi) {
        mark_huge(g_huge_hi, end);
        uintptr_t hi = end & ~(HUGE_PAGE - 1);
        g_huge_hi = hi > g_huge_hi ? hi : g_huge_hi;
    }
    if (n >= HEAP_MMAP_MIN && !(g_heap_lo && a >= g_heap_lo && a < end)) {
        if (g_ops == &mem_libc && own_mapping(p))
            mark_mapping(p);
        else
            mark_huge(a, a + n);
    }
}
