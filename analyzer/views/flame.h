/* flame.h — folded stacks ("outer;...;inner bytes", one line per distinct stack) of the bytes
 * live at a replay snapshot, for flamegraph.pl and speedscope, each stack as people read it
 * (stackview.h: the Python spine, the operation's native frames below). The replay
 * (model/replay.c) makes the snapshot; cmd_flame.c parses the command line. */
#ifndef VT_ANALYZER_FLAME_H
#define VT_ANALYZER_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "replay.h"

/* One stack's bytes in one category at a snapshot. */
typedef struct flame_row {
    uint32_t stack_id;
    uint8_t category;
    uint64_t bytes;
} flame_row;

/* flame_rows: the bytes of snap summed by (stack id, category), in stack id order, zero-byte
 * rows left out: a malloc'ed array of *n rows (free it); NULL when out of memory. */
flame_row *flame_rows(const replay_snapshot *snap, size_t *n);

/* flame_all: a snapshot (free its items) holding, per (stack, category), the bytes allocated
 * over the whole run (the replay's timeline totals, kept when timeline_totals was set before
 * it; PyTorch's segments left out, their tensors counted). Returns 0, or -1 when they were not
 * kept (not asked for, or out of memory). */
int flame_all(const replay_result *r, replay_snapshot *out);

/* flame_write: one line per stack of snap (bytes summed by stack id, stacks in id order,
 * zero-byte stacks left out), its frames as stackview_build gives them outermost first
 * (stackview_name: the program's outermost Python frame first when it has one), each frame's
 * text with ';', control characters and bytes >= 0x7f replaced by '_'; "[no stack]" for
 * allocations without one; the category name as the innermost frame. Returns the total bytes
 * written out (UINT64_MAX when they pass it), and sets *io_err when a write or an allocation
 * failed (mem.h). */
uint64_t flame_write(FILE *out, replay_result *r, const replay_snapshot *snap, int *io_err);

/* flame_note: why some native frames of snap's stacks have no name (stackview_unnamed_note),
 * into buf; "" when every one has. */
const char *flame_note(replay_result *r, const replay_snapshot *snap, char *buf, size_t len);

#endif
