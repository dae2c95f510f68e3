/* livemap.h — the replay's live set (livemap.c): (address, space) -> one entry per live
 * allocation. A small index (16-byte slots: the address, its hash, the space and the entry's
 * number; open addressing, linear probing, backward-shift deletion: four slots to a cache line,
 * at most a quarter of them in use: short probes and shifts, 10 % faster than half on 100k live)
 * over a dense array of entries whose numbers stay put while they live (a freed one is reused
 * first, while it is still in cache); both on 2 MiB pages where the kernel gives them. Memory
 * follows the live set, never the trace's length. */
#ifndef VT_ANALYZER_LIVEMAP_H
#define VT_ANALYZER_LIVEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "hashseed.h"

/* LIVEMAP_FILL: at most 1 / LIVEMAP_FILL of the index's slots in use (the index doubles first) */
#define LIVEMAP_FILL 4

typedef struct livemap_entry {
    uint64_t addr; /* 0 = a free entry (no allocation has address 0); then size = next free + 1 */
    uint64_t size, time_ns;
    uint64_t alloc_event; /* index of the allocating event */
    uint32_t rec;         /* its allocating record in the category window (catpeaks.h), low bits */
    uint32_t ckey;        /* its classify_settle_key (replay_cats.c) */
    uint32_t stack_id, iter;
    uint32_t bwd;      /* backward passes begun before the allocation */
    uint32_t snap_oom; /* index + 1 in the OOM's snapshot, 0 = not in it */
    uint8_t space, api, device;
    uint8_t blk; /* its PyTorch block's place in its segment's list when made (blocks.h; a hint,
                  * any value) where its layer was (reader_api_layer(api): the API's alone) */
    uint8_t phase, flags, level; /* flags: EF_* */
    uint8_t code;                /* its category settled (a catpeaks code), 0 = not yet */
} livemap_entry;
_Static_assert(sizeof(livemap_entry) == 64, "an entry is one cache line");

typedef struct livemap_slot {
    uint64_t addr;  /* 0 = empty */
    uint32_t hash;  /* livemap_mix's low 32 bits: no rehashing on deletes */
    uint32_t where; /* (entry number) << 4 | space */
} livemap_slot;

typedef struct livemap {
    livemap_slot *slot;
    uint64_t cap, n; /* slots (a power of two), live entries */
    livemap_entry *e;
    uint64_t ne, cape;  /* entries in use or freed (e[0..ne)), room for */
    uint64_t free_head; /* entry number + 1 of the last freed entry, 0 = none */
    uint64_t hint;      /* the slot the last find or put ended at (a delete after a find) */
    size_t bytes_slot, bytes_e;
} livemap;

/* livemap_mix: the seeded hash of (addr, space) (hashseed_fold: each event's, 3 instructions where
 * hashseed_mix's 9 had been 2.3 % of a segment-mode replay's): every address bit reaches the low
 * bits the table uses, and addresses cannot be chosen to collide. */
static inline uint64_t livemap_mix(uint64_t addr, unsigned space)
{
    return hashseed_fold(addr ^ ((uint64_t)space << 58));
}

/* livemap_slot_of: the index slot of (addr, space) whose hash is h (livemap_mix), or m->cap when
 * it is not live. */
static inline uint64_t livemap_slot_of(const livemap *m, uint64_t addr, unsigned space, uint64_t h)
{
    if (!m->cap)
        return 0;
    uint64_t mask = m->cap - 1;
    for (uint64_t j = h & mask; m->slot[j].addr; j = (j + 1) & mask)
        if (m->slot[j].addr == addr && (m->slot[j].where & 15) == space)
            return j;
    return m->cap;
}
/* livemap_find: the live entry of (addr, space), or NULL. */
livemap_entry *livemap_find(livemap *m, uint64_t addr, unsigned space);
/* livemap_find_h / livemap_put_h / livemap_prefetch_h / livemap_prefetch_entry_h: the same with
 * h = livemap_mix(addr, space) computed once by the caller. */
static inline livemap_entry *livemap_find_h(livemap *m, uint64_t addr, unsigned space, uint64_t h)
{
    uint64_t j = livemap_slot_of(m, addr, space, h);
    if (j >= m->cap)
        return NULL;
    m->hint = j;
    return &m->e[m->slot[j].where >> 4];
}
/* livemap_find_at: livemap_find_h, where j is the slot livemap_slot_of gave a little earlier
 * (checked first: puts and deletes since may have moved it). */
static inline livemap_entry *livemap_find_at(livemap *m, uint64_t addr, unsigned space, uint64_t h,
                                             uint64_t j)
{
    if (j < m->cap && m->slot[j].addr == addr && (m->slot[j].where & 15) == space) {
        m->hint = j;
        return &m->e[m->slot[j].where >> 4];
    }
    return livemap_find_h(m, addr, space, h);
}
/* livemap_put: an entry for (addr, space), zeroed but for its key when new; *replaced = 1 when a
 * live one with the same key is returned as it was. NULL when out of memory. Entries may move in
 * memory (their numbers never do): a pointer from before a put is stale. */
livemap_entry *livemap_put(livemap *m, uint64_t addr, unsigned space, int *replaced);
/* livemap_put_raw: livemap_put_h, but a new entry is left as it was but for its key: the caller
 * sets every field. */
int livemap_grow_index(livemap *m);
int livemap_grow_entries(livemap *m);
static inline livemap_entry *livemap_put_raw(livemap *m, uint64_t addr, unsigned space,
                                             uint64_t hash, int *replaced)
{
    *replaced = 0;
    if (__builtin_expect((m->n + 1) * LIVEMAP_FILL >= m->cap, 0) && livemap_grow_index(m) < 0)
        return NULL;
    uint32_t h = (uint32_t)hash;
    uint64_t mask = m->cap - 1, j = h & mask;
    for (; m->slot[j].addr; j = (j + 1) & mask)
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
        if (__builtin_expect(m->ne == m->cape, 0) && livemap_grow_entries(m) < 0)
            return NULL;
        k = m->ne++;
    }
    m->n++;
    m->hint = j;
    m->slot[j] = (livemap_slot){addr, h, (uint32_t)(k << 4 | (space & 15))};
    livemap_entry *e = &m->e[k];
    e->addr = addr;
    e->space = (uint8_t)space;
    return e;
}
livemap_entry *livemap_put_h(livemap *m, uint64_t addr, unsigned space, uint64_t h, int *replaced);
/* livemap_del: removes e (from livemap_find / livemap_put); its number may be given out again. */
/* livemap_unslot: empties index slot i (backward-shift deletion). */
static inline void livemap_unslot(livemap *m, uint64_t i)
{
    uint64_t mask = m->cap - 1;
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
void livemap_del_slow(livemap *m, livemap_entry *e);
static inline void livemap_del(livemap *m, livemap_entry *e)
{
    uint64_t k = (uint64_t)(e - m->e), i = m->hint;
    if (__builtin_expect(i >= m->cap || m->slot[i].addr != e->addr || m->slot[i].where >> 4 != k,
                         0)) {
        livemap_del_slow(m, e);
        return;
    }
    e->addr = 0;
    e->size = m->free_head;
    m->free_head = k + 1;
    livemap_unslot(m, i);
}
/* livemap_del_found: livemap_del of e as the last livemap_find_at / _find_h found it, no put or
 * delete since: its slot is the hint, not checked again (a free's 10 instructions) */
static inline void livemap_del_found(livemap *m, livemap_entry *e)
{
    e->addr = 0;
    e->size = m->free_head;
    m->free_head = (uint64_t)(e - m->e) + 1;
    livemap_unslot(m, m->hint);
}
/* livemap_number / livemap_at: an entry's number, and the entry of a number (live or not). */
static inline uint32_t livemap_number(const livemap *m, const livemap_entry *e)
{
    return (uint32_t)(e - m->e);
}
static inline livemap_entry *livemap_at(livemap *m, uint32_t number)
{
    return &m->e[number];
}
/* livemap_live_entry: entry k (k < m->ne) when it is live, else NULL. Walk the live set this
 * way, k from 0 to m->ne: the entries' order follows the trace's events alone (the index's
 * follows the hash seed, which differs from run to run: hashseed.h). */
static inline livemap_entry *livemap_live_entry(livemap *m, uint64_t k)
{
    return m->e[k].addr ? &m->e[k] : NULL;
}
/* livemap_prefetch: the index slot of (addr, space) on its way to the cache (a read ahead). */
void livemap_prefetch(const livemap *m, uint64_t addr, unsigned space);
static inline __attribute__((always_inline)) void livemap_prefetch_h(const livemap *m, uint64_t h)
{
    if (m->cap)
        __builtin_prefetch(&m->slot[h & (m->cap - 1)]);
}
/* livemap_line_after: the first of the 16-byte slots (four to a cache line) on the line after
 * slot j's, in a table of cap slots (a power of two): where a backward-shift delete at j goes on */
static inline uint64_t livemap_line_after(uint64_t j, uint64_t cap)
{
    return ((j | 3) + 1) & (cap - 1);
}
/* livemap_prefetch_entry: the entry of (addr, space), when live, on its way to the cache (its
 * index slot should be there already), and the index's next line (what its delete shifts back
 * may start there: 18 % of the replay's own time, with 100k live, waited for it).
 * livemap_prefetch_entry_h returns the slot (for livemap_find_at; m->cap: not live). */
void livemap_prefetch_entry(const livemap *m, uint64_t addr, unsigned space);
static inline uint64_t livemap_prefetch_entry_h(const livemap *m, uint64_t addr, unsigned space,
                                                uint64_t h)
{
    uint64_t j = livemap_slot_of(m, addr, space, h);
    if (j < m->cap) {
        __builtin_prefetch(&m->e[m->slot[j].where >> 4]);
        __builtin_prefetch(&m->slot[livemap_line_after(j, m->cap)]);
    }
    return j;
}
void livemap_free(livemap *m);

#endif
