/* optim_ctor.c — an optimizer that makes its state at its construction (torch.optim.Adagrad's
 * sums, a program's own Adam's moments: phases.h stack_facts.opt_init): its state is measured
 * before any step ran (it had been "no step ran: its state not measured", the sums counted as
 * parameters). Interface: recognize.h. */
#include <stdio.h>
#include <string.h>

#include "recognize.h"

void optim_ctor_said(const recognize_input *in, run_recognition *r)
{
    if (!r->optim_ctor || in->iterations > 0)
        return;
    if (!r->trainable) { /* (no gradient: which parameters train is not known) */
        r->optim_unmeasured = "made at its construction, its state is the optimizer row; no "
                              "gradient was made to count the trainable parameters, so per "
                              "parameter";
        return;
    }
    if (r->optim_bpp < 0)
        return;
    size_t w = strlen(r->optim_where);
    snprintf(r->optim_where + w, sizeof r->optim_where - w,
             "; made at the optimizer's construction, before any step%s",
             r->trainable_lower ? " (at most that per parameter: the backward the out-of-memory "
                                  "error cut short did not reach every weight)"
                                : "");
}
