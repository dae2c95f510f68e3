/* oomstep.c — whether the run's out-of-memory error came in a step of a kind no earlier step ran
 * (replay_oom_new_step, replay_oom.h): from the snapshot at the failure and the steps begun when
 * each stack was first met (replay_state.h's stack_fx.iter0, set once per stack id). */
#include "replay_state.h"

int replay_oom_new_step(const state *s, const replay_result *r)
{
    /* after a step (before it every stack is new), while the count still tells (255: saturated),
     * in a forward or a backward (where a step's activations are alive) */
    /* (not after an error the program caught: its retry runs the step's code from the handler's
     * lines, new stacks of the same step: oom_retry.py's B = 9 after 14 had been told "at most
     * 10, the what-ifs lower bounds") */
    if (!r->has_oom || r->oom_caught || !r->oom_iter || r->oom_iter >= 255 || !s->facts ||
        (r->oom_phase != PHASE_FORWARD && r->oom_phase != PHASE_BACKWARD))
        return 0;
    /* the tensors kept for a backward the step cut short had made (since its last step began) and
     * those of them at stacks first met since: a WGAN's generator step, out of memory after five
     * critic steps, made all of its 9.45 GiB at the lines of its own forward (the critic's steps
     * had run the generator under no_grad, from another line); a loop's later step repeats the
     * first's */
    uint64_t made = 0, fresh = 0;
    for (size_t i = 0; i < r->at_oom.n; i++) {
        const live_item *it = &r->at_oom.items[i];
        int batch = it->category == CAT_ACTIVATIONS || it->category == CAT_LOGITS ||
                    it->category == CAT_ATTENTION; /* (what a forward keeps for its backward) */
        if (!batch || it->iter_alloc != r->oom_iter)
            continue;
        made += it->size;
        if (it->stack_id < s->nfacts && s->facts[it->stack_id].f.phase != 255 &&
            s->facts[it->stack_id].iter0 == r->oom_iter)
            fresh += it->size;
    }
    return made && fresh > made / 2;
}
