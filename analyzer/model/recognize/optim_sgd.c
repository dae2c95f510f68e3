/* optim_sgd.c — what a script's torch.optim.SGD call says of its momentum (none: no state), and
 * whether a run's optimizer steps may have run unseen (recognize.h). */
#include <stdio.h>
#include <stdlib.h>

#include "pyexpr.h"
#include "recognize.h"
#include "trainargs.h"

int optim_steps_unseen(const run_recognition *r)
{
    if (!r->steps_may_hide)
        return 0;
    if (!r->python_frames) /* (a step's allocations are not told from the others) */
        return 1;
    unsigned bare = 1u << OPT_NONE | 1u << OPT_SGD; /* kinds whose step may make nothing */
    if (r->optim == OPT_UNKNOWN && r->optim_kinds)  /* (the script's several kinds) */
        return (r->optim_kinds & bare) != 0;
    return r->optim == OPT_UNKNOWN || ((bare >> r->optim) & 1u);
}

int optim_sgd_bare(const char *s, size_t len, size_t open)
{
    targs_call *c = malloc(sizeof *c);
    if (!c || !trainargs_call(s, len, open, c)) {
        free(c);
        return 0;
    }
    /* SGD(params, lr, momentum, dampening, weight_decay, ...): weight_decay= or its fifth */
    const targs_kw *kw = trainargs_find(c, "weight_decay");
    const char *v = kw ? (kw->too_long ? "" : kw->value) : c->npos >= 5 ? c->pos[4] : NULL;
    pyval p = v ? pyexpr_eval(v, NULL, NULL) : (pyval){0};
    int bare = !c->starred && (!v || (pyexpr_numeric(p) && pyexpr_num(p) == 0.0));
    free(c);
    return bare;
}

int optim_sgd_momentum(const char *s, size_t len, size_t open, char *said, size_t n)
{
    targs_call *c = malloc(sizeof *c);
    int on = -1;
    said[0] = '\0';
    if (!c || !trainargs_call(s, len, open, c)) {
        free(c);
        return -1;
    }
    /* SGD(params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False, ...) */
    const targs_kw *kw = trainargs_find(c, "momentum");
    const char *v = kw ? (kw->too_long ? "" : kw->value) : c->npos >= 3 ? c->pos[2] : NULL;
    if (!v) {
        on = c->starred ? -1 : 0;
        snprintf(said, n, "%s",
                 c->starred ? "momentum not given, but unpacked arguments may give it"
                            : "momentum not given: torch's default 0");
    } else {
        pyval p = pyexpr_eval(v, NULL, NULL);
        on = pyexpr_numeric(p) ? pyexpr_num(p) != 0.0 : -1;
        snprintf(said, n, kw ? "momentum=%.40s" : "momentum %.40s (its third argument)", v);
    }
    free(c);
    return on;
}
