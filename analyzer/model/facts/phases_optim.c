/* phases_optim.c — which Python frames are an optimizer's constructor (phases_bits.h): a program's
 * own optimizer class named as one, whose state made in __init__ is its state, as
 * torch.optim.Adagrad's sums are (phases.c's optimizer frames: its code). */
#include "phases.h"
#include "phases_bits.h"

#include <string.h>

int phases_optim_name(const char *s, size_t n)
{
    static const char *const names[] = {"Adagrad",    "Adam", "AdamW",   "Adamax",   "NAdam",
                                        "RAdam",      "SGD",  "RMSprop", "Adadelta", "Rprop",
                                        "ASGD",       "Lion", "Lamb",    "LAMB",     "Adafactor",
                                        "SparseAdam", NULL};
    for (size_t i = 0; names[i]; i++)
        if (strlen(names[i]) == n && !memcmp(s, names[i], n))
            return 1;
    return n > 9 && !memcmp(s + n - 9, "Optimizer", 9);
}

int phases_optim_ctor(const char *q)
{
    const char *init = strstr(q, ".__init__");
    if (!init || (init[9] && init[9] != '.'))
        return 0;
    const char *c = init;
    while (c > q && c[-1] != '.')
        c--;
    return phases_optim_name(c, (size_t)(init - c));
}

void phases_acc_mark_optim_ctor(phases_acc *a)
{
    a->py_any |= FB_OPT | FB_INIT;
    a->any |= FB_OPT | FB_INIT;
    if (!a->opt_frame)
        a->opt_frame = 1, a->opt_init = 1;
}
