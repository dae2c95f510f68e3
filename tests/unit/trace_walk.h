/* trace_walk.h — walking the records of a trace file the preload wrote, in file order, for the
 * unit tests that read its bytes: a plain trace's records are in BLOCKs (format 2.0,
 * trace_blocks.h), entered here, and the zeros after a block's last record skipped. Include
 * after <cmocka.h>. */
#ifndef VT_TEST_TRACE_WALK_H
#define VT_TEST_TRACE_WALK_H

#include <stdio.h>
#include <string.h>

#include "vramtrace/trace_format.h"

/* next_record: in a trace file's bytes b (len), the offset of the record at or after *off (a
 * BLOCK entered, the zeros after its last record skipped; *end: the block's end, 0 outside one),
 * or len when there is none; *off is left there. */
static inline size_t next_record(const unsigned char *b, size_t len, size_t *off, size_t *end)
{
    while (*off + 8 <= len) {
        vt_rec_header h;
        memcpy(&h, b + *off, sizeof h);
        if (*end && (*off >= *end || !h.type)) { /* the block's end, or its unused rest */
            *off = *end;
            *end = 0;
            continue;
        }
        if (!h.type)
            return len;
        if (h.type == VT_REC_BLOCK && !*end) {
            assert_true(h.size >= VT_BLOCK_HEAD_SIZE && *off + h.size <= len);
            *end = *off + h.size;
            *off += VT_BLOCK_HEAD_SIZE;
            continue;
        }
        return *off;
    }
    return len;
}

/* next_header: the next record's header from f (a BLOCK entered, the zeros after its last
 * record skipped; *end: the block's end, 0 outside one); 0 at the end of the records. f stands
 * after the header. */
static inline int next_header(FILE *f, vt_rec_header *rh, long *end)
{
    while (fread(rh, sizeof *rh, 1, f) == 1) {
        if (*end && (ftell(f) - 8 >= *end || !rh->type)) {
            fseek(f, *end, SEEK_SET);
            *end = 0;
            continue;
        }
        if (!rh->type)
            return 0;
        if (rh->type == VT_REC_BLOCK && !*end) {
            assert_true(rh->size >= VT_BLOCK_HEAD_SIZE);
            *end = ftell(f) - 8 + (long)rh->size;
            fseek(f, VT_BLOCK_HEAD_SIZE - 8, SEEK_CUR);
            continue;
        }
        return 1;
    }
    return 0;
}

#endif
