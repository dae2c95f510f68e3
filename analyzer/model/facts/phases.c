/* phases.c — which training phase an allocation belongs to, from its frames (Python
 * qualnames and files first, then native symbols), and the site a report names for it. */
#include "phases.h"

#include <string.h>

static const char *const g_phase_names[] = {
#define VT_PHASE_NAME(e, name, doc) name,
    VT_PHASES(VT_PHASE_NAME)
#undef VT_PHASE_NAME
};

const char *phase_name(int p)
{
    return p >= 0 && p < PHASE_COUNT ? g_phase_names[p] : "?";
}

/* last_component: "GPT.forward" -> "forward"; "<lambda>" stays. */
static const char *last_component(const char *q)
{
    const char *d = strrchr(q, '.');
    return d ? d + 1 : q;
}

static int in(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

static int library_file(const char *file)
{
    return strstr(file, "/torch/") || strstr(file, "site-packages") || strstr(file, "/simtorch/") ||
           strstr(file, "dist-packages") || file[0] == '<';
}

stack_facts phases_of_stack(const tables_frame *f, size_t n)
{
    static const char *const loss_fns[] = {"cross_entropy", "log_softmax",           "_log_softmax",
                                           "nll_loss",      "softmax_cross_entropy", NULL};
    static const char *const eval_fns[] = {"estimate_loss", "evaluate", "eval_step", "validate",
                                           NULL};
    static const char *const data_fns[] = {"get_batch", "__next__", "_next_data", NULL};
    static const char *const fwd_fns[] = {"forward", "_call_impl", "_wrapped_call_impl", NULL};
    static const char *const bwd_fns[] = {"backward", "_make_grads", "_engine_run_backward", NULL};
    static const char *const init_fns[] = {"__init__",  "to",      "_apply",   "cuda",
                                           "to_device", "convert", "_to_copy", NULL};
    int bwd = 0, opt = 0, ev = 0, data = 0, comp = 0, fwd = 0, init = 0, run = 0, gs = 0,
        gs_scale = 0;
    stack_facts r = {PHASE_OTHER, 0, 0, 0, 0, 0, 0};
    int first_py_user = -1, rand_op = 0; /* innermost Python frame: the program's own (1) or not */
    for (size_t i = 0; i < n; i++) {
        const char *fn = f[i].function ? f[i].function : "";
        const char *file = f[i].file ? f[i].file : "";
        if (f[i].kind == TABLES_FRAME_PYTHON) {
            r.has_python = 1;
            if (first_py_user < 0)
                first_py_user = !library_file(file);
            const char *last = last_component(fn);
            /* torch/autograd/function.py (Function.apply) runs compiled forwards: not backward */
            bwd |= in(last, bwd_fns);
            opt |= strstr(file, "/optim/") != NULL || strstr(file, "/optim.py") != NULL ||
                   strstr(file, "torch/nn/utils/clip_grad") != NULL;
            /* GradScaler's step / unscale_ / update belong to the optimizer step; everything
             * under its scale() multiplies the loss (forward) */
            gs |= strstr(file, "grad_scaler.py") != NULL;
            gs_scale |= strstr(file, "grad_scaler.py") != NULL && !strcmp(last, "scale");
            ev |= in(last, eval_fns);
            data |= in(last, data_fns) || strstr(file, "torch/utils/data") != NULL;
            /* a compiled graph running (inductor's generated code) is the forward, not compile */
            run |=
                strstr(file, "torchinductor_") != NULL || !strcmp(fn, "CompiledFxGraph.__call__");
            /* not dynamo's eval_frame.py alone: its _fn wraps disable() too, which eager code
             * runs (torch.utils.checkpoint, optimizers) */
            comp |= strstr(file, "torch/_inductor") != NULL ||
                    (strstr(file, "torch/_dynamo") != NULL && !strstr(file, "/eval_frame.py") &&
                     !strstr(file, "/external_utils.py") && !strstr(file, "/decorators.py"));
            fwd |= in(last, fwd_fns);
            init |= in(last, init_fns);
            r.loss |= in(last, loss_fns);
        } else {
            bwd |= strstr(fn, "torch::autograd::Engine") != NULL;
            r.loss |= strstr(fn, "cross_entropy") != NULL || strstr(fn, "log_softmax") != NULL ||
                      strstr(fn, "nll_loss") != NULL;
            r.to_copy |= strstr(fn, "_to_copy") != NULL;
            rand_op |=
                strstr(fn, "at::_ops::randint") != NULL || strstr(fn, "at::_ops::random_") != NULL;
            r.workspace |= strstr(fn, "BlasHandle") != NULL ||
                           strstr(fn, "BlasLtWorkspace") != NULL || strstr(fn, "cublas") != NULL;
            r.attention |=
                strstr(fn, "scaled_dot_product") != NULL || strstr(fn, "flash_attention") != NULL ||
                strstr(fn, "efficient_attention") != NULL || strstr(fn, "cudnn_attention") != NULL;
        }
    }
    opt |= gs && !gs_scale;
    /* the data path: a batch the program itself makes or copies onto the device (random token
     * ids, .to(device)), not an operation inside a module */
    r.input = first_py_user == 1 && !fwd && !run && (rand_op || r.to_copy);
    r.phase = bwd             ? PHASE_BACKWARD
              : opt           ? PHASE_OPTIMIZER
              : ev            ? PHASE_EVAL
              : data          ? PHASE_DATA
              : run           ? PHASE_FORWARD
              : comp          ? PHASE_COMPILE
              : fwd || r.loss ? PHASE_FORWARD
              : init          ? PHASE_INIT
                              : PHASE_OTHER;
    /* a loss computed in the training loop (outside forward) is still the forward pass */
    return r;
}

long phases_site(const tables_frame *f, size_t n)
{
    long first_py = -1, first_native = -1;
    for (size_t i = 0; i < n; i++) {
        if (f[i].kind == TABLES_FRAME_PYTHON) {
            if (first_py < 0)
                first_py = (long)i;
            if (!library_file(f[i].file ? f[i].file : ""))
                return (long)i;
        } else if (first_native < 0 && f[i].function && f[i].function[0]) {
            first_native = (long)i;
        }
    }
    return first_py >= 0 ? first_py : first_native;
}
