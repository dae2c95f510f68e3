/* test_advice_compile.c — a compiled 16-bit autocast run's weight casts (formula_compiled_casts):
 * the graph saves a 16-bit cast of every matmul weight for its backward, counted among the
 * activations, the same bytes at any micro-batch. Calibrated on such a run, a what-if keeps them
 * as they are and scales only the rest with the tokens (they had been scaled too: Hugging Face's
 * GPT-2 compiled at B=4 predicted B=12 at +5.0 % of its tensors and said 11 was the largest
 * micro-batch that fits; B=12 ran with 12.3 % of the card free). */
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

/* a complete compiled run at s: the refined formula's tensors, its activations 1.25x the
 * formula's (what the compiler saved) plus the weight casts; what lies outside PyTorch and a
 * cache of 5 % of the tensors */
static cat_breakdown compiled_run(const gpt_shape *s)
{
    cat_breakdown m;
    formula_refined(s, &m);
    m.bytes[CAT_ACTIVATIONS] =
        m.bytes[CAT_ACTIVATIONS] + m.bytes[CAT_ACTIVATIONS] / 4 + formula_compiled_casts(s);
    m.bytes[CAT_CONTEXT] = 500 * MiB;
    m.bytes[CAT_CACHE] = cat_breakdown_tensors(&m) / 20;
    return m;
}

static void test_casts_kept(void **state)
{
    (void)state;
    gpt_shape s4 = gpt2(4, 2), s12 = gpt2(12, 2);
    s4.compile = s12.compile = 1;
    /* 2*P_mm: 235.6 MiB for GPT-2 124M (its V = 50304 here) */
    assert_int_equal(formula_compiled_casts(&s4), 2 * formula_params_matmul(&s4));
    assert_true(formula_compiled_casts(&s4) > 235 * MiB && formula_compiled_casts(&s4) < 236 * MiB);
    cat_breakdown m4 = compiled_run(&s4), m12 = compiled_run(&s12);
    model_calib c;
    advice_calibrate(&c, &s4, &m4, 0, 0);
    assert_int_equal(c.compiled_casts, formula_compiled_casts(&s4));
    prediction p;
    advice_predict(&c, &s12, &p);
    /* B=12's activations and tensors as that run would have them (a 3x scale of B=4's
     * activations would put 2 x 235.6 MiB of casts above them) */
    uint64_t act = m12.bytes[CAT_ACTIVATIONS], got = p.by_cat.bytes[CAT_ACTIVATIONS];
    assert_true(got >= act - act / 200 && got <= act + act / 200);
    uint64_t t12 = cat_breakdown_tensors(&m12);
    assert_true(p.tensor_bytes >= t12 - t12 / 200 && p.tensor_bytes <= t12 + t12 / 200);
    /* at the run's own shape: the run */
    advice_predict(&c, &s4, &p);
    uint64_t t4 = cat_breakdown_tensors(&m4);
    assert_true(p.tensor_bytes >= t4 - t4 / 200 && p.tensor_bytes <= t4 + t4 / 200);

    /* compile turned off: eager autocast's copies are the formula's own row, not the casts
     * again among the activations */
    gpt_shape e = s12;
    e.compile = 0;
    advice_predict(&c, &e, &p);
    cat_breakdown ref;
    formula_refined(&e, &ref);
    assert_int_equal(p.by_cat.bytes[CAT_AUTOCAST], 2 * formula_params_matmul(&e));
    assert_true(p.by_cat.bytes[CAT_ACTIVATIONS] < ref.bytes[CAT_ACTIVATIONS] * 13 / 10);
}

static void test_no_casts(void **state)
{
    (void)state;
    gpt_shape s = gpt2(4, 2);
    /* eager (its copies are measured as autocast copies), float32, 16-bit weights,
     * checkpointing, no formula: none */
    assert_int_equal(formula_compiled_casts(&s), 0);
    s.compile = 1;
    gpt_shape t = s;
    t.dtype_bytes = 4;
    assert_int_equal(formula_compiled_casts(&t), 0);
    t = s, t.params16 = 1;
    assert_int_equal(formula_compiled_casts(&t), 0);
    t = s, t.checkpointing = 1;
    assert_int_equal(formula_compiled_casts(&t), 0);
    t = s, t.generic = 1;
    assert_int_equal(formula_compiled_casts(&t), 0);
    /* a run cut by an out-of-memory error, or one whose activations are below the casts (a peak
     * after the backward freed them): nothing set apart */
    cat_breakdown m = compiled_run(&s);
    model_calib c;
    advice_calibrate(&c, &s, &m, 1, 1);
    assert_int_equal(c.compiled_casts, 0);
    m.bytes[CAT_ACTIVATIONS] = formula_compiled_casts(&s) / 2;
    advice_calibrate(&c, &s, &m, 0, 0);
    assert_int_equal(c.compiled_casts, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_casts_kept),
        cmocka_unit_test(test_no_casts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
