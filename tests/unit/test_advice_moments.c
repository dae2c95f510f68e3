/* test_advice_moments.c — predictions anchored on the moment a run was measured at
 * (analyzer/model/advice/advice.c): a run of one step measured before its optimizer made any
 * state predicts a later step with it; a what-if in another precision does not carry what the
 * measured run's loss kept beyond the formula; another optimizer's state scales the measured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"
#include "advice_shape.h"

#define MiB (1024ull * 1024ull)

static void test_moments(void **state)
{
    (void)state;
    gpt_shape s = gpt2(8, 1);
    cat_breakdown ref, m;
    model_calib c;
    prediction p;
    formula_refined(&s, &ref);
    /* a complete run measured before its first optimizer step made any state (one step): the
     * prediction of a later step holds the state, anchored on the moment without it (it had
     * been scaled down by the state the moment lacked) */
    cat_breakdown pre = ref;
    pre.bytes[CAT_OPTIMIZER] = 0;
    pre.bytes[CAT_CONTEXT] = 300 * MiB;
    advice_calibrate(&c, &s, &pre, 0);
    advice_predict(&c, &s, &p);
    assert_true(p.by_cat.bytes[CAT_OPTIMIZER] == 8 * formula_params_exact(&s));
    assert_true(p.peak_bytes >= cat_breakdown_total(&pre) + p.by_cat.bytes[CAT_OPTIMIZER]);

    /* another precision: the loss's bytes beyond the formula in one (nanoGPT's fp32 16*N*V)
     * are not carried to the other (its bf16 loss keeps the formula's 12) */
    gpt_shape f32 = s;
    f32.dtype_bytes = 4;
    formula_refined(&f32, &ref);
    m = ref;
    m.bytes[CAT_LOGITS] = ref.bytes[CAT_LOGITS] * 4 / 3;
    advice_calibrate(&c, &f32, &m, 0);
    gpt_shape b16 = f32;
    b16.dtype_bytes = 2;
    formula_refined(&b16, &ref);
    advice_predict(&c, &b16, &p);
    assert_true(p.by_cat.bytes[CAT_LOGITS] == ref.bytes[CAT_LOGITS]);
    advice_predict(&c, &f32, &p); /* its own precision keeps its ratio */
    assert_true(p.by_cat.bytes[CAT_LOGITS] == m.bytes[CAT_LOGITS]);

    /* another optimizer's state per parameter (8-bit AdamW: 2 B of AdamW's 8): the measured
     * state scales with it, the rest is the run's */
    s = gpt2(8, 1);
    s.opt_set = 1, s.opt_bpp = 8;
    formula_refined(&s, &ref);
    m = ref;
    m.bytes[CAT_CONTEXT] = 300 * MiB;
    advice_calibrate(&c, &s, &m, 0);
    gpt_shape q8 = s;
    q8.opt_bpp = 2;
    prediction full;
    advice_predict(&c, &s, &full);
    advice_predict(&c, &q8, &p);
    assert_true(p.by_cat.bytes[CAT_OPTIMIZER] == m.bytes[CAT_OPTIMIZER] / 4);
    assert_true(p.by_cat.bytes[CAT_ACTIVATIONS] == full.by_cat.bytes[CAT_ACTIVATIONS]);
    assert_true(p.tensor_bytes + m.bytes[CAT_OPTIMIZER] * 3 / 4 == full.tensor_bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
