/* ahead.h — a first forward cut short by an out-of-memory failure: how many of its weights it
 * had still to use, and what its last repeated block kept, from the tensors alive at the failure
 * (the weights made before it, in order; autocast's 16-bit copy of each weight it had used). */
#ifndef VT_ANALYZER_AHEAD_H
#define VT_ANALYZER_AHEAD_H

#include <stdint.h>

#include "replay.h"

typedef struct fwd_ahead {
    uint32_t casts;       /* weights' copies the first forward made, matched in order to the
                           * tensors made before it (half a weight's size each) */
    uint32_t made;        /* the tensors made before the forward (weights, buffers) */
    uint32_t reached;     /* of them, up to the last one matched */
    uint32_t period;      /* casts in the last block repeated (0: none repeats) */
    double ahead;         /* casts still to come: casts x (made - reached) / reached */
    uint64_t block_act;   /* activations the last complete repeated block made, alive */
    uint32_t wperiod;     /* the tensors made before the forward that one such block holds (its
                           * weights, cast or not: its norms' too), in the order they were made */
    uint32_t same;        /* of those not reached, the ones that repeat that block's sizes, block
                           * after block, from the block the forward was in */
    uint32_t other;       /* those after them (the first that does not repeat it, and the rest) */
    uint64_t other_bytes; /* their bytes */
    /* the 16-bit copies autocast would make of the weights not reached, half the size of each
     * one: of a size the forward had cast (in a weight it reached), in the rest of the stack it
     * was in (same) or after it (other); of a size it had not reached at all (new: a CNN's later
     * stages'). A size it reached and never cast (a norm's weight; the token embedding's, looked
     * up, as an untied head's of its size) is not counted. */
    uint64_t cast_same, cast_other, cast_new;
    /* the copies made again of a weight already passed, out of the order the weights were made
     * (a tied head's of the token embedding, at the forward's end): their bytes */
    uint64_t cast_again;
} fwd_ahead;

/* fwd_ahead_measure: *out from the snapshot at the failure (the items alive then). A block is
 * the shortest run of copies, of at least two sizes, whose sizes repeat the run just before it
 * (a transformer's layer, a ResNet's bottleneck); its activations are those made between its
 * first copy and the next block's. Its weights (wperiod tensors from the one its first copy is of)
 * are followed, block by block, while their sizes repeat it: same and other split the weights not
 * reached into the rest of the stack the forward was in and what comes after it. Returns 1 when
 * casts, reached and period are all found; 0 otherwise (out is then zero), also when memory runs
 * out. */
int fwd_ahead_measure(const replay_snapshot *oom, fwd_ahead *out);

#endif
