/* advice_floors.c — what a run measured puts under a prediction of its own configuration
 * (advice.h: advice_own_floors): a complete run's peak, and the tensors it held at once without
 * transformers' KV cache under use_cache=False; what its own configuration is
 * (advice_same_run), a floor raised under a prediction's totals (advice_raise_by), and the low
 * end of the range a run out of memory is told from its own cache share (advice_own_cache). */
#include "advice.h"

#include <string.h>

#include "bytes_sat.h"

int advice_same_run(const gpt_shape *s, const gpt_shape *m)
{
    return s->B == m->B && s->T == m->T && s->L == m->L && s->d == m->d && s->V == m->V &&
           s->compile == m->compile && s->checkpointing == m->checkpointing;
}

void advice_raise_by(prediction *out, uint64_t add)
{
    out->peak_bytes = bytes_add(out->peak_bytes, add);
    out->reserved_bytes = bytes_add(out->reserved_bytes, add);
    out->required_bytes = bytes_add(out->required_bytes, add);
}

/* kv_floor: use_cache=False at the run's own shape, at least the tensors the run held at once
 * without its cache (Llama 400M LoRA B=4: 7.15 GiB predicted, 7.38 held with no cache tensor) */
static void kv_floor(const model_calib *c, const gpt_shape *s, prediction *out)
{
    const gpt_shape *m = &c->measured_shape;
    if (!c->no_kv_tensors || !s->no_kv_cache || m->no_kv_cache || !advice_same_run(s, m) ||
        s->A != m->A || s->dtype_bytes != m->dtype_bytes || out->tensor_bytes >= c->no_kv_tensors)
        return;
    advice_raise_by(out, c->no_kv_tensors - out->tensor_bytes);
    out->tensor_bytes = c->no_kv_tensors;
    out->kv_floor = 1;
}

/* measured_floor: a complete run's own configuration (every knob the run's) needs what it
 * measured: where the moments predicted come below its tensors there (the formula's end of the
 * backward leaves out rows a run has: a simulated GPT-2 at B=1, T=64 was predicted 217 KB below
 * the peak it took, its position table's gradient scratch), the prediction is its peak as
 * measured, the allocator cache in the share it measured */
static void measured_floor(const model_calib *c, const gpt_shape *s, prediction *out)
{
    const gpt_shape *m = &c->measured_shape;
    /* (a moment before the forward's end is anchored there already: predict_forward) */
    if (!c->after_forward || !c->calibrated || c->global || c->partial || c->has_oom || c->lower ||
        c->eval_batch || !advice_same_run(s, m) || s->A != m->A ||
        s->dtype_bytes != m->dtype_bytes || s->no_kv_cache != m->no_kv_cache ||
        s->unfused_attention != m->unfused_attention || s->opt_bpp != m->opt_bpp ||
        s->train_frac != m->train_frac)
        return;
    uint64_t meas = cat_breakdown_tensors(&c->measured);
    if (out->peak_bytes >= cat_breakdown_total(&c->measured)) /* (anchored: predict_forward) */
        return;
    memset(out, 0, sizeof *out);
    for (int k = 0; k < CAT_COUNT; k++)
        out->by_cat.bytes[k] = k == CAT_CACHE ? 0 : c->measured.bytes[k];
    static const category outside[] = {CAT_CONTEXT, CAT_KERNEL_CODE, CAT_EXTERNAL};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) /* (as the peak counts them) */
        out->by_cat.bytes[outside[i]] = c->fixed[outside[i]];
    advice_with_cache(c, s, out, meas);
    out->moment = PREDICT_AT_MEASURED;
}

/* went_on_anchor: the program went on after an error it caught at a smaller micro-batch
 * (c->went_on_B) and trained: that configuration (every other knob the run's; an accumulation
 * that keeps the gradients through the next forward only where the run's did) is what its steps
 * measured: their tensors (with the optimizer's state where it ran one step), the allocator cache
 * assumed for them, the bytes outside PyTorch, never
 * more than the process held (it ran: the Trainer at 2 on 14 GiB had been told "does not fit" at
 * 13.86 GiB where its steps held 8.66 GiB of tensors); a smaller micro-batch no more, a larger
 * one no less */
static void went_on_anchor(const model_calib *c, const gpt_shape *s, prediction *out)
{
    const gpt_shape *m = &c->measured_shape;
    if (!c->went_on_B || !c->went_on_tensors || c->went_on_B >= m->B || s->T != m->T ||
        s->L != m->L || s->d != m->d || s->V != m->V || s->compile != m->compile ||
        s->checkpointing != m->checkpointing || (s->A > 1 && m->A <= 1) ||
        s->dtype_bytes != m->dtype_bytes || s->no_kv_cache != m->no_kv_cache ||
        s->unfused_attention != m->unfused_attention || s->opt_bpp != m->opt_bpp ||
        s->train_frac != m->train_frac || s->no_training)
        return;
    prediction a = *out;
    uint64_t pt = cat_breakdown_tensors(&a.by_cat);
    for (int k = 0; k < CAT_COUNT && pt; k++) /* (its rows in the shares predicted) */
        if (category_tensor((category)k) && k != CAT_CACHE)
            a.by_cat.bytes[k] = k == CAT_OPTIMIZER && c->went_on_steps < 2
                                    ? a.by_cat.bytes[k]
                                    : advice_bytes((double)a.by_cat.bytes[k] *
                                                   ((double)c->went_on_tensors / (double)pt));
    /* one step: its forwards ran before the optimizer's state existed, a later one's hold it (a
     * GPT-2 medium at 2: 8.66 GiB of tensors in its one step, 11.30 in the next) */
    uint64_t state = c->went_on_steps < 2 && !s->iteration0 ? a.by_cat.bytes[CAT_OPTIMIZER] : 0;
    advice_with_cache(c, s, &a, c->went_on_tensors + state);
    uint64_t used = c->went_on_reserved - c->went_on_unused; /* (went_on_cache's terms) */
    if (s->B == c->went_on_B && c->went_on_unused && c->went_on_reserved > c->went_on_unused &&
        used > c->went_on_tensors) {
        /* its cache as its steps used it: the reserved level they held less the failed
         * attempt's cache they never used, less their tensors, in that share for a later step's
         * state (the Trainer at 2 on 14 GiB, its attempt at 4's 13.23 GiB of segments kept, 3.90
         * GiB of them never used again: 0.67 GiB of cache over 8.66 GiB of tensors, where the
         * fragmentation floor's 1.93 GiB had said "too tight" of the batch it trained at) */
        double share = (double)(used - c->went_on_tensors) / (double)c->went_on_tensors;
        uint64_t t = a.tensor_bytes, cache = advice_bytes((double)t * share);
        a.by_cat.bytes[CAT_CACHE] = cache;
        a.reserved_bytes = t + cache;
        a.peak_bytes = a.required_bytes = a.reserved_bytes + c->fixed[CAT_CONTEXT] +
                                          c->fixed[CAT_KERNEL_CODE] + c->fixed[CAT_EXTERNAL];
    }
    if (c->went_on_process && a.required_bytes > c->went_on_process) {
        a.peak_bytes = a.required_bytes = c->went_on_process;
        if (a.reserved_bytes > c->went_on_reserved)
            a.reserved_bytes = c->went_on_reserved;
    }
    a.moment = PREDICT_AT_WENT_ON;
    if (s->B == c->went_on_B || (s->B < c->went_on_B && a.required_bytes < out->required_bytes) ||
        (s->B > c->went_on_B && a.required_bytes > out->required_bytes))
        *out = a;
}

void advice_own_floors(const model_calib *c, const gpt_shape *s, prediction *out)
{
    measured_floor(c, s, out);
    kv_floor(c, s, out);
    went_on_anchor(c, s, out);
}

uint64_t advice_own_cache(const model_calib *c, const gpt_shape *s, const prediction *p,
                          double *share)
{
    /* (a lower bound counts no cache; a complete run's share is measured, not assumed) */
    /* (the run's own configuration: a what-if's cache is the floor, as its verdict counts it; a
     * trace of segments alone, no tensor's, does not tell the cache: weights_exact is tensor
     * mode) */
    if (!c->has_oom || !c->partial || !c->calibrated || c->lower || c->cache_fraction < 0 ||
        !c->weights_exact || !p->tensor_bytes || p->by_cat.bytes[CAT_CACHE] > p->peak_bytes ||
        !advice_same_run(s, &c->measured_shape))
        return 0;
    uint64_t own = advice_bytes((double)p->tensor_bytes * c->cache_fraction);
    if (own >= p->by_cat.bytes[CAT_CACHE])
        return 0;
    uint64_t low = p->peak_bytes - p->by_cat.bytes[CAT_CACHE] + own;
    /* (its own configuration needs at least what was live and what it asked for) */
    uint64_t need = cat_breakdown_total(&c->oom_live) + c->oom_request;
    if (low < need)
        low = need;
    if (low >= p->peak_bytes)
        return 0;
    *share = c->cache_fraction;
    return low;
}
