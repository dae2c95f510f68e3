/* flame.h — folded stacks ("outer;...;inner bytes", one line per distinct stack) of the bytes
 * live at a replay snapshot, for flamegraph.pl and speedscope. The replay (model/replay.c)
 * makes the snapshot; cmd_flame.c parses the command line. */
#ifndef VT_ANALYZER_FLAME_H
#define VT_ANALYZER_FLAME_H

#include <stdint.h>
#include <stdio.h>

#include "replay.h"

/* flame_write: one line per stack of snap (bytes summed by stack id, stacks in id order,
 * zero-byte stacks left out), frames outermost first, each frame's text with ';', control
 * characters and bytes >= 0x7f replaced by '_'; "[no stack]" for allocations without one;
 * the category name as the innermost frame. Returns the total bytes written out, and sets
 * *io_err when a write failed. */
uint64_t flame_write(FILE *out, replay_result *r, const replay_snapshot *snap, int *io_err);

#endif
