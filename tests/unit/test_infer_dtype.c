/* test_infer_dtype.c — what the weights' own sizes say of their element size and of which model
 * trains (analyzer/model/facts/infer_weights.c), on weight lists built here: a frozen
 * fp16 text encoder of more blocks (12, d 768, a CLIP-L's) beside the fp32 transformer trained (6
 * blocks, d 1024), in either order. The encoder's longer run of blocks read 16-bit at 2 B an
 * element; the gradients say which model trains, and the trained one's sizes read fp32. An fp32
 * YOLOv5 backbone (C3 blocks of growing widths) is no 16-bit transformer. */
#include <stdlib.h>

#include "infer_run.h"
#include "infer_pass.h"

/* one block of width d at e bytes an element: two norms' weight and bias, four d×d projections
 * with biases, an MLP of 4·d with biases (16 tensors, frozen_dtypes.py's Block) */
static size_t block(uint64_t *s, uint64_t d, uint64_t e)
{
    const uint64_t sz[16] = {d,     d, d,     d, d * d,     d,     d * d,     d,
                             d * d, d, d * d, d, 4 * d * d, 4 * d, 4 * d * d, d};
    for (size_t i = 0; i < 16; i++)
        s[i] = sz[i] * e;
    return 16;
}

/* model: an embedding (vocab rows: 0 none), blocks of d at e bytes, a final norm and a d×d out */
static size_t model(uint64_t *s, uint64_t vocab, uint64_t d, size_t blocks, uint64_t e)
{
    size_t n = 0;
    if (vocab)
        s[n++] = vocab * d * e;
    for (size_t b = 0; b < blocks; b++)
        n += block(s + n, d, e);
    s[n++] = d * e, s[n++] = d * e, s[n++] = d * d * e;
    s[n++] = 512 * d * e; /* (its position table) */
    return n;
}

/* weights_dtype: the element size vt__weights_dtype reads of the weights s[0..n) (0: not told,
 * fp32), the first backward having made a tensor of each size in grads[0..ng) */
static unsigned weights_dtype(const uint64_t *s, size_t n, const uint64_t *grads, size_t ng)
{
    vt__pass *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->t = calloc(n, sizeof *p->t);
    assert_non_null(p->t);
    for (size_t i = 0; i < n; i++)
        p->t[i].early = p->t[i].kept = 1, p->t[i].size = s[i];
    p->n = n;
    for (size_t i = 0; i < ng; i++)
        vt__grad_add(p, grads[i]);
    vt__weights_dtype(p);
    unsigned e = p->elem;
    free(p->t);
    free(p);
    return e;
}

enum { MAXW = 400 };

/* the encoder (fp16, 12 blocks of 768) and the trained model (fp32, 6 blocks of 1024), in that
 * order or the other (trained_first); grads: the sizes that got a gradient */
static size_t two_models(uint64_t *s, int trained_first, size_t *trained_at, size_t *trained_n)
{
    size_t n = 0;
    if (trained_first)
        *trained_at = n, n += *trained_n = model(s + n, 0, 1024, 6, 4);
    n += model(s + n, 49408, 768, 12, 2);
    if (!trained_first)
        *trained_at = n, n += *trained_n = model(s + n, 0, 1024, 6, 4);
    return n;
}

static void test_frozen_fp16_beside_fp32_trained(void **state)
{
    (void)state;
    uint64_t s[MAXW];
    for (int first = 0; first <= 1; first++) {
        size_t at, tn, n = two_models(s, first, &at, &tn);
        /* the trained model's weights got gradients: the fp32 one trains, not 16-bit weights */
        assert_int_equal(weights_dtype(s, n, s + at, tn), 0);
        /* no backward (no gradient told apart): the longer run's sizes, 16-bit, as before */
        assert_int_equal(weights_dtype(s, n, NULL, 0), 2);
    }
}

static void test_frozen_fp16_trained_says(void **state)
{
    (void)state;
    uint64_t s[MAXW], g[MAXW];
    size_t at, tn, n = two_models(s, 0, &at, &tn);
    /* gradients of the 16-bit blocks' sizes: those train (their d×d projection's 2·d² bytes) */
    size_t ng = 0;
    g[ng++] = 768 * 768 * 2;
    for (size_t i = 0; i < tn; i++)
        g[ng++] = s[at + i];
    assert_int_equal(weights_dtype(s, n, g, ng), 2);
    /* the other blocks took none (a gradient of a size no block has: an adapter's): the 16-bit
     * reading stands (a LoRA's 16-bit base, its fp32 adapters inside its blocks) */
    g[0] = 8 * 768 * 4;
    assert_int_equal(weights_dtype(s, n, g, 1), 2);
}

/* a model of one block trained (its weights' 16-bit copies kept at an out-of-memory error before
 * any backward: the gradients' sizes read from them) beside 12 blocks of another: those are a
 * second model's only where the first forward had used them (copies made and freed); blocks it
 * had yet to reach may be the trained model's own (no copy made: nothing read apart) */
static void test_unreached_blocks_are_no_other_model(void **state)
{
    (void)state;
    uint64_t s[MAXW];
    size_t n = model(s, 32000, 768, 1, 4), tn = n;
    n += model(s + n, 0, 2048, 12, 4);
    for (int used = 0; used <= 1; used++) {
        vt__pass *p = calloc(1, sizeof *p);
        assert_non_null(p);
        p->t = calloc(n + 1, sizeof *p->t);
        assert_non_null(p->t);
        for (size_t i = 0; i < n; i++)
            p->t[i].early = p->t[i].kept = 1, p->t[i].size = s[i];
        p->n = n;
        if (used) /* (a 16-bit copy of the other blocks' 4d×d, freed after use) */
            p->t[p->n++] = (vt__tensor){
                .early = 1, .cast = 1, .made = INFER_MADE_FORWARD, .size = 4 * 2048 * 2048 * 2};
        for (size_t i = 0; i < tn; i++)
            vt__grad_add(p, s[i]);
        p->grad_from_copies = 1;
        infer_result out;
        memset(&out, 0, sizeof out);
        uint64_t el[MAXW + 1];
        size_t ne, lo, hi;
        vt__infer_params(p, &out, el, &ne, &lo, &hi);
        assert_int_equal(out.v[INFER_frozen_blocks].known, used);
        assert_int_equal(out.v[INFER_n_embd].known && out.v[INFER_n_embd].value == 768, used);
        free(p->t);
        free(p);
    }
}

/* conv: a bias-free k×k convolution c1 -> c2 and its BatchNorm (weight, bias, running mean and
 * variance, the int64 num_batches_tracked's 8 bytes), fp32 */
static size_t conv(uint64_t *s, uint64_t c1, uint64_t c2, uint64_t k)
{
    const uint64_t sz[6] = {c1 * c2 * k * k * 4, c2 * 4, c2 * 4, c2 * 4, c2 * 4, 8};
    for (size_t i = 0; i < 6; i++)
        s[i] = sz[i];
    return 6;
}

/* YOLOv5's C3 of width c: two 1×1 convolutions c -> c/2 side by side (the only run of like
 * sizes: read at 2 B, c-element "norms" and a c×c "projection"; at 4 B no d×d among them), a
 * 1×1 c/2 -> c/2 and a 3×3 bottleneck, a 1×1 c -> c */
static size_t c3(uint64_t *s, uint64_t c)
{
    size_t n = conv(s, c, c / 2, 1);
    n += conv(s + n, c, c / 2, 1);
    n += conv(s + n, c / 2, c / 2, 1);
    n += conv(s + n, c / 2, c / 2, 3);
    return n + conv(s + n, c, c, 1);
}

static void test_csp_backbone_fp32(void **state)
{
    (void)state;
    uint64_t s[MAXW];
    size_t n = conv(s, 3, 32, 6);
    for (uint64_t c = 64; c <= 512; c *= 2) {
        n += conv(s + n, c / 2, c, 3);
        n += c3(s + n, c);
    }
    s[n++] = 512 * 255 * 4, s[n++] = 255 * 4; /* (a detection head's 1×1 convolution) */
    /* its one run of like sizes (C3's two 1×1 c -> c/2, side by side) has one "c×c" matrix a
     * block at 2 B: no transformer's block (attention and MLP), not told 16-bit */
    assert_int_equal(weights_dtype(s, n, s, n), 0);
    assert_int_equal(weights_dtype(s, n, NULL, 0), 0);
    /* a 16-bit transformer still reads 16-bit (no (d/2)×(d/2) among its weights at 4 B) */
    n = model(s, 32000, 768, 12, 2);
    assert_int_equal(weights_dtype(s, n, s, n), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frozen_fp16_beside_fp32_trained),
        cmocka_unit_test(test_frozen_fp16_trained_says),
        cmocka_unit_test(test_unreached_blocks_are_no_other_model),
        cmocka_unit_test(test_csp_backbone_fp32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
