/* trace_blocks.h — part of the trace format (trace_format.h includes it): the BLOCK LAYOUT of
 * a plain trace, format 2.0. (A bounded or compressed trace keeps the CHUNKED LAYOUT, 1.3.)
 *
 * WHY
 *   In 1.x every record is reserved from one shared offset, so threads recording at once
 *   contend for one cache line (8 threads: 3.1x the CPU per event of one). In 2.0 each writing
 *   thread reserves a BLOCK of the file at a time and fills it with its own records, so the
 *   threads share nothing per record; records of different threads are no longer in the file in
 *   the order of their times, and readers put them back in that order (below).
 *
 * LAYOUT (file header major 2, minor 0; records as in 1.x otherwise)
 *   After the header, at the top level, records back to back as in 1.x, of which BLOCK records
 *   are containers: a BLOCK's header.size covers the whole block (its 16 bytes included), and
 *   inside it, after vt_rec_block, the records one writer stored, in the order it made them,
 *   back to back, each stored header last. Inside a block a zero header is where that writer's
 *   records end (for now: a block whose writer is alive may get more); the rest of the block is
 *   skipped. A BLOCK is never inside a BLOCK. Records outside blocks (a TRAILER, at the top
 *   level as in 1.x) are read where they stand.
 *   `window` numbers the file's windows (increasing: the stretches the writer maps in turn;
 *   blocks of one window are contiguous in the file); `writer` is the writer's slot (one per
 *   thread), VT_BLOCK_SHARED for a block of one record written without a slot.
 *
 * READING IN TIME ORDER
 *   A reader takes the blocks of one window together: first their records that are not events
 *   (THREAD, STACK, CODE, SYMBOL, MODULE, DEVICE, PROCESS, CONFIG, PYINFO, FILE: definitions),
 *   in file order, then their timed records (ALLOC, FREE, OOM, MEMINFO: tt) in the order of
 *   their times, records of equal times in file order; then the next window's. Every record a
 *   thread makes after a window begins is in that window or a later one, so this is the order
 *   the records were made in, up to records of different threads made within the same few
 *   microseconds (as in 1.x's file order). A window whose blocks are all one writer's may be
 *   read as it lies: that writer made its records in that order. A block is whole once its
 *   writer has a later block, or at the trailer; a reader following a live trace reads a block
 *   again until then. Byte offsets in a reader's messages are of the records in that order, but
 *   where a block itself is malformed (a file byte, said so).
 */
#ifndef VRAMTRACE_TRACE_BLOCKS_H
#define VRAMTRACE_TRACE_BLOCKS_H

#include <stdint.h>

#define VT_BLOCKS_MAJOR 2
#define VT_BLOCKS_MINOR 0
#define VT_BLOCK_SHARED 0xffffffffu /* `writer` of a one-record block written without a slot */

typedef struct vt_rec_block {
    uint32_t window; /* the window the block was reserved in: increasing in file order */
    uint32_t writer; /* the writer's slot, or VT_BLOCK_SHARED */
} vt_rec_block;
_Static_assert(sizeof(vt_rec_block) == 8, "layout");
#define VT_BLOCK_HEAD_SIZE (8u + 8u)
/* the largest BLOCK: a largest record with the block's own header */
#define VT_BLOCK_MAX_SIZE (VT_REC_MAX_SIZE + VT_BLOCK_HEAD_SIZE)

#endif /* VRAMTRACE_TRACE_BLOCKS_H */
