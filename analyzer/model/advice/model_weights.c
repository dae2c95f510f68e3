/* model_weights.c — what element size the trace gives the weights (model_trace.h): fp32 compute
 * where the forward's outputs or whole steps of trained weights with no copy say it, the weights
 * that take no gradient whose element size nothing in the trace gives, and what fp32 weights are
 * in the formula's reasons. */
#include "model_trace.h"

#include "cards.h"

#include <stdio.h>
#include <string.h>

/* model_fp32_compute: an eager run, every tensor seen (category peaks measured), whose first
 * forward made its logits in fp32 only (or, a vision transformer's, its first token tensor in
 * 4-byte elements; or, out of memory before its logits, ran its attention) from fp32 weights, and
 * that never made a 16-bit copy of a weight (autocast makes them) nor used a GradScaler: no mixed
 * precision. Its evidence in words, or NULL. */
#define FP32_SAID "no mixed precision, fp32 compute" /* (true of a training and an evaluation) */
/* (said from the trained weights alone: their gradients' size) */
static const char FP32_WEIGHTS[] = "fp32 weights and no 16-bit copy of a weight matrix over the "
                                   "run's optimizer steps (autocast makes one of each weight it "
                                   "uses): " FP32_SAID;
const char *model_fp32_compute(const run_facts *f, int *by_weights)
{
    *by_weights = 0;
    const infer_result *ir = f->inferred;
    /* autocast over fp32 weights copies a d×d matrix at least (2·d² B; no width, a U-Net's: 1
     * MiB); a smaller "copy" is a tensor the program converted itself (a Llama's position ids
     * .float(), 4 KiB, beside a LoRA B of kv×8 fp32; an fp32 U-Net's 256 B had said nothing) */
    uint64_t d = ir && ir->v[INFER_n_embd].known ? (uint64_t)ir->v[INFER_n_embd].value : 0;
    uint64_t copies = f->cat_peak[CAT_AUTOCAST], matrix = d ? 2 * d * d : (uint64_t)1 << 20;
    if (!ir || !f->has_cat_peaks || !f->casts_visible || copies >= matrix || f->grad_scaler ||
        f->compile_frames != MODEL_COMPILE_NOT_SEEN ||
        (ir->v[INFER_param_dtype_bytes].known && ir->v[INFER_param_dtype_bytes].value != 4))
        return NULL;
    const infer_value *lg = &ir->v[INFER_logits_dtype_bytes], *tk = &ir->v[INFER_token_dtype_bytes],
                      *att = &ir->v[INFER_attention_kernels];
    /* (with a few bytes counted as autocast copies, smaller than a matrix: said of a matrix) */
    const char *few = "fp32 logits only in the first forward and no 16-bit copy of a weight matrix "
                      "over the run (autocast makes them; the few bytes counted as autocast copies "
                      "are smaller than one, a tensor the program converted itself): " FP32_SAID;
    if (lg->known)
        return lg->value == 4
                   ? copies ? few
                            : "fp32 logits only in the first forward and no 16-bit "
                              "copy of a weight over the run (autocast makes them): " FP32_SAID
                   : NULL;
    if (tk->known && tk->value == 4)
        return "fp32 token activations in the first forward (B from the images beside them) and "
               "no 16-bit copy of a weight over the run (autocast makes them): " FP32_SAID;
    /* no logits (an OOM before them): its attention ran, so its projections did, and autocast
     * would have copied their weights */
    if (f->has_oom && att->known && att->value > 0)
        return "its first forward's attention ran before the out-of-memory error with no 16-bit "
               "copy of a weight (autocast makes one for each projection): " FP32_SAID;
    /* no logits, tokens nor attention (a GAN, a CNN): whole steps of fp32 weights with no copy
     * (a GAN's said "dtype unknown" beside "fp32 parameters") */
    if (f->iterations > 0 && ir->v[INFER_param_dtype_bytes].known)
        return *by_weights = 1, FP32_WEIGHTS;
    return NULL;
}

int model_param_dtype_measured(const run_facts *f)
{
    const infer_value *v = f->inferred ? &f->inferred->v[INFER_param_dtype_bytes] : NULL;
    return (v && v->known && v->value == 2) || (f->has_cat_peaks && f->cat_peak[CAT_AUTOCAST] > 0);
}

/* cast16_beside: of the cast bytes, those beside the trained weights' (trained, at e B an
 * element): none where they are the trained ones, 16-bit, within 1/64 (a QLoRA's LoRA layers
 * .to(bfloat16): had been counted twice, "the 16.78 M trained weights at 2 B, 16.78 M at 2 B
 * made by casts to 16 bits", their 32 MiB taken from the frozen base's bytes) */
static uint64_t cast16_beside(uint64_t cast, uint64_t trained, uint64_t e)
{
    return e == 2 && cast && cast + trained / 64 >= trained && cast <= trained + trained / 64
               ? 0
               : cast;
}

uint64_t model_weights_untyped(const model_result *m, const run_facts *f)
{
    const infer_result *ir = f->inferred;
    const infer_value *ev = ir ? &ir->v[INFER_param_dtype_bytes] : NULL;
    uint64_t tr = m->rec.trainable, e = (uint64_t)model_trained_bytes(m);
    uint64_t me = f->has_cat_peaks ? f->cat_peak[CAT_PARAMETERS] : f->at_peak.bytes[CAT_PARAMETERS];
    uint64_t ema = f->ema_at_peak > f->ema_at_tensors ? f->ema_at_peak : f->ema_at_tensors;
    uint64_t kept =
        f->copies_at_peak > f->copies_at_tensors ? f->copies_at_peak : f->copies_at_tensors;
    int by_weights;
    const char *fp32 = model_fp32_compute(f, &by_weights);
    /* the forward's own outputs fp32 with no copy (its logits, its tokens) say the frozen
     * weights that made them fp32 too (a LoRA over an fp32 base, no autocast) */
    /* (not where the trained count is a lower bound: the rest may train, a copy's count of two
     * trained encoders of one shape had said the second takes no gradient) */
    if (!f->tensor_mode || !ir || !tr || tr > UINT64_MAX / 8 || m->rec.trainable_lower ||
        !m->params_trace || ir->master_bytes ||
        (ev->known && ev->value == 2 && !ir->elem_by_head) || (fp32 && !by_weights) ||
        f->fwd0_copies_made > UINT64_MAX / 4)
        return 0;
    /* typed: the trained weights, an EMA's copy of them, the copies the program keeps (told
     * apart: classify.c), and the weights beyond the trained ones that autocast copied in the
     * first forward (fp32, twice a copy: a LoRA's base, a teacher's) */
    uint64_t copied = 2 * f->fwd0_copies_made, typed = tr * e;
    /* where autocast copied frozen weights (fp32), those it never casts beside them (the
     * embeddings looked up, the norms: a LoRA's fp32 base keeps 9 % so) are that model's too:
     * only a larger rest is another's */
    unsigned share = copied > typed + typed / 16 ? 4 : 16;
    /* ... and those the program's lines cast to 16 bits (2 B an element: a ControlNet's frozen
     * U-Net, VAE and text encoder under weight_dtype) */
    const infer_value *cv = &ir->v[INFER_cast16_bytes];
    uint64_t cast = cast16_beside(cv->known && cv->value > 0 ? (uint64_t)cv->value : 0, tr * e, e);
    typed = (copied > typed ? copied : typed) + ema + kept + cast;
    if (me <= typed || (me - typed) * share < me)
        return 0;
    return me - tr * e - ema - kept - cast; /* (all that takes no gradient, as its words say) */
}

uint64_t model_untyped_set(model_result *m, const run_facts *f)
{
    uint64_t pk = f->inferred ? f->inferred->packed_bytes : 0;
    m->weights_untyped = model_weights_untyped(m, f);
    m->untyped_packed = pk <= m->weights_untyped ? pk : 0; /* (frozen: no gradient of 4 bits) */
    uint64_t qs = m->untyped_packed ? f->inferred->qstate_bytes : 0;
    m->untyped_qstate = qs <= m->weights_untyped - m->untyped_packed ? qs : 0;
    return m->weights_untyped;
}

void model_untyped_said(const model_result *m, char *out, size_t n)
{
    char ub[32], pb[32], rb[32];
    card_format_bytes(m->weights_untyped, ub, sizeof ub);
    uint64_t pk = m->untyped_packed, rest = m->weights_untyped - pk;
    if (!pk) {
        snprintf(out, n,
                 "%s of weights take no gradient, their element count not known (the trace does "
                 "not give their dtype)",
                 ub);
        return;
    }
    card_format_bytes(pk, pb, sizeof pb), card_format_bytes(rest, rb, sizeof rb);
    char qb[32] = "";
    if (m->untyped_qstate)
        card_format_bytes(m->untyped_qstate, qb, sizeof qb);
    if (!rest)
        snprintf(out, n,
                 "%s of weights take no gradient, all packed two 4-bit elements a byte (%.2f M "
                 "elements: each dequantized to 4× its bytes in the forward)",
                 ub, (double)pk * 2 / 1e6);
    else
        snprintf(out, n,
                 "%s of weights take no gradient: %s of them packed two 4-bit elements a byte "
                 "(%.2f M elements: each dequantized to 4× its bytes in the forward), the other "
                 "%s's element count not known (the trace does not give their dtype)%s%s%s",
                 ub, pb, (double)pk * 2 / 1e6, rb, m->untyped_qstate ? "; of them " : "", qb,
                 m->untyped_qstate ? " the packed weights' absmax (no parameters)" : "");
}

/* cast16_of: the bytes of the weights the program's lines cast to 16 bits (INFER_cast16_bytes),
 * at most me; 0: none */
static uint64_t cast16_of(const run_facts *f, uint64_t me)
{
    const infer_value *cv = f->inferred ? &f->inferred->v[INFER_cast16_bytes] : NULL;
    uint64_t c = cv && cv->known && cv->value > 0 ? (uint64_t)cv->value : 0;
    return c < me ? c : me;
}

int model_untyped_words(const model_result *m, const run_facts *f, uint64_t me, char *out, size_t n)
{
    int e = model_trained_bytes(m);
    uint64_t tb = m->rec.trainable * (uint64_t)e + m->ema_measured, cast = cast16_of(f, me);
    uint64_t beside = cast16_beside(cast, m->rec.trainable * (uint64_t)e, (uint64_t)e);
    if (!m->weights_untyped || me <= tb + beside)
        return 0;
    char ema[136] = "", c16[240] = "", own[200] = "";
    if (m->ema_said[0])
        snprintf(ema, sizeof ema, ", %s", m->ema_said);
    if (beside) /* (those the program's lines cast to 16 bits: their count is known) */
        snprintf(c16, sizeof c16, ", %.2f M at 2 B made by casts to 16 bits (%s)",
                 (double)cast / 2e6, f->inferred->cast16_where);
    else if (cast) /* (they are the trained ones) */
        snprintf(own, sizeof own, ": made by casts to 16 bits (%s)", f->inferred->cast16_where);
    cast = beside;
    uint64_t rest = me - tb - cast, pk = m->untyped_packed < rest ? m->untyped_packed : 0;
    char packed[160] = ""; /* (packed 4-bit: 2 elements a byte, their count known) */
    if (pk)
        snprintf(packed, sizeof packed,
                 ": %.2f GiB of them packed two 4-bit elements a byte (%.2f M elements), the "
                 "other %.2f GiB",
                 (double)pk / 1073741824.0, (double)pk * 2 / 1e6,
                 (double)(rest - pk) / 1073741824.0);
    snprintf(out, n,
             "the %.2f M trained weights at %d B (%s, as their gradients%s)%s%s, and %.2f GiB that "
             "take no gradient%s%s whose element size the trace does not give (frozen weights, "
             "buffers%s)",
             (double)m->rec.trainable / 1e6, e, e == 2 ? "16-bit" : "fp32", own, ema, c16,
             (double)rest / 1073741824.0, packed, pk ? "" : ",",
             ema[0] ? "" : ", or a copy the program keeps");
    return 1;
}

/* model_fp32_weights (model_trace.h): what fp32 weights are in this run: master weights only
 * where autocast computes in 16 bits from them and they are all trained (not for fp32 compute,
 * where nothing copies them; nor a LoRA base or a frozen teacher, which no optimizer updates).
 * Trained or not is the run's share of trained elements (formula_train_frac), not the formula's
 * count against the trace's: a ViT's patch and position embeddings are in the trace's P and not
 * in the formula's blocks, and every weight of it trained had read "not all trained"; nor where
 * the weights without a gradient may be ones a step did not reach (recognize.h's rest_untold:
 * an MoE's expert no token was routed to, "with a gradient" then). */
const char *model_fp32_weights(const model_result *m, const gpt_shape *s)
{
    if (!config_known(&m->cfg, CFG_dtype))
        return "fp32 weights";
    if (s->dtype_bytes >= 4)
        return "fp32 weights, fp32 compute: no mixed precision";
    if (!m->frozen_params && m->rec.rest_untold && formula_train_frac(s) < 0.99)
        return "fp32 weights, not all with a gradient; autocast computes in 16 bits";
    if (m->frozen_params || formula_train_frac(s) < 0.99)
        return "fp32 weights, not all trained; autocast computes in 16 bits";
    return "fp32 master weights; autocast computes in 16 bits";
}

int model_cast16_words(const model_result *m, const run_facts *f, uint64_t me, char *out, size_t n)
{
    const infer_result *ir = f->inferred;
    uint64_t cast = cast16_of(f, me), ema = m->ema_said[0] ? m->ema_measured : 0;
    if (!cast || !f->tensor_mode || m->weights_untyped) /* (untyped: model_untyped_words) */
        return 0;
    uint64_t rest = me - cast > ema ? me - cast - ema : 0;
    int pb = formula_param_bytes(&m->shape); /* (the others': their sizes', else 4 assumed) */
    uint64_t pk = ir->packed_bytes < rest ? ir->packed_bytes : 0; /* (2 elements a byte) */
    rest -= pk;
    uint64_t qs = pk && ir->qstate_bytes < rest ? ir->qstate_bytes : 0; /* (no parameters) */
    rest -= qs;
    int trained = m->rec.trainable && !m->rec.trainable_lower && model_trained_bytes(m) == pb &&
                  rest == m->rec.trainable * (uint64_t)pb; /* (they are the trained ones) */
    char tail[320] = "";
    if (rest && trained)
        snprintf(tail, sizeof tail, ", the %.2f M trained weights at %d B (%s, as their gradients)",
                 (double)m->rec.trainable / 1e6, pb, pb == 2 ? "16-bit" : "fp32");
    else if (rest)
        snprintf(tail, sizeof tail, ", %.2f M at %d B (%s)", (double)rest / (pb * 1e6), pb,
                 pb == 2 ? "16-bit by their sizes" : "fp32 assumed: not made by such a cast");
    if (pk)
        snprintf(tail + strlen(tail), sizeof tail - strlen(tail),
                 ", %.2f M packed two 4-bit elements a byte (dequantized in the forward)",
                 (double)pk * 2 / 1e6);
    if (qs)
        snprintf(tail + strlen(tail), sizeof tail - strlen(tail), ", not their absmax (%.1f MiB)",
                 (double)qs / 1048576.0);
    if (ema)
        snprintf(tail + strlen(tail), sizeof tail - strlen(tail), ", plus %s", m->ema_said);
    snprintf(out, n,
             "%.2f M elements in the weights made before %s (parameters, and buffers if any): "
             "%.2f M at 2 B made by casts to 16 bits (%s)%s",
             (double)cast / 2e6 + (double)rest / (pb * 1e6) + (double)pk * 2 / 1e6,
             m->shape.no_training ? "the forwards" : "training", (double)cast / 2e6,
             ir->cast16_where, tail);
    return 1;
}

int model_mixed_words(const model_result *m, const run_facts *f, char *out, size_t n)
{
    const infer_result *ir = f->inferred;
    uint64_t P = m->params_trace, pk = ir ? ir->packed_bytes : 0, f32 = ir ? ir->fp32_bytes : 0;
    if (!P || !(pk || f32) || !f->tensor_mode || ir->master_bytes ||
        formula_param_bytes(&m->shape) != 2 || P < 2 * pk + f32 / 4)
        return 0;
    uint64_t rest = P - 2 * pk - f32 / 4; /* (at 2 B each) */
    char parts[320] = "";
    if (f32)
        snprintf(parts, sizeof parts, ", %.2f M at 4 B (fp32: the trained adapters)",
                 (double)f32 / 4e6);
    if (rest)
        snprintf(parts + strlen(parts), sizeof parts - strlen(parts), ", %.2f M at 2 B (%s)",
                 (double)rest / 1e6, ir->elem_by_head ? "16 bits assumed" : "16-bit");
    if (pk)
        snprintf(parts + strlen(parts), sizeof parts - strlen(parts),
                 ", %.2f M packed two 4-bit elements a byte%s", (double)pk * 2 / 1e6,
                 ir->qstate_bytes ? ", not their absmax" : "");
    if (pk && ir->qstate_bytes)
        snprintf(parts + strlen(parts), sizeof parts - strlen(parts), " (%.1f MiB)",
                 (double)ir->qstate_bytes / 1048576.0);
    snprintf(out, n,
             "%.2f M elements in the trace's weight tensors (parameters, and any buffers) of "
             "several sizes: %s; the basic formula assumes 2 B each",
             (double)P / 1e6, parts + 2);
    return 1;
}

uint64_t model_params_at(const model_result *m, const run_facts *f, int pb)
{
    const infer_value *cv = f->inferred ? &f->inferred->v[INFER_cast16_bytes] : NULL;
    uint64_t P = m->params_trace, c = cv && cv->known && cv->value > 0 ? (uint64_t)cv->value : 0;
    return !c || pb != 4 || P < c / 2 ? P : P - c / 2 + c / 4;
}
