/* optim_state.c — the optimizer's kind from its measured state (recognize.h): its bytes per
 * trainable parameter (optim_by_state), and where those leave two readings, how its tensors lie
 * beside the weights (optim_layout_said: state_layout.h). */
#include <stdio.h>
#include <string.h>

#include "recognize.h"

/* optim_by_state: the kind a measured state of bpp bytes per trainable parameter is (kernels: the
 * model's weights are convolutions'). */
optim_kind optim_by_state(double bpp, optim_kind named, int kernels)
{
    /* factored second moments of a d×d weight are 2d floats: 8/d B per parameter (0.01 at
     * d = 768), so Adafactor's state on the stacks is factored however small it is; of a
     * convolution's kernels up to 2 floats per weight (optim_factored_kernels: ResNet-50's 4.99 B
     * per parameter had been "a state of its own size") */
    if (named == OPT_FACTORED && bpp > 0 && (bpp < 1.0 || (kernels && bpp <= 8.0)))
        return OPT_FACTORED;
    if (bpp < 0.05)
        return OPT_NONE;
    if (bpp >= 7.0 && bpp <= 9.0)
        return OPT_ADAM;
    /* one state's 4 B: SGD's momentum where SGD's code ran, else one of no known name (a
     * program's own Lion had been "SGD with momentum") */
    if (bpp >= 3.5 && bpp <= 4.5)
        return named == OPT_ONE_STATE || named == OPT_UNKNOWN ? OPT_ONE_STATE
               : named == OPT_MOMENTUM                        ? OPT_MOMENTUM
                                                              : OPT_OTHER;
    if (bpp >= 1.5 && bpp <= 2.6 && named == OPT_EIGHT_BIT)
        return OPT_EIGHT_BIT;
    if (bpp < 1.0 && (named == OPT_FACTORED || named == OPT_UNKNOWN))
        return OPT_FACTORED;
    return OPT_OTHER;
}

void optim_layout_said(const recognize_input *in, run_recognition *out, unsigned e)
{
    const state_layout *l = &in->layout;
    double bpp = out->optim_bpp; /* (bytes per parameter, whatever the weights' dtype) */
    if (bpp < 1.5 || bpp > 2.6 || out->optim_own || in->passes_shared ||
        (out->optim != OPT_ONE_STATE && out->optim != OPT_OTHER && out->optim != OPT_EIGHT_BIT))
        return;
    size_t w = strlen(out->optim_where);
    char *at = out->optim_where + w;
    size_t room = sizeof out->optim_where - w;
    if (state_layout_8bit(l)) {
        /* two 8-bit states and their per-block scales (bitsandbytes' Adam8bit, or a program's
         * own written the same way: it had been "one state ... in the parameters' 16 bits") */
        out->optim = OPT_EIGHT_BIT;
        snprintf(
            at, room,
            "; its tensors: two of one byte per element of each weight they step (%.2f MiB "
            "in %u) and %u smaller ones beside them (%.2f MiB, per-block scales among them): two "
            "8-bit states",
            (double)l->pairs / 1048576.0, (unsigned)l->npairs, (unsigned)l->nscales,
            (double)l->scales / 1048576.0);
    } else if (out->optim == OPT_ONE_STATE && e == 2 && !state_layout_one(l)) {
        /* 2 B of state per 16-bit parameter is one state in their 16 bits or two 8-bit ones:
         * which, the tensors do not show here */
        out->optim = OPT_OTHER;
        snprintf(at, room,
                 "; one 16-bit state per parameter or two 8-bit ones (an 8-bit Adam's), "
                 "not told (%s)",
                 !l->state ? "no tensor of the state was read"
                 : l->same >= l->state / 10 * 9
                     ? "one tensor of each weight's bytes, with smaller ones beside them"
                     : "no tensor of a weight's bytes, nor two of one byte per element");
    }
}
