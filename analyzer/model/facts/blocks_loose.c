/* blocks_loose.c — PyTorch's emulated blocks in no segment's list (blocks.loose: unplaced,
 * cudaMallocAsync's, or their segment was released first), by start: open addressing, linear
 * probing, backward-shift deletion (blocks_loose.h). */
#include <stdlib.h>

#include "blocks_loose.h"

/* loose_slot: the slot of the loose block at addr, or the empty one where it would go. */
static blocks_block *loose_slot(const blocks *b, uint64_t addr)
{
    size_t j = (size_t)livemap_mix(addr, 0) & (b->caploose - 1);
    while (b->loose[j].start && b->loose[j].start != addr)
        j = (j + 1) & (b->caploose - 1);
    return &b->loose[j];
}

static int loose_grow(blocks *b)
{
    size_t cap = b->caploose ? b->caploose * 2 : 1024;
    blocks_block *old = b->loose, *n = calloc(cap, sizeof *n);
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
    blocks_block *e = loose_slot(b, addr);
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
    blocks_block *e = loose_slot(b, addr);
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
    blocks_block *e = b->nloose ? loose_slot(b, addr) : NULL;
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

void blocks_loose_drop(blocks *b, const blocks_block *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t *e = blocks_loose_add(b, a[i].start);
        if (e)
            *e = a[i].size;
    }
}
