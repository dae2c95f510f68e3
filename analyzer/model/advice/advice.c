/* advice.c — calibration of the refined formula to a measured run and what-if predictions
 * (advice.h); the documents' list of fixes: advice_candidates.c; OOM causes: advice_cause.c. */
#include "advice.h"

#include <stdio.h>
#include <string.h>

#include "bytes_sat.h"

/* Categories the refined formula predicts; the rest are carried over or derived. */
static const category model_cats[] = {CAT_PARAMETERS, CAT_GRADIENTS,   CAT_OPTIMIZER,
                                      CAT_AUTOCAST,   CAT_ACTIVATIONS, CAT_LOGITS,
                                      CAT_ATTENTION,  CAT_INPUTS,      CAT_BACKWARD};
#define NMODEL (sizeof model_cats / sizeof model_cats[0])
static const category fixed_cats[] = {CAT_TEMPORARIES, CAT_CONTEXT, CAT_KERNEL_CODE,
                                      CAT_EXTERNAL,    CAT_UNKNOWN, CAT_WORKSPACE};
#define NFIXED (sizeof fixed_cats / sizeof fixed_cats[0])

/* driver: what a category scales with, for bytes the formula does not predict at all; with no
 * formula (s->generic), the batch's share with the micro-batch and the weights not at all. */
static double driver(const gpt_shape *s, category c)
{
    double N = (double)s->B * (double)s->T;
    if (s->generic)
        switch (c) {
        case CAT_ACTIVATIONS:
        case CAT_BACKWARD:
        case CAT_LOGITS:
        case CAT_ATTENTION:
        case CAT_INPUTS:
        case CAT_TEMPORARIES:
            return (double)s->B;
        case CAT_OPTIMIZER: /* its state per parameter (another optimizer: 8-bit AdamW) */
            return formula_opt_bpp(s);
        default:
            return 1;
        }
    switch (c) {
    case CAT_PARAMETERS:
    case CAT_GRADIENTS:
        return (double)formula_params_exact(s);
    case CAT_OPTIMIZER:
        return (double)formula_params_exact(s) * formula_opt_bpp(s);
    case CAT_AUTOCAST:
        return (double)formula_params_matmul(s);
    case CAT_ACTIVATIONS:
    case CAT_BACKWARD:
        return N * (double)s->d * (double)s->L;
    case CAT_LOGITS:
        return N * (double)s->V;
    case CAT_ATTENTION:
        return (double)s->B * s->H * (double)s->T * s->T * s->L;
    case CAT_INPUTS:
    case CAT_TEMPORARIES:
        return N;
    default:
        return 1;
    }
}

/* scale: driver(to) / driver(from) for category k; 1 when the driver of from is 0 (a size the
 * run does not give, e.g. heads for attention: nothing to scale by). */
static double scale(const gpt_shape *to, const gpt_shape *from, category k)
{
    double a = driver(to, k), b = driver(from, k);
    return b > 0 ? a / b : 1.0;
}

void advice_calib_default(model_calib *c, const gpt_shape *s)
{
    memset(c, 0, sizeof *c);
    c->measured_shape = *s;
    formula_refined(s, &c->refined);
    for (int i = 0; i < CAT_COUNT; i++)
        c->ratio[i] = 1.0;
    c->fixed[CAT_CONTEXT] = FORMULA_CONTEXT_BYTES;
    c->fixed[CAT_WORKSPACE] = FORMULA_CUBLAS_BYTES; /* (a row of its own, as a trace shows it) */
    c->cache_fraction = c->later_cache_fraction = -1;
}

void advice_calibrate(model_calib *c, const gpt_shape *s, const cat_breakdown *measured,
                      int partial, int cut)
{
    advice_calib_default(c, s);
    c->calibrated = 1, c->partial = partial, c->oom_later = partial && !cut;
    c->measured = *measured;
    uint64_t model_meas = 0, model_ref = 0;
    for (size_t i = 0; i < NMODEL; i++) {
        model_meas += measured->bytes[model_cats[i]];
        model_ref += c->refined.bytes[model_cats[i]];
    }
    for (size_t i = 0; i < NFIXED; i++)
        c->fixed[fixed_cats[i]] = measured->bytes[fixed_cats[i]];
    uint64_t unknown = measured->bytes[CAT_UNKNOWN], temps = measured->bytes[CAT_TEMPORARIES];
    uint64_t tensor = model_meas + temps + unknown + measured->bytes[CAT_WORKSPACE];
    if (unknown + temps > model_meas && model_ref > 0) {
        /* Most tensor bytes unclassified (segment mode): one ratio for all of them. */
        c->global = 1;
        double r = (double)tensor / (double)model_ref;
        if (cut && r < 1)
            r = 1;
        for (size_t i = 0; i < NMODEL; i++)
            c->ratio[model_cats[i]] = r;
        c->fixed[CAT_UNKNOWN] = 0;
        c->fixed[CAT_TEMPORARIES] = 0;
        c->fixed[CAT_WORKSPACE] = 0;
    } else {
        /* workspaces are fixed; backward scratch beyond them grows with the tokens */
        uint64_t ws = measured->bytes[CAT_WORKSPACE] ? 0 : 64ull << 20;
        if (temps > ws) {
            c->fixed[CAT_TEMPORARIES] = ws;
            double per = driver(s, CAT_TEMPORARIES);
            c->temp_per_token = per > 0 ? (double)(temps - ws) / per : 0;
        }
        /* a complete compiled run's weight casts (formula_compiled_casts): kept, no ratio */
        uint64_t casts = partial || measured->bytes[CAT_AUTOCAST] ? 0 : formula_compiled_casts(s);
        c->compiled_casts = casts < measured->bytes[CAT_ACTIVATIONS] ? casts : 0;
        for (size_t i = 0; i < NMODEL; i++) {
            category k = model_cats[i];
            uint64_t m = measured->bytes[k], r = c->refined.bytes[k];
            if (k == CAT_ACTIVATIONS)
                m -= c->compiled_casts;
            double q = m > 0 && r > 0 ? (double)m / (double)r : 1.0;
            /* An OOM before the peak leaves growing categories incomplete (not one in a later
             * step: a Llama's logits held at 12*B*T*V beside KV copies freed before: +5.7 %) */
            if (cut && q < 1 && k != CAT_PARAMETERS)
                q = 1.0;
            c->ratio[k] = q;
        }
    }
    c->cache_fraction = tensor > 0 ? (double)measured->bytes[CAT_CACHE] / (double)tensor : 0;
}

/* weights_of: the fp32 gradients (the parameters' bytes) or the optimizer's state (AdamW:
 * twice) of the trainable parameters at shape s, from the parameters the run measured rather
 * than the GPT formula's count (a Llama's 134 M is not the formula's 110 M), less an EMA's copy
 * of them; ref where nothing was measured. */
static double weights_of(const model_calib *c, const gpt_shape *s, category k, double ref)
{
    uint64_t p = c->measured.bytes[CAT_PARAMETERS] > c->oom_live.bytes[CAT_PARAMETERS]
                     ? c->measured.bytes[CAT_PARAMETERS]
                     : c->oom_live.bytes[CAT_PARAMETERS];
    p = p > c->ema ? p - c->ema : 0;       /* an EMA's copy of them trains nothing */
    p = p > c->frozen ? p - c->frozen : 0; /* nor does a frozen model beside */
    if (!p || !c->calibrated || c->global || !c->weights_exact ||
        (k != CAT_GRADIENTS && k != CAT_OPTIMIZER))
        return ref;
    /* gradients of the trainable parameters in their dtype; the optimizer's state per trainable
     * parameter as recognized (AdamW 8 B: twice the parameters' 4; 4 B of 16-bit ones' 2) */
    double per = k == CAT_OPTIMIZER ? formula_opt_bpp(s) / formula_param_bytes(s)
                 : s->trained32     ? 2.0 /* (fp32 adapters' gradients beside 16-bit weights) */
                                    : 1.0;
    double frac = k == CAT_GRADIENTS && s->grads_frac > 0 && s->grads_frac < 1 && !s->lora_rank
                      ? s->grads_frac /* (steps of different weights: the largest set's) */
                      : formula_train_frac(s);
    return advice_weights_at(c, s, p) * per * frac * scale(s, &c->measured_shape, CAT_PARAMETERS);
}

/* unseen_weights: gradients or optimizer state the run had not created yet at its peak, where
 * the formula has them at shape s's (weights_of); none where it has none (the gradients of one
 * micro-step per optimizer step: set to None after each step, made after the peak). */
static double unseen_weights(const model_calib *c, const gpt_shape *s, category k, uint64_t ref)
{
    /* no formula: the optimizer's state of the parameters measured (AdamW's 8 B each unless the
     * optimizer was recognized), alive through every forward after the first step; gradients
     * only as kept_grads keeps them (zero_grad sets them to None before the next forward) */
    if (!ref && s->generic && k == CAT_OPTIMIZER) /* (none before the first step: an anchor) */
        return s->iteration0 ? 0 : weights_of(c, s, k, 0);
    return ref ? weights_of(c, s, k, (double)ref) : 0;
}

/* kept_grads: v, the gradients at shape s's peak: with more than one micro-step a step at least
 * every trainable parameter's (alive through the last micro-step), and so at any where the loop
 * keeps them through the next forward (c->grads_kept); with one, where the run accumulated (its
 * peak held them), the formula's (Llama B=2, A=2 had said A=1 +20.8 %) */
static double kept_grads(const model_calib *c, const gpt_shape *s, double v, double formula)
{
    if (c->grads_kept && !s->no_training) { /* (a loop that zeroes them after the forward) */
        double all = weights_of(c, s, CAT_GRADIENTS, 0);
        return all > v ? all : v;
    }
    if (s->A <= 1)
        return c->measured_shape.A > 1 && !c->measured_shape.accum_unknown && !s->accum_unknown
                   ? formula
                   : v;
    double all = weights_of(c, s, CAT_GRADIENTS, 0);
    return all > v ? all : v;
}

/* without_kv: v, category k's bytes predicted at shape s from have (the measured breakdown, or
 * the state at the failure), less the KV cache's share of them (kv) when s turns the cache off:
 * the cache grows with the tokens and the blocks as what it sits in does */
static double without_kv(const gpt_shape *s, const cat_breakdown *have, const cat_breakdown *kv,
                         int k, double v)
{
    if (!s->no_kv_cache || !kv->bytes[k] || !have->bytes[k])
        return v;
    double f = (double)kv->bytes[k] / (double)have->bytes[k];
    return v * (1.0 - (f > 1.0 ? 1.0 : f));
}

/* kv_with_checkpointing: s with transformers' KV cache off where s turns activation
 * checkpointing on over a run that filled one: Hugging Face's models set use_cache to False in a
 * training forward under gradient checkpointing, so the cache is not made (a Llama 400M Trainer
 * run's 768 MiB had been kept beside checkpointing: 8.67 GiB of tensors predicted, 7.92 taken) */
static void kv_with_checkpointing(const model_calib *c, gpt_shape *s)
{
    if (s->checkpointing && !c->measured_shape.checkpointing &&
        (cat_breakdown_total(&c->kv) > 0 || cat_breakdown_total(&c->kv_oom) > 0))
        s->no_kv_cache = 1;
}

/* predict_raw: s's step (steady: with the optimizer's state, after the first step, unless the
 * program keeps none between its steps: state_not_kept; else at s's own iteration0) */
static void predict_raw(const model_calib *c, const gpt_shape *s, prediction *out, int steady)
{
    memset(out, 0, sizeof *out);
    gpt_shape s2 = *s;
    if (steady)
        s2.iteration0 = c->state_not_kept;
    kv_with_checkpointing(c, &s2);
    cat_breakdown ref;
    formula_refined(&s2, &ref);
    uint64_t tensor = 0;
    for (size_t i = 0; i < NMODEL; i++) {
        category k = model_cats[i];
        double v;
        int weights =
            k == CAT_PARAMETERS || k == CAT_GRADIENTS || k == CAT_OPTIMIZER || k == CAT_AUTOCAST;
        /* (measured after the forward: what a forward holds of it is not that moment's) */
        int gone = advice_after_forward_gone(c, k) || (k == CAT_OPTIMIZER && c->state_not_kept);
        /* (a forward cut short: at least what an earlier forward held, calib.fwd_whole) */
        uint64_t mk = c->measured.bytes[k] > c->fwd_whole.bytes[k] ? c->measured.bytes[k]
                                                                   : c->fwd_whole.bytes[k];
        if (c->calibrated && !c->global && weights && mk > 0 && !gone) {
            /* fixed parts: what the run kept, whatever the batch (scaled with the weights; a
             * frozen model's beside the one trained, whatever the shape) */
            uint64_t fz = k == CAT_PARAMETERS && mk > c->frozen ? c->frozen : 0;
            v = (double)(mk - fz) * scale(&s2, &c->measured_shape, k) + (double)fz;
        } else if (!c->calibrated || c->global || c->refined.bytes[k] > 0 ||
                   c->measured.bytes[k] == 0 || gone) {
            double q = c->ratio[k];
            /* compile turned off: what compile saved below the formula (its fused loss, its
             * recomputation) does not carry over to eager, so no ratio below 1 either; nor one
             * above it where the compiled run was held to a stand-in block and eager has a
             * measured one of its own (HF GPT-2 compiled at B=4, activations 1.48x the stand-in,
             * had been predicted eager at 9.47 GiB of tensors; eager took 7.56). nanoGPT's
             * compiled block is its own, and its ratio above 1 is kept: its eager B=8 ran out of
             * memory past what its eager formula alone predicts */
            if (c->calibrated && c->measured_shape.compile && !s2.compile &&
                (k == CAT_ACTIVATIONS || k == CAT_LOGITS || k == CAT_ATTENTION) &&
                (q < 1 ||
                 (formula_hf_gpt2_block(&s2) && !formula_hf_gpt2_block(&c->measured_shape))))
                q = 1;
            /* another precision: what the loss kept beyond the formula in one is not the other's
             * (nanoGPT's fp32 loss 16*N*V, its bf16 one the formula's 12) */
            if (c->calibrated && s2.dtype_bytes != c->measured_shape.dtype_bytes && k == CAT_LOGITS)
                q = 1;
            v = weights ? unseen_weights(c, &s2, k, ref.bytes[k]) * q : (double)ref.bytes[k] * q;
            /* its weight casts, with the weights, where s2 makes them (eager: autocast copies) */
            if (k == CAT_ACTIVATIONS && c->compiled_casts && formula_compiled_casts(&s2))
                v += (double)c->compiled_casts * scale(&s2, &c->measured_shape, CAT_AUTOCAST);
        } else { /* measured, not in the formula: scaled (under 4 B a sample: a loss's scalars) */
            int scalars = c->measured.bytes[k] < 4 * c->measured_shape.B;
            /* (the program's data among the inputs kept whole: a replay buffer; the backward's
             * tensors of a weight's size: a table's dense gradient) */
            uint64_t dt = k == CAT_INPUTS && c->measured.bytes[k] >= c->data ? c->data
                          : k == CAT_BACKWARD && c->measured.bytes[k] >= c->bwd_weight
                              ? c->bwd_weight
                              : 0;
            v = (double)(c->measured.bytes[k] - dt) *
                    (scalars ? 1 : scale(&s2, &c->measured_shape, k)) +
                (double)dt;
        }
        v = k == CAT_GRADIENTS ? kept_grads(c, &s2, v, (double)ref.bytes[k]) : v;
        v = without_kv(&s2, &c->measured, &c->kv, k, v);
        out->by_cat.bytes[k] = advice_bytes(v);
        tensor += out->by_cat.bytes[k];
    }
    for (size_t i = 0; i < NFIXED; i++)
        out->by_cat.bytes[fixed_cats[i]] = c->fixed[fixed_cats[i]];
    out->by_cat.bytes[CAT_TEMPORARIES] =
        advice_bytes((double)out->by_cat.bytes[CAT_TEMPORARIES] +
                     c->temp_per_token * driver(s, CAT_TEMPORARIES));
    static const category tensor_fixed[] = {CAT_TEMPORARIES, CAT_UNKNOWN, CAT_WORKSPACE};
    for (size_t i = 0; i < sizeof tensor_fixed / sizeof tensor_fixed[0]; i++) {
        category k = tensor_fixed[i];
        out->by_cat.bytes[k] =
            advice_bytes(without_kv(&s2, &c->measured, &c->kv, k, (double)out->by_cat.bytes[k]));
        tensor += out->by_cat.bytes[k];
    }
    advice_with_cache(c, &s2, out, tensor);
}

/* predict_step: the run's optimizer step (c->step) moved to shape s: the weights, their
 * gradients, the optimizer's state and autocast's copies as the forward's prediction scales them,
 * the temporaries the step makes (weight-sized: a foreach update's) with the weights, what
 * batch-sized was still alive with its driver, workspaces and unknown bytes as they were there,
 * the rest carried; the allocator cache in the share the run measured. */
static void predict_step(const model_calib *c, const gpt_shape *s, prediction *out)
{
    memset(out, 0, sizeof *out);
    gpt_shape s2 = *s;
    s2.iteration0 = 0;
    const gpt_shape *m = &c->measured_shape;
    uint64_t tensor = 0;
    for (int k = 0; k < CAT_COUNT; k++) {
        double v = (double)c->step.bytes[k];
        switch ((category)k) {
        case CAT_PARAMETERS: {
            double fz = c->step.bytes[k] > c->frozen ? (double)c->frozen : 0; /* kept whole */
            v = (v - fz) * scale(&s2, m, CAT_PARAMETERS) + fz;
            break;
        }
        case CAT_TEMPORARIES:
            v *= scale(&s2, m, CAT_PARAMETERS);
            break;
        case CAT_INPUTS: { /* (the program's data kept whole) */
            double dt = v > (double)c->data ? (double)c->data : 0;
            v = (v - dt) * scale(&s2, m, CAT_INPUTS) + dt;
            break;
        }
        case CAT_BACKWARD: { /* (a weight's size kept whole: a table's dense gradient) */
            double bw = v > (double)c->bwd_weight ? (double)c->bwd_weight : v;
            v = (v - bw) * scale(&s2, m, CAT_BACKWARD) + bw;
            break;
        }
        case CAT_GRADIENTS:
        case CAT_OPTIMIZER:
        case CAT_AUTOCAST:
        case CAT_ACTIVATIONS:
        case CAT_LOGITS:
        case CAT_ATTENTION:
            v *= scale(&s2, m, (category)k);
            break;
        case CAT_CONTEXT:
        case CAT_KERNEL_CODE:
        case CAT_EXTERNAL:
            out->by_cat.bytes[k] = c->fixed[k];
            continue;
        case CAT_CACHE:
            continue;
        default: /* workspaces, unknown: as the step had them */
            break;
        }
        out->by_cat.bytes[k] = advice_bytes(v);
        tensor += out->by_cat.bytes[k];
    }
    advice_with_cache(c, &s2, out, tensor);
}

void advice_calibrate_oom(model_calib *c, const cat_breakdown *live, uint64_t request, int tight)
{
    c->has_oom = 1;
    c->oom_tight = tight;
    c->oom_live = *live;
    c->oom_request = request;
}

/* predict_oom: the state at the failure moved to shape s: the parts that grow with the
 * micro-batch (and the failed request) scaled with their driver, the weights kept (gradients
 * and optimizer state not yet created taken from the formula), the rest carried; the
 * allocator cache at its fragmentation floor (the failure squeezed it). */
static void predict_oom(const model_calib *c, const gpt_shape *s, prediction *out)
{
    memset(out, 0, sizeof *out);
    gpt_shape s2 = *s;
    s2.iteration0 = 0;
    kv_with_checkpointing(c, &s2);
    cat_breakdown ref;
    formula_refined(&s2, &ref);
    const gpt_shape *m = &c->measured_shape;
    /* the same shape with the run's modes: what compile / checkpointing changes do, the
     * formula says (a ratio per category) */
    gpt_shape sm = s2;
    sm.compile = m->compile;
    sm.checkpointing = m->checkpointing;
    sm.unfused_attention = m->unfused_attention;
    cat_breakdown refm;
    formula_refined(&sm, &refm);
    uint64_t tensor = 0;
    for (int k = 0; k < CAT_COUNT; k++) {
        uint64_t live = c->oom_live.bytes[k] > c->fwd_whole.bytes[k] ? c->oom_live.bytes[k]
                                                                     : c->fwd_whole.bytes[k];
        uint64_t have = live > c->measured.bytes[k] ? live : c->measured.bytes[k];
        double v;
        switch ((category)k) {
        case CAT_ACTIVATIONS:
        case CAT_LOGITS:
        case CAT_ATTENTION:
        case CAT_INPUTS:
        case CAT_BACKWARD:
        case CAT_TEMPORARIES:
            v = (double)live * scale(&s2, m, (category)k);
            if (k == CAT_BACKWARD) { /* (a weight's size kept whole: a table's dense gradient) */
                double bw = live > c->bwd_weight_oom ? (double)c->bwd_weight_oom : (double)live;
                v = ((double)live - bw) * scale(&s2, m, CAT_BACKWARD) + bw;
            }
            if (k == CAT_ACTIVATIONS && c->act_whole > 1) /* the rest of a cut-short forward */
                v *= c->act_whole;
            if (k == CAT_LOGITS && c->logits_whole > v / scale(&s2, m, CAT_LOGITS))
                v = c->logits_whole * scale(&s2, m, CAT_LOGITS); /* its end, not reached */
            if (k == CAT_TEMPORARIES) /* the failed request grows with the tokens too (not
                                       * one of a weight's size: a table's dense gradient) */
                v += (double)c->oom_request * (c->request_weight ? 1.0 : scale(&s2, m, CAT_INPUTS));
            if (refm.bytes[k] > 0)
                v = v * (double)ref.bytes[k] / (double)refm.bytes[k];
            break;
        case CAT_PARAMETERS:
        case CAT_GRADIENTS:
        case CAT_OPTIMIZER:
        case CAT_AUTOCAST: {
            int freed = k == CAT_AUTOCAST && c->oom_in_step; /* (with the forward's tensors) */
            have = freed ? live : have;
            uint64_t fz = k == CAT_PARAMETERS && have > c->frozen ? c->frozen : 0; /* kept whole */
            v = have > 0 || freed ? (double)(have - fz) * scale(&s2, m, (category)k) + (double)fz
                                  : unseen_weights(c, &s2, (category)k, ref.bytes[k]);
            if (k == CAT_GRADIENTS)
                v = kept_grads(c, &s2, v, (double)ref.bytes[k]);
            break;
        }
        case CAT_CACHE:
            continue;
        default:
            v = (double)have;
        }
        out->by_cat.bytes[k] = advice_bytes(without_kv(&s2, &c->oom_live, &c->kv_oom, k, v));
        if (category_tensor((category)k))
            tensor += out->by_cat.bytes[k];
    }
    double floor = c->lower ? 0 : advice_cache_floor(&s2, c->expandable);
    out->by_cat.bytes[CAT_CACHE] = advice_bytes((double)tensor * floor);
    out->tensor_bytes = tensor;
    out->reserved_bytes = tensor + out->by_cat.bytes[CAT_CACHE];
    out->peak_bytes = out->reserved_bytes + out->by_cat.bytes[CAT_CONTEXT] +
                      out->by_cat.bytes[CAT_KERNEL_CODE] + out->by_cat.bytes[CAT_EXTERNAL];
    out->required_bytes = out->peak_bytes;
}

/* predict_backward_end: the formula's end of the backward (formula_backward_end) at shape s
 * (steady: with the optimizer's state, as predict_raw), its weights, state and gradients the run's
 * moved to s where a run was measured; the fixed bytes the calibration carries (measured, or its
 * defaults: cuBLAS's workspace, the CUDA context) and the cache as with_cache has it. */
static void predict_backward_end(const model_calib *c, const gpt_shape *s, int steady,
                                 prediction *out)
{
    memset(out, 0, sizeof *out);
    gpt_shape s2 = *s;
    if (steady)
        s2.iteration0 = c->state_not_kept;
    formula_backward_end(&s2, &out->by_cat);
    if (c->calibrated) { /* the weights' rows as the run measured them, moved to s */
        prediction raw;
        predict_raw(c, &s2, &raw, steady);
        out->by_cat.bytes[CAT_PARAMETERS] = raw.by_cat.bytes[CAT_PARAMETERS];
        out->by_cat.bytes[CAT_OPTIMIZER] = raw.by_cat.bytes[CAT_OPTIMIZER];
        out->by_cat.bytes[CAT_INPUTS] = raw.by_cat.bytes[CAT_INPUTS];
        out->by_cat.bytes[CAT_GRADIENTS] = advice_bytes(
            weights_of(c, &s2, CAT_GRADIENTS, (double)out->by_cat.bytes[CAT_GRADIENTS]));
    }
    for (size_t i = 0; i < NFIXED; i++)
        out->by_cat.bytes[fixed_cats[i]] = c->fixed[fixed_cats[i]];
    advice_with_cache(c, &s2, out, cat_breakdown_tensors(&out->by_cat));
}

int advice_calib_state_unkept(model_calib *c)
{
    if (c->after_forward != 1 || c->state_not_kept || c->global || c->partial || c->has_oom ||
        c->lower || !c->measured.bytes[CAT_OPTIMIZER])
        return 0;
    prediction with, without;
    predict_raw(c, &c->measured_shape, &with, 1);
    c->state_not_kept = 1;
    predict_raw(c, &c->measured_shape, &without, 1);
    uint64_t meas = cat_breakdown_tensors(&c->measured);
    c->state_not_kept = with.tensor_bytes > meas && without.tensor_bytes <= meas;
    return c->state_not_kept;
}

/* predict_forward: the formula's prediction, anchored on the run's own measurement: at the
 * measured shape of a run that completed, the prediction IS the measured total; what-ifs move
 * from it by the formula's difference, so they stay monotone and never contradict the run. */
static void predict_forward(const model_calib *c, const gpt_shape *s, prediction *out)
{
    predict_raw(c, s, out, 1);
    if (c->calibrated && c->has_oom) {
        /* after the forward the failure state is the step's; before it, a lower bound */
        prediction l;
        predict_oom(c, s, &l);
        if (c->oom_tight || l.required_bytes > out->required_bytes) {
            *out = l;
            out->oom_state = 1;
        }
        /* the failed configuration needs at least what was live plus what it asked for */
        const gpt_shape *m = &c->measured_shape;
        uint64_t need = cat_breakdown_total(&c->oom_live) + c->oom_request;
        double bs = formula_opt_bpp(s), bm = formula_opt_bpp(m),
               st = c->oom_live.bytes[CAT_OPTIMIZER];
        if (bs < bm) /* less state a parameter (8-bit AdamW: 949 MiB live at a failure, 237) */
            need -= (uint64_t)st - advice_bytes(st * bs / bm);
        if (advice_same_run(s, m) && s->no_kv_cache == m->no_kv_cache && out->peak_bytes < need)
            advice_raise_by(out, need - out->peak_bytes);
        return;
    }
    /* (a moment after the forward is the optimizer step's or the backward's, not a forward's
     * to anchor on: predict_moments has the step as measured) */
    if (!c->calibrated || c->partial || c->after_forward)
        return;
    uint64_t meas = 0;
    for (int i = 0; i < CAT_COUNT; i++)
        meas = bytes_add(meas, c->measured.bytes[i]);
    /* the run as measured: a moment before the first optimizer step made any state (a one-step
     * run's tensors peaking in its first backward) is anchored without it, not scaled down by
     * the state it did not have yet (Llama 160M fp32, B=4: every what-if 0.84x) */
    prediction p0;
    gpt_shape m0 = c->measured_shape;
    m0.iteration0 = m0.iteration0 || (!c->global && c->measured.bytes[CAT_OPTIMIZER] == 0);
    predict_raw(c, &m0, &p0, 0);
    if (meas == 0 || p0.peak_bytes == 0)
        return;
    if (meas < p0.peak_bytes) {
        /* over-predicted: scaled down (an offset could leave a smaller batch above the run) */
        double f = (double)meas / (double)p0.peak_bytes;
        out->peak_bytes = advice_bytes((double)out->peak_bytes * f);
        out->reserved_bytes = advice_bytes((double)out->reserved_bytes * f);
        out->tensor_bytes = advice_bytes((double)out->tensor_bytes * f);
        out->required_bytes = advice_bytes((double)out->required_bytes * f);
        return;
    }
    advice_raise_by(out, meas - p0.peak_bytes);
}

/* backward_end_holds: the formula's end of the backward may be predicted with c: no run
 * measured (predict from a configuration), or a complete run whose own tensors' peak is at least
 * that moment at its shape (a run that never made it, a compiled graph that sums a tied head's
 * two gradients in one buffer, is not told it needs more than it took) */
static int backward_end_holds(const model_calib *c)
{
    if (!c->calibrated)
        return 1;
    const gpt_shape *m = &c->measured_shape;
    if (c->global || c->partial || c->has_oom || !c->weights_exact || m->generic)
        return 0;
    gpt_shape m0 = *m;
    m0.iteration0 = m0.iteration0 || c->measured.bytes[CAT_OPTIMIZER] == 0;
    prediction be0;
    predict_backward_end(c, &m0, 0, &be0);
    return be0.tensor_bytes <= cat_breakdown_tensors(&c->measured);
}

/* predict_moments: the forward's prediction, or where either needs more the end of the backward
 * (backward_end_holds) or the run's optimizer step moved to s (a small micro-batch: its activations
 * below the gradients, the optimizer's state and the step's temporaries; a ResNet-50's B=1 from
 * its B=128 run was 24.7 % under). At the run's own shape neither needs more than it measured. */
static void predict_moments(const model_calib *c, const gpt_shape *s, prediction *out)
{
    predict_forward(c, s, out);
    if (!s->generic && backward_end_holds(c)) { /* the formula's other moment */
        prediction be;
        predict_backward_end(c, s, 1, &be);
        if (be.required_bytes > out->required_bytes) {
            *out = be;
            out->moment = PREDICT_AT_BACKWARD_END;
        }
    }
    if (cat_breakdown_total(&c->step) == 0)
        return;
    prediction st;
    predict_step(c, s, &st);
    if (st.required_bytes > out->required_bytes) {
        *out = st;
        out->moment = PREDICT_AT_OPTIMIZER_STEP;
    }
}

/* advice_predict: predict_moments; where the run peaked in an evaluation with a batch of its own
 * (calib.eval_batch), at least that pass as it ran (keeping nothing for a backward: its batch,
 * accumulation and checkpointing the run's); use_cache=False, what the run held without it */
void advice_predict(const model_calib *c, const gpt_shape *s, prediction *out)
{
    model_calib tr; /* (the training's, not the evaluation's moment: advice_eval_training) */
    int train = advice_eval_training(c, &tr);
    predict_moments(train ? &tr : c, s, out);
    advice_own_floors(c, s, out);
    if (!c->eval_batch)
        return;
    gpt_shape t = *s;
    t.B = c->measured_shape.B, t.A = c->measured_shape.A;
    t.checkpointing = c->measured_shape.checkpointing;
    if (train || s->B != t.B || s->A != t.A || s->checkpointing != t.checkpointing) {
        prediction ev;
        predict_moments(c, &t, &ev);
        if (ev.required_bytes <= out->required_bytes)
            return; /* (the step at this micro-batch: more than the evaluation) */
        *out = ev;
    }
    if (out->moment == PREDICT_AT_STEP_PEAK) /* (as calibrated: the evaluation) */
        out->moment = PREDICT_AT_EVALUATION;
}
