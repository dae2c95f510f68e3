/* classify.c — THE table of classification rules: ordered, first match wins, each with a
 * one-line reason a reader can review. Tensor mode sees each tensor with its lifetime;
 * segment mode sees caching-allocator segments, classified by the phase that forced them. */
#include "classify.h"

#include <stdlib.h>
#include <string.h>

#include "phases.h"
#include "vramtrace/trace_format.h"

/* The rules: each a predicate on the input; VT_RULES below orders them (first match wins). */
static int r_context(const classify_input *in)
{
    return in->space == VT_SPACE_CONTEXT;
}
static int r_kernel(const classify_input *in)
{
    return in->space == VT_SPACE_MODULE || in->space == VT_SPACE_LIBRARY;
}
static int r_external(const classify_input *in)
{
    return in->space == VT_SPACE_MANAGED ||
           (in->space == VT_SPACE_DEVICE && in->layer == 2 && !in->tensor_api);
}
/* ---- segment mode (no tensor events): a segment is classified by the phase that forced it */
#define SEG(in) (!(in)->tensor_api)
static int r_inputs(const classify_input *in)
{
    /* the program's own batch, also the first one, made before the first forward (a token or
     * image batch copied to the device is not a parameter) */
    return in->phase_alloc == PHASE_DATA ||
           (in->tensor_api && in->input && !in->workspace &&
            (in->phase_alloc == PHASE_FORWARD || in->phase_alloc == PHASE_INIT));
}
/* crossed_backward: a backward pass began while it was alive (or it is alive at the end, or
 * an out-of-memory error freed it: the step it was made for never finished) */
static int crossed_backward(const classify_input *in)
{
    return !in->freed || in->bwd_free > in->bwd_alloc || in->cut_by_oom;
}
/* freed_before_backward: freed, not by an out-of-memory error, before the next backward began */
static int freed_before_backward(const classify_input *in)
{
    return in->freed && !in->cut_by_oom && in->bwd_free == in->bwd_alloc;
}
/* device_copy: a tensor the program's own code copied on the device (clone) outside a module
 * (phases.c tells it as input and workspace together) */
static int device_copy(const classify_input *in)
{
    return in->tensor_api && in->input && in->workspace;
}
/* host_copy: a tensor the program's own code copied or made onto the device after a backward
 * began (training under way: not the first step's batch), outside a module */
static int host_copy(const classify_input *in)
{
    return in->tensor_api && in->input && !in->workspace && in->bwd_alloc > 0;
}
static int r_opt_copy(const classify_input *in)
{
    /* a weight's size, copied on the device by the program's own optimizer class (told as a
     * device copy under an attention kernel, which no program's copy is: replay_phase.c's
     * replay_facts_slow) and kept past a step, to the end, or into an out-of-memory error: its
     * state (SAM's first_step keeps old_p, a copy of every weight, until the next step's) */
    return device_copy(in) && in->attention && in->param_sized &&
           (!in->freed || in->cut_by_oom ||
            (in->iter_free > in->iter_alloc && in->bwd_free > in->bwd_alloc));
}
static int r_kept_copy(const classify_input *in)
{
    /* a weight's size, made after the first forward and kept past the optimizer step after it,
     * to the end, or into the forward that ran out of memory: a checkpoint of the weights or of
     * the optimizer's state (AdamW's moments have the weights' sizes), a best model; the rest
     * of such copies is sorted by its lifetime, as any tensor (a batch's clone: a size of its
     * own) */
    return device_copy(in) && in->param_sized && in->phase_alloc == PHASE_FORWARD &&
           (!in->freed || in->cut_by_oom ||
            (in->iter_free > in->iter_alloc && in->bwd_free > in->bwd_alloc));
}
static int r_state_back(const classify_input *in)
{
    /* a weight's size, copied onto the device after a backward and freed once the optimizer
     * step after it began, before the next backward: state the program keeps on the host
     * between steps (AdamW's moments have the weights' sizes), brought back for the step (a
     * batch lives through its backward), in a run whose state had left the device between
     * steps before (an Opacus step's noise, randn(p.size()).to(device) for each weight, whose
     * first was freed after the gradient its step replaced, had been 1 MiB of "state" beside
     * Adam's, which stays on the device) */
    return host_copy(in) && in->param_sized && in->phase_alloc == PHASE_FORWARD &&
           freed_before_backward(in) && in->iter_free > in->iter_alloc && in->state_left;
}
/* own_cast: the program's own dtype cast of a tensor on the device, outside a module (x.float(),
 * .to(dtype)), in the loop (before the first forward it is made as init's: master weights are
 * parameters by their lifetime; a batch's cast after a batch went onto the device is input
 * already, the replay's) */
static int own_cast(const classify_input *in)
{
    return in->tensor_api && in->own_cast && !in->input && in->phase_alloc == PHASE_FORWARD;
}
static int r_cast_grads(const classify_input *in)
{
    /* a weight's size, cast after a backward and freed by the optimizer step after it (or once
     * it began), before the next backward: the gradients cast for the step (fp32 master
     * gradients: m.grad = p.grad.float(), freed by zero_grad; the step is counted from the first
     * gradient freed, which can come among the casts); a batch lives through its backward */
    return own_cast(in) && in->bwd_alloc > 0 && in->param_sized && !in->vocab_sized &&
           (in->iter_free > in->iter_alloc || in->phase_free == PHASE_OPTIMIZER) &&
           freed_before_backward(in);
}
static int r_cast_grads_kept(const classify_input *in)
{
    /* a weight's size, cast after the first backward (the line first ran before the first step),
     * kept across the backward after it: master gradients kept between steps
     * (zero_grad(set_to_none=False) zeroes them in place), not a batch's cast (made before the
     * forward) */
    return own_cast(in) && in->cast_grads && in->param_sized && !in->vocab_sized &&
           crossed_backward(in);
}
static int r_cast_logits(const classify_input *in)
{
    return own_cast(in) && in->vocab_sized; /* B*T*V: the logits' copy for the loss */
}
static int r_cast_temp(const classify_input *in)
{
    /* freed before a backward or a step followed: a temporary of the loop's (the logits' copy a
     * loss read, of a size the vocabulary does not tell: B*T*V elements are an embedding's V*d
     * where B*T is the width; an image batch's cast before its normalization) */
    return own_cast(in) && freed_before_backward(in) && in->iter_free == in->iter_alloc;
}
static int r_cast_output(const classify_input *in)
{
    /* made after the forward, kept into the backward: the loss's input (a batch's cast comes
     * before the forward) */
    return own_cast(in) && in->cast_output;
}
static int r_cast_batch(const classify_input *in)
{
    return own_cast(in); /* (x.cuda().float(): a batch cast on the device before the forward) */
}
static int r_params(const classify_input *in)
{
    return SEG(in) && in->phase_alloc == PHASE_INIT;
}
static int r_optim_state(const classify_input *in)
{
    return SEG(in) && in->phase_alloc == PHASE_OPTIMIZER &&
           (in->phase_free == PHASE_COUNT || in->iter_free > in->iter_alloc);
}
static int r_optim_temp(const classify_input *in)
{
    return SEG(in) && in->phase_alloc == PHASE_OPTIMIZER;
}
static int r_seg_loss(const classify_input *in)
{
    return !in->tensor_mode && in->phase_alloc == PHASE_FORWARD && in->loss_site;
}
static int r_seg_fwd(const classify_input *in)
{
    return !in->tensor_mode && in->phase_alloc == PHASE_FORWARD;
}
static int r_seg_bwd(const classify_input *in)
{
    return !in->tensor_mode && in->phase_alloc == PHASE_BACKWARD;
}

/* ---- tensors: what a tensor is, from its lifetime (alloc -> free) and its role */
#define TEN(in) ((in)->tensor_api)
static int r_workspace(const classify_input *in)
{
    return TEN(in) && in->workspace && !in->input; /* (with input: device_copy) */
}
static int r_t_params(const classify_input *in)
{
    /* kept into training: alive at the end, freed after an optimizer step (not a batch made
     * before the first forward and freed after its backward: a U-Net's first noisy images),
     * freed by an out-of-memory error's exit before any step (the run died in its first
     * micro-steps), or freed at the program's exit after its last allocation (a run with no
     * backward at all: an evaluation or inference script's weights) */
    return TEN(in) && in->phase_alloc == PHASE_INIT &&
           (!in->freed || in->iter_free > 0 || in->cut_by_oom || in->freed_at_end);
}
static int r_init_temp(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_INIT;
}
static int r_t_optim_state(const classify_input *in)
{
    /* kept: across a backward, or past the step that made it (freed after zero_grad freed
     * the gradients, or at the end of a run that never freed them): a run of one step frees
     * its state at the end */
    return TEN(in) && in->phase_alloc == PHASE_OPTIMIZER &&
           (crossed_backward(in) || in->outlived_step || in->freed_at_end);
}
static int r_t_optim_temp(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_OPTIMIZER;
}
static int r_grads(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_BACKWARD && in->param_sized && !in->vocab_sized &&
           !in->loss_site && (crossed_backward(in) || in->phase_free != PHASE_BACKWARD);
}
static int r_loss_bwd(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_BACKWARD && (in->loss_site || in->vocab_sized);
}
static int r_bwd_kept(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_BACKWARD &&
           (crossed_backward(in) || in->phase_free != PHASE_BACKWARD);
}
static int r_bwd_attn(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_BACKWARD && in->attention;
}
static int r_bwd_temp(const classify_input *in)
{
    return in->phase_alloc == PHASE_BACKWARD;
}
static int r_autocast(const classify_input *in)
{
    /* (a cast under an attention op is of its inputs: an attention op has no weight; a key or
     * query of B*T*kv elements can be a d x d weight copy's size). An evaluation's or a
     * rollout's forward under autocast copies the weights as a training one does (a PPO
     * rollout's copies at its peak had been "temporaries") */
    return (in->phase_alloc == PHASE_FORWARD || in->phase_alloc == PHASE_EVAL) && in->weight_copy &&
           !in->attention;
}
static int r_loss(const classify_input *in)
{
    return (in->phase_alloc == PHASE_FORWARD || in->phase_alloc == PHASE_EVAL) &&
           (in->loss_site || in->vocab_sized);
}
static int r_frozen_fwd(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_FORWARD && !in->bwd_alloc && in->frozen_oom &&
           (!in->freed || in->cut_by_oom);
}
static int r_acts(const classify_input *in)
{
    return in->phase_alloc == PHASE_FORWARD &&
           (TEN(in) ? crossed_backward(in)
                    : in->phase_free == PHASE_BACKWARD || in->phase_free == PHASE_COUNT ||
                          in->iter_free > in->iter_alloc);
}
static int r_fwd_attn(const classify_input *in)
{
    return TEN(in) && in->phase_alloc == PHASE_FORWARD && in->attention;
}
static int r_fwd_temp(const classify_input *in)
{
    return in->phase_alloc == PHASE_FORWARD;
}
static int r_eval_kept(const classify_input *in)
{
    /* made in a no-grad pass and freed after a backward began: what the program kept past it
     * (a PPO rollout's sequences and old log-probs, which the updates slice; a Lightning
     * validation's logged loss, 4 B, which no batch is: the rule cannot tell the pass's kind),
     * not a spike of the pass (one alive at an out-of-memory error or at the end may be a
     * spike still) */
    return TEN(in) && in->phase_alloc == PHASE_EVAL && in->freed && !in->cut_by_oom &&
           in->bwd_free > in->bwd_alloc;
}
static int r_eval(const classify_input *in)
{
    return in->phase_alloc == PHASE_EVAL;
}
static int r_compile(const classify_input *in)
{
    return in->phase_alloc == PHASE_COMPILE;
}
static int r_other(const classify_input *in)
{
    return TEN(in);
}

#define VT_RULES(X)                                                                                \
    X(context, r_context, CONTEXT,                                                                 \
      "a context creation: its size is the driver's used-memory delta")                            \
    X(kernel_code, r_kernel, KERNEL_CODE, "a module / library load: kernel images on the device")  \
    X(external, r_external, EXTERNAL, "driver-level or managed memory: not PyTorch's allocator")   \
    X(opt_copy, r_opt_copy, OPTIMIZER,                                                             \
      "a weight-sized copy the program's own optimizer class made on the device, kept past a "     \
      "step: its state (SAM's copy of the weights)")                                               \
    X(kept_copy, r_kept_copy, PARAMETERS,                                                          \
      "a weight-sized copy the program made on the device itself after the first forward, kept "   \
      "past a step (a checkpoint of the weights or of the optimizer's state): held as weights")    \
    X(state_back, r_state_back, OPTIMIZER,                                                         \
      "a weight-sized copy the program made on the device after a backward, freed after the "      \
      "optimizer step that followed, in a run whose optimizer state had left the device between "  \
      "steps: optimizer state kept on the host between steps")                                     \
    X(cast_gradients, r_cast_grads, GRADIENTS,                                                     \
      "the program's own dtype cast of a weight's size, made after a backward and freed by the "   \
      "optimizer step that followed, before the next backward: gradients cast for the step")       \
    X(cast_gradients_kept, r_cast_grads_kept, GRADIENTS,                                           \
      "the program's own dtype cast of a weight's size whose line first ran after the first "      \
      "backward, before the first step, kept across a backward: master gradients kept between "    \
      "steps")                                                                                     \
    X(cast_logits, r_cast_logits, LOGITS,                                                          \
      "the program's own dtype cast, B*T*V sized: the logits' copy for the loss")                  \
    X(cast_temp, r_cast_temp, TEMPORARIES,                                                         \
      "the program's own dtype cast, freed before a backward or a step followed: a temporary")     \
    X(cast_output, r_cast_output, LOGITS,                                                          \
      "the program's own dtype cast of what the forward made (its line first ran after the first " \
      "forward began, before a backward), kept into the backward: the output's copy for the loss") \
    X(cast_inputs, r_cast_batch, INPUTS,                                                           \
      "the program's own dtype cast on the device in the loop, outside a module: a batch's")       \
    X(workspace, r_workspace, WORKSPACE, "allocated under cuBLAS's handle: its workspace, kept")   \
    X(inputs, r_inputs, INPUTS,                                                                    \
      "a batch: get_batch / DataLoader, or made / copied by the program itself")                   \
    X(parameters, r_t_params, PARAMETERS,                                                          \
      "allocated before the first forward, kept into training (or until an OOM ended it)")         \
    X(init_temp, r_init_temp, TEMPORARIES,                                                         \
      "allocated before the first forward, freed before training")                                 \
    X(optimizer_state, r_t_optim_state, OPTIMIZER,                                                 \
      "allocated in an optimizer step, kept past it (across steps, or to the end)")                \
    X(optimizer_temp, r_t_optim_temp, TEMPORARIES,                                                 \
      "allocated and freed within one optimizer step")                                             \
    X(segment_parameters, r_params, PARAMETERS, "segment mode: a segment forced before training")  \
    X(segment_optimizer, r_optim_state, OPTIMIZER, "segment mode: forced in optimizer.step, kept") \
    X(segment_optimizer_temp, r_optim_temp, TEMPORARIES,                                           \
      "segment mode: forced in optimizer.step, freed")                                             \
    X(segment_loss, r_seg_loss, LOGITS, "segment mode: a segment forced by the loss computation")  \
    X(segment_forward, r_seg_fwd, ACTIVATIONS, "segment mode: a segment forced during forward")    \
    X(segment_backward, r_seg_bwd, BACKWARD, "segment mode: a segment forced during backward")     \
    X(gradients, r_grads, GRADIENTS,                                                               \
      "parameter-sized, made by backward, alive after it (until zero_grad)")                       \
    X(loss_backward, r_loss_bwd, LOGITS,                                                           \
      "made by backward, B*T*V sized or under the loss: logits' gradient, or the loss itself")     \
    X(backward_kept, r_bwd_kept, BACKWARD,                                                         \
      "made by backward, not parameter-sized, alive after it")                                     \
    X(backward_attention, r_bwd_attn, ATTENTION,                                                   \
      "made by an attention kernel's backward, freed in it")                                       \
    X(backward_temp, r_bwd_temp, BACKWARD, "allocated and freed within backward (scratch)")        \
    X(autocast_copy, r_autocast, AUTOCAST, "a 16-bit copy of a weight made in forward (autocast)") \
    X(logits_loss, r_loss, LOGITS, "B*T*V sized (a multiple of the vocabulary) or under the loss") \
    X(frozen_forward, r_frozen_fwd, TEMPORARIES,                                                   \
      "in use when a first forward that kept nothing for a backward ran out of memory (its "       \
      "weights' 16-bit copies freed after each use: frozen weights)")                              \
    X(activations, r_acts, ACTIVATIONS,                                                            \
      "allocated in forward, alive when backward began: saved for it")                             \
    X(forward_attention, r_fwd_attn, ATTENTION, "made by an attention kernel, freed in forward")   \
    X(forward_temp, r_fwd_temp, TEMPORARIES, "allocated and freed within forward")                 \
    X(eval_kept, r_eval_kept, INPUTS,                                                              \
      "allocated under a no-grad pass (an evaluation, a rollout), freed after a backward began: "  \
      "what the program kept past the pass (a rollout's sequences the updates read; an "           \
      "evaluation's logged loss)")                                                                 \
    X(eval, r_eval, TEMPORARIES, "allocated under evaluation (no_grad): a spike, freed after it")  \
    X(compile, r_compile, TEMPORARIES, "allocated by torch.compile's warm-up (dynamo / inductor)") \
    X(other_tensor, r_other, TEMPORARIES, "a tensor of no phase above")

static const struct {
    const char *name;
    category cat;
    const char *reason;
} g_rules[] = {
#define VT_RULE_ROW(name, fn, cat, reason) {#name, CAT_##cat, reason},
    VT_RULES(VT_RULE_ROW)
#undef VT_RULE_ROW
};
enum { N_RULES = sizeof g_rules / sizeof g_rules[0] };

/* first_rule: the index of the first rule that matches, N_RULES when none: the table's rules
 * tried in its order, each inline (no call through the table for each). */
static int first_rule(const classify_input *in)
{
    int i = 0;
#define VT_RULE_TRY(name, fn, cat, reason)                                                         \
    if (fn(in))                                                                                    \
        return i;                                                                                  \
    i++;
    VT_RULES(VT_RULE_TRY)
#undef VT_RULE_TRY
    return i;
}

category classify(const classify_input *in, int *rule_out)
{
    int i = first_rule(in);
    if (rule_out)
        *rule_out = i;
    return i < N_RULES ? g_rules[i].cat : CAT_UNKNOWN;
}

const char *classify_rule_name(int rule)
{
    return rule >= 0 && rule < N_RULES ? g_rules[rule].name : "unknown";
}

const char *classify_rule_reason(int rule)
{
    return rule >= 0 && rule < N_RULES ? g_rules[rule].reason : "no rule matched: shown as unknown";
}

int classify_rule_count(void)
{
    return N_RULES;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t classify_vocab(uint64_t *sizes, size_t n)
{
    if (n < 4)
        return 0;
    /* a token embedding comes first among the weights (an untied head of its size may come
     * last): the largest tensor met later is a block's (a ViT's MLP) or a classifier's */
    uint64_t big = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++)
        if (sizes[i] > big)
            big = sizes[i], first = i;
    for (size_t i = 0; i < first; i++)
        if (sizes[i] == big)
            first = i;
    /* fp32 master copies a 16-bit loop makes of its weights after them, in their order: the
     * largest is the embedding's copy, made late, its 16-bit original (half its size) among the
     * first four, and the four weights' copies lie as far apart as they do (the run of copies
     * begins where the originals' begins, shifted: no other model's sizes by chance, a GAN's
     * generator and discriminator) */
    if (first >= 4 && !(big & 1))
        for (size_t i = 0; i < 4 && first >= 4; i++) {
            size_t at = first - i, m = 0; /* where the copies would begin */
            while (m < 4 && at + m < n && sizes[at + m] == 2 * sizes[m])
                m++;
            if (sizes[i] == big / 2 && m == 4)
                big /= 2, first = i;
        }
    if (first >= 4)
        return 0;
    qsort(sizes, n, sizeof *sizes, cmp_u64);
    /* the width: the smallest size of at least 256 B met four times or more (every block has
     * norm weights of d; a pair of another size, such as T5's two relative-position tables of
     * 32 buckets x 8 heads, is not the width) that divides the embedding into rows; a larger one
     * when it does not (two models: a student's norms of 768 beside the GPT-2 medium teacher's
     * embedding of 1024 first) */
    uint64_t largest = big; /* (the embedding's size: the largest, or its 16-bit original) */
    for (size_t i = 0; i + 3 < n; i++) {
        uint64_t d = sizes[i];
        if (d < 256 || d != sizes[i + 3] || (i && sizes[i - 1] == d))
            continue;
        if (largest % d == 0 && largest / d >= 1000 && largest / d <= (1u << 22))
            return largest / d;
    }
    return 0;
}
