/* test_infer.c — what the tensors say of the model (analyzer/model/facts/infer.c), on tensor
 * sequences built here in the order PyTorch makes them, each the shape of a real run that was
 * once read wrong: weights the size of the token batch (LoRA's adapters), a forward's position
 * ids alive at an out-of-memory failure beside the batch (BERT), an image batch whose size is
 * a whole number of patch-token tensors (ViT-B/16 at 224²), a diffusion U-Net's conv weight and
 * norm of an image batch's sizes, with an EMA copy of its weights. Runs of forwards only (an
 * evaluation script) are test_infer_forwards.c's. */
#include <stdlib.h>

#include "infer_run.h"
#include "infer_pass.h"

/* decoder_step: a decoder's first step that fits, after its weights: the int64 token batch of
 * b·t, arange(t) when pos (freed before the backward), the embedding lookup and the logits of
 * fp32 elements, a backward tensor of the embedding's size, all freed after the first backward,
 * then an allocation after it; the inferred values into out. */
static void decoder_step(run *r, uint64_t b, uint64_t t_, uint64_t d, uint64_t v, int pos,
                         infer_result *out)
{
    t(r, b * t_ * 8, 0);                      /* the token batch */
    uint64_t p = pos ? t(r, t_ * 8, 0) : 0;   /* arange(T) */
    uint64_t emb = t(r, b * t_ * d * 4, 0);   /* its embedding lookup */
    uint64_t lg = t(r, b * t_ * v * 4ull, 0); /* the logits */
    if (p)
        die(r, p);
    uint64_t g = t(r, v * d * 4, 1); /* the backward */
    die(r, lg), die(r, emb), die(r, g);
    t(r, 64, 0); /* after the first backward */
    run_end(r, out);
}

/* ---- a decoder with LoRA adapters of the token batch's size -------------------------------- */
#define LD 64   /* width d */
#define LV 1000 /* vocabulary */
#define LL 4    /* blocks */
#define LT 128  /* sequence */
#define LB 4    /* micro-batch: the batch is 4·128 int64 = 4096 B, as an adapter of 16×64 fp32 */

/* the weights (fp32, no biases): the embedding, LL blocks each with rank-16 adapters on q and v,
 * a final norm and an untied head; *elems their element count */
static void lora_weights(run *r, int64_t *elems)
{
    static const uint64_t block[] = {LD,      LD * LD, 16 * LD, 16 * LD, LD * LD,     LD * LD,
                                     16 * LD, 16 * LD, LD * LD, LD,      3 * LD * LD, 3 * LD * LD};
    *elems = 0;
    t(r, LV * LD * 4, 0), *elems += LV * LD;
    for (int l = 0; l < LL; l++)
        for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
            t(r, block[i] * 4, 0), *elems += (int64_t)block[i];
    t(r, LD * 4, 0), *elems += LD;
    t(r, LV * LD * 4, 0), *elems += LV * LD;
}

/* The run fits: the batch outlives the first backward, the forward's tensors do not. Only the
 * batch is not a parameter: the 16 adapters of its size are the model's. */
static void test_lora_adapters_are_parameters(void **state)
{
    (void)state;
    run r;
    infer_result out;
    int64_t elems;
    run_begin(&r);
    lora_weights(&r, &elems);
    decoder_step(&r, LB, LT, LD, LV, 1, &out);
    assert_int_equal(val(&out, INFER_params), elems);
    assert_int_equal(val(&out, INFER_n_layer), LL);
    assert_int_equal(val(&out, INFER_n_embd), LD);
    assert_int_equal(val(&out, INFER_vocab_size), LV);
    assert_int_equal(val(&out, INFER_tokens), LB * LT);
    assert_int_equal(val(&out, INFER_block_size), LT);
    assert_int_equal(val(&out, INFER_batch_size), LB);
}

/* ---- a gated decoder with q, k and v biases (Qwen2), grouped key / value --------------------- */
#define QD 64 /* width d: 4 heads of 16 */
#define QKV                                                                                        \
    32         /* key / value width: 2 heads (a bias of 32 each: smaller than d, its square 1024   \
                * divides d² as d's does) */
#define QI 176 /* MLP width */
#define QL 3
#define QV 1000
#define QT 128
#define QB 4

/* The run fits: the weights in .to()'s order (per block: q, k, v with their biases, o, gate,
 * up, down, the two RMSNorms), the batch, the forward's tensors freed after the first backward.
 * d is the norms' width, not the key / value biases'. */
static void test_gated_qkv_biases(void **state)
{
    (void)state;
    static const uint64_t block[] = {QD * QD, QD,      QKV * QD, QKV,     QKV * QD, QKV,
                                     QD * QD, QI * QD, QI * QD,  QD * QI, QD,       QD};
    run r;
    infer_result out;
    int64_t elems = QV * QD;
    run_begin(&r);
    t(&r, QV * QD * 4, 0); /* the embedding */
    for (int l = 0; l < QL; l++)
        for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
            t(&r, block[i] * 4, 0), elems += (int64_t)block[i];
    t(&r, QD * 4, 0), elems += QD;           /* the final norm */
    t(&r, QV * QD * 4, 0), elems += QV * QD; /* an untied head */
    decoder_step(&r, QB, QT, QD, QV, 0, &out);
    assert_int_equal(val(&out, INFER_params), elems);
    assert_int_equal(val(&out, INFER_n_layer), QL);
    assert_int_equal(val(&out, INFER_n_embd), QD);
    assert_int_equal(val(&out, INFER_vocab_size), QV);
    assert_int_equal(val(&out, INFER_mlp_width), QI);
    assert_int_equal(val(&out, INFER_kv_width), QKV);
}

/* ---- an encoder out of memory in its first backward, its position ids alive ------------------ */
#define BD 64
#define BV 1000
#define BL 3
#define BT 128
#define BB 8 /* the batch: 8·128 int64 = 8192 B; the position ids 128 int64 = 1024 B */

/* BERT's order: word, position and type embeddings, the position and type ids (two int64 rows of
 * T, buffers made with the model), the norm, the blocks (with biases), the head's bias; *elems
 * what the weights and buffers count at 4 B each */
static void bert_weights(run *r, int64_t *elems)
{
    static const uint64_t block[] = {BD * BD,     BD, BD * BD, BD, BD * BD,     BD,
                                     BD * BD,     BD, BD,      BD, 4 * BD * BD, 4 * BD,
                                     4 * BD * BD, BD, BD,      BD};
    static const uint64_t head[] = {BV * BD, BT * BD, 2 * BD, BT * 2, BT * 2, BD, BD};
    *elems = 0;
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        t(r, head[i] * 4, 0), *elems += (int64_t)head[i];
    for (int l = 0; l < BL; l++)
        for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
            t(r, block[i] * 4, 0), *elems += (int64_t)block[i];
    t(r, BV * 4, 0), *elems += BV;
}

/* The batch and its labels, then the forward: the position ids (T int64, looked up as T×d) are
 * still alive at the failure. B·T is the batch's, not the positions'; the parameters stop before
 * the batch (the two id buffers stay in them, at 4 B per 4 bytes: the rule infer.c states). */
static void test_oom_position_ids_are_not_the_batch(void **state)
{
    (void)state;
    run r;
    infer_result out;
    int64_t elems;
    run_begin(&r);
    bert_weights(&r, &elems);
    t(&r, BB * BT * 8, 0);                /* input_ids */
    t(&r, BB * BT * 8, 0);                /* labels */
    t(&r, BT * 8, 0);                     /* the forward's position ids */
    t(&r, BB * BT * BD * 4, 0);           /* the word embeddings' lookup */
    uint64_t tmp = t(&r, BB * BT * 8, 0); /* a temporary: it dies */
    t(&r, BB * BT * BD * 4, 0);           /* type embeddings' lookup */
    t(&r, BT * BD * 4, 0);                /* the position embeddings' lookup */
    t(&r, BB * BT * BV * 2, 0);           /* 16-bit logits */
    die(&r, tmp);
    t(&r, BV * BD * 4, 1); /* the backward */
    oom(&r);
    run_end(&r, &out);
    assert_int_equal(val(&out, INFER_params), elems);
    assert_int_equal(val(&out, INFER_n_layer), BL);
    assert_int_equal(val(&out, INFER_n_embd), BD);
    assert_int_equal(val(&out, INFER_tokens), BB * BT);
    assert_int_equal(val(&out, INFER_block_size), BT);
    assert_int_equal(val(&out, INFER_batch_size), BB);
}

/* ---- a vision transformer out of memory in its first forward ----------------------------- */
#define VD 48 /* width: 3·4², so that 3·H·W·4 = 2·(H/4)²·d·2 (as 3·224²·4 = 2·196·768·2) */
#define VL 3
#define VG 8 /* an 8×8 grid of 4×4 patches: 32×32 images, T = 65 */
#define VB 8

static void vit_weights(run *r, int64_t *elems)
{
    static const uint64_t block[] = {VD, VD, 3 * VD * VD, 3 * VD, VD * VD,     VD,
                                     VD, VD, 4 * VD * VD, 4 * VD, 4 * VD * VD, VD};
    static const uint64_t head[] = {VD, (VG * VG + 1) * VD, VD * 3 * 4 * 4, VD};
    *elems = 0;
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        t(r, head[i] * 4, 0), *elems += (int64_t)head[i];
    for (int l = 0; l < VL; l++)
        for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
            t(r, block[i] * 4, 0), *elems += (int64_t)block[i];
    t(r, VD * 4, 0), t(r, VD * 4, 0), t(r, 12 * VD * 4, 0), t(r, 12 * 4, 0);
    *elems += 2 * VD + 12 * VD + 12;
}

/* The images (fp32 B·3·32·32 = 2B·64·d 2-byte elements) and labels, the patch embedding's 16-bit
 * weight and output (B·64·d, 2 B), alive at the failure: B is the output's, not twice it. */
static void test_oom_image_batch_is_not_tokens(void **state)
{
    (void)state;
    run r;
    infer_result out;
    int64_t elems;
    run_begin(&r);
    vit_weights(&r, &elems);
    t(&r, VB * 3 * 32 * 32 * 4, 0);  /* the images */
    t(&r, VB * 8, 0);                /* the labels */
    t(&r, VD * 3 * 4 * 4 * 2, 0);    /* the patch weight cast to 16 bits */
    t(&r, VB * VG * VG * VD * 2, 0); /* the patch tokens */
    uint64_t tmp = t(&r, VB * VG * VG * VD * 2, 0);
    die(&r, tmp);
    oom(&r);
    run_end(&r, &out);
    assert_int_equal(val(&out, INFER_params), elems);
    assert_int_equal(val(&out, INFER_n_layer), VL);
    assert_int_equal(val(&out, INFER_n_embd), VD);
    assert_int_equal(val(&out, INFER_block_size), VG * VG + 1);
    assert_int_equal(val(&out, INFER_batch_size), VB);
    assert_false(out.v[INFER_tokens].known);
}

/* The weights in the order .to() moves them (a module's children first, its own parameters
 * last): the patch embedding, the blocks, the final norm, a head of 10 classes (10×d beside its
 * bias of 10: 9 is a square, as 576 of a 24×24 grid), then the class token and the position
 * embedding. */
static void vit_weights_to_order(run *r, int64_t *elems)
{
    static const uint64_t block[] = {VD, VD, 3 * VD * VD, 3 * VD, VD * VD,     VD,
                                     VD, VD, 4 * VD * VD, 4 * VD, 4 * VD * VD, VD};
    static const uint64_t tail[] = {VD, VD, 10 * VD, 10, VD, (VG * VG + 1) * VD};
    *elems = VD * 3 * 4 * 4 + VD;
    t(r, VD * 3 * 4 * 4 * 4, 0), t(r, VD * 4, 0);
    for (int l = 0; l < VL; l++)
        for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
            t(r, block[i] * 4, 0), *elems += (int64_t)block[i];
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        t(r, tail[i] * 4, 0), *elems += (int64_t)tail[i];
}

/* A ViT fine-tuned on 10 classes: out of memory in its first forward with its images found,
 * or a run that fits, its images not found (another dtype): T is the position embedding's 65,
 * not the head's 10 rows that come first, and B the patch tokens'. */
static void vit_ten_classes(int images)
{
    run r;
    infer_result out;
    int64_t elems;
    run_begin(&r);
    vit_weights_to_order(&r, &elems);
    if (images) {
        t(&r, VB * 3 * 32 * 32 * 4, 0); /* the images */
        t(&r, VB * 8, 0);               /* the labels */
    }
    uint64_t w16 = t(&r, VD * 3 * 4 * 4 * 2, 0);    /* the patch weight cast to 16 bits */
    uint64_t tok = t(&r, VB * VG * VG * VD * 2, 0); /* the patch tokens */
    uint64_t tmp = t(&r, VB * VG * VG * VD * 2, 0);
    die(&r, tmp);
    if (images) {
        oom(&r);
    } else {
        uint64_t g = t(&r, VD * 3 * 4 * 4 * 4, 1); /* the backward */
        die(&r, tok), die(&r, w16), die(&r, g);
        t(&r, 64, 0); /* after the first backward */
    }
    run_end(&r, &out);
    assert_int_equal(val(&out, INFER_params), elems);
    assert_int_equal(val(&out, INFER_n_embd), VD);
    assert_int_equal(val(&out, INFER_block_size), VG * VG + 1);
    assert_int_equal(val(&out, INFER_batch_size), VB);
    assert_int_equal(val(&out, INFER_token_dtype_bytes), 2); /* 16-bit: autocast's */
    if (images)
        assert_int_equal(val(&out, INFER_image_size), 32);
    else
        assert_false(out.v[INFER_image_size].known);
}

static void test_vit_ten_classes_images(void **state)
{
    (void)state;
    vit_ten_classes(1);
}

static void test_vit_ten_classes_no_images(void **state)
{
    (void)state;
    vit_ten_classes(0);
}

/* ---- a diffusion U-Net with an EMA copy of its weights ----------------------------------------
 */
#define UB 16  /* micro-batch */
#define US 128 /* image side */

/* the weights (fp32): norms, convolutions and biases, among them a GroupNorm weight of 512 beside
 * a conv weight of 512×384×3×3: 2048 B beside 12·256·48² B, an image batch's sizes (B 256 and
 * its int64 labels); *bytes their bytes */
static void unet_weights(run *r, uint64_t *bytes)
{
    static const uint64_t sizes[] = {3 * 3 * 3 * 128, 128, 128, 128, 1000, 512,
                                     512 * 384 * 9,   512, 512, 384, 1000, 3 * 128 * 9};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        t(r, sizes[i] * 4, 0), *bytes += sizes[i] * 4;
}

/* weights, their EMA copy (cloned before training, kept), then the step's batch: the images, the
 * noise and the int64 timesteps, the noised images */
static void unet_start(run *r, uint64_t b, uint64_t *model, uint64_t *im)
{
    uint64_t ema = 0;
    *model = 0;
    unet_weights(r, model);
    unet_weights(r, &ema);
    assert_int_equal(ema, *model);
    im[0] = t(r, b * 3 * US * US * 4, 0);
    im[1] = t(r, b * 3 * US * US * 4, 0);
    im[2] = t(r, b * 8, 0);
    im[3] = t(r, b * 3 * US * US * 4, 0);
}

/* The run fits and frees its batch at the step's end: the images are the batch, not the weights'
 * conv and norm of those sizes; P, less the EMA copy the report finds under its code, the model's
 */
/* unet_fit: the run of micro-batch b fits (its batch freed at the step's end); the inferred
 * values into out, the weights' bytes (one copy) into *model */
static void unet_fit(uint64_t b, infer_result *out, uint64_t *model)
{
    run r;
    uint64_t im[4];
    run_begin(&r);
    unet_start(&r, b, model, im);
    uint64_t act = t(&r, b * 128 * US * US * 2, 0);
    die(&r, t(&r, b * 128 * US * US * 2, 0)); /* the forward's first temporary */
    t(&r, b * 128 * US * US * 2, 1);          /* the backward */
    die(&r, act);
    for (int i = 0; i < 4; i++)
        die(&r, im[i]);
    t(&r, 4096, 0); /* the optimizer step: the first backward is over */
    run_end(&r, out);
    assert_int_equal(val(out, INFER_params), 2 * *model / 4);
    assert_int_equal(val(out, INFER_batch_size), b);
    assert_int_equal(val(out, INFER_image_size), US);
}

/* B = 1: one image and its one 8-byte timestep, after the weights, not the conv weight and norm
 * deep among them (256 "images" of 48² beside 256 "labels": P short by both) */
static void test_unet_one_image(void **state)
{
    (void)state;
    infer_result out;
    uint64_t model;
    unet_fit(1, &out, &model);
}

static void test_unet_images_not_weights(void **state)
{
    (void)state;
    infer_result out;
    uint64_t model;
    unet_fit(UB, &out, &model);
    infer_params_less(&out, model, "EMAModel (diffusers)");
    assert_int_equal(val(&out, INFER_params), model / 4);
    assert_non_null(strstr(out.v[INFER_params].where, "less the EMA copy"));
    assert_non_null(strstr(out.v[INFER_params].where, "EMAModel (diffusers)"));
    infer_params_less(&out, 4 * model, "too much"); /* never below nothing: P stays */
    assert_int_equal(val(&out, INFER_params), model / 4);
}

/* Out of memory in the first forward, the batch alive: the weights' prefix ends at the images
 * (the first of the two of their size), not at the conv weight */
static void test_unet_oom_images_end_the_weights(void **state)
{
    (void)state;
    run r;
    infer_result out;
    uint64_t model, im[4];
    run_begin(&r);
    unet_start(&r, 2 * UB, &model, im);
    t(&r, 2 * UB * 128 * US * US * 2, 0);
    die(&r, t(&r, 2 * UB * 128 * US * US * 2, 0));
    oom(&r);
    run_end(&r, &out);
    assert_int_equal(val(&out, INFER_params), 2 * model / 4);
    assert_int_equal(val(&out, INFER_batch_size), 2 * UB);
    assert_int_equal(val(&out, INFER_image_size), US);
}

/* ---- dropout: its masks (1 byte an element) seen from the op that made them -------------------
 */
/* td: a tensor of size bytes made by dropout's forward (native_dropout) */
static uint64_t td(run *r, uint64_t size)
{
    reader_event ev;
    memset(&ev, 0, sizeof ev);
    ev.api = VT_API_torchAlloc;
    r->addr += (size + 511) / 512 * 512 + 512;
    ev.addr = r->addr;
    ev.size = size;
    infer_pass_event_made(r->ip, ++r->event, 1, &ev, 0, INFER_MADE_FORWARD | INFER_MADE_DROPOUT);
    return r->addr;
}

/* a forward whose dropout (resid: 1, in each block: its output and B·T·d-byte mask) or only the
 * attention probabilities' (B·H·T² masks: no residual's) ran; on only with the B·T·d masks */
static void dropout_run(int resid, infer_result *out)
{
    run r;
    int64_t elems;
    run_begin(&r);
    lora_weights(&r, &elems);
    t(&r, LB * LT * 8, 0);
    uint64_t pos = t(&r, LT * 8, 0);
    uint64_t emb = t(&r, LB * LT * LD * 4, 0);
    for (int l = 0; l < LL; l++) {
        if (resid)
            td(&r, LB * LT * LD * 4), td(&r, LB * LT * LD);
        td(&r, 4ull * LB * LT * LT * 2), td(&r, 4ull * LB * LT * LT); /* 4 heads' probabilities */
    }
    uint64_t lg = t(&r, LB * LT * LV * 4ull, 0);
    die(&r, pos);
    uint64_t g = t(&r, LV * LD * 4, 1);
    die(&r, lg), die(&r, emb), die(&r, g);
    t(&r, 64, 0);
    run_end(&r, out);
}

static void test_dropout_masks(void **state)
{
    (void)state;
    infer_result out;
    dropout_run(1, &out);
    assert_int_equal(val(&out, INFER_dropout_masks), 1);
    assert_non_null(strstr(out.v[INFER_dropout_masks].where, "4 masks"));
    dropout_run(0, &out);
    assert_false(out.v[INFER_dropout_masks].known);
    assert_int_equal(val(&out, INFER_n_embd), LD); /* (the rest read as without dropout) */
}

/* ---- weights cast on the device; a construction's temporary ------------------------------- */

/* ti: a tensor of size bytes made under a module's construction, .to() or .cuda() (INIT) */
static uint64_t ti(run *r, uint64_t size)
{
    reader_event ev;
    memset(&ev, 0, sizeof ev);
    ev.api = VT_API_torchAlloc;
    ev.addr = r->addr += (size + 511) / 512 * 512 + 512;
    ev.size = size;
    infer_pass_event_made(r->ip, ++r->event, 1, &ev, 0, INFER_MADE_ELSEWHERE | INFER_MADE_INIT);
    return ev.addr;
}

/* lora_shape: lora_weights' sizes in bytes (fp32), in their order; their number */
static size_t lora_shape(uint64_t *sz)
{
    static const uint64_t block[] = {LD,      LD * LD, 16 * LD, 16 * LD, LD * LD,     LD * LD,
                                     16 * LD, 16 * LD, LD * LD, LD,      3 * LD * LD, 3 * LD * LD};
    size_t n = 0;
    sz[n++] = LV * LD * 4;
    for (int l = 0; l < LL; l++)
        for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
            sz[n++] = block[i] * 4;
    sz[n++] = LD * 4;
    sz[n++] = LV * LD * 4;
    return n;
}

/* model.cuda().bfloat16(): each fp32 weight freed as its 16-bit cast is made, before the first
 * forward: the casts are the weights (read at 2 B: their blocks have d×d projections at 2 B an
 * element, none at 4 B; they had been read at 4 B, half the elements), every block found
 * (the first freed weight had ended the weights at none). A temporary of a wrapper's
 * construction freed before the forward (DDP's), followed by its buckets kept alive, is no cast:
 * it ends the weights as before, the buckets are no parameters (with every init tensor freed
 * before the forward left out, the buckets had doubled P and broken B and T). */
static void test_init_casts_and_temporaries(void **state)
{
    (void)state;
    uint64_t sz[64], addr[64];
    size_t n = lora_shape(sz);
    int64_t bytes = 0;
    run r;
    infer_result out;
    run_begin(&r);
    for (size_t i = 0; i < n; i++)
        addr[i] = ti(&r, sz[i]);
    for (size_t i = 0; i < n; i++) {
        ti(&r, sz[i] / 2); /* its bfloat16 cast, then the fp32 weight goes */
        die(&r, addr[i]);
        bytes += (int64_t)sz[i] / 2;
    }
    decoder_step(&r, LB, LT, LD, LV / 2, 1, &out);
    assert_int_equal(val(&out, INFER_params), bytes / 2);
    assert_int_equal(val(&out, INFER_param_dtype_bytes), 2);
    assert_int_equal(val(&out, INFER_n_embd), LD);
    assert_int_equal(val(&out, INFER_n_layer), LL);

    run_begin(&r);
    for (size_t i = 0; i < n; i++)
        ti(&r, sz[i]);
    int64_t elems = 0;
    for (size_t i = 0; i < n; i++)
        elems += (int64_t)sz[i] / 4;
    uint64_t tmp = ti(&r, 12345 * 4); /* the wrapper's temporary, freed after its first */
    ti(&r, (uint64_t)elems * 2);      /* gradient bucket is made, before the second */
    die(&r, tmp);
    ti(&r, (uint64_t)elems * 2);
    decoder_step(&r, LB, LT, LD, LV, 1, &out);
    assert_int_equal(val(&out, INFER_params), elems);
    assert_int_equal(val(&out, INFER_n_layer), LL);
    assert_int_equal(val(&out, INFER_batch_size), LB);
    assert_int_equal(val(&out, INFER_block_size), LT);
}

/* the first backward's tensors not freed by it (infer_pass.h): made and freed by the thousand
 * (a backward's temporaries), the ones kept found with their sizes, the freed ones gone, the
 * table never full of the freed (deleted by shifting back, no tombstones) */
static void test_backward_kept_table(void **state)
{
    (void)state;
    vt__pass *p = calloc(1, sizeof *p);
    assert_non_null(p);
    uint64_t a = 0x7f0000000000ull;
    for (int round = 0; round < 40; round++) { /* 40 x 1000 temporaries, each freed */
        for (uint64_t i = 0; i < 1000; i++) {
            vt__bwd_made(p, a + (round * 1000 + i) * 512, 4096);
            if (i % 3)
                vt__bwd_freed(p, a + (round * 1000 + i) * 512);
        }
        for (uint64_t i = 0; i < 1000; i += 3) /* (a third live to the round's end) */
            vt__bwd_freed(p, a + (round * 1000 + i) * 512);
    }
    assert_false(p->bwd_full); /* (40,000 made: past the table's 3,072 had they stayed) */
    assert_int_equal(p->nbwd, 0);
    for (uint64_t i = 0; i < 2000; i++) /* kept: every other one of 2000 */
        vt__bwd_made(p, a + i * 4096, 100 + i);
    for (uint64_t i = 0; i < 2000; i += 2)
        vt__bwd_freed(p, a + i * 4096);
    assert_int_equal(p->nbwd, 1000);
    for (uint64_t i = 0; i < 2000; i++) {
        size_t j = vt__bwd_slot(p, a + i * 4096);
        assert_int_equal(p->bwd_addr[j] != 0, i % 2);
        if (i % 2)
            assert_int_equal(p->bwd_size[j], 100 + i);
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_casts_and_temporaries),
        cmocka_unit_test(test_lora_adapters_are_parameters),
        cmocka_unit_test(test_oom_position_ids_are_not_the_batch),
        cmocka_unit_test(test_oom_image_batch_is_not_tokens),
        cmocka_unit_test(test_gated_qkv_biases),
        cmocka_unit_test(test_vit_ten_classes_images),
        cmocka_unit_test(test_vit_ten_classes_no_images),
        cmocka_unit_test(test_unet_images_not_weights),
        cmocka_unit_test(test_unet_one_image),
        cmocka_unit_test(test_unet_oom_images_end_the_weights),
        cmocka_unit_test(test_dropout_masks),
        cmocka_unit_test(test_backward_kept_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
