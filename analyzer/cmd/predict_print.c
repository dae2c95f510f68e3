/* predict_print.c — what one prediction is of (the model, the step: each value none gave said
 * as such) and its breakdown, rows that add up (predict_print.h). */
#include "predict_print.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "advice_speak.h"
#include "bytes_sat.h"
#include "cards.h"
#include "escape.h"
#include "predict_train.h"

/* the categories that are tensors (the rest: the cache, and what lies outside PyTorch) */
static int outside(int k)
{
    return !category_tensor((category)k);
}

void predict_anchors(const prediction *p, int64_t *tensors, int64_t *rest)
{
    uint64_t rows = 0, out = 0;
    for (int k = 0; k < CAT_COUNT; k++)
        if (outside(k))
            out = bytes_add(out, p->by_cat.bytes[k]);
        else
            rows = bytes_add(rows, p->by_cat.bytes[k]);
    *tensors = bytes_diff(p->tensor_bytes, rows);
    *rest = bytes_diff(p->peak_bytes, bytes_add(p->tensor_bytes, out));
}

uint64_t predict_largest_tensor(const gpt_shape *s, const prediction *p, const model_calib *cal,
                                const char **what, uint64_t *eval_b)
{
    gpt_shape e = *s;
    *eval_b = p->moment == PREDICT_AT_EVALUATION ? cal->eval_batch : 0;
    if (*eval_b)
        e.B = *eval_b, e.A = 1;
    return formula_largest_tensor(&e, what);
}

/* anchor_row: one anchor as a row (nothing when 0) */
static void anchor_row(int64_t v, const char *why)
{
    char b[32], sb[40];
    if (!v)
        return;
    card_format_bytes((uint64_t)(v < 0 ? -v : v), b, sizeof b);
    snprintf(sb, sizeof sb, "%c%s", v < 0 ? '-' : '+', b);
    printf("  %-18s %12s  (%s)\n", "anchored to run", sb, why);
}

uint64_t predict_print_peak(const prediction *p, const model_calib *cal, const gpt_shape *s,
                            int lower)
{
    double own_share = 0; /* (a run out of memory: its own cache share, the floor's range) */
    uint64_t low = advice_own_cache(cal, s, p, &own_share);
    char ob[64] = "", oc[32], b1[32];
    if (low)
        snprintf(ob, sizeof ob, "%s to ", card_format_bytes(low, oc, sizeof oc));
    printf("peak: %s%s%s (as nvidia-smi would show the process%s", lower ? "at least " : "", ob,
           card_format_bytes(p->peak_bytes, b1, sizeof b1), low ? "; " : ")\n");
    if (low)
        printf("the first with the allocator cache at the %s%.1f %% of the tensors the run held "
               "when it ran out of memory, the second at the floor above)\n",
               own_share < 0.0005 ? "less than " : "",
               own_share < 0.0005 ? 0.1 : 100.0 * own_share);
    return low;
}

void predict_print_breakdown(const prediction *p, const model_calib *cal, int generic, int compile,
                             uint64_t kv, const char *kv_shape, const char *weights_doc)
{
    char b1[32];
    int64_t at, ar;
    predict_anchors(p, &at, &ar);
    /* (a failure before the step made them: its gradients and state are the step's to come) */
    int g_later =
            p->oom_state && p->by_cat.bytes[CAT_GRADIENTS] && !cal->oom_live.bytes[CAT_GRADIENTS],
        o_later =
            p->oom_state && p->by_cat.bytes[CAT_OPTIMIZER] && !cal->oom_live.bytes[CAT_OPTIMIZER];
    const char *rows = generic ? "these rows" : "the formula's rows";
    char why[160];
    if (g_later || o_later) /* (what the rows add, named: no row, no word) */
        printf("at the failure (what was live when the run ran out of memory, its batch-sized "
               "parts scaled with the micro-batch), and the %s its step makes later, which "
               "the run had not made yet:\n",
               !o_later   ? "gradients"
               : !g_later ? "optimizer state"
                          : "gradients and optimizer state");
    else
        printf("%s",
               p->oom_state ? "at the failure (what was live when the run ran out of memory, "
                              "its batch-sized parts scaled with the micro-batch):\n"
               : p->moment == PREDICT_AT_BACKWARD_END
                   ? "at the backward's end (the parameters, all their gradients, the "
                     "optimizer's state and a tied head's V x d gradient being added: larger "
                     "here than at the start of the loss backward; docs/formula.md §3):\n"
               : p->moment == PREDICT_AT_OPTIMIZER_STEP && cal->step_unreached
                   ? "at the optimizer step's peak, which the run never reached (the weights "
                     "it held, every trainable parameter's gradient, the optimizer's state, "
                     "and the gradient-sized temporaries of PyTorch's default foreach update, "
                     "which a fused one does not make; larger here than the forward's):\n"
               : p->moment == PREDICT_AT_OPTIMIZER_STEP
                   ? "at the optimizer step's peak (what the run measured there: the weights, "
                     "their gradients, the optimizer's state and temporaries, scaled with the "
                     "weights; larger here than the forward's end):\n"
               : p->moment == PREDICT_AT_MEASURED
                   ? "at the run's own peak, as it measured it (this is the run's configuration, "
                     "and the formula's moments come below what it held there):\n"
               : p->moment == PREDICT_AT_EVALUATION
                   ? "at the evaluation's peak (the pass with a batch of its own the run peaked "
                     "in, as it ran: the training micro-batch, accumulation and checkpointing "
                     "leave it as it is; its rows calibrated as if it were a step):\n"
               : generic
                   ? "at the step's peak (what the run measured, its batch-sized parts scaled "
                     "with the micro-batch):\n"
                   : "at the step's peak (start of the loss backward; refined formula, "
                     "docs/formula.md §3):\n");
    /* the backward's own tensors kept into the optimizer step (most of the peak's still live
     * there), or growing at a failure in the backward (advice_backward_kept): not scratch
     * (Opacus's per-sample gradients had been "made by backward, not a parameter gradient
     * (scratch)") */
    uint64_t bw_step = cal->step.bytes[CAT_BACKWARD], bw_peak = cal->measured.bytes[CAT_BACKWARD];
    int kept = advice_backward_kept(cal) || (bw_peak && bw_step >= bw_peak / 2);
    char data_doc[240], b2[32]; /* (a replay buffer among the inputs: no batch of them) */
    snprintf(data_doc, sizeof data_doc,
             "batches put on the device, and %s of data the program keeps there (storage its "
             "own line filled before training, a replay buffer: the same at any micro-batch)",
             card_format_bytes(cal->data, b2, sizeof b2));
    for (int k = 0; k < CAT_COUNT; k++) {
        if (!p->by_cat.bytes[k] || outside(k))
            continue;
        if (k == CAT_BACKWARD && kept) {
            printf("  %-18s %12s  made by backward, not a parameter's .grad, and kept %s "
                   "(per-sample gradients or the like, growing with the micro-batch: not "
                   "scratch)\n",
                   category_name((category)k), card_format_bytes(p->by_cat.bytes[k], b1, sizeof b1),
                   advice_backward_kept(cal) ? "while the backward ran"
                                             : "past the backward into the optimizer step");
            continue;
        }
        printf("  %-18s %12s  %s\n", category_name((category)k),
               card_format_bytes(p->by_cat.bytes[k], b1, sizeof b1),
               k == CAT_ACTIVATIONS && cal->measured_shape.no_training /* (no backward) */
                   ? "the forward's tensors in use (forwards only: none kept for a backward; a "
                     "KV cache among them where the model keeps one)"
                   : k == CAT_PARAMETERS && weights_doc ? weights_doc
                     : k == CAT_OPTIMIZER && cal->state_ctor
                         ? "the optimizer's state, made at its construction, before any step (as "
                           "torch.optim.Adagrad makes its sums)"
                     : k == CAT_UNKNOWN && cal->passes_kept
                         ? "what the step made after its backward passes of one forward (per-pass "
                           "copies of the gradients) and the request it failed: as the run held "
                           "them, at any micro-batch"
                     : k == CAT_INPUTS && cal->data ? data_doc
                                                    : category_doc((category)k));
    }
    snprintf(why, sizeof why,
             at < 0 ? "%s over-predict the run they are calibrated with: the tensors scaled to it"
                    : "the run measured more tensors than %s give it: added",
             rows);
    anchor_row(at, why);
    printf("  %-18s %12s  (≈ torch.cuda.max_memory_allocated)\n", "= tensors",
           card_format_bytes(p->tensor_bytes, b1, sizeof b1));
    printf("  %-18s %12s  (%.0f %% of tensors: %s)\n", category_name(CAT_CACHE),
           card_format_bytes(p->by_cat.bytes[CAT_CACHE], b1, sizeof b1),
           p->tensor_bytes ? 100.0 * (double)p->by_cat.bytes[CAT_CACHE] / (double)p->tensor_bytes
                           : 0,
           cal->lower ? "none counted: a lower bound (its fragmentation floor, 20 % eager, is "
                        "room the run may need beside)"
           : cal->calibrated
               ? (cal->unstepped ? "the fragmentation floor: " ADVICE_UNSTEPPED_TEXT
                                   ", so the cache it "
                                   "held then is not a measure of what its step needs"
                  : cal->partial && cal->went_on
                      ? "the fragmentation floor: the run ran out of memory (the program caught "
                        "it and went on), which squeezed its cache then, so what it held is not "
                        "a measure of what it needs"
                  : cal->partial
                      ? "the fragmentation floor: the run ended in an OOM, which squeezed its "
                        "cache, so what it held then is not a measure of what it needs"
                  : cal->later_cache_fraction >= 0
                      ? "a later step's share: the run's one step taken again through the "
                        "caching allocator's rules, the state it made kept"
                      : "the share the run measured")
           : compile ? "assumed fragmentation room, compiled"
                     : "assumed fragmentation room, eager");
    for (int k = CAT_CONTEXT; k <= CAT_EXTERNAL; k++)
        if (k != CAT_CACHE && p->by_cat.bytes[k])
            printf("  %-18s %12s  (%s)\n", category_name((category)k),
                   card_format_bytes(p->by_cat.bytes[k], b1, sizeof b1),
                   cal->calibrated ? "as measured" : "assumed, lazy kernel loading");
    snprintf(why, sizeof why,
             ar <= 0      ? "scaled with the tensors to the run"
             : cal->lower ? "what the run held beyond %s at its measured moment, the allocator "
                            "cache then among it: added"
                          : "the run measured more than %s give it: added",
             rows);
    anchor_row(ar, why);
    if (kv)
        printf("  (not counted: transformers keeps a KV cache in training unless "
               "use_cache=False, a key and a value a block (%s): %s more)\n",
               kv_shape, card_format_bytes(kv, b1, sizeof b1));
}

/* unset: what to say after k's value when it is nanoGPT's default that nothing gave and the
 * program is not nanoGPT (foreign), else "" */
static const char *unset(const nano_config *c, int foreign, config_key k, const char *say)
{
    return foreign && c->v[k].src == CONFIG_SRC_DEFAULT ? say : "";
}

/* setting: key k (an integer) at value v as the heading says it: nanoGPT's "key value" for
 * nanoGPT (its config keys); for another program its own flag as its command line takes it
 * ("--seq-len 512", "--seq_len=512"; a keyword of its call, "per_device_train_batch_size=16"),
 * else the words for any program ("tokens per sample T 512"), into buf; the flag (the trace's
 * bytes) escaped */
static const char *setting(const nano_config *c, config_key k, unsigned long long v, char *buf,
                           size_t n)
{
    const config_value *cv = &c->v[k];
    char f[sizeof cv->flag * 4];
    if (c->program == PROG_NANOGPT)
        snprintf(buf, n, "%s %llu", config_key_name(k), v);
    else if (cv->flag[0]) {
        escape_term(cv->flag, strlen(cv->flag), f, sizeof f);
        snprintf(buf, n, "%s%s%llu", f, cv->flag_sep == ' ' ? " " : "=", v);
    } else
        snprintf(buf, n, "%s %llu", config_key_label(k), v);
    return buf;
}

/* say_defaults: the keys of nanoGPT's configuration that nothing gave (predict without a
 * trace takes nanoGPT train.py's defaults for them): named, so that no value reads as the
 * user's (gradient accumulation is said on the step's line) */
static void say_defaults(const nano_config *c)
{
    char line[256] = "";
    size_t n = 0;
    for (int k = 0; k < CFG_COUNT && n < sizeof line; k++)
        if (k != CFG_gradient_accumulation_steps && c->v[k].src == CONFIG_SRC_DEFAULT)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", n ? ", " : "",
                                  config_key_name((config_key)k));
    if (n)
        printf("not given, nanoGPT train.py's defaults: %s\n", line);
}

const nano_config *predict_config_said(const nano_config *c, const gpt_shape *s, int from)
{
    static nano_config said; /* (large: not on the stack) */
    said = *c;
    config_value *acc = &said.v[CFG_gradient_accumulation_steps];
    if (s->accum_unknown && !from && acc->src == CONFIG_SRC_DEFAULT) {
        acc->src = CONFIG_SRC_UNKNOWN;
        snprintf(acc->where, sizeof acc->where,
                 "not given (--grad-accum N): the peak assumes more than one micro-step, a step's "
                 "gradients kept through the next forward");
    }
    return &said;
}

void predict_print_heading(const nano_config *c, const gpt_shape *s, const char *from,
                           const char *trace_model, int frac_how, uint64_t trainable,
                           const char *trained)
{
    int frac_assumed = frac_how == PREDICT_FRAC_ASSUMED;
    uint64_t P = formula_params_exact(s);
    char dt[48], dr[24] = "unknown"; /* a trace may not give the dropout */
    config_value_text(c, CFG_dtype, dt, sizeof dt);
    /* nanoGPT's defaults are not another program's settings: a value none gave is said as such */
    int foreign = !from && (c->program != PROG_NANOGPT || s->gated);
    const char *tguess =
        unset(c, foreign, CFG_block_size, " (not given: --block-size for your sequence)");
    const char *bw = c->v[CFG_block_size].where;   /* "config.json: n_positions" */
    config_source bsrc = c->v[CFG_block_size].src; /* (a file's, or a --model preset's) */
    int table =
        !trace_model[0] &&
        (bsrc == CONFIG_SRC_FILE || (bsrc == CONFIG_SRC_FLAG && !strncmp(bw, "--model ", 8))) &&
        (strstr(bw, ": max_position_embeddings") || strstr(bw, ": n_positions"));
    snprintf(dt + strlen(dt), sizeof dt - strlen(dt), "%s",
             unset(c, foreign, CFG_dtype, " (not given: --dtype)"));
    /* nanoGPT's keys for nanoGPT; for another program its flags, else words for any program */
    int nano = c->program == PROG_NANOGPT;
    char bs[400], comp[48], sa[320], sl[320], sd[320], st[320], sv[320];
    snprintf(bs, sizeof bs, "%s%s", setting(c, CFG_batch_size, s->B, sa, sizeof sa),
             unset(c, foreign, CFG_batch_size, " (not given: --batch-size)"));
    snprintf(comp, sizeof comp, "%s %s%s", nano ? "compile" : config_key_label(CFG_compile),
             s->compile ? "True" : "False",
             unset(c, foreign, CFG_compile, " (not given: --compile)"));
    setting(c, CFG_gradient_accumulation_steps, s->A, sa, sizeof sa);
    setting(c, CFG_n_layer, s->L, sl, sizeof sl);
    setting(c, CFG_n_embd, s->d, sd, sizeof sd);
    setting(c, CFG_block_size, s->T, st, sizeof st);
    setting(c, CFG_vocab_size, s->V, sv, sizeof sv);
    if (config_known(c, CFG_dropout))
        snprintf(dr, sizeof dr, "%g", s->dropout);
    if (s->generic) {
        printf("model: %s: the transformer formulas do not apply; predictions scale what the run "
               "measured with the micro-batch\n",
               trace_model[0] ? trace_model : "not a recognized transformer");
        if (s->no_training) /* no step: a batch of forwards */
            printf("forwards only: a batch of %llu (no backward, no optimizer step)\n\n",
                   (unsigned long long)s->B);
        else if (s->accum_unknown) /* the run's, or a what-if's: said as given */
            printf("step: micro-batch %llu, gradient accumulation not known\n\n",
                   (unsigned long long)s->B);
        else if (c->program == PROG_NANOGPT)
            printf("step: micro-batch %llu, gradient_accumulation_steps %llu\n\n",
                   (unsigned long long)s->B, (unsigned long long)s->A);
        else
            printf("step: micro-batch %llu, %llu accumulation step%s\n\n", (unsigned long long)s->B,
                   (unsigned long long)s->A, s->A == 1 ? "" : "s");
    } else if (s->gated) {
        char kv[80] = ""; /* grouped-query attention: its key / value width; biases */
        if (formula_kv_grouped(s))
            snprintf(kv, sizeof kv, ", key / value width %llu", (unsigned long long)s->kv);
        if (s->attn_bias) /* counted as parameters */
            snprintf(kv + strlen(kv), sizeof kv - strlen(kv), ", biases on q, k, v%s",
                     s->attn_bias == 4 ? ", o" : "");
        printf("%s, gated blocks: %.2f M parameters (%s, %s, MLP width %llu%s, %s%s, %s, %s "
               "head)\n",
               trace_model[0] ? trace_model : "a gated-MLP decoder", P / 1e6, sl, sd,
               (unsigned long long)s->I, kv, st, tguess, sv, s->untied ? "untied" : "tied");
    } else {
        char h[400], hn[160], he[320]; /* a trace that does not give the heads */
        if (s->H) {
            setting(c, CFG_n_head, s->H, h, sizeof h);
        } else { /* (escaped: the program's flag) */
            const char *name = config_key_said(c, CFG_n_head, hn, sizeof hn);
            escape_term(name, strlen(name), he, sizeof he);
            snprintf(h, sizeof h, "%s unknown", he);
        }
        char v[800]; /* a vision transformer's T counts patches; it has no vocabulary */
        if (s->patch_tokens)
            snprintf(v, sizeof v, "patch tokens %llu", (unsigned long long)s->T);
        else /* (a config.json's position table as the sequence: BERT's, a short GPT-2's) */
            snprintf(v, sizeof v, "%s%s%s%s, %s", st, table ? " (its " : tguess,
                     !table                       ? ""
                     : !s->bert                   ? "n_positions"
                     : strstr(bw, "padding rows") ? "max_position_embeddings less its padding rows"
                                                  : "max_position_embeddings",
                     table ? ": --block-size for your sequence)" : "", sv);
        /* from a trace, what was trained first: the formula is GPT-2's block of its shape, or
         * BERT's masked-LM model where the trace gave its tables */
        printf("%s%s%s%s: %.2f M parameters (%s, %s, %s, %s, bias %s)\n",
               trace_model[0] ? trace_model : "", trace_model[0] ? "; the formula's " : "",
               trace_model[0] ? (s->bert && s->pos_rows ? "BERT masked-LM model" : "GPT blocks")
               : s->hf_gpt2   ? "transformers' GPT-2 (GPT2LMHeadModel's block)"
               : s->bert == 2 ? "RoBERTa (RobertaForMaskedLM: post-LayerNorm encoder blocks, a "
                                "masked-LM head)"
               : s->bert      ? "BERT (BertForMaskedLM: post-LayerNorm encoder blocks, a masked-LM "
                                "head)"
                              : "GPT",
               trace_model[0] ? " of its shape" : "", P / 1e6, sl, h, sd, v,
               s->bias ? "True" : "False");
        if (s->bert && s->pos_rows && !formula_bert_block(s))
            printf("note: BERT's block is measured in eager 16-bit autocast only: here (float32, "
                   "or compiled) the formula's activations are GPT-2's block of the same shape\n");
    }
    /* the run's own count at its own shape (a LoRA's adapters are beside the formula's P: its
     * share of it had said 3.12 M for the program's 3,145,728) */
    double tp = trainable && !frac_assumed ? (double)trainable : P * s->train_frac;
    predict_train_share(s, tp, frac_how); /* (LoRA, frozen layers: the share trained) */
    if (!from && !foreign && !s->generic)
        say_defaults(c);
    if (trained && trained[0]) /* predict's --lora-rank, --optimizer: what was given */
        printf("%s", trained);
    if (s->generic)
        ;
    else if (s->no_training)
        printf("forwards only: %s (no backward, no optimizer step), %s, %s, dropout %s\n\n", bs, dt,
               comp, dr);
    else if (s->accum_unknown && !from)
        printf("step: %s, gradient accumulation not given (--grad-accum N): the effective batch "
               "is %s times your accumulation steps, and the peak assumes more than one (a "
               "step's gradients kept through the next forward; --grad-accum 1 if you do not "
               "accumulate), %s, %s, dropout %s\n\n",
               bs, nano ? "batch_size" : "the micro-batch", dt, comp, dr);
    else if (s->accum_unknown)
        printf("step: %s, gradient accumulation not known (no argument or recorded file gave it, "
               "no optimizer step showed it; the formula assumes %llu steps), %s, %s, dropout "
               "%s\n\n",
               bs, (unsigned long long)s->A, dt, comp, dr);
    else
        printf("step: %s, %s (effective batch %llu), %s, %s, dropout %s\n\n", bs, sa,
               (unsigned long long)(s->B * s->A), dt, comp, dr);
}

int predict_batch_assumed(const nano_config *c, const gpt_shape *s, int from)
{
    /* (a BERT's config.json had been told "micro-batch 12 as it is", nanoGPT's default) */
    return !from && (c->program != PROG_NANOGPT || s->gated) &&
           c->v[CFG_batch_size].src == CONFIG_SRC_DEFAULT && !s->no_training;
}

void predict_print_recommended(const nano_config *c, const gpt_shape *s, const gpt_shape *base,
                               const char *mb, int nano, int from, int found, uint64_t rb,
                               uint64_t ra, int unmeasured, uint64_t lb, uint64_t floor,
                               const char *targs, uint64_t cache1)
{
    char flags[sizeof((advice_item *)0)->cmdline];    /* (as the report's what-ifs) */
    if (found && predict_batch_assumed(c, s, from)) { /* (nothing to keep or change of yours) */
        printf("recommended: none from a micro-batch none gave (%llu assumed): --batch-size N "
               "predicts yours; the largest that fits is above\n",
               (unsigned long long)s->B);
    } else if (found) {
        advice_batch_flags(c, base, rb, ra, targs, flags, sizeof flags);
        /* in parentheses, unless the code change is its own: "(code change: ...)" */
        const char *op = !flags[0]         ? ""
                         : flags[0] == '(' ? "  "
                                           : "  (",
                   *cl = !flags[0] || flags[0] == '(' ? "" : ")";
        if (s->accum_unknown && rb == s->B && !s->no_training)
            printf("recommended: micro-batch %llu as it is%s%s%s, your accumulation steps "
                   "unchanged\n",
                   (unsigned long long)rb, op, flags, cl);
        else if (s->no_training) /* forwards only: the largest batch that fits (as the report) */
            printf(rb == s->B ? "recommended: this configuration as it is (a %s of %llu)%s%s%s\n"
                              : "recommended: a %s of %llu (the same outputs, in more forward "
                                "passes)%s%s%s\n",
                   mb, (unsigned long long)rb, op, flags, cl);
        else if (s->accum_unknown)
            printf("recommended, keeping the effective batch: micro-batch %llu \u2192 %llu, "
                   "%llu\u00d7 the accumulation steps%s%s%s\n",
                   (unsigned long long)s->B, (unsigned long long)rb,
                   (unsigned long long)(s->B / rb), op, flags,
                   !flags[0] ? ""
                   : from    ? ", and the program's accumulation times that)"
                             : ", and your accumulation steps times that)");
        else if (rb == s->B) /* it fits as it is: no change to recommend (as the report) */
            printf(nano ? "recommended: this configuration as it is (batch_size=%llu, "
                          "gradient_accumulation_steps=%llu%s)%s%s%s\n"
                        : "recommended: this configuration as it is (micro-batch %llu, %llu "
                          "accumulation step%s)%s%s%s\n",
                   (unsigned long long)rb, (unsigned long long)ra, ra == 1 || nano ? "" : "s", op,
                   flags, cl);
        else if (nano)
            printf("recommended, keeping the effective batch %llu: batch_size=%llu, "
                   "gradient_accumulation_steps=%llu%s%s%s\n",
                   (unsigned long long)(rb * ra), (unsigned long long)rb, (unsigned long long)ra,
                   op, flags, cl);
        else
            printf("recommended, keeping the effective batch %llu: micro-batch %llu, %llu "
                   "accumulation step%s%s%s%s\n",
                   (unsigned long long)(rb * ra), (unsigned long long)rb, (unsigned long long)ra,
                   ra == 1 ? "" : "s", op, flags, cl);
    } else if (unmeasured) {
        return;      /* (what a smaller micro-batch needs is not measured either) */
    } else if (lb) { /* (a Llama 400M at B=8 had been told "largest ... fits: 1", then "not even
                      * a micro-batch of 1 fits") */
        printf("recommended: none keeps the effective batch %llu: no smaller %s that divides it "
               "fits with the accumulation steps that make it up%s; the largest %s above fits "
               "with a smaller effective batch\n",
               (unsigned long long)(s->B * s->A), mb,
               s->A == 1 && !s->no_training
                   ? " (accumulating keeps the gradients through each micro-step's forward)"
                   : "",
               mb);
    } else if (floor) { /* (a Llama 400M's optimizer step on 6 GiB had been told to shorten its
                         * inputs or checkpoint, which its own what-ifs said change nothing) */
        char b[32], one[48] = "batch_size=1";
        if (!nano)
            snprintf(one, sizeof one, "a %s of 1", mb);
        /* (checkpointing only where it is off: a Llama with it on had been told "nor would
         * ... activation checkpointing") */
        printf("not even %s fits, nor would shorter inputs%s: the weights, their gradients and "
               "the optimizer's state, with the allocator cache and the CUDA context, need %s at "
               "the least: use a smaller model, fewer trained weights (LoRA, frozen layers)%s\n",
               one, s->checkpointing ? "" : " or activation checkpointing",
               card_format_bytes(floor, b, sizeof b),
               formula_opt_bpp(s) > 0 ? " or an optimizer with less state" : "");
    }
    if (floor || found || unmeasured || lb)
        return;
    /* (where the cache decides at 1, said so: a sequence-length warm-up's --batch_size 4 run out
     * of memory had been told "not even a micro-batch of 1 fits: use a smaller model" flat, where
     * 1 and 2 run with less cache than the floor an OOM run is given) */
    char c1[128] = "", b[32];
    if (cache1)
        snprintf(c1, sizeof c1,
                 " with the allocator cache assumed (with at most %s of it, it would: vramtrace "
                 "fit measures)",
                 card_format_bytes(cache1, b, sizeof b));
    if (nano) /* (checkpointing only where it is off: it had been told with it on) */
        printf("not even batch_size=1 fits%s: use a smaller model%s a shorter block_size%s\n", c1,
               s->checkpointing ? " or" : ",",
               s->checkpointing ? "" : " or activation checkpointing");
    else /* what shortens the input is the program's own (a sequence, an image size) */
        printf("not even a %s of 1 fits%s: use a smaller model%s smaller inputs (shorter "
               "sequences, smaller images)%s\n",
               mb, c1, s->checkpointing ? " or" : ",",
               s->checkpointing ? "" : " or activation checkpointing");
}

void predict_print_calibration(const char *from, const model_calib *cal, int generic)
{
    if (cal->calibrated && generic) {
        printf("calibrated with %s (what the run measured%s)\n", from,
               cal->unstepped ? "; its trace ends with no optimizer step seen: its step "
                                "would have kept at least that"
               : cal->partial ? "; it ended in an OOM: its step would have kept at least that"
                              : "");
    } else if (cal->calibrated) {
        printf("calibrated with %s (measured / refined formula:", from);
        for (int k = 0; k < CAT_COUNT; k++)
            if (cal->measured.bytes[k] && cal->refined.bytes[k] &&
                !advice_after_forward_gone(cal, (category)k))
                printf(" %s %.2f", category_name((category)k), cal->ratio[k]);
        /* (its peak after its forward's tensors were freed: those fitted over the run) */
        const char *sep = "; its peak came after its forward's tensors were freed, so their "
                          "largest over the run / refined formula:";
        for (int k = 0; k < CAT_COUNT; k++)
            if (cal->refined.bytes[k] && k != CAT_GRADIENTS &&
                advice_after_forward_gone(cal, (category)k)) {
                printf("%s %s %.2f", sep, category_name((category)k), cal->ratio[k]);
                sep = "";
            }
        /* (a ratio below 1 in a partial calibration: the activations of a first forward that
         * ran every block before the OOM, model_trace.c) */
        printf("%s)\n", !cal->partial    ? ""
                        : cal->unstepped ? "; its trace ends with no optimizer step seen, "
                                           "ratios below 1 not trusted"
                        : cal->went_on   ? "; the run ran out of memory (the program caught it and "
                                           "went on), ratios below 1 not trusted"
                        : cal->oom_later ? "; the run ended in an OOM after the moment measured "
                                           "had ended (in a later micro-batch or step): ratios "
                                           "as measured"
                        : cal->ratio[CAT_ACTIVATIONS] < 1.0
                            ? "; the run ended in an OOM, ratios below 1 "
                              "not trusted but the activations': its "
                              "forward had run every block"
                            : "; the run ended in an OOM, ratios below 1 "
                              "not trusted");
    }
}

/* predict_print_note: "  (note)", escaped (the report's words may name the trace's modules and
 * files); nothing for "" */
void predict_print_note(const char *note)
{
    if (!note[0])
        return;
    fputs("  (", stdout);
    escape_term_fputs(stdout, note, strlen(note));
    fputs(")\n", stdout);
}

/* predict_json_formula_lines: the largest tensor and the documents' basic formula, as the text's
 * two lines (only where a formula applies) */
void predict_json_formula_lines(cJSON *root, const gpt_shape *s, const prediction *p,
                                const model_calib *cal)
{
    const char *what = NULL;
    uint64_t eb, big = predict_largest_tensor(s, p, cal, &what, &eb);
    cJSON *lt = cJSON_AddObjectToObject(root, "largest_tensor");
    cJSON_AddNumberToObject(lt, "bytes", (double)big);
    if (eb) /* (at the evaluation's own batch) */
        cJSON_AddNumberToObject(lt, "batch_size", (double)eb);
    cJSON_AddStringToObject(lt, "what", what);
    doc_formula d;
    formula_documents(s, &d);
    cJSON *dj = cJSON_AddObjectToObject(root, "documents");
    cJSON_AddNumberToObject(dj, "parameters_estimate", (double)d.params_estimate);
    cJSON_AddNumberToObject(dj, "parameter_bytes", (double)d.param_bytes);
    cJSON_AddNumberToObject(dj, "gradient_bytes", (double)d.grad_bytes);
    cJSON_AddNumberToObject(dj, "optimizer_bytes", (double)d.optimizer_bytes);
    cJSON_AddNumberToObject(dj, "activation_bytes_x24", (double)d.act_bytes_basic);
    cJSON_AddNumberToObject(dj, "activation_bytes_x160", (double)d.act_bytes_empirical);
    cJSON_AddNumberToObject(dj, "attention_bytes_per_layer", (double)d.attn_bytes_per_layer);
}
