/* livemap.h — the replay's live set (livemap.c): (address, space) -> one 64-byte entry per
 * live allocation, open addressing with linear probing and backward-shift deletion, so a
 * lookup is one cache line and memory follows the live set, never the trace's length. */
#ifndef VT_ANALYZER_LIVEMAP_H
#define VT_ANALYZER_LIVEMAP_H

#include <stdint.h>

typedef struct livemap_entry {
    uint64_t addr; /* 0 = empty slot (no allocation has address 0) */
    uint64_t size, time_ns;
    uint32_t stack_id, iter;
    uint32_t snap_peak, snap_oom; /* index + 1 in the snapshots, 0 = not in one */
    uint32_t hash;                /* mix(addr, space), low 32 bits: no rehashing on deletes */
    uint32_t bwd;                 /* backward passes begun before the allocation */
    uint64_t alloc_event;         /* index of the allocating event */
    uint8_t space, api, device, layer, phase, flags, level, used; /* flags: EF_* */
} livemap_entry;
_Static_assert(sizeof(livemap_entry) == 64, "an entry is one cache line");

typedef struct livemap {
    livemap_entry *e;
    uint64_t cap, n;
} livemap;

/* livemap_mix: splitmix64's finalizer: every address bit reaches the low bits the table uses. */
static inline uint64_t livemap_mix(uint64_t addr, unsigned space)
{
    uint64_t h = addr ^ ((uint64_t)space << 58);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* livemap_find: the live entry of (addr, space), or NULL. */
livemap_entry *livemap_find(livemap *m, uint64_t addr, unsigned space);
/* livemap_put: a slot for (addr, space), zeroed when new; *replaced = 1 when a live one with
 * the same key is returned as it was. NULL when out of memory. */
livemap_entry *livemap_put(livemap *m, uint64_t addr, unsigned space, int *replaced);
/* livemap_del: removes e (from livemap_find / livemap_put); other entries may move. */
void livemap_del(livemap *m, livemap_entry *e);

#endif
