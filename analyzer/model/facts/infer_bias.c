/* infer_bias.c — whether a transformer block's projections have biases (infer_pass.h's
 * vt__infer_bias), from the element counts of one repeating block. A block's d-sized tensors
 * are its norms' weights, LayerNorm's biases beside them (a pair: weight, then bias) and the
 * biases of its projections of output width d; a projection of another output width w (a fused
 * qkv's 3d, an MLP's 4d, a grouped key's kv) keeps a bias of w elements beside its w×d weight.
 * Counting d-sized tensors alone had called an MoE GPT with bias=False Linears and two
 * LayerNorms (4 d-vectors, all the norms') "bias True: ... norm and projection biases". */
#include <stdarg.h>
#include <stdio.h>

#include "infer_pass.h"

/* said: INFER_bias known, v, with where it came from (vt__set's, kept here: infer_weights.c calls
 * this file, which calls nothing of it back) */
static void said(infer_result *out, int64_t v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void said(infer_result *out, int64_t v, const char *fmt, ...)
{
    va_list ap;
    out->v[INFER_bias].known = 1;
    out->v[INFER_bias].value = v;
    va_start(ap, fmt);
    vsnprintf(out->v[INFER_bias].where, sizeof out->v[INFER_bias].where, fmt, ap);
    va_end(ap);
}

/* bias_wide: in the block elems[lo..lo+per), the tensors of w elements (w > 1, w ≠ d) beside a
 * w·d one (a projection's bias of its output width w): how many; and in *proj whether the block has
 * a projection of an output width other than d (a w·d tensor, w > 1, w ≠ d) at all */
static size_t bias_wide(const uint64_t *elems, size_t lo, size_t per, uint64_t d, int *proj)
{
    size_t wide = 0;
    *proj = 0;
    for (size_t i = lo; i < lo + per; i++) {
        uint64_t w = elems[i];
        if (w % d == 0 && w / d > 1 && w != d * d)
            *proj = 1;
        uint64_t wd = vt__mul(w, d);
        if (w <= 1 || w == d || !wd)
            continue;
        for (size_t j = lo; j < lo + per; j++)
            if (elems[j] == wd) {
                wide++;
                break;
            }
    }
    return wide;
}

/* bias_pairs: the block's d-sized tensors lie in runs of an even length, none alone or beside
 * two others: each norm's weight followed by its bias (a block's norms may come first, two
 * LayerNorms' four: PyTorch moves a module's parameters in the order its __init__ made its
 * children) */
static int bias_pairs(const uint64_t *elems, size_t lo, size_t per, uint64_t d)
{
    size_t run = 0;
    for (size_t i = lo; i <= lo + per; i++) {
        if (i < lo + per && elems[i] == d) {
            run++;
            continue;
        }
        if (run % 2)
            return 0;
        run = 0;
    }
    return 1;
}

void vt__infer_bias(const uint64_t *elems, size_t n, size_t lo, size_t per, size_t reps, uint64_t d,
                    infer_result *out)
{
    size_t nd = 0;
    for (size_t i = lo; d && reps >= 2 && i < lo + per && i < n; i++)
        nd += elems[i] == d;
    if (!d || reps < 2 || lo + per > n || (nd != 2 && nd < 3))
        return;
    if (out->v[INFER_mlp_width].known) {
        /* a gated block's norms (RMSNorm) have no bias: its other d-sized tensors are
         * projections' biases (a Llama's attention_bias: q's and o's) */
        if (nd == 2 || nd >= 4)
            said(out, nd >= 4,
                 nd >= 4 ? "bias True: %zu tensors of d elements in each block (the norms' "
                           "weights and projection biases)"
                         : "bias False: %zu tensors of d elements in each block (the norms' "
                           "weights only)",
                 nd);
        return;
    }
    int proj;
    size_t wide = bias_wide(elems, lo, per, d, &proj);
    if (wide) /* (nanoGPT bias=True, Hugging Face GPT-2: qkv's 3d, the MLP's 4d beside them) */
        said(out, 1, "bias True: %zu tensors of d elements in each block (%s)", nd,
             nd >= 4 ? "norm weights, norm and projection biases"
                     : "norm weights and projection biases");
    else if (nd == 2)
        said(out, 0, "bias False: 2 tensors of d elements in each block (the norms' weights only)");
    else if (proj && bias_pairs(elems, lo, per, d))
        /* (the norms' biases are LayerNorm's own: no flag of the projections removes them) */
        said(out, 0,
             "bias False: no projection of another output width than d has a bias (no "
             "tensor of that width beside its weight); the %zu tensors of d elements in each "
             "block lie in pairs, as norms' weights and biases do (LayerNorm's own)",
             nd);
    /* else not known: d-sized tensors beyond the norms' weights, and nothing to tell norms'
     * biases from those of projections of output width d */
}
