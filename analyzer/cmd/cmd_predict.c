/* cmd_predict.c — `vramtrace predict`: a GPT (nanoGPT) configuration's per-category peak by the
 * refined formula (formula.c; calibration: advice.c), fits or not, the largest batch_size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "advice.h"
#include "advice_speak.h"
#include "bytes_sat.h"
#include "cards.h"
#include "commands.h"
#include "report.h"
#include "config.h"
#include "config_view.h"
#include "escape.h"
#include "formula.h"
#include "jsonw.h"
#include "mem.h"
#include "model_views.h"
#include "notes.h"
#include "predict_args.h"
#include "predict_model.h"
#include "predict_files.h"
#include "predict_from.h"
#include "predict_print.h"
#include "predict_train.h"
#include "predict_usage.h"

#define PREDICT_SCHEMA_VERSION 1 /* "schema_version" of --json (README, `vramtrace predict`) */
/* largest_cache: at the largest micro-batch lb, the most allocator cache with which it keeps the
 * headroom, where less than twice the assumed would not (advice_largest_cache); 0 where the run
 * measured that micro-batch's own cache (its own, complete) or the what-ifs are lower bounds */
static uint64_t largest_cache(const model_calib *cal, const gpt_shape *s, uint64_t lb,
                              const predict_args *a, int lower, uint64_t *cache)
{
    *cache = 0;
    if (!lb || lower ||
        (a->from && cal->calibrated && !cal->partial && lb == cal->measured_shape.B &&
         s->A == cal->measured_shape.A))
        return 0;
    return advice_largest_cache(cal, s, lb, a->card.bytes, ADVICE_HEADROOM, cache);
}

/* kv_shape: the KV cache's keys and values a block, as predict_kv_cache counts them */
static const char *kv_shape(const gpt_shape *s)
{
    if (s->hf_gpt2)
        return "B*T*d";
    if (formula_params16(s))
        return s->kv ? "B*T*kv (the key / value heads' width), 16-bit" : "B*T*d, 16-bit";
    return s->kv ? "B*T*kv (the key / value heads' width), fp32 under autocast"
                 : "B*T*d, fp32 under autocast";
}

/* weights_floor: what s needs at a micro-batch of 1 with the shortest input (one token) and
 * activation checkpointing: its weights, their gradients and the optimizer's state, the cache
 * and the context beside almost nothing batch-sized; where even that does not fit the card, no
 * input size nor checkpointing makes a micro-batch fit. 0 when it fits, when the cache assumed
 * decides it (advice_cache_limit: not known), or without a formula */
static uint64_t weights_floor(const model_calib *cal, const gpt_shape *s, uint64_t card)
{
    if (s->generic || s->no_training)
        return 0;
    gpt_shape m = *s;
    m.B = 1, m.T = 1, m.checkpointing = 1;
    prediction p;
    advice_predict(cal, &m, &p);
    uint64_t cache;
    return advice_fits(p.required_bytes, card, ADVICE_HEADROOM) == 1 ||
                   advice_cache_limit(&p, card, ADVICE_HEADROOM, &cache)
               ? 0
               : p.required_bytes;
}

/* withheld: why a --from run's lower bounds recommend nothing, as the report (advice_candidates):
 * 1, an evaluation pass with its own batch ran out of memory (every what-if keeps it); 2, a
 * training run died in its first forward, or its trace ended before its first optimizer step
 * (the rest of the step not measured); 0, neither. The text and the JSON alike. */
static int withheld(const predict_args *a, const model_calib *cal, const gpt_shape *s, int lower)
{
    if (!a->from)
        return 0;
    return cal->eval_cut ? 1 : lower && !s->no_training ? 2 : 0;
}

static void print_text(const nano_config *c, const gpt_shape *s, const prediction *p,
                       const predict_args *a, uint64_t lb, const model_calib *cal,
                       const predict_run *run)
{
    const char *trace_model = run->model;
    char b1[32], b2[32], trained[1024];
    const gpt_shape *m = &run->shape; /* (the run's own model: its own count of what trains) */
    int own = run->has_shape && s->L == m->L && s->d == m->d && s->V == m->V && s->H == m->H;
    predict_print_heading(
        c, s, a->from, trace_model,
        run->lora_assumed  ? PREDICT_FRAC_ASSUMED
        : run->rest_untold ? PREDICT_FRAC_UNTOLD
                           : PREDICT_FRAC_FROZEN,
        own ? run->trainable : 0,
        predict_train_text(&a->train, s, a->from != NULL, trained, sizeof trained));
    predict_print_calibration(a->from, cal, s->generic);
    /* how its cut-short forward is read: as the report says it; the optimizer's state its rows
     * count, not measured: said so */
    predict_print_note(run->forward_note);
    predict_print_note(run->optim_note);
    char wdoc[320];
    predict_weights_doc(c, s, run, own, wdoc, sizeof wdoc); /* (own: the run's shape, its
                                                             * trained weights' bytes its own) */
    predict_print_breakdown(p, cal, s->generic, s->compile,
                            a->from ? 0 : predict_kv_cache(&a->block, s), kv_shape(s), wdoc);
    uint64_t low = predict_print_peak(p, cal, s, run && run->lower_bounds);
    if (s->generic)
        goto verdict;
    const char *what = NULL;
    uint64_t eb, big = predict_largest_tensor(s, p, cal, &what, &eb);
    printf("largest single tensor: %s, %s", card_format_bytes(big, b1, sizeof b1), what);
    printf(eb ? " at the evaluation's batch of %llu\n" : "\n", (unsigned long long)eb);
    doc_formula d;
    formula_documents(s, &d);
    /* (the documents' formula counts AdamW's state whatever the optimizer: said so, an SGD
     * ViT's "AdamW 649.2 MiB" had read as its own) */
    printf(
        "the basic formula (docs/formula.md §2%s): params %s, grads %s, AdamW %s (the formula "
        "counts AdamW's state, whatever the run's optimizer), activations %s (x24) / %s (x160)\n",
        s->gated || s->hf_gpt2 || s->bert ? ", the usual GPT-2 rule of thumb of the same L, d, V"
                                          : "",
        card_format_bytes(d.param_bytes, b1, sizeof b1),
        card_format_bytes(d.grad_bytes, b2, sizeof b2),
        card_format_bytes(d.optimizer_bytes, (char[32]){0}, 32),
        card_format_bytes(d.act_bytes_basic, (char[32]){0}, 32),
        card_format_bytes(d.act_bytes_empirical, (char[32]){0}, 32));
verdict:
    if (!a->have_card) {
        printf("no --card given: pass --card rtx4070 (or a size) to check the fit\n");
        return;
    }
    model_text_verdict(stdout, p, a->card.name, a->card.bytes, run->lower_bounds, low);
    /* (a simulated ResNet-50's optimizer-step temporaries at B=1, scaled to B=128: +127 %;
     * a Llama's few activations left at B=1: far too low) */
    if (run->growth_unmeasured && a->from && s->B != cal->measured_shape.B)
        printf("  (the run does not measure how its step grows with the micro-batch: this what-if "
               "scales what it kept at its peak and can be far off either way; vramtrace fit "
               "measures it)\n");
    /* (a run that died in a step of a kind no earlier step ran: model_oom.c's note says so) */
    int new_step = !strncmp(run->forward_note, ADVICE_NEW_STEP_TEXT, strlen(ADVICE_NEW_STEP_TEXT));
    if (run->lower_bounds && a->from && cal->eval_cut) /* (the report's note, the same) */
        printf("  (a lower bound: the run ran out of memory in its %s (%s), whose need "
               "past the request that failed was not measured)\n",
               advice_pass_word(cal->eval_flag), cal->eval_flag);
    else if (run->lower_bounds && run->cut_unstepped)
        printf("  (a lower bound: " ADVICE_UNSTEPPED_TEXT " (%s); the rest of its step was not "
               "measured)\n",
               advice_cut_why(run->stopped));
    else if (run->lower_bounds && run->caught)
        printf("  (a lower bound: an out-of-memory error the program caught and went on from cut "
               "short the pass the run's peak came in; the rest of it was not measured)\n");
    else if (run->lower_bounds && new_step)
        printf("  (a lower bound: " ADVICE_NEW_STEP_TEXT ", before its end; what the rest of it "
               "holds was not measured)\n");
    else if (run->lower_bounds && advice_backward_kept(cal))
        printf("  (a lower bound: the run died in a backward that keeps what it makes, before "
               "its end; what the rest of it keeps was not measured)\n");
    else if (run->lower_bounds)
        printf("  (a lower bound: the rest of the run's first forward was not measured; the "
               "step needs at least this much)\n");
    uint64_t rb = 0, ra = 0;
    char flags[sizeof((advice_item *)0)->cmdline]; /* (the report's what-ifs' room) */
    /* the flags change the traced run's command line: its accumulation, not the what-if's
     * (--grad-accum 2 given here is a change the program must be told too) */
    gpt_shape base = *s;
    if (a->from && cal->calibrated && !s->accum_unknown)
        base.A = cal->measured_shape.A;
    /* nanoGPT's names are its settings; another program's (traced, or known by name or
     * config.json) its own flags beside the numbers where known: the views' words else */
    int nano = c->program == PROG_NANOGPT;
    const char *mb = batch_word(nano ? PROG_NANOGPT : c->program, s->no_training);
    int unmeasured = run->largest_unpredicted;
    uint64_t cache1 = 0; /* (none fits: the most cache with which 1 would) */
    char un[400];
    /* an evaluation pass the run never reached: the largest and the recommendation below count
     * the training step only (as the report says it) */
    predict_print_note(run->unreached);
    if (unmeasured) /* as the report says */
        printf("largest %s that fits: %s\n", mb,
               model_unpredicted_text(mb, cal->eval_batch, un, sizeof un));
    else if (lb) {
        char ts[sizeof run->unreached_short * 4]; /* (the trace's file name: escaped) */
        escape_term(run->unreached_short, strlen(run->unreached_short), ts, sizeof ts);
        double share; /* (the largest with the run's own cache share: "N to M", as the report) */
        uint64_t hi = advice_largest_own(cal, s, run->lower_bounds ? 0 : lb, a->card.bytes,
                                         ADVICE_HEADROOM, &share);
        if (c->batch_per > 1 && (hi -= hi % (uint64_t)c->batch_per) <= lb) /* (as lb) */
            hi = 0;
        printf("largest %s that fits (keeping >= %d %% free%s%s): %s%llu%s%.0llu%s", mb,
               ADVICE_HEADROOM_PCT, ts[0] ? "; " : "", ts, run->lower_bounds ? "at most " : "",
               (unsigned long long)lb, hi ? " to " : "", (unsigned long long)hi, /* (0: nothing) */
               run->lower_bounds ? " (the what-ifs are lower bounds)" : "");
        /* (at the program's own accumulation where the what-if keeps to it: YOLOv5's) */
        uint64_t la = formula_accum_own(s, s->B) == s->A ? formula_accum_own(s, lb) : 0;
        advice_batch_flags(c, &base, lb, la ? la : s->A, run->targs[0] ? run->targs : NULL, flags,
                           sizeof flags);
        if (c->program == PROG_NANOGPT)
            printf("  (--batch_size=%llu)\n", (unsigned long long)lb);
        else
            printf(flags[0] == '(' ? "  %s\n" : flags[0] ? "  (%s)\n" : "%s\n", flags);
        uint64_t cache, most = largest_cache(cal, s, lb, a, run->lower_bounds, &cache);
        char why[320];
        if (hi) /* as the report says it */
            printf("  %s\n",
                   model_own_share_text(lb, hi, share, advice_cache_floor(s, cal->expandable), mb,
                                        why, sizeof why));
        if (most) /* as the report says it */
            printf("  %s\n", model_largest_cache_text(cache, lb, most, why, sizeof why));
        if (!run->lower_bounds &&
            (most = advice_next_cache(cal, s, lb, a->card.bytes, ADVICE_HEADROOM, &cache)) != 0)
            printf("  %s\n", model_next_cache_text(cache, lb, most, why, sizeof why));
    } else if (!run->lower_bounds && s->B != 1) { /* none: at 1 the cache may decide */
        uint64_t cache, most = advice_next_cache(cal, s, 0, a->card.bytes, ADVICE_HEADROOM, &cache);
        char why[240];
        if (most)
            printf("  %s\n", model_next_cache_text(cache, 0, most, why, sizeof why));
        cache1 = most;
    }
    int found =
        advice_recommend(cal, s, p->required_bytes, lb, a->card.bytes, unmeasured, &rb, &ra);
    if (run->retried && (!found || rb == s->B)) {
        /* as the report's row "none": never "as it is" for a run its allocator's retry saved */
        printf("the run ran to the end on this card, but %s: the headroom above is after that "
               "release (vramtrace report lists the options that lower its peak)\n",
               ADVICE_RETRY_TEXT);
        return;
    }
    int none = withheld(a, cal, s, run->lower_bounds);
    if (none == 1) { /* as the report: every what-if keeps that evaluation */
        printf("none recommended: every %s keeps the %s's batch (%s), which ran out of "
               "memory; lower that batch (vramtrace fit measures)\n",
               mb, advice_pass_word(cal->eval_flag), cal->eval_flag);
        return;
    }
    if (none == 2) { /* as the report: lower bounds */
        printf("none recommended: %s: every %s's need above is a lower bound (vramtrace fit "
               "measures)\n",
               run->cut_unstepped ? ADVICE_UNSTEPPED_TEXT
                   ", and what the rest of its step adds is not known"
               : run->caught ? "an out-of-memory error the program caught and went on from cut "
                               "short the pass the run's peak came in, and what the rest of it "
                               "adds is not known"
               : advice_backward_kept(cal)
                   ? "the run died in a backward that keeps what it makes (per-sample "
                     "gradients, as DP-SGD keeps them), and what the rest of it keeps is not known"
               : new_step ? ADVICE_NEW_STEP_TEXT ", and what the rest of that step adds is "
                                                 "not known"
                          : "the run died in its first forward, and what the rest of the "
                            "forward and the backward add is not known",
               mb);
        return;
    }
    if (!found && !lb && !unmeasured &&
        predict_print_ran(run, s, &cal->measured_shape, a->card.bytes, mb))
        return; /* (its own ran there: as the report, model_ran.c) */
    uint64_t floor = found || unmeasured || lb ? 0 : weights_floor(cal, s, a->card.bytes);
    predict_print_recommended(c, s, &base, mb, nano, a->from != NULL, found, rb, ra, unmeasured, lb,
                              floor, run->targs[0] ? run->targs : NULL, cache1);
}

static int print_json(const nano_config *c, const gpt_shape *s, const prediction *p,
                      const predict_args *a, uint64_t lb, const model_calib *cal, int lower,
                      int unmeasured, int retried, uint64_t run_params, const char *unreached)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema_version", PREDICT_SCHEMA_VERSION);
    config_add_json(root, predict_config_said(c, s, a->from != NULL), CONFIG_SHOW_TRANSFORMER);
    cJSON *m = cJSON_AddObjectToObject(root, "model");
    /* a traced model no formula has (a T5, a ResNet): its own count and what it showed of its
     * shape, no block (its formula's count had been the embedding's alone, "block": "gpt2") */
    uint64_t np = s->generic ? run_params : formula_params_exact(s);
    const uint64_t dims[5] = {s->L, s->H, s->d, s->T, s->V};
    static const char *const dn[5] = {"n_layer", "n_head", "n_embd", "block_size", "vocab_size"};
    if (np)
        cJSON_AddNumberToObject(m, "parameters", (double)np);
    else
        cJSON_AddNullToObject(m, "parameters");
    for (int i = 0; i < 5; i++)
        if (dims[i] || !s->generic)
            cJSON_AddNumberToObject(m, dn[i], (double)dims[i]);
        else
            cJSON_AddNullToObject(m, dn[i]);
    if (s->generic) /* (no formula: no block) */
        cJSON_AddNullToObject(m, "block");
    else
        cJSON_AddStringToObject(m, "block",
                                s->gated                ? "gated"
                                : s->hf_gpt2            ? "hf_gpt2"
                                : formula_bert_block(s) ? "bert"
                                                        : "gpt2");
    if (s->gated) {
        cJSON_AddNumberToObject(m, "mlp_width", (double)s->I);
        cJSON_AddNumberToObject(m, "kv_width", (double)(s->kv ? s->kv : s->d));
        cJSON_AddBoolToObject(m, "untied_head", s->untied);
    }
    predict_train_json(root, &a->train, s); /* the optimizer and LoRA given, when they were */
    cJSON_AddNumberToObject(root, "kv_cache_not_counted_bytes", /* (KV cache: not predicted) */
                            (double)(a->from ? 0 : predict_kv_cache(&a->block, s)));
    /* by_category: the failure's state (what was live, moved to the shape), or the step's peak */
    cJSON_AddStringToObject(root, "by_category_at",
                            p->oom_state ? "failure" : advice_moment_key(p->moment));
    cJSON *bc = cJSON_AddObjectToObject(root, "by_category");
    for (int k = 0; k < CAT_COUNT; k++)
        cJSON_AddNumberToObject(bc, category_key((category)k), (double)p->by_cat.bytes[k]);
    /* what the calibration moved beyond the rows (predict_print.h): by_category plus
     * anchor_tensor_bytes is tensor_bytes; with the cache and outside rows and
     * anchor_peak_bytes, peak_bytes */
    int64_t at, ar;
    predict_anchors(p, &at, &ar);
    cJSON_AddNumberToObject(root, "anchor_tensor_bytes", (double)at);
    cJSON_AddNumberToObject(root, "anchor_peak_bytes", (double)ar);
    cJSON_AddNumberToObject(root, "tensor_bytes", (double)p->tensor_bytes);
    cJSON_AddNumberToObject(root, "reserved_bytes", (double)p->reserved_bytes);
    cJSON_AddNumberToObject(root, "peak_bytes", (double)p->peak_bytes);
    if (s->generic) { /* no formula: neither line in the text (a GAN's had been "fp32 logits
                       * for cross-entropy (4*B*T*V)" of 0 B, a T5's 502 MiB, its documents 0) */
        cJSON_AddNullToObject(root, "largest_tensor");
        cJSON_AddNullToObject(root, "documents");
    } else
        predict_json_formula_lines(root, s, p, cal);
    if (a->have_card) {
        cJSON *cj = cJSON_AddObjectToObject(root, "card");
        jsonw_add_c(cj, "name", a->card.name); /* (with --from, the trace's: valid UTF-8) */
        cJSON_AddNumberToObject(cj, "bytes", (double)a->card.bytes);
        cJSON_AddBoolToObject(root, "fits",
                              advice_fits(p->required_bytes, a->card.bytes, ADVICE_HEADROOM) == 1);
        cJSON_AddNumberToObject(root, "headroom_bytes",
                                (double)bytes_diff(a->card.bytes, p->required_bytes));
        uint64_t cache, limit = advice_cache_limit(p, a->card.bytes, ADVICE_HEADROOM, &cache);
        cJSON_AddNumberToObject(root, "allocator_cache_bytes", (double)cache);
        if (limit) /* the cache decides: fits with at most this much of it */
            cJSON_AddNumberToObject(root, "fits_with_cache_at_most_bytes", (double)limit);
        else
            cJSON_AddNullToObject(root, "fits_with_cache_at_most_bytes");
        if (unmeasured) /* the run does not measure the growth: as the report, none */
            cJSON_AddNullToObject(root, "largest_batch_size");
        else
            cJSON_AddNumberToObject(root, "largest_batch_size", (double)lb);
        cJSON_AddBoolToObject(root, "largest_batch_size_at_most", lower); /* as the report */
        uint64_t lcache, most = unmeasured ? 0 : largest_cache(cal, s, lb, a, lower, &lcache);
        if (most) {
            cJSON_AddNumberToObject(root, "largest_batch_cache_assumed_bytes", (double)lcache);
            cJSON_AddNumberToObject(root, "largest_batch_cache_most_bytes", (double)most);
        } else {
            cJSON_AddNullToObject(root, "largest_batch_cache_assumed_bytes");
            cJSON_AddNullToObject(root, "largest_batch_cache_most_bytes");
        }
        uint64_t rb = 0, ra;
        int found =
            advice_recommend(cal, s, p->required_bytes, lb, a->card.bytes, unmeasured, &rb, &ra);
        /* the run as it ran, after its allocator's retry: nothing recommended as it is (text) */
        cJSON_AddBoolToObject(root, "completed_after_retry", retried);
        if (found && !(retried && rb == s->B) && !withheld(a, cal, s, lower) &&
            !predict_batch_assumed(c, s, a->from != NULL)) {
            cJSON *rj = cJSON_AddObjectToObject(root, "recommended");
            cJSON_AddNumberToObject(rj, "batch_size", (double)rb);
            if (s->accum_unknown && s->no_training) { /* forwards only: no step to accumulate */
                cJSON_AddNullToObject(rj, "gradient_accumulation_steps");
                cJSON_AddNumberToObject(rj, "accumulation_multiplier", 1);
            } else if (s->accum_unknown) { /* the run's A is not known: only the factor is */
                cJSON_AddNullToObject(rj, "gradient_accumulation_steps");
                cJSON_AddNumberToObject(rj, "accumulation_multiplier", (double)(s->B / rb));
            } else {
                cJSON_AddNumberToObject(rj, "gradient_accumulation_steps", (double)ra);
            }
        } else {
            cJSON_AddNullToObject(root, "recommended");
        }
    } else {
        cJSON_AddNullToObject(root, "card");
        cJSON_AddNullToObject(root, "fits");
        cJSON_AddNullToObject(root, "largest_batch_size");
        cJSON_AddBoolToObject(root, "largest_batch_size_at_most", lower);
    }
    if (unreached[0]) /* (an evaluation pass the run never reached: the step's only) */
        jsonw_add_c(root, "unreached_pass_note", unreached);
    else
        cJSON_AddNullToObject(root, "unreached_pass_note");
    cJSON_AddNumberToObject(root, "headroom_fraction", ADVICE_HEADROOM);
    /* no argument gave the accumulation: "recommended" has only a factor for it */
    cJSON_AddBoolToObject(root, "gradient_accumulation_assumed", s->accum_unknown != 0);
    cJSON_AddStringToObject(root, "calibration", cal->calibrated ? "run" : "formula");
    if (cal->calibrated)
        jsonw_add_c(root, "calibrated_from", a->from); /* a file name: any bytes */
    cJSON_AddNumberToObject(root, "required_bytes", (double)p->required_bytes);
    /* the run died in its first forward, or its trace ended before its first optimizer step
     * (no formula): every predicted peak here is a lower bound */
    cJSON_AddBoolToObject(root, "lower_bound", lower);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text) {
        fprintf(stderr, "vramtrace predict: out of memory writing JSON\n");
        return VT_EXIT_USAGE;
    }
    jsonw_fputs(text, stdout);
    putchar('\n');
    free(text);
    return VT_EXIT_OK;
}

/* find_from: the path given with --from (either spelling), or NULL. */
static const char *find_from(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--from=", 7))
            return argv[i] + 7;
        if (!strcmp(argv[i], "--from") && i + 1 < argc)
            return argv[i + 1];
    }
    return NULL;
}

/* say: a line on stderr holding what a file gave (a config file's line, its name, a trace's
 * record): escaped, as a file may hold terminal escapes */
static void say(const char *what, const char *text)
{
    fprintf(stderr, "vramtrace predict: %s", what);
    escape_term_fputs(stderr, text, strlen(text));
    fputc('\n', stderr);
}

int cmd_predict(int argc, char **argv)
{
    nano_config c;
    config_init(&c);
    predict_args a;
    memset(&a, 0, sizeof a);
    predict_block_init(&a.block);
    char err[1400] = "";
    /* --from: the run's configuration first, then the options here as what-ifs */
    const char *from = find_from(argc, argv);
    static predict_run run;     /* large: not on the stack */
    static nano_config run_cfg; /* the run's own configuration, before the options */
    gpt_shape run_shape;
    memset(&run, 0, sizeof run);
    if (from) {
        int lrc = predict_from_load(from, &c, &run, err, sizeof err);
        if (lrc < 0) {
            say("", err);
            return lrc == -3 ? VT_EXIT_MALFORMED : VT_EXIT_USAGE;
        }
        if (!config_known(&c, CFG_batch_size)) { /* nothing to scale from or calibrate with */
            /* (a report's JSON: to the report of its trace, not to the JSON) */
            const char *trace = !run.from_json ? from : run.trace[0] ? run.trace : "TRACE";
            char why[sizeof c.v[0].where + 64], esc[sizeof why * 4]; /* (the script's flags) */
            config_unknown_text(&c, CFG_batch_size, why, sizeof why);
            escape_term(why, strlen(why), esc, sizeof esc);
            fprintf(stderr,
                    "vramtrace predict: --from %s: the traced run's micro-batch is not known "
                    "(%s): give it, e.g. `vramtrace report --json --batch-size N %s > run.json`, "
                    "then `vramtrace predict --from run.json`\n",
                    from, esc, trace);
            return VT_EXIT_USAGE;
        }
        formula_shape_from_config(&c, &run_shape);
        run_cfg = c;
    }
    int rc = predict_parse(argc, argv, &c, &a, err, sizeof err);
    if (rc == 1)
        return VT_EXIT_OK;
    if (rc < 0) {
        if (!mem_failed()) /* (out of memory: what failed in it is no diagnosis; main says so) */
            say("", err);
        return VT_EXIT_USAGE;
    }
    for (int i = 0; i < config_notes_kept(&c); i++) /* config lines not used, and why */
        say("note: ", c.warnings[i]);
    if (c.nwarnings > config_notes_kept(&c))
        fprintf(stderr, "vramtrace predict: note: %d more notes not kept\n",
                c.nwarnings - config_notes_kept(&c));
    if (from && !a.have_card && run.cap) {
        a.have_card = 1;
        a.card.bytes = run.cap;
        snprintf(a.card.name, sizeof a.card.name, "%.63s", run.capname);
    }
    gpt_shape s;
    formula_shape_from_config(&c, &s);
    if (from && (a.block.mlp_width || a.block.hf_gpt2 || a.block.bert)) { /* the trace's */
        fprintf(stderr,
                "vramtrace predict: %s describes a model without a trace; with --from "
                "the block is the traced run's\n",
                a.block.from);
        return VT_EXIT_USAGE;
    }
    /* with --from the optimizer and what trains are the traced run's, but for the report's own
     * what-if: its AdamW's moments in 8 bits (the report recommended it, and predict --from
     * had refused to check it) */
    int eight =
        from && a.train.opt == PREDICT_OPT_ADAMW8BIT && !a.train.lora_rank && !a.train.targets[0];
    if (from && predict_train_given(&a.train) && !eight) {
        fprintf(stderr, "vramtrace predict: --optimizer, --lora-rank and --lora-targets describe "
                        "a run without a trace; with --from the optimizer and what trains are "
                        "the traced run's (--optimizer adamw8bit alone is taken: the report's "
                        "8-bit AdamW for a run of AdamW)\n");
        return VT_EXIT_USAGE;
    }
    if (eight)
        a.train.opt = PREDICT_OPT_NONE; /* (set on the run's own state below) */
    if ((from &&
         predict_from_fixed(&run, &run_cfg, &c, a.checkpointing, a.unfused, err, sizeof err) < 0) ||
        predict_block_apply(&a.block, &c, &s, err, sizeof err) < 0 ||
        predict_train_apply(&a.train, &s, err, sizeof err) < 0) {
        say("", err);
        return VT_EXIT_USAGE;
    }
    /* no --from and no --grad-accum: nanoGPT's default of 40 is not the user's run, so the
     * advice speaks of the micro-batch and a factor, never of an effective batch it made up */
    s.accum_unknown = advice_accum_unknown(&c) ||
                      (!from && c.v[CFG_gradient_accumulation_steps].src == CONFIG_SRC_DEFAULT);
    s.unfused_attention = a.unfused;
    s.checkpointing = a.checkpointing;
    const gpt_shape *ts = &run.shape;
    if (run.has_shape) { /* what the report recognized of the run stays true of its what-ifs */
        s.generic = ts->generic, s.opt_set = ts->opt_set, s.opt_bpp = ts->opt_bpp;
        s.train_frac = ts->train_frac, s.none_seen_trained = ts->none_seen_trained;
        s.grads_frac = run_shape.grads_frac = ts->grads_frac; /* (steps of different weights) */
        s.patch_tokens = ts->patch_tokens;
        s.no_training = ts->no_training; /* forwards only: no effective batch to keep */
        s.checkpointing |= ts->checkpointing;
        if (!config_known(&c, CFG_dropout)) /* its dropout's masks, unless a rate is given */
            s.dropout_on = ts->dropout_on;
        formula_take_block(&s, ts); /* its block */
        if (!config_known(&c, CFG_gradient_accumulation_steps))
            s.A = ts->A;
        /* a program's own accumulation from its micro-batch (YOLOv5's), unless --grad-accum's */
        s.nbs = run_shape.nbs = ts->nbs, s.nbs_floor = run_shape.nbs_floor = ts->nbs_floor;
        if (formula_accum_own(&s, s.B) && !strcmp(c.v[CFG_gradient_accumulation_steps].where,
                                                  run_cfg.v[CFG_gradient_accumulation_steps].where))
            s.A = formula_accum_own(&s, s.B);
        run_shape.generic = ts->generic, run_shape.opt_set = ts->opt_set;
        run_shape.opt_bpp = ts->opt_bpp, run_shape.train_frac = ts->train_frac;
        run_shape.none_seen_trained = ts->none_seen_trained;
        run_shape.patch_tokens = ts->patch_tokens, run_shape.dropout_on = ts->dropout_on;
        formula_take_block(&run_shape, ts);
        run_shape.checkpointing = ts->checkpointing;
        run_shape.A = ts->A;
        if (s.pos_rows && s.T > s.pos_rows) { /* a BERT's or GPT-2's table, from the trace */
            fprintf(stderr,
                    "vramtrace predict: %s %llu is past the traced model's position table "
                    "(%llu rows, from its weights)\n",
                    config_key_word(&c, CFG_block_size), (unsigned long long)s.T,
                    (unsigned long long)s.pos_rows);
            return VT_EXIT_USAGE;
        }
    }
    if (eight) {
        /* as the report's what-if (advice_candidates.c): a run whose AdamW the trace shows */
        if (!s.opt_set || s.generic || formula_opt_bpp(&s) < 2.0 * formula_param_bytes(&s) - 0.01) {
            fprintf(stderr,
                    "vramtrace predict: --optimizer adamw8bit with --from: the traced run's "
                    "optimizer is not one AdamW whose state the trace measured (8-bit AdamW "
                    "is predicted for such a run only)\n");
            return VT_EXIT_USAGE;
        }
        s.opt_set = 1, s.opt_bpp = 2.0;
        a.train.opt = PREDICT_OPT_ADAMW8BIT; /* (said in the heading and the JSON) */
    }
    model_calib cal;
    if (from) {
        run_shape.unfused_attention =
            formula_attention_unfused(&run_shape, run.measured.bytes[CAT_ATTENTION]);
        s.unfused_attention |= run_shape.unfused_attention;
        advice_calibrate(&cal, &run_shape, &run.measured, run.partial, run.cut);
        if (run.calib.calibrated)
            cal = run.calib;          /* the report's own model of the run */
        cal.lower = run.lower_bounds; /* (not in the calibration's JSON: the report's flag) */
        cal.unstepped = run.cut_unstepped;
    } else {
        advice_calib_default(&cal, &s);
    }
    if (formula_too_large(&s)) { /* (its rows would be held at 64 PiB, its sums wrap) */
        fprintf(stderr, "vramtrace predict: this configuration's bytes pass 64 PiB (2^56), beyond "
                        "any device: not predicted\n");
        return VT_EXIT_USAGE;
    }
    prediction p;
    advice_predict(&cal, &s, &p);
    uint64_t lb = a.have_card ? advice_largest_batch(&cal, &s, a.card.bytes, ADVICE_HEADROOM) : 0;
    run.largest_unpredicted =
        from && advice_largest_unpredicted(run.growth_unmeasured, run.partial, lb);
    if (run.largest_unpredicted)
        lb = 0;
    if (c.batch_per > 1) /* (a whole number of the flag's samples: model_batch_seen) */
        lb -= lb % (uint64_t)c.batch_per;
    if (mem_failed()) /* the run it came from lost something: no prediction (main says why) */
        return VT_EXIT_USAGE;
    run.retried = from && predict_run_as_ran(&run, &s, &cal.measured_shape, a.card.bytes);
    if (a.json)
        return print_json(&c, &s, &p, &a, lb, &cal, run.lower_bounds, run.largest_unpredicted,
                          run.retried, from ? run.params : 0, from ? run.unreached : "");
    print_text(&c, &s, &p, &a, lb, &cal, &run);
    return VT_EXIT_OK;
}
