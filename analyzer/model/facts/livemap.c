/* livemap.c — the replay's live set (livemap.h): a 16-byte-slot index, open addressing with
 * linear probing and backward-shift deletion, over a dense array of 64-byte entries reused
 * last-freed first; large arrays on 2 MiB pages (madvise) when the kernel has them. */
#include "livemap.h"

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
    if (p == MAP_FAILED)
        return NULL;
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

static int grow_index(livemap *m)
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

static int grow_entries(livemap *m)
{
    uint64_t ncap = m->cape ? m->cape * 2 : 512;
    if (ncap > ((uint64_t)1 << 28)) /* the number must fit a slot's 28 bits */
        return -1;
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

/* slot_h: the index slot of (addr, space) whose hash is h, or NULL. */
static inline livemap_slot *slot_h(const livemap *m, uint64_t addr, unsigned space, uint64_t h)
{
    if (!m->cap)
        return NULL;
    for (uint64_t j = h & (m->cap - 1); m->slot[j].addr; j = (j + 1) & (m->cap - 1))
        if (m->slot[j].addr == addr && (m->slot[j].where & 15) == space)
            return &m->slot[j];
    return NULL;
}

static livemap_slot *slot_of(const livemap *m, uint64_t addr, unsigned space)
{
    return slot_h(m, addr, space, livemap_mix(addr, space));
}

livemap_entry *livemap_find(livemap *m, uint64_t addr, unsigned space)
{
    return livemap_find_h(m, addr, space, livemap_mix(addr, space));
}

livemap_entry *livemap_find_h(livemap *m, uint64_t addr, unsigned space, uint64_t h)
{
    livemap_slot *s = slot_h(m, addr, space, h);
    if (!s)
        return NULL;
    m->hint = (uint64_t)(s - m->slot);
    return &m->e[s->where >> 4];
}

void livemap_prefetch(const livemap *m, uint64_t addr, unsigned space)
{
    livemap_prefetch_h(m, livemap_mix(addr, space));
}

void livemap_prefetch_h(const livemap *m, uint64_t h)
{
    if (m->cap)
        __builtin_prefetch(&m->slot[h & (m->cap - 1)]);
}

void livemap_prefetch_entry(const livemap *m, uint64_t addr, unsigned space)
{
    livemap_prefetch_entry_h(m, addr, space, livemap_mix(addr, space));
}

void livemap_prefetch_entry_h(const livemap *m, uint64_t addr, unsigned space, uint64_t h)
{
    const livemap_slot *s = slot_h(m, addr, space, h);
    if (s)
        __builtin_prefetch(&m->e[s->where >> 4]);
}

livemap_entry *livemap_put(livemap *m, uint64_t addr, unsigned space, int *replaced)
{
    return livemap_put_h(m, addr, space, livemap_mix(addr, space), replaced);
}

livemap_entry *livemap_put_h(livemap *m, uint64_t addr, unsigned space, uint64_t hash,
                             int *replaced)
{
    *replaced = 0;
    if ((m->n + 1) * 2 >= m->cap && grow_index(m) < 0)
        return NULL;
    uint32_t h = (uint32_t)hash;
    uint64_t j = h & (m->cap - 1);
    for (; m->slot[j].addr; j = (j + 1) & (m->cap - 1))
        if (m->slot[j].addr == addr && (m->slot[j].where & 15) == space) {
            *replaced = 1;
            m->hint = j;
            return &m->e[m->slot[j].where >> 4];
        }
    uint64_t k;
    if (m->free_head) { /* the last freed entry: still in cache */
        k = m->free_head - 1;
        m->free_head = m->e[k].size;
    } else {
        if (m->ne == m->cape && grow_entries(m) < 0)
            return NULL;
        k = m->ne++;
    }
    m->n++;
    m->hint = j;
    m->slot[j] = (livemap_slot){addr, h, (uint32_t)(k << 4 | (space & 15))};
    livemap_entry *e = &m->e[k];
    memset(e, 0, sizeof *e);
    e->addr = addr;
    e->space = (uint8_t)space;
    return e;
}

void livemap_del(livemap *m, livemap_entry *e)
{
    uint64_t k = (uint64_t)(e - m->e);
    livemap_slot *s =
        m->hint < m->cap && m->slot[m->hint].addr == e->addr && m->slot[m->hint].where >> 4 == k
            ? &m->slot[m->hint]
            : slot_of(m, e->addr, e->space);
    e->addr = 0;
    e->size = m->free_head;
    m->free_head = k + 1;
    if (!s)
        return;
    uint64_t i = (uint64_t)(s - m->slot), mask = m->cap - 1;
    m->slot[i].addr = 0;
    m->n--;
    for (uint64_t j = (i + 1) & mask; m->slot[j].addr; j = (j + 1) & mask) {
        uint64_t home = m->slot[j].hash & mask;
        /* move j back to i if its home is not in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slot[i] = m->slot[j];
            m->slot[j].addr = 0;
            i = j;
        }
    }
}

void livemap_free(livemap *m)
{
    big_free(m->slot, m->bytes_slot);
    big_free(m->e, m->bytes_e);
    memset(m, 0, sizeof *m);
}
