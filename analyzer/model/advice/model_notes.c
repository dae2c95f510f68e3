/* model_notes.c — what the advice rests on, said once for every view (model_result.notes):
 * a tight fit, a step whose state the next step holds, forwards only, no formula, what is
 * assumed of the accumulation and the optimizer (the kinds a script constructs), LoRA, a peak
 * in an evaluation pass (with the flag that sets its batch); and that evaluation's own batch,
 * which the calibration keeps (model_eval_batch). Called by model.c once the advice is made. */
#include "model_notes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "advice_speak.h"
#include "config.h"
#include "formula.h"
#include "model_oom.h"
#include "namewords.h"

/* peak_in_eval: a training run's tensors peaked in an evaluation pass (measured there) */
int model_peak_in_eval(const model_result *m, const run_facts *f)
{
    return f->peak_phase && !strcmp(f->peak_phase, "eval") && f->backward_passes > 0 &&
           m->measured_at_tensors;
}

/* model_names_evaluation: one of key's words (split at '_' and '-') names an evaluation, a
 * sampling or a generation in any of its forms (namewords.h: --val_batch_size, Lightning
 * scripts' spelling, had gone unread: "val" is no "eval"; not "interval", a word of its own) */
int model_names_evaluation(const char *key)
{
    return (namewords_kinds(key, strlen(key), "_-", 1) & (NW_EVAL | NW_SAMPLE | NW_GEN)) != 0;
}

/* eval_batch_flag: the evaluation's own batch on the traced command line (--eval-batch-size 16,
 * --per_device_eval_batch_size=8, --val_batch_size 32: a flag naming both), its flag in flag; 0
 * when none */
uint64_t model_eval_batch_flag(const run_facts *f, char *flag, size_t len)
{
    for (int i = 1; f->argv && i < f->argc; i++) {
        char key[64];
        const char *a = f->argv[i], *v = config_arg_key(a, key, sizeof key);
        /* (not a count of batches: --max_eval_batches 200) */
        if (strncmp(a, "--", 2) || !model_names_evaluation(key) || !strstr(key, "batch") ||
            strstr(key, "batches"))
            continue;
        if (!v && !(v = i + 1 < f->argc ? f->argv[i + 1] : NULL))
            continue;
        char *end;
        unsigned long long b = strtoull(v, &end, 10);
        if (end == v || *end || !b)
            continue;
        size_t k = strcspn(a, "=");
        snprintf(flag, len, "%.*s %llu", (int)(k < 48 ? k : 48), a, b);
        return b;
    }
    return 0;
}

void model_eval_calib(model_result *m, const run_facts *f)
{
    model_calib *c = &m->calib;
    c->eval_batch = m->eval_batch;
    snprintf(c->eval_flag, sizeof c->eval_flag, "%s", m->eval_flag);
    /* out of memory in such a pass, its tensors' peak in training: a smaller micro-batch leaves
     * that pass as it is too (a GPT-2 at B=4 evaluating 32 had been recommended B=2 with 2
     * micro-steps, "fits", and its evaluation ran out of memory again) */
    int failed = f->has_oom && f->oom_phase && !strcmp(f->oom_phase, "eval");
    if (!c->eval_batch && failed && f->backward_passes > 0)
        c->eval_batch = model_eval_batch_flag(f, c->eval_flag, sizeof c->eval_flag);
    if (!c->eval_batch && failed && f->oom_step_pass && f->step_pass_batch) /* (a rollout's) */
        c->eval_batch = f->step_pass_batch,
        snprintf(c->eval_flag, sizeof c->eval_flag, "%s", f->step_pass_flag);
    /* ... whose need past the failed request is not measured: lower bounds (use_cache=False
     * beside that GPT-2's evaluation had been recommended at 11.30 GiB, "fits"; it ran out of
     * memory again) */
    if (c->eval_batch && failed)
        c->eval_cut = c->lower = m->lower_bounds = 1;
    /* (the pass its batch is of: a rollout's, whatever its flag's words; a --gen_batch_size had
     * been told "the training as it ran, its evaluation's results the same") */
    c->eval_feeds = c->eval_batch && (m->eval_batch ? f->peak_step_pass : f->oom_step_pass);
    /* not an evaluation cut short by an out-of-memory failure: what it would have made after
     * the request that failed is not measured, so its batch-sized bytes scaled are no bound (a
     * GPT-2 evaluating 48 beside a micro-batch of 2 had been told 48 -> 17 at 11.14 GiB, "an
     * upper bound"; its run at 17 took 11.55 after a retry) */
    if (!c->eval_batch || !f->has_at_tensors || !c->calibrated || c->global || failed)
        return;
    /* the training measured through one optimizer step: its later forwards hold the state too */
    uint64_t state = f->iterations <= 1 && f->has_at_step ? f->at_step.bytes[CAT_OPTIMIZER] : 0;
    advice_eval_calibrate(c, &f->at_tensors, f->peak_train, state);
}

void model_caught(model_result *m, const run_facts *f)
{
    if (f->caught_peak && !f->has_oom)
        m->lower_bounds = m->calib.lower = 1;
}

/* model_beside_unused: the formula's what-ifs beside a second model the first forward had not
 * used when it died (recognize's beside_unused: a teacher run after the student) take that model
 * as frozen and count nothing of its forward, not reached: lower bounds (said in the notes).
 * Without a formula the first forward's note says so already. */
void model_beside_unused(model_result *m, const run_facts *f)
{
    (void)f;
    if (m->formula_ok && !m->shape.generic && m->rec.beside_unused)
        m->lower_bounds = m->calib.lower = 1;
}

void model_measured_at_oom(model_result *m, const run_facts *f)
{
    if (f->has_oom && f->oom_first_batch && cat_breakdown_total(&f->at_oom) > 0) {
        /* the run's OOM came at a later attempt's batch (the configuration: the inference's B
         * became it), its peaks at the first forward's: what the attempt that failed held is
         * the measurement of that configuration (the peak's, of another batch, had been
         * compared with its formula: "activations 1.56x the refined formula") */
        m->measured = f->at_oom;
        m->measured_at_tensors = 0;
        m->measured_at_oom = 1;
    }
}

void model_went_on(model_result *m, const run_facts *f)
{
    model_calib *c = &m->calib;
    if (!f->oom_went_on || !f->went_on_batch || f->went_on_batch >= m->shape.B ||
        !f->went_on_tensors || !f->went_on_steps || m->shape.no_training)
        return;
    c->went_on_B = f->went_on_batch;
    c->went_on_tensors = f->went_on_tensors;
    c->went_on_process = f->went_on_process;
    c->went_on_reserved = f->went_on_reserved;
    c->went_on_unused = f->went_on_unused;
    c->went_on_steps = f->went_on_steps;
}

void model_cut_unstepped(model_result *m, const run_facts *f)
{
    if (!m->cut_unstepped)
        return;
    /* (the backward passes a trace of tensors shows; segments show those that grew the cache) */
    char where[80] = "";
    if (f->tensor_mode && f->backward_passes)
        snprintf(where, sizeof where, ", after %d backward pass%s", f->backward_passes,
                 f->backward_passes == 1 ? "" : "es");
    else if (f->tensor_mode)
        snprintf(where, sizeof where, ", before its first backward pass");
    /* with a formula it tells the rest: never scaled below the run (m->cut); without one the
     * what-ifs scale what was alive, and the rest of the step is not known (a simulated GPT-2 at
     * B=16 whose trace was cut in its first forward had been told it "fits" at the 11.22 GiB
     * measured so far; the whole run ran out of 12 GiB) */
    int generic = m->shape.generic;
    snprintf(m->oom_forward, sizeof m->oom_forward,
             ADVICE_UNSTEPPED_TEXT " and no out-of-memory error%s (%s): %s", where,
             advice_cut_why(f->stopped),
             generic ? "what-ifs scale what was alive until then; the rest of its step was not "
                       "measured, so they are lower bounds, and none is recommended (vramtrace "
                       "fit measures)"
                     : "what it measured is a step cut short, so the predictions take the "
                       "formula's bytes wherever the run had not reached them");
    if (generic)
        m->lower_bounds = m->calib.lower = 1;
}

/* note: one more sentence the advice rests on (m->notes). */
static void note(model_result *m, const char *text)
{
    if (m->nnotes < (int)(sizeof m->notes / sizeof m->notes[0]))
        snprintf(m->notes[m->nnotes++], sizeof m->notes[0], "%s", text);
}

/* model_advice_notes: what the predictions assume or how certain they are, said once for every
 * view. */
void model_advice_notes(model_result *m, const run_facts *f)
{
    char t[800]; /* (a note made of parts; predict_from.h optim_note holds as many) */
    /* the run's need as a range where its cache is the floor assumed (said first: the headline's
     * two numbers; a DLRM's "needs ~19.72 GiB" had been 16.55 on a larger card) */
    m->current_own = advice_own_cache(&m->calib, &m->shape, &m->current, &m->own_share);
    if (m->current_own) {
        const prediction *p = &m->current;
        double pct = 100.0 * (double)p->by_cat.bytes[CAT_CACHE] / (double)p->tensor_bytes;
        char ifs[48] = "";
        if (m->nitems)
            snprintf(ifs, sizeof ifs, "; the what-ifs count the %.0f %%", pct);
        snprintf(t, sizeof t,
                 "%.2f GiB with the allocator cache at the %s%.1f %% of the tensors this run held "
                 "when it ran out of memory, %.2f GiB with %.0f %%, the room for fragmentation %s "
                 "can need: a run out of memory does not measure its cache (the failure squeezes "
                 "it), so where between them its need falls is not known%s",
                 (double)m->current_own / 1073741824.0, m->own_share < 0.0005 ? "less than " : "",
                 m->own_share < 0.0005 ? 0.1 : 100.0 * m->own_share,
                 (double)p->peak_bytes / 1073741824.0, pct,
                 m->calib.expandable ? "a run with expandable segments"
                 : m->shape.compile  ? "a compiled run"
                                     : "an eager run",
                 ifs);
        note(m, t);
    }
    if (model_token_lever(m, f, t, sizeof t)) /* (--max-tokens: named, no value predicted) */
        note(m, t);
    /* the largest with the cache share this run measured, beside the largest that counts the room
     * for fragmentation above the run's micro-batch (model.h largest_own), at model.c's shape */
    gpt_shape steady = m->shape;
    steady.iteration0 = 0;
    steady.accum_unknown = !m->shape.no_training && advice_accum_unknown(&m->cfg);
    if (!m->largest_unpredicted && config_known(&m->cfg, CFG_batch_size))
        m->largest_own = advice_largest_own(&m->calib, &steady, m->largest_batch, m->capacity,
                                            ADVICE_HEADROOM, &m->largest_own_share);
    if (m->cfg.batch_per > 1) /* (a whole number of the flag's samples, as the largest) */
        m->largest_own -= m->largest_own % (uint64_t)m->cfg.batch_per;
    if (m->largest_own <= m->largest_batch)
        m->largest_own = 0;
    if (f->caught_peak) {
        snprintf(t, sizeof t,
                 "the peak measured came in a pass an out-of-memory error cut short at %.3f s (a "
                 "request of %.1f MiB), which the program caught and went on from: what that pass "
                 "would have made past it is not measured, so the predictions from it are lower "
                 "bounds",
                 (double)f->caught_ns / 1e9, (double)f->caught_request / 1048576.0);
        note(m, t);
    }
    if (m->rec.beside_unused && !m->shape.generic && m->formula_ok)
        note(m, "a second model beside the one trained had mostly not been cast by autocast "
                "when the run died in its first forward (as a teacher run after the student): "
                "its weights are taken as frozen and what its forward adds is not counted, so "
                "the predictions are lower bounds");
    if (m->calib.went_on_B) {
        char cap[48] = "";
        if (m->capacity)
            snprintf(cap, sizeof cap, ", %.0f %% of the card",
                     100.0 * (double)f->went_on_process / (double)m->capacity);
        /* (the failed attempt's cache its steps never used: advice_floors.c went_on_anchor) */
        const model_calib *c = &m->calib;
        int unused = c->went_on_unused && c->went_on_reserved > c->went_on_unused &&
                     c->went_on_reserved - c->went_on_unused > c->went_on_tensors;
        char un[160] = "";
        if (unused)
            snprintf(un, sizeof un,
                     ", %.2f GiB of it segments of the attempt that failed, which its steps never "
                     "used",
                     (double)c->went_on_unused / 1073741824.0);
        snprintf(t, sizeof t,
                 "the program went on at %s %llu after the error it caught and ran %d optimizer "
                 "step%s there: its tensors peaked at %.2f GiB, the process held %.2f GiB%s%s; "
                 "the what-ifs at %llu are that measurement%s with the allocator cache %s (never "
                 "more than the process held), a smaller %s no more, a larger no less",
                 model_batch_word(m), (unsigned long long)m->calib.went_on_B, f->went_on_steps,
                 f->went_on_steps == 1 ? "" : "s", (double)f->went_on_tensors / 1073741824.0,
                 (double)f->went_on_process / 1073741824.0, cap, un,
                 (unsigned long long)m->calib.went_on_B,
                 f->went_on_steps < 2 ? " and the optimizer's state a later step holds" : "",
                 unused ? "in the share its steps used, the segments they never used left out"
                        : "assumed",
                 model_batch_word(m));
        note(m, t);
    }
    if (m->tight) {
        snprintf(t, sizeof t,
                 "the run completed on this card with less than " ADVICE_HEADROOM_PCT_TEXT
                 " %% free%s: it fits, tightly (the row \"none\" says so); the other options "
                 "that fit add margin",
                 f->oom_recovered ? ", after " ADVICE_RETRY_TEXT : "");
        note(m, t);
    }
#define NEXT_STEP                                                                                  \
    "the run's one optimizer step made the optimizer's state after its forward: a second step's "  \
    "forward holds that state too, which this run did not reach; the predictions are of such a "   \
    "step, "
    if (m->next_step_grows) /* (its cache: the step taken again, or not measured) */
        note(m, m->second_step
                    ? NEXT_STEP "its allocator cache the one the run's step taken again through "
                                "PyTorch's caching allocator reserves, the state kept (its default "
                                "rules, under which the run's own step reserved what it did)"
                    : NEXT_STEP "whose allocator cache the run did not measure (the state is made "
                                "in blocks its forward's activations had): " ADVICE_LATER_STEP
                                " (measure it: vramtrace fit)");
#undef NEXT_STEP
    /* backward passes and no optimizer step, and no out-of-memory error to say why (a program
     * that exits, or stops, before its first step): its training needs the state it never made
     * (a Llama 160M at B=4 with 2 accumulation steps had been told "needs ~6.69 GiB", its own
     * peak 5.58, and nothing more; the same run through its steps took 6.55) */
    uint64_t state = m->current.by_cat.bytes[CAT_OPTIMIZER];
    if (!f->has_oom && f->iterations == 0 && f->backward_passes > 0 && !m->shape.no_training &&
        state && m->current.peak_bytes > f->peak_process + f->peak_process / 100) {
        snprintf(t, sizeof t,
                 "the run made no optimizer step (%d backward pass%s, no out-of-memory "
                 "error): the predictions are of steps that make the optimizer's "
                 "state (%.2f GiB here, not measured) and hold it from the next forward on, "
                 "which this run did not reach",
                 f->backward_passes, f->backward_passes == 1 ? "" : "es",
                 (double)state / 1073741824.0);
        note(m, t);
    }
    if (m->shape.no_training) {
        snprintf(t, sizeof t,
                 "nothing was trained (forwards only: no backward pass, no optimizer step): %sthe "
                 "what-ifs add no gradients and no optimizer state, and scale the batch-sized "
                 "bytes with the batch; training this model would need both",
                 f->has_oom ? "the rows \"activations\" and \"attention\" at the out-of-memory "
                              "error hold the forward's tensors in use then (a KV cache among them "
                              "where the model keeps one), none kept for a backward; "
                            : "");
        note(m, t);
    } else if (m->oom_forward[0])
        note(m, m->oom_forward);
    else if (m->shape.generic)
        note(m, "no formula applies: what-ifs scale this run's batch-sized bytes in proportion to "
                "the micro-batch, the rest kept: an estimate from one measurement (vramtrace fit "
                "measures)");
    if (m->state_moved) {
        snprintf(t, sizeof t,
                 "no Python frames were recorded: the optimizer's state was counted among the "
                 "activations; the what-ifs take %.1f MiB of them for it (%.2f B per trainable "
                 "parameter, the optimizer assumed) and keep it whatever the batch",
                 (double)m->state_moved / 1048576.0, formula_opt_bpp(&m->shape));
        note(m, t);
    }
    if (m->accum_assumed)
        note(m, "the run's gradient accumulation is not known: predictions keep a step's "
                "gradients alive through the next forward, as accumulation does");
    char skipped[160] = ""; /* (its steps made none: see shape_of_run) */
    if (m->rec.steps_maybe_skipped)
        snprintf(skipped, sizeof skipped,
                 ": its %d optimizer step%s made none, with a GradScaler on that may have "
                 "skipped %s",
                 f->iterations, f->iterations == 1 ? "" : "s",
                 f->iterations == 1 ? "it" : "them all");
    if (m->opt_assumed && m->rec.optim_kinds & 1u << OPT_OTHER && m->rec.optim_choices[0]) {
        /* (classes of the script's own: their names say nothing of their state, nor that
         * AdamW's is the most of them) */
        snprintf(t, sizeof t,
                 OPTIM_NOTE_PREFIX "%s, and the script constructs %s, classes of its own among "
                                   "them, their state not known: predictions assume AdamW's %s "
                                   "per trainable parameter%s",
                 skipped, m->rec.optim_choices,
                 model_trained_bytes(m) == 2 ? "two states in the parameters' 16 bits, 4 B" : "8 B",
                 skipped[0] ? ", made by the first step not skipped" : "");
        note(m, t);
    } else if ((m->opt_assumed || m->opt_choice) && m->rec.optim_choices[0]) {
        /* the script's kinds: AdamW's state when it is one of them, else the most of the others */
        char most[80];
        if (m->opt_assumed)
            snprintf(most, sizeof most, "AdamW's %s",
                     model_trained_bytes(m) == 2 ? "two states in the parameters' 16 bits, 4 B"
                                                 : "8 B");
        else
            snprintf(most, sizeof most, "%.0f B", m->shape.opt_bpp);
        int one = !(m->rec.optim_kinds & (m->rec.optim_kinds - 1)); /* (a skipped run's) */
        snprintf(t, sizeof t,
                 OPTIM_NOTE_PREFIX "%s, and the script constructs %s (%s): predictions count %s, "
                                   "%s per trainable parameter%s%s",
                 skipped, one ? "one kind" : "several kinds", m->rec.optim_choices,
                 one ? "its state" : "the most state of them", most,
                 skipped[0] ? ", made by the first step not skipped" : "",
                 !one                                  ? "; a run with another needs less"
                 : m->rec.optim_kinds == 1u << OPT_SGD ? " (SGD's momentum buffer: none when "
                                                         "momentum is off)"
                                                       : "");
        note(m, t);
    } else if (m->opt_assumed) {
        snprintf(t, sizeof t,
                 OPTIM_NOTE_PREFIX "%s: predictions assume AdamW's %s per trainable "
                                   "parameter%s; an optimizer with less state needs less",
                 skipped,
                 model_trained_bytes(m) == 2 ? "two states in the parameters' 16 bits, 4 B" : "8 B",
                 skipped[0] ? ", made by the first step not skipped" : "");
        note(m, t);
    }
    if (m->opt_bound && optim_factored_kernels(&m->rec)) {
        /* a convolution's kernels: up to two states per weight (it had said "1 B, more than they
         * take" of a ResNet-50, whose Adafactor keeps 4.99 B per parameter) */
        snprintf(t, sizeof t,
                 OPTIM_NOTE_PREFIX
                 ": Adafactor's factored moments are counted as %.0f B per "
                 "trainable parameter, the most they take (a 1×1 convolution's row and column "
                 "factors are each its weight's size; a k×k one's 2/k of it together)",
                 m->shape.opt_bpp);
        note(m, t);
    } else if (m->opt_est[0] && !m->shape.none_seen_trained && !m->shape.no_training)
        note(m, m->opt_est); /* (model_factored.c) */
    else if (m->opt_bound)
        note(m, m->rec.optim == OPT_FACTORED ? OPTIM_NOTE_PREFIX
                    ": Adafactor's factored moments are "
                    "counted as 1 B per trainable parameter, more than they take"
                : m->rec.optim == OPT_SGD
                    ? (model_trained_bytes(m) == 2 ? OPTIM_NOTE_PREFIX
                           ": SGD's momentum buffer is "
                           "counted, 2 B per trainable parameter in their 16 bits (none when "
                           "momentum is off)"
                                                   : OPTIM_NOTE_PREFIX
                           ": SGD's momentum buffer is "
                           "counted, 4 B per trainable parameter (none when momentum is off)")
                    : OPTIM_NOTE_PREFIX ": 8-bit moments are counted as 2 B "
                                        "per trainable parameter, about what they take");
    if (m->lora_assumed)
        note(m, "LoRA: no gradient was measured; predictions give gradients and optimizer state "
                "to 1 % of the weights (the adapters, usually fewer), none to the frozen weights");
    char eflag[64];
    uint64_t eb; /* (the command line read only where the process peaked in an evaluation) */
    if (!model_peak_in_eval(m, f) && f->process_phase && !strcmp(f->process_phase, "eval") &&
        f->backward_passes > 0 && !m->shape.no_training &&
        (eb = model_eval_batch_flag(f, eflag, sizeof eflag)) && eb != m->shape.B) {
        /* the process peaked in an evaluation of a batch of its own, the tensors in training:
         * the micro-batch what-ifs leave that pass and its cache (a GPT-2 trained at B=6 beside
         * an evaluation at 8, its process at 11.45 GiB there, told B=3 with 2 accumulation
         * steps needs 7.16 GiB: it took 9.92, 3.88 GiB of cache the evaluation had reserved) */
        char msg[480];
        snprintf(msg, sizeof msg,
                 "the process peaked (%.2f GiB) in an evaluation pass with a batch of its own (%s "
                 "on the command line), %.2f GiB of it the allocator's cache: the micro-batch "
                 "what-ifs predict the training step's peak, and leave that pass and what it "
                 "reserves as they are (lower that batch, or vramtrace fit measures)",
                 (double)f->peak_process / 1073741824.0, eflag,
                 (double)f->at_peak.bytes[CAT_CACHE] / 1073741824.0);
        note(m, msg);
    }
    if (model_peak_in_eval(m, f)) {
        /* a validation pass's batch need not be the training micro-batch: GPT-2 trained at
         * B=4 and B=2, each with an evaluation at 16, peaked at the same 9.96 GiB of tensors */
        char msg[480];
        if (m->calib.eval_batch)
            snprintf(msg, sizeof msg,
                     "the tensors peaked (%.2f GiB) in %s %s pass with a batch of its own (%s on "
                     "the command line): a smaller micro-batch leaves that pass as it is, so the "
                     "micro-batch what-ifs are predicted at least at its peak; lower that batch to "
                     "lower it (vramtrace fit measures)",
                     (double)f->peak_allocated / 1073741824.0,
                     *advice_pass_word(m->eval_flag) == 'e' ? "an" : "a",
                     advice_pass_word(m->eval_flag), m->eval_flag);
        else if (f->peak_step_pass) /* (a rollout's had been "an evaluation pass") */
            snprintf(msg, sizeof msg,
                     "the tensors peaked (%.2f GiB) in a no-grad pass whose outputs the step uses "
                     "(a rollout or a generation, phase eval), not in a training step: the "
                     "what-ifs are calibrated to that pass as if it were a step, true when it "
                     "runs the training micro-batch; a batch of its own keeps its peak whatever "
                     "the micro-batch (lower that batch, or vramtrace fit measures)",
                     (double)f->peak_allocated / 1073741824.0);
        else
            snprintf(msg, sizeof msg,
                     "the tensors peaked (%.2f GiB) in an evaluation pass, not in a training "
                     "step: the what-ifs are calibrated to that evaluation as if it were a step, "
                     "true when it runs the training micro-batch; an evaluation batch of its own "
                     "keeps its peak whatever the micro-batch (lower that batch, or vramtrace fit "
                     "measures)",
                     (double)f->peak_allocated / 1073741824.0);
        note(m, msg);
    }
    if (m->calib.eval_cut) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "the run ran out of memory in %s %s pass with a batch of its own (%s on the "
                 "command line): every what-if keeps that pass, whose need past the request that "
                 "failed was not measured, so they are lower bounds and none is recommended; "
                 "lower that batch (vramtrace fit measures)",
                 *advice_pass_word(m->calib.eval_flag) == 'e' ? "an" : "a",
                 advice_pass_word(m->calib.eval_flag), m->calib.eval_flag);
        note(m, msg);
    }
}

void model_cause_cache(model_result *m, const run_facts *f, uint64_t cap, uint64_t cache)
{
    /* unused cache at the failure, but the step's tensors and what lies outside PyTorch exceed
     * the card without any cache: the micro-batch is too large, not the cache */
    uint64_t bare = m->current.tensor_bytes + f->at_oom.bytes[CAT_CONTEXT] +
                    f->at_oom.bytes[CAT_KERNEL_CODE] + f->at_oom.bytes[CAT_EXTERNAL];
    if (m->cause == OOM_FRAGMENTATION && f->tensor_mode && cap && bare > cap) {
        m->cause = OOM_ACTIVATIONS;
        snprintf(m->why, sizeof m->why,
                 "%.0f MiB reserved by PyTorch was in no tensor (its free blocks and the "
                 "rounding inside blocks), more than the %.0f MiB requested, but the step needs "
                 "%s%.2f GiB of tensors and %.0f MiB outside PyTorch even with no cache: more "
                 "than the card",
                 (double)cache / 1048576.0, (double)f->oom_requested / 1048576.0,
                 m->lower_bounds ? "at least " : "", (double)m->current.tensor_bytes / 1073741824.0,
                 (double)(bare - m->current.tensor_bytes) / 1048576.0);
    } else if (m->cause == OOM_FRAGMENTATION && m->lower_bounds) {
        /* a pass cut short: a first forward (its tensors then, scaled), or an evaluation pass
         * (its own batch's need, not the training step's tensors the prediction counts) */
        char gib[32] = "";
        if (!m->calib.eval_cut)
            snprintf(gib, sizeof gib, "%.2f GiB of ",
                     (double)m->current.tensor_bytes / 1073741824.0);
        size_t w = strlen(m->why);
        snprintf(m->why + w, sizeof m->why - w,
                 "; the %s%s stopped early, so its %stensors are a lower bound: a whole %s may "
                 "not fit even with no cache",
                 m->calib.eval_cut ? advice_pass_word(m->calib.eval_flag) : "forward",
                 m->calib.eval_cut ? " pass" : "", gib, m->calib.eval_cut ? "pass" : "forward");
    }
}

void model_second_step(model_result *m, const gpt_shape *steady, uint64_t reserved)
{
    prediction p;
    m->calib.later_cache_fraction = 0;
    advice_predict(&m->calib, steady, &p);
    m->calib.later_cache_fraction = p.tensor_bytes && reserved > p.tensor_bytes
                                        ? (double)reserved / (double)p.tensor_bytes - 1
                                        : -1;
    m->second_step = m->calib.later_cache_fraction >= 0;
}

/* model_frozen_beside: a second, frozen model beside the one trained (a teacher it distills
 * from, a reference model): the formula's shape is the trained model's, so its gradients and
 * optimizer state are all of its parameters' (the trainable share of the trace's weights is
 * not of the formula's P), and the frozen model's weights are parameters it does not hold:
 * added to the refined formula's (a GPT-2 student of a GPT-2 medium teacher: 3.85x the formula's
 * parameters, its optimizer state 3.85x, before). No backward yet (out of memory in the first
 * forward, the trained model told by its weights' 16-bit copies kept: infer.c): the trained
 * model's weights are its formula's P. */
/* model_bytes_near: a within 2 % of b (a copy of a model, its buffers aside) */
static int model_bytes_near(uint64_t a, uint64_t b)
{
    uint64_t near = b / 50;
    return a + near >= b && a <= b + near;
}

void model_frozen_beside(model_result *m, const run_facts *f)
{
    const infer_value *fz = f->inferred ? &f->inferred->v[INFER_frozen_blocks] : NULL;
    uint64_t tr = m->rec.trainable, P = m->params_trace;
    /* copies kept count no weight autocast never casts (a GPT-2's position table, its norms):
     * the formula's P where it is more; the copies' where they count more than the formula's
     * GPT blocks (an untied head: a student of 91.62 M had been given the formula's
     * 67.84 M, its gradients 271.4 MB where it made 366.5, the teacher 758.89 M of 735.10) */
    int lower = m->rec.trainable_lower; /* tr a lower bound: the frozen weights at most P - tr */
    if ((!tr || lower) && f->backward_passes == 0 && m->formula_ok &&
        formula_params_exact(&m->shape) >= tr)
        tr = formula_params_exact(&m->shape), lower = 0;
    if (!fz || !fz->known || !tr || !P || tr >= P)
        return;
    uint64_t frozen = P - tr; /* (no formula: the what-ifs take the trainable share, model.c) */
    if (m->formula_ok)
        m->frozen_params = frozen, m->shape.train_frac = 0; /* all of its weights train */
    /* those weights are that model's: no room left for an EMA the program keeps itself (a GPT-2
     * distilled from a GPT-2 medium had been told "1353.5 MiB of weights take no gradient, which
     * can hold a copy the program keeps itself", its OOM run "off"; a student and a teacher of
     * the program's own classes too). Not a second model of the trained one's size: the
     * program's own EMA copy of it (copy.deepcopy) has those sizes too */
    recog_feature *ema = &m->rec.feat[FEATURE_EMA];
    uint64_t near = tr / 50; /* (its size within 2 %: a U-Net's own EMA copy, buffers aside) */
    if (ema->state == FEAT_UNKNOWN && ema->where[0] && (frozen + near < tr || frozen > tr + near) &&
        m->rec.beside_unused) /* (mostly not cast yet: frozen or not, not told) */
        snprintf(ema->where, sizeof ema->where,
                 "no code of an EMA of the weights ran (diffusers' EMAModel, timm's ModelEma, "
                 "AveragedModel, torch_ema); beside the trained model's weights, a second "
                 "model's blocks, mostly not cast by autocast before the error (frozen or "
                 "trained: a teacher's, a reference model's; at most %.2f M elements)",
                 (double)frozen / 1e6),
            ema->state = FEAT_OFF;
    else if (m->weights_untyped && ema->state == FEAT_UNKNOWN && ema->where[0] &&
             !model_bytes_near(m->weights_untyped, tr * (uint64_t)model_trained_bytes(m)))
        /* (their element size not given: an fp16 encoder's count at 4 B had been half its own;
         * their bytes the trained model's, as a program's own averaged copy of it: SWA's
         * deepcopy of a VGG16-BN had been "a second, frozen model's (a teacher ...)") */
        snprintf(ema->where, sizeof ema->where,
                 "no code of an EMA of the weights ran (diffusers' EMAModel, timm's ModelEma, "
                 "AveragedModel, torch_ema); the weights that take no gradient are a second, "
                 "frozen model's (a teacher or a reference model: %s%.2f GiB in blocks beside "
                 "the trained model's, their element count not known)",
                 lower ? "at most " : "", (double)m->weights_untyped / 1073741824.0),
            ema->state = FEAT_OFF;
    else if (ema->state == FEAT_UNKNOWN && ema->where[0] &&
             (frozen + near < tr || frozen > tr + near))
        snprintf(ema->where, sizeof ema->where,
                 "no code of an EMA of the weights ran (diffusers' EMAModel, timm's ModelEma, "
                 "AveragedModel, torch_ema); the weights that take no gradient are a second, "
                 "frozen model's (a teacher or a reference model: %s%.2f M elements in "
                 "blocks beside the trained model's)",
                 lower ? "at most " : "", (double)frozen / 1e6),
            ema->state = FEAT_OFF;
}
