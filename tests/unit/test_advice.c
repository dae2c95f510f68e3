/* test_advice.c — calibration, what-if predictions, OOM cause classes and the documents'
 * advice list (analyzer/advice.c), including worked example 2 of the design documents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"
#include "advice_speak.h"
#include "advice_shape.h"

#define MiB (1024ull * 1024ull)
#define RTX4070 (12282ull * MiB)

/* Worked example 2: B=16, A=32 overshoots 12 GB; B=8, A=64 is recommended and fits 12282 MiB
 * with nanoGPT's default compile=True: refined tensors 7.6 GB (measured on an H100: 7.64 GB
 * allocated, 7.88 GB reserved, and it ran under a 12282 MiB cap while B=16 ran out of memory).
 * B=9..15 do not divide the effective batch 512, so 8 is also the largest micro-batch that fits
 * and keeps it. */
static void test_worked_example2(void **state)
{
    (void)state;
    gpt_shape cur = gpt2(16, 32);
    cur.compile = 1;
    model_calib c;
    advice_calib_default(&c, &cur);
    prediction p;
    advice_predict(&c, &cur, &p);
    assert_true(p.peak_bytes > 12ull * 1024 * MiB);
    assert_int_equal(advice_fits(p.required_bytes, RTX4070, ADVICE_HEADROOM), 0);

    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &cur, RTX4070, 0, 0, 0, items, ADVICE_MAX);
    assert_true(n >= 6);
    assert_int_equal(items[0].recommended, 1);
    assert_true(items[0].shape.B == 8 && items[0].shape.A == 64);
    assert_string_equal(items[0].cmdline, "--batch_size=8 --gradient_accumulation_steps=64");
    assert_int_equal(items[0].fits, 1);
    assert_non_null(strstr(items[0].note, "same effective batch 512"));
    assert_true(items[0].headroom_bytes > 0);
    assert_true((double)items[0].required <= 0.95 * (double)RTX4070);
    /* the rest in the documents' order: quarter (B=4, A=128), then B=8, A=32 */
    assert_true(items[1].shape.B == 4 && items[1].shape.A == 128);
    assert_true(items[2].shape.B == 8 && items[2].shape.A == 32);
    assert_non_null(strstr(items[2].note, "effective batch 256"));
    /* no expandable_segments without fragmentation */
    for (int i = 0; i < n; i++)
        assert_null(strstr(items[i].change, "expandable"));
    uint64_t lb = advice_largest_batch(&c, &cur, RTX4070, ADVICE_HEADROOM);
    assert_true(lb >= 8 && lb < 16);
}

/* The same example in eager mode (compile=False). The refined formula's tensor bytes for B=8
 * (9.95 GB; max_memory_allocated on an H100: 10.04 GB) are below 12282 MiB, but not with the
 * caching allocator's room: eager runs reserved 1.14-1.22x what they allocated, and under a
 * 12282 MiB cap (500 MiB context) B=8, A=64 ran out of memory on fragmentation while B=7 and
 * B=4, A=128 fitted (formula.h). So formula.md §3 plus the allocator says: B=4, A=128. */
static void test_worked_example2_eager(void **state)
{
    (void)state;
    gpt_shape cur = gpt2(16, 32);
    model_calib c;
    advice_calib_default(&c, &cur);
    gpt_shape b8 = gpt2(8, 64);
    cat_breakdown ref;
    formula_refined(&b8, &ref);
    assert_true(cat_breakdown_total(&ref) < RTX4070);
    prediction p;
    advice_predict(&c, &b8, &p);
    assert_int_equal(advice_fits(p.required_bytes, RTX4070, ADVICE_HEADROOM), 0);
    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &cur, RTX4070, 0, 0, 0, items, ADVICE_MAX);
    assert_true(n >= 6);
    assert_int_equal(items[0].recommended, 1);
    assert_string_equal(items[0].cmdline, "--batch_size=4 --gradient_accumulation_steps=128");
    assert_int_equal(items[0].fits, 1);
    assert_true(advice_largest_batch(&c, &cur, RTX4070, ADVICE_HEADROOM) == 7);
}

static void test_largest_batch_property(void **state)
{
    (void)state;
    gpt_shape s = gpt2(1, 1);
    s.compile = 1;
    model_calib c;
    advice_calib_default(&c, &s);
    uint64_t cap = 24ull * 1024 * MiB;
    uint64_t b = advice_largest_batch(&c, &s, cap, ADVICE_HEADROOM);
    assert_true(b >= 2);
    prediction p;
    s.B = b;
    advice_predict(&c, &s, &p);
    assert_int_equal(advice_fits(p.required_bytes, cap, ADVICE_HEADROOM), 1);
    s.B = b + 1;
    advice_predict(&c, &s, &p);
    assert_int_equal(advice_fits(p.required_bytes, cap, ADVICE_HEADROOM), 0);
    assert_true(advice_largest_batch(&c, &s, 100 * MiB, ADVICE_HEADROOM) == 0);
    assert_true(advice_largest_batch(&c, &s, 0, ADVICE_HEADROOM) == 0);
}

/* A measurement that differs from the formula by known factors: the calibrated prediction
 * reproduces the measurement at its own shape and carries the factors to a what-if. */
static void test_calibration(void **state)
{
    (void)state;
    gpt_shape s = gpt2(8, 1);
    cat_breakdown ref, m;
    formula_refined(&s, &ref);
    memset(&m, 0, sizeof m);
    m.bytes[CAT_PARAMETERS] = ref.bytes[CAT_PARAMETERS];
    m.bytes[CAT_OPTIMIZER] = ref.bytes[CAT_OPTIMIZER];
    m.bytes[CAT_AUTOCAST] = ref.bytes[CAT_AUTOCAST];
    m.bytes[CAT_ACTIVATIONS] = ref.bytes[CAT_ACTIVATIONS] * 5 / 4;
    m.bytes[CAT_LOGITS] = ref.bytes[CAT_LOGITS] * 3 / 4;
    m.bytes[CAT_INPUTS] = ref.bytes[CAT_INPUTS];
    m.bytes[CAT_TEMPORARIES] = 32 * MiB;
    m.bytes[CAT_CONTEXT] = 400 * MiB;
    m.bytes[CAT_KERNEL_CODE] = 100 * MiB;
    uint64_t tensor = cat_breakdown_total(&m) - 500 * MiB;
    m.bytes[CAT_CACHE] = tensor / 5;
    model_calib c;
    advice_calibrate(&c, &s, &m, 0, 0);
    assert_int_equal(c.calibrated, 1);
    assert_true(c.ratio[CAT_ACTIVATIONS] > 1.24 && c.ratio[CAT_ACTIVATIONS] < 1.26);
    assert_true(c.ratio[CAT_LOGITS] > 0.74 && c.ratio[CAT_LOGITS] < 0.76);
    prediction p;
    advice_predict(&c, &s, &p);
    double total = (double)cat_breakdown_total(&m);
    assert_true((double)p.peak_bytes > total * 0.999 && (double)p.peak_bytes < total * 1.001);

    /* what-if B=4: activations and logits scale with B, carried ratios, fixed costs kept */
    gpt_shape h = s;
    h.B = 4;
    formula_refined(&h, &ref);
    advice_predict(&c, &h, &p);
    double want_act = (double)ref.bytes[CAT_ACTIVATIONS] * 1.25;
    assert_true((double)p.by_cat.bytes[CAT_ACTIVATIONS] > want_act * 0.999 &&
                (double)p.by_cat.bytes[CAT_ACTIVATIONS] < want_act * 1.001);
    assert_true(p.by_cat.bytes[CAT_CONTEXT] == 400 * MiB);
    assert_true(p.by_cat.bytes[CAT_KERNEL_CODE] == 100 * MiB);
    assert_true(p.by_cat.bytes[CAT_CACHE] > p.tensor_bytes / 5 - 2 &&
                p.by_cat.bytes[CAT_CACHE] < p.tensor_bytes / 5 + 2);
    /* gradients appear when A goes from 1 to 2 */
    h.A = 2;
    advice_predict(&c, &h, &p);
    assert_true(p.by_cat.bytes[CAT_GRADIENTS] == ref.bytes[CAT_PARAMETERS]);

    /* a cache below the fragmentation floor: a complete run's own, in its own mode (the run
     * showed it: its own configuration needs what it used); with compile switched, the fit is
     * checked with the floor (required); a partial run's cache is not trusted */
    cat_breakdown lowc = m;
    lowc.bytes[CAT_CACHE] = tensor / 100;
    advice_calibrate(&c, &s, &lowc, 0, 0);
    advice_predict(&c, &s, &p);
    assert_true(p.by_cat.bytes[CAT_CACHE] < p.tensor_bytes / 50);
    assert_true(p.required_bytes == p.peak_bytes);
    gpt_shape other = s;
    other.compile = !s.compile;
    advice_predict(&c, &other, &p);
    assert_true(p.by_cat.bytes[CAT_CACHE] < p.tensor_bytes / 50);
    assert_true(p.required_bytes > p.peak_bytes + p.tensor_bytes / 20);
    advice_calibrate(&c, &s, &lowc, 1, 1);
    advice_predict(&c, &s, &p);
    assert_true(p.by_cat.bytes[CAT_CACHE] > p.tensor_bytes / 6);
    assert_true(p.required_bytes == p.peak_bytes);

    /* a partial (OOM) measurement: categories below the formula are not trusted */
    m.bytes[CAT_ACTIVATIONS] = ref.bytes[CAT_ACTIVATIONS] / 4;
    advice_calibrate(&c, &s, &m, 1, 1);
    assert_true(c.ratio[CAT_ACTIVATIONS] == 1.0);
    advice_calibrate(&c, &s, &m, 0, 0);
    assert_true(c.ratio[CAT_ACTIVATIONS] < 0.5);

    /* iteration 0: no Adam state measured; the what-if still has it (steady state) */
    gpt_shape s0 = s;
    s0.iteration0 = 1;
    formula_refined(&s0, &ref);
    advice_calibrate(&c, &s0, &ref, 1, 1);
    advice_predict(&c, &s, &p);
    assert_true(p.by_cat.bytes[CAT_OPTIMIZER] == 8 * formula_params_exact(&s));

    /* segment mode: most bytes unknown -> one global ratio */
    memset(&m, 0, sizeof m);
    formula_refined(&s, &ref);
    m.bytes[CAT_UNKNOWN] = cat_breakdown_total(&ref) * 11 / 10;
    m.bytes[CAT_CONTEXT] = 300 * MiB;
    advice_calibrate(&c, &s, &m, 0, 0);
    assert_int_equal(c.global, 1);
    advice_predict(&c, &s, &p);
    assert_true(p.tensor_bytes > m.bytes[CAT_UNKNOWN] - 100 &&
                p.tensor_bytes < m.bytes[CAT_UNKNOWN] + 100);
}

static void test_oom_causes(void **state)
{
    (void)state;
    cat_breakdown live;
    memset(&live, 0, sizeof live);
    live.bytes[CAT_ACTIVATIONS] = 6000 * MiB;
    live.bytes[CAT_LOGITS] = 4000 * MiB;
    char why[256];
    assert_int_equal(advice_oom_cause(&live, 1536 * MiB, RTX4070, 100 * MiB, 600 * MiB, "forward",
                                      0, why, sizeof why, 1),
                     OOM_ACTIVATIONS);
    assert_non_null(strstr(why, "activations"));
    assert_int_equal(advice_oom_cause(&live, 512 * MiB, RTX4070, 2000 * MiB, 600 * MiB, "backward",
                                      3, why, sizeof why, 1),
                     OOM_FRAGMENTATION);
    live.bytes[CAT_EXTERNAL] = 3000 * MiB;
    assert_int_equal(advice_oom_cause(&live, 512 * MiB, RTX4070, 0, 3600 * MiB, "forward", 3, why,
                                      sizeof why, 1),
                     OOM_OUTSIDE);
    live.bytes[CAT_EXTERNAL] = 0;
    assert_int_equal(advice_oom_cause(&live, 512 * MiB, RTX4070, 0, 600 * MiB, "optimizer", 0, why,
                                      sizeof why, 1),
                     OOM_SPIKE);
    /* the first step: its state is made (no optimizer named: it may be any); a later one not */
    assert_string_equal(why, "the OOM came in the first optimizer step, when the optimizer creates "
                             "its state (kept for every later step)");
    advice_oom_cause(&live, 512 * MiB, RTX4070, 0, 600 * MiB, "optimizer", 2, why, sizeof why, 1);
    assert_string_equal(why, "the OOM came in the optimizer step");
    assert_int_equal(
        advice_oom_cause(&live, 512 * MiB, RTX4070, 0, 600 * MiB, "eval", 5, why, sizeof why, 1),
        OOM_SPIKE);
    assert_string_equal(advice_cause_key(OOM_FRAGMENTATION), "fragmentation");
    assert_non_null(strstr(advice_cause_text(OOM_OUTSIDE), "outside"));
}

static void test_candidates_options(void **state)
{
    (void)state;
    gpt_shape cur = gpt2(12, 40);
    cur.compile = 1;
    model_calib c;
    advice_calib_default(&c, &cur);
    advice_item items[ADVICE_MAX];
    /* fragmentation, not set: expandable_segments offered; already set: not */
    int n = advice_candidates(&c, &cur, RTX4070, 1, 0, 0, items, ADVICE_MAX);
    int found = 0, ckpt = -1, comp = -1;
    for (int i = 0; i < n; i++) {
        if (strstr(items[i].cmdline, "expandable_segments:True"))
            found = 1;
        if (strstr(items[i].change, "checkpointing"))
            ckpt = i;
        if (!strcmp(items[i].cmdline, "--compile=False"))
            comp = i;
    }
    assert_int_equal(found, 1);
    assert_true(ckpt > 0 && comp > 0 && comp < ckpt);
    prediction p;
    advice_predict(&c, &cur, &p);
    assert_true(items[ckpt].predicted_peak < p.peak_bytes);
    n = advice_candidates(&c, &cur, RTX4070, 1, 1, 0, items, ADVICE_MAX);
    for (int i = 0; i < n; i++)
        assert_null(strstr(items[i].cmdline, "expandable"));
    /* recommended: the largest micro-batch that fits, keeping B*A = 480 where possible */
    assert_int_equal(items[0].recommended, 1);
    assert_int_equal(items[0].fits, 1);
    assert_true(items[0].shape.B * items[0].shape.A == 480);
    uint64_t lb = advice_largest_batch(&c, &cur, RTX4070, ADVICE_HEADROOM);
    assert_true(items[0].shape.B <= lb);
    for (int i = 1; i < n; i++)
        if (items[i].fits == 1 && items[i].shape.T == cur.T && items[i].shape.L == cur.L &&
            items[i].shape.d == cur.d && items[i].shape.compile == cur.compile &&
            !items[i].shape.checkpointing)
            assert_true(items[i].shape.B <= items[0].shape.B);
    /* the current configuration fits: "none" first */
    gpt_shape small = gpt2(2, 1);
    advice_calib_default(&c, &small);
    n = advice_candidates(&c, &small, RTX4070, 0, 0, 1, items, ADVICE_MAX);
    assert_true(n > 1);
    assert_non_null(strstr(items[0].change, "none"));
    assert_int_equal(items[0].recommended, 1);
    /* capacity unknown: fits = -1 everywhere */
    n = advice_candidates(&c, &cur, 0, 0, 0, 0, items, ADVICE_MAX);
    for (int i = 0; i < n; i++)
        assert_int_equal(items[i].fits, -1);
}

/* An OOM after the forward (tight): the state at the failure is the prediction at the run's
 * shape (at least live + request, above the card), B-proportional parts scale with B, the
 * weights stay, and the prediction never falls as B grows. */
/* An OOM with more unused cache than the request (fragmentation: measured on the H100 in nanoGPT
 * eager B=8: 2446 MiB cached, 1572 MiB asked for): the failed configuration still needs what was
 * live, cache included, plus the request; expandable_segments removes that cache from the need. */
static void test_expandable_drops_the_failure_cache(void **state)
{
    (void)state;
    gpt_shape run = gpt2(8, 4);
    cat_breakdown live;
    memset(&live, 0, sizeof live);
    live.bytes[CAT_PARAMETERS] = 474 * MiB;
    live.bytes[CAT_GRADIENTS] = 474 * MiB;
    live.bytes[CAT_OPTIMIZER] = 949 * MiB;
    live.bytes[CAT_ACTIVATIONS] = 2634 * MiB;
    live.bytes[CAT_LOGITS] = 3144 * MiB;
    live.bytes[CAT_CONTEXT] = 527 * MiB;
    live.bytes[CAT_CACHE] = 2446 * MiB;
    uint64_t req = 1572 * MiB, total = cat_breakdown_total(&live);
    model_calib c;
    advice_calibrate(&c, &run, &live, 1, 1);
    advice_calibrate_oom(&c, &live, req, 1);
    prediction p;
    advice_predict(&c, &run, &p);
    assert_true(p.peak_bytes >= total + req);
    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &run, 12288 * MiB, 1, 0, 0, items, ADVICE_MAX), found = 0;
    for (int i = 0; i < n; i++)
        if (strstr(items[i].cmdline, "expandable_segments:True")) {
            found = 1;
            assert_true(items[i].predicted_peak < p.peak_bytes);
            assert_true(items[i].predicted_peak >= total - live.bytes[CAT_CACHE] + req);
        }
    assert_int_equal(found, 1);
}

/* an EMA copy of the weights among the parameters (a diffusion U-Net's EMAModel: 434 MiB beside
 * its 434 MiB) at an OOM in the first forward: the gradients a what-if with accumulation keeps
 * alive through the next forward are the model's weights' (434 MiB), not the two copies' */
static void test_ema_not_trained(void **state)
{
    (void)state;
    gpt_shape run = gpt2(32, 2);
    run.generic = 1;
    cat_breakdown live;
    memset(&live, 0, sizeof live);
    live.bytes[CAT_PARAMETERS] = 2 * 434 * MiB;
    live.bytes[CAT_ACTIVATIONS] = 9850 * MiB;
    live.bytes[CAT_CONTEXT] = 300 * MiB;
    model_calib c;
    advice_calibrate(&c, &run, &live, 1, 1);
    advice_calibrate_oom(&c, &live, 512 * MiB, 0);
    c.weights_exact = 1;
    prediction p;
    advice_predict(&c, &run, &p);
    assert_int_equal(p.by_cat.bytes[CAT_GRADIENTS], 2 * 434 * MiB); /* no EMA said: both */
    c.ema = 434 * MiB;
    advice_predict(&c, &run, &p);
    assert_int_equal(p.by_cat.bytes[CAT_PARAMETERS], 2 * 434 * MiB); /* kept: both copies */
    assert_int_equal(p.by_cat.bytes[CAT_GRADIENTS], 434 * MiB);
}

/* transformers' KV cache in an OOM's activations (Llama 400M at B=4 on the H100: 736 MiB of 5.70
 * GiB): use_cache=False removes the cache's share of the category, at any micro-batch, and the
 * failed configuration's floor (what was live plus the request) is not put on that what-if. */
static void test_kv_cache_off(void **state)
{
    (void)state;
    gpt_shape run = gpt2(8, 4);
    run.generic = 1; /* no formula: the state at the failure decides, below its floor */
    cat_breakdown live, kv;
    memset(&live, 0, sizeof live);
    memset(&kv, 0, sizeof kv);
    live.bytes[CAT_PARAMETERS] = 474 * MiB;
    live.bytes[CAT_OPTIMIZER] = 949 * MiB;
    live.bytes[CAT_ACTIVATIONS] = 5836 * MiB;
    live.bytes[CAT_CONTEXT] = 527 * MiB;
    live.bytes[CAT_CACHE] = 2446 * MiB; /* unused cache: the floor is above the prediction */
    kv.bytes[CAT_ACTIVATIONS] = 736 * MiB;
    model_calib c;
    advice_calibrate(&c, &run, &live, 1, 1);
    advice_calibrate_oom(&c, &live, 22 * MiB, 0);
    c.kv = c.kv_oom = kv;
    prediction p, q;
    advice_predict(&c, &run, &p);
    assert_int_equal(p.peak_bytes, cat_breakdown_total(&live) + 22 * MiB); /* the floor */
    gpt_shape off = run;
    off.no_kv_cache = 1;
    advice_predict(&c, &off, &q);
    assert_int_equal(q.by_cat.bytes[CAT_ACTIVATIONS], (5836 - 736) * MiB);
    assert_true(q.peak_bytes + 736 * MiB <= p.peak_bytes);
    off.B = 4; /* half the micro-batch: half the activations, half the cache's share gone too */
    advice_predict(&c, &off, &q);
    assert_int_equal(q.by_cat.bytes[CAT_ACTIVATIONS], (5836 - 736) / 2 * MiB);
    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &run, 12288 * MiB, 0, 0, 0, items, ADVICE_MAX), found = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(items[i].change, "use_cache=False")) {
            found = 1;
            assert_true(items[i].predicted_peak < p.peak_bytes);
        }
    assert_int_equal(found, 1);
    memset(&c.kv, 0, sizeof c.kv); /* no cache: not advised */
    memset(&c.kv_oom, 0, sizeof c.kv_oom);
    n = advice_candidates(&c, &run, 12288 * MiB, 0, 0, 0, items, ADVICE_MAX);
    for (int i = 0; i < n; i++)
        assert_true(strcmp(items[i].change, "use_cache=False") != 0);
}

/* The cache decides: a prediction above the usable card whose tensors and fixed parts fit gets the
 * most cache that would keep the headroom; one that fits, or whose rest alone is too big, gets 0.
 */
static void test_cache_limit(void **state)
{
    (void)state;
    uint64_t cap = 12288 * MiB, cache = 0;
    double usable = (double)cap * (1.0 - ADVICE_HEADROOM);
    prediction p = {.tensor_bytes = 10240 * MiB,
                    .reserved_bytes = 12288 * MiB,
                    .peak_bytes = 12800 * MiB,
                    .required_bytes = 12800 * MiB};
    uint64_t lim = advice_cache_limit(&p, cap, ADVICE_HEADROOM, &cache);
    assert_int_equal(cache, 2048 * MiB);
    assert_int_equal(lim, (uint64_t)(usable - (double)(10752 * MiB)));
    p.required_bytes += 512 * MiB; /* room raised to the fragmentation floor is cache too */
    lim = advice_cache_limit(&p, cap, ADVICE_HEADROOM, &cache);
    assert_int_equal(cache, 2560 * MiB);
    assert_int_equal(lim, (uint64_t)(usable - (double)(10752 * MiB)));
    p.tensor_bytes = 11800 * MiB; /* the rest alone keeps no headroom: the model decides */
    assert_int_equal(advice_cache_limit(&p, cap, ADVICE_HEADROOM, &cache), 0);
    prediction q = {.tensor_bytes = 8192 * MiB,
                    .reserved_bytes = 9216 * MiB,
                    .peak_bytes = 9728 * MiB,
                    .required_bytes = 9728 * MiB};
    assert_int_equal(advice_cache_limit(&q, cap, ADVICE_HEADROOM, &cache), 0); /* fits */
    assert_int_equal(advice_cache_limit(&q, 0, ADVICE_HEADROOM, &cache), 0);   /* no card */
}

static void test_oom_state(void **state)
{
    (void)state;
    gpt_shape run = gpt2(16, 32);
    run.compile = 1;
    cat_breakdown meas, live;
    memset(&meas, 0, sizeof meas);
    memset(&live, 0, sizeof live);
    live.bytes[CAT_PARAMETERS] = 475 * MiB;
    live.bytes[CAT_GRADIENTS] = 475 * MiB;
    live.bytes[CAT_ACTIVATIONS] = 5500 * MiB;
    live.bytes[CAT_LOGITS] = 3144 * MiB;
    live.bytes[CAT_CONTEXT] = 527 * MiB;
    live.bytes[CAT_CACHE] = 1300 * MiB;
    meas = live;
    model_calib c;
    advice_calibrate(&c, &run, &meas, 1, 1);
    advice_calibrate_oom(&c, &live, 1575 * MiB, 1);
    prediction p;
    advice_predict(&c, &run, &p);
    uint64_t need = 0;
    for (int k = 0; k < CAT_COUNT; k++)
        if (k != CAT_CACHE)
            need += live.bytes[k];
    assert_true(p.peak_bytes >= need + 1575 * MiB);
    assert_true(p.required_bytes > 12288 * MiB);
    gpt_shape h = run;
    h.B = 8, h.A = 64;
    prediction p8;
    advice_predict(&c, &h, &p8);
    assert_int_equal(p8.by_cat.bytes[CAT_ACTIVATIONS], 2750 * MiB);
    assert_int_equal(p8.by_cat.bytes[CAT_PARAMETERS], 475 * MiB);
    assert_true(p8.required_bytes < 11 * 1024 * MiB); /* measured at B=8: 8.04 GiB */
    uint64_t last = 0;
    for (uint64_t B = 1; B <= 32; B++) {
        h.B = B;
        advice_predict(&c, &h, &p);
        assert_true(p.required_bytes >= last);
        last = p.required_bytes;
    }
}

/* The program's language: a plain script that took --batch-size 8 and no accumulation flag
 * gets `--batch-size 4` for a batch-only change, plain words and no command line where the
 * accumulation must change too, and never nanoGPT's --batch_size= / --n_layer=. */
static void test_speak(void **state)
{
    (void)state;
    nano_config cfg;
    config_init(&cfg);
    cfg.program = PROG_ARGPARSE;
    snprintf(cfg.v[CFG_batch_size].flag, sizeof cfg.v[CFG_batch_size].flag, "--batch-size");
    cfg.v[CFG_batch_size].flag_sep = ' ';
    model_calib c;
    gpt_shape cur = gpt2(8, 4);
    advice_calib_default(&c, &cur);
    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &cur, RTX4070, 0, 0, 0, items, ADVICE_MAX);
    advice_speak(items, n, &cfg, &cur, NULL);
    int plain = 0, flag = 0;
    for (int i = 0; i < n; i++) {
        assert_null(strstr(items[i].cmdline, "--batch_size"));
        assert_null(strstr(items[i].cmdline, "--gradient_accumulation_steps"));
        assert_null(strstr(items[i].cmdline, "--n_layer"));
        assert_null(strstr(items[i].cmdline, "--block_size"));
        if (items[i].shape.A != cur.A) {
            assert_non_null(strstr(items[i].change, "micro-batch 8 \u2192"));
            assert_string_equal(items[i].cmdline, "");
            plain++;
        } else if (items[i].shape.B == 4 && items[i].shape.T == cur.T) {
            assert_string_equal(items[i].cmdline, "--batch-size 4");
            flag++;
        }
    }
    assert_true(plain > 0 && flag == 1);
    /* nanoGPT keeps its own spelling */
    cfg.program = PROG_NANOGPT;
    n = advice_candidates(&c, &cur, RTX4070, 0, 0, 0, items, ADVICE_MAX);
    advice_speak(items, n, &cfg, &cur, NULL);
    assert_non_null(strstr(items[0].cmdline, "--batch_size="));
}

/* A program whose accumulation no argument gave: micro-batches divide B (so the effective batch
 * is kept whatever A really is), the change is said as a factor, and no numbers are built on
 * the assumed A. */
static void test_speak_accum_unknown(void **state)
{
    (void)state;
    nano_config cfg;
    config_init(&cfg);
    cfg.program = PROG_ARGPARSE;
    assert_int_equal(advice_accum_unknown(&cfg), 1);
    cfg.v[CFG_gradient_accumulation_steps].src = CONFIG_SRC_ARG;
    assert_int_equal(advice_accum_unknown(&cfg), 0);
    cfg.v[CFG_gradient_accumulation_steps].src = CONFIG_SRC_DEFAULT;
    cfg.program = PROG_NANOGPT;
    assert_int_equal(advice_accum_unknown(&cfg), 0);
    cfg.program = PROG_ARGPARSE;
    model_calib c;
    gpt_shape cur = gpt2(12, 40);
    cur.accum_unknown = 1;
    advice_calib_default(&c, &cur);
    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &cur, RTX4070, 0, 0, 0, items, ADVICE_MAX);
    advice_speak(items, n, &cfg, &cur, NULL);
    int factor = 0;
    for (int i = 0; i < n; i++) {
        const gpt_shape *s = &items[i].shape;
        if (s->B == cur.B || s->T != cur.T || s->L != cur.L || s->d != cur.d)
            continue;
        assert_int_equal(cur.B % s->B, 0);
        if (s->A != cur.A) {
            assert_int_equal(s->A, cur.A * (cur.B / s->B));
            assert_non_null(strstr(items[i].change, "\u00d7 the accumulation steps"));
            assert_null(strstr(items[i].note, "40"));
            assert_string_equal(items[i].cmdline, "");
            factor++;
        }
    }
    assert_true(factor >= 2);
}

/* Hostile sizes: a prediction too large for 64 bits is clamped, never wrapped (a double beyond
 * 2^64 converted to uint64_t is undefined), and the search for a smaller micro-batch that keeps
 * the effective batch starts at the largest batch that fits, not at B (B = 2^40 once spun for
 * ~45 minutes). */
static void test_huge_sizes(void **state)
{
    (void)state;
    model_calib c;
    gpt_shape s = gpt2(1ull << 40, 40);
    advice_calib_default(&c, &s);
    c.temp_per_token = 1e6; /* 1e6 B/token * 2^50 tokens: ~1e21 bytes */
    s.T = 1ull << 10;
    prediction p;
    advice_predict(&c, &s, &p);
    assert_true(p.by_cat.bytes[CAT_TEMPORARIES] >= (1ull << 55));
    assert_true(p.tensor_bytes >= p.by_cat.bytes[CAT_TEMPORARIES]);
    assert_true(p.peak_bytes >= p.tensor_bytes);
    assert_true(p.required_bytes >= p.peak_bytes);
    advice_item items[ADVICE_MAX];
    gpt_shape cur = gpt2(1ull << 40, 40);
    advice_calib_default(&c, &cur);
    int n = advice_candidates(&c, &cur, RTX4070, 0, 0, 0, items, ADVICE_MAX);
    assert_true(n > 0);
    assert_false(items[0].fits == 1 && items[0].shape.B == cur.B);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example2),
        cmocka_unit_test(test_worked_example2_eager),
        cmocka_unit_test(test_largest_batch_property),
        cmocka_unit_test(test_calibration),
        cmocka_unit_test(test_oom_causes),
        cmocka_unit_test(test_candidates_options),
        cmocka_unit_test(test_huge_sizes),
        cmocka_unit_test(test_oom_state),
        cmocka_unit_test(test_cache_limit),
        cmocka_unit_test(test_expandable_drops_the_failure_cache),
        cmocka_unit_test(test_kv_cache_off),
        cmocka_unit_test(test_ema_not_trained),
        cmocka_unit_test(test_speak),
        cmocka_unit_test(test_speak_accum_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
