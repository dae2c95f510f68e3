/* advice_eval.c — a training run whose tensors peaked in an evaluation pass with a batch of its
 * own (--eval-batch-size 96 beside a micro-batch of 16): that pass at another batch. The
 * training is what the run measured; the evaluation's batch-sized tensors scale with its batch.
 * Interface: advice.h. */
#include <string.h>

#include "advice.h"
#include "bytes_sat.h"
#include "namewords.h"

/* the rows of an evaluation's tensors that scale with its batch (no backward in it) */
static const category scaled_cats[] = {CAT_ACTIVATIONS, CAT_LOGITS, CAT_ATTENTION, CAT_INPUTS,
                                       CAT_TEMPORARIES};

const char *advice_pass_word(const char *flag)
{
    /* the flag's words (namewords.h), before its value; a sampling's, a generation's, a
     * rollout's before an evaluation's. (A flag naming no kind of pass: a no-grad pass's whose
     * outputs the step uses, which the recorded script reads on that pass's lines:
     * evalsrc_pass_flag; an evaluation's names one) */
    unsigned k = flag ? namewords_kinds(flag, strcspn(flag, " ="), "_-", 1) : 0;
    return k & NW_SAMPLE          ? "sampling"
           : k & NW_GEN           ? "generation"
           : k & NW_ROLLOUT       ? "rollout"
           : k & NW_EVAL || !flag ? "evaluation"
                                  : "no-grad";
}

void advice_eval_calibrate(model_calib *c, const cat_breakdown *at_eval, uint64_t train,
                           uint64_t state)
{
    c->eval_train = c->eval_tensors = c->eval_scaled = 0;
    if (!c->eval_batch || !train)
        return;
    uint64_t scaled = 0, tensors = 0; /* (held: a hostile trace's rows near 2^64) */
    for (int k = 0; k < CAT_COUNT; k++)
        if (category_tensor((category)k))
            tensors = bytes_add(tensors, at_eval->bytes[k]);
    for (size_t i = 0; i < sizeof scaled_cats / sizeof scaled_cats[0]; i++)
        scaled = bytes_add(scaled, at_eval->bytes[scaled_cats[i]]);
    c->eval_train = bytes_add(train, state);
    c->eval_tensors = tensors;
    c->eval_scaled = scaled < tensors ? scaled : tensors;
}

/* scaled_at: the evaluation's batch-sized bytes at batch b (c->eval_batch's) */
static uint64_t scaled_at(const model_calib *c, uint64_t b)
{
    double v = (double)c->eval_scaled * (double)b / (double)c->eval_batch;
    return v >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)v;
}

void advice_predict_eval(const model_calib *c, const gpt_shape *s, prediction *out)
{
    memset(out, 0, sizeof *out);
    out->moment = PREDICT_AT_EVALUATION;
    uint64_t part = scaled_at(c, s->eval_B), outside = 0;
    double floor = advice_cache_floor(s, c->expandable);
    uint64_t train_reserved = bytes_add(
        c->eval_train, (uint64_t)((double)c->eval_train * floor)); /* (< 2^64: floor < 1) */
    uint64_t eval_tensors = bytes_add(c->eval_tensors - c->eval_scaled, part);
    out->tensor_bytes = eval_tensors > c->eval_train ? eval_tensors : c->eval_train;
    out->reserved_bytes = bytes_add(train_reserved, part);
    static const category outside_cats[] = {CAT_CONTEXT, CAT_KERNEL_CODE, CAT_EXTERNAL};
    for (size_t i = 0; i < sizeof outside_cats / sizeof outside_cats[0]; i++) {
        out->by_cat.bytes[outside_cats[i]] = c->fixed[outside_cats[i]];
        outside = bytes_add(outside, c->fixed[outside_cats[i]]);
    }
    out->by_cat.bytes[CAT_CACHE] = out->reserved_bytes - out->tensor_bytes;
    out->peak_bytes = out->required_bytes = bytes_add(out->reserved_bytes, outside);
}

uint64_t advice_eval_largest(const model_calib *c, const gpt_shape *s, uint64_t capacity,
                             double headroom, uint64_t most)
{
    if (!c->eval_batch || !c->eval_train || !capacity || c->eval_batch < 2)
        return 0;
    uint64_t lo = 0, hi = c->eval_batch - 1; /* lo fits (0: none yet) */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        gpt_shape t = *s;
        t.eval_B = mid;
        prediction p;
        advice_predict_eval(c, &t, &p);
        if (advice_fits(p.required_bytes, capacity, headroom) == 1 && p.peak_bytes <= most)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}
