/* advice_cache.c — the allocator cache a prediction counts beside its tensors (advice.h:
 * advice_with_cache): the share the run measured, or room up to the fragmentation floor. */
#include "advice.h"

/* tokens: what the batch-sized bytes grow with, B·T (B when T is not known: no transformer) */
static uint64_t tokens(const gpt_shape *s)
{
    return s->T ? s->B * s->T : s->B;
}

void advice_with_cache(const model_calib *c, const gpt_shape *s2, prediction *out, uint64_t tensor)
{
    double floor = c->lower ? 0 : advice_cache_floor(s2, c->expandable);
    double frac = c->lower ? 0
                  : c->cache_fraction < 0 || (c->partial && c->cache_fraction < floor)
                      ? floor
                      : c->cache_fraction;
    if (c->later_cache_fraction >= 0 && !s2->iteration0 && !c->lower) /* (a step with the state) */
        frac = c->later_cache_fraction;
    out->by_cat.bytes[CAT_CACHE] = advice_bytes((double)tensor * frac);
    out->tensor_bytes = tensor;
    out->reserved_bytes = tensor + out->by_cat.bytes[CAT_CACHE];
    out->peak_bytes = out->reserved_bytes + c->fixed[CAT_CONTEXT] + c->fixed[CAT_KERNEL_CODE] +
                      c->fixed[CAT_EXTERNAL];
    out->required_bytes = out->peak_bytes;
    /* room up to the fragmentation floor, unless a complete run measured its own cache in the
     * same mode (compiled and eager runs fragment differently) at a micro-batch at least this
     * one's (the cache's share grows with the tensors: a GAN's reserved 1.14x its allocated at
     * B=64, 1.19x at B=1841, past the headroom its B=64 run predicted; a VGG16-BN's 1.159x at
     * B=2048, 1.177x at 3816, 1.86x it, where its "largest that fits" kept 3.6 % free) */
    if (frac < floor && (!c->calibrated || c->partial || s2->compile != c->measured_shape.compile ||
                         tokens(s2) > (c->own_share_to_twice ? 2 : 1) * tokens(&c->measured_shape)))
        out->required_bytes += advice_bytes((double)tensor * (floor - frac));
}
