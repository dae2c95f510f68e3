/* blocks_loose.h — private to blocks.c and blocks_loose.c: the live blocks in no segment's list
 * (blocks.loose), kept by their start (a block at address 0, which no slot can hold, apart). */
#ifndef VT_ANALYZER_BLOCKS_LOOSE_H
#define VT_ANALYZER_BLOCKS_LOOSE_H

#include "blocks.h"

/* blocks_loose_find: where the size of the loose block at addr is kept, NULL when none is there.
 * blocks_loose_add: where the size of a loose block at addr goes; NULL when out of memory. */
uint64_t *blocks_loose_find(blocks *b, uint64_t addr);
uint64_t *blocks_loose_add(blocks *b, uint64_t addr);
/* blocks_loose_take_any: blocks_loose_take's work, the table searched */
int blocks_loose_take_any(blocks *b, uint64_t addr, uint64_t *size);
/* blocks_loose_take: the loose block at addr (if any) out of the table: its size, with its
 * BLOCK_REQUESTED bit (blocks.c), in *size; 0 when none is there (inline when there are none:
 * the usual). */
static inline int blocks_loose_take(blocks *b, uint64_t addr, uint64_t *size)
{
    return (b->nloose || b->zero_loose) && blocks_loose_take_any(b, addr, size);
}
/* blocks_loose_drop: the blocks a[0..n) leave their segment's list (it, or their part of it, was
 * released before them): loose, their frees still count them out (out of memory: lost, mem.h
 * says so) */
void blocks_loose_drop(blocks *b, const blocks_block *a, size_t n);

#endif
