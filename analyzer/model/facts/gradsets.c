/* gradsets.c — the union of the gradient sets of the run's steps (gradsets.h). */
#include "gradsets.h"

#include <stdlib.h>
#include <string.h>

void gradsets_add(gradsets *g, uint32_t iter, uint64_t size, int state)
{
    if (g->lost || iter >= GRADSETS_STEPS + (state != 0) || !size)
        return;
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 256;
        gradsets_item *p = cap > GRADSETS_MAX ? NULL : realloc(g->it, cap * sizeof *p);
        if (!p) {
            g->lost = 1;
            return;
        }
        g->it = p, g->cap = cap;
    }
    g->it[g->n++] = (gradsets_item){size, iter, state != 0};
}

static int by_size_iter(const void *a, const void *b)
{
    const gradsets_item *x = a, *y = b;
    if (x->state != y->state)
        return x->state < y->state ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return x->iter < y->iter ? -1 : x->iter > y->iter;
}

/* same_sets: whether steps i and j made gradients of the same sizes, as many of each (g sorted:
 * the gradients first, g->n of them) */
static int same_sets(const gradsets *g, size_t n, uint32_t i, uint32_t j)
{
    for (size_t a = 0; a < n;) {
        size_t b = a, ni = 0, nj = 0;
        for (; b < n && g->it[b].size == g->it[a].size; b++)
            ni += g->it[b].iter == i, nj += g->it[b].iter == j;
        if (ni != nj)
            return 0;
        a = b;
    }
    return 1;
}

/* new_state: whether the state step k + 1 made over the gradients of set k is, per byte, the
 * first set's (ratio0): state made for every one of its weights, none stepped before */
static int new_state(const uint64_t *gb, const uint64_t *sb, uint32_t k, double ratio0)
{
    double r = gb[k] ? (double)sb[k] / (double)gb[k] : 0;
    return r > 0 && r > ratio0 * (1 - 1.0 / 32) && r < ratio0 * (1 + 1.0 / 32);
}

uint64_t gradsets_union(gradsets *g, uint32_t steps, unsigned *sets, int *lower)
{
    *sets = 0, *lower = 0;
    if (g->lost || !g->n)
        return 0;
    if (steps > GRADSETS_STEPS)
        steps = GRADSETS_STEPS;
    uint64_t gb[GRADSETS_STEPS] = {0}, sb[GRADSETS_STEPS] = {0};
    size_t n = 0; /* (the gradients a step read; the state those steps made, by step) */
    for (size_t i = 0; i < g->n; i++)
        if (g->it[i].state && g->it[i].iter >= 1 && g->it[i].iter <= steps)
            sb[g->it[i].iter - 1] += g->it[i].size;
    for (size_t i = 0; i < g->n; i++)
        if (!g->it[i].state && g->it[i].iter < steps)
            gb[g->it[i].iter] += g->it[i].size, g->it[n++] = g->it[i];
    g->n = n;
    qsort(g->it, g->n, sizeof *g->it, by_size_iter);
    uint64_t bytes = 0;
    for (size_t a = 0; a < g->n;) {
        size_t b = a, most = 0, run = 0;
        for (; b < g->n && g->it[b].size == g->it[a].size; b++) {
            run = b > a && g->it[b].iter == g->it[b - 1].iter ? run + 1 : 1;
            most = run > most ? run : most;
        }
        bytes += g->it[a].size * most;
        a = b;
    }
    /* each distinct set's first step; the sum of those sets where each one's step made state
     * for all of it */
    uint64_t sum = 0;
    double ratio0 = -1;
    int all_new = 1;
    for (uint32_t i = 0; i < steps; i++) {
        int seen = !gb[i];
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = gb[j] && same_sets(g, g->n, i, j);
        if (seen)
            continue;
        ++*sets;
        if (ratio0 < 0)
            ratio0 = (double)sb[i] / (double)gb[i];
        all_new &= new_state(gb, sb, i, ratio0);
        sum += gb[i];
    }
    if (*sets >= 2 && all_new)
        return sum > bytes ? sum : bytes;
    *lower = sum > bytes; /* (sizes shared by sets: each counted once) */
    return bytes;
}

void gradsets_free(gradsets *g)
{
    free(g->it);
    memset(g, 0, sizeof *g);
}
