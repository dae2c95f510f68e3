/* state_layout.h — how an optimizer's state lies in tensors beside the weights it steps, from
 * one snapshot's tensor sizes (a trace has no dtypes): two tensors of one byte per element of a
 * weight with small tensors beside them (8-bit states and their per-block scales, as
 * bitsandbytes' 8-bit Adam keeps: state1, state2, absmax1, absmax2), or one tensor of each
 * weight's own bytes (one state in the weights' dtype). At 16-bit weights both are 2 B per
 * parameter: the bytes alone do not tell them apart (a program's own 8-bit Adam had been "one
 * state per trainable parameter in the parameters' 16 bits"). */
#ifndef VT_ANALYZER_STATE_LAYOUT_H
#define VT_ANALYZER_STATE_LAYOUT_H

#include <stdint.h>

struct replay_result; /* (replay.h) */

typedef struct state_layout {
    uint64_t state;  /* the optimizer state's bytes in the snapshot read (0: none read) */
    uint64_t pairs;  /* of them, in two tensors of one byte per element of a weight (per weight) */
    uint64_t scales; /* in the other tensors smaller than the smallest of those (per-block scales,
                      * shared quantization maps) */
    uint64_t same;   /* in one tensor of a weight's own bytes per weight */
    uint32_t npairs, nscales; /* the tensors of pairs and of scales */
    uint32_t nsame, nrest;    /* the tensors of same, and the state's other tensors */
} state_layout;

/* state_layout_read: the layout of the optimizer state in r's snapshot that holds the most of it
 * (the largest optimizer step's, the peak's, the tensors' peak's, the OOM's), its weights of
 * elem bytes per element (2 or 4); all 0 without per-tensor sizes (segment mode). */
void state_layout_read(const struct replay_result *r, unsigned elem, state_layout *out);

/* state_layout_8bit: the state lies as 8-bit pairs: nine tenths of it in them, and at least as
 * many small tensors beside them as they have tensors (a scale tensor each). state_layout_one:
 * nine tenths of it in one tensor of each weight's bytes, and fewer other tensors than those (an
 * 8-bit pair packed in one tensor of the weight's bytes has its scales beside it). */
int state_layout_8bit(const state_layout *l);
int state_layout_one(const state_layout *l);

#endif
