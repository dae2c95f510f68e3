/* advice.c — calibration of the refined formula to a measured run, what-if predictions and the
 * documents' list of fixes, best first (advice.h, formula.md §4); OOM causes: advice_cause.c. */
#include "advice.h"

#include <stdio.h>
#include <string.h>

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
        default:
            return 1;
        }
    switch (c) {
    case CAT_PARAMETERS:
    case CAT_GRADIENTS:
    case CAT_OPTIMIZER:
        return (double)formula_params_exact(s);
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
    c->fixed[CAT_TEMPORARIES] = FORMULA_CUBLAS_BYTES;
    c->cache_fraction = -1;
}

double advice_cache_floor(const gpt_shape *s, int expandable)
{
    if (expandable)
        return s->compile ? FORMULA_CACHE_EXPANDABLE_COMPILED : FORMULA_CACHE_EXPANDABLE_EAGER;
    return s->compile ? FORMULA_CACHE_COMPILED : FORMULA_CACHE_EAGER;
}

void advice_calibrate(model_calib *c, const gpt_shape *s, const cat_breakdown *measured,
                      int partial)
{
    advice_calib_default(c, s);
    c->calibrated = 1;
    c->partial = partial;
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
        if (partial && r < 1)
            r = 1;
        for (size_t i = 0; i < NMODEL; i++)
            c->ratio[model_cats[i]] = r;
        c->fixed[CAT_UNKNOWN] = 0;
        c->fixed[CAT_TEMPORARIES] = 0;
        c->fixed[CAT_WORKSPACE] = 0;
    } else {
        /* workspaces are fixed; backward scratch beyond them grows with the tokens */
        uint64_t ws = 64ull << 20;
        if (temps > ws) {
            c->fixed[CAT_TEMPORARIES] = ws;
            double per = driver(s, CAT_TEMPORARIES);
            c->temp_per_token = per > 0 ? (double)(temps - ws) / per : 0;
        }
        for (size_t i = 0; i < NMODEL; i++) {
            category k = model_cats[i];
            uint64_t m = measured->bytes[k], r = c->refined.bytes[k];
            double q = 1.0;
            if (m > 0 && r > 0)
                q = (double)m / (double)r;
            /* An OOM before the peak leaves growing categories incomplete. */
            if (partial && q < 1 && k != CAT_PARAMETERS)
                q = 1.0;
            c->ratio[k] = q;
        }
    }
    c->cache_fraction = tensor > 0 ? (double)measured->bytes[CAT_CACHE] / (double)tensor : 0;
}

/* bytes_of: a predicted size as bytes, clamped to [0, 2^56] (64 PiB: far beyond any card) so
 * that a huge configuration neither overflows the conversion nor wraps the sums. */
#define ADVICE_BYTES_MAX ((uint64_t)1 << 56)
static uint64_t bytes_of(double v)
{
    if (!(v > 0))
        return 0;
    return v >= (double)ADVICE_BYTES_MAX ? ADVICE_BYTES_MAX : (uint64_t)(v + 0.5);
}

/* weights_of: the fp32 gradients (the parameters' bytes) or the optimizer's state (AdamW:
 * twice) of the trainable parameters at shape s, from the parameters the run measured rather
 * than the GPT formula's count (a Llama's 134 M is not the formula's 110 M); ref where nothing
 * was measured. */
static double weights_of(const model_calib *c, const gpt_shape *s, category k, double ref)
{
    uint64_t p = c->measured.bytes[CAT_PARAMETERS] > c->oom_live.bytes[CAT_PARAMETERS]
                     ? c->measured.bytes[CAT_PARAMETERS]
                     : c->oom_live.bytes[CAT_PARAMETERS];
    if (!p || !c->calibrated || c->global || !c->weights_exact ||
        (k != CAT_GRADIENTS && k != CAT_OPTIMIZER))
        return ref;
    /* fp32 gradients of the trainable parameters; the optimizer's state per trainable parameter
     * as recognized (AdamW 8 B: twice the parameters' 4) */
    double per = k == CAT_OPTIMIZER ? formula_opt_bpp(s) / 4.0 : 1.0;
    return (double)p * per * formula_train_frac(s) * scale(s, &c->measured_shape, CAT_PARAMETERS);
}

/* unseen_weights: gradients or optimizer state the run had not created yet at its peak, where
 * the formula has them at shape s's (weights_of); none where it has none (the gradients of one
 * micro-step per optimizer step: set to None after each step, made by the backward after the
 * peak). */
static double unseen_weights(const model_calib *c, const gpt_shape *s, category k, uint64_t ref)
{
    return ref ? weights_of(c, s, k, (double)ref) : 0;
}

/* kept_grads: v, the gradients predicted at shape s's peak, at least every trainable
 * parameter's when s has more than one micro-step per optimizer step: those of the micro-steps
 * before are alive through the last one's (whatever the run measured with fewer) */
static double kept_grads(const model_calib *c, const gpt_shape *s, double v)
{
    if (s->A <= 1)
        return v;
    double all = weights_of(c, s, CAT_GRADIENTS, 0);
    return all > v ? all : v;
}

static void predict_raw(const model_calib *c, const gpt_shape *s, prediction *out)
{
    memset(out, 0, sizeof *out);
    gpt_shape s2 = *s;
    s2.iteration0 = 0;
    cat_breakdown ref;
    formula_refined(&s2, &ref);
    uint64_t tensor = 0;
    for (size_t i = 0; i < NMODEL; i++) {
        category k = model_cats[i];
        double v;
        int weights =
            k == CAT_PARAMETERS || k == CAT_GRADIENTS || k == CAT_OPTIMIZER || k == CAT_AUTOCAST;
        if (c->calibrated && !c->global && weights && c->measured.bytes[k] > 0)
            /* fixed parts: what the run kept, whatever the batch (scaled with the weights) */
            v = (double)c->measured.bytes[k] * scale(&s2, &c->measured_shape, k);
        else if (!c->calibrated || c->global || c->refined.bytes[k] > 0 ||
                 c->measured.bytes[k] == 0) {
            double q = c->ratio[k];
            /* compile turned off: what compile saved below the formula (its fused loss, its
             * recomputation) does not carry over to eager, so no ratio below 1 either */
            if (c->calibrated && c->measured_shape.compile && !s2.compile && q < 1 &&
                (k == CAT_ACTIVATIONS || k == CAT_LOGITS || k == CAT_ATTENTION))
                q = 1;
            v = weights ? unseen_weights(c, &s2, k, ref.bytes[k]) * q : (double)ref.bytes[k] * q;
        } else /* measured, but not in the formula: scale what was measured */
            v = (double)c->measured.bytes[k] * scale(&s2, &c->measured_shape, k);
        if (k == CAT_GRADIENTS)
            v = kept_grads(c, &s2, v);
        out->by_cat.bytes[k] = bytes_of(v);
        tensor += out->by_cat.bytes[k];
    }
    for (size_t i = 0; i < NFIXED; i++)
        out->by_cat.bytes[fixed_cats[i]] = c->fixed[fixed_cats[i]];
    out->by_cat.bytes[CAT_TEMPORARIES] = bytes_of((double)out->by_cat.bytes[CAT_TEMPORARIES] +
                                                  c->temp_per_token * driver(s, CAT_TEMPORARIES));
    tensor += out->by_cat.bytes[CAT_TEMPORARIES] + c->fixed[CAT_UNKNOWN] + c->fixed[CAT_WORKSPACE];
    double floor = advice_cache_floor(&s2, c->expandable);
    double frac = c->cache_fraction < 0 || (c->partial && c->cache_fraction < floor)
                      ? floor
                      : c->cache_fraction;
    out->by_cat.bytes[CAT_CACHE] = bytes_of((double)tensor * frac);
    out->tensor_bytes = tensor;
    out->reserved_bytes = tensor + out->by_cat.bytes[CAT_CACHE];
    out->peak_bytes = out->reserved_bytes + c->fixed[CAT_CONTEXT] + c->fixed[CAT_KERNEL_CODE] +
                      c->fixed[CAT_EXTERNAL];
    out->required_bytes = out->peak_bytes;
    /* room up to the fragmentation floor, unless a complete run measured its own cache in the
     * same mode (compiled and eager runs fragment differently) */
    if (frac < floor && (!c->calibrated || c->partial || s2.compile != c->measured_shape.compile))
        out->required_bytes += bytes_of((double)tensor * (floor - frac));
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
        uint64_t have = c->oom_live.bytes[k] > c->measured.bytes[k] ? c->oom_live.bytes[k]
                                                                    : c->measured.bytes[k];
        double v;
        switch ((category)k) {
        case CAT_ACTIVATIONS:
        case CAT_LOGITS:
        case CAT_ATTENTION:
        case CAT_INPUTS:
        case CAT_BACKWARD:
        case CAT_TEMPORARIES:
            v = (double)c->oom_live.bytes[k] * scale(&s2, m, (category)k);
            if (k == CAT_ACTIVATIONS && c->act_whole > 1) /* the rest of a cut-short forward */
                v *= c->act_whole;
            if (k == CAT_LOGITS && c->logits_whole > v / scale(&s2, m, CAT_LOGITS))
                v = c->logits_whole * scale(&s2, m, CAT_LOGITS); /* its end, not reached */
            if (k == CAT_TEMPORARIES) /* the failed request grows with the tokens too */
                v += (double)c->oom_request * scale(&s2, m, CAT_INPUTS);
            if (refm.bytes[k] > 0)
                v = v * (double)ref.bytes[k] / (double)refm.bytes[k];
            break;
        case CAT_PARAMETERS:
        case CAT_GRADIENTS:
        case CAT_OPTIMIZER:
        case CAT_AUTOCAST:
            v = have > 0 ? (double)have * scale(&s2, m, (category)k)
                         : unseen_weights(c, &s2, (category)k, ref.bytes[k]);
            if (k == CAT_GRADIENTS)
                v = kept_grads(c, &s2, v);
            break;
        case CAT_CACHE:
            continue;
        default:
            v = (double)have;
        }
        out->by_cat.bytes[k] = bytes_of(v);
        if (k != CAT_CONTEXT && k != CAT_KERNEL_CODE && k != CAT_EXTERNAL)
            tensor += out->by_cat.bytes[k];
    }
    double floor = advice_cache_floor(&s2, c->expandable);
    out->by_cat.bytes[CAT_CACHE] = bytes_of((double)tensor * floor);
    out->tensor_bytes = tensor;
    out->reserved_bytes = tensor + out->by_cat.bytes[CAT_CACHE];
    out->peak_bytes = out->reserved_bytes + out->by_cat.bytes[CAT_CONTEXT] +
                      out->by_cat.bytes[CAT_KERNEL_CODE] + out->by_cat.bytes[CAT_EXTERNAL];
    out->required_bytes = out->peak_bytes;
}

/* advice_predict: the formula's prediction, anchored on the run's own measurement: at the
 * measured shape of a run that completed, the prediction IS the measured total; what-ifs move
 * from it by the formula's difference, so they stay monotone and never contradict the run. */
void advice_predict(const model_calib *c, const gpt_shape *s, prediction *out)
{
    predict_raw(c, s, out);
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
        if (s->B == m->B && s->T == m->T && s->L == m->L && s->d == m->d && s->V == m->V &&
            s->compile == m->compile && s->checkpointing == m->checkpointing &&
            out->peak_bytes < need) {
            uint64_t add = need - out->peak_bytes;
            out->peak_bytes += add;
            out->reserved_bytes += add;
            out->required_bytes += add;
        }
        return;
    }
    if (!c->calibrated || c->partial)
        return;
    uint64_t meas = 0;
    for (int i = 0; i < CAT_COUNT; i++)
        meas += c->measured.bytes[i];
    prediction p0;
    predict_raw(c, &c->measured_shape, &p0);
    if (meas == 0 || p0.peak_bytes == 0)
        return;
    int64_t off = (int64_t)meas - (int64_t)p0.peak_bytes;
    if (off < 0) {
        /* the formula over-predicts this run: scale it down by the same factor, so what-ifs
         * keep the run's proportions (an offset could leave a smaller batch above the run) */
        double f = (double)meas / (double)p0.peak_bytes;
        out->peak_bytes = bytes_of((double)out->peak_bytes * f);
        out->reserved_bytes = bytes_of((double)out->reserved_bytes * f);
        out->tensor_bytes = bytes_of((double)out->tensor_bytes * f);
        out->required_bytes = bytes_of((double)out->required_bytes * f);
        return;
    }
    out->peak_bytes = (uint64_t)((int64_t)out->peak_bytes + off);
    out->reserved_bytes = (uint64_t)((int64_t)out->reserved_bytes + off);
    out->required_bytes = (uint64_t)((int64_t)out->required_bytes + off);
}

int advice_fits(uint64_t peak, uint64_t capacity, double headroom)
{
    if (capacity == 0)
        return -1;
    return (double)peak <= (double)capacity * (1.0 - headroom);
}

uint64_t advice_cache_limit(const prediction *p, uint64_t capacity, double headroom,
                            uint64_t *cache)
{
    uint64_t c = (p->reserved_bytes > p->tensor_bytes ? p->reserved_bytes - p->tensor_bytes : 0) +
                 (p->required_bytes > p->peak_bytes ? p->required_bytes - p->peak_bytes : 0);
    uint64_t rest = p->required_bytes > c ? p->required_bytes - c : 0;
    double usable = (double)capacity * (1.0 - headroom);
    *cache = c;
    if (advice_fits(p->required_bytes, capacity, headroom) != 0 || (double)rest >= usable)
        return 0;
    return (uint64_t)(usable - (double)rest);
}

uint64_t advice_largest_batch(const model_calib *c, const gpt_shape *s, uint64_t capacity,
                              double headroom)
{
    if (capacity == 0)
        return 0;
    gpt_shape t = *s;
    prediction p;
    uint64_t lo = 0, hi = 1u << 20; /* lo fits (0 = none), hi does not, or is the cap */
    t.B = 1;
    advice_predict(c, &t, &p);
    if (advice_fits(p.required_bytes, capacity, headroom) != 1)
        return 0;
    lo = 1;
    t.B = hi;
    advice_predict(c, &t, &p);
    if (advice_fits(p.required_bytes, capacity, headroom) == 1)
        return hi;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        t.B = mid;
        advice_predict(c, &t, &p);
        if (advice_fits(p.required_bytes, capacity, headroom) == 1)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- candidates -------------------------------------------------------------------------- */

/* add: predicts s and appends one item; returns the new count. */
static int add(advice_item *items, int n, int max, const model_calib *c, const gpt_shape *s,
               uint64_t capacity, const char *change, const char *cmdline, const char *note)
{
    if (n >= max)
        return n;
    advice_item *it = &items[n];
    memset(it, 0, sizeof *it);
    snprintf(it->change, sizeof it->change, "%s", change);
    snprintf(it->cmdline, sizeof it->cmdline, "%s", cmdline);
    snprintf(it->note, sizeof it->note, "%s", note);
    it->shape = *s;
    prediction p;
    advice_predict(c, s, &p);
    it->predicted_peak = p.peak_bytes;
    it->predicted_reserved = p.reserved_bytes;
    it->predicted_tensors = p.tensor_bytes;
    it->required = p.required_bytes;
    it->fits = advice_fits(p.required_bytes, capacity, ADVICE_HEADROOM);
    it->cache_limit = advice_cache_limit(&p, capacity, ADVICE_HEADROOM, &it->cache_assumed);
    /* checked: a card size from a trace can be anything up to 2^64 - 1 */
    uint64_t gap =
        capacity >= p.required_bytes ? capacity - p.required_bytes : p.required_bytes - capacity;
    if (gap > (uint64_t)INT64_MAX)
        gap = (uint64_t)INT64_MAX;
    it->headroom_bytes = capacity >= p.required_bytes ? (int64_t)gap : -(int64_t)gap;
    return n + 1;
}

/* knob_item: one item changing a single nanoGPT key to value (change "key=value", command
 * line "--key=value"); s is the shape with that change. Returns the new count. */
static int knob_item(advice_item *items, int n, int max, const model_calib *c, const gpt_shape *s,
                     uint64_t capacity, const char *key, uint64_t value, const char *note)
{
    char change[128], cmd[160];
    snprintf(change, sizeof change, "%s=%llu", key, (unsigned long long)value);
    snprintf(cmd, sizeof cmd, "--%s=%llu", key, (unsigned long long)value);
    return add(items, n, max, c, s, capacity, change, cmd, note);
}

/* batch_item: B, A -> one item with the documents' wording of the trade-off. */
static int batch_item(advice_item *items, int n, int max, const model_calib *c,
                      const gpt_shape *cur, uint64_t B, uint64_t A, uint64_t capacity)
{
    gpt_shape s = *cur;
    s.B = B;
    s.A = A;
    char change[128], cmd[160], note[200];
    snprintf(change, sizeof change, "batch_size=%llu, gradient_accumulation_steps=%llu",
             (unsigned long long)B, (unsigned long long)A);
    snprintf(cmd, sizeof cmd, "--batch_size=%llu --gradient_accumulation_steps=%llu",
             (unsigned long long)B, (unsigned long long)A);
    uint64_t eff = cur->B * cur->A, neff = B * A;
    if (neff == eff)
        snprintf(note, sizeof note,
                 "same effective batch %llu, same final model; %llu micro-steps per optimizer "
                 "step instead of %llu (smaller kernels: usually slower, not measured here)",
                 (unsigned long long)eff, (unsigned long long)A, (unsigned long long)cur->A);
    else
        snprintf(note, sizeof note,
                 "effective batch %llu instead of %llu: noisier gradients, 10-20 %% more steps",
                 (unsigned long long)neff, (unsigned long long)eff);
    return add(items, n, max, c, &s, capacity, change, cmd, note);
}

int advice_candidates(const model_calib *c, const gpt_shape *cur, uint64_t capacity,
                      int fragmentation, int expandable_set, int current_fits, advice_item *items,
                      int max)
{
    int n = 0;
    char change[128], cmd[160], note[200];
    if (current_fits == 1)
        n = add(items, n, max, c, cur, capacity, "none (keep the current configuration)", "",
                "the current configuration fits the card with the stated headroom");
    else if (current_fits == 2)
        n = add(items, n, max, c, cur, capacity, "none (keep the current configuration)", "",
                "it ran to the end on this card, with less than " ADVICE_HEADROOM_PCT_TEXT
                " % free: it fits; the options below add margin");
    if (n) /* the run itself: its cache was measured, not assumed */
        items[0].cache_limit = 0;
    int first_batch = n;
    /* half and quarter the micro-batch with 2x / 4x the accumulation: the same effective batch
     * only when they divide it (the largest divisor that fits comes next either way) */
    if (cur->B >= 2 && cur->B % 2 == 0)
        n = batch_item(items, n, max, c, cur, cur->B / 2, cur->A * 2, capacity);
    if (cur->B >= 4 && cur->B % 4 == 0)
        n = batch_item(items, n, max, c, cur, cur->B / 4, cur->A * 4, capacity);
    /* the largest micro-batch that fits and keeps the effective batch (B' divides B*A) */
    uint64_t eff;
    if (capacity > 0 && cur->B >= 2 && !__builtin_mul_overflow(cur->B, cur->A, &eff)) {
        if (cur->accum_unknown) /* B' divides B: A' = A * B / B' whatever A really is */
            eff = cur->B;
        /* start at the largest batch that fits (a binary search): the walk down to a divisor
         * of B*A is bounded by it (at most 2^20 steps), not by B */
        uint64_t top = advice_largest_batch(c, cur, capacity, ADVICE_HEADROOM);
        for (uint64_t b = top < cur->B - 1 ? top : cur->B - 1; b >= 1; b--) {
            if (eff % b)
                continue;
            uint64_t a = cur->accum_unknown ? cur->A * (eff / b) : eff / b;
            gpt_shape s = *cur;
            s.B = b;
            s.A = a;
            prediction p;
            advice_predict(c, &s, &p);
            if (advice_fits(p.required_bytes, capacity, ADVICE_HEADROOM) == 1) {
                if ((b != cur->B / 2 || cur->B % 2) && (b != cur->B / 4 || cur->B % 4))
                    n = batch_item(items, n, max, c, cur, b, a, capacity);
                break;
            }
        }
    }
    if (cur->B >= 2)
        n = batch_item(items, n, max, c, cur, cur->B / 2, cur->A, capacity);
    int last_batch = n;
    if (cur->T >= 64 && !cur->generic && !cur->patch_tokens) {
        gpt_shape s = *cur;
        s.T = cur->T / 2;
        snprintf(note, sizeof note,
                 "context of %llu tokens instead of %llu: activations and logits halve, "
                 "the model sees less context",
                 (unsigned long long)s.T, (unsigned long long)cur->T);
        n = knob_item(items, n, max, c, &s, capacity, "block_size", s.T, note);
    }
    if (cur->L >= 4 && !cur->generic) {
        gpt_shape s = *cur;
        s.L = cur->L * 3 / 4;
        snprintf(note, sizeof note,
                 "smaller model (%llu instead of %llu blocks): less capacity, "
                 "a new model, not the same run",
                 (unsigned long long)s.L, (unsigned long long)cur->L);
        n = knob_item(items, n, max, c, &s, capacity, "n_layer", s.L, note);
    }
    /* narrower at the same head size (768 -> 512 with 8 heads of 64, as the documents say) */
    uint64_t hd = cur->H ? cur->d / cur->H : 0, d2 = hd ? cur->d * 2 / 3 / hd * hd : 0;
    if (!cur->generic && d2 >= hd && d2 < cur->d && hd > 0) {
        gpt_shape s = *cur;
        s.d = d2;
        s.H = d2 / hd;
        snprintf(change, sizeof change, "n_embd=%llu, n_head=%llu", (unsigned long long)d2,
                 (unsigned long long)s.H);
        snprintf(cmd, sizeof cmd, "--n_embd=%llu --n_head=%llu", (unsigned long long)d2,
                 (unsigned long long)s.H);
        snprintf(note, sizeof note,
                 "narrower model (n_embd %llu instead of %llu): less capacity, a new model",
                 (unsigned long long)d2, (unsigned long long)cur->d);
        n = add(items, n, max, c, &s, capacity, change, cmd, note);
    }
    if (cur->compile && !cur->generic) {
        gpt_shape s = *cur;
        s.compile = 0;
        n = add(items, n, max, c, &s, capacity, "compile=False", "--compile=False",
                "no torch.compile warm-up spike or compile caches (1-2 GB on a first run); eager "
                "keeps more activations per step and runs slower");
    }
    if (!cur->checkpointing && !cur->generic) {
        gpt_shape s = *cur;
        s.checkpointing = 1;
        n = add(items, n, max, c, &s, capacity, "activation checkpointing",
                "(code change: torch.utils.checkpoint.checkpoint around each Block in GPT.forward)",
                "keeps only block inputs and recomputes the forward in backward: ~25-35 % slower");
    }
    if (fragmentation && !expandable_set) {
        model_calib c2 = *c;
        c2.expandable = 1;
        /* no fragmentation in that configuration: the failure's unused cache is not needed */
        c2.oom_live.bytes[CAT_CACHE] = 0;
        double f = advice_cache_floor(cur, 1);
        if (c2.cache_fraction > f)
            c2.cache_fraction = f;
        n = add(
            items, n, max, &c2, cur, capacity, "expandable_segments:True",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "lets the caching allocator grow segments instead of splitting them; no speed cost");
    }
    /* recommended: the largest micro-batch that fits (earliest wins ties); else the first
     * option that fits; else the first batch option. */
    int rec = -1;
    if (first_batch > 0) {
        rec = 0;
    } else {
        for (int i = first_batch; i < last_batch; i++)
            if (items[i].fits == 1 && (rec < 0 || items[i].shape.B > items[rec].shape.B))
                rec = i;
        for (int i = last_batch; rec < 0 && i < n; i++)
            if (items[i].fits == 1)
                rec = i;
        if (rec < 0 && n > 0)
            rec = 0;
    }
    if (rec >= 0) {
        advice_item r = items[rec];
        memmove(&items[1], &items[0], (size_t)rec * sizeof items[0]);
        items[0] = r;
        items[0].recommended = 1;
    }
    return n;
}
