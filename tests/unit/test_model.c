/* test_model.c — the model of a run (analyzer/model/advice/model.c) from a filled run_facts, seen
 * through its views (analyzer/views/model_*.c): the configuration from a traced command line
 * (nanoGPT's defaults only for nanoGPT's model), the formula table, OOM diagnosis, advice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "formula.h"
#include "model.h"
#include "model_trace.h"
#include "../../analyzer/views/model_views.h"

static char dir[256];

/* model_report_text / _json: model_build, then the view; -1 when the model cannot be built. */
static int model_report_text(FILE *out, const run_facts *f, const model_opts *o)
{
    static model_result m;
    char err[512];
    if (model_build(&m, f, o, err, sizeof err) < 0)
        return -1;
    model_text(out, &m, f, o->color);
    return 0;
}

static int model_report_json(cJSON *root, const run_facts *f, const model_opts *o)
{
    static model_result m;
    char err[512];
    if (model_build(&m, f, o, err, sizeof err) < 0)
        return -1;
    model_json(root, &m, f);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/vt-test-model.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char path[400];
    snprintf(path, sizeof path, "%s/gpt2_12gb.py", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("batch_size = 4\nblock_size = 1024\ngradient_accumulation_steps = 32\nn_layer = 12\n"
          "n_head = 12\nn_embd = 768\ndtype = 'float16'\ncompile = False\n",
          f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#include "model_facts.h"

/* A trace names gpt2_12gb.py, which exists in cwd (setup wrote it) but was not recorded: the
 * model never opens it; a 1.1 trace says why. Values the trace's tensors give come next. */
/* fp32 training read from the trace: fp32 logits only and no 16-bit copy of a weight over the run
 * (autocast makes them), eager, no GradScaler; the same logits beside autocast's copies (a head
 * computed in fp32 under autocast) are no fp32 training */
static void test_trace_fp32(void **state)
{
    (void)state;
    run_facts f;
    memset(&f, 0, sizeof f);
    infer_result ir;
    memset(&ir, 0, sizeof ir);
    ir.v[INFER_logits_dtype_bytes] = (infer_value){1, 4, "the logits are fp32 only"};
    f.inferred = &ir;
    f.has_cat_peaks = 1;
    f.compile_frames = MODEL_COMPILE_NOT_SEEN;
    nano_config c;
    /* stacks that cannot show a cast (none reached an operator): none seen says nothing */
    config_init(&c);
    config_reset(&c, CFG_dtype);
    model_trace_dtype(&c, &f, 0);
    assert_int_not_equal(c.v[CFG_dtype].src, CONFIG_SRC_TRACE);
    f.casts_visible = 1;
    config_init(&c);
    config_reset(&c, CFG_dtype);
    model_trace_dtype(&c, &f, 0);
    assert_int_equal(c.v[CFG_dtype].src, CONFIG_SRC_TRACE);
    assert_string_equal(c.v[CFG_dtype].s, "float32");
    f.cat_peak[CAT_AUTOCAST] = 1 << 20; /* autocast copied weights at some moment: 16-bit */
    config_init(&c);
    config_reset(&c, CFG_dtype);
    model_trace_dtype(&c, &f, 0);
    assert_int_equal(c.v[CFG_dtype].src, CONFIG_SRC_TRACE);
    assert_string_equal(c.v[CFG_dtype].s, "16-bit"); /* (no optimizer step: fp16 or bf16) */
    f.cat_peak[CAT_AUTOCAST] = (1 << 20) - 1;        /* less than a weight's copy (no width known: 1
                                                      * MiB): no copy, fp32 said with those few bytes */
    config_init(&c);
    config_reset(&c, CFG_dtype);
    model_trace_dtype(&c, &f, 0);
    assert_int_equal(c.v[CFG_dtype].src, CONFIG_SRC_TRACE);
    assert_string_equal(c.v[CFG_dtype].s, "float32");
    assert_non_null(strstr(c.v[CFG_dtype].where, "smaller than one"));
    f.cat_peak[CAT_AUTOCAST] = 0;
    f.compile_frames = MODEL_COMPILE_SEEN; /* a compiled graph's casts are no copies */
    config_init(&c);
    config_reset(&c, CFG_dtype);
    model_trace_dtype(&c, &f, 0);
    assert_int_not_equal(c.v[CFG_dtype].src, CONFIG_SRC_TRACE);
    /* no logits: a vision transformer's first token tensor in 4-byte elements says fp32, in 2
     * not; an out-of-memory error before any logits, after fused attention kernels ran with no
     * weight copied, says fp32 too */
    f.compile_frames = MODEL_COMPILE_NOT_SEEN;
    ir.v[INFER_logits_dtype_bytes].known = 0;
    for (int k = 2; k <= 4; k += 2) {
        ir.v[INFER_token_dtype_bytes] = (infer_value){1, k, "the first token tensor"};
        config_init(&c);
        config_reset(&c, CFG_dtype);
        model_trace_dtype(&c, &f, 0);
        assert_int_equal(c.v[CFG_dtype].src == CONFIG_SRC_TRACE, k == 4);
    }
    ir.v[INFER_token_dtype_bytes].known = 0;
    ir.v[INFER_attention_kernels] = (infer_value){1, 12, "12 fused attention kernels"};
    for (int oom = 0; oom <= 1; oom++) {
        f.has_oom = oom;
        config_init(&c);
        config_reset(&c, CFG_dtype);
        model_trace_dtype(&c, &f, 0);
        assert_int_equal(c.v[CFG_dtype].src == CONFIG_SRC_TRACE, oom);
    }
}

static void test_never_opens(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    static const config_files old = {0, NULL, 0}, none = {0, NULL, 1};
    const config_files *cases[] = {&old, &none};
    for (int i = 0; i < 2; i++) {
        f.files = cases[i];
        model_opts o = {0};
        cJSON *root = cJSON_CreateObject();
        assert_int_equal(model_report_json(root, &f, &o), 0);
        cJSON *ga =
            cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "gradient_accumulation_steps");
        /* neither the config file nor the script recorded: no nanoGPT default is the run's */
        assert_string_equal(cJSON_GetObjectItem(ga, "source")->valuestring, "unknown");
        cJSON *warns = cJSON_GetObjectItem(root, "config_warnings");
        cJSON *w = cJSON_GetArrayItem(warns, 0);
        assert_non_null(w);
        assert_non_null(strstr(w->valuestring, "gpt2_12gb.py: not recorded"));
        assert_non_null(
            strstr(w->valuestring, i == 0 ? "trace from an older vramtrace" : "not a regular"));
        w = cJSON_GetArrayItem(warns, 1);
        assert_non_null(w);
        assert_non_null(strstr(w->valuestring, "train.py: not recorded"));
        assert_non_null(strstr(w->valuestring, "nanoGPT's defaults are not assumed"));
        cJSON_Delete(root);
    }
    /* nanoGPT: the trace's B = 16 agrees with the argument; its L = 24 beats the default */
    infer_result ir;
    memset(&ir, 0, sizeof ir);
    ir.v[INFER_n_layer] = (infer_value){1, 24, "L = 24: a block repeats 24 times"};
    ir.v[INFER_n_embd] = (infer_value){1, 768, "d = 768"};
    ir.v[INFER_batch_size] = (infer_value){1, 8, "B from the input"};
    f.files = &old;
    f.inferred = &ir;
    nano_config c;
    model_result *m = calloc(1, sizeof *m);
    char err[300];
    assert_non_null(m);
    assert_int_equal(model_build(m, &f, NULL, err, sizeof err), 0);
    c = m->cfg;
    assert_int_equal(c.v[CFG_batch_size].i, 16); /* an argument beats the trace */
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_ARG);
    assert_int_equal(c.v[CFG_n_layer].i, 24);
    assert_int_equal(c.v[CFG_n_layer].src, CONFIG_SRC_TRACE);
    assert_string_equal(c.v[CFG_n_layer].where, "L = 24: a block repeats 24 times");
    /* upstream nanoGPT's value, but neither the config file nor the script was recorded: the
     * trace settles it, no default is named */
    assert_int_equal(c.v[CFG_n_embd].src, CONFIG_SRC_TRACE);
    assert_string_equal(c.v[CFG_n_embd].where, "d = 768");
    /* another program: every value the trace knows, and never a nanoGPT default as its own */
    static const char *const hf_argv[] = {"python3", "hf_train.py",  "--model",
                                          "gpt2",    "--batch-size", "4"};
    f.argv = hf_argv;
    f.argc = 6;
    assert_int_equal(model_build(m, &f, NULL, err, sizeof err), 0);
    assert_int_equal(m->cfg.program, PROG_ARGPARSE);
    assert_int_equal(m->cfg.v[CFG_batch_size].i, 4);
    assert_int_equal(m->cfg.v[CFG_n_embd].src, CONFIG_SRC_TRACE);
    assert_string_equal(m->cfg.v[CFG_n_embd].where, "d = 768");
    /* report options win over everything */
    const char *ov[] = {"n_layer=6"};
    model_opts o = {1, ov, 0, NULL, 0};
    assert_int_equal(model_build(m, &f, &o, err, sizeof err), 0);
    assert_int_equal(m->cfg.v[CFG_n_layer].i, 6);
    assert_string_equal(m->cfg.v[CFG_n_layer].where,
                        "given on vramtrace's command line (n_layer=6)");
    free(m);
}

/* A nanoGPT-like command line (config file, --key=value) whose Python stacks show another model
 * (GPT2LMHeadModel, no GPT.forward) is not nanoGPT: no nanoGPT default is taken for it; with
 * GPT.forward on the stacks the same command line keeps nanoGPT's defaults. */
static void test_nanogpt_needs_its_model(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    static const config_files none = {0, NULL, 1};
    f.files = &none;
    run_recognition rec;
    memset(&rec, 0, sizeof rec);
    rec.python_frames = 1;
    rec.family = FAM_DECODER;
    snprintf(rec.model_class, sizeof rec.model_class, "GPT2LMHeadModel");
    f.recog = &rec;
    model_result *m = calloc(1, sizeof *m);
    char err[300];
    assert_non_null(m);
    assert_int_equal(model_build(m, &f, NULL, err, sizeof err), 0);
    assert_int_not_equal(m->cfg.program, PROG_NANOGPT);
    for (int k = 0; k < CFG_COUNT; k++)
        assert_int_not_equal(m->cfg.v[k].src, CONFIG_SRC_DEFAULT);
    assert_int_equal(m->cfg.v[CFG_batch_size].i, 16); /* its own argument stays */
    assert_int_equal(m->cfg.v[CFG_n_layer].src, CONFIG_SRC_UNKNOWN);
    rec.nanogpt = 1; /* GPT.forward on the stacks: nanoGPT's configurator, but its script was
                      * not recorded: its defaults are not known, upstream's are not taken */
    assert_int_equal(model_build(m, &f, NULL, err, sizeof err), 0);
    assert_int_equal(m->cfg.program, PROG_NANOGPT);
    for (int k = 0; k < CFG_COUNT; k++)
        assert_int_not_equal(m->cfg.v[k].src, CONFIG_SRC_DEFAULT);
    assert_int_equal(m->cfg.v[CFG_n_layer].src, CONFIG_SRC_UNKNOWN);
    /* recorded: the config file's values, then what the script assigns at top level (its
     * gradient_accumulation_steps = 5 * 8 under the config file's 32); a value neither says,
     * or the script computes (its dtype), is unknown */
    f.files = &recorded_files;
    assert_int_equal(model_build(m, &f, NULL, err, sizeof err), 0);
    assert_int_equal(m->cfg.v[CFG_n_layer].src, CONFIG_SRC_FILE);
    assert_int_equal(m->cfg.v[CFG_gradient_accumulation_steps].i, 32);
    assert_int_equal(m->cfg.v[CFG_vocab_size].src, CONFIG_SRC_FILE);
    assert_int_equal(m->cfg.v[CFG_vocab_size].i, 50304);
    assert_string_equal(m->cfg.v[CFG_vocab_size].where, "train.py:7 (the script's own)");
    assert_int_equal(m->cfg.v[CFG_dropout].src, CONFIG_SRC_FILE);
    static const char other[] = "DEFAULTS = dict(\n    batch_size=12, vocab_size=50304,\n)\n";
    static const config_recfile own[] = {{"train.py", other, sizeof other - 1, 0, VT_FILE_ARG}};
    static const config_files own_files = {1, own, 1};
    f.files = &own_files; /* nanoGPT's spelling, defaults of its own (not top-level) */
    assert_int_equal(model_build(m, &f, NULL, err, sizeof err), 0);
    assert_int_equal(m->cfg.v[CFG_vocab_size].src, CONFIG_SRC_UNKNOWN);
    assert_int_equal(m->cfg.v[CFG_batch_size].i, 16); /* the argument */
    for (int k = 0; k < CFG_COUNT; k++)
        assert_int_not_equal(m->cfg.v[k].src, CONFIG_SRC_DEFAULT);
    /* a script of nanoGPT's spelling that assigns some keys at top level: those are its own, a
     * key it does not assign is unknown, never upstream's default (vocab_size 50304) */
    static const char some[] = "batch_size = 12\nn_layer = 6\n";
    static const config_recfile part[] = {{"train.py", some, sizeof some - 1, 0, VT_FILE_ARG}};
    static const config_files part_files = {1, part, 1};
    f.files = &part_files;
    assert_int_equal(model_build(m, &f, NULL, err, sizeof err), 0);
    assert_int_equal(m->cfg.v[CFG_vocab_size].src, CONFIG_SRC_UNKNOWN);
    assert_int_equal(m->cfg.v[CFG_bias].src, CONFIG_SRC_UNKNOWN);
    assert_string_equal(m->cfg.v[CFG_vocab_size].where, "");
    free(m);
}

static void test_oom_json(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    model_opts o = {0};
    cJSON *root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);

    cJSON *cfg = cJSON_GetObjectItem(root, "config");
    cJSON *bs = cJSON_GetObjectItem(cfg, "batch_size");
    assert_int_equal(cJSON_GetObjectItem(bs, "value")->valuedouble, 16);
    assert_string_equal(cJSON_GetObjectItem(bs, "source")->valuestring, "argument");
    cJSON *ga = cJSON_GetObjectItem(cfg, "gradient_accumulation_steps");
    assert_string_equal(cJSON_GetObjectItem(ga, "source")->valuestring, "file");
    assert_string_equal(cJSON_GetObjectItem(ga, "where")->valuestring, "gpt2_12gb.py:3");
    cJSON *vs = cJSON_GetObjectItem(cfg, "vocab_size"); /* the script's own line */
    assert_string_equal(cJSON_GetObjectItem(vs, "source")->valuestring, "file");
    assert_string_equal(cJSON_GetObjectItem(vs, "where")->valuestring,
                        "train.py:7 (the script's own)");

    cJSON *fo = cJSON_GetObjectItem(root, "formula");
    cJSON *par = cJSON_GetObjectItem(fo, "parameters");
    double me = cJSON_GetObjectItem(par, "measured_bytes")->valuedouble;
    double doc = cJSON_GetObjectItem(par, "document_bytes")->valuedouble;
    double ref = cJSON_GetObjectItem(par, "refined_bytes")->valuedouble;
    assert_true(me == ref && me > 1.9 * doc && me < 2.1 * doc);
    assert_non_null(strstr(cJSON_GetObjectItem(par, "reason")->valuestring, "fp32"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(fo, "activations"), "refined_bytes"));
    cJSON *mu = cJSON_GetObjectItem(fo, "activation_multiplier");
    /* 36*N*d bytes per block = multiplier 18 at 2 B; with the 4*N*V logits far above 24 */
    assert_true(cJSON_GetObjectItem(mu, "measured")->valuedouble > 18 &&
                cJSON_GetObjectItem(mu, "measured")->valuedouble < 20);
    assert_true(cJSON_GetObjectItem(mu, "measured_with_logits_attention")->valuedouble > 24);
    assert_int_equal(cJSON_GetObjectItem(mu, "document_empirical")->valuedouble, 160);

    cJSON *oom = cJSON_GetObjectItem(root, "oom");
    assert_string_equal(cJSON_GetObjectItem(oom, "cause")->valuestring, "activations_too_large");
    assert_true(cJSON_GetObjectItem(oom, "requested_bytes")->valuedouble ==
                (double)f.oom_requested);
    assert_true(cJSON_GetObjectItem(oom, "capacity_bytes")->valuedouble == (double)(12 * GiB));
    cJSON *live = cJSON_GetObjectItem(oom, "live_by_category");
    assert_true(cJSON_GetObjectItem(live, "activations")->valuedouble ==
                (double)f.at_oom.bytes[CAT_ACTIVATIONS]);

    cJSON *adv = cJSON_GetObjectItem(root, "advice");
    assert_true(cJSON_GetArraySize(adv) >= 5);
    cJSON *first = cJSON_GetArrayItem(adv, 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(first, "recommended")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(first, "fits")));
    /* eager (the config says compile = False): B=8 lacks room for the allocator (test_advice) */
    assert_string_equal(cJSON_GetObjectItem(first, "command_line")->valuestring,
                        "--batch_size=4 --gradient_accumulation_steps=128");
    assert_true(cJSON_GetObjectItem(first, "required_bytes")->valuedouble <=
                0.95 * (double)(12 * GiB));
    assert_true(cJSON_GetObjectItem(first, "predicted_peak_bytes")->valuedouble <=
                cJSON_GetObjectItem(first, "required_bytes")->valuedouble);
    /* the recommendation's prediction includes Adam state, although none was measured yet */
    assert_true(cJSON_GetObjectItem(first, "predicted_allocated_bytes")->valuedouble > 5.5e9);
    for (int i = 0; i < cJSON_GetArraySize(adv); i++)
        assert_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(adv, i), "change")->valuestring,
                           "expandable"));
    cJSON *pr = cJSON_GetObjectItem(root, "prediction");
    cJSON *cal = cJSON_GetObjectItem(pr, "calibrated_by_category");
    assert_true(cJSON_GetObjectItem(cal, "optimizer")->valuedouble == 8.0 * 124373760);
    assert_true(cJSON_GetObjectItem(pr, "current_peak_bytes")->valuedouble > (double)(12 * GiB));
    double lb = cJSON_GetObjectItem(pr, "largest_batch_size")->valuedouble;
    assert_true(lb >= 4 && lb < 8);
    cJSON_Delete(root);
}

static void test_text_and_overrides(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    model_opts o = {0};
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(model_report_text(out, &f, &o), 0);
    fclose(out);
    assert_non_null(strstr(buf, "recommended: batch_size=4, gradient_accumulation_steps=128"));
    assert_non_null(strstr(buf, "change: --batch_size=4 --gradient_accumulation_steps=128"));
    assert_non_null(strstr(buf, "same effective batch 512"));
    assert_non_null(strstr(buf, "predicted peak"));
    assert_non_null(strstr(buf, "cause: the tensors of one micro-batch (activations, logits"));
    assert_non_null(strstr(buf, "gpt2_12gb.py:3"));
    free(buf);

    /* an override: compiled, B=8, A=64 fits the 12 GiB card (the documents' answer) */
    const char *ov[] = {"--compile=True"};
    o.noverrides = 1;
    o.overrides = ov;
    cJSON *root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "advice"), 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(first, "fits")));
    assert_string_equal(cJSON_GetObjectItem(first, "command_line")->valuestring,
                        "--batch_size=8 --gradient_accumulation_steps=64");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "compile"),
                            "source")
            ->valuestring,
        "flag");
    cJSON_Delete(root);
    /* a target card: 24 GiB holds the configuration that ran out of 12 (compiled, B=16): it is
     * recommended as it is, as predict --from says (it was told B=8 until 2026-12-01); on 14
     * GiB it is not (15.19 GiB), and the largest divisor of 512 below 16 that fits is 8 */
    const struct {
        uint64_t card;
        double batch;
        const char *change;
    } on[] = {{24 * GiB, 16, "none"}, {14 * GiB, 8, "batch_size=8"}};
    for (int k = 0; k < 2; k++) {
        o.target_card_bytes = on[k].card;
        o.target_card_name = k ? "14GiB" : "rtx4090";
        root = cJSON_CreateObject();
        assert_int_equal(model_report_json(root, &f, &o), 0);
        first = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "advice"), 0);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(first, "fits")));
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(first, "recommended")));
        assert_true(cJSON_GetObjectItem(first, "batch_size")->valuedouble == on[k].batch);
        assert_non_null(strstr(cJSON_GetObjectItem(first, "change")->valuestring, on[k].change));
        assert_true(cJSON_GetObjectItem(first, "required_bytes")->valuedouble <
                    0.95 * (double)on[k].card);
        cJSON_Delete(root);
    }

    /* a bad override is an error, reported, not a crash */
    const char *bad[] = {"batch_size=lots"};
    o.overrides = bad;
    root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), -1);
    cJSON_Delete(root);
}

static void test_fragmentation(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    f.oom_cache = 2 * GiB;
    f.oom_requested = 1 * GiB;
    model_opts o = {0};
    cJSON *root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "oom"), "cause")->valuestring,
                        "fragmentation");
    cJSON *adv = cJSON_GetObjectItem(root, "advice");
    int found = 0;
    for (int i = 0; i < cJSON_GetArraySize(adv); i++)
        found |=
            strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(adv, i), "command_line")->valuestring,
                   "expandable_segments:True") != NULL;
    assert_int_equal(found, 1);
    cJSON_Delete(root);
    f.alloc_conf = "expandable_segments:True";
    root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);
    adv = cJSON_GetObjectItem(root, "advice");
    for (int i = 0; i < cJSON_GetArraySize(adv); i++)
        assert_null(
            strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(adv, i), "command_line")->valuestring,
                   "expandable"));
    cJSON_Delete(root);
}

/* A run that fits: "none" is recommended, and the calibrated current peak is the measured one. */
static void test_fits(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    static const char *const argv[] = {"python3", "train.py", "gpt2_12gb.py"};
    f.argv = argv;
    f.argc = 3;
    f.has_oom = 0;
    f.iterations = 5;
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 4, s.T = 1024, s.A = 32, s.L = 12, s.H = 12, s.d = 768, s.V = 50304, s.dtype_bytes = 2;
    formula_refined(&s, &f.at_peak);
    f.at_peak.bytes[CAT_ACTIVATIONS] = f.at_peak.bytes[CAT_ACTIVATIONS] * 11 / 10;
    f.at_peak.bytes[CAT_CONTEXT] = 500 * MiB;
    f.at_peak.bytes[CAT_CACHE] = 400 * MiB;
    f.peak_process = cat_breakdown_total(&f.at_peak);
    model_opts o = {0};
    cJSON *root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "oom")));
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "advice"), 0);
    assert_non_null(strstr(cJSON_GetObjectItem(first, "change")->valuestring, "none"));
    double cur = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "prediction"), "current_peak_bytes")
                     ->valuedouble;
    assert_true(cur > 0.999 * (double)f.peak_process && cur < 1.001 * (double)f.peak_process);
    cJSON *ratio = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "formula"), "activations"), "ratio");
    assert_true(ratio->valuedouble > 1.09 && ratio->valuedouble < 1.11);
    cJSON_Delete(root);
}

/* forward_unfinished and oom_after_measured_step of f's report */
static void cut_said(const run_facts *f, int *unfinished, int *later)
{
    model_opts o = {0};
    cJSON *root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, f, &o), 0);
    cJSON *mu = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "formula"), "activation_multiplier");
    cJSON *cal = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "prediction"), "calibration");
    *unfinished = cJSON_IsTrue(cJSON_GetObjectItem(mu, "forward_unfinished"));
    *later = cJSON_IsTrue(cJSON_GetObjectItem(cal, "oom_after_measured_step"));
    cJSON_Delete(root);
}

/* The OOM of oom_facts (in iteration 0's forward, the state at it the peak measured): cut short
 * whatever the program did after it (one that caught it and trained 5 steps at a smaller batch
 * keeps has_oom: no later allocation was as large); not where an optimizer step began between
 * the step measured and the OOM. */
static void test_oom_cut(void **state)
{
    (void)state;
    run_facts f;
    int unfinished, later;
    oom_facts(&f);
    cut_said(&f, &unfinished, &later);
    assert_true(unfinished && !later);
    f.iterations = 5; /* caught, trained on: the measured forward was still cut */
    cut_said(&f, &unfinished, &later);
    assert_true(unfinished && !later);
    f.iterations = 1, f.oom_iter = 1; /* in the next step's forward, after the one measured */
    cut_said(&f, &unfinished, &later);
    assert_true(!unfinished && later);
}

/* compile=True run eager (our simulation does; its frames show forwards and never
 * torch._dynamo): the model uses eager mode. Without that signal, compile=True is kept. */
static void test_sim_compile(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    f.compile_frames = MODEL_COMPILE_NOT_SEEN;
    static const char *const argv[] = {
        "python3",        "examples/sim/sim_train.py", "gpt2_12gb.py", "--batch_size=16",
        "--compile=True", "--allocator=caching",       "--max_iters=3"};
    f.argv = argv;
    f.argc = 7;
    model_opts o = {0};
    cJSON *root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);
    assert_null(
        cJSON_GetObjectItem(root, "config_warnings")); /* --allocator, --max_iters tolerated */
    cJSON *note = cJSON_GetObjectItem(root, "config_note");
    assert_non_null(note);
    assert_non_null(strstr(note->valuestring, "eager"));
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "advice"), 0);
    assert_string_equal(cJSON_GetObjectItem(first, "command_line")->valuestring,
                        "--batch_size=4 --gradient_accumulation_steps=128");
    cJSON_Delete(root);
    /* the same run with frames under torch._dynamo: compile=True stands */
    f.compile_frames = MODEL_COMPILE_SEEN;
    root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);
    assert_null(cJSON_GetObjectItem(root, "config_note"));
    cJSON_Delete(root);
}

/* no breakdown at all, only the peaks: one global ratio, advice still calibrated */
static void test_peaks_only(void **state)
{
    (void)state;
    run_facts f;
    oom_facts(&f);
    f.has_oom = 0;
    f.iterations = 3;
    memset(&f.at_peak, 0, sizeof f.at_peak);
    static const char *const argv[] = {"python3", "train.py", "gpt2_12gb.py", "--batch_size=4"};
    f.argv = argv;
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 4, s.T = 1024, s.A = 32, s.L = 12, s.H = 12, s.d = 768, s.V = 50304, s.dtype_bytes = 2;
    cat_breakdown r;
    formula_refined(&s, &r);
    f.peak_allocated = cat_breakdown_total(&r) * 11 / 10; /* 10 % above the formula */
    f.peak_reserved = f.peak_allocated * 6 / 5;
    f.peak_process = f.peak_reserved + 500 * MiB;
    model_opts o = {0};
    cJSON *root = cJSON_CreateObject();
    assert_int_equal(model_report_json(root, &f, &o), 0);
    cJSON *pr = cJSON_GetObjectItem(root, "prediction");
    double cur = cJSON_GetObjectItem(pr, "current_peak_bytes")->valuedouble;
    assert_true(cur > 0.999 * (double)f.peak_process && cur < 1.001 * (double)f.peak_process);
    double alloc = cJSON_GetObjectItem(pr, "current_allocated_bytes")->valuedouble;
    assert_true(alloc > 0.999 * (double)f.peak_allocated &&
                alloc < 1.001 * (double)f.peak_allocated);
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_opens),
        cmocka_unit_test(test_trace_fp32),
        cmocka_unit_test(test_nanogpt_needs_its_model),
        cmocka_unit_test(test_oom_json),
        cmocka_unit_test(test_text_and_overrides),
        cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_sim_compile),
        cmocka_unit_test(test_peaks_only),
        cmocka_unit_test(test_oom_cut),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
