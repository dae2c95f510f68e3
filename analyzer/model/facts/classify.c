/* classify.c — THE table of classification rules: ordered, first match wins, each with a
 * one-line reason a reader can review. Tensor mode sees each tensor with its lifetime;
 * segment mode sees caching-allocator segments, classified by the phase that forced them. */
#include "classify.h"

#include <stdlib.h>

#include "phases.h"
#include "vramtrace/trace_format.h"

typedef int (*rule_fn)(const classify_input *in);

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
           (in->tensor_api && in->input &&
            (in->phase_alloc == PHASE_FORWARD || in->phase_alloc == PHASE_INIT));
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
/* crossed_backward: a backward pass began while it was alive (or it is alive at the end, or
 * an out-of-memory error freed it: the step it was made for never finished) */
static int crossed_backward(const classify_input *in)
{
    return !in->freed || in->bwd_free > in->bwd_alloc || in->cut_by_oom;
}
static int r_workspace(const classify_input *in)
{
    return TEN(in) && in->workspace;
}
static int r_t_params(const classify_input *in)
{
    /* kept into training: alive at the end, freed after a backward began, or freed by an
     * out-of-memory error's exit before any backward (the run died in its first forward) */
    return TEN(in) && in->phase_alloc == PHASE_INIT &&
           (!in->freed || in->bwd_free > 0 || in->cut_by_oom);
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
           (crossed_backward(in) || in->phase_free != PHASE_BACKWARD);
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
    return in->phase_alloc == PHASE_FORWARD && in->weight_copy;
}
static int r_loss(const classify_input *in)
{
    return (in->phase_alloc == PHASE_FORWARD || in->phase_alloc == PHASE_EVAL) &&
           (in->loss_site || in->vocab_sized);
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
      "made by backward, B*T*V sized or under the loss: logits' gradient")                         \
    X(backward_kept, r_bwd_kept, BACKWARD,                                                         \
      "made by backward, not parameter-sized, alive after it")                                     \
    X(backward_attention, r_bwd_attn, ATTENTION,                                                   \
      "made by an attention kernel's backward, freed in it")                                       \
    X(backward_temp, r_bwd_temp, BACKWARD, "allocated and freed within backward (scratch)")        \
    X(autocast_copy, r_autocast, AUTOCAST, "a 16-bit copy of a weight made in forward (autocast)") \
    X(logits_loss, r_loss, LOGITS, "B*T*V sized (a multiple of the vocabulary) or under the loss") \
    X(activations, r_acts, ACTIVATIONS,                                                            \
      "allocated in forward, alive when backward began: saved for it")                             \
    X(forward_attention, r_fwd_attn, ATTENTION, "made by an attention kernel, freed in forward")   \
    X(forward_temp, r_fwd_temp, TEMPORARIES, "allocated and freed within forward")                 \
    X(eval, r_eval, TEMPORARIES, "allocated under evaluation (no_grad): a spike, freed after it")  \
    X(compile, r_compile, TEMPORARIES, "allocated by torch.compile's warm-up (dynamo / inductor)") \
    X(other_tensor, r_other, TEMPORARIES, "a tensor of no phase above")

static const struct {
    const char *name;
    rule_fn fn;
    category cat;
    const char *reason;
} g_rules[] = {
#define VT_RULE_ROW(name, fn, cat, reason) {#name, fn, CAT_##cat, reason},
    VT_RULES(VT_RULE_ROW)
#undef VT_RULE_ROW
};
enum { N_RULES = sizeof g_rules / sizeof g_rules[0] };

category classify(const classify_input *in, int *rule_out)
{
    for (int i = 0; i < N_RULES; i++) {
        if (g_rules[i].fn(in)) {
            if (rule_out)
                *rule_out = i;
            return g_rules[i].cat;
        }
    }
    if (rule_out)
        *rule_out = N_RULES;
    return CAT_UNKNOWN;
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
    if (first >= 4)
        return 0;
    qsort(sizes, n, sizeof *sizes, cmp_u64);
    uint64_t largest = sizes[n - 1], d = 0;
    for (size_t i = 0; i + 1 < n && !d; i++)
        if (sizes[i] >= 256 && sizes[i] == sizes[i + 1])
            d = sizes[i];
    if (d && largest % d == 0 && largest / d >= 1000 && largest / d <= (1u << 22))
        return largest / d;
    return 0;
}
