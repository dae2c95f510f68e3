/* advice_shape.h — the GPT-2 shape the advice tests calibrate and predict with (test_advice.c,
 * test_advice_moments.c): nanoGPT's GPT-2 124M, eager 16-bit, micro-batch B, accumulation A. */
#ifndef VT_TESTS_ADVICE_SHAPE_H
#define VT_TESTS_ADVICE_SHAPE_H

#include <string.h>

#include "formula.h"

static inline gpt_shape gpt2(uint64_t B, uint64_t A)
{
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = B, s.T = 1024, s.A = A, s.L = 12, s.H = 12, s.d = 768, s.V = 50304;
    s.dtype_bytes = 2, s.compile = 0;
    return s;
}

#endif
