/* report_pass.c — a no-grad pass whose outputs the step uses (a PPO loop's rollout under
 * model.eval() and no_grad, its updates after it: evalsrc.h's 2) in a run's facts (report.h
 * report_step_pass). Such a pass is the eval phase's and no evaluation, and no training forward:
 * its peak, its own batch flag, and the tokens it read are said as its own. */
#include "report.h"

#include <stdio.h>
#include <string.h>

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
    /* the token batch the trace's inference read is such a pass's (its first forward, before
     * the updates'): a fused attention kernel keeps log-sum-exp rows for a backward, so the rows
     * it divided are a training forward's, over other tokens (a rollout of 4 x the updates'
     * sequences had said H = 4 of a 16-head decoder's, "B·T = 4096 tokens"): H not read */
    infer_result *ir = f->inferred ? &c->inferred : NULL;
    int pass = 0; /* (the batch made before the block, its lookup in it: a rollout's prompts) */
    for (int k = 0; ir && ir->tokens_eval && k < 2 && pass != 2; k++) {
        uint32_t id = k ? ir->tokens_lookup_stack : ir->tokens_stack;
        st = id ? tables_stack_get(r->t, id) : NULL;
        pass = st ? evalsrc_stack(&r->eval_src, r->t, st) : 0;
    }
    /* none read (a rollout makes its sequences in its block: a forward's tensors, no batch):
     * the pass before the training forward read alone, if such a pass (its last tensor's) */
    if (ir && !ir->v[INFER_tokens].known && ir->train_tokens.known && ir->train_after_stack &&
        (st = tables_stack_get(r->t, ir->train_after_stack)) != NULL)
        pass = evalsrc_stack(&r->eval_src, r->t, st);
    if (pass == 2 && ir->train_tokens.known) {
        /* the training forward after it, read alone (infer.h train_tokens): its B·T, and the
         * heads its rows give over them (a PPO loop's rollout had left B·T "in an evaluation's
         * forward" and H not known; its updates' forward slices the rollout's batch) */
        ir->v[INFER_tokens] = ir->train_tokens;
        ir->v[INFER_n_head] = ir->train_heads;
        ir->v[INFER_attention_kernels] = ir->train_kernels;
        ir->tokens_eval = 0, ir->tokens_stack = ir->tokens_lookup_stack = 0;
    } else if (pass == 2) {
        /* (its words: the pass it is, which infer_tokens.c took for an evaluation) */
        char *w = strstr(ir->v[INFER_tokens].where, INFER_TOKENS_EVAL_SAID);
        if (w)
            snprintf(w, sizeof ir->v[INFER_tokens].where - (size_t)(w - ir->v[INFER_tokens].where),
                     ", in a no-grad pass whose outputs the step uses (a rollout's forward, "
                     "not an evaluation's)");
        memset(&ir->v[INFER_n_head], 0, sizeof ir->v[INFER_n_head]);
        memset(&ir->v[INFER_attention_kernels], 0, sizeof ir->v[INFER_attention_kernels]);
    }
}
