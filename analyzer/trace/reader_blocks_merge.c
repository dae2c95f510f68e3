/* reader_blocks_merge.c — the order reader_blocks.c hands a window's timed records out in: by
 * time, equal times in file order, each writer's records merged as the runs they already are
 * (reader_blocks_merge.h). */
#include "reader_blocks_merge.h"

#include "mem.h"

#include <stdlib.h>

static int by_time(const void *a, const void *c)
{
    const item *x = a, *y = c;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off; /* (equal times: file order) */
}

#define MERGE_WAYS 8 /* writers merged by a scan of their heads; more: a sort */
#define NO_NEXT UINT32_MAX

int blocks_merge(item **tp, size_t *cap, size_t n, item **tmp, size_t *captmp)
{
    item *t = *tp;
    uint32_t wr[MERGE_WAYS], head[MERGE_WAYS];
    size_t tail[MERGE_WAYS], k = 0, j = 0; /* j: the writer of the record before (most often
                                            * this one's too) */
    uint64_t last[MERGE_WAYS];
    if (n >= NO_NEXT)
        goto sort;
    /* each writer's records chained in file order (next), its times checked */
    for (size_t i = 0; i < n; i++) {
        if (j >= k || wr[j] != t[i].writer)
            for (j = 0; j < k && wr[j] != t[i].writer;)
                j++;
        if (j == k) {
            if (k == MERGE_WAYS || t[i].writer == VT_BLOCK_SHARED)
                goto sort; /* (a block of one record: its writer's order is not known) */
            wr[k] = t[i].writer, head[k] = (uint32_t)i, last[k++] = 0;
        } else {
            t[tail[j]].next = (uint32_t)i;
        }
        if (t[i].time < last[j])
            goto sort;
        last[j] = t[i].time, tail[j] = i;
    }
    for (size_t w = 0; w < k; w++)
        t[tail[w]].next = NO_NEXT;
    if (mem_grow((void **)tmp, captmp, n, sizeof **tmp, 64, 0) < 0) /* (only for a merge) */
        goto sort;
    /* the earliest head goes out, then the rest of its writer's records while they come before
     * every other writer's head (a thread records for a while before another does: one
     * comparison a record, not one a writer); into the scratch, which then takes t's place */
    item *o = *tmp;
    for (size_t i = 0; i < n;) {
        size_t m = k, s = k; /* the writers of the earliest head and of the next */
        for (size_t w = 0; w < k; w++) {
            if (head[w] == NO_NEXT)
                continue;
            if (m == k || by_time(&t[head[w]], &t[head[m]]) < 0)
                s = m, m = w;
            else if (s == k || by_time(&t[head[w]], &t[head[s]]) < 0)
                s = w;
        }
        do {
            o[i] = t[head[m]];
            head[m] = o[i++].next;
        } while (head[m] != NO_NEXT && (s == k || by_time(&t[head[m]], &t[head[s]]) < 0));
    }
    *tmp = t, *tp = o;
    size_t c = *cap;
    *cap = *captmp, *captmp = c;
    return 0;
sort:
    qsort(t, n, sizeof *t, by_time);
    return 0;
}
