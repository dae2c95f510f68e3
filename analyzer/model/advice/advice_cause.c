/* advice_cause.c — the class of an out-of-memory error (advice.h: VT_OOM_CAUSES) and the
 * evidence for it, from what was live at the failure (formula.md §4, point 5). */
#include "advice.h"

#include <stdio.h>
#include <string.h>

static const char *const cause_keys[] = {
#define VT_OOM_KEY(e, key, text) key,
    VT_OOM_CAUSES(VT_OOM_KEY)
#undef VT_OOM_KEY
};
static const char *const cause_texts[] = {
#define VT_OOM_TEXT(e, key, text) text,
    VT_OOM_CAUSES(VT_OOM_TEXT)
#undef VT_OOM_TEXT
};

const char *advice_cause_key(oom_cause c)
{
    return (unsigned)c < OOM_COUNT ? cause_keys[c] : "?";
}

const char *advice_cause_text(oom_cause c)
{
    return (unsigned)c < OOM_COUNT ? cause_texts[c] : "?";
}

const char *advice_cause_text_on(oom_cause c, int device)
{
    if ((device & ADVICE_CAUSE_PASSES) && c == OOM_ACTIVATIONS)
        return device & 1 ? "what the step made after its backward passes of one forward (per-pass "
                            "copies), beside one micro-batch's activations, too large for the "
                            "device"
                          : "what the step made after its backward passes of one forward (per-pass "
                            "copies), beside one micro-batch's activations, too large for the card";
    if ((device & ADVICE_CAUSE_BACKWARD_KEPT) && c == OOM_ACTIVATIONS) {
        if (device & ADVICE_CAUSE_NO_BATCH)
            return device & 1 ? "the tensors of one forward and its backward (activations, and "
                                "what the backward made and kept) too large for the device"
                              : "the tensors of one forward and its backward (activations, and "
                                "what the backward made and kept) too large for the card";
        return device & 1 ? "the tensors of one micro-batch (activations, and what its backward "
                            "made and kept) too large for the device"
                          : "the tensors of one micro-batch (activations, and what its backward "
                            "made and kept) too large for the card";
    }
    if ((device & ADVICE_CAUSE_NO_BATCH) && c == OOM_ACTIVATIONS)
        return device & 1 ? "the tensors of one forward (activations, logits, its temporaries) too "
                            "large for the device"
                          : "the tensors of one forward (activations, logits, its temporaries) too "
                            "large for the card";
    if ((device & ADVICE_CAUSE_WEIGHT_SIZED) && c == OOM_STATE)
        return device & 1 ? "the weights, their gradients, the optimizer's state and the tensors "
                            "the backward makes of a weight's size: too large for the device"
                          : "the weights, their gradients, the optimizer's state and the tensors "
                            "the backward makes of a weight's size: too large for the card";
    device &= 1;
    if (device && c == OOM_ACTIVATIONS)
        return "the tensors of one micro-batch (activations, logits, a forward's temporaries) "
               "too large for the device";
    if (device && c == OOM_DATA)
        return "the program's own data on the device (made before training and kept: a replay "
               "buffer, a dataset), not a micro-batch's tensors, too large for the device";
    if (device && c == OOM_OWN)
        return "one request of the program's own line before any forward (values it drew or "
               "copied onto the device, not a module's weight nor a micro-batch's tensors) too "
               "large "
               "for the device";
    if (device && c == OOM_GRADIENTS)
        return "the weights and the gradients their backward was making, not a micro-batch's "
               "tensors: too large for the device";
    if (device && c == OOM_STATE)
        return "the weights, their gradients and the optimizer's state alone: too large for the "
               "device";
    return advice_cause_text(c);
}

static double mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

oom_cause advice_oom_cause(const cat_breakdown *live, uint64_t requested, uint64_t capacity,
                           uint64_t cache, uint64_t outside, const char *phase, int iterations,
                           char *why, size_t whylen, int transformer)
{
    uint64_t ext = live ? live->bytes[CAT_EXTERNAL] : 0;
    /* the CUDA context alone, which every step before this one ran beside, is no cause (a
     * tiny card's 300 MiB, half of 600, was blamed for an evaluation's 196 MiB of logits
     * after 3500 steps) */
    uint64_t ctx = live ? live->bytes[CAT_CONTEXT] : 0, beyond = outside > ctx ? outside - ctx : 0;
    int context_only = iterations > 0 && (double)beyond <= 0.10 * (double)capacity;
    if (capacity > 0 && (((double)outside > 0.25 * (double)capacity && !context_only) ||
                         (double)ext > 0.10 * (double)capacity)) {
        snprintf(why, whylen,
                 "%.0f MiB of the card was outside PyTorch (context, kernel code, other "
                 "allocations), %.0f MiB of it external",
                 mib(outside), mib(ext));
        return OOM_OUTSIDE;
    }
    if (cache >= requested && capacity > 0 && (double)cache >= 0.05 * (double)capacity) {
        snprintf(why, whylen,
                 "%.0f MiB sat in the allocator cache, more than the %.0f MiB requested, "
                 "but not in one piece",
                 mib(cache), mib(requested));
        return OOM_FRAGMENTATION;
    }
    if (phase && (!strcmp(phase, "eval") || !strcmp(phase, "step_pass") ||
                  !strcmp(phase, "compile") || !strcmp(phase, "optimizer"))) {
        if (!strcmp(phase, "optimizer"))
            snprintf(why, whylen, "the OOM came in the %soptimizer step%s",
                     iterations == 0 ? "first " : "",
                     iterations == 0 ? ", when the optimizer creates its state (kept for every "
                                       "later step)"
                                     : "");
        else if (!strcmp(phase, "step_pass")) /* (a rollout had been "during evaluation") */
            snprintf(why, whylen,
                     "the OOM came during a no-grad pass whose outputs the step uses (under "
                     "model.eval(), what it computes read by a later line that calls .backward(: "
                     "a rollout or a generation, not an evaluation)");
        else if (!strcmp(phase, "eval"))
            snprintf(why, whylen, "%s",
                     transformer ? "the OOM came during evaluation (logits of eval batches, about "
                                   "10*B*T*V bytes)"
                                 : "the OOM came during evaluation (its batches' outputs)");
        else
            snprintf(why, whylen,
                     "the OOM came during torch.compile's warm-up (compilation, autotuning)");
        return OOM_SPIKE;
    }
    uint64_t a = live ? live->bytes[CAT_ACTIVATIONS] + live->bytes[CAT_ATTENTION] : 0;
    uint64_t l = live ? live->bytes[CAT_LOGITS] : 0, t = live ? live->bytes[CAT_TEMPORARIES] : 0;
    char tmp[160] = ""; /* a forward that keeps nothing for a backward: its tensors in use */
    if (t > a + l)
        snprintf(tmp, sizeof tmp, "the forward's temporaries (tensors in use, not kept) %.0f MiB, ",
                 mib(t));
    /* a backward that keeps what it makes: its bytes, as large as the activations' (Opacus's
     * 4.98 GiB of per-sample gradients had gone unsaid beside "activations 6057 MiB") */
    char kept[256] = "";
    if (live && phase && !strcmp(phase, "backward") && advice_backward_keeps(live))
        snprintf(kept, sizeof kept,
                 ", and %.0f MiB the backward itself made and kept (not the parameters' "
                 "gradients: what a backward keeps to the step, as DP-SGD's per-sample gradients, "
                 "one per sample, are)",
                 mib(live->bytes[CAT_BACKWARD]));
    snprintf(why, whylen,
             "%sactivations %.0f MiB and logits/loss %.0f MiB were live in the %s%s; %s grow "
             "with %s",
             tmp, mib(a), mib(l), phase && *phase ? phase : "step", kept,
             kept[0] ? "the activations" : "they",
             transformer == 3 ? "what one forward takes in (its batch of samples, or a full-batch "
                                "step's whole input) and the model's widths; the run's micro-batch "
                                "is not known"
             : transformer == 2 ? "the micro-batch times the patch tokens (B*T, T from the image "
                                  "size)"
             : transformer      ? "the micro-batch times the sequence length (B*T tokens)"
                                : "the micro-batch (and the input size)");
    return OOM_ACTIVATIONS;
}

int advice_state_cause(const cat_breakdown *live, uint64_t state, uint64_t wsized,
                       uint64_t capacity, char *why, size_t whylen)
{
    if (!live || !capacity)
        return 0;
    uint64_t fwd = live->bytes[CAT_ACTIVATIONS] + live->bytes[CAT_LOGITS] +
                   live->bytes[CAT_ATTENTION] + live->bytes[CAT_AUTOCAST];
    uint64_t outside =
        live->bytes[CAT_CONTEXT] + live->bytes[CAT_KERNEL_CODE] + live->bytes[CAT_EXTERNAL];
    uint64_t p = live->bytes[CAT_PARAMETERS], g = live->bytes[CAT_GRADIENTS];
    uint64_t o = state > live->bytes[CAT_OPTIMIZER] ? state : live->bytes[CAT_OPTIMIZER];
    uint64_t tensors = cat_breakdown_total(live) - outside - live->bytes[CAT_CACHE];
    if (!g || fwd > tensors / 20 ||
        (double)(p + g + o + wsized + outside) <= (1.0 - ADVICE_HEADROOM) * (double)capacity)
        return 0;
    char ws[160] = ""; /* (a table's dense gradient: made whole whatever the micro-batch) */
    if (wsized)
        snprintf(ws, sizeof ws,
                 " and %.2f GiB the backward makes of a weight's size (made or asked for at the "
                 "failure: an embedding table's dense gradient)",
                 (double)wsized / 1073741824.0);
    snprintf(why, whylen,
             "the weights (%.2f GiB), their gradients (%.2f GiB)%s the optimizer's state "
             "(%.2f GiB%s)%s with %.0f MiB outside PyTorch need %.2f GiB before any "
             "activation: more than the card keeps with " ADVICE_HEADROOM_PCT_TEXT
             " %% free, whatever the micro-batch",
             (double)p / 1073741824.0, (double)g / 1073741824.0, wsized ? "," : " and",
             (double)o / 1073741824.0, o > live->bytes[CAT_OPTIMIZER] ? " once made" : "", ws,
             mib(outside), (double)(p + g + o + wsized + outside) / 1073741824.0);
    return 1;
}

int advice_copies_cause(const cat_breakdown *live, uint64_t copies, uint64_t requested,
                        uint64_t capacity, char *why, size_t whylen)
{
    if (!live || !capacity || (double)copies < 0.05 * (double)capacity)
        return 0;
    uint64_t held = cat_breakdown_total(live) - live->bytes[CAT_CACHE];
    if (copies > held || held - copies + requested > capacity)
        return 0;
    snprintf(
        why, whylen,
        "%.2f GiB of weight-sized copies the program made between optimizer steps and kept "
        "on the device (a checkpoint of the weights or of the optimizer's state, not the weights "
        "trained nor the batch) were live beside activations %.0f MiB and "
        "logits/loss %.0f MiB; without them the %.0f MiB requested would have fit "
        "(%.2f GiB of the card's %.2f)",
        (double)copies / 1073741824.0,
        mib(live->bytes[CAT_ACTIVATIONS] + live->bytes[CAT_ATTENTION]),
        mib(live->bytes[CAT_LOGITS]), mib(requested),
        (double)(held - copies + requested) / 1073741824.0, (double)capacity / 1073741824.0);
    return 1;
}
