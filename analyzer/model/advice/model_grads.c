/* model_grads.c — an out-of-memory error in a backward whose tensors were the weights and their
 * gradients (model_oom.h model_grads_cause): no micro-batch's tensor makes room for the
 * gradients still to come, so the cause is the weights and their gradients. */
#include "model_oom.h"

#include <stdio.h>
#include <string.h>

#include "advice.h"

/* the categories a micro-batch sizes, or may (unknown): what a smaller one could free */
static const category batch_sized[] = {CAT_ACTIVATIONS, CAT_LOGITS, CAT_ATTENTION, CAT_BACKWARD,
                                       CAT_TEMPORARIES, CAT_INPUTS, CAT_UNKNOWN};

/* put: k bytes written at *w (snprintf's count, a cut one the room left) go past */
static void put(char **w, size_t *n, int k)
{
    size_t a = k < 0 ? 0 : (size_t)k < *n ? (size_t)k : *n - 1;
    *w += a, *n -= a;
}

static double mib(uint64_t b)
{
    return (double)b / 1048576.0;
}

int model_grads_cause(model_result *m, const run_facts *f, uint64_t cap)
{
    const cat_breakdown *l = &f->at_oom;
    if (m->cause != OOM_ACTIVATIONS || !cap || f->oom_step_pass || !f->oom_phase ||
        strcmp(f->oom_phase, "backward"))
        return 0;
    uint64_t p = l->bytes[CAT_PARAMETERS], g = l->bytes[CAT_GRADIENTS], batch = 0;
    for (size_t i = 0; i < sizeof batch_sized / sizeof batch_sized[0]; i++)
        batch += l->bytes[batch_sized[i]];
    uint64_t total = cat_breakdown_total(l),
             outside = l->bytes[CAT_CONTEXT] + l->bytes[CAT_KERNEL_CODE] + l->bytes[CAT_EXTERNAL];
    uint64_t tensors = total - outside - l->bytes[CAT_CACHE],
             fixed = total - l->bytes[CAT_CACHE] - batch;
    /* the gradients still to come: where an earlier backward made them all, those it made and
     * not live now; a first backward's only where the request is a weight's (which the rest
     * are, the weights it had not reached, is not known: they may be frozen) */
    int earlier = f->backward_passes >= 2 && f->has_cat_peaks && !f->oom_new_step;
    uint64_t known = earlier && f->cat_peak[CAT_GRADIENTS] > g ? f->cat_peak[CAT_GRADIENTS] - g : 0;
    uint64_t req = f->oom_weight ? f->oom_requested : 0, more = known > req ? known : req;
    if (!g || 4 * (p + g) < 3 * tensors || fixed + more <= cap)
        return 0;
    m->cause = OOM_GRADIENTS;
    char *w = m->why;
    size_t n = sizeof m->why;
    int k = snprintf(w, n,
                     "the weights (%.1f MiB) and the gradients the backward had made (%.1f MiB) "
                     "were %.0f %% of the %.2f GiB of tensors live, ",
                     mib(p), mib(g), 100.0 * (double)(p + g) / (double)tensors,
                     (double)tensors / 1073741824.0);
    put(&w, &n, k);
    if (l->bytes[CAT_OPTIMIZER]) { /* (kept too, whatever the micro-batch) */
        k = snprintf(w, n, "the optimizer's state %.1f MiB, ", mib(l->bytes[CAT_OPTIMIZER]));
        put(&w, &n, k);
    }
    k = snprintf(w, n,
                 "what a micro-batch sizes (activations, logits, inputs, the backward's own) "
                 "%.2f MiB; the %.1f MiB requested is ",
                 mib(batch), mib(f->oom_requested));
    put(&w, &n, k);
    if (f->oom_weight)
        k = snprintf(w, n, "a weight's gradient (%u weight%s of %.1f MiB, allocator-rounded); ",
                     f->oom_weight_n, f->oom_weight_n == 1 ? "" : "s", mib(f->oom_weight));
    else
        k = snprintf(w, n, "the backward's (no weight's size); ");
    put(&w, &n, k);
    if (earlier && known)
        k = snprintf(w, n,
                     "the parameters' gradients alone need %.1f MiB more (an earlier backward "
                     "made %.1f MiB of them)",
                     mib(known), mib(f->cat_peak[CAT_GRADIENTS]));
    else if (earlier)
        k = snprintf(w, n, "every gradient an earlier backward made (%.1f MiB) was live",
                     mib(f->cat_peak[CAT_GRADIENTS]));
    else
        k = snprintf(w, n,
                     "the parameters' gradients alone need at least that %.1f MiB more, %.1f MiB "
                     "if every weight not reached yet trains (each gets a gradient of its size)",
                     mib(req), mib(p > g ? p - g : 0));
    put(&w, &n, k);
    snprintf(w, n,
             "; what was live less those and the cache, with %s, is %.2f GiB: over the card's "
             "%.2f GiB whatever the micro-batch",
             more == req ? "the request" : "the gradients still to come",
             (double)(fixed + more) / 1073741824.0, (double)cap / 1073741824.0);
    return 1;
}
