/* replay_went_on.c — what a program went on with after an out-of-memory error it caught (a
 * smaller batch's retry: Hugging Face's auto_find_batch_size, a loop of its own): the batch it
 * trained with and what its steps held, measured from the trace (replay_oom.h went_on_window).
 * Nothing here runs per event: a failure opens a stretch, its resolution closes or undoes it (the
 * OOM's own bookkeeping, replay_api.c), and the stretch's peaks are the replay's own thresholds
 * (replay_snap_bump_peaks, called when a level passes them), reset at its start and made whole
 * again at the trace's end. Part of the one replay. */
#include <stdio.h>
#include <string.h>

#include "replay_state.h"

void replay_went_on_open(state *s, const oom_track *ot)
{
    replay_result *r = s->r;
    went_on_window *w = &s->won;
    w->undo = (struct went_on_undo){w->open,          w->caught,     w->event,     r->peak_train,
                                    r->peak_reserved, r->t_reserved, w->res,       w->proc,
                                    w->pre_train,     w->pre_res,    w->pre_t_res, w->iter};
    w->has_undo = 1;
    /* (the run's peaks before it: at the same level the earlier moment, as the replay keeps) */
    if (r->peak_train > w->pre_train)
        w->pre_train = r->peak_train;
    if (r->peak_reserved > w->pre_res)
        w->pre_res = r->peak_reserved, w->pre_t_res = r->t_reserved;
    r->peak_train = r->peak_reserved = 0;
    w->res = w->proc = 0;
    w->open = 1, w->caught = 0;
    w->event = ot->first_event;
    w->iter = s->iter;
    if (s->blocks_on) /* (which of its segments the steps after it use) */
        blocks_epoch_begin(&s->blocks);
}

/* made: e, live now and made since the stretch began, among the oldest of them */
static void made(went_on_window *w, const livemap_entry *e)
{
    uint32_t i = w->nmade;
    while (i > 0 && w->made_event[i - 1] > e->alloc_event)
        i--;
    if (i == WENT_ON_MADE)
        return;
    uint32_t n = w->nmade < WENT_ON_MADE ? w->nmade : WENT_ON_MADE - 1;
    memmove(&w->made_size[i + 1], &w->made_size[i], (n - i) * sizeof w->made_size[0]);
    memmove(&w->made_event[i + 1], &w->made_event[i], (n - i) * sizeof w->made_event[0]);
    w->made_size[i] = e->size, w->made_event[i] = e->alloc_event;
    w->nmade = n + 1;
}

/* inputs: the program's inputs live now made since the stretch began, the oldest first */
static void inputs(state *s)
{
    went_on_window *w = &s->won;
    livemap *m = &s->live;
    w->ninputs = w->nmade = 0;
    for (uint64_t k = 0; k < m->ne; k++) {
        const livemap_entry *e = livemap_live_entry(m, k);
        if (!e || (e->level != L_TENSOR && e->level != L_INNER) || e->alloc_event <= w->event)
            continue;
        made(w, e);
        if (!(e->flags & EF_INPUT) || e->size < 16 || e->size % 8)
            continue;
        uint32_t i = w->ninputs;
        while (i > 0 && w->input_event[i - 1] > e->alloc_event)
            i--;
        if (i == WENT_ON_INPUTS)
            continue;
        uint32_t n = w->ninputs < WENT_ON_INPUTS ? w->ninputs : WENT_ON_INPUTS - 1;
        memmove(&w->input_size[i + 1], &w->input_size[i], (n - i) * sizeof w->input_size[0]);
        memmove(&w->input_event[i + 1], &w->input_event[i], (n - i) * sizeof w->input_event[0]);
        memmove(&w->input_stack[i + 1], &w->input_stack[i], (n - i) * sizeof w->input_stack[0]);
        w->input_size[i] = e->size, w->input_event[i] = e->alloc_event;
        w->input_stack[i] = e->stack_id;
        w->ninputs = n + 1;
    }
}

void replay_went_on_resolved(state *s, const oom_track *ot, int caught)
{
    replay_result *r = s->r;
    went_on_window *w = &s->won;
    if (!w->open || ot->first_event != w->event || !w->has_undo)
        return; /* (an evaluation's, or one resolved already) */
    w->has_undo = 0;
    if (caught) {
        w->caught = 1;
        inputs(s);
        return;
    }
    /* recovered: the stretch before it goes on through it */
    const struct went_on_undo *u = &w->undo;
    if (u->train > r->peak_train)
        r->peak_train = u->train;
    if (u->res >= r->peak_reserved)
        r->peak_reserved = u->res, r->t_reserved = u->t_res;
    w->res = u->wres > w->res ? u->wres : w->res;
    w->proc = u->wproc > w->proc ? u->wproc : w->proc;
    w->pre_train = u->pre_train, w->pre_res = u->pre_res, w->pre_t_res = u->pre_t_res;
    w->open = u->open, w->caught = u->caught, w->event = u->event, w->iter = u->iter;
    s->blocks.epoch_lost = 1; /* (the epoch began at this failure, not at the stretch's) */
}

int replay_same_lines(tables *t, uint32_t a, uint32_t b)
{
    const tables_stack *x = tables_stack_get(t, a), *y = tables_stack_get(t, b);
    if (!x || !y || !x->n_python || x->n_python != y->n_python)
        return 0;
    for (unsigned i = 0; i < x->n_python; i++) {
        tables_frame f, g;
        tables_resolve_frame(t, x->frames[x->n_native + i], TABLES_FRAME_PYTHON, &f);
        tables_resolve_frame(t, y->frames[y->n_native + i], TABLES_FRAME_PYTHON, &g);
        if (f.code_id != g.code_id || f.line != g.line || (f.line < 0 && f.raw != g.raw))
            return 0;
    }
    return 1;
}

/* seq_after: the retry's T, from its position ids: arange(T), int64, among the few tensors made
 * after its token batch (made_event[i]) that divide it (its targets, mask and copies, as large,
 * passed over); 0 where none says (then its micro-batch is not known: a loop that retried at a
 * shorter sequence, the same batch, had been said to go on at half the micro-batch) */
static uint64_t seq_after(const went_on_window *w, uint32_t i)
{
    uint64_t size = w->made_size[i];
    for (uint32_t j = i + 1, others = 0; j < w->nmade && others < 4; j++) {
        uint64_t z = w->made_size[j];
        if (z == size)
            continue;
        if (z >= 64 && z % 8 == 0 && z < size && size % z == 0)
            return z / 8;
        others++;
    }
    return 0;
}

/* token_batch: the token batch among the inputs read when the last caught error was resolved
 * (made again by the stack that made the first forward's; where no Python frame marks the
 * inputs, the oldest tensor made since of at most the first forward's token batch's bytes that
 * position ids follow), its T in *Tr (the retry's position ids; 0 not known) and its micro-batch
 * over T in *B (0 if T is not known or does not divide it); 0 if none */
static uint64_t token_batch(const state *s, uint64_t *B, uint64_t *Tr)
{
    const replay_result *r = s->r;
    const went_on_window *w = &s->won;
    const infer_result *in = &r->inferred;
    int known = r->has_inferred && in->v[INFER_tokens].known;
    uint32_t stack = known ? in->tokens_stack : 0;
    uint64_t tokens = 0, event = 0, T = 0;
    *B = *Tr = 0;
    for (uint32_t i = 0; stack && i < w->ninputs && !tokens; i++)
        if (w->input_stack[i] == stack || replay_same_lines(r->t, w->input_stack[i], stack))
            tokens = w->input_size[i] / 8, event = w->input_event[i];
    const tables_stack *st = known ? tables_stack_get(r->t, in->tokens_stack) : NULL;
    uint64_t first = known ? (uint64_t)in->v[INFER_tokens].value * 8 : 0;
    if (!tokens && !w->ninputs && (!st || !st->n_python)) /* (no Python frame: no input marked) */
        for (uint32_t i = 0; i < w->nmade && !tokens; i++)
            if (w->made_size[i] <= first && w->made_size[i] % 8 == 0 && (T = seq_after(w, i)))
                tokens = w->made_size[i] / 8;
    for (uint32_t i = 0; event && i < w->nmade; i++)
        if (w->made_event[i] == event)
            T = seq_after(w, i);
    *Tr = T;
    *B = tokens && T ? tokens / T : 0;
    return tokens;
}

/* failed_batch: the trace ended in a failure after the program went on from a caught error
 * (oom_retry at 14, then 9, which failed too): the configuration that ran out of memory is the
 * batch of that last attempt, not the first forward's; the inference's B and B·T become it, so
 * the configuration, the formula and the advice are of the batch that failed. (They had been of
 * 14 beside 9's live set: "largest micro-batch that fits: 13" where 9 had run out.) */
static void failed_batch(state *s)
{
    replay_result *r = s->r;
    infer_result *in = &r->inferred;
    uint64_t B = 0, T = 0, tokens = token_batch(s, &B, &T);
    infer_value *vb = &in->v[INFER_batch_size], *vt = &in->v[INFER_tokens];
    infer_value *vs = &in->v[INFER_block_size];
    if (!vb->known || !vt->known || !vs->known)
        return;
    uint64_t B0 = (uint64_t)vb->value;
    if (!B) /* (not read: left as the first forward's) */
        return;
    if (B == B0 && T == (uint64_t)vs->value)
        return;
    r->oom_first_batch = B0;
    if (T != (uint64_t)vs->value) {
        snprintf(vs->where, sizeof vs->where,
                 "T = %llu from the position ids of the attempt that ran out of memory (arange(T): "
                 "%llu int64 after its token batch); the first forward's was %lld",
                 (unsigned long long)T, (unsigned long long)T, (long long)vs->value);
        vs->value = (int64_t)T;
    }
    snprintf(vb->where, sizeof vb->where,
             "B = %llu: B·T = %llu over T = %llu, the batch of the attempt that ran out of memory "
             "(the program caught an error at %llu, the first forward's, and tried again)",
             (unsigned long long)B, (unsigned long long)tokens, (unsigned long long)T,
             (unsigned long long)B0);
    vb->value = (int64_t)B;
    vt->value = (int64_t)tokens;
}

void replay_went_on_end(state *s)
{
    replay_result *r = s->r;
    went_on_window *w = &s->won;
    if (w->open && !w->caught && w->ended_in)
        failed_batch(s);
    if (w->open && w->caught) {
        r->went_on_event = w->event;
        r->went_on_tensors = r->peak_train;
        r->went_on_reserved = w->res;
        r->went_on_process = w->proc;
        r->went_on_unused = s->blocks_on ? blocks_epoch_unused(&s->blocks) : 0;
        r->went_on_steps = s->iter - w->iter;
        uint64_t T = 0;
        r->went_on_tokens = token_batch(s, &r->went_on_batch, &T);
        const infer_value *vs = &r->inferred.v[INFER_block_size];
        if (T && vs->known && T != (uint64_t)vs->value) /* (another sequence: tokens, no batch) */
            r->went_on_batch = 0, r->went_on_seq = T;
    }
    if (w->open) { /* the run's peaks whole again */
        if (w->pre_train > r->peak_train)
            r->peak_train = w->pre_train;
        if (w->pre_res >= r->peak_reserved && w->pre_res)
            r->peak_reserved = w->pre_res, r->t_reserved = w->pre_t_res;
    }
}
