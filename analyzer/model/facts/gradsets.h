/* gradsets.h — the gradients each optimizer step read, step by step, and their union: where a
 * step's backward made the gradients of some weights and the next step's of others (separate
 * backward passes, each followed by its own optimizer's step, the gradients freed between them: a
 * GAN's generator and discriminator trained in turn), the gradients never live at once are of
 * weights that all train. Weights are not named in a trace: a step's gradients are told by their
 * sizes, and the union takes each size as many times as the step with the most of it made
 * (weights of one size in two sets count once: a lower bound), or, where the first step of each
 * set made optimizer state for all of its gradients (as many bytes per gradient byte as the run's
 * first step: a stateful optimizer makes state for weights it never stepped), the sets' sum. */
#ifndef VT_ANALYZER_GRADSETS_H
#define VT_ANALYZER_GRADSETS_H

#include <stddef.h>
#include <stdint.h>

/* the first steps looked at, and the gradients kept of them at most (past it: no union) */
#define GRADSETS_STEPS 16
#define GRADSETS_MAX ((size_t)1 << 16)

typedef struct gradsets_item {
    uint64_t size;
    uint32_t iter;  /* the optimizer steps begun when it was made: for a gradient, the step that
                     * reads it is the next; for optimizer state, the step that made it */
    uint32_t state; /* 1: optimizer state, 0: a gradient */
} gradsets_item;

typedef struct gradsets {
    gradsets_item *it;
    size_t n, cap;
    int lost; /* more than GRADSETS_MAX, or memory ran short: no union */
} gradsets;

/* gradsets_add: a gradient (state 0) or optimizer state (1) of size bytes made when iter steps
 * had begun */
void gradsets_add(gradsets *g, uint32_t iter, uint64_t size, int state);
/* gradsets_union: the bytes of the union of the gradient sets of the steps begun before steps
 * (each complete: a step read them); 0 when lost or none. *sets: the distinct sets seen (by their
 * sizes), 0 when lost; *lower: 1 when the union is a lower bound (sets that share sizes, their
 * sum not told by the state). Sorts g. */
uint64_t gradsets_union(gradsets *g, uint32_t steps, unsigned *sets, int *lower);
void gradsets_free(gradsets *g);

#endif
