/* report_pass.c — a no-grad pass whose outputs the step uses (a PPO loop's rollout under
 * model.eval() and no_grad, its updates after it: evalsrc.h's 2) in a run's facts (report.h
 * report_step_pass). Such a pass is the eval phase's and no evaluation, and no training forward:
 * its peak and its own batch flag are said as its own. */
#include "report.h"

#include "evalsrc.h"

void report_step_pass(report_ctx *c, replay_result *r)
{
    run_facts *f = &c->facts;
    /* the tensors' peak made by such a pass (the allocation that made it): a PPO loop's peak,
     * its rollout's old-log-prob pass, had been "in the forward", then "in the eval" */
    const live_item *last = NULL;
    for (size_t i = 0; r->tensor_mode && r->tensors_phase == PHASE_EVAL && i < r->at_tensors.n; i++)
        if (!last || r->at_tensors.items[i].alloc_event > last->alloc_event)
            last = &r->at_tensors.items[i];
    const tables_stack *st = last ? tables_stack_get(r->t, last->stack_id) : NULL;
    f->peak_step_pass = st && evalsrc_stack(&r->eval_src, r->t, st) == 2;
    f->step_pass_batch = evalsrc_pass_flag(&r->eval_src, r->t, f->argc, f->argv, f->step_pass_flag,
                                           sizeof f->step_pass_flag);
}
