/* infer_packed.c — weights packed two 4-bit values a byte (bitsandbytes' Linear4bit / Params4bit,
 * QLoRA's frozen base): the trace has no dtypes, and their bytes read at 2 or 4 B an element had
 * made a Llama-2-7B's width 16, its vocabulary 4,096,000 and its layers those of the
 * quantization state's run (infer_pass.h). A packed weight is read by dequantizing it, whole, to
 * a 16-bit temporary for each matmul (dequantize_4bit's torch.empty of out×in), freed after use:
 * in the first forward, a temporary of 4× its bytes. Those weights hold 2 elements a byte. And
 * the longest run of repeating blocks among the weights (vt__block), which reads their layers. */
#include <stdlib.h>
#include <string.h>

#include "infer_pass.h"

#define VT_PACKED_MIN 4096 /* (bytes: a norm's or a bias' size meets a forward's by chance) */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* has: v[0..n) (sorted) holds x */
static int has(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo] == x;
}

void vt__find_packed(vt__pass *p)
{
    if (p->packed_read)
        return;
    p->packed_read = 1;
    uint64_t *tmp = malloc((p->n + 1) * sizeof *tmp);
    size_t nt = 0;
    if (!tmp)
        return;
    /* the first forward's temporaries: made in a forward, freed before any backward */
    for (size_t i = 0; i < p->n; i++)
        if (p->t[i].made == INFER_MADE_FORWARD && p->t[i].freed && !p->t[i].cast)
            tmp[nt++] = p->t[i].size;
    qsort(tmp, nt, sizeof *tmp, cmp_u64);
    /* a weight (made outside a forward, before the first temporary) with such a temporary of 4×
     * its bytes made after it, and of 1/64 of the largest such weight at least (a projection's
     * size beside the others': a small tensor, as the quantization state's absmax, meets an
     * activation's size by chance); two sizes of them at least (a transformer's block has its
     * attention's and its MLP's projections), else none is taken as packed */
    uint64_t top = 0, other = 0;
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < p->n; i++) {
            vt__tensor *x = &p->t[i];
            if (x->made == INFER_MADE_FORWARD || x->batch || (x->freed && !x->kept) ||
                x->size < VT_PACKED_MIN || x->size > UINT64_MAX / 4 || x->size < top / 64 ||
                !has(tmp, nt, 4 * x->size))
                continue;
            if (pass == 0)
                top = x->size > top ? x->size : top;
            else if (pass == 1)
                other = x->size != top ? x->size : other;
            else if (other)
                x->packed = 1, p->npacked++, p->packed_bytes += x->size;
        }
    free(tmp);
}

/* vt__block: the longest run of a repeating size pattern in seq (period up to 64); *period
 * *repeats and where it *start(s); 0 when nothing repeats. Of equal runs, the shortest period's,
 * and of those the first. For each period, how far seq[s..] matches seq[s+p..] is taken from
 * s + 1's, walking back from the end: n steps a period, not a scan from every s. */
void vt__block(const uint64_t *seq, size_t n, size_t *period, size_t *repeats, size_t *start)
{
    size_t best = 0;
    *period = *repeats = *start = 0;
    for (size_t p = 2; p <= 64 && p < n; p++) {
        if (n / p * p <= best) /* (a run is whole periods within seq: none of p's can be longer) */
            continue;
        size_t k = 0, top = 0, at = 0;
        for (size_t s = n - p; s-- > 0;) {
            k = seq[s] == seq[s + p] ? k + 1 : 0;
            size_t r = 1 + k / p;
            if (r >= 2 && r * p >= top) /* (>=: of equal runs, the first) */
                top = r * p, at = s;
        }
        if (top > best) {
            best = top;
            *period = p;
            *repeats = top / p;
            *start = at;
        }
    }
}

size_t vt__packed_runs(uint64_t *seq, size_t *ix, unsigned char *pk, size_t n)
{
    size_t any = 0;
    for (size_t i = 0; i < n; i++)
        any += pk[i];
    for (int round = 0; any && round < 4; round++) {
        size_t per, reps, lo;
        vt__block(seq, n, &per, &reps, &lo);
        size_t hi = lo + per * reps, in = 0;
        for (size_t i = lo; reps >= 2 && i < hi; i++)
            in += pk[i];
        if (reps < 2 || in)
            break;
        /* a run of blocks that holds no packed weight: their quantization state (a per-block
         * absmax, its own absmax, the code), no layer of the model's */
        memmove(seq + lo, seq + hi, (n - hi) * sizeof *seq);
        memmove(pk + lo, pk + hi, (n - hi) * sizeof *pk);
        if (ix)
            memmove(ix + lo, ix + hi, (n - hi) * sizeof *ix);
        n -= hi - lo;
    }
    return n;
}

/* qstate_cand: a tensor kept before the first temporary that may be quantization state */
static int qstate_cand(const vt__tensor *x)
{
    return x->early && x->kept && !x->batch && !x->copy && !x->packed && !x->qstate &&
           x->made != INFER_MADE_FORWARD;
}

/* qconst: the constants of a double quantization size may be beside a packed weight of b bytes
 * (bits: the absmax of its absmax, fp32 per 256 blocks; the offset scalar; the 16-entry code;
 * the 256-entry map), those of them not in seen; 0: none */
static unsigned qconst(uint64_t size, uint64_t b, unsigned seen)
{
    unsigned m = (size == 4 * (((b + 31) / 32 + 255) / 256) ? 1u : 0u) | (size == 4 ? 2u : 0u) |
                 (size == 64 ? 4u : 0u) | (size == 1024 ? 8u : 0u);
    m &= ~seen;
    return m & (0u - m); /* (the first left) */
}

/* qnear: the index of the tensor next to i (dir 1: after, -1: before) that is no temporary of
 * the quantization (made and freed before any backward, outside a forward); p->n: none */
static size_t qnear(const vt__pass *p, size_t i, int dir)
{
    for (size_t j = i; dir > 0 ? j + 1 < p->n : j > 0;) {
        const vt__tensor *y = &p->t[j = dir > 0 ? j + 1 : j - 1];
        if (!(y->early && y->freed && !y->kept && y->made != INFER_MADE_FORWARD))
            return j;
    }
    return p->n;
}

/* qabs: x (at i) is the absmax of the packed weight at w, of b bytes: one per 64 elements (2 a
 * byte) at 1, 2 or 4 B, made right after that weight or beside the fp32 absmax of its absmax
 * (double quantization: a norm or an adapter of the same size is neither) */
static int qabs(const vt__pass *p, size_t i, size_t w, uint64_t b)
{
    uint64_t blocks = (b + 31) / 32, s = p->t[i].size, a2 = 4 * ((blocks + 255) / 256);
    if (s != blocks && s != 2 * blocks && s != 4 * blocks)
        return 0;
    size_t n = qnear(p, i, 1), m = qnear(p, i, -1);
    return m == w || (n < p->n && p->t[n].size == a2 && qstate_cand(&p->t[n])) ||
           (m < p->n && p->t[m].size == a2 && qstate_cand(&p->t[m]));
}

void vt__find_qstate(vt__pass *p)
{
    size_t *pend = p->npacked ? malloc(p->npacked * sizeof *pend) : NULL, np = 0, first = 0;
    p->qstate_bytes = 0;
    for (size_t i = 0; pend && i < p->n; i++) {
        vt__tensor *x = &p->t[i];
        if (x->packed) { /* (waits for its absmax) */
            if (np < p->npacked)
                pend[np++] = i;
            continue;
        }
        if (!qstate_cand(x))
            continue;
        size_t k = first;
        uint64_t b = 0;
        for (; k < np; k++) /* (the first packed weight made before it that it is the absmax of) */
            if (pend[k] != SIZE_MAX && qabs(p, i, pend[k], b = p->t[pend[k]].size))
                break;
        if (k == np)
            continue;
        pend[k] = SIZE_MAX;
        while (first < np && pend[first] == SIZE_MAX)
            first++;
        x->qstate = 1, p->qstate_bytes += x->size;
        /* its double quantization's constants, each kind once: after it, then before it (the
         * offset scalar made before it, by bnb's quantize_4bit) */
        for (int dir = 1, seen = 0; dir >= -1; dir -= 2, seen = 0)
            for (size_t j = qnear(p, i, dir); j < p->n; j = qnear(p, j, dir)) {
                vt__tensor *y = &p->t[j];
                unsigned bit = qstate_cand(y) ? qconst(y->size, b, (unsigned)seen) : 0;
                if (!bit)
                    break;
                seen |= (int)bit, y->qstate = 1, p->qstate_bytes += y->size;
            }
    }
    free(pend);
}
