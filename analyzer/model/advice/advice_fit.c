/* advice_fit.c — a prediction against a card (advice.h): whether it fits with the headroom, the
 * allocator cache that decides a verdict, and the largest micro-batch that fits (a search over
 * advice_predict, advice.c). */
#include "advice.h"
#include "advice_speak.h"

int advice_fits(uint64_t peak, uint64_t capacity, double headroom)
{
    if (capacity == 0)
        return -1;
    return (double)peak <= (double)capacity * (1.0 - headroom);
}

/* cache_of: the allocator cache p assumes, its room for fragmentation included */
static uint64_t cache_of(const prediction *p)
{
    return (p->reserved_bytes > p->tensor_bytes ? p->reserved_bytes - p->tensor_bytes : 0) +
           (p->required_bytes > p->peak_bytes ? p->required_bytes - p->peak_bytes : 0);
}

/* cache_most: when p keeps the headroom on capacity, the most allocator cache (in place of the
 * cache p assumed, *cache) with which it still would; else 0 */
static uint64_t cache_most(const prediction *p, uint64_t capacity, double headroom, uint64_t *cache)
{
    *cache = cache_of(p);
    if (advice_fits(p->required_bytes, capacity, headroom) != 1)
        return 0;
    double usable = (double)capacity * (1.0 - headroom);
    return *cache + (uint64_t)(usable - (double)p->required_bytes);
}

uint64_t advice_fit_cache(const prediction *p, uint64_t capacity, double headroom, uint64_t *cache)
{
    uint64_t most = cache_most(p, capacity, headroom, cache);
    return most && most < 2 * *cache ? most : 0;
}

uint64_t advice_largest_cache(const model_calib *c, const gpt_shape *s, uint64_t B,
                              uint64_t capacity, double headroom, uint64_t *cache)
{
    gpt_shape t = *s;
    t.B = B;
    prediction p;
    advice_predict(c, &t, &p);
    return advice_fit_cache(&p, capacity, headroom, cache);
}

uint64_t advice_largest_own(const model_calib *c, const gpt_shape *s, uint64_t lb,
                            uint64_t capacity, double headroom, double *share)
{
    model_calib own = *c;
    own.own_share_to_twice = 1;
    *share = c->later_cache_fraction >= 0 && !s->iteration0 ? c->later_cache_fraction
                                                            : c->cache_fraction;
    if (!lb || !c->calibrated || c->partial || c->lower || c->cache_fraction < 0)
        return 0;
    uint64_t hi = advice_largest_batch(&own, s, capacity, headroom);
    return hi > lb ? hi : 0;
}

uint64_t advice_next_cache(const model_calib *c, const gpt_shape *s, uint64_t B, uint64_t capacity,
                           double headroom, uint64_t *cache)
{
    gpt_shape t = *s;
    t.B = B + 1;
    prediction p;
    advice_predict(c, &t, &p);
    uint64_t limit = advice_cache_limit(&p, capacity, headroom, cache);
    if (B == 0) /* not even 1 fits with the cache assumed (an OOM run's floor): with how much */
        return limit + *cache / 50 < *cache ? limit : 0;
    /* where the cache at B + 1 is assumed, not measured: all of it where the run ended out of
     * memory or before its first step (partial: the fragmentation floor in place of what the
     * failure squeezed; a Lightning Llama 400M out of memory at B=3 was told 1 alone, where the
     * same program at B=2 fit with 0.66 GiB of cache, 2.01 assumed), else the room for
     * fragmentation the floor adds to the share the run measured, where that share alone would
     * keep the headroom */
    int assumed = c->partial || (p.required_bytes > p.peak_bytes &&
                                 advice_fits(p.peak_bytes, capacity, headroom) == 1);
    /* (a limit within 2 % of the assumed: a verdict by a hair, nothing the cache would decide) */
    return assumed && limit + *cache / 50 < *cache ? limit : 0;
}

uint64_t advice_cache_limit(const prediction *p, uint64_t capacity, double headroom,
                            uint64_t *cache)
{
    uint64_t c = cache_of(p);
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
        return hi - (s->B_multiple > 1 ? hi % s->B_multiple : 0);
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        t.B = mid;
        advice_predict(c, &t, &p);
        if (advice_fits(p.required_bytes, capacity, headroom) == 1)
            lo = mid;
        else
            hi = mid;
    }
    if (s->B_multiple > 1) /* (the program takes multiples of it alone: GRPO's groups) */
        lo -= lo % s->B_multiple;
    return lo;
}

int advice_keep_effective_fits(const model_calib *c, const gpt_shape *s, uint64_t lb,
                               uint64_t capacity, double headroom, uint64_t *b, uint64_t *a)
{
    /* never a larger micro-batch than s's: where s fits, s itself (what the report recommends) */
    uint64_t k = lb < s->B ? lb : s->B, rb, ra;
    if (s->no_training) { /* forwards only: no effective batch to keep, the largest that fits */
        gpt_shape t = *s;
        if (c->lower && k < s->B && k > s->B / 2) /* (lower bounds, s not fitting: at most half) */
            k = s->B / 2;
        t.B = k;
        prediction p;
        advice_predict(c, &t, &p);
        if (!k || advice_fits(p.required_bytes, capacity, headroom) != 1)
            return 0;
        *b = k, *a = s->A;
        return 1;
    }
    while (k >= 1 && advice_keep_effective(s, k, &rb, &ra)) {
        gpt_shape t = *s;
        t.B = rb;
        if (!s->accum_unknown) /* (unknown: the prediction keeps the gradients already) */
            t.A = ra;
        prediction p;
        advice_predict(c, &t, &p);
        if (advice_fits(p.required_bytes, capacity, headroom) == 1) {
            *b = rb, *a = ra;
            return 1;
        }
        k = rb - 1;
    }
    return 0;
}

int advice_recommend(const model_calib *c, const gpt_shape *s, uint64_t required, uint64_t lb,
                     uint64_t capacity, int unmeasured, uint64_t *b, uint64_t *a)
{
    if (unmeasured) {
        *b = s->B, *a = s->A;
        return advice_fits(required, capacity, ADVICE_HEADROOM) == 1;
    }
    return lb && advice_keep_effective_fits(c, s, lb, capacity, ADVICE_HEADROOM, b, a);
}
