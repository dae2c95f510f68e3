/* report_data.c — the program's data kept on the device among the inputs of each snapshot the
 * model reads (stack_facts.data: storage filled before training where no weight is made, a replay
 * buffer), and whether the failing call made such data: what no micro-batch sizes. */
#include "report.h"

#include "evalsrc.h"

/* data_in: the bytes of inputs made before training by a call that made data, in snapshot s */
static uint64_t data_in(replay_result *r, const replay_snapshot *s)
{
    uint64_t b = 0;
    for (size_t i = 0; i < s->n; i++) {
        const live_item *it = &s->items[i];
        if (it->category == CAT_INPUTS && it->phase_alloc == PHASE_INIT &&
            evalsrc_data_made(&r->eval_src, r->t, it->stack_id))
            b += it->size;
    }
    return b;
}

/* own_input: stack stack_id drew or copied values on the program's own line (phases.h) */
static int own_input(replay_result *r, uint32_t stack_id)
{
    size_t n = 0;
    const tables_frame *fr = stack_id ? tables_resolve_stack(r->t, stack_id, &n) : NULL;
    return fr && phases_own_draw(fr, n);
}

void report_data(replay_result *r, run_facts *f)
{
    f->data_at_peak = data_in(r, &r->at_peak);
    f->data_at_tensors = f->has_at_tensors ? data_in(r, &r->at_tensors) : 0;
    f->data_at_oom = r->has_oom ? data_in(r, &r->at_oom) : 0;
    f->oom_data = r->has_oom && r->oom_stack && r->oom_phase == PHASE_INIT &&
                  evalsrc_data_made(&r->eval_src, r->t, r->oom_stack);
    f->oom_own = r->has_oom && r->oom_stack && r->oom_phase == PHASE_INIT && !f->oom_data &&
                 own_input(r, r->oom_stack);
    f->oom_data_names[0] = '\0';
    if (f->oom_data)
        evalsrc_data_reaching(&r->eval_src, r->t, r->oom_stack, f->oom_data_names,
                              sizeof f->oom_data_names);
}
