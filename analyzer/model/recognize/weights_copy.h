/* weights_copy.h — a copy of the weights among the weights themselves (an EMA the program keeps
 * in its own code, a second model of the same shape), told by the tensors' sizes alone: what a
 * run that never reached a backward (no gradient says which weights train) shows of one. */
#ifndef VT_ANALYZER_WEIGHTS_COPY_H
#define VT_ANALYZER_WEIGHTS_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"
#include "tables.h"

/* the most weight tensors looked at (the search is quadratic in them); more: none looked for */
#define WEIGHTS_COPY_MAX 8192

typedef struct weights_copy {
    size_t tensors; /* the copy's tensors, as many as those it repeats (0: none found) */
    uint64_t bytes; /* its bytes, as many as theirs */
    int reordered;  /* 1: found by weights_copy_reordered (copy.deepcopy made it, in another
                     * order than its model) */
} weights_copy;

/* weights_copy_find: in the sizes of the weight tensors live at one moment, in the order they
 * were made (size[0..n)), two adjacent runs of the same sizes in the same order (the model, made
 * module by module, then its copy: a deepcopy, clones of its parameters, the model made again)
 * that together hold at least half of the weights' bytes, the first no repeat of a shorter run
 * (runs of whole blocks of one model are none: each is its block's tensors again and again; a
 * model of two blocks and little else reads as a block and its copy). A copy made in another
 * order than its model (a deepcopy goes by each module's own parameters first, .to() by its
 * children first) is not found here: weights_copy_reordered.
 * Returns 1 (out: the largest found), 0 (none, or n over WEIGHTS_COPY_MAX), -1 (out of
 * memory). */
int weights_copy_find(const uint64_t *size, size_t n, weights_copy *out);
/* weights_copy_reordered: a run of weight tensors that copy.deepcopy made (deep[i] set: its
 * frames on their stacks), as many as those just before it, none of which it made, of the same
 * sizes in any order (a module's deepcopy copies its own parameters before its children's, where
 * .to() had moved its children's first), the two together at least half of the weights' bytes.
 * Only such a run: sizes alone in another order are also a model's own halves (an autoencoder's
 * encoder and decoder). Returns 1 (out: the largest found, reordered set), 0, -1 (out of memory).
 */
int weights_copy_reordered(const uint64_t *size, const uint8_t *deep, size_t n, weights_copy *out);
/* weights_copy_at: weights_copy_find of the PyTorch tensors among the parameters live in s, in
 * the order they were made, else weights_copy_reordered (their stacks in t's tables) */
int weights_copy_at(const replay_snapshot *s, const tables *t, weights_copy *out);

#endif
