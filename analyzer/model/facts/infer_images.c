/* infer_images.c — what an image batch says (infer.c's pass, infer_pass.h): a vision model's B
 * and image side from the fp32 images beside their int64 labels, a vision transformer's patch
 * tokens from its position embedding. */
#include <math.h>
#include <stdio.h>

#include "infer_pass.h"

/* vt__isqrt: the integer square root of x when x is a perfect square, else 0. */
static uint64_t vt__isqrt(uint64_t x)
{
    uint64_t r = (uint64_t)sqrt((double)x);
    while (r > 0 && r * r > x)
        r--;
    while ((r + 1) * (r + 1) <= x && r < (1ull << 31))
        r++;
    return r * r == x ? r : 0;
}

/* token_batch: a vision transformer's first token tensor (B·T·d or B·(T-1)·d of 2 or 4 bytes,
 * T from its position embedding) gives B, and T is known; want: only that B (0: any). 1 when
 * found. */
static int token_batch(const vt__pass *p, uint64_t T, uint64_t d, uint64_t want, infer_result *out)
{
    for (size_t i = 0; i < p->n; i++) {
        uint64_t s = p->t[i].size;
        /* not the image batch: fp32 B·3·H·W is B·2·196×d 2-byte elements when 3·224²·4 =
         * 2·196·768·2 (ViT-B/16 at 224²), and at an out-of-memory failure it is no longer
         * kept (vt__trim_oom cut it off the weights) */
        /* nor autocast's 16-bit copy of the patch embedding's weight, d×3·16·16 of 2 bytes: at
         * 128² (64 patches) it is B·64×d with B = 12 */
        if (!p->t[i].early || p->t[i].kept || p->t[i].batch || p->t[i].cast)
            continue;
        for (uint64_t k = 2; k <= 4; k += 2)
            for (uint64_t t = T - 1, tdk; t <= T; t++)
                if ((tdk = vt__mul(vt__mul(t, d), k)) && s % tdk == 0 && s / tdk >= 1 &&
                    s / tdk <= 65536 && (!want || s / tdk == want)) {
                    vt__set(out, INFER_block_size, (int64_t)T,
                            "T = %llu patch tokens from the position embedding %llu×d (%llu "
                            "patches and a class token)",
                            (unsigned long long)T, (unsigned long long)T,
                            (unsigned long long)(T - 1));
                    vt__set(out, INFER_batch_size, (int64_t)(s / tdk),
                            "B = %llu: the first token tensor, B·%llu×d of %llu-byte elements",
                            (unsigned long long)(s / tdk), (unsigned long long)t,
                            (unsigned long long)k);
                    vt__set(out, INFER_token_dtype_bytes, (int64_t)k,
                            "the first token tensor, B·%llu×d, of %llu-byte elements",
                            (unsigned long long)t, (unsigned long long)k);
                    return 1;
                }
    }
    return 0;
}

/* pos_rows: the rows of weight i when it can be a vision transformer's position embedding:
 * rows×d outside the repeating blocks [lo, hi), rows - 1 a square (the patch grid and the class
 * token); 0 otherwise. */
static uint64_t pos_rows(const uint64_t *elems, size_t i, uint64_t d, size_t lo, size_t hi)
{
    uint64_t rows = vt__pos_rows(elems, i, d, 0, 0, lo, hi, 4);
    return rows >= 5 && vt__isqrt(rows - 1) >= 2 ? rows : 0;
}

/* has_bias: some weight has exactly `rows` elements: rows×d is then a classifier head beside
 * its bias (10 classes: 10×d, and 9 is a square), not a position embedding, which has none. */
static int has_bias(const uint64_t *elems, size_t nelems, uint64_t rows)
{
    for (size_t i = 0; i < nelems; i++)
        if (elems[i] == rows)
            return 1;
    return 0;
}

/* No token batch: a vision model. A vision transformer's position embedding (pos_rows) gives T,
 * its first token tensor (B·T·d or B·(T-1)·d of 2 or 4 bytes) B; otherwise an image batch (fp32
 * B·3·H·W, H = W) beside its int64 labels (B·8 bytes) gives B and the image size. Of the
 * weights that can be the position embedding (PyTorch's .to() moves a module's own parameters
 * after its children's: timm's pos_embed comes after the head), the one whose token tensor has
 * the images' B when they were found, else the first without a bias of its rows. */
void vt__infer_images(const vt__pass *p, const uint64_t *elems, size_t nelems, size_t lo, size_t hi,
                      infer_result *out)
{
    if (out->v[INFER_tokens].known)
        return;
    uint64_t d = out->v[INFER_n_embd].known ? (uint64_t)out->v[INFER_n_embd].value : 0, T = 0,
             first = 0, headless = 0;
    for (size_t i = 0; d && i < nelems && !T; i++) {
        uint64_t rows = pos_rows(elems, i, d, lo, hi);
        if (!rows)
            continue;
        if (!first)
            first = rows;
        if (!headless && !has_bias(elems, nelems, rows))
            headless = rows;
        /* with the images found beside it, its B is theirs: of 2 or 4 bytes, the one that
         * gives it (fp32 ViT-B/16 at 224²: B·196×d of 4 bytes is 2B·196×d of 2) */
        if (p->img_b && token_batch(p, rows, d, p->img_b, out))
            T = rows;
    }
    if (!T && (T = headless ? headless : first))
        token_batch(p, T, d, 0, out);
    if (p->img_b)
        out->images_stack = p->img_stack, out->images_fwd_stack = p->img_fwd_stack;
    /* one int64 beside the images need not be one per image: a diffusion step that draws one
     * timestep for its whole batch (4 images of 256² had been "B = 1: one int64 per image", "1
     * images of 512×512", the batch flag "not the micro-batch" and 1 the largest micro-batch
     * that fits in the run in which 4 ran): B, so the side, not known from them */
    if (p->img_b == 1)
        vt__set(out, INFER_image_size, (int64_t)p->img_side,
                "%llu×%llu images if the one int64 beside them is one per image (B = 1): "
                "B·3·H·W fp32 = %llu B, as many as B images of a side √B times smaller "
                "(one timestep for a batch of images)",
                (unsigned long long)p->img_side, (unsigned long long)p->img_side,
                (unsigned long long)p->img_bytes);
    else if (p->img_b)
        vt__set(out, INFER_image_size, (int64_t)p->img_side,
                "%llu×%llu images: B·3·H·W fp32 = %llu B", (unsigned long long)p->img_side,
                (unsigned long long)p->img_side, (unsigned long long)p->img_bytes);
    out->images_one_label = !T && p->img_b == 1;
    if (out->images_one_label)
        vt__set(out, INFER_batch_size, 1,
                "B = 1 if the one int64 (8 B) beside an fp32 image batch of %llu B is one per "
                "image (a classifier's label); one for the whole batch (a diffusion model's "
                "timesteps drawn once a step) reads the same: not known which",
                (unsigned long long)p->img_bytes);
    if (!T && p->img_b > 1)
        vt__set(out, INFER_batch_size, (int64_t)p->img_b,
                "B = %llu: one int64 per image (%llu B: a classifier's labels, a diffusion "
                "model's timesteps) beside an fp32 image batch of %llu B",
                (unsigned long long)p->img_b, (unsigned long long)p->img_b * 8,
                (unsigned long long)p->img_bytes);
}

/* vt__find_images: an image batch the program copied to the device before its first forward:
 * fp32 B·3·H·W (H = W >= 32) beside its int64 labels (B·8 bytes, B >= 2) within a few
 * allocations, the two on the same side of the end of the prefix of tensors kept from the start.
 * The batch comes after the model, and the forward after it: of the pairs that fit, the one
 * nearest that end (the weights can hold one: a conv weight of 512×384×3×3 fp32 beside a norm
 * weight of 512 is 12·256·48² bytes beside 256·8: a diffusion U-Net's), and the first of its
 * size beside the labels. Both are marked (not parameters: alive through the step like the
 * weights), and so is every input of the program's (INFER_MADE_INPUT) before any backward. */
int vt__find_images(vt__pass *p)
{
    size_t end = 0, bi = 0, bj = 0, best = SIZE_MAX;
    uint64_t bb = 0, bside = 0;
    while (end < p->n && p->t[end].kept)
        end++;
    for (size_t i = 0; i < p->n; i++) {
        uint64_t s = p->t[i].size;
        size_t far = p->t[i].kept ? end - 1 - i : i - end; /* from the kept prefix's end */
        if (!p->t[i].early || s < 12 * 32 * 32 * 2 || s % 12 || far >= best ||
            !vt__input_may(&p->t[i]))
            continue;
        /* the labels nearest the images, those made after them first (a weight of as many
         * bytes, just before the batch, can fit too: a 2048-channel norm's 8192 B as 1024
         * labels beside 256 images of 224² read as 1024 of 112²) */
        for (size_t k = 0; k < 8; k++) {
            size_t j = k % 2 ? i - (k / 2 + 1) : i + (k / 2 + 1);
            uint64_t b, side;
            if ((k % 2 && i < k / 2 + 1) || j >= p->n)
                continue;
            b = p->t[j].size / 8;
            /* one image and its one label (B = 1: an 8-byte int64) only after the weights or at
             * their end (a batch the loop keeps, made after the model): deeper among them, any
             * norm of 2 fp32 elements beside a conv weight would do */
            if (!p->t[j].early || p->t[j].size % 8 || b < 1u + (p->t[i].kept && far >= 4) ||
                b > 65536 || s % (12 * b) || p->t[j].kept != p->t[i].kept)
                continue;
            if (!vt__input_may(&p->t[j]))
                continue;
            if ((side = vt__isqrt(s / (12 * b))) < 32)
                continue;
            bi = i, bj = j, bb = b, bside = side, best = far;
            break;
        }
    }
    /* a model without tokens: the program's own inputs (made or copied onto the device by its
     * code: a GAN's unlabelled images, its latent) are no parameters, labelled or not */
    int marked = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->t[i].early && p->t[i].input && !p->t[i].batch)
            p->t[i].batch = 1, marked++;
    p->inputs += (size_t)marked;
    if (best == SIZE_MAX)
        return marked;
    /* the first tensor of its size beside the labels: the batch, made before its likes (the
     * noise a diffusion step adds to it, the noised images) */
    for (size_t k = bj >= 4 ? bj - 4 : 0; k < bi; k++)
        if (p->t[k].size == p->t[bi].size && p->t[k].kept == p->t[bi].kept && p->t[k].early) {
            bi = k;
            break;
        }
    p->t[bi].batch = p->t[bj].batch = 1;
    p->img_b = bb, p->img_side = bside, p->img_bytes = p->t[bi].size;
    p->img_stack = p->t[bi].stack;
    /* (the line of the program's forward that made it says whether the forward folds the
     * batch's samples into more images: report_images_folded) */
    p->img_fwd_stack = 0;
    for (size_t k = bi + 1; k < p->n && !p->img_fwd_stack; k++)
        if ((p->t[k].made & 7) == INFER_MADE_FORWARD)
            p->img_fwd_stack = p->t[k].stack;
    return 1;
}
