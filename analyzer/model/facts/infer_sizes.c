/* infer_sizes.c — the first forward's tensors by size (infer.h infer_result.fwd_sizes): what an
 * encoder's blocks saw can be read from them with the program's width and heads, where no token
 * batch says it (a time-series transformer's patches of each channel, model_seq.c); and the
 * weights' sizes read as Adafactor's factored state (infer_result.factored_elems). */
#include <stdlib.h>

#include "infer_pass.h"

typedef struct infer_fwd_size fwd_size;

static int by_size(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* by_count: the sizes made most often first, then the larger */
static int by_count(const void *a, const void *b)
{
    const fwd_size *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x->size > y->size ? -1 : x->size < y->size;
}

/* forward_made: tensor x is one the first training forward made itself (no weight, input, cast,
 * workspace, evaluation's, nor a fused attention kernel's, whose sizes are no token's) */
static int forward_made(const vt__tensor *x)
{
    return x->early && x->made == INFER_MADE_FORWARD && !x->input && !x->batch && !x->cast &&
           !x->workspace && !x->eval && !x->attention && !x->init && x->size;
}

void vt__fwd_sizes(const vt__pass *p, infer_result *out)
{
    out->nfwd_sizes = 0;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += forward_made(&p->t[i]);
    /* (size << 1 | softmax, sorted: each size's tensors together) */
    uint64_t *s = n ? malloc(n * sizeof *s) : NULL;
    if (!s)
        return;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (forward_made(&p->t[i]) && p->t[i].size < UINT64_MAX / 2)
            s[k++] = p->t[i].size << 1 | (uint64_t)(p->t[i].softmax != 0);
    qsort(s, k, sizeof *s, by_size);
    size_t nd = 0; /* distinct sizes, counted into s's front as fwd_size rows */
    fwd_size *d = malloc((k ? k : 1) * sizeof *d);
    for (size_t i = 0; d && i < k; i++) {
        uint64_t z = s[i] >> 1;
        if (!nd || d[nd - 1].size != z)
            d[nd++] = (fwd_size){z, 0, 0};
        d[nd - 1].n += d[nd - 1].n < UINT32_MAX;
        d[nd - 1].softmax += (s[i] & 1) && d[nd - 1].softmax < UINT32_MAX;
    }
    free(s);
    if (!d)
        return;
    qsort(d, nd, sizeof *d, by_count);
    int m = 0;
    for (size_t i = 0; i < nd && m < INFER_FWD_TOP; i++)
        out->fwd_sizes[m++] = d[i];
    for (size_t i = INFER_FWD_TOP; i < nd && m < INFER_FWD_SIZES; i++)
        if (d[i].softmax)
            out->fwd_sizes[m++] = d[i];
    out->nfwd_sizes = m;
    free(d);
}

void vt__infer_factored(const uint64_t *elems, size_t n, infer_result *out)
{
    out->factored_elems = out->factored_of = 0;
    out->factored_mats = out->factored_whole = 0;
    const infer_value *w = &out->v[INFER_n_embd];
    uint64_t d = w->known && w->value > 0 && w->value < (1 << 20) ? (uint64_t)w->value : 0;
    if (!d || !n)
        return;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = elems[i];
        /* a d × k matrix (k >= d: a projection, an embedding's rows) keeps a row and a column;
         * anything else is taken for a vector, its state whole (a matrix read so: more) */
        if (e % d == 0 && e / d >= d) {
            out->factored_elems += d + e / d;
            out->factored_mats++;
        } else {
            out->factored_elems += e;
            out->factored_whole++;
        }
        out->factored_of += e;
    }
}
