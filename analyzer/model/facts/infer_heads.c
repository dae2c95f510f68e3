/* infer_heads.c — the attention heads H from what a fused attention kernel keeps for its
 * backward (infer.c calls it once the shapes it needs are known; infer_pass.h is the pass). */
#include <stdio.h>
#include <stdlib.h>

#include "infer_pass.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* sized: how many of p's first steps' attention tensors are of size z: a search in `sizes`
 * (theirs, sorted; n of them), or, where there was no memory for it (sizes NULL), a walk over
 * every tensor. (A walk for each candidate tensor had made this quadratic: 24 candidates over
 * 117,187 tensors took 11M instructions of a report.) */
static size_t sized(const vt__pass *p, const uint64_t *sizes, size_t n, uint64_t z)
{
    size_t c = 0;
    if (!sizes) {
        for (size_t j = 0; j < p->n; j++)
            c += p->t[j].attention && p->t[j].early && p->t[j].size == z;
        return c;
    }
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first of size >= z */
        size_t mid = lo + (hi - lo) / 2;
        if (sizes[mid] < z)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && sizes[lo] == z; lo++)
        c++;
    return c;
}

/* out_tokens: the tokens of the kernel's output made just before its log-sum-exp rows at i (flash,
 * efficient and cudnn make the output, B·T·d of k-byte elements, then the rows; cudnn's seed and
 * offset come before both): its size over b·w·k, 0 when that is no whole number. Of the
 * d-wide blocks' kernels alone: a stack of another width beside them (MAE's 512-wide decoder over
 * all 197 tokens beside its 768-wide encoder) has outputs of its own width. */
static uint64_t out_tokens(const vt__pass *p, size_t i, uint64_t b, uint64_t w, uint64_t k)
{
    uint64_t row = vt__mul(vt__mul(b, w), k), s = i ? p->t[i - 1].size : 0;
    return row && s % row == 0 ? s / row : 0;
}

/* vt__infer_heads: H from a fused attention kernel's log-sum-exp rows in the first forward: B·H·T
 * fp32 (flash, cudnn; the efficient kernel pads T to a multiple of 32), made once in each of the
 * L blocks, its output just before it B·T·d; H divides d with a head of 8 to 512 elements (the
 * output, B·T·d of 16 bits, is not one: d / 2 heads of 2). A vision transformer's T is its
 * position embedding's rows: where the d-wide kernels' outputs say the blocks saw fewer (MAE's
 * encoder sees the quarter of the patches left unmasked, token pruning fewer still), T is
 * theirs. */
void vt__infer_heads(const vt__pass *p, infer_result *out)
{
    const infer_value *N = &out->v[INFER_tokens], *T = &out->v[INFER_block_size],
                      *B = &out->v[INFER_batch_size], *d = &out->v[INFER_n_embd],
                      *L = &out->v[INFER_n_layer], *K = &out->v[INFER_token_dtype_bytes];
    if (!d->known || (T->known && (T->value <= 0 || (N->known && N->value % T->value))))
        return;
    /* B and T: the token batch over T, or the image batch (a vision transformer's patch tokens);
     * B·T alone when T is not known (no padding then) */
    uint64_t t = T->known ? (uint64_t)T->value : N->known ? (uint64_t)N->value : 0;
    uint64_t b = !T->known  ? 1
                 : N->known ? (uint64_t)(N->value / T->value)
                 : B->known ? (uint64_t)B->value
                            : 0;
    uint64_t w = (uint64_t)d->value;
    if (!b || !t)
        return;
    /* fewer tokens than T only where T is a position embedding's rows (no token batch says it);
     * the output's element size is then the first token tensor's (autocast's 16 bits: at 4 B,
     * B·50·768 of 2 bytes is B·25·768, and 24 heads of 32 would fit as well as 12 of 64) */
    int fewer = T->known && !N->known && K->known;
    uint64_t k0 = fewer ? (uint64_t)K->value : 2, k1 = fewer ? k0 : 4;
    uint64_t best = 0, bestT = 0, bestTok = 0;
    /* made in each block, or in those the first forward ran before an out-of-memory error */
    size_t bestn = 0, need = p->at_oom ? 1 : L->known && L->value >= 2 ? (size_t)L->value : 2;
    size_t ns = 0;
    uint64_t *sizes = malloc((p->n ? p->n : 1) * sizeof *sizes);
    for (size_t j = 0; sizes && j < p->n; j++)
        if (p->t[j].attention && p->t[j].early)
            sizes[ns++] = p->t[j].size;
    if (sizes)
        qsort(sizes, ns, sizeof *sizes, cmp_u64);
    for (size_t i = 0; i < p->n; i++) {
        const vt__tensor *x = &p->t[i];
        if (!x->attention || !x->early || x->kept)
            continue;
        size_t c = SIZE_MAX; /* how many of its size: counted once, when a padding fits */
        for (uint64_t k = k0; k <= k1; k += 2) {
            uint64_t tok = out_tokens(p, i, b, w, k);
            if (!tok || (tok != t && (!fewer || tok > t)))
                continue;
            uint64_t pads[2] = {tok, T->known ? (tok + 31) / 32 * 32 : tok};
            for (int q = 0; q < 2; q++) {
                uint64_t row = vt__mul(vt__mul(b, pads[q]), 4), h = row ? x->size / row : 0;
                if (!row || x->size % row || !h || w % h || w / h < 8 || w / h > 512 ||
                    (q && pads[1] == pads[0]))
                    continue;
                if (c == SIZE_MAX)
                    c = sized(p, sizes, ns, x->size);
                if (c >= need && c > bestn)
                    best = h, bestT = pads[q], bestTok = tok, bestn = c;
            }
        }
    }
    free(sizes);
    if (!best)
        return;
    if (bestTok != t) {
        out->pos_rows_unseen = t;
        vt__set(out, INFER_block_size, (int64_t)bestTok,
                "T = %llu tokens through the width-%llu blocks: a fused attention kernel's "
                "output, B·T·d of %lld-byte elements with B = %llu, made %zu times in the first "
                "forward; fewer than the position embedding's %llu rows (the rest dropped "
                "before the blocks)",
                (unsigned long long)bestTok, (unsigned long long)w, (long long)K->value,
                (unsigned long long)b, bestn, (unsigned long long)t);
    }
    char how[96];
    if (bestT == bestTok)
        snprintf(how, sizeof how, "B·T = %llu tokens", (unsigned long long)(b * bestTok));
    else
        snprintf(how, sizeof how, "B = %llu and T = %llu padded to %llu", (unsigned long long)b,
                 (unsigned long long)bestTok, (unsigned long long)bestT);
    vt__set(out, INFER_n_head, (int64_t)best,
            "H = %llu: a fused attention kernel's log-sum-exp rows, B·H·T fp32 with %s (%llu B), "
            "made %zu times in the first forward",
            (unsigned long long)best, how, (unsigned long long)(b * best * bestT * 4), bestn);
    vt__set(out, INFER_attention_kernels, (int64_t)bestn,
            "%zu fused attention kernels' log-sum-exp rows (%llu B each) in the first forward",
            bestn, (unsigned long long)(b * best * bestT * 4));
}

void vt__train_heads(const vt__pass *p, size_t from, uint64_t n, infer_result *out)
{
    const infer_value *dv = &out->v[INFER_n_embd], *L = &out->v[INFER_n_layer];
    uint64_t w = dv->known && dv->value > 0 ? (uint64_t)dv->value : 0, row = vt__mul(n, 4);
    size_t need = L->known && L->value >= 2 ? (size_t)L->value : 2, bestn = 0;
    uint64_t best = 0;
    /* the forward's own rows, B·H·T fp32 made once in each block (none of the pass before it:
     * a no-grad forward keeps none for a backward) */
    for (size_t i = from; w && row && i < p->n && p->t[i].early; i++) {
        const vt__tensor *x = &p->t[i];
        uint64_t h = x->size / row;
        if (!x->attention || x->eval || x->kept || x->size % row || !h || w % h || w / h < 8 ||
            w / h > 512)
            continue;
        size_t c = 0;
        for (size_t j = from; j < p->n && p->t[j].early; j++)
            c += p->t[j].attention && !p->t[j].eval && p->t[j].size == x->size;
        if (c >= need && c > bestn)
            best = h, bestn = c;
    }
    if (!best)
        return;
    infer_value *H = &out->train_heads, *K = &out->train_kernels;
    H->known = K->known = 1;
    H->value = (int64_t)best, K->value = (int64_t)bestn;
    snprintf(H->where, sizeof H->where,
             "H = %llu: a fused attention kernel's log-sum-exp rows, B·H·T fp32 with B·T = %llu "
             "tokens (%llu B), made %zu times in the first training forward after the no-grad "
             "pass",
             (unsigned long long)best, (unsigned long long)n, (unsigned long long)(row * best),
             bestn);
    snprintf(K->where, sizeof K->where,
             "%zu fused attention kernels' log-sum-exp rows (%llu B each) in the first training "
             "forward after the no-grad pass",
             bestn, (unsigned long long)(row * best));
}
