/* classify.c — THE table of classification rules: ordered, first match wins, each with a
 * one-line reason a reader can review. Tensor mode sees each tensor with its lifetime;
 * segment mode sees caching-allocator segments, classified by the phase that forced them. */
#include "classify.h"

#include "phases.h"
#include "vramtrace/trace_format.h"

typedef int (*rule_fn)(const classify_input *in);

static int r_context(const classify_input *in) { return in->space == VT_SPACE_CONTEXT; }
static int r_kernel(const classify_input *in) { return in->space == VT_SPACE_MODULE || in->space == VT_SPACE_LIBRARY; }
static int r_external(const classify_input *in)
{
    return in->space == VT_SPACE_MANAGED || (in->space == VT_SPACE_DEVICE && in->layer == 2 && !in->tensor_api);
}
static int r_inputs(const classify_input *in) { return in->phase_alloc == PHASE_DATA; }
static int r_params(const classify_input *in) { return in->phase_alloc == PHASE_INIT; }
static int r_optim_state(const classify_input *in)
{
    return in->phase_alloc == PHASE_OPTIMIZER && (in->phase_free == PHASE_COUNT || in->iter_free > in->iter_alloc);
}
static int r_optim_temp(const classify_input *in) { return in->phase_alloc == PHASE_OPTIMIZER; }
static int r_seg_loss(const classify_input *in) { return !in->tensor_mode && in->phase_alloc == PHASE_FORWARD && in->loss_site; }
static int r_seg_fwd(const classify_input *in) { return !in->tensor_mode && in->phase_alloc == PHASE_FORWARD; }
static int r_seg_bwd(const classify_input *in) { return !in->tensor_mode && in->phase_alloc == PHASE_BACKWARD; }
static int r_grads(const classify_input *in)
{
    return in->phase_alloc == PHASE_BACKWARD && in->phase_free != PHASE_BACKWARD;
}
static int r_bwd_temp(const classify_input *in) { return in->phase_alloc == PHASE_BACKWARD; }
static int r_autocast(const classify_input *in) { return in->phase_alloc == PHASE_FORWARD && in->weight_copy; }
static int r_loss(const classify_input *in) { return in->phase_alloc == PHASE_FORWARD && in->loss_site; }
static int r_acts(const classify_input *in)
{
    return in->phase_alloc == PHASE_FORWARD && (in->phase_free == PHASE_BACKWARD || in->phase_free == PHASE_COUNT ||
                                                in->iter_free > in->iter_alloc);
}
static int r_fwd_temp(const classify_input *in) { return in->phase_alloc == PHASE_FORWARD; }
static int r_eval_loss(const classify_input *in) { return in->phase_alloc == PHASE_EVAL && in->loss_site; }
static int r_eval(const classify_input *in) { return in->phase_alloc == PHASE_EVAL; }
static int r_compile(const classify_input *in) { return in->phase_alloc == PHASE_COMPILE; }

#define VT_RULES(X)                                                                                   \
    X(context, r_context, CONTEXT, "a context creation: its size is the driver's used-memory delta")    \
    X(kernel_code, r_kernel, KERNEL_CODE, "a module / library load: kernel images on the device")       \
    X(external, r_external, EXTERNAL, "driver-level or managed memory: not PyTorch's allocator")       \
    X(inputs, r_inputs, INPUTS, "allocated while loading a batch (get_batch / DataLoader)")            \
    X(parameters, r_params, PARAMETERS, "allocated while building / moving the model, before training") \
    X(optimizer_state, r_optim_state, OPTIMIZER, "allocated in optimizer.step and kept across steps")   \
    X(optimizer_temp, r_optim_temp, TEMPORARIES, "allocated and freed within one optimizer step")       \
    X(segment_loss, r_seg_loss, LOGITS, "segment mode: a segment forced by the loss computation")      \
    X(segment_forward, r_seg_fwd, ACTIVATIONS, "segment mode: a segment forced during forward")        \
    X(segment_backward, r_seg_bwd, GRADIENTS, "segment mode: a segment forced during backward")        \
    X(gradients, r_grads, GRADIENTS, "allocated in backward and alive after it (until zero_grad)")     \
    X(backward_temp, r_bwd_temp, TEMPORARIES, "allocated and freed within backward (scratch)")         \
    X(autocast_copy, r_autocast, AUTOCAST, "a 16-bit copy of a weight made in forward (autocast)")    \
    X(logits_loss, r_loss, LOGITS, "allocated under cross_entropy / log_softmax (logits, loss)")       \
    X(activations, r_acts, ACTIVATIONS, "allocated in forward, freed in backward: saved for backward")  \
    X(forward_temp, r_fwd_temp, TEMPORARIES, "allocated and freed within forward")                     \
    X(eval_logits, r_eval_loss, LOGITS, "allocated under the loss during evaluation: logits of eval")  \
    X(eval, r_eval, TEMPORARIES, "allocated under evaluation (no_grad): a spike, freed after it")     \
    X(compile, r_compile, TEMPORARIES, "allocated by torch.compile's warm-up (dynamo / inductor)")

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
