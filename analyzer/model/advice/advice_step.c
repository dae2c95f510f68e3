/* advice_step.c — the optimizer step of a run that died before its first one (advice.h:
 * advice_unreached_step): what that step would have held at the run's own shape, from the
 * weights the run measured, so that a smaller micro-batch is predicted at least at it. */
#include "advice.h"

#include <string.h>

double advice_weights_at(const model_calib *c, const gpt_shape *s, uint64_t p)
{
    uint64_t k = c->packed <= p ? c->packed : 0;
    p -= c->qstate <= p - k ? c->qstate : 0; /* (a 4-bit weight's absmax is none) */
    return (double)(p - k) + (double)k * 2.0 * formula_param_bytes(s);
}

int advice_unreached_step(model_calib *c, const gpt_shape *s)
{
    const cat_breakdown *live = &c->oom_live;
    if (!c->has_oom || !c->calibrated || c->global || !c->weights_exact || s->no_training ||
        s->none_seen_trained || cat_breakdown_total(&c->step) > 0)
        return 0;
    /* the weights the run held (an EMA's copy and a frozen model beside train nothing) */
    uint64_t P = live->bytes[CAT_PARAMETERS] > c->measured.bytes[CAT_PARAMETERS]
                     ? live->bytes[CAT_PARAMETERS]
                     : c->measured.bytes[CAT_PARAMETERS];
    uint64_t p = P > c->ema ? P - c->ema : 0;
    p = p > c->frozen ? p - c->frozen : 0;
    if (!p)
        return 0;
    /* every trainable parameter's gradient, in the parameters' dtype */
    double grads = advice_weights_at(c, s, p) * formula_train_frac(s);
    cat_breakdown *st = &c->step;
    memset(st, 0, sizeof *st);
    st->bytes[CAT_PARAMETERS] = P;
    /* (fp32 adapters beside 16-bit weights: their gradients twice their share of these) */
    st->bytes[CAT_GRADIENTS] = (uint64_t)(grads * (s->trained32 ? 2 : 1) + 0.5);
    /* the optimizer's state as recognized or assumed (formula_opt_bpp: AdamW's 8 B per
     * parameter where nothing says), per trainable parameter of the parameters' bytes */
    st->bytes[CAT_OPTIMIZER] =
        (uint64_t)(grads * formula_opt_bpp(s) / formula_param_bytes(s) + 0.5);
    /* PyTorch's default update on CUDA (foreach) makes one list the size of the gradients:
     * Adam's sqrt of its second moment, SGD's weight-decayed gradients (a simulated ResNet-50
     * at B=1, SGD: 97.5 MiB of temporaries beside 97.5 MiB of gradients; ViT-B/16 on the H100,
     * AdamW: 330.2 beside 330.2); a fused update makes none, so this may count too much; nor
     * does plain SGD's, in place (a DLRM's 8.05 GiB of temporaries had been counted beside its
     * 8.05 GiB of gradients: ~29.36 GiB predicted where it takes 16.55) */
    st->bytes[CAT_TEMPORARIES] = c->step_in_place ? 0 : st->bytes[CAT_GRADIENTS];
    /* the batch still referenced, the library workspaces and unknown bytes as at the failure */
    st->bytes[CAT_INPUTS] = live->bytes[CAT_INPUTS];
    st->bytes[CAT_WORKSPACE] = live->bytes[CAT_WORKSPACE];
    /* (the backward's own cuBLAS workspace, not yet made: model_first_forward.c) */
    if (c->fwd_whole.bytes[CAT_WORKSPACE] > st->bytes[CAT_WORKSPACE])
        st->bytes[CAT_WORKSPACE] = c->fwd_whole.bytes[CAT_WORKSPACE];
    st->bytes[CAT_UNKNOWN] = live->bytes[CAT_UNKNOWN];
    c->step_unreached = 1;
    return 1;
}
