/* blocks_index.h — where the blocks emulation (blocks.c) finds its segments and its loose blocks
 * (blocks_index.c): the segments sorted by address, known by id and hinted by 2 MiB; the blocks
 * in no segment's list by start. */
#ifndef VT_ANALYZER_BLOCKS_INDEX_H
#define VT_ANALYZER_BLOCKS_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "blocks.h"

/* blocks_grow: *arr holds at least n elements of elem bytes (capacity doubling from first); -1
 * when out of memory (*arr unchanged). */
int blocks_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t first);

/* ---- segments ---- */

/* blocks_near_at: the index of the segment addr's hint names, or SIZE_MAX (none, or no longer
 * one) */
static inline size_t blocks_near_at(const blocks *b, uint64_t addr)
{
    uint32_t id = b->nearcap ? *blocks_near_slot(b, addr) : UINT32_MAX;
    size_t k = id < b->npos ? b->pos[id] : SIZE_MAX;
    return k < b->nsegs ? k : SIZE_MAX;
}

/* blocks_seg_upper: the index of the first segment starting above addr. */
size_t blocks_seg_upper(const blocks *b, uint64_t addr);
/* blocks_seg_find: blocks_seg_of's answer past the last one found: the one found last in addr's
 * 2 MiB, by its id (inserts and deletes of segments move it in segs, its id stays; segments are
 * apart: a hit is the one), else a search. */
blocks_segment *blocks_seg_find(blocks *b, uint64_t addr);

/* blocks_seg_of: the segment holding addr, or NULL (the last one found first, inline: a step's
 * tensors keep to a few segments). */
static inline blocks_segment *blocks_seg_of(blocks *b, uint64_t addr)
{
    size_t l = b->last_seg;
    if (l < b->nsegs && addr - b->segs[l].addr < b->segs[l].size)
        return &b->segs[l];
    return blocks_seg_find(b, addr);
}

static inline int blocks_segs_reserve(blocks *b, size_t n)
{
    return blocks_grow((void **)&b->segs, &b->capsegs, n, sizeof *b->segs, 64);
}
/* blocks_renumber: the segments from index `from` on moved: where each is now */
void blocks_renumber(blocks *b, size_t from);
/* blocks_new_id: an id for a new segment (a deleted one's first); -1 out of memory */
int blocks_new_id(blocks *b, uint32_t *id);
/* blocks_drop_id: a segment is deleted: its id names none (given out again; kept unused when the
 * list of free ids cannot grow) */
void blocks_drop_id(blocks *b, uint32_t id);
/* blocks_near_fit: the hints sized to the segments (a new table starts empty: every hint is
 * checked before use, a lost one is found again); out of memory, the old one stays (mem.h has
 * it) */
void blocks_near_fit(blocks *b);

/* ---- the loose blocks (blocks.loose) ---- */

/* blocks_loose_find: where the size of the loose block at addr is kept, NULL when none is there. */
uint64_t *blocks_loose_find(blocks *b, uint64_t addr);
/* blocks_loose_add: where the size of a loose block at addr goes; NULL when out of memory. */
uint64_t *blocks_loose_add(blocks *b, uint64_t addr);
/* blocks_loose_take_any: blocks_loose_take's work, the table searched */
int blocks_loose_take_any(blocks *b, uint64_t addr, uint64_t *size);
/* blocks_loose_take: the loose block at addr (if any) out of the table: its size, with its
 * BLOCK_REQUESTED bit, in *size; 0 when none is there (inline when there are none: the usual). */
static inline int blocks_loose_take(blocks *b, uint64_t addr, uint64_t *size)
{
    return (b->nloose || b->zero_loose) && blocks_loose_take_any(b, addr, size);
}

#endif
