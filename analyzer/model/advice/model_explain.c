/* model_explain.c — the sentences of a run's model (model.h): where the measured peak and the
 * basic or refined formula differ by more than 25 %, and, where no formula applies, what the
 * measurement itself says per category; in the words of what was recognized (the optimizer's
 * state, the phase the peak came in, what was on), never nanoGPT's unless the run is nanoGPT. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "model_first_forward.h"
#include "model_trace.h"

#define mibf(b) ((double)(b) / 1048576.0)

/* a run whose steps' state was not told apart (model_state_elsewhere) */
#define STATE_ELSEWHERE                                                                            \
    "not told apart: no Python frames were recorded, so the state the optimizer steps before "     \
    "the peak made is counted in the other rows (as activations, most likely)"

/* optimizer_state: what the optimizer's state at the peak is, as recognized. */
static void optimizer_state(const model_result *m, const run_facts *f, uint64_t me, char *out,
                            size_t n)
{
    const run_recognition *r = &m->rec;
    if (me == 0 && m->shape.no_training) {
        snprintf(out, n, "none: the run had no optimizer step (forwards only)");
    } else if (me == 0 && f->steps_why) { /* (PCGrad's per-task frees had been "no state") */
        snprintf(out, n, "none measured, and whether an optimizer step ran is not known");
    } else if (me == 0 && r->optim == OPT_NONE) {
        snprintf(out, n,
                 r->optim_off_device ? "the optimizer keeps no state on the device (%.40s: %.220s)"
                                     : "the optimizer keeps no state (%.40s: %.240s)",
                 r->optim_class[0] ? r->optim_class : "no state measured",
                 r->optim_source[0] ? r->optim_source : r->optim_where);
    } else if (me == 0 && f->iterations == 0 && optim_steps_unseen(r)) {
        /* (SGD, its momentum not known: "the run stopped before its first optimizer step"
         * had been said of a run of 2 steps that made nothing) */
        snprintf(out, n,
                 "none measured: no optimizer step was seen, and " OPTIM_UNSEEN_WHY
                 " (whether one ran is not known)");
    } else if (me == 0 && f->iterations == 0) {
        snprintf(out, n, "no optimizer state yet: the run stopped before its first optimizer step");
    } else if (me == 0 && r->optim == OPT_UNKNOWN && r->optim_bpp == 0) {
        snprintf(out, n, "no optimizer state over the run: %.250s", r->optim_where);
    } else if (me == 0 && f->peak_iter == 0) {
        snprintf(out, n,
                 "no optimizer state at the peak: it came before the first optimizer "
                 "step created the state");
    } else if (me == 0 && model_state_elsewhere(m, f)) {
        snprintf(out, n, STATE_ELSEWHERE);
    } else if (me == 0) {
        snprintf(out, n, "no optimizer state was alive at the peak");
    } else if (r->optim != OPT_UNKNOWN && r->optim_bpp >= 0) { /* (over a lower bound: most) */
        snprintf(out, n, "%s%.2f B of optimizer state per trainable parameter measured: %s",
                 r->trainable_lower ? "at most " : "", r->optim_bpp, optim_text(r));
    } else if (r->optim != OPT_UNKNOWN) {
        snprintf(out, n, "%s (%.240s)", optim_text(r), r->optim_where);
    } else {
        snprintf(out, n, "optimizer state, %.1f MiB (the optimizer is not recognized: %.120s)",
                 mibf(me), r->optim_where[0] ? r->optim_where : "no measurement");
    }
}

/* no_gradients: why no .grad was alive at the moment the model explains, from where it came */
static void no_gradients(const model_result *m, const run_facts *f, char *out, size_t n)
{
    const char *ph = m->measured_at_oom ? (f->oom_phase ? f->oom_phase : "")
                     : f->peak_phase    ? f->peak_phase
                                        : "";
    const char *said = (m->measured_at_oom ? f->oom_step_pass : f->peak_step_pass)
                           ? "no-grad pass whose outputs the step uses (phase eval)"
                           : ph;
    int bwd = m->measured_at_oom ? f->oom_bwd : f->peak_bwd;
    const char *pk = m->measured_at_oom       ? "the out-of-memory error"
                     : m->measured_at_tensors ? "the tensors' peak"
                                              : "the peak";
    if (m->shape.no_training)
        snprintf(out, n, "none: the run had no backward pass (forwards only)");
    else if (f->backward_passes == 0 || (bwd == 0 && strcmp(ph, "backward")))
        snprintf(out, n, "no .grad alive at %s: it came before the run's first backward%s", pk,
                 !strcmp(ph, "forward") ? ", in its first forward" : "");
    else if (!strcmp(ph, "backward"))
        snprintf(out, n,
                 "no .grad alive at %s: it came in a backward, before that "
                 "backward made the gradients%s",
                 pk,
                 m->rec.feat[FEATURE_CHECKPOINTING].state == FEAT_ON
                     ? " (the checkpointed blocks' forward is "
                       "recomputed there)"
                     : "");
    else if (f->peak_iter > 0 && f->cat_peak[CAT_GRADIENTS] > 0)
        snprintf(out, n,
                 "no .grad alive at %s: the last optimizer step's gradients had been freed "
                 "(zero_grad(set_to_none=True)) and %s came in the %s, before the next "
                 "backward",
                 pk, pk, said[0] ? said : "step");
    else
        snprintf(out, n, "no .grad alive at %s (it came in the %s)", pk, said[0] ? said : "run");
}

/* explain_generic: no formula applies: what the measurement says, per category. */
static void explain_generic(model_result *m, const run_facts *f)
{
    const gpt_shape *s = &m->shape;
    int pb = formula_param_bytes(s); /* the parameters' and gradients' bytes per element */
    const char *pw = pb == 2 ? "16-bit" : "fp32";
    uint64_t total = cat_breakdown_total(&m->measured);
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t me = m->measured.bytes[c];
        char *rd = m->reason_doc[c];
        size_t n = sizeof m->reason_doc[c];
        rd[0] = m->reason_ref[c][0] = '\0';
        if ((double)me < 0.02 * (double)total && me < (64ull << 20) && c != CAT_OPTIMIZER &&
            c != CAT_GRADIENTS)
            continue;
        switch ((category)c) {
        case CAT_PARAMETERS:
            /* no gradient to measure the weights' dtype by (forwards only, or a training run
             * that stopped before its first backward: a U-Net out of memory in its first fp32
             * forward had been told "fp32 parameters" beside its dtype row's "unknown"), unless
             * fp32 compute without autocast says it (a 16-bit model computes in 16 bits) */
            if (model_cast16_words(m, f, me, rd, n)) /* (told by the program's lines) */
                break;
            if (me && f->tensor_mode && (s->no_training || !f->backward_passes) &&
                !model_param_dtype_measured(f) &&
                !(config_known(&m->cfg, CFG_dtype) && s->dtype_bytes >= 4))
                snprintf(rd, n,
                         "%.1f MiB in the weights made before %s (parameters, and "
                         "buffers if any; with no gradient or optimizer state beside them the "
                         "trace does not give their dtype: %.2f M elements at 4 B, %.2f M at 2 B)",
                         mibf(me), s->no_training ? "the forwards" : "training", (double)me / 4e6,
                         (double)me / 2e6);
            else if (me && f->tensor_mode && model_untyped_words(m, f, me, rd, n))
                break;
            else if (me && f->tensor_mode && m->ema_said[0] && me > m->ema_measured)
                snprintf(rd, n,
                         "%.2f M elements at %d B in the weights made before training (%s "
                         "parameters, and buffers if any), plus %s",
                         (double)(me - m->ema_measured) / (pb * 1e6), pb, pw, m->ema_said);
            else if (me && f->tensor_mode && pb == 2 && model_trained_bytes(m) == 4 &&
                     m->rec.trainable && me > 4 * m->rec.trainable)
                /* 16-bit weights and fp32 trained ones (LoRA's adapters) */
                snprintf(rd, n,
                         "%.2f M elements in the weights made before training: 16-bit "
                         "parameters at 2 B (and buffers if any), and the %.2f M trained ones "
                         "fp32 at 4 B",
                         (double)(me - 4 * m->rec.trainable) / 2e6 + (double)m->rec.trainable / 1e6,
                         (double)m->rec.trainable / 1e6);
            else if (me && f->tensor_mode)
                snprintf(rd, n,
                         "%.2f M elements at %d B in the weights made before %s (%s "
                         "parameters, and buffers if any)",
                         (double)me / (pb * 1e6), pb, s->no_training ? "the forwards" : "training",
                         pw);
            break;
        case CAT_GRADIENTS:
            if (me == 0 && f->tensor_mode)
                no_gradients(m, f, rd, n);
            else if (me && m->rec.trainable && m->rec.trainable_union)
                snprintf(rd, n,
                         "%s gradients of %.2f M trainable parameters, never all at once: "
                         "%.2f M at their most (steps of different weights in turn)",
                         model_trained_bytes(m) == 2 ? "16-bit" : "fp32",
                         (double)m->rec.trainable / 1e6,
                         (double)f->cat_peak[CAT_GRADIENTS] / model_trained_bytes(m) / 1e6);
            else if (me && m->rec.trainable)
                snprintf(rd, n, "%s gradients of %.2f M trainable parameters",
                         model_trained_bytes(m) == 2 ? "16-bit" : "fp32",
                         (double)m->rec.trainable / 1e6);
            break;
        case CAT_OPTIMIZER:
            if (f->tensor_mode)
                optimizer_state(m, f, me, rd, n);
            break;
        case CAT_ACTIVATIONS:
            me -= m->state_moved + model_oom_passes_in(m, f, me - m->state_moved); /* (notes) */
            if (me && s->B && s->no_training) /* (no backward: nothing was kept for one) */
                snprintf(rd, n,
                         "%.1f MiB per sample of the micro-batch (%llu) %s: with no backward "
                         "a forward keeps a tensor only until the ops after it have used it; "
                         "scales with the micro-batch%s",
                         mibf(me) / (double)s->B, (unsigned long long)s->B,
                         m->forward_cut ? "alive when the out-of-memory error cut the forward short"
                                        : "of a forward's tensors alive at once",
                         m->rec.batchnorm ? " (and the input size)" : "");
            else if (me && s->B && m->forward_cut)
                snprintf(rd, n,
                         "%.1f MiB per sample of the micro-batch (%llu) %s; scales with the "
                         "micro-batch%s",
                         mibf(me) / (double)s->B, (unsigned long long)s->B,
                         model_forward_cut_words(m, f),
                         m->rec.batchnorm ? " (and the input size)" : "");
            else if (me && s->B)
                snprintf(rd, n,
                         "%.1f MiB per sample of the micro-batch (%llu): what the forward saved "
                         "for the backward, scales with the micro-batch%s",
                         mibf(me) / (double)s->B, (unsigned long long)s->B,
                         m->rec.batchnorm ? " (and the input size)" : "");
            break;
        default:
            break;
        }
    }
}

/* forward_gone: the moment compared came in the optimizer step or late in a backward, after the
 * forward's tensors of category c were freed (a step's first optimizer step makes its state: a
 * one-step run's peak; a small B·T's gradients outweigh its activations: GPT-2 at B=1, T=64),
 * so what the refined formula's step peak holds of them (r, measured me) is compared with their
 * largest over the run instead (autocast's copies: said, not compared) */
/* loss_over: what kept the logits/loss bytes over the vocabulary: cross-entropy, or with a frozen
 * model beside the trained one (a teacher, a reference model) the loss over both models' logits */
static const char *loss_over(const model_result *m)
{
    return m->frozen_params ? "the loss on both models' logits (the trained one's and the "
                              "frozen model's)"
                            : "cross-entropy";
}

/* eval_b: the evaluation's own batch (m->eval_flag) where the tensors peaked in it, else 0 */
static uint64_t eval_b(const model_result *m)
{
    return m->eval_batch != m->shape.B ? m->eval_batch : 0;
}

static int forward_gone(const run_facts *f, int c, uint64_t me, uint64_t r)
{
    return (c == CAT_ACTIVATIONS || c == CAT_LOGITS || c == CAT_ATTENTION || c == CAT_AUTOCAST) &&
           r && me < r / 4 && f->cat_peak[c] && model_peak_after_forward(f);
}

int model_peak_after_forward(const run_facts *f)
{
    /* (an evaluation pass after a step's backward: its forward saves nothing for one) */
    return f->has_cat_peaks && f->peak_phase &&
           (!strcmp(f->peak_phase, "optimizer") || !strcmp(f->peak_phase, "backward") ||
            (!strcmp(f->peak_phase, "eval") && f->backward_passes > 0));
}

void model_ckpt_block_note(model_result *m)
{
    size_t k = strlen(m->formula_block);
    snprintf(m->formula_block + k, sizeof m->formula_block - k,
             "%sactivation checkpointing (on here): each block keeps only its input, %u*N*d bytes, "
             "until the backward recomputes it; the refined activations count that",
             k ? "; with " : "refined, with ", formula_ckpt_per_nd(&m->shape));
}

/* act_refined: the refined formula's activations per block, as the reasons write them */
static const char *act_refined(const gpt_shape *s, char *buf, size_t n)
{
    if (s->checkpointing) /* (formula_refined's: the inputs alone) */
        snprintf(buf, n, "refined, with checkpointing: %u*N*d bytes per block, its input alone",
                 formula_ckpt_per_nd(s));
    else
        snprintf(buf, n, "refined: %s%s bytes per block", formula_block_text(s),
                 s->gated ? " (a gated block)" : "");
    return buf;
}

/* explain_doc: one category against the basic formula */
static void explain_doc(model_result *m, const run_facts *f, int c, uint64_t me, char *rd, size_t n)
{
    const gpt_shape *s = &m->shape;
    uint64_t eb;
    uint64_t P = m->params_trace ? m->params_trace : formula_params_exact(s);
    double pb = formula_param_bytes(s); /* the parameters' bytes per element */
    double ge = model_trained_bytes(m); /* the gradients' (LoRA's adapters: fp32) */
    const char *gw = ge == 2 ? "16-bit" : "fp32";
    int a_known = config_known(&m->cfg, CFG_gradient_accumulation_steps) &&
                  m->cfg.v[CFG_gradient_accumulation_steps].src != CONFIG_SRC_DEFAULT;
    switch ((category)c) {
    case CAT_PARAMETERS:
        if (me == 0)
            snprintf(rd, n, "no parameter %s attributed at the peak",
                     f->tensor_mode ? "tensor" : "segment");
        else if (m->weights_untyped && model_untyped_words(m, f, me, rd, n))
            break;
        else if (model_cast16_words(m, f, me, rd, n)) /* (the program's lines cast some) */
            break;
        else if (model_mixed_words(m, f, rd, n)) /* (16-bit beside 4-bit or fp32 ones) */
            break;
        else if (m->params_trace && pb == 2 && f->inferred && f->inferred->master_bytes)
            snprintf(rd, n,
                     "%.2f M elements in the trace's weight tensors (parameters, and any "
                     "buffers) at 2 B each (16-bit parameters), and beside them the program's "
                     "fp32 master copies of them (%.2f GiB) and %.2f GiB of further copies of "
                     "those, which the basic formula does not count",
                     (double)P / 1e6, (double)f->inferred->master_bytes / (1 << 30),
                     (double)f->inferred->copies_bytes / (1 << 30));
        else if (m->params_trace && pb == 2)
            snprintf(rd, n,
                     "%.2f M elements in the trace's weight tensors (parameters, and any "
                     "buffers) at 2 B each (16-bit parameters, no fp32 master weights), as the "
                     "basic formula assumes",
                     (double)P / 1e6);
        else if (m->params_trace)
            snprintf(rd, n,
                     "%.2f M elements in the trace's weight tensors (parameters, and any "
                     "buffers) at 4 B each (%s), the basic formula assumes 16-bit weights "
                     "(2 B/param)",
                     (double)P / 1e6, model_fp32_weights(m, s));
        else if (fabs((double)me - 4.0 * P) < 0.15 * 4.0 * P)
            snprintf(rd, n,
                     "parameters at 4 B/param (%s), the basic formula assumes 16-bit weights "
                     "(2 B/param)",
                     model_fp32_weights(m, s));
        else
            snprintf(rd, n, "%.2f B/param measured, the basic formula assumes 2 (16-bit)",
                     (double)me / P);
        break;
    case CAT_GRADIENTS:
        if (me == 0)
            no_gradients(m, f, rd, n);
        else if (!f->tensor_mode)
            snprintf(rd, n,
                     "segment mode counts whole segments under the phase that grew them: "
                     "no bytes per parameter from it (run with --tensors)");
        else if (f->peak_phase && !strcmp(f->peak_phase, "backward") &&
                 (double)me < 0.97 * ge * P * formula_train_frac(s))
            snprintf(rd, n,
                     "%.0f %% of the %s gradients were alive: the peak came during a backward, "
                     "before it had made the rest",
                     100.0 * (double)me / (ge * P * formula_train_frac(s)), gw);
        else if (fabs((double)me - ge * P * formula_train_frac(s)) <
                 0.15 * ge * P * formula_train_frac(s))
            snprintf(rd, n, "gradients are %s (%.1f B per trainable parameter)%s", gw,
                     (double)me / ((double)P * formula_train_frac(s)),
                     a_known && s->A > 1 ? "; they stay alive across micro-steps (A > 1)" : "");
        else if (m->cut && (double)me < ge * P * formula_train_frac(s))
            snprintf(rd, n, "%.0f %% of the %s gradients were alive: %s during the backward",
                     100.0 * (double)me / (ge * P * formula_train_frac(s)), gw,
                     m->cut_unstepped ? "the trace ends"
                                      : "the run stopped at the out-of-memory "
                                        "error");
        else
            snprintf(rd, n, "%.1f B/param of gradients measured, the basic formula assumes 2",
                     (double)me / P);
        break;
    case CAT_OPTIMIZER:
        optimizer_state(m, f, me, rd, n);
        break;
    case CAT_ACTIVATIONS: {
        char ar[96];
        if (m->docf.act_elements && forward_gone(f, c, me, m->refined.bytes[c]))
            snprintf(rd, n,
                     "this peak, in the %s, came after the forward's tensors were freed; "
                     "their largest over the run, %.1f MiB, is an effective multiplier of %.1f "
                     "(%s)",
                     f->peak_phase, mibf(f->cat_peak[c]),
                     (double)f->cat_peak[c] / ((double)m->docf.act_elements * 2.0),
                     act_refined(s, ar, sizeof ar));
        else if (m->forward_cut && me <= m->doc.bytes[c]) /* a whole forward keeps more: unknown */
            snprintf(rd, n,
                     "measured effective multiplier %.1f at the out-of-memory error, in a forward "
                     "that had not finished: a whole forward keeps more, so this run does not "
                     "say whether the basic formula's 24 overcounts (%s)",
                     m->mult_act, act_refined(s, ar, sizeof ar));
        else
            snprintf(rd, n,
                     "the basic formula's multiplier 24 %s: measured effective multiplier %.1f "
                     "(%s)",
                     me > m->doc.bytes[c] ? "undercounts" : "overcounts", m->mult_act,
                     act_refined(s, ar, sizeof ar));
        break;
    }
    case CAT_LOGITS:
        if (s->V && m->forward_cut)
            snprintf(rd, n,
                     "the basic formula folds logits into activations; %.1f*B*T*V bytes of "
                     "logits/loss (V=%llu) were alive at the out-of-memory error, in a forward "
                     "that had not finished (the refined formula: %d for a whole step)",
                     (double)me / ((double)s->B * (double)s->T * (double)s->V),
                     (unsigned long long)s->V, formula_logits_per_nv(s));
        else if (s->V && forward_gone(f, c, me, m->refined.bytes[c]))
            snprintf(rd, n,
                     "the basic formula folds logits into activations; this peak, in the %s, came "
                     "after the forward's tensors were freed: %s over V=%llu kept at "
                     "most %.1f*B*T*V bytes over the run (the refined formula: %d)",
                     f->peak_phase, loss_over(m), (unsigned long long)s->V,
                     (double)f->cat_peak[c] / ((double)s->B * (double)s->T * (double)s->V),
                     formula_logits_per_nv(s));
        else if (s->V && (eb = eval_b(m)) != 0)
            snprintf(rd, n,
                     "the basic formula folds logits into activations; at this peak, in the %.16s "
                     "at its own batch of %llu (%.32s), %.90s over V=%llu kept %.1f*B*T*V bytes "
                     "(the refined formula: %d for a training step)",
                     f->peak_phase, (unsigned long long)eb, m->eval_flag, loss_over(m),
                     (unsigned long long)s->V,
                     (double)me / ((double)eb * (double)s->T * (double)s->V),
                     formula_logits_per_nv(s));
        else if (s->V)
            snprintf(rd, n,
                     "the basic formula folds logits into activations; %s over V=%llu "
                     "kept %.1f*B*T*V bytes here (the refined formula: %d)",
                     loss_over(m), (unsigned long long)s->V,
                     (double)me / ((double)s->B * (double)s->T * (double)s->V),
                     formula_logits_per_nv(s));
        else
            snprintf(rd, n, "the loss and the classifier's outputs (no vocabulary)");
        break;
    case CAT_ATTENTION:
        if (me == 0 && f->has_cat_peaks && f->cat_peak[CAT_ATTENTION] > 0)
            snprintf(rd, n,
                     "attention is fused (flash / SDPA kernels ran): no B*H*T^2 score matrices "
                     "are kept");
        else if (me == 0 && m->cfg.program == PROG_NANOGPT)
            snprintf(rd, n,
                     "nanoGPT's attention is fused (F.scaled_dot_product_attention): no "
                     "B*H*T^2 score matrices are kept");
        else if (me == 0 && !f->tensor_mode)
            snprintf(rd, n,
                     "segment mode cannot tell an attention kernel's buffers apart (run "
                     "with --tensors)");
        else if (me == 0)
            snprintf(rd, n,
                     "no attention kernel's buffers were seen; score matrices, if the "
                     "attention materializes them, are counted as activations");
        else if (formula_attention_unfused(s, me))
            snprintf(rd, n,
                     "attention scores are materialized (unfused) and saved for every layer");
        else if (!s->H)
            snprintf(rd, n,
                     "%.1f MiB of attention kernels' buffers; the heads are unknown, so they "
                     "cannot be compared with B*H*T^2 score matrices",
                     mibf(me));
        else
            snprintf(rd, n,
                     "attention is fused (flash / SDPA): %.1f MiB of its buffers (log-sum-exp "
                     "rows, workspaces), no B*H*T^2 score matrices",
                     mibf(me));
        break;
    case CAT_AUTOCAST:
        snprintf(rd, n,
                 "the basic formula does not count autocast's 16-bit weight copies (2 B per "
                 "matmul weight)");
        break;
    case CAT_CONTEXT:
        snprintf(rd, n,
                 "CUDA context measured %.0f MiB, the basic formula assumes ~500 MB (driver, "
                 "lazy loading)",
                 mibf(me));
        break;
    case CAT_KERNEL_CODE:
        if (s->compile)
            snprintf(rd, n,
                     "kernel images %.0f MiB, torch.compile's kernels included (the basic formula "
                     "allows 0.5-1 GB for torch.compile overall)",
                     mibf(me));
        else
            snprintf(rd, n,
                     "kernel images %.0f MiB (modules and libraries loaded); not in the basic "
                     "formula",
                     mibf(me));
        break;
    case CAT_CACHE: /* (at the tensors' peak: the rest of the process peak, so the column adds
                     * up to it; the timeline's cache at that moment can be less) */
        snprintf(rd, n,
                 "the basic formula counts the allocator's cache only as \"fragmentation\" "
                 "overhead%s",
                 m->measured_at_tensors
                     ? "; this row is the rest of the process peak (its reserved "
                       "segments less the tensors at their own peak), so the "
                       "column adds up to the process peak; the cache at the "
                       "tensors' peak itself is the timeline's"
                     : "");
        break;
    default:
        if (m->doc.bytes[c] == 0)
            snprintf(rd, n, "not in the basic formula");
        break;
    }
}

/* explain_ref: one category against the refined formula. */
static void explain_ref(model_result *m, const run_facts *f, int c, uint64_t me, uint64_t r,
                        char *rr, size_t n)
{
    const gpt_shape *s = &m->shape;
    uint64_t eb;
    if (forward_gone(f, c, me, r)) {
        if (c == CAT_AUTOCAST) /* (the forward keeps every copy until autocast exits, the
                                * formula's moment none: no ratio of the two) */
            snprintf(rr, n,
                     "this peak, in the %s, came after the forward's tensors were freed; "
                     "their largest over the run: %.1f MiB",
                     f->peak_phase, mibf(f->cat_peak[c]));
        else
            snprintf(rr, n,
                     "this peak, in the %s, came after the forward's tensors were freed; "
                     "their largest over the run, %.1f MiB, is %.2fx the refined formula",
                     f->peak_phase, mibf(f->cat_peak[c]), (double)f->cat_peak[c] / (double)r);
        return;
    }
    if (me > 0 && r > 0) {
        int grows = c == CAT_ACTIVATIONS || c == CAT_LOGITS || c == CAT_ATTENTION ||
                    c == CAT_GRADIENTS || c == CAT_AUTOCAST;
        if (m->cut && grows && me < r && m->cut_unstepped)
            snprintf(rr, n, ADVICE_UNSTEPPED_TEXT " (%s): this is partial",
                     advice_cut_why(f->stopped));
        else if (m->cut && grows && me < r)
            snprintf(rr, n, "%s%s%s before the step's peak: this is partial",
                     f->oom_went_on ? "the step was cut short by the OOM the program caught"
                                    : "the run stopped at the OOM",
                     f->oom_phase && *f->oom_phase ? " in the " : "",
                     f->oom_phase ? f->oom_phase : "");
        else if (c == CAT_ACTIVATIONS && s->compile)
            snprintf(rr, n,
                     "torch.compile decides what is saved (the refined formula assumes 30*N*d "
                     "per block)");
        else if (c == CAT_ACTIVATIONS && me < r && m->rec.feat[FEATURE_LORA].state == FEAT_ON)
            snprintf(rr, n,
                     "measured %.2fx the refined formula: with LoRA the frozen layers keep no "
                     "input for a weight gradient (the formula's blocks train every weight)",
                     (double)me / r);
        else if (c == CAT_LOGITS && (eb = eval_b(m)) != 0)
            snprintf(rr, n,
                     "measured %.2fx the refined formula at the training batch of %llu: this "
                     "peak came in the %s, at its own batch of %llu (%.2fx at that batch)",
                     (double)me / r, (unsigned long long)s->B, f->peak_phase,
                     (unsigned long long)eb, (double)me / r * (double)s->B / (double)eb);
        else
            snprintf(rr, n, "measured %.2fx the refined formula (%s)", (double)me / r,
                     category_doc((category)c));
    } else if (me > 0 && r == 0) {
        if (c == CAT_ATTENTION && formula_attention_unfused(s, me))
            snprintf(rr, n, "attention is not fused: B*H*T^2 scores are materialized");
        else if (c == CAT_GRADIENTS)
            snprintf(rr, n,
                     "the refined formula puts a step's peak at its forward's end, with no .grad "
                     "alive when nothing accumulates; this peak, in the %s, had %.1f MiB of them",
                     f->peak_phase ? f->peak_phase : "step", mibf(me));
    } else if (me == 0 && r > 0) {
        if (!f->tensor_mode && (c == CAT_GRADIENTS || c == CAT_OPTIMIZER))
            snprintf(rr, n, "not attributed in segment mode (run with --tensors)");
        else if (c == CAT_OPTIMIZER && model_state_elsewhere(m, f))
            snprintf(rr, n, STATE_ELSEWHERE);
        else if (c == CAT_OPTIMIZER)
            snprintf(rr, n, "no optimizer state at the peak");
        else
            snprintf(rr, n, "none measured (classified elsewhere, or not reached)");
    }
}

/* ema_said: the weights' rows say they hold an EMA's copy (the formulas count the model's own) */
static void ema_said(model_result *m)
{
    char *why[2] = {m->reason_doc[CAT_PARAMETERS], m->reason_ref[CAT_PARAMETERS]};
    for (int i = 0; i < 2 && m->ema_said[0]; i++) {
        size_t w = strlen(why[i]), n = sizeof m->reason_doc[CAT_PARAMETERS];
        if (w)
            snprintf(why[i] + w, n - w, "; the row also holds %s", m->ema_said);
    }
}

void model_explain(model_result *m, const run_facts *f)
{
    if (!m->formula_ok) {
        explain_generic(m, f);
        return;
    }
    uint64_t total = cat_breakdown_total(&m->measured);
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t me = m->measured.bytes[c], d = m->doc.bytes[c], r = m->refined.bytes[c];
        char *rd = m->reason_doc[c], *rr = m->reason_ref[c];
        size_t n = sizeof m->reason_doc[c];
        rd[0] = rr[0] = '\0';
        /* immaterial rows (all under 2 % of the peak and 64 MiB) get no explanation, but for
         * a forward's tensors freed before this peak (their 0.00 is the moment's, not theirs) */
        uint64_t big = me > d ? (me > r ? me : r) : (d > r ? d : r);
        if ((double)big < 0.02 * (double)total && big < (64ull << 20) && !forward_gone(f, c, me, r))
            continue;
        int off_doc =
            (d > 0 || me > 0) && fabs((double)me - (double)d) > 0.25 * (double)(d > 0 ? d : me);
        int off_ref =
            (r > 0 || me > 0) && fabs((double)me - (double)r) > 0.25 * (double)(r > 0 ? r : me);
        if (off_doc && !f->tensor_mode && me == 0 && (c == CAT_GRADIENTS || c == CAT_OPTIMIZER))
            /* segments are counted by the phase that forced them: no tensor is seen */
            snprintf(rd, n, "%s (run with --tensors)",
                     c == CAT_GRADIENTS
                         ? "segment mode cannot tell gradients from backward scratch: both are "
                           "under 'backward'"
                         : "segment mode sees only new segments: optimizer state placed in "
                           "cached ones is not attributed");
        else if (off_doc)
            explain_doc(m, f, c, me, rd, n);
        if (off_ref)
            explain_ref(m, f, c, me, r, rr, n);
    }
    ema_said(m);
}
