/* test_advice_eval.c — advice_eval.c: a run whose tensors peaked in an evaluation pass with a
 * batch of its own, that pass at another batch (the training held as it ran, the evaluation's
 * batch-sized tensors scaled and added on top), and the largest such batch that fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"
#include "advice_shape.h"
#include "model_notes.h"
#include "model_trace.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

/* a BERT-like run: trained at B=16, its evaluation of 96 at its peak with 8 GiB of logits */
static void eval_run(model_calib *c, gpt_shape *s)
{
    memset(c, 0, sizeof *c);
    memset(s, 0, sizeof *s);
    s->B = 16, s->T = 512, s->A = 1;
    c->calibrated = 1;
    c->eval_batch = 96;
    c->fixed[CAT_CONTEXT] = 300 * MiB;
    cat_breakdown at;
    memset(&at, 0, sizeof at);
    at.bytes[CAT_PARAMETERS] = 400 * MiB;
    at.bytes[CAT_OPTIMIZER] = 800 * MiB;
    at.bytes[CAT_LOGITS] = 8 * GiB;
    at.bytes[CAT_TEMPORARIES] = 512 * MiB;
    at.bytes[CAT_WORKSPACE] = 64 * MiB;
    at.bytes[CAT_CONTEXT] = 300 * MiB; /* (not a tensor: not counted) */
    at.bytes[CAT_CACHE] = 1 * GiB;     /* (nor the cache) */
    advice_eval_calibrate(c, &at, 6 * GiB, 800 * MiB);
}

static void test_calibrate(void **state)
{
    (void)state;
    model_calib c;
    gpt_shape s;
    eval_run(&c, &s);
    assert_int_equal(c.eval_train, 6 * GiB + 800 * MiB);    /* the state added: one step measured */
    assert_int_equal(c.eval_tensors, 8 * GiB + 1776 * MiB); /* its tensors, not the cache */
    assert_int_equal(c.eval_scaled, 8 * GiB + 512 * MiB);   /* logits, temporaries */
    /* no evaluation batch, or no training measured: nothing */
    model_calib d = c;
    d.eval_batch = 0;
    cat_breakdown at;
    memset(&at, 0, sizeof at);
    advice_eval_calibrate(&d, &at, 6 * GiB, 0);
    assert_int_equal(d.eval_train, 0);
    d = c;
    advice_eval_calibrate(&d, &at, 0, 0);
    assert_int_equal(d.eval_train + d.eval_tensors + d.eval_scaled, 0);
}

/* at batch b: the training's tensors and the fragmentation floor's cache, the evaluation's
 * batch-sized bytes at b / 96 on top, the bytes outside PyTorch */
static void test_predict(void **state)
{
    (void)state;
    model_calib c;
    gpt_shape s;
    eval_run(&c, &s);
    s.eval_B = 24;
    prediction p;
    advice_predict_eval(&c, &s, &p);
    uint64_t train = 6 * GiB + 800 * MiB;
    uint64_t train_res = train + (uint64_t)((double)train * FORMULA_CACHE_EAGER);
    uint64_t part = (8 * GiB + 512 * MiB) / 4;
    assert_int_equal(p.reserved_bytes, train_res + part);
    assert_int_equal(p.peak_bytes, train_res + part + 300 * MiB);
    assert_int_equal(p.required_bytes, p.peak_bytes);
    assert_int_equal(p.moment, PREDICT_AT_EVALUATION);
    /* the tensors at once: the larger of the training's and the evaluation's at 24 */
    assert_int_equal(p.tensor_bytes, train);
    s.eval_B = 95;
    advice_predict_eval(&c, &s, &p);
    uint64_t ev = 8 * GiB + 1776 * MiB - (8 * GiB + 512 * MiB) +
                  (uint64_t)((double)(8 * GiB + 512 * MiB) * 95 / 96);
    assert_int_equal(p.tensor_bytes, ev);
    /* monotone in the batch */
    prediction q;
    s.eval_B = 94;
    advice_predict_eval(&c, &s, &q);
    assert_true(q.required_bytes < p.required_bytes);
}

/* the largest batch below the run's that fits, by the same prediction; none where the training
 * alone does not, or where no evaluation peaked */
static void test_largest(void **state)
{
    (void)state;
    model_calib c;
    gpt_shape s;
    eval_run(&c, &s);
    uint64_t cap = 12 * GiB;
    uint64_t b = advice_eval_largest(&c, &s, cap, ADVICE_HEADROOM, UINT64_MAX);
    assert_true(b >= 1 && b < 96);
    gpt_shape t = s;
    prediction p;
    t.eval_B = b;
    advice_predict_eval(&c, &t, &p);
    assert_int_equal(advice_fits(p.required_bytes, cap, ADVICE_HEADROOM), 1);
    t.eval_B = b + 1;
    advice_predict_eval(&c, &t, &p);
    assert_int_not_equal(advice_fits(p.required_bytes, cap, ADVICE_HEADROOM), 1);
    /* at most a peak (a run that completed: 1 % below its own) */
    t.eval_B = b / 2;
    advice_predict_eval(&c, &t, &p);
    uint64_t half = advice_eval_largest(&c, &s, cap, ADVICE_HEADROOM, p.peak_bytes);
    assert_int_equal(half, b / 2);
    assert_int_equal(advice_eval_largest(&c, &s, 8 * GiB, ADVICE_HEADROOM, UINT64_MAX),
                     0); /* training */
    assert_int_equal(advice_eval_largest(&c, &s, 0, ADVICE_HEADROOM, UINT64_MAX), 0);
    c.eval_batch = 0;
    assert_int_equal(advice_eval_largest(&c, &s, cap, ADVICE_HEADROOM, UINT64_MAX), 0);
}

/* sizes near 2^64 (a hostile trace) are held, never wrapped */
static void test_huge(void **state)
{
    (void)state;
    model_calib c;
    gpt_shape s;
    eval_run(&c, &s);
    cat_breakdown at;
    memset(&at, 0, sizeof at);
    at.bytes[CAT_LOGITS] = UINT64_MAX - 5;
    at.bytes[CAT_PARAMETERS] = UINT64_MAX - 5;
    advice_eval_calibrate(&c, &at, UINT64_MAX, UINT64_MAX);
    assert_int_equal(c.eval_tensors, UINT64_MAX);
    assert_true(c.eval_scaled <= c.eval_tensors);
    s.eval_B = 95;
    prediction p;
    advice_predict_eval(&c, &s, &p);
    assert_true(p.peak_bytes >= p.reserved_bytes);
    assert_true(p.reserved_bytes >= p.tensor_bytes);
}

/* the evaluation's batch flag on the command line: not a count of batches */
static void test_flag(void **state)
{
    (void)state;
    const char *const argv[] = {
        "python", "train.py", "--max_eval_batches", "200", "--per_device_eval_batch_size=48", NULL};
    run_facts f;
    memset(&f, 0, sizeof f);
    f.argc = 5, f.argv = argv;
    char flag[64];
    assert_int_equal(model_eval_batch_flag(&f, flag, sizeof flag), 48);
    assert_string_equal(flag, "--per_device_eval_batch_size 48");
    const char *const argv2[] = {"python", "train.py", "--eval-batch-size", "16", NULL};
    f.argc = 4, f.argv = argv2;
    assert_int_equal(model_eval_batch_flag(&f, flag, sizeof flag), 16);
    assert_string_equal(flag, "--eval-batch-size 16");
    f.argc = 3; /* its value missing */
    assert_int_equal(model_eval_batch_flag(&f, flag, sizeof flag), 0);
    /* an evaluation's flag in another form of its words (namewords.h; it had gone unread) */
    const char *const argv3[] = {"python", "train.py", "--evaluation_batch_size", "24", NULL};
    f.argc = 4, f.argv = argv3;
    assert_int_equal(model_eval_batch_flag(&f, flag, sizeof flag), 24);
    /* ... and not a word inside another ("interval" is no "val") */
    const char *const argv4[] = {"python", "train.py", "--interval_batch_size", "24", NULL};
    f.argc = 4, f.argv = argv4;
    assert_int_equal(model_eval_batch_flag(&f, flag, sizeof flag), 0);
}

/* beside a run that completed after an allocator retry (the row "none"), an option predicted at
 * its own peak is never recommended: with an evaluation of its own batch (and no evaluation row:
 * its training not measured), every micro-batch what-if keeps that pass's peak */
static void test_same_peak(void **state)
{
    (void)state;
    gpt_shape cur = gpt2(8, 2);
    model_calib c;
    advice_calib_default(&c, &cur);
    c.eval_batch = 64;
    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &cur, 80 * GiB, 0, 0, 3, items, ADVICE_MAX);
    assert_true(n > 1);
    int none = -1;
    for (int i = 0; i < n; i++)
        if (!strncmp(items[i].change, "none", 4))
            none = i;
    assert_true(none >= 0);
    int same = 0;
    for (int i = 0; i < n; i++) {
        if (i == none || items[i].predicted_peak < items[none].predicted_peak)
            continue;
        same += items[i].shape.B != cur.B; /* (the case: a micro-batch at the run's peak) */
        assert_false(items[i].recommended);
    }
    assert_true(same > 0);
}

/* an evaluation's token batch (a Lightning run cut in its sanity check: 8192 tokens at
 * --val_batch_size 8 beside --batch-size 4) gives T over its own batch, never over the
 * training's (T = 2048 had been said where the run's was 1024); with no batch of its own given
 * the training's divides it only where nothing else says T; it gives no B */
static void test_eval_tokens(void **state)
{
    (void)state;
    nano_config c;
    infer_result ir;
    run_facts f;
    memset(&ir, 0, sizeof ir);
    memset(&f, 0, sizeof f);
    f.inferred = &ir;
    ir.v[INFER_tokens].known = 1, ir.v[INFER_tokens].value = 8192, ir.tokens_eval = 1;
    config_init(&c);
    c.v[CFG_batch_size].i = 4, c.v[CFG_batch_size].src = CONFIG_SRC_ARG;
    c.v[CFG_block_size].i = 0, c.v[CFG_block_size].src = CONFIG_SRC_UNKNOWN;
    model_complete_tokens(&c, &f, 8, "--val_batch_size 8");
    assert_int_equal(c.v[CFG_block_size].i, 1024);
    assert_int_equal(c.v[CFG_block_size].src, CONFIG_SRC_TRACE);
    assert_non_null(strstr(c.v[CFG_block_size].where, "--val_batch_size 8"));
    /* the trace's T stands (position ids), none given to the evaluation */
    c.v[CFG_block_size].i = 1024;
    model_complete_tokens(&c, &f, 0, "");
    assert_int_equal(c.v[CFG_block_size].i, 1024);
    /* its own batch given decides: a trace's T that does not agree gives way, said */
    model_complete_tokens(&c, &f, 16, "--val_batch_size 16");
    assert_int_equal(c.v[CFG_block_size].i, 512);
    assert_non_null(strstr(c.v[CFG_block_size].where, "does not agree"));
    /* no T at all: the program's B, said */
    c.v[CFG_block_size].i = 0, c.v[CFG_block_size].src = CONFIG_SRC_UNKNOWN;
    model_complete_tokens(&c, &f, 0, "");
    assert_int_equal(c.v[CFG_block_size].i, 2048);
    assert_non_null(strstr(c.v[CFG_block_size].where, "no batch of its own"));
    /* no B from it: the evaluation's batch is not the training's */
    c.v[CFG_batch_size].i = 0, c.v[CFG_batch_size].src = CONFIG_SRC_UNKNOWN;
    c.v[CFG_block_size].i = 1024, c.v[CFG_block_size].src = CONFIG_SRC_ARG;
    model_complete_tokens(&c, &f, 0, "");
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_UNKNOWN);
    /* a training's token batch: over the micro-batch, as before */
    ir.tokens_eval = 0;
    c.v[CFG_batch_size].i = 4, c.v[CFG_batch_size].src = CONFIG_SRC_ARG;
    c.v[CFG_block_size].i = 0, c.v[CFG_block_size].src = CONFIG_SRC_UNKNOWN;
    model_complete_tokens(&c, &f, 8, "--val_batch_size 8");
    assert_int_equal(c.v[CFG_block_size].i, 2048);
    /* the forward's own position ids' T that divides the tokens stands against the batch flag
     * (a ramp-up's first step, 32 of --batch_size 128: T = 64 had been read over the flag) */
    c.v[CFG_batch_size].i = 128, c.v[CFG_batch_size].src = CONFIG_SRC_ARG;
    c.v[CFG_block_size].i = 256, c.v[CFG_block_size].src = CONFIG_SRC_TRACE;
    snprintf(c.v[CFG_block_size].where, sizeof c.v[CFG_block_size].where,
             "T = 256 from the position ids (arange(T): 256 int64 after the batch)");
    model_complete_tokens(&c, &f, 0, "");
    assert_int_equal(c.v[CFG_block_size].i, 256);
    /* a T read from another tensor (a position embedding's rows, the model's maximum) gives way */
    snprintf(c.v[CFG_block_size].where, sizeof c.v[CFG_block_size].where,
             "T = 256 from the position embedding 256×d");
    model_complete_tokens(&c, &f, 0, "");
    assert_int_equal(c.v[CFG_block_size].i, 64);
    assert_non_null(strstr(c.v[CFG_block_size].where, "does not agree"));
    /* a token batch made by joining 2 tensors along its first dimension (a DPO loop's chosen and
     * rejected sequences): no T over the batch flag's pairs, said (it had been T = 2048) */
    f.tokens_joined = 2;
    snprintf(f.tokens_joined_at, sizeof f.tokens_joined_at,
             "dpo.py:51 torch.cat([chosen, rejected], dim=0)");
    c.v[CFG_batch_size].i = 2, c.v[CFG_batch_size].src = CONFIG_SRC_ARG;
    c.v[CFG_block_size].i = 0, c.v[CFG_block_size].src = CONFIG_SRC_UNKNOWN;
    c.v[CFG_block_size].where[0] = '\0';
    ir.v[INFER_tokens].value = 4096;
    model_complete_tokens(&c, &f, 0, "");
    assert_int_equal(c.v[CFG_block_size].src, CONFIG_SRC_UNKNOWN);
    assert_non_null(strstr(c.v[CFG_block_size].where, "torch.cat([chosen, rejected], dim=0)"));
    assert_non_null(strstr(c.v[CFG_block_size].where, "T = 1024 if each holds"));
    /* the trace's T (position ids) stands beside a join: nothing said over it */
    c.v[CFG_block_size].i = 1024, c.v[CFG_block_size].src = CONFIG_SRC_TRACE;
    snprintf(c.v[CFG_block_size].where, sizeof c.v[CFG_block_size].where,
             "T = 1024 from the position ids (arange(T): 1024 int64 after the batch)");
    model_complete_tokens(&c, &f, 0, "");
    assert_int_equal(c.v[CFG_block_size].i, 1024);
    assert_int_equal(c.v[CFG_block_size].src, CONFIG_SRC_TRACE);
}

/* what a pass's batch flag says it does: an evaluation's words, a sampling's, a rollout's; a
 * flag that names none (a no-grad pass's whose outputs the step uses, tied to it by the script)
 * is said as such, never "evaluation" */
static void test_pass_word(void **state)
{
    (void)state;
    assert_string_equal(advice_pass_word("--rollout_batch_size 16"), "rollout");
    assert_string_equal(advice_pass_word("--ppo_batch_size 8"), "no-grad");
    assert_string_equal(advice_pass_word("--val_batch_size 32"), "evaluation");
    assert_string_equal(advice_pass_word("--eval-batch-size=8"), "evaluation");
    assert_string_equal(advice_pass_word("--sample_batch 4"), "sampling");
    assert_string_equal(advice_pass_word(NULL), "evaluation");
    /* every form of an evaluation's words (namewords.h; "evaluation" had been "no-grad") */
    assert_string_equal(advice_pass_word("--evaluation_batch_size 8"), "evaluation");
    assert_string_equal(advice_pass_word("--validate_batch 8"), "evaluation");
    assert_string_equal(advice_pass_word("--gen_batch_size 8"), "generation");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calibrate),   cmocka_unit_test(test_predict),
        cmocka_unit_test(test_largest),     cmocka_unit_test(test_huge),
        cmocka_unit_test(test_flag),        cmocka_unit_test(test_same_peak),
        cmocka_unit_test(test_eval_tokens), cmocka_unit_test(test_pass_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
