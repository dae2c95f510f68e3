/* report_params16.c — 16-bit parameters the trace shows beyond the weights' own sizes
 * (report.h's report_params16): a first forward's 16-bit logits and no autocast copy, or
 * autocast's copies of the trained weights alone; the trained ones' element size. */
#include "report.h"

/* report_params16 (report.h): a run whose parameters are 16-bit (model.to(torch.bfloat16), a model
 * loaded in bfloat16: pure 16-bit training) made 16-bit logits in its first forward and no 16-bit
 * copy of a weight (autocast makes them of fp32 weights only), eager (a compiled graph's casts are
 * no _to_copy) and without a GradScaler (it refuses 16-bit gradients): the weights' sizes are read
 * again at 2 B an element (P, d; later EMA and what-ifs inherit it). With LoRA over such a model
 * the adapters are fp32 (as peft makes them) when autocast copies them only, half their
 * gradients' bytes, or peft casts the 16-bit input to their dtype (_cast_input_dtype made a
 * tensor: without autocast): those count at 4 B. So do a program's own adapters over a model
 * the weights' sizes said 16-bit (infer_weights.c), copied alone, half their gradients' bytes.
 * The bytes per element of what trains (2 or 4); 0: nothing changed. */
unsigned report_params16(report_ctx *c, replay_result *r, const run_facts *f)
{
    const infer_value *lg = &c->inferred.v[INFER_logits_dtype_bytes];
    uint64_t copies = r->has_cat_peaks ? r->cat_peak[CAT_AUTOCAST] : 0,
             grads = r->has_cat_peaks ? r->cat_peak[CAT_GRADIENTS] : 0;
    /* the weights' sizes said 16-bit (infer_weights.c) and autocast copied the trained ones
     * alone, half their gradients' bytes: those are fp32 (a program's own LoRA adapters made
     * after its model was cast); out of memory before any backward (no logits yet), the
     * weights whose copies autocast kept there */
    int sized = f->inferred && c->inferred.elem_by_sizes && !c->inferred.master_bytes;
    uint64_t kept = !grads && sized && copies ? c->inferred.trained_by_copies : 0;
    if (!f->inferred || !r->inferred_from || !r->tensor_mode || !r->has_cat_peaks ||
        (!kept && (!lg->known || lg->value != 2 || f->grad_scaler)) ||
        f->compile_frames != MODEL_COMPILE_NOT_SEEN)
        return 0;
    if (!f->casts_visible || c->inferred.master_bytes) /* (no copy seen says nothing; the
                                                        * program's fp32 masters told already) */
        return 0;
    int peft = tables_code_find(r->t, "/peft/", NULL, NULL, NULL, 0);
    int adapters32 =
        kept || (grads && (copies ? copies <= grads / 2 + grads / 16 /* (their copies: half) */ &&
                                        (peft || (sized && copies + grads / 16 >= grads / 2))
                                  : peft && tables_code_find(r->t, "/peft/", NULL,
                                                             "._cast_input_dtype", NULL, 0)));
    if (copies && !adapters32)
        return 0;
    /* 16-bit logits are the head's: where its V×d weight got no gradient, the weights trained
     * are a small part of all (under a half) and nothing says theirs are 16-bit, the logits
     * tell a frozen base's 16 bits, and the trained ones are counted fp32 as everywhere the
     * trace does not give a dtype (a QLoRA's bf16 head beside its fp32 adapters had made them
     * all 16-bit: AdamW's state 4 B per trainable parameter, the program's 8, and twice its
     * trainable count) */
    const infer_value *hv = &c->inferred.v[INFER_vocab_size], *hd = &c->inferred.v[INFER_n_embd],
                      *he = &c->inferred.v[INFER_param_dtype_bytes];
    uint64_t head = hv->known && hd->known && he->known
                        ? (uint64_t)hv->value * (uint64_t)hd->value * (uint64_t)he->value
                        : 0,
             weights = r->cat_peak[CAT_PARAMETERS];
    int apart = !kept && !adapters32 && !peft && grads && grads < weights / 2 && head &&
                !infer_pass_grad_has(r->inferred_from, head);
    char part[256];
    if (apart)
        snprintf(part, sizeof part,
                 "16-bit parameters: the first forward made 16-bit logits and no 16-bit copy of a "
                 "weight; the trained ones (%.1f %% of the weights' bytes; no gradient of the "
                 "head's size) counted fp32: the trace does not give their dtype",
                 100.0 * (double)grads / (double)weights);
    infer_pass_params16(
        r->inferred_from,
        apart                 ? part
        : kept                ? "16-bit parameters: the weights' sizes (a block's d×d "
                                "projections at 2 B an element, none at 4 B), and the trained ones "
                                "fp32: autocast's copies of them alone kept at the out-of-memory "
                                "error"
        : adapters32 && !peft ? "16-bit parameters: the weights' sizes (a block's d×d projections "
                                "at 2 B an element, none at 4 B), and the trained ones fp32: the "
                                "first forward made 16-bit copies of them alone (half their "
                                "gradients' bytes)"
        : adapters32          ? "16-bit parameters: the first forward made 16-bit logits "
                                "and 16-bit copies of the trained LoRA adapters only "
                                "(fp32: half their gradients' bytes), none of the frozen "
                                "weights"
                              : "16-bit parameters: the first forward made 16-bit logits "
                                "and no 16-bit copy of a weight (autocast makes those of "
                                "fp32 weights)",
        kept                  ? kept
        : adapters32 || apart ? grads
                              : 0);
    if (apart)
        infer_pass_head16(r->inferred_from);
    infer_pass *p = infer_pass_copy(r->inferred_from);
    infer_result out;
    if (p && infer_finish(p, &out) == 0 && out.v[INFER_params].known) {
        out.v[INFER_gradient_accumulation_steps] =
            c->inferred.v[INFER_gradient_accumulation_steps]; /* (the step's own count) */
        if (!out.trained_by_copies)
            out.trained_by_copies = c->inferred.trained_by_copies;
        c->inferred = out;
    }
    infer_pass_free(p);
    return adapters32 || apart ? 4 : 2;
}
