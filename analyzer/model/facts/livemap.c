/* livemap.c — the replay's live set (livemap.h): a 16-byte-slot index, open addressing with
 * linear probing and backward-shift deletion, over a dense array of 64-byte entries reused
 * last-freed first; large arrays on 2 MiB pages (madvise) when the kernel has them. */
#include "livemap.h"

#include "mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

/* big_alloc: n zeroed bytes; from 2 MiB on, mapped on a 2 MiB boundary and offered huge pages
 * (*bytes: what to give big_free). NULL when out of memory. */
static void *big_alloc(size_t n, size_t *bytes)
{
    if (n < HUGE_PAGE) {
        *bytes = 0;
        return calloc(1, n ? n : 1);
    }
    size_t len = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    char *p =
        mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        mem_note_failure(); /* mem.h's wrappers do not see mmap: said here (the command exits 2) */
        return NULL;
    }
    char *a = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (a > p)
        munmap(p, (size_t)(a - p));
    if (a + len < p + len + HUGE_PAGE)
        munmap(a + len, (size_t)(p + len + HUGE_PAGE - (a + len)));
#ifdef MADV_HUGEPAGE
    madvise(a, len, MADV_HUGEPAGE); /* advice: refused (no THP) is fine */
#endif
    *bytes = len;
    return a;
}

static void big_free(void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes)
        munmap(p, bytes);
    else
        free(p);
}

int livemap_grow_index(livemap *m)
{
    uint64_t ncap = m->cap ? m->cap * 2 : 1024;
    size_t bytes;
    livemap_slot *n = big_alloc(ncap * sizeof *n, &bytes);
    if (!n)
        return -1;
    for (uint64_t i = 0; i < m->cap; i++) {
        if (!m->slot[i].addr)
            continue;
        uint64_t j = m->slot[i].hash & (ncap - 1);
        while (n[j].addr)
            j = (j + 1) & (ncap - 1);
        n[j] = m->slot[i];
    }
    big_free(m->slot, m->bytes_slot);
    m->slot = n;
    m->cap = ncap;
    m->bytes_slot = bytes;
    return 0;
}

int livemap_grow_entries(livemap *m)
{
    uint64_t ncap = m->cape ? m->cape * 2 : 512;
    if (ncap > ((uint64_t)1 << 28)) {
        mem_note_failure(); /* no room: the number must fit a slot's 28 bits */
        return -1;
    }
    size_t bytes;
    livemap_entry *n = big_alloc(ncap * sizeof *n, &bytes);
    if (!n)
        return -1;
    if (m->ne)
        memcpy(n, m->e, m->ne * sizeof *n);
    big_free(m->e, m->bytes_e);
    m->e = n;
    m->cape = ncap;
    m->bytes_e = bytes;
    return 0;
}

static livemap_slot *slot_of(const livemap *m, uint64_t addr, unsigned space)
{
    uint64_t j = livemap_slot_of(m, addr, space, livemap_mix(addr, space));
    return j < m->cap ? &m->slot[j] : NULL;
}

livemap_entry *livemap_find(livemap *m, uint64_t addr, unsigned space)
{
    return livemap_find_h(m, addr, space, livemap_mix(addr, space));
}

void livemap_prefetch(const livemap *m, uint64_t addr, unsigned space)
{
    livemap_prefetch_h(m, livemap_mix(addr, space));
}

void livemap_prefetch_entry(const livemap *m, uint64_t addr, unsigned space)
{
    livemap_prefetch_entry_h(m, addr, space, livemap_mix(addr, space));
}

livemap_entry *livemap_put(livemap *m, uint64_t addr, unsigned space, int *replaced)
{
    return livemap_put_h(m, addr, space, livemap_mix(addr, space), replaced);
}

livemap_entry *livemap_put_h(livemap *m, uint64_t addr, unsigned space, uint64_t hash,
                             int *replaced)
{
    livemap_entry *e = livemap_put_raw(m, addr, space, hash, replaced);
    if (e && !*replaced) {
        memset(e, 0, sizeof *e);
        e->addr = addr;
        e->space = (uint8_t)space;
    }
    return e;
}

void livemap_del_slow(livemap *m, livemap_entry *e)
{
    uint64_t k = (uint64_t)(e - m->e);
    livemap_slot *s = slot_of(m, e->addr, e->space);
    e->addr = 0;
    e->size = m->free_head;
    m->free_head = k + 1;
    if (s)
        livemap_unslot(m, (uint64_t)(s - m->slot));
}

void livemap_free(livemap *m)
{
    big_free(m->slot, m->bytes_slot);
    big_free(m->e, m->bytes_e);
    memset(m, 0, sizeof *m);
}
