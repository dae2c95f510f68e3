/* phases_optim.c — which Python frames are an optimizer's constructor (phases_bits.h): a program's
 * own optimizer class named as one, whose state made in __init__ is its state, as
 * torch.optim.Adagrad's sums are (phases.c's optimizer frames: its code). */
#include "phases_bits.h"

#include <string.h>

int phases_optim_ctor(const char *q)
{
    static const char *const names[] = {"Adagrad",    "Adam", "AdamW",   "Adamax",   "NAdam",
                                        "RAdam",      "SGD",  "RMSprop", "Adadelta", "Rprop",
                                        "ASGD",       "Lion", "Lamb",    "LAMB",     "Adafactor",
                                        "SparseAdam", NULL};
    const char *init = strstr(q, ".__init__");
    if (!init || (init[9] && init[9] != '.'))
        return 0;
    const char *c = init;
    while (c > q && c[-1] != '.')
        c--;
    size_t n = (size_t)(init - c);
    for (size_t i = 0; names[i]; i++)
        if (strlen(names[i]) == n && !memcmp(c, names[i], n))
            return 1;
    return n > 9 && !memcmp(init - 9, "Optimizer", 9);
}
