/* report_batch.c — the batch the moment the model explains ran (report.h report_batch_now): the
 * program's input live then that its first forward's batch line made again. A run whose batch
 * changes (a ramp-up of the micro-batch, a first step of its own) ran another batch there than in
 * its first forward, which is all the trace's inference reads; the first forward's over the
 * batch flag had made T 4x too small for a ramp 4 -> 8 -> 16 (model_batch_seen reads both). */
#include "report.h"

#include <stdio.h>
#include <string.h>

#include "joinsrc.h"

/* made_again: stack s is the first forward's batch line (stack) or runs the same Python lines */
static int made_again(tables *t, uint32_t s, uint32_t stack)
{
    return stack && (s == stack || replay_same_lines(t, s, stack));
}

void report_batch_now(const replay_result *r, const replay_snapshot *snap, const infer_result *ir,
                      uint64_t *tokens, uint64_t *images)
{
    *tokens = *images = 0;
    if (!r || !snap || !ir)
        return;
    uint32_t ts = ir->v[INFER_tokens].known && !ir->tokens_eval ? ir->tokens_stack : 0;
    uint64_t side = ir->v[INFER_image_size].known ? (uint64_t)ir->v[INFER_image_size].value : 0;
    uint32_t is = side && !ir->images_one_label ? ir->images_stack : 0; /* (1 image or B?) */
    uint64_t t_event = 0, i_event = 0, img = 12 * side * side;          /* fp32 B·3·H·W */
    for (size_t i = 0; (ts || is) && i < snap->n; i++) {
        const live_item *it = &snap->items[i];
        if (!it->input || !it->tensor_api)
            continue;
        /* the newest of them: a step's batch made before the last one's is freed */
        if (ts && it->size % 8 == 0 && it->alloc_event > t_event &&
            made_again(r->t, it->stack_id, ts))
            *tokens = it->size / 8, t_event = it->alloc_event;
        else if (is && img && it->size % img == 0 && it->alloc_event > i_event &&
                 made_again(r->t, it->stack_id, is))
            *images = it->size / img, i_event = it->alloc_event;
    }
}

void report_tokens_joined(const replay_result *r, const infer_result *ir, run_facts *f)
{
    f->tokens_joined = 0;
    f->tokens_joined_at[0] = '\0';
    if (!r || !ir || !ir->v[INFER_tokens].known || ir->tokens_eval || !ir->tokens_stack)
        return;
    const tables_stack *st = tables_stack_get(r->t, ir->tokens_stack);
    f->tokens_joined =
        st ? joinsrc_stack(r->t, st, f->tokens_joined_at, sizeof f->tokens_joined_at) : 0;
}

void report_images_folded(const replay_result *r, infer_result *ir)
{
    if (!r || !ir || !ir->v[INFER_image_size].known || !ir->images_fwd_stack)
        return;
    char said[104];
    const tables_stack *st = tables_stack_get(r->t, ir->images_fwd_stack);
    if (!st || !joinsrc_folds(r->t, st, said, sizeof said))
        return;
    /* B·C·H·W is B·(T·3)·H·W as well as B·3·(H·√T)²: TSM's clips of 16 frames of 224² had been
     * "896×896 images"; the labels still count the samples */
    memset(&ir->v[INFER_image_size], 0, sizeof ir->v[INFER_image_size]);
    ir->images_stack = ir->images_fwd_stack = 0;
    infer_value *b = &ir->v[INFER_batch_size];
    if (b->known)
        snprintf(b->where, sizeof b->where,
                 "B = %lld: one int64 per sample (a classifier's labels) beside an fp32 batch; "
                 "the forward's first tensor came from a line that folds the batch's leading "
                 "dimensions (%.100s): how many images a sample holds (a clip's frames), and "
                 "their size, not known",
                 (long long)b->value, said);
}
