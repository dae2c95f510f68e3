/* blocks_index.c — where the blocks emulation finds its segments and its loose blocks
 * (blocks_index.h). */
#include "blocks_index.h"

#include <stdlib.h>
#include <string.h>

#include "livemap.h"

/* ---- segments -------------------------------------------------------------------------------- */

int blocks_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : first;
    while (c < n)
        c *= 2;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

size_t blocks_seg_upper(const blocks *b, uint64_t addr)
{
    size_t lo = 0, hi = b->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->segs[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

blocks_segment *blocks_seg_find(blocks *b, uint64_t addr)
{
    size_t k = blocks_near_at(b, addr);
    if (k != SIZE_MAX && addr - b->segs[k].addr < b->segs[k].size)
        return &b->segs[b->last_seg = k];
    size_t i = blocks_seg_upper(b, addr);
    b->searches++;
    if (!i || addr - b->segs[i - 1].addr >= b->segs[i - 1].size)
        return NULL;
    b->last_seg = i - 1;
    if (b->nearcap)
        *blocks_near_slot(b, addr) = b->segs[i - 1].id;
    return &b->segs[i - 1];
}

void blocks_renumber(blocks *b, size_t from)
{
    for (size_t k = from; k < b->nsegs; k++)
        b->pos[b->segs[k].id] = (uint32_t)k;
}

int blocks_new_id(blocks *b, uint32_t *id)
{
    if (b->nfree_ids) {
        *id = b->free_ids[--b->nfree_ids];
        return 0;
    }
    if (b->npos >= UINT32_MAX - 1 ||
        blocks_grow((void **)&b->pos, &b->cappos, b->npos + 1, sizeof *b->pos, 64))
        return -1;
    b->pos[b->npos] = UINT32_MAX;
    *id = (uint32_t)b->npos++;
    return 0;
}

void blocks_drop_id(blocks *b, uint32_t id)
{
    b->pos[id] = UINT32_MAX;
    if (!blocks_grow((void **)&b->free_ids, &b->capfree_ids, b->nfree_ids + 1, sizeof *b->free_ids,
                     64))
        b->free_ids[b->nfree_ids++] = id;
}

void blocks_near_fit(blocks *b)
{
    uint64_t want = blocks_many_segs(b) ? (uint64_t)b->nsegs * BLOCKS_NEAR_PER_SEG : 0;
    if (b->nearcap >= BLOCKS_NEAR_MAX || (b->nearcap && want <= b->nearcap))
        return;
    uint32_t cap = b->nearcap ? b->nearcap : BLOCKS_NEAR_MIN;
    while (cap < want && cap < BLOCKS_NEAR_MAX)
        cap *= 2;
    uint32_t *n = malloc((size_t)cap * sizeof *n);
    if (!n)
        return;
    memset(n, 0xff, (size_t)cap * sizeof *n); /* no id */
    free(b->near);
    b->near = n;
    b->nearcap = cap;
}

/* ---- the loose blocks (blocks.loose) -------------------------------------------------------- */

/* loose_slot: the slot of the loose block at addr, or the empty one where it would go. */
static struct blocks_loose *loose_slot(const blocks *b, uint64_t addr)
{
    size_t j = (size_t)livemap_mix(addr, 0) & (b->caploose - 1);
    while (b->loose[j].start && b->loose[j].start != addr)
        j = (j + 1) & (b->caploose - 1);
    return &b->loose[j];
}

static int loose_grow(blocks *b)
{
    size_t cap = b->caploose ? b->caploose * 2 : 1024;
    struct blocks_loose *old = b->loose, *n = calloc(cap, sizeof *n);
    if (!n)
        return -1;
    size_t oc = b->caploose;
    b->loose = n, b->caploose = cap;
    for (size_t i = 0; i < oc; i++)
        if (old[i].start)
            *loose_slot(b, old[i].start) = old[i];
    free(old);
    return 0;
}

uint64_t *blocks_loose_find(blocks *b, uint64_t addr)
{
    if (!addr)
        return b->zero_loose ? &b->zero_size : NULL;
    if (!b->nloose) /* (the usual: every block in its segment's list) */
        return NULL;
    struct blocks_loose *e = loose_slot(b, addr);
    return e->start ? &e->size : NULL;
}

uint64_t *blocks_loose_add(blocks *b, uint64_t addr)
{
    if (!addr) {
        b->zero_loose = 1;
        return &b->zero_size;
    }
    if ((b->nloose + 1) * 4 > b->caploose && loose_grow(b) < 0)
        return NULL;
    struct blocks_loose *e = loose_slot(b, addr);
    if (!e->start)
        e->start = addr, b->nloose++;
    return &e->size;
}

int blocks_loose_take_any(blocks *b, uint64_t addr, uint64_t *size)
{
    if (!addr) {
        if (!b->zero_loose)
            return 0;
        *size = b->zero_size, b->zero_loose = 0;
        return 1;
    }
    struct blocks_loose *e = b->nloose ? loose_slot(b, addr) : NULL;
    if (!e || !e->start)
        return 0;
    *size = e->size;
    size_t i = (size_t)(e - b->loose), mask = b->caploose - 1;
    b->loose[i].start = 0;
    b->nloose--;
    for (size_t j = (i + 1) & mask; b->loose[j].start; j = (j + 1) & mask) {
        size_t home = (size_t)livemap_mix(b->loose[j].start, 0) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) { /* its home is not in (i, j]: back to i */
            b->loose[i] = b->loose[j];
            b->loose[j].start = 0;
            i = j;
        }
    }
    return 1;
}
