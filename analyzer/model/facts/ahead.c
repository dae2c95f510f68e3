/* ahead.c — a first forward cut short: the weights it had still to use and what its last
 * repeated block kept (ahead.h). */
#include "ahead.h"

#include "categories.h"
#include "phases.h"

#include <stdlib.h>
#include <string.h>

static int by_size(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* casts_to_come: out's cast_same, cast_other and cast_new, from the weights w[0, nw)
 * (in the order made), the k copies matched to w[wi[i]], the weights not reached from last (the
 * stack's own up to from_w). A size seen cast is one of a weight matched; a size seen uncast, one
 * of a weight reached and not matched alone (a norm's). 0: no memory (out unchanged). */
static int casts_to_come(const live_item **w, size_t nw, const size_t *wi, uint32_t k, size_t last,
                         size_t from_w, fwd_ahead *out)
{
    uint64_t *cast = malloc((k + 1) * sizeof *cast), *un = malloc((last + 1) * sizeof *un);
    char *hit = calloc(nw + 1, 1);
    size_t nu = 0;
    if (!cast || !un || !hit) {
        free(cast), free(un), free(hit);
        return 0;
    }
    for (uint32_t i = 0; i < k; i++)
        cast[i] = w[wi[i]]->size, hit[wi[i]] = 1;
    for (size_t i = 0; i < last; i++)
        if (!hit[i])
            un[nu++] = w[i]->size;
    qsort(cast, k, sizeof *cast, by_size);
    qsort(un, nu, sizeof *un, by_size);
    for (size_t i = last; i < nw; i++) {
        uint64_t b = w[i]->size;
        if (bsearch(&b, cast, k, sizeof *cast, by_size))
            *(i < from_w ? &out->cast_same : &out->cast_other) += b / 2;
        else if (!bsearch(&b, un, nu, sizeof *un, by_size))
            out->cast_new += b / 2;
    }
    free(cast), free(un), free(hit);
    return 1;
}

static int by_event(const void *a, const void *b)
{
    const live_item *x = *(const live_item *const *)a, *y = *(const live_item *const *)b;
    return (x->alloc_event > y->alloc_event) - (x->alloc_event < y->alloc_event);
}

/* first_forward: made in the first forward (no backward, no optimizer step before it) */
static int first_forward(const live_item *it)
{
    return it->phase_alloc == PHASE_FORWARD && it->iter_alloc == 0 && it->bwd_alloc == 0;
}

/* block_period: the shortest p (2p <= n) whose last p sizes repeat the p before them and hold
 * at least two sizes; 0 when none */
static uint32_t block_period(const uint64_t *sz, uint32_t n)
{
    for (uint32_t p = 2; 2 * p <= n; p++) {
        int two = 0;
        uint32_t i = 0;
        for (; i < p && sz[n - p + i] == sz[n - 2 * p + i]; i++)
            two |= sz[n - p + i] != sz[n - p];
        if (i == p && two)
            return p;
    }
    return 0;
}

int fwd_ahead_measure(const replay_snapshot *oom, fwd_ahead *out)
{
    memset(out, 0, sizeof *out);
    size_t n = oom->n;
    const live_item **w = n ? malloc(n * sizeof *w) : NULL, **c = n ? malloc(n * sizeof *c) : NULL;
    uint64_t *sz = n ? malloc(n * sizeof *sz) : NULL, *at = n ? malloc(n * sizeof *at) : NULL;
    size_t *wi = n ? malloc(n * sizeof *wi) : NULL; /* the weight each matched copy is of */
    int ok = 0;
    if (!w || !c || !sz || !at || !wi)
        goto done;
    size_t nw = 0, nc = 0;
    for (size_t i = 0; i < n; i++) {
        const live_item *it = &oom->items[i];
        if (it->phase_alloc == PHASE_INIT && it->category == CAT_PARAMETERS)
            w[nw++] = it;
        else if (it->category == CAT_AUTOCAST && first_forward(it))
            c[nc++] = it;
    }
    qsort(w, nw, sizeof *w, by_event);
    qsort(c, nc, sizeof *c, by_event);
    /* each copy is the next weight of twice its size, in the order the weights were made */
    size_t j = 0, last = 0;
    uint32_t k = 0;
    uint64_t again = 0;
    for (size_t i = 0; i < nc; i++) {
        size_t x = j;
        while (x < nw && w[x]->size != 2 * c[i]->size)
            x++;
        if (x == nw) { /* none ahead: a copy of a weight passed (a tied head's)? */
            for (x = 0; x < j && w[x]->size != 2 * c[i]->size; x++)
                ;
            again += x < j ? c[i]->size : 0;
            continue;
        }
        sz[k] = c[i]->size, at[k] = c[i]->alloc_event, wi[k] = x, k++;
        last = x + 1, j = x + 1;
    }
    uint32_t p = block_period(sz, k);
    if (!k || !p || !last)
        goto done;
    uint64_t from = at[k - 2 * p], to = at[k - p], act = 0;
    for (size_t i = 0; i < n; i++) {
        const live_item *it = &oom->items[i];
        if (it->category == CAT_ACTIVATIONS && first_forward(it) && it->alloc_event > from &&
            it->alloc_event < to)
            act += it->size;
    }
    /* the stack's blocks ahead: from the weight of the current block's first copy, runs of q
     * weights of the last complete block's sizes, the last run perhaps shorter */
    size_t b0 = wi[k - 2 * p], cur = wi[k - p], q = cur - b0, end = cur, r;
    while (q && end < nw) {
        for (r = 0; r < q && end + r < nw && w[end + r]->size == w[b0 + r]->size; r++)
            ;
        end += r; /* (a last block entered at another of its weights: its own end) */
        if (r < q)
            break;
    }
    size_t from_w = end > last ? end : last;
    uint64_t ob = 0;
    for (size_t i = from_w; i < nw; i++)
        ob += w[i]->size;
    *out = (fwd_ahead){.casts = k,
                       .made = (uint32_t)nw,
                       .reached = (uint32_t)last,
                       .period = p,
                       .ahead = (double)k * (double)(nw - last) / (double)last,
                       .block_act = act,
                       .wperiod = (uint32_t)q,
                       .same = (uint32_t)(from_w - last),
                       .other = (uint32_t)(nw - from_w),
                       .other_bytes = ob,
                       .cast_again = again};
    ok = casts_to_come(w, nw, wi, k, last, from_w, out);
    if (!ok)
        memset(out, 0, sizeof *out);
done:
    free(w), free(c), free(sz), free(at), free(wi);
    return ok;
}
