/* state_layout.c — how the optimizer's state lies beside the weights (state_layout.h). */
#include "state_layout.h"

#include <stdlib.h>
#include <string.h>

#include "replay.h"

typedef struct size_count {
    uint64_t size;
    uint32_t n, used;
} size_count;

static int by_size(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* counted: the sorted sizes v[0..n) as distinct sizes and their counts in out (n of room);
 * how many */
static size_t counted(const uint64_t *v, size_t n, size_count *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && out[k - 1].size == v[i])
            out[k - 1].n++;
        else
            out[k++] = (size_count){v[i], 1, 0};
    }
    return k;
}

static size_count *find(size_count *c, size_t n, uint64_t size)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].size < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && c[lo].size == size ? &c[lo] : NULL;
}

/* layout_of: s's weights and state (tensors only: no segment of PyTorch's allocator) */
static void layout_of(const replay_snapshot *s, unsigned elem, state_layout *out)
{
    memset(out, 0, sizeof *out);
    size_t nw = 0, ns = 0;
    for (size_t i = 0; i < s->n; i++) {
        const live_item *it = &s->items[i];
        nw += !it->torch_segment && it->category == CAT_PARAMETERS;
        ns += !it->torch_segment && it->category == CAT_OPTIMIZER;
    }
    if (!nw || !ns)
        return;
    uint64_t *w = malloc(nw * sizeof *w), *st = malloc(ns * sizeof *st);
    size_count *wc = malloc(nw * sizeof *wc), *sc = malloc(ns * sizeof *sc);
    if (!w || !st || !wc || !sc)
        goto done;
    nw = ns = 0;
    for (size_t i = 0; i < s->n; i++) {
        const live_item *it = &s->items[i];
        if (it->torch_segment)
            continue;
        if (it->category == CAT_PARAMETERS)
            w[nw++] = it->size;
        else if (it->category == CAT_OPTIMIZER)
            st[ns++] = it->size, out->state += it->size;
    }
    qsort(w, nw, sizeof *w, by_size);
    qsort(st, ns, sizeof *st, by_size);
    size_t kw = counted(w, nw, wc), ks = counted(st, ns, sc);
    uint64_t least = 0; /* the smallest tensor of a pair */
    /* two of one byte per element of each weight of 4096 elements or more (bitsandbytes'
     * min_8bit_size: smaller ones keep 32-bit states; a norm's 512 elements had taken two scale
     * tensors of 512 B for a pair) */
    for (size_t i = 0; i < kw; i++) {
        size_count *c =
            wc[i].size % elem || wc[i].size / elem < 4096 ? NULL : find(sc, ks, wc[i].size / elem);
        uint32_t k = c ? (c->n - c->used) / 2 : 0;
        k = k < wc[i].n ? k : wc[i].n;
        if (!k)
            continue;
        c->used += 2 * k;
        out->pairs += 2 * (uint64_t)k * c->size, out->npairs += 2 * k;
        least = least && least < c->size ? least : c->size;
    }
    for (size_t i = 0; least && i < ks && sc[i].size < least; i++) /* beside the pairs */
        out->scales += (uint64_t)(sc[i].n - sc[i].used) * sc[i].size,
            out->nscales += sc[i].n - sc[i].used;
    /* one of each weight's own bytes, counted apart (a grouped key's and value's 16-bit states
     * are a pair of one byte per element of the query's weight: neither reading takes the
     * other's tensors) */
    for (size_t i = 0; i < kw; i++) {
        size_count *c = find(sc, ks, wc[i].size);
        uint32_t k = c ? c->n : 0;
        k = k < wc[i].n ? k : wc[i].n;
        out->same += (uint64_t)k * wc[i].size, out->nsame += k;
    }
    out->nrest = (uint32_t)ns - out->nsame;
done:
    free(w), free(st), free(wc), free(sc);
}

void state_layout_read(const replay_result *r, unsigned elem, state_layout *out)
{
    memset(out, 0, sizeof *out);
    const replay_snapshot *at[] = {&r->at_step, &r->at_peak, &r->at_tensors,
                                   r->has_oom ? &r->at_oom : NULL};
    const replay_snapshot *best = NULL;
    for (size_t i = 0; r->tensor_mode && (elem == 2 || elem == 4) && i < 4; i++)
        if (at[i] && at[i]->n &&
            (!best || at[i]->by_cat.bytes[CAT_OPTIMIZER] > best->by_cat.bytes[CAT_OPTIMIZER]))
            best = at[i];
    if (best && best->by_cat.bytes[CAT_OPTIMIZER])
        layout_of(best, elem, out);
}

int state_layout_8bit(const state_layout *l)
{
    return l->state && l->pairs >= l->state / 10 * 9 && l->nscales >= l->npairs;
}

int state_layout_one(const state_layout *l)
{
    return l->state && l->same >= l->state / 10 * 9 && l->nrest < l->nsame;
}
