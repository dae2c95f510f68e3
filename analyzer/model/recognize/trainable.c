/* trainable.c — how many of the weights train (recognize.h's recognize_trainable), for
 * recognize_optim: the program's fp32 master weights its optimizer steps, the gradients'
 * elements, or, before any backward (an out-of-memory error in the first forward), the weights
 * whose 16-bit copies autocast kept for the backward. */
#include <stdio.h>

#include "recognize.h"

/* frozen_beside: before any backward, a second model's blocks beside the trained one's, used in
 * the first forward with their 16-bit copies freed after each use (infer.h's frozen_blocks, and
 * the forward's freed copies, 2 B each of a 4-B weight, at least half of the weights whose copies
 * were not kept): a frozen teacher's or reference model's forward under no_grad; the trained
 * weights are at least those whose copies were kept (a student distilled from a 953 M teacher,
 * out of memory after both forwards, had been costed gradients and AdamW state of all 1089 M
 * weights: 12.17 GiB where its 135.88 M take 1.52) */
static int frozen_beside(const recognize_input *in)
{
    const infer_value *fz = in->inferred ? &in->inferred->v[INFER_frozen_blocks] : NULL;
    uint64_t kept = in->trained_by_copies;
    if (!fz || !fz->known || fz->value <= 0 || !in->has_cat_peaks || in->grad_peak ||
        in->param_elem == 2 || !kept || kept >= in->param_bytes)
        return 0;
    uint64_t rest = in->param_bytes - kept;
    return in->copies_freed <= UINT64_MAX / 4 && 4 * in->copies_freed >= rest;
}

/* unused_beside: before any backward, a second model's blocks beside the trained one's (infer.h's
 * frozen_blocks: none of their sizes had a 16-bit copy kept) that the first forward had not used
 * when it died (not frozen_beside: the copies it freed are not half of the weights whose copies
 * were not kept): a teacher run after the student, out of memory in the student's forward.
 * Nothing in the trace says yet whether they train; the trained weights are at least those whose
 * copies were kept (a 91.63 M student beside its 735.10 M teacher, out of memory in its third
 * block, had been told "42.47 M" trainable, or, where those were more than 1/16 of the weights,
 * costed gradients and AdamW state of all 826.73 M) */
static int unused_beside(const recognize_input *in)
{
    const infer_value *fz = in->inferred ? &in->inferred->v[INFER_frozen_blocks] : NULL;
    uint64_t kept = in->trained_by_copies;
    /* not where the weights hold a copy of themselves (weights_copy.h: an own EMA, a second
     * encoder of the same shape): the kept copies' sizes count the copy's weights too (a U-Net
     * beside its own EMA had been told "at least 134.93 M" of its 135.97 M, its EMA "off") */
    return fz && fz->known && fz->value > 0 && in->has_cat_peaks && !in->grad_peak &&
           in->param_elem != 2 && kept && kept < in->param_bytes && !frozen_beside(in) &&
           !in->copy_tensors;
}

/* steps_apart: the run's steps read gradient sets of different sizes (replay.h grad_sets), whose
 * union is more than the gradients live at their most: each step's backward made the gradients
 * of its own weights, freed before the next (separate backward passes, each with its own
 * optimizer step). A set repeated (one model, gradient accumulation, a LoRA, a frozen teacher)
 * makes no union above the peak. */
static int steps_apart(const recognize_input *in, unsigned e)
{
    return in->has_cat_peaks && in->grad_sets >= 2 && in->grad_union > in->grad_peak &&
           in->grad_union >= e;
}

int recognize_optim_passes(const recognize_input *in, run_recognition *out, int named)
{
    if (!in->has_cat_peaks || in->iterations <= 0 || out->trainable <= 0 || !in->passes_shared ||
        in->optim_peak)
        return 0;
    /* no state, and the steps counted by gradient frees between backward passes of one forward:
     * whether a step ran is not known (PCGrad's 24 tasks, out of memory before its first step,
     * had been "no state (plain SGD)" from 23 such frees) */
    out->optim = named == OPT_OTHER ? OPT_UNKNOWN : (optim_kind)named;
    out->steps_unsure = 1;
    snprintf(out->optim_where, sizeof out->optim_where,
             "%s%sno state measured, and whether an optimizer step ran is not known (the gradient "
             "frees counted as steps came between backward passes of one forward)",
             out->optim_class, out->optim_class[0] ? " on the Python stacks; " : "");
    return 1;
}

unsigned recognize_trainable(const recognize_input *in, run_recognition *out, unsigned e)
{
    if (in->master_bytes >= 4) { /* (its state is theirs: fp32) */
        out->state_elem = e = 4;
        out->trainable = in->master_bytes / 4;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "the elements of the program's fp32 master weights, copies of all its 16-bit "
                 "weights, which its optimizer steps");
    } else if (in->trained_by_copies >= e && frozen_beside(in)) {
        out->trainable = in->trained_by_copies / e;
        out->trainable_lower = 1;
        uint64_t used = 2 * in->copies_freed, rest = in->param_bytes - in->trained_by_copies;
        uint64_t never = rest > used ? rest - used : 0;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "at least: the weights whose 16-bit copies autocast kept at the out-of-memory "
                 "error, before any backward (it keeps one for the backward only of a weight that "
                 "needs a gradient); another model's %lld blocks beside them had theirs freed "
                 "after each use (frozen: %.2f M weights used); %.2f M weights never cast "
                 "(embeddings looked up, norms) are not told",
                 (long long)in->inferred->v[INFER_frozen_blocks].value, (double)used / 4e6,
                 (double)never / 4e6);
    } else if (in->trained_by_copies >= e && unused_beside(in)) {
        out->trainable = in->trained_by_copies / e;
        out->trainable_lower = out->beside_unused = 1;
        uint64_t rest = in->param_bytes - in->trained_by_copies;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "at least: the weights whose 16-bit copies autocast kept at the out-of-memory "
                 "error, before any backward (it keeps one only of a weight that needs a "
                 "gradient); the %.2f M others, another model's %lld blocks beside them among "
                 "them, too few of whose copies were freed to tell them frozen (mostly not cast "
                 "by autocast before the error): whether they train is not told",
                 (double)rest / 4e6, (long long)in->inferred->v[INFER_frozen_blocks].value);
    } else if (in->has_cat_peaks && !in->grad_peak && in->copy_bytes >= e &&
               in->copy_bytes < in->param_bytes) {
        /* no gradient yet, and a run of the weights holds the sizes of the run made before it,
         * one for one (weights_copy.h: an EMA the program keeps, clones of the parameters; a
         * reference model made again): what it copies is a trained model's, the weights beside
         * them (frozen encoders cast to fp16, whose forward autocast does not copy) not. A
         * latent DiT out of memory in its first forward beside its frozen VAE and text encoder
         * and its EMA had been costed AdamW's state of all 381.76 M weight elements (2.84 GiB;
         * its 156.97 M take 1.17) */
        out->trainable = in->copy_bytes / e;
        out->trainable_lower = 1;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "at least: the weights whose sizes the %zu weight tensors made after them hold, "
                 "one for one (%.1f MiB: a copy the program keeps, an EMA's or a reference "
                 "model's, is of a trained model, and a second model of their shape may train "
                 "too); no backward told which weights train",
                 in->copy_tensors, (double)in->copy_bytes / 1048576.0);
    } else if (in->has_cat_peaks && !in->grad_peak && in->trained_by_copies >= e &&
               in->trained_by_copies < in->param_bytes / 16) {
        /* no gradient yet (out of memory before the first backward), and a few of the weights
         * (adapters: their sizes repeat in every block) had their copies kept: those train. Not
         * a larger share: a forward cut short had copied the weights it reached alone (a
         * ResNet-50's 9.04 M of its 25.61 M, all trained) */
        out->trainable = in->trained_by_copies / e;
        out->trainable_by_kept = 1;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "the weights whose 16-bit copies autocast kept at the out-of-memory error (it "
                 "keeps those of weights that need a gradient; none was measured)");
    } else if (in->has_cat_peaks && in->grad_peak >= e && in->grads_cut == 2 &&
               in->param_bytes > in->grad_peak) {
        /* the run died in a step of a kind no earlier step ran, before its backward had made
         * the gradients of the weights it trains (a WGAN out of memory in its first generator
         * step, after five critic steps, had been told its generator's 108.3 MiB "take no
         * gradient") */
        out->trainable = in->grad_peak / e;
        out->trainable_lower = 1, out->grads_cut = 2;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "at least: the gradients' elements the run had made when it ended; it died in a "
                 "step of a kind no earlier step ran (its activations made at code first run "
                 "then), before that step's backward had made its gradients: the rest may train");
    } else if (in->has_cat_peaks && in->grad_peak >= e && in->grads_cut == 1) {
        /* the backward the error cut short had not made every gradient yet: the weights it had
         * not reached wait for theirs (a DLRM whose every weight trains, out of memory partway
         * through its first backward, had been told 4.96 GiB of its weights "take no gradient";
         * an Opacus encoder 6.30 M of its 18.90 M trained, "the rest frozen: adapters such as
         * LoRA") */
        out->trainable = in->grad_peak / e;
        out->trainable_lower = out->grads_cut = 1;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "at least: the gradients' elements made before the out-of-memory error cut the "
                 "backward short; the backward did not reach the rest, which may train");
    } else if (in->has_cat_peaks && in->grad_peak >= e && in->passes_shared) {
        /* the gradients freed between backward passes of one forward: each pass's reach the
         * weights its loss depends on (PCGrad's per-task passes: the trunk and that task's head;
         * all of 24 heads train, and 48.09 M of 419.61 M had been said, "most weights take no
         * gradient") */
        out->trainable = in->grad_peak / e;
        out->trainable_lower = out->passes_lower = 1;
        snprintf(out->trainable_where, sizeof out->trainable_where,
                 "at least: the gradients' elements of one backward pass; the gradients were freed "
                 "between backward passes of one forward, whose losses may reach other weights "
                 "(a multi-task step's heads): whether the rest train is not known");
    } else if (steps_apart(in, e)) {
        /* the steps read gradients of different weights, each set made and freed in turn: all
         * train (a GAN under Lightning's manual optimization, its generator and discriminator
         * each with its own backward and Adam, had been told its 14.16 M discriminator weights
         * "had no gradient", and both Adams' state over the 21.24 M generator's "13.33 B of state
         * per trainable parameter", "a state of its own size") */
        uint64_t all = in->param_bytes / out->param_elem, n = in->grad_union / e;
        out->trainable = n < all ? n : all;
        out->trainable_union = 1, out->trainable_lower = in->grad_union_lower;
        snprintf(
            out->trainable_where, sizeof out->trainable_where,
            "%sthe gradients' elements of the optimizer steps together: %u sets (told by their "
            "sizes) made and freed in turn, never all live at once (%.2f M at their most): "
            "separate backward passes, each with its own optimizer step (a GAN's generator "
            "and discriminator)%s%s",
            in->grad_union_lower ? "at least: " : "", in->grad_sets,
            (double)(in->grad_peak / e) / 1e6,
            in->grad_union_lower ? "; a size in two sets counted once: more may train" : "",
            out->trainable < all && !in->grad_union_lower
                ? "; the rest had none in any step: frozen, or buffers"
                : "");
    } else if (in->has_cat_peaks && in->grad_peak >= e) {
        out->trainable = in->grad_peak / e;
        /* the weights beside them had no gradient at the gradients' most: frozen, or weights a
         * step did not reach (an MoE's expert its router sent no token: Mixtral skips it, all of
         * an MoE GPT's 168.94 M weights trained and 2.10 M of them, layer 0's expert 7, had been
         * "not trained: frozen parameters, ...") */
        uint64_t all = in->param_bytes / out->param_elem;
        const infer_value *fz = in->inferred ? &in->inferred->v[INFER_frozen_blocks] : NULL;
        /* (not beside peft's adapters, nor another model's blocks none of whose sizes got a
         * gradient: a LoRA's base, a teacher, frozen as said) */
        out->rest_untold = out->trainable < all && !(fz && fz->known && fz->value > 0) &&
                           !tables_code_find(in->t, "/peft/", NULL, NULL, NULL, 0);
        if (out->rest_untold)
            snprintf(out->trainable_where, sizeof out->trainable_where,
                     "the gradients' elements at their most; the other weights had no gradient "
                     "then: frozen weights or buffers, an EMA's or a teacher's copy, or weights "
                     "a step did not reach (an expert its router did not choose, a branch not "
                     "taken): the trace does not tell them apart");
        else
            snprintf(out->trainable_where, sizeof out->trainable_where,
                     "the gradients' elements; the rest not trained: frozen parameters, buffers, "
                     "or an EMA's or a teacher's copy of weights");
    }
    return e;
}
