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
    int reordered;  /* found by weights_copy_reordered, in another order than its model (0: in
                     * order): WEIGHTS_COPY_DEEPCOPY or WEIGHTS_COPY_APART */
} weights_copy;

enum {
    WEIGHTS_COPY_DEEPCOPY = 1, /* copy.deepcopy made it (its frames on the copy's stacks) */
    WEIGHTS_COPY_APART = 2     /* no stack that made it made the model (a clone loop) */
};

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
/* weights_copy_reordered: two adjacent runs of weight tensors, as many, of the same sizes in any
 * order (a module's deepcopy, or clones of its parameters(), go by its own parameters before its
 * children's, where .to() had moved its children's first), the two together at least half of the
 * weights' bytes, the second a copy of the first where either
 *  - copy.deepcopy made the second (deep[i] set: its frames on their stacks; all of a run of such
 *    tensors) and none of the first (WEIGHTS_COPY_DEEPCOPY), or
 *  - their orders differ and no stack that made one of the second (stack[i]: the stack that made
 *    size[i]) made one of the first (WEIGHTS_COPY_APART: a clone loop's; halves of one model's
 *    blocks share the constructors' and .to()'s stacks).
 * Only so: sizes alone in another order are also a model's own halves (an autoencoder's encoder
 * and decoder). stack or deep NULL: that way not looked for. Returns 1 (out: the largest found,
 * reordered set), 0, -1 (out of memory). */
int weights_copy_reordered(const uint64_t *size, const uint32_t *stack, const uint8_t *deep,
                           size_t n, weights_copy *out);
/* weights_copy_beside: two adjacent runs of weight tensors, the one the same sizes in the same
 * order as the other's but for a few more tensors interleaved in the longer (LoRA's adapters,
 * made inside the model they adapt, absent from a copy of its base: a frozen reference model, a
 * teacher), the longer's extra bytes at most an eighth of the copy's and more than none, the two
 * together at least half of the weights' bytes; the copy that leaves most tensors matched.
 * Returns 1 (out->tensors, out->bytes: the shorter run's; *extra: the longer's extra bytes), 0
 * (none, or n over WEIGHTS_COPY_MAX). */
int weights_copy_beside(const uint64_t *size, size_t n, weights_copy *out, uint64_t *extra);
/* weights_copy_at: weights_copy_find of the PyTorch tensors among the parameters live in s, in
 * the order they were made, else weights_copy_reordered (their stacks in t's tables) */
int weights_copy_at(const replay_snapshot *s, const tables *t, weights_copy *out);
/* weights_copy_beside_at: weights_copy_beside of the PyTorch tensors among the parameters live
 * in s, in the order they were made */
int weights_copy_beside_at(const replay_snapshot *s, weights_copy *out, uint64_t *extra);

#endif
