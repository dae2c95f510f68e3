/* advice_after.c — a calibration measured after the forward's tensors were freed (advice.h:
 * advice_calib_after_forward): a moment that held none of a category gives no ratio for it, so
 * the forward's categories are fitted to their largest over the run instead. */
#include "advice.h"

/* the categories a forward makes and frees by the end of its backward */
static const category forward_cats[] = {CAT_ACTIVATIONS, CAT_LOGITS, CAT_ATTENTION, CAT_AUTOCAST};
#define NFORWARD (sizeof forward_cats / sizeof forward_cats[0])

/* little: measured holds under a quarter of what the formula has of k at the run's shape */
static int little(const model_calib *c, category k)
{
    uint64_t r = c->refined.bytes[k];
    return r > 0 && c->measured.bytes[k] < r / 4;
}

int advice_after_forward_gone(const model_calib *c, category k)
{
    if (!c->after_forward)
        return 0;
    if (k == CAT_GRADIENTS) /* (the step's, but where the loop keeps them through a forward) */
        return !c->grads_kept;
    if (k == CAT_BACKWARD) /* (the backward's scratch) */
        return 1;
    for (size_t i = 0; i < NFORWARD; i++)
        if (forward_cats[i] == k) /* (2: an evaluation's moment, whose every one is its own) */
            return c->after_forward == 2 || little(c, k);
    return 0;
}

/* forward_view: c predicts forwards from a moment after one (how: 1 its own step's or backward's,
 * 2 an evaluation's): none of that moment's temporaries (predict_step has the step's) */
static void forward_view(model_calib *c, int how)
{
    c->fixed[CAT_TEMPORARIES] = 0, c->temp_per_token = 0;
    c->after_forward = how;
}

int advice_calib_after_forward(model_calib *c, const uint64_t largest[CAT_COUNT])
{
    if (!c->calibrated || c->global || c->partial || !little(c, CAT_ACTIVATIONS) ||
        !largest[CAT_ACTIVATIONS])
        return 0;
    for (size_t i = 0; i < NFORWARD; i++) {
        category k = forward_cats[i];
        if (little(c, k))
            c->ratio[k] = largest[k] ? (double)largest[k] / (double)c->refined.bytes[k] : 1.0;
    }
    forward_view(c, 1);
    return 1;
}

void advice_eval_train_ratios(model_calib *c, const uint64_t largest[CAT_COUNT])
{
    uint64_t r = c->refined.bytes[CAT_ACTIVATIONS];
    if (!c->eval_batch || c->eval_cut || !c->calibrated || c->global || !r ||
        !largest[CAT_ACTIVATIONS])
        return;
    for (size_t i = 0; i < NFORWARD; i++)
        c->train_ratio[forward_cats[i]] = 1.0;
    c->train_ratio[CAT_ACTIVATIONS] = (double)largest[CAT_ACTIVATIONS] / (double)r;
}

int advice_eval_training(const model_calib *c, model_calib *tr)
{
    if (!c->eval_batch || !(c->train_ratio[CAT_ACTIVATIONS] > 0))
        return 0;
    *tr = *c;
    for (size_t i = 0; i < NFORWARD; i++)
        tr->ratio[forward_cats[i]] = c->train_ratio[forward_cats[i]];
    forward_view(tr, 2);
    tr->eval_batch = 0;
    return 1;
}
