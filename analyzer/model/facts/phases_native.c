/* phases_native.c — what a native frame says for the phases (phases_bits.h): an ATen operator's
 * dispatch, the autograd engine, a loss, a cast, cuBLAS's workspace, attention, dropout, from its
 * function's name; phases.c reads the Python frames and puts a stack's frames together. */
#include "phases.h"
#include "phases_bits.h"

#include <string.h>

/* the ATen operators (dispatch names) a model's forward runs and its construction does not: a
 * layer's linear map, convolution, normalization, attention, activation or embedding lookup.
 * Building a model and moving it to the device (empty, normal_, _to_copy, arange, a rotary table's
 * cos) calls none of them; plain products (mm, bmm, matmul) are not among them: a model built on
 * the device can make a table with them (an older Llama's rotary cache: einsum, then bmm) */
static const char *const model_ops[] = {
    "embedding",
    "addmm",
    "linear",
    "convolution",
    "_convolution",
    "cudnn_convolution",
    "conv1d",
    "conv2d",
    "conv3d",
    "layer_norm",
    "native_layer_norm",
    "rms_norm",
    "_fused_rms_norm",
    "batch_norm",
    "native_batch_norm",
    "_native_batch_norm_legit",
    "cudnn_batch_norm",
    "group_norm",
    "native_group_norm",
    "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_softmax",
    "softmax_int",
    "_log_softmax",
    "gelu",
    "silu",
};

/* model_op: the dispatch frame's first at::_ops:: (at p, NULL: none) names one of model_ops
 * ("at::_ops::addmm::call(...)") */
static int model_op(const char *p)
{
    if (!p)
        return 0;
    p += strlen("at::_ops::");
    for (size_t i = 0; i < sizeof model_ops / sizeof *model_ops; i++) {
        size_t n = strlen(model_ops[i]);
        if (!strncmp(p, model_ops[i], n) && p[n] == ':' && p[n + 1] == ':')
            return 1;
    }
    return 0;
}

uint32_t phases_native_bits(const char *fn)
{
    uint32_t b = strstr(fn, "torch::autograd::Engine") ? FB_BWD | FB_ENGINE : 0;
    b |= strstr(fn, "cross_entropy") || strstr(fn, "log_softmax") || strstr(fn, "nll_loss")
             ? FB_LOSS
             : 0;
    b |= strstr(fn, "_to_copy") ? FB_TO_COPY : 0;
    b |= strstr(fn, "at::autocast::") ? FB_AUTOCAST : 0;
    const char *op = strstr(fn, "at::_ops::");
    b |= op ? FB_OP : 0;
    b |= model_op(op) ? FB_MODEL_OP : 0;
    /* the operator after each at::_ops:: of the name (its template arguments may hold more) */
    for (const char *q = op; q; q = strstr(q + 1, "at::_ops::")) {
        const char *o = q + strlen("at::_ops::");
        b |= !strncmp(o, "randint", 7) || !strncmp(o, "random_", 7) ? FB_RAND : 0;
        b |= !strncmp(o, "clone::", 7) ? FB_CLONE : 0;
        b |= !strncmp(o, "zeros::", 7) || !strncmp(o, "ones::", 6) || !strncmp(o, "full::", 6) ||
                     !strncmp(o, "empty_memory_format::", 21)
                 ? FB_FILLED
                 : 0;
        b |= !strncmp(o, "to_dtype::", 10) ? FB_TO_DTYPE : 0;
        b |= !strncmp(o, "softmax::", 9) || !strncmp(o, "softmax_int::", 13) ||
                     !strncmp(o, "_softmax::", 10)
                 ? FB_SOFTMAX
                 : 0;
        b |= !strncmp(o, "randn", 5) || !strncmp(o, "rand_like", 9) || !strncmp(o, "rand::", 6) ||
                     !strncmp(o, "normal", 6)
                 ? FB_NOISE
                 : 0;
    }
    b |= strstr(fn, "BlasHandle") || strstr(fn, "BlasLtWorkspace") || strstr(fn, "cublas")
             ? FB_WORKSPACE
             : 0;
    uint32_t fused = strstr(fn, "flash_attention") || strstr(fn, "efficient_attention") ||
                             strstr(fn, "cudnn_attention")
                         ? FB_FUSED_ATTN
                         : 0;
    b |= fused | (fused || strstr(fn, "scaled_dot_product") ? FB_ATTENTION : 0);
    b |= strstr(fn, "native_dropout") && !strstr(fn, "backward") ? FB_DROPOUT : 0;
    return b;
}

int phases_native_may_say(const char *name)
{
    /* a word whole in each pattern of phases_native_bits: a demangled name is made of the
     * mangled one's identifiers (and the demangler's own words, none of which holds one of these),
     * so a name without any of them, mangled or not, says nothing */
    static const char *const words[] = {
        "Engine",         "cross_entropy", "log_softmax", "nll_loss",   "_to_copy",
        "_ops",           "Blas",          "cublas",      "_attention", "scaled_dot_product",
        "native_dropout", "autocast"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(name, words[i]))
            return 1;
    return 0;
}
