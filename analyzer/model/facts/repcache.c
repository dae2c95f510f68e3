/* repcache.c — a step whose first backward pass made no gradient of a weight: a representation
 * cache's (GradCache, sentence-transformers' Cached* losses: every chunk encoded under no_grad,
 * the loss's gradient taken with respect to the cached representations — leaves that are not
 * weights — then each chunk encoded again and back-propagated with its part of that gradient),
 * or another backward of non-weight leaves before the weights' (an input's gradient). Its
 * passes are not gradient accumulation's micro-steps: the loss couples the whole batch, one
 * optimizer step per batch, and the forward's batch is the chunk. A GradCache run had been told
 * "A = 81: 81 backward passes before each of the 2 optimizer steps", "effective batch 41472"
 * (512), and a micro-batch 512 → 256 that "fits" where it ran out of memory (its chunks were
 * 256). Read after the pass from a snapshot's gradients and the backward pass each was made in
 * (live_item.bwd_alloc), never per event. */
#include "repcache.h"

/* first_pass_gradless: in snap, the gradients of a step whose backward passes are first..last —
 * none made in its first pass, some in a later one that is not its last (chunks went on after
 * the first weights' gradients were made: an adversarial step's attack passes, gradients of its
 * inputs alone, make the weights' in its last pass only, and are no cache). A weight that takes
 * its gradient in a later micro-step alone (an expert no token of the first micro-batch
 * reached) is some of them, never all: under 2 % of the step's gradient bytes in the first pass
 * still counts as none (a cached representation the size of a weight: 512×768, a 512-row
 * position table's). */
static int first_pass_gradless(const replay_snapshot *snap, uint32_t first, uint32_t last)
{
    uint64_t in_first = 0, later = 0;
    uint32_t made = last; /* the first pass after the first that made a weight's gradient */
    for (size_t i = 0; i < snap->n; i++) {
        const live_item *it = &snap->items[i];
        if (it->category != CAT_GRADIENTS || it->bwd_alloc < first || it->bwd_alloc > last)
            continue;
        if (it->bwd_alloc == first) {
            in_first += it->size;
            continue;
        }
        later += it->size;
        made = it->bwd_alloc < made ? it->bwd_alloc : made;
    }
    return later > 0 && made < last && in_first * 50 < in_first + later;
}

uint32_t repcache_detect(const replay_result *r, uint32_t accum, uint32_t accum_steps)
{
    /* (not after an out-of-memory error the program caught: the passes it cut short are
     * counted, their gradients freed; HF's --auto-find-batch-size, a caught first micro-step at
     * 4 then 4 passes at 2, had been called a representation cache) */
    if (!r->tensor_mode || r->oom_caught)
        return 0;
    /* a run of steps, each of the same accum >= 2 passes: the gradients live in its largest
     * optimizer step (at_step), of the step its gradients were made in */
    if (accum >= 2 && accum_steps && r->at_step.event && r->at_step.n) {
        uint32_t s = UINT32_MAX;
        for (size_t i = 0; i < r->at_step.n; i++)
            if (r->at_step.items[i].category == CAT_GRADIENTS && r->at_step.items[i].iter_alloc < s)
                s = r->at_step.items[i].iter_alloc;
        if (s == UINT32_MAX || s >= accum_steps)
            return 0;
        uint32_t first = s * accum + 1;
        return first_pass_gradless(&r->at_step, first, first + accum - 1) ? accum : 0;
    }
    /* an out-of-memory error in a first step's later pass (none completed before: the step's
     * first pass is the run's first), after two passes or more */
    if (r->has_oom && r->oom_iter == 0 && r->iterations == 0 && r->oom_bwd >= 2 && r->at_oom.n)
        return first_pass_gradless(&r->at_oom, 1, r->oom_bwd) ? r->oom_bwd : 0;
    return 0;
}

uint64_t repcache_weight_gradients(const replay_result *r)
{
    /* (GradCache's 512×768 query representations, the size of a position table: their .grad,
     * alive with the weights' before the step, had been counted among the gradients' elements,
     * 218173440 of a model's 217780224 weights, "7.99 B of state per trainable parameter", and
     * the trainable count dropped as more than the weights) */
    if (!r->cache_passes || !r->iterations || !r->at_step.event || !r->at_step.n)
        return 0;
    uint64_t b = 0;
    for (size_t i = 0; i < r->at_step.n; i++) {
        const live_item *it = &r->at_step.items[i];
        if (it->category == CAT_GRADIENTS &&
            (uint64_t)it->bwd_alloc != (uint64_t)it->iter_alloc * r->cache_passes + 1)
            b += it->size;
    }
    return b;
}

int repcache_one_batch(const replay_result *r)
{
    if (!r->tensor_mode || r->accum < 2 || !r->accum_steps || !r->at_step.event || !r->at_step.n)
        return 0;
    const replay_snapshot *st = &r->at_step;
    uint32_t s = UINT32_MAX; /* (the step its gradients were made in, as repcache_detect) */
    for (size_t i = 0; i < st->n; i++)
        if (st->items[i].category == CAT_GRADIENTS && st->items[i].iter_alloc < s)
            s = st->items[i].iter_alloc;
    if (s == UINT32_MAX || s >= r->accum_steps)
        return 0;
    /* (an input copied before the step's first pass: as many passes begun as steps before) */
    uint32_t before_first = s * r->accum, last = before_first + r->accum;
    int kept = 0;
    for (size_t i = 0; i < st->n; i++) {
        const live_item *it = &st->items[i];
        if (it->category != CAT_INPUTS || it->iter_alloc != s || it->bwd_alloc != before_first)
            continue;
        /* a micro-batch's own size copied again between the passes (accumulation's next), or
         * before the first pass once for each pass (Hugging Face's Trainer copies every
         * micro-batch of the step first) */
        uint32_t copies = 0;
        int twin = 0; /* a batch of its size the program made between the passes (not copied) */
        for (size_t j = 0; j < st->n; j++) {
            const live_item *o = &st->items[j];
            if (o->iter_alloc != s || o->size != it->size)
                continue;
            int between = o->bwd_alloc > before_first && o->bwd_alloc < last;
            if (o->category != CAT_INPUTS) {
                twin |= between;
                continue;
            }
            if (between)
                return 0;
            copies += o->bwd_alloc == before_first;
        }
        if (copies >= r->accum)
            return 0;
        kept |= twin;
    }
    return kept;
}
