/* replay_passes.c — a first backward pass's temporaries, for the join after a bounded trace's
 * gap (replay_snap.c). A backward pass makes its tensors in the same order every step (the same
 * shapes): where the last first pass since a step seen whole freed a parameter-sized tensor it had
 * made itself, at the same offset from the pass's first event and of the same size, a pass the gap
 * cut made a temporary too, not a gradient (a bounded simulated run had counted one alive at the
 * gap, 2.13 MiB of gradients as 2.23; 1 run in ~10). Only the first pass since a step is learnt
 * from: gradient accumulation's later passes free the gradients' addends. */
#include <stdlib.h>

#include "replay_state.h"

static int bt_cmp(const void *a, const void *b)
{
    const struct bwd_temp *x = a, *y = b;
    return x->off != y->off ? (x->off > y->off) - (x->off < y->off)
                            : (x->size > y->size) - (x->size < y->size);
}

void replay_bwd_begin(state *s)
{
    s->news |= REPLAY_NEWS_BWD; /* (s->bwd just went up) */
    s->bwd_event = s->event;
    if (s->bt[0].ok) { /* the pass it recorded is over, whole: the one to learn from now */
        struct bwd_temps t = s->bt[1];
        s->bt[1] = s->bt[0], s->bt[0] = t;
    }
    s->bt[0].n = 0;
    s->bt[0].ok = s->bwd == s->bwd_at_step + 1;
    /* the last step was a gradient's free right after the last pass, and no forward's own frames
     * allocated since that pass began: this pass is of the same forward (retain_graph), and the
     * free may have ended no step (PCGrad's zero_grad between its per-task passes had made a
     * T-task run's 2 steps "8 optimizer steps", A = 1); with Python frames, in tensor mode */
    if (s->iter && s->last_free_iter == s->iter && s->bwd_at_step + 1 == s->bwd &&
        s->fwd_bwd + 1 < s->bwd && s->seen_forward && s->r->tensor_mode && !s->no_python)
        s->r->free_steps_shared++, s->accum_mixed = 1;
}

void replay_bwd_temp(state *s, const livemap_entry *e)
{
    struct bwd_temps *t = &s->bt[0];
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct bwd_temp *v = realloc(t->v, cap * sizeof *v);
        if (!v) { /* (what it holds is not the whole pass's: not learnt from) */
            t->ok = 0;
            return;
        }
        t->v = v, t->cap = cap;
    }
    t->v[t->n++] = (struct bwd_temp){e->alloc_event - s->bwd_event, e->size};
}

void replay_bwd_cut(state *s)
{
    s->bt[0].ok = 0;
    if (s->bt[1].n)
        qsort(s->bt[1].v, s->bt[1].n, sizeof *s->bt[1].v, bt_cmp);
}

int replay_bwd_was_temp(const state *s, const livemap_entry *e)
{
    if (!s->bt[1].ok || e->bwd != s->bwd || e->alloc_event < s->bwd_event)
        return 0;
    struct bwd_temp k = {e->alloc_event - s->bwd_event, e->size};
    return bsearch(&k, s->bt[1].v, s->bt[1].n, sizeof k, bt_cmp) != NULL;
}
