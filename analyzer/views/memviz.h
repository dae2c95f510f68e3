/* memviz.h — a replayed trace as PyTorch's memory snapshot (the dict torch.cuda.memory.
 * _snapshot() pickles), so pytorch.org/memory_viz and torch.cuda._memory_viz open it: the
 * segments live at the trace's end (r->at_end: replay_keep_end set before the replay), the state
 * after device_traces' last action as in PyTorch's own, with their blocks (tensor+segment traces:
 * PyTorch's segments, the tensors inside as active blocks, the rest inactive; segment-only traces:
 * each segment one active block), and device_traces from the replay's last allocator actions
 * (model/timeline.c), frames innermost first as people read them (stackview.h: the operation's
 * native frames, then the Python spine; CPython's own frames folded away; a frame nothing names
 * is "module+0xoffset"); an "oom" action's device_free is the free bytes
 * PyTorch's tracker reported. Written as a pickle protocol 2 stream (pickle.c). */
#ifndef VT_ANALYZER_MEMVIZ_H
#define VT_ANALYZER_MEMVIZ_H

#include <stdio.h>

#include "replay.h"

/* memviz_write: the pickled snapshot of r into out. Returns 0, or -1 when out of memory, a
 * write failed, or r was replayed without keeping its end (r->end_kept: nothing written). */
int memviz_write(FILE *out, replay_result *r);

#endif
