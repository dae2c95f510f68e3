/* reader_blocks_merge.c — the order reader_blocks.c hands a window's timed records out in: by
 * time, equal times in file order, each writer's records merged as the runs they already are
 * (reader_blocks_merge.h); and the buffers' growth both files use. */
#include "reader_blocks_merge.h"

#include <stdlib.h>

static int by_time(const void *a, const void *c)
{
    const item *x = a, *y = c;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off; /* (equal times: file order) */
}

int blocks_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

#define MERGE_WAYS 8 /* writers merged by a scan of their heads; more: a sort */

int blocks_merge(item *t, size_t n, item **tmp, size_t *captmp)
{
    uint32_t wr[MERGE_WAYS];
    size_t head[MERGE_WAYS], end[MERGE_WAYS], k = 0;
    uint64_t last[MERGE_WAYS];
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        size_t j = 0;
        while (j < k && wr[j] != t[i].writer)
            j++;
        if (j == k && (k == MERGE_WAYS || t[i].writer == VT_BLOCK_SHARED))
            ok = 0; /* (a block of one record: its writer's order is not known) */
        else if (j == k)
            wr[k] = t[i].writer, last[k] = 0, end[k++] = 0;
        if (ok && t[i].time < last[j])
            ok = 0;
        if (ok)
            last[j] = t[i].time, end[j]++;
    }
    if (!ok || blocks_grow((void **)tmp, captmp, n, sizeof **tmp) < 0) {
        qsort(t, n, sizeof *t, by_time);
        return 0;
    }
    /* each writer's run laid out contiguously in tmp, in file order */
    size_t at = 0;
    for (size_t j = 0; j < k; j++)
        head[j] = at, at += end[j], end[j] = head[j];
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (wr[j] != t[i].writer)
            j++;
        (*tmp)[end[j]++] = t[i];
    }
    for (size_t i = 0; i < n; i++) { /* the earliest head; equal times: the earlier in the file */
        size_t m = k;
        for (size_t j = 0; j < k; j++)
            if (head[j] < end[j] && (m == k || by_time(&(*tmp)[head[j]], &(*tmp)[head[m]]) < 0))
                m = j;
        t[i] = (*tmp)[head[m]++];
    }
    return 0;
}
