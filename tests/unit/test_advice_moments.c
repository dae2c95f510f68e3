/* test_advice_moments.c — predictions anchored on the moment a run was measured at
 * (analyzer/model/advice/advice.c): a run of one step measured before its optimizer made any
 * state predicts a later step with it; a what-if in another precision does not carry what the
 * measured run's loss kept beyond the formula; another optimizer's state scales the measured; a
 * small micro-batch is predicted at least at the run's optimizer step, moved to its shape, or at
 * the one a run that died before its first step never reached (advice_step.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"
#include "advice_shape.h"
#include "model.h"

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
    advice_calibrate(&c, &s, &pre, 0, 0);
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
    advice_calibrate(&c, &f32, &m, 0, 0);
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
    advice_calibrate(&c, &s, &m, 0, 0);
    gpt_shape q8 = s;
    q8.opt_bpp = 2;
    prediction full;
    advice_predict(&c, &s, &full);
    advice_predict(&c, &q8, &p);
    assert_true(p.by_cat.bytes[CAT_OPTIMIZER] == m.bytes[CAT_OPTIMIZER] / 4);
    assert_true(p.by_cat.bytes[CAT_ACTIVATIONS] == full.by_cat.bytes[CAT_ACTIVATIONS]);
    assert_true(p.tensor_bytes + m.bytes[CAT_OPTIMIZER] * 3 / 4 == full.tensor_bytes);
}

/* a network with no formula (a ResNet-50 with SGD at B=128, one step) measured at its forward's
 * end: at B=1 its activations are next to nothing and the optimizer step, which a micro-batch
 * leaves as it is (the weights, all their gradients, the momentum, a weight-sized temporary),
 * is the peak: the prediction is that step (it was the forward's end scaled down, 24.7 % under
 * the B=1 run); at the run's own shape the step needs less and the run's total stands. */
static void test_step_floor(void **state)
{
    (void)state;
    gpt_shape s = gpt2(128, 1);
    s.generic = 1, s.T = 0;
    cat_breakdown fwd, step;
    memset(&fwd, 0, sizeof fwd);
    memset(&step, 0, sizeof step);
    fwd.bytes[CAT_PARAMETERS] = step.bytes[CAT_PARAMETERS] = 98 * MiB;
    fwd.bytes[CAT_GRADIENTS] = 8 * MiB; /* the backward's first gradients */
    fwd.bytes[CAT_OPTIMIZER] = step.bytes[CAT_OPTIMIZER] = 98 * MiB;
    fwd.bytes[CAT_ACTIVATIONS] = 5000 * MiB;
    fwd.bytes[CAT_INPUTS] = step.bytes[CAT_INPUTS] = 128 * MiB;
    fwd.bytes[CAT_WORKSPACE] = step.bytes[CAT_WORKSPACE] = 65 * MiB;
    fwd.bytes[CAT_CONTEXT] = 300 * MiB;
    fwd.bytes[CAT_CACHE] = 500 * MiB;
    step.bytes[CAT_GRADIENTS] = 98 * MiB;
    step.bytes[CAT_TEMPORARIES] = 98 * MiB;
    model_calib c;
    prediction p;
    advice_calibrate(&c, &s, &fwd, 0, 0);
    c.weights_exact = 1;
    gpt_shape b1 = s;
    b1.B = 1;
    advice_predict(&c, &b1, &p); /* no step measured: the forward's end, scaled down */
    assert_int_equal(p.moment, PREDICT_AT_STEP_PEAK);
    uint64_t fwd_only = p.tensor_bytes;
    c.step = step;
    advice_predict(&c, &s, &p); /* the run's own shape: its measured total */
    assert_int_equal(p.moment, PREDICT_AT_STEP_PEAK);
    assert_int_equal(p.peak_bytes, cat_breakdown_total(&fwd));
    advice_predict(&c, &b1, &p);
    assert_int_equal(p.moment, PREDICT_AT_OPTIMIZER_STEP);
    assert_int_equal(p.by_cat.bytes[CAT_GRADIENTS], 98 * MiB);
    assert_int_equal(p.by_cat.bytes[CAT_TEMPORARIES], 98 * MiB);
    assert_int_equal(p.by_cat.bytes[CAT_INPUTS], 1 * MiB); /* batch-sized: 1/128 */
    assert_int_equal(p.tensor_bytes, (98 * 4 + 65 + 1) * MiB);
    assert_true(p.tensor_bytes > fwd_only);
    assert_int_equal(p.by_cat.bytes[CAT_CONTEXT], 300 * MiB);
    /* the cache in the share the run measured (500 MiB of its 5,397 MiB of tensors) */
    assert_int_equal(p.by_cat.bytes[CAT_CACHE],
                     (uint64_t)((double)p.tensor_bytes * 500.0 / 5397.0 + 0.5));
    assert_int_equal(p.peak_bytes, p.tensor_bytes + p.by_cat.bytes[CAT_CACHE] + 300 * MiB);
    /* the largest micro-batch that fits is the forward's to decide: the step does not move it */
    model_calib none = c;
    memset(&none.step, 0, sizeof none.step);
    assert_int_equal(advice_largest_batch(&c, &s, 12ull << 30, ADVICE_HEADROOM),
                     advice_largest_batch(&none, &s, 12ull << 30, ADVICE_HEADROOM));
}

/* a network with no formula that died in its first forward (a ResNet-50 at B=320, its
 * optimizer not known: AdamW's 8 B per parameter assumed): at B=1 it is predicted at least at
 * the step it never reached (the weights, every trainable parameter's gradient, the state, the
 * foreach update's gradient-sized temporaries, the inputs moved to B=1), said unmeasured; not
 * where nothing trains, nor from segments alone, nor over a step the run measured */
static void test_unreached_step(void **state)
{
    (void)state;
    gpt_shape s = gpt2(320, 1);
    s.generic = 1, s.T = 0, s.opt_set = 0, s.iteration0 = 1;
    cat_breakdown live;
    memset(&live, 0, sizeof live);
    live.bytes[CAT_PARAMETERS] = 100 * MiB;
    live.bytes[CAT_ACTIVATIONS] = 11000 * MiB;
    live.bytes[CAT_INPUTS] = 320 * MiB;
    live.bytes[CAT_CONTEXT] = 300 * MiB;
    model_calib c;
    prediction p;
    advice_calibrate(&c, &s, &live, 1, 1);
    c.weights_exact = 1;
    advice_calibrate_oom(&c, &live, 32 * MiB, 0);
    model_calib bare = c;
    assert_int_equal(advice_unreached_step(&c, &s), 1);
    assert_int_equal(c.step_unreached, 1);
    assert_int_equal(c.step.bytes[CAT_GRADIENTS], 100 * MiB);
    assert_int_equal(c.step.bytes[CAT_OPTIMIZER], 200 * MiB);
    assert_int_equal(c.step.bytes[CAT_TEMPORARIES], 100 * MiB);
    assert_int_equal(c.step.bytes[CAT_ACTIVATIONS], 0);
    gpt_shape b1 = s;
    b1.B = 1, b1.iteration0 = 0;
    advice_predict(&bare, &b1, &p); /* the failure's state alone, scaled down */
    uint64_t fwd_only = p.tensor_bytes;
    advice_predict(&c, &b1, &p);
    assert_int_equal(p.moment, PREDICT_AT_OPTIMIZER_STEP);
    assert_int_equal(p.tensor_bytes, (100 + 100 + 200 + 100 + 1) * MiB);
    assert_true(p.tensor_bytes > fwd_only);
    /* at the failed micro-batch the forward still decides */
    advice_predict(&c, &s, &p);
    assert_int_not_equal(p.moment, PREDICT_AT_OPTIMIZER_STEP);
    /* a step measured stays; nothing trained, segments alone: no step assumed */
    model_calib m = bare;
    m.step.bytes[CAT_GRADIENTS] = 1;
    assert_int_equal(advice_unreached_step(&m, &s), 0);
    assert_int_equal(m.step_unreached, 0);
    m = bare;
    gpt_shape frozen = s;
    frozen.none_seen_trained = 1;
    assert_int_equal(advice_unreached_step(&m, &frozen), 0);
    m.weights_exact = 0;
    assert_int_equal(advice_unreached_step(&m, &s), 0);
    assert_int_equal(cat_breakdown_total(&m.step), 0);
    /* fp32 adapters beside 16-bit weights (a QLoRA's left as peft makes them): their gradients
     * twice their share of the weights' bytes, the state per trainable parameter as before */
    m = bare;
    gpt_shape t32 = s;
    t32.trained32 = 1;
    assert_int_equal(advice_unreached_step(&m, &t32), 1);
    assert_int_equal(m.step.bytes[CAT_GRADIENTS], 200 * MiB);
    assert_int_equal(m.step.bytes[CAT_OPTIMIZER], 200 * MiB);
}

/* the formula's end of the backward (every gradient, the state, a tied head's V x d gradient)
 * from a run: predicted where larger than the rest, unless the run's own tensors peaked below
 * that moment at its shape (then the moment is not the run's: never more than it took) */
static void test_backward_end_calibrated(void **state)
{
    (void)state;
    gpt_shape s = gpt2(4, 1);
    cat_breakdown ref, m;
    formula_refined(&s, &ref);
    m = ref;
    m.bytes[CAT_CONTEXT] = 300 * MiB;
    model_calib c;
    prediction p;
    advice_calibrate(&c, &s, &m, 0, 0);
    c.weights_exact = 1;
    gpt_shape tiny = s;
    tiny.B = 1, tiny.T = 64;
    advice_predict(&c, &tiny, &p);
    assert_int_equal(p.moment, PREDICT_AT_BACKWARD_END);
    assert_int_equal(p.by_cat.bytes[CAT_BACKWARD], 4 * tiny.V * tiny.d);
    assert_int_equal(p.by_cat.bytes[CAT_GRADIENTS], p.by_cat.bytes[CAT_PARAMETERS]);
    advice_predict(&c, &s, &p); /* its own shape: its measured total */
    assert_int_equal(p.moment, PREDICT_AT_STEP_PEAK);
    assert_int_equal(p.peak_bytes, cat_breakdown_total(&m));
    /* a run whose tensors never reached that moment at its own shape */
    gpt_shape small = gpt2(1, 1);
    small.T = 64;
    formula_refined(&small, &m);
    m.bytes[CAT_CONTEXT] = 300 * MiB;
    advice_calibrate(&c, &small, &m, 0, 0);
    c.weights_exact = 1;
    advice_predict(&c, &small, &p);
    assert_int_equal(p.moment, PREDICT_AT_STEP_PEAK);
    assert_int_equal(p.peak_bytes, cat_breakdown_total(&m));
}

/* the CUDA context alone on a tiny card is the cause of an OOM before any step ran, not after
 * 3500 steps that ran beside it (an evaluation's logits grew then); more outside than the
 * context is, after steps too */
static void test_cause_context(void **state)
{
    (void)state;
    char why[256];
    cat_breakdown tiny = {0};
    tiny.bytes[CAT_CONTEXT] = 300 * MiB, tiny.bytes[CAT_LOGITS] = 196 * MiB;
    assert_int_equal(advice_oom_cause(&tiny, 32 * MiB, 600 * MiB, 0, 300 * MiB, "forward", 3500,
                                      why, sizeof why, 1),
                     OOM_ACTIVATIONS);
    assert_int_equal(advice_oom_cause(&tiny, 32 * MiB, 600 * MiB, 0, 300 * MiB, "forward", 0, why,
                                      sizeof why, 1),
                     OOM_OUTSIDE);
    tiny.bytes[CAT_KERNEL_CODE] = 100 * MiB;
    assert_int_equal(advice_oom_cause(&tiny, 32 * MiB, 600 * MiB, 0, 400 * MiB, "forward", 3500,
                                      why, sizeof why, 1),
                     OOM_OUTSIDE);
}

/* a run whose micro-batch is not known (a full-batch GCN: every node each forward): its
 * activations' OOM is one forward's tensors, what they grow with said without a micro-batch; with
 * one known, "one micro-batch" as before; the device's refusal said of the device either way */
static void test_cause_no_batch(void **state)
{
    (void)state;
    char why[256];
    cat_breakdown live = {0};
    live.bytes[CAT_CONTEXT] = 300 * MiB, live.bytes[CAT_ACTIVATIONS] = 1270 * MiB;
    assert_int_equal(advice_oom_cause(&live, 200 * MiB, 2048 * MiB, 0, 300 * MiB, "forward", 0, why,
                                      sizeof why, 3),
                     OOM_ACTIVATIONS);
    assert_non_null(strstr(why, "the run's micro-batch is not known"));
    assert_null(strstr(why, "grow with the micro-batch"));
    assert_string_equal(advice_cause_text_on(OOM_ACTIVATIONS, ADVICE_CAUSE_NO_BATCH),
                        "the tensors of one forward (activations, logits, its temporaries) too "
                        "large for the card");
    assert_non_null(strstr(advice_cause_text_on(OOM_ACTIVATIONS, 1 | ADVICE_CAUSE_NO_BATCH),
                           "too large for the device"));
    assert_non_null(strstr(advice_cause_text_on(OOM_ACTIVATIONS, 0), "one micro-batch"));
    assert_non_null(strstr(advice_cause_text_on(OOM_STATE, ADVICE_CAUSE_NO_BATCH), "the card"));
    advice_oom_cause(&live, 200 * MiB, 2048 * MiB, 0, 300 * MiB, "forward", 0, why, sizeof why, 0);
    assert_non_null(strstr(why, "grow with the micro-batch"));
}

/* model_none_fits: said only where no option fits; options that fit with none recommended (none
 * lowered a completed run's peak by 1 %) are no "none of these fits" */
static void test_none_fits(void **state)
{
    (void)state;
    static model_result m;
    memset(&m, 0, sizeof m);
    m.capacity = 12ull << 30;
    m.nitems = 2;
    m.items[0].fits = 0, m.items[1].fits = 0;
    assert_true(model_none_fits(&m));
    m.items[1].fits = 1;
    assert_false(model_none_fits(&m));
    m.items[1].recommended = 1;
    assert_false(model_none_fits(&m));
}

/* advice_backward_kept: a backward's own tensors at an OOM in it are kept ones (per-sample
 * gradients: the what-ifs lower bounds) only where they are at least half the activations live
 * and an eighth of every tensor; a backward's scratch beside large weights is not (a DLRM's 13.5
 * MiB beside 8 GiB of embeddings, past 6.5 MiB of activations, had been told "a backward that
 * keeps what it makes (per-sample gradients ...)") */
static void test_backward_kept(void **state)
{
    (void)state;
    static model_calib c;
    memset(&c, 0, sizeof c);
    c.has_oom = 1;
    /* Opacus at physical batch 192: 4.98 GiB of per-sample gradients, 5.91 GiB of activations */
    c.oom_live.bytes[CAT_PARAMETERS] = 138174472;
    c.oom_live.bytes[CAT_ACTIVATIONS] = 6351249408;
    c.oom_live.bytes[CAT_BACKWARD] = 5343000000;
    c.oom_live.bytes[CAT_CONTEXT] = 314572800;
    assert_true(advice_backward_kept(&c));
    c.oom_in_step = 1; /* (in the step: the backward had ended) */
    assert_false(advice_backward_kept(&c));
    c.oom_in_step = 0;
    c.oom_live.bytes[CAT_BACKWARD] = 6351249408 / 8; /* a scratch beside the activations */
    assert_false(advice_backward_kept(&c));
    memset(&c.oom_live, 0, sizeof c.oom_live); /* the DLRM's */
    c.oom_live.bytes[CAT_PARAMETERS] = 8640000000;
    c.oom_live.bytes[CAT_GRADIENTS] = 3318000000;
    c.oom_live.bytes[CAT_ACTIVATIONS] = 6815744;
    c.oom_live.bytes[CAT_BACKWARD] = 14155776;
    assert_false(advice_backward_kept(&c));
    c.has_oom = 0;
    c.oom_live.bytes[CAT_PARAMETERS] = 0, c.oom_live.bytes[CAT_GRADIENTS] = 0;
    assert_false(advice_backward_kept(&c)); /* (no OOM) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cause_context),
        cmocka_unit_test(test_cause_no_batch),
        cmocka_unit_test(test_none_fits),
        cmocka_unit_test(test_moments),
        cmocka_unit_test(test_step_floor),
        cmocka_unit_test(test_unreached_step),
        cmocka_unit_test(test_backward_end_calibrated),
        cmocka_unit_test(test_backward_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
