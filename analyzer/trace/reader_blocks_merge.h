/* reader_blocks_merge.h — private to reader_blocks.c and reader_blocks_merge.c: a record of a
 * window being handed out, and the merge that puts a window's timed records in time order. */
#ifndef VT_READER_BLOCKS_MERGE_H
#define VT_READER_BLOCKS_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "vramtrace/trace_format.h"

typedef struct item {
    uint64_t time; /* timed: its time; else 0 */
    uint64_t off;  /* its file offset (file order); side 0: its bytes there in `in` */
    uint64_t at;   /* side 1: its bytes at rec + at (copied: `side` is read anew per block) */
    uint32_t size;
    uint32_t writer; /* its block's */
    uint32_t next;   /* (blocks_merge's: the next record of its writer) */
    uint8_t timed, side;
} item;

/* blocks_merge: the timed items (*t)[0..n) (file order) into time order, equal times in file
 * order: each writer's records are in time order already (a thread's, in the order it made
 * them), so they are merged, the earliest head first, into the scratch *tmp (*captmp items,
 * grown as needed), which then trades places with *t (*cap items); a writer out of order, a block
 * of one record (VT_BLOCK_SHARED), or more than 8 writers: sorted whole in place. 0 (out of
 * memory for the scratch: sorted instead). */
int blocks_merge(item **t, size_t *cap, size_t n, item **tmp, size_t *captmp);

#endif
