/* report_params16.c — 16-bit parameters the trace shows beyond the weights' own sizes
 * (report.h's report_params16): a first forward's 16-bit logits and no autocast copy, or
 * autocast's copies of the trained weights alone; the trained ones' element size. */
#include "report.h"

#include <string.h>

#include "evalsrc.h"

/* report_params16 (report.h): a run whose parameters are 16-bit (model.to(torch.bfloat16), a model
 * loaded in bfloat16: pure 16-bit training) made 16-bit logits in its first forward and no 16-bit
 * copy of a weight (autocast makes them of fp32 weights only), eager (a compiled graph's casts are
 * no _to_copy) and without a GradScaler (it refuses 16-bit gradients): the weights' sizes are read
 * again at 2 B an element (P, d; later EMA and what-ifs inherit it). With LoRA over such a model
 * the adapters are fp32 (as peft makes them) when autocast copies them only, half their
 * gradients' bytes, or peft casts the 16-bit input to their dtype (_cast_input_dtype made a
 * tensor: without autocast): those count at 4 B. So do a program's own adapters over a model
 * the weights' sizes said 16-bit (infer_weights.c), copied alone, half their gradients' bytes,
 * whether or not the first forward made B·T×V logits (a generation's makes the last token's).
 * The bytes per element of what trains (2 or 4); 0: nothing changed. */
/* under_peft: a stack with a frame of peft's code (its fp32 adapters are made so) */
static int under_peft(void *ctx, uint32_t stack)
{
    const tables *t = ctx;
    const tables_stack *st = tables_stack_get(t, stack);
    for (unsigned k = st ? st->n_native : 0; st && k < st->n_native + st->n_python; k++) {
        const tables_code *code = tables_code_get(t, VT_PYFRAME_CODE(st->frames[k]));
        if (code && code->filename.s && strstr(code->filename.s, "/peft/"))
            return 1;
    }
    return 0;
}

/* adapters16: before any gradient, the weights the program's lines cast to 16 bits that
 * replaced, one for one, fp32 weights of twice their bytes made under peft's code: LoRA's
 * adapters, cast to bfloat16 after get_peft_model (qlora.py's LoraLayer .to(torch.bfloat16)),
 * what trains, 16-bit. Their bytes, 0: none (a QLoRA out of memory in its first forward had its
 * adapters said fp32, AdamW 8 B per parameter for their 4, from a rotary cos/sin cast taken for
 * autocast's copy of them) */
static uint64_t adapters16(report_ctx *c, replay_result *r, uint64_t grads)
{
    const infer_value *c16 = &c->inferred.v[INFER_cast16_bytes];
    if (grads || !r->tensor_mode || !r->inferred_from || !c16->known || c16->value <= 0 ||
        !tables_code_find(r->t, "/peft/", NULL, NULL, NULL, 0))
        return 0;
    uint64_t a = infer_pass_narrowed(r->inferred_from, under_peft, (void *)r->t);
    uint64_t cast = (uint64_t)c16->value; /* (made on the program's lines, within 1/64) */
    return a <= cast + cast / 64 ? a : 0;
}

/* redo: c->inferred read again from r's pass, its 16-bit parameters marked */
static void redo(report_ctx *c, replay_result *r)
{
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
}

unsigned report_params16(report_ctx *c, replay_result *r, const run_facts *f)
{
    const infer_value *lg = &c->inferred.v[INFER_logits_dtype_bytes];
    uint64_t copies = r->has_cat_peaks ? r->cat_peak[CAT_AUTOCAST] : 0,
             grads = r->has_cat_peaks ? r->cat_peak[CAT_GRADIENTS] : 0;
    /* the weights the program's own lines cast to 16 bits are the gradients' bytes, within 1/64:
     * those are what trains, 16-bit (a QLoRA's bf16 adapters, its LoRA layers .to(bfloat16)
     * over a 4-bit base, had been counted fp32 from a rotary cos/sin cast taken for their
     * autocast copies: 8.39 M trainable of the program's 16.78 M, AdamW's 4 B said 8) */
    const infer_value *c16 = &c->inferred.v[INFER_cast16_bytes];
    unsigned cast16 = f->inferred && r->tensor_mode && !c->inferred.master_bytes && grads &&
                              c16->known && c16->value > 0 &&
                              (uint64_t)c16->value + grads / 64 >= grads &&
                              (uint64_t)c16->value <= grads + grads / 64
                          ? 2
                          : 0; /* (then no fp32 adapters below: the weights' 16-bit reading of
                                * a model cast whole, model.to(bfloat16), still made) */
    uint64_t a = adapters16(c, r, grads);
    c->adapters16 = 0; /* (set where they are read at 2 B below) */
    /* the weights' sizes said 16-bit (infer_weights.c) and autocast copied the trained ones
     * alone, half their gradients' bytes: those are fp32 (a program's own LoRA adapters made
     * after its model was cast); out of memory before any backward (no logits yet), the
     * weights whose copies autocast kept there */
    int sized = f->inferred && c->inferred.elem_by_sizes && !c->inferred.master_bytes;
    int a16 = a && sized; /* (16-bit: autocast copies none of them) */
    uint64_t kept = !grads && sized && copies && !a16 ? c->inferred.trained_by_copies : 0;
    /* the first forward's 16-bit logits say the weights are; where no B·T×V logits were
     * read (a generation's first forward makes the last position's alone), the weights' sizes
     * said so and the gradients' dtype is asked of autocast's copies below */
    int lg16 = lg->known && lg->value == 2 && !f->grad_scaler;
    if (!f->inferred || !r->inferred_from || !r->tensor_mode || !r->has_cat_peaks ||
        (!a16 && !kept && !lg16 && !(sized && grads && copies)) ||
        f->compile_frames != MODEL_COMPILE_NOT_SEEN)
        return cast16;
    if (!f->casts_visible || c->inferred.master_bytes) /* (no copy seen says nothing; the
                                                        * program's fp32 masters told already) */
        return cast16;
    int peft = tables_code_find(r->t, "/peft/", NULL, NULL, NULL, 0);
    int adapters32 =
        kept ||
        (!cast16 && grads &&
         (copies ? copies <= grads / 2 + grads / 16 /* (their copies: half) */ &&
                       (peft || (sized && copies + grads / 16 >= grads / 2))
                 : peft && tables_code_find(r->t, "/peft/", NULL, "._cast_input_dtype", NULL, 0)));
    int halves = sized && copies + grads / 16 >= grads / 2 && copies <= grads / 2 + grads / 16;
    if (!a16 && ((copies && !adapters32) || (!lg16 && !kept && !halves)))
        return cast16;
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
    int apart = lg16 && !kept && !adapters32 && !peft && grads && grads < weights / 2 && head &&
                !infer_pass_grad_has(r->inferred_from, head);
    char part[256];
    if (apart)
        snprintf(part, sizeof part,
                 "16-bit parameters: the first forward made 16-bit logits and no 16-bit copy of a "
                 "weight; the trained ones (%.1f %% of the weights' bytes; no gradient of the "
                 "head's size) counted fp32: the trace does not give their dtype",
                 100.0 * (double)grads / (double)weights);
    infer_pass_params16(r->inferred_from,
                        a16 ? "16-bit parameters: the weights' sizes (a block's d×d projections "
                              "at 2 B an element, none at 4 B), and the trained LoRA adapters "
                              "made fp32 under peft's code, each cast to 16 bits on the "
                              "program's lines before training"
                        : apart ? part
                        : kept
                            ? "16-bit parameters: the weights' sizes (a block's d×d "
                              "projections at 2 B an element, none at 4 B), and the trained ones "
                              "fp32: autocast's copies of them alone kept at the out-of-memory "
                              "error"
                        : adapters32 && (!peft || !lg16)
                            ? "16-bit parameters: the weights' sizes (a block's d×d projections "
                              "at 2 B an element, none at 4 B), and the trained ones fp32: the "
                              "first forward made 16-bit copies of them alone (half their "
                              "gradients' bytes)"
                        : adapters32 ? "16-bit parameters: the first forward made 16-bit logits "
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
    redo(c, r);
    if (a16) /* (whatever copies of their sizes autocast kept: a rotary cos/sin cast's) */
        c->inferred.trained_by_copies = 0, c->adapters16 = a;
    return adapters32 || apart ? 4 : 2;
}

/* precision16: the run computes in 16 bits, as its command line says (a precision flag's value:
 * --mixed_precision fp16, --precision bf16-mixed, --fp16; --mixed_precision no says it does
 * not), else its trace: a GradScaler, or autocast's copies of a weight matrix at least (1 MiB,
 * as model_fp32_compute reads them; a few bytes are a tensor the program converted itself). What
 * a script's weight_dtype follows (castsrc.h's var). */
static int precision16(const replay_result *r, const run_facts *f)
{
    static const char *const keys[] = {"mixed_precision", "precision", "amp", "dtype"};
    for (int i = 1; i < f->argc && f->argv; i++) {
        const char *a = f->argv[i];
        if (!a || strncmp(a, "--", 2))
            continue;
        size_t n = strcspn(a + 2, "="), k;
        if (n == 4 && !a[6] && (!strncmp(a + 2, "fp16", 4) || !strncmp(a + 2, "bf16", 4)))
            return 1;
        for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            size_t m = strlen(keys[k]), j = 0;
            while (j < m && j < n && (a[2 + j] == '-' ? '_' : a[2 + j]) == keys[k][j])
                j++;
            if (j == m && n == m)
                break;
        }
        const char *v = a[2 + n] == '=' ? a + 3 + n : i + 1 < f->argc ? f->argv[i + 1] : NULL;
        if (k < sizeof keys / sizeof keys[0] && v)
            return strstr(v, "16") != NULL;
    }
    return f->grad_scaler || (r->has_cat_peaks && r->cat_peak[CAT_AUTOCAST] >= (1u << 20));
}

struct cast_pick {
    replay_result *r;
    int var_ok;
    char seen[5][96]; /* the lines named (the first five) */
    int n;
};

/* cast_pick: stack made its tensor on a line that casts to 16 bits (evalsrc_cast16); the lines
 * gathered in seen */
static int cast_pick(void *ctx, uint32_t stack)
{
    struct cast_pick *cp = ctx;
    char at[96];
    int v = evalsrc_cast16(&cp->r->eval_src, cp->r->t, stack, at, sizeof at);
    if (!v || (v == 2 && !cp->var_ok))
        return 0;
    int k = 0;
    while (k < cp->n && k < 5 && strcmp(cp->seen[k], at))
        k++;
    if (k == cp->n && cp->n++ < 5)
        memcpy(cp->seen[k], at, sizeof at);
    return 1;
}

/* cast_where: the lines gathered, "train.py:384, :386" (a line of the first one's file by its
 * number alone), "..." after four */
static void cast_where(const struct cast_pick *cp, char *out, size_t n)
{
    size_t f = strcspn(cp->seen[0], ":"), w = 0;
    out[0] = '\0';
    for (int k = 0; k < cp->n && k < 5 && w < n; k++) {
        const char *at = cp->seen[k];
        int same = k && !strncmp(at, cp->seen[0], f) && at[f] == ':';
        w += (size_t)snprintf(out + w, n - w, "%s%s", k ? ", " : "",
                              k == 4 ? "..."
                              : same ? at + f
                                     : at);
    }
}

void report_cast16(report_ctx *c, replay_result *r, const run_facts *f)
{
    if (!f->inferred || !r->inferred_from || !r->tensor_mode || !c->inferred.v[INFER_params].known)
        return;
    struct cast_pick cp = {.r = r, .var_ok = precision16(r, f)};
    char where[160];
    if (!infer_pass_cast16(r->inferred_from, cast_pick, &cp))
        return;
    cast_where(&cp, where, sizeof where);
    infer_pass_cast16_where(r->inferred_from, where);
    infer_pass *p = infer_pass_copy(r->inferred_from);
    infer_result out;
    if (p && infer_finish(p, &out) == 0 && out.v[INFER_params].known) {
        out.v[INFER_gradient_accumulation_steps] =
            c->inferred.v[INFER_gradient_accumulation_steps]; /* (the step's own count) */
        c->inferred = out;
    }
    infer_pass_free(p);
}
