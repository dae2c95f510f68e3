/* report_grads.c — the tensors and requests of a weight's size: whether the failed request of an
 * out-of-memory error is the size of a weight live then (run_facts' oom_weight), and the
 * backward's tensors of a live weight's size (report_weight_sized): a backward making a weight's
 * gradient asks for a block of that weight's size, which no smaller micro-batch shrinks (a DLRM's
 * embedding table's, a TransE's). */
#include "report.h"

#include "allocsim.h"

#include <stdlib.h>

/* rounded: size as PyTorch's caching allocator asks for it, a block or, where the request was a
 * segment's, that segment (allocsim.h's rules): the request of an error is the segment's size */
static int rounded(uint64_t size, uint64_t req)
{
    uint64_t block = allocsim_block(size);
    return req == size || req == block || req == allocsim_segment(block);
}

void report_grads(const replay_result *r, run_facts *f)
{
    f->oom_weight = 0, f->oom_weight_n = 0;
    if (!r->has_oom || !r->tensor_mode || !r->oom_requested)
        return;
    const replay_snapshot *s = &r->at_oom;
    for (size_t i = 0; i < s->n; i++) {
        const live_item *it = &s->items[i];
        if (it->category != CAT_PARAMETERS || it->torch_segment || !it->size ||
            !rounded(it->size, r->oom_requested))
            continue;
        if (it->size < f->oom_weight) /* (weights of two sizes: the larger) */
            continue;
        f->oom_weight_n = it->size == f->oom_weight ? f->oom_weight_n + 1 : 1;
        f->oom_weight = it->size;
    }
}

static int cmp_size(const void *a, const void *b) /* (qsort's order of sizes) */
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t report_weight_sized(const replay_snapshot *s, uint64_t extra, int *asked)
{
    size_t n = 0;
    uint64_t sum = 0, *w = malloc((s->n ? s->n : 1) * sizeof *w);
    *asked = 0;
    if (!w)
        return 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].category == CAT_PARAMETERS && s->items[i].size >= (1u << 20))
            w[n++] = s->items[i].size;
    qsort(w, n, sizeof *w, cmp_size);
    for (size_t i = 0; n && i < s->n; i++)
        if (s->items[i].category == CAT_BACKWARD &&
            bsearch(&s->items[i].size, w, n, sizeof *w, cmp_size))
            sum += s->items[i].size;
    for (size_t i = 0; extra && i < n && !*asked; i++) /* (as the allocator asked for it) */
        *asked = rounded(w[i], extra);
    free(w);
    return sum;
}
