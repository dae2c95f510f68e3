/* catpeaks.c — category_peaks (catpeaks.h): +size at an allocation, -size at its free, sorted
 * by event and swept once at the end of the replay. */
#include "catpeaks.h"

#include <stdlib.h>
#include <string.h>

static void push(catpeaks *cp, uint64_t event, uint64_t t, int64_t d, uint8_t cat, uint8_t kind)
{
    if (cp->lost)
        return;
    if (cp->n == cp->cap) {
        size_t n = cp->cap ? cp->cap * 2 : 4096;
        catpeaks_delta *p = n <= CATPEAKS_MAX ? realloc(cp->d, n * sizeof *p) : NULL;
        if (!p) {
            cp->lost = 1;
            return;
        }
        cp->d = p;
        cp->cap = n;
    }
    cp->d[cp->n++] = (catpeaks_delta){event, t, d, cat, kind};
}

void catpeaks_add(catpeaks *cp, uint64_t ev_alloc, uint64_t t_alloc, int freed, uint64_t ev_free,
                  uint64_t t_free, uint64_t size, category cat, int kind)
{
    if ((unsigned)cat >= CAT_COUNT || size > (uint64_t)INT64_MAX)
        return;
    push(cp, ev_alloc, t_alloc, (int64_t)size, (uint8_t)cat, (uint8_t)kind);
    if (freed)
        push(cp, ev_free, t_free, -(int64_t)size, (uint8_t)cat, (uint8_t)kind);
}

static int cmp_delta(const void *a, const void *b)
{
    const catpeaks_delta *x = a, *y = b;
    return x->event < y->event ? -1 : x->event > y->event;
}

int catpeaks_sweep(catpeaks *cp, int allocator_mode, uint64_t peak[CAT_COUNT],
                   uint64_t peak_ns[CAT_COUNT])
{
    memset(peak, 0, CAT_COUNT * sizeof *peak);
    memset(peak_ns, 0, CAT_COUNT * sizeof *peak_ns);
    if (cp->lost || !cp->n)
        return 0;
    qsort(cp->d, cp->n, sizeof *cp->d, cmp_delta);
    int64_t cur[CAT_COUNT] = {0}, seg = 0, inner = 0;
    for (size_t i = 0; i < cp->n;) {
        uint64_t ev = cp->d[i].event, t = cp->d[i].time_ns;
        for (; i < cp->n && cp->d[i].event == ev; i++) { /* one event: all its deltas at once */
            const catpeaks_delta *d = &cp->d[i];
            if (d->kind == CATPEAKS_SEGMENT)
                seg += d->delta;
            else
                cur[d->cat] += d->delta;
            if (d->kind == CATPEAKS_INNER)
                inner += d->delta;
        }
        if (allocator_mode)
            cur[CAT_CACHE] = seg > inner ? seg - inner : 0;
        timeline_cats(cp->tl, i - 1, cp->n, t, cur);
        for (int c = 0; c < CAT_COUNT; c++)
            if (cur[c] > 0 && (uint64_t)cur[c] > peak[c])
                peak[c] = (uint64_t)cur[c], peak_ns[c] = t;
    }
    return 1;
}

void catpeaks_free(catpeaks *cp)
{
    free(cp->d);
    memset(cp, 0, sizeof *cp);
}
