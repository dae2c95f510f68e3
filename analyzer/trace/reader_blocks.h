/* reader_blocks.h — private to reader.c and reader_blocks.c: a plain trace of format 2.0
 * (trace_blocks.h: each writing thread's records in BLOCKs of its own) read as the record stream
 * it stands for, as bytes: the file header, then window by window the definitions in file order
 * and the timed records in the order of their times (reader.c frames and checks those records
 * as any others). */
#ifndef VT_READER_BLOCKS_H
#define VT_READER_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "vramtrace/trace_format.h"

typedef struct blocks blocks;

/* blocks_open: the file fd (read with pread, from offset 0), or the stream fp whose first nhead
 * bytes the caller has read already (head: handed out first, then what fp gives). NULL when out
 * of memory. */
blocks *blocks_open(int fd, FILE *fp, const void *head, size_t nhead);
/* blocks_read: the next bytes of the record stream (the file header first) into buf; 0 when
 * nothing more is there now (the trailer was handed out, or the file ends here: its records so
 * far all handed out), -1 when a block is malformed (blocks_error, blocks_error_offset: the
 * file's byte). */
ssize_t blocks_read(blocks *b, void *buf, size_t n);
/* blocks_follow: the file is being written: what blocks_read did not find yet is looked for
 * again (the blocks seen, and past them); a stream cannot be followed: -1. */
int blocks_follow(blocks *b);
/* blocks_watching: the file is read while its writer runs, on its machine (`watch`): at the end
 * of what it holds, the records of its last 100 ms wait for the next look, so that a thread's
 * block whose header is not stored yet hides none older than those handed out. on 0: the writer
 * is gone, nothing waits (its last records had never been handed out). */
void blocks_watching(blocks *b, int on);
/* blocks_rewind: back to the first byte (a file only). 0, or -1. */
int blocks_rewind(blocks *b);
const char *blocks_error(const blocks *b);
uint64_t blocks_error_offset(const blocks *b);
void blocks_close(blocks *b);

#endif
