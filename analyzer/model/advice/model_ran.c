/* model_ran.c — the run's own micro-batch beside a largest micro-batch of none (model.h
 * largest_ran): a run that ran its steps on the card is not told that not even 1 fits. */
#include "model.h"

/* model_largest_ran (model.h): where no micro-batch keeps the headroom (largest_batch 0, predicted)
 * yet this run ran its own whole on the card: optimizer steps, no out-of-memory error (none it
 * went on from either), its process peak within the card the advice is for. A QLoRA at batch 1,
 * 5.71 GiB of a 6 GiB card, had been told "largest micro-batch that fits: none, not even 1". */
void model_largest_ran(model_result *m, const run_facts *f)
{
    m->largest_ran = m->largest_ran_peak = 0;
    if (m->largest_batch || m->largest_unpredicted || !m->capacity || f->has_oom ||
        f->oom_recovered || f->iterations <= 0 || !f->peak_process ||
        f->peak_process > m->capacity || !config_known(&m->cfg, CFG_batch_size) ||
        m->cfg.v[CFG_batch_size].i <= 0)
        return;
    m->largest_ran = (uint64_t)m->cfg.v[CFG_batch_size].i;
    m->largest_ran_peak = f->peak_process;
}
