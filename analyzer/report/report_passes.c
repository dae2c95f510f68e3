/* report_passes.c — an out-of-memory error after the backward passes of one forward (a
 * multi-task step's per-task passes: replay.h free_steps_shared), in code outside a forward: how
 * many passes, and the bytes live at the failure that the step made after its first pass outside
 * the backward (PCGrad's flat copy of every gradient per task and their projected clones), which
 * grow with the passes, not the micro-batch. */
#include "report.h"

void report_oom_passes(const replay_result *r, run_facts *f)
{
    f->oom_passes = 0, f->oom_passes_bytes = 0;
    if (!r->has_oom || !r->free_steps_shared || !r->tensor_mode || r->oom_went_on ||
        r->oom_fwd_bwd + 1 >= r->oom_bwd || r->oom_phase != PHASE_FORWARD)
        return;
    f->oom_passes = (int)(r->oom_bwd - r->oom_fwd_bwd);
    for (size_t i = 0; i < r->at_oom.n; i++) {
        const live_item *it = &r->at_oom.items[i];
        if ((it->category == CAT_ACTIVATIONS || it->category == CAT_TEMPORARIES ||
             it->category == CAT_LOGITS) &&
            it->bwd_alloc > r->oom_fwd_bwd && it->phase_alloc != PHASE_BACKWARD)
            f->oom_passes_bytes += it->size;
    }
}
