/* reader_blocks_writers.h — private to reader_blocks.c and reader_blocks_writers.c: each writer's
 * latest block, so that a writer moving on to a new block is one lookup (its earlier blocks are
 * whole: trace_blocks.h). */
#ifndef VT_READER_BLOCKS_WRITERS_H
#define VT_READER_BLOCKS_WRITERS_H

#include <stddef.h>
#include <stdint.h>

/* a writer's latest block (its seq: its number among the file's blocks), and whether that block
 * is among the earlier windows' (the reader's `old`) */
typedef struct wlast {
    uint64_t seq;
    uint32_t writer;
    uint16_t used, in_old; /* used: 0 an empty entry */
} wlast;

/* one entry per writer seen, open addressing (16 bytes a writer) */
typedef struct writers {
    wlast *e;
    size_t n, cap;
} writers;

/* writers_at: writer's entry, or the empty one where it would go (cap > 0) */
wlast *writers_at(const writers *w, uint32_t writer);
/* writers_get: writer's entry, made (seq 0, not in old) when it has none; NULL: out of memory */
wlast *writers_get(writers *w, uint32_t writer);
void writers_free(writers *w);

#endif
