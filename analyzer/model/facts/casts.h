/* casts.h — which of a forward's 16-bit casts are weights' copies (autocast's) and which the
 * inputs of the ops that use them. Autocast casts a linear's weight, then its input (PyTorch's
 * wrappers evaluate their arguments last first: a bias, when linear has one, before both;
 * addmm's bias after them); an input of B·T·d elements is a d x d weight copy's size when
 * B·T = d (GPT-2 medium or Llama 400M at B·T = 1024; a Llama's keys at B·T·kv = d²), so its size
 * cannot tell it. */
#ifndef VT_ANALYZER_CASTS_H
#define VT_ANALYZER_CASTS_H

#include <stdint.h>

#define CASTS_MIN ((uint64_t)64 << 10) /* a bias's copy is smaller (out features x 2 B) */

/* casts_input: 1 when the tensor allocation of size bytes, a cast whose size is a weight copy's
 * (copy_sized: made in a forward by _to_copy, half a parameter's size, not under an attention
 * op), is the op's input: it follows a weight's copy directly and is at most 64 times it (a 1-D
 * bias is 1/in of its weight: a large head's bias before its weight is no weight). *wcopy: the
 * size of the last tensor allocation when it was a weight's copy (0: it was not); every tensor
 * allocation passes here, in order. */
static inline int casts_input(uint64_t *wcopy, int copy_sized, uint64_t size)
{
    uint64_t prev = *wcopy;
    *wcopy = 0;
    if (!copy_sized || size < CASTS_MIN)
        return 0;
    if (prev && size / 64 <= prev)
        return 1;
    *wcopy = size;
    return 0;
}

#endif
