/* replay_phase.c — the replay's reading of the program's steps: the phase of each event (init,
 * forward, backward, optimizer, ...), backward passes and optimizer steps, and the sizes of the
 * parameters (a set of half sizes, the vocabulary). The pass itself is replay.c. */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "symbolize.h"
#include "replay_phase.h"

/* replay_phase_half_add / replay_phase_half_has: a small open-addressing set of sizes
 * (0 = empty). */
void replay_phase_half_add(state *s, uint64_t v)
{
    if (!v)
        return;
    if ((s->nhalf + 1) * 2 >= s->caphalf) {
        size_t ncap = s->caphalf ? s->caphalf * 2 : 256;
        uint64_t *n = calloc(ncap, sizeof *n);
        if (!n)
            return;
        for (size_t i = 0; i < s->caphalf; i++) {
            if (!s->half[i])
                continue;
            size_t j = (size_t)(livemap_mix(s->half[i], 0) & (ncap - 1));
            while (n[j])
                j = (j + 1) & (ncap - 1);
            n[j] = s->half[i];
        }
        free(s->half);
        s->half = n;
        s->caphalf = ncap;
    }
    size_t j = (size_t)(livemap_mix(v, 0) & (s->caphalf - 1));
    while (s->half[j] && s->half[j] != v)
        j = (j + 1) & (s->caphalf - 1);
    if (!s->half[j]) {
        s->half[j] = v;
        s->nhalf++;
        replay_cats_keys_changed(s); /* a waiting allocation's size may be a parameter's now */
        s->sizes_gen++;
    }
}

int replay_phase_half_has(const state *s, uint64_t v)
{
    if (!s->caphalf || !v)
        return 0;
    for (size_t j = (size_t)(livemap_mix(v, 0) & (s->caphalf - 1)); s->half[j];
         j = (j + 1) & (s->caphalf - 1))
        if (s->half[j] == v)
            return 1;
    return 0;
}

/* raw_facts: the facts of stack id from its recorded frames, each looked up on its own (no
 * resolved copy of the stack, no line numbers: phases need neither); a native frame whose symbol
 * has no name yet may get one from its module's file when the stack is resolved (unless that file
 * was found unusable already): such a stack is resolved as the report will (tables_resolve_stack
 * symbolizes), for the same facts. */
static stack_facts raw_facts(state *s, uint32_t id)
{
    static const stack_facts none = {PHASE_OTHER, 0, 0, 0, 0, 0, 0};
    const tables_stack *st = tables_stack_get(s->r->t, id);
    if (!st)
        return none;
    /* the result's memo, not one of the pass's own: it outlives the replay, and the report's
     * site of each stack (replay_sites.c) then reads the bits of the code objects found here */
    phases_memo *memo = &s->r->site_memo;
    phases_acc a = PHASES_ACC_INIT;
    size_t nsyms = tables_n_symbols(s->r->t);
    /* (the frames seen before, whose symbols are what they were, passed in one call) */
    for (size_t i = phases_acc_natives(&a, st->frames, 0, st->n_native, memo, nsyms);
         i < st->n_native;
         i = phases_acc_natives(&a, st->frames, i + 1, st->n_native, memo, nsyms)) {
        const tables_symbol *sym = tables_symbol_get(s->r->t, st->frames[i]);
        if (sym && !sym->name.len && !sym->symbolized && sym->module_id &&
            tables_module_names(s->r->t, sym->module_id) >= SYMBOLIZE_OK) {
            size_t n = 0;
            const tables_frame *fr = tables_resolve_stack(s->r->t, id, &n);
            if (!fr)
                return none;
            phases_acc r = PHASES_ACC_INIT;
            for (size_t k = 0; k < n; k++)
                phases_acc_frame(&r, &fr[k], memo);
            if (evalsrc_frames(&s->r->eval_src, s->r->t, fr, n))
                phases_acc_mark_eval(&r);
            if (evalsrc_data_frames(&s->r->eval_src, s->r->t, fr, n, phases_acc_filled(&r)))
                phases_acc_mark_data(&r);
            if (evalsrc_opt_frames(&s->r->eval_src, s->r->t, fr, n, phases_acc_lead(&r)))
                phases_acc_mark_opt(&r); /* (the program's own optimizer class: optsrc.h) */
            if (evalsrc_optim_ctor_frames(&s->r->eval_src, s->r->t, fr, n))
                phases_acc_mark_optim_ctor(&r);
            return phases_acc_end(&r);
        }
        /* kept: a symbol that is named, symbolized, in no module or in one whose file failed
         * stays as it is; no symbol (which says nothing), until one comes */
        uint32_t b = sym ? phases_acc_symbol(&a, s->r->t, st->frames[i], sym, memo) : 0;
        if (nsyms < UINT32_MAX - 1)
            phases_memo_keep_ip(memo, st->frames[i], b, sym ? 0 : (uint32_t)nsyms + 1);
    }
    phases_acc_codes(&a, s->r->t, st->frames + st->n_native, st->n_python, memo);
    /* a line of an evaluation written inline in the training loop (model.eval(); with
     * torch.no_grad(): inside main): the evaluation's, as under a function named evaluate (its
     * out-of-memory error had been the training micro-batch's) */
    if (evalsrc_stack(&s->r->eval_src, s->r->t, st))
        phases_acc_mark_eval(&a);
    int lead = phases_acc_filled(&a); /* (data kept on the device: datasrc.h) */
    if (lead >= 0 && lead < st->n_python &&
        evalsrc_data_at(&s->r->eval_src, s->r->t, st->frames[st->n_native + lead]))
        phases_acc_mark_data(&a);
    if ((lead = phases_acc_lead(&a)) >= 0 && lead < st->n_python && /* (optsrc.h) */
        evalsrc_opt_at(&s->r->eval_src, s->r->t, st->frames[st->n_native + lead]))
        phases_acc_mark_opt(&a);
    if (evalsrc_optim_ctor(&s->r->eval_src, s->r->t, st)) /* (Python 3.10: no class named) */
        phases_acc_mark_optim_ctor(&a);
    return phases_acc_end(&a);
}

const struct stack_fx *replay_facts_slow(state *s, uint32_t id)
{
    static const struct stack_fx none = {{PHASE_OTHER, 0, 0, 0, 0, 0, 0}, 0};
    if (id >= s->nfacts) {
        /* ids come from the trace: a corrupt one must not size the cache (nor loop on it) */
        if (id >= (1u << 24) || !tables_stack_get(s->r->t, id))
            return &none;
        uint32_t n = s->nfacts ? s->nfacts : 1024;
        while (n <= id)
            n *= 2;
        struct stack_fx *f = realloc(s->facts, n * sizeof *f);
        if (!f)
            return &none;
        for (uint32_t i = s->nfacts; i < n; i++)
            f[i].f.phase = 255;
        s->facts = f;
        s->nfacts = n;
    }
    struct stack_fx *x = &s->facts[id];
    x->f = raw_facts(s, id);
    x->iter0 = (uint8_t)(s->iter < 255 ? s->iter : 255); /* (oomstep.c) */
    s->r->op_frames |= x->f.op;
    if (x->f.kv && !s->kv_on) { /* the KV cache's tensors counted apart from here on */
        s->kv_on = 1;
        s->r->tensors_no_kv_peak = s->r->peak_allocated, s->r->t_tensors_no_kv = s->r->t_allocated;
    }
    x->ef = (uint8_t)((x->f.loss ? EF_LOSS : 0) | (x->f.to_copy ? EF_TO_COPY : 0) |
                      (x->f.workspace ? EF_WORKSPACE : 0) |
                      (x->f.attention || x->f.opt_copy ? EF_ATTENTION : 0) | /* (classify.c) */
                      (x->f.input ? EF_INPUT : 0) | (x->f.cast ? EF_CAST : 0));
    /* the program's own cast whose line first ran after the run's first forward began, before
     * its first backward or step: of what the forward made (its output, for the loss), where a
     * batch's cast comes before the forward (made as init's then); after its first backward
     * began, before its first step: of what the backward made (master gradients) */
    if (x->f.cast && s->seen_forward && !s->bwd && !s->iter)
        x->ef |= EF_CAST_OUT;
    else if (x->f.cast && s->bwd && !s->iter)
        x->ef |= EF_CAST_GRAD;
    return x;
}

uint8_t replay_phase_init_input(const state *s, uint8_t ef, uint64_t size)
{
    int master = (ef & EF_CAST) == EF_CAST && !(size & 3) && replay_phase_half_has(s, size / 4);
    /* (nor cuBLAS's workspace, made at a matmul no module's forward frame shows: OpenAI ES's
     * policy(theta, x), its 32 MiB had been "parameters") */
    if ((ef & (EF_WORKSPACE | EF_INPUT)) == EF_WORKSPACE)
        return 0;
    return master ? 0 : EF_INPUT;
}

void replay_phase_vocab(state *s)
{
    s->news |= s->vocab_done ? 0 : REPLAY_NEWS_VOCAB;
    s->vocab_done = 1;
    s->vocab = classify_vocab(s->init_sizes, s->ninit);
    s->r->vocab = s->vocab;
    s->sizes_gen++;
}

void replay_phase_init_made(state *s, livemap_entry *e, uint32_t stack)
{
    if (stack && facts_of(s, stack)->f.opt_init) { /* (its state: no weight) */
        e->phase = PHASE_OPTIMIZER;
        s->r->optim_ctor_bytes += e->size;
        return;
    }
    replay_phase_half_add(s, e->size / 2); /* a parameter: its 16-bit copy is half as big */
    replay_phase_note_init(s, e->size);
}

void replay_phase_note_init(state *s, uint64_t size)
{
    if (s->ninit == s->capinit) {
        size_t n = s->capinit ? s->capinit * 2 : 256;
        if (n > (1u << 20))
            return;
        uint64_t *p = realloc(s->init_sizes, n * sizeof *p);
        if (!p)
            return;
        s->init_sizes = p;
        s->capinit = n;
    }
    s->init_sizes[s->ninit++] = size;
}

int replay_phase_step(state *s)
{
    uint32_t d = s->bwd - s->bwd_at_step;
    int cut = s->step_cut;
    s->in_opt = 1;
    /* no backward since the last step, in a trace that shows them: the same step still, not a
     * new one (Lightning's closure frees the gradients before its forward, after the step) */
    if (!d && s->bwd && !cut)
        return 0;
    s->iter++;
    s->news |= REPLAY_NEWS_ITER;
    s->bwd_at_step = s->bwd;
    if (s->step_event && !cut && s->event - s->step_event > s->step_events_max)
        s->step_events_max = s->event - s->step_event;
    s->step_event = s->event;
    s->step_cut = 0;
    if (cut) /* (its backward passes, or its step, in a bounded trace's gap: no count of A) */
        return 1;
    if (!d || (s->accum_steps && d != s->accum))
        s->accum_mixed = 1; /* a step with no backward, or another count: no single A */
    s->accum = d;
    s->accum_steps++;
    return 1;
}

/* free_steps_first: a step came that was not made by a gradient's free (it began with an
 * allocation under an optimizer's frames), the first; the last_free_iter steps before it were
 * made by frees alone, which may have been passes of it (replay.h). Told here, at the next free's
 * step or the trace's end, not on the optimizer's own allocations (none of their work per event).
 */
static void free_steps_first(state *s)
{
    s->opt_stepped = 1;
    s->r->free_steps_first = s->last_free_iter;
    s->accum_mixed |= s->last_free_iter > 0; /* (which passes made a step: no A) */
}

void replay_phase_grad_step(state *s)
{
    replay_result *r = s->r;
    uint32_t iter0 = s->iter;
    int growth_state = r->growth.state, mixed = s->accum_mixed;
    if (!replay_phase_step(s))
        return;
    if (!s->opt_stepped && iter0 != s->last_free_iter) /* (a step since the last: not a free's) */
        free_steps_first(s);
    s->last_free_iter = s->iter;
    if (!iter0) /* remembered, should nothing follow it (the optimizer phase's peak: set next) */
        s->first_step.event = s->event, s->first_step.opt_peak = r->phase_peak[PHASE_OPTIMIZER],
        s->first_step.opt_peak_event = r->phase_peak_event[PHASE_OPTIMIZER],
        s->first_step.growth_state = growth_state, s->first_step.accum_mixed = mixed,
        s->first_step.allocated = s->last_alloc_phase != PHASE_BACKWARD;
    /* with no stacks, what came since the backward waited (growth_prov_begin): the step's own
     * now, its process peak the optimizer phase's (its row had been missing: "1 optimizer step"
     * with no optimizer in the peaks by phase) */
    if (r->growth.prov.on && r->growth.peak_device > r->phase_peak[PHASE_OPTIMIZER])
        r->phase_peak[PHASE_OPTIMIZER] = r->growth.peak_device,
        r->phase_peak_event[PHASE_OPTIMIZER] = 0;
    replay_cats_changed(s);
    growth_optimizer_step(&r->growth);
}

/* replay_phase_teardown: the run's first step, made by a gradient's free alone, with nothing
 * allocated between its backward and it nor after it: no step (a run that ended before its first
 * optimizer step had been told "1 optimizer step" and "plain SGD": its gradients freed as it
 * exited), nor was that free a program's (every gradient's free was the exit's). A step that
 * allocated (a stateful optimizer's first, under Python frames or not) or one the run went on
 * from stays; a one-step run of an optimizer with no state (plain SGD) whose zero_grad comes
 * before its backward is taken for an exit too. */
void replay_phase_teardown(state *s)
{
    replay_result *r = s->r;
    if (!s->opt_stepped && s->iter != s->last_free_iter) /* (the last steps: not frees') */
        free_steps_first(s);
    if (!s->first_step.event || s->iter != 1 || s->first_step.allocated ||
        s->last_alloc_event > s->first_step.event)
        return;
    s->iter = 0;
    s->grad_free_event = 0;
    s->accum = s->accum_steps = 0;
    s->accum_mixed = s->first_step.accum_mixed;
    r->phase_peak[PHASE_OPTIMIZER] = s->first_step.opt_peak;
    r->phase_peak_event[PHASE_OPTIMIZER] = s->first_step.opt_peak_event;
    if (!r->growth.from_records)
        r->growth.state = s->first_step.growth_state, r->growth.opt_since = 0;
}

/* a tensor made within this many events of its free: a forward's temporary, where a cast of the
 * weights on the device (model.cuda().half()) frees weights made long before */
#define STACKLESS_YOUNG 32

void replay_phase_init_freed(state *s, const livemap_entry *e)
{
    if ((e->level == L_TENSOR || e->level == L_INNER) &&
        e->alloc_event + STACKLESS_YOUNG >= s->event)
        s->pyless_fwd = 1;
}

void replay_timeline_free(state *s, const reader_event *ev, uint8_t ph)
{
    /* the run's first step made by a gradient's free alone, no allocation after it yet: its tick
     * comes with the next event after an allocation (late by the zero_grad's length), its frees
     * drawn as "other" (replay_phase_teardown: the program's exit otherwise, no step; it had
     * been drawn as one, its exit's frees as an optimizer stretch) */
    int unsure = s->first_step.event && !s->first_step.allocated && s->iter == 1 &&
                 s->last_alloc_event < s->first_step.event;
    int step = ph == PHASE_OTHER && s->in_opt && s->grad_free_event == s->event && !unsure;
    timeline_event(s->r->tl, ev, 0, step ? PHASE_OPTIMIZER : ph, s->iter - (uint32_t)unsure);
}

/* replay_phase_of_stack: the phase a stack's frames say (growth.c's callback; s is the state) */
int replay_phase_of_stack(void *s, uint32_t id)
{
    return facts_of((state *)s, id)->f.phase;
}

int replay_phase_made(state *s, uint32_t id)
{
    if (!id)
        return INFER_MADE_UNKNOWN;
    const struct stack_fx *f = facts_of(s, id);
    int fwd = f->f.phase == PHASE_FORWARD || f->f.phase == PHASE_EVAL ||
              f->f.phase == PHASE_COMPILE; /* (an evaluation's forward is a forward) */
    return (!f->f.has_python ? INFER_MADE_UNKNOWN
            : fwd            ? INFER_MADE_FORWARD
                             : INFER_MADE_ELSEWHERE) |
           (f->f.fused_attention ? INFER_MADE_ATTENTION : 0) |
           (f->f.dropout ? INFER_MADE_DROPOUT : 0) | (f->f.to_copy ? INFER_MADE_CAST : 0) |
           (f->f.input ? INFER_MADE_INPUT : 0) | (f->f.phase == PHASE_INIT ? INFER_MADE_INIT : 0) |
           (f->f.workspace ? INFER_MADE_WORKSPACE : 0) |
           (f->f.phase == PHASE_EVAL ? INFER_MADE_EVAL : 0) | (f->f.data ? INFER_MADE_DATA : 0) |
           (f->f.opt_init ? INFER_MADE_OPTIM : 0) | (f->f.softmax ? INFER_MADE_SOFTMAX : 0);
}
