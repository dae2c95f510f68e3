/* report.c — the one report of a traced run (report.h), built once: the facts the memory model
 * needs (model.h) from the replay, the allocation sites at the peak, and the model itself.
 * Views (views/report_*.c) only render it; commands only wire options to it. */
#include "report.h"

#include "cfgsrc.h"
#include "classify.h"
#include "evalsrc.h"
#include "hashseed.h"
#include "repcache.h"
#include "weights_copy.h"

#include <stdlib.h>
#include <string.h>

static const char *env_value(const replay_result *r, const char *name)
{
    return tables_env(r->t, name);
}

/* What a stack was made under (made_of): transformers' KV cache code (cache_utils.py), peft's
 * (LoRA adapters: what trains when no gradient was measured), torch's convolution layers (how
 * much of the activations they made: a patch embedding's share or a CNN's), an EMA's
 * (recognize_ema_code: its kind above MADE_EMA_SHIFT); looked up once per stack and once per
 * code object (made_memo: stack id, code id -> MADE_DONE | it). */
enum { MADE_KV = 1, MADE_PEFT = 2, MADE_DONE = 4, MADE_CONV = 16, MADE_EMA_SHIFT = 8 };
#define MADE_CONV_FILE "torch/nn/modules/conv.py"
typedef struct made_map {
    uint32_t *key, *val; /* open addressing; key 0: empty (ids are > 0) */
    size_t cap;          /* sized once, for n ids: never grows (0: out of memory) */
    int tried;
} made_map;
typedef struct made_memo {
    made_map stacks, codes;
    int scanned, none; /* none: no code object of the trace says anything (made_lookup) */
} made_memo;

/* made_slot: id's slot in m (sized for n ids on first use); NULL when there is none (out of
 * memory, or a full map: ids beyond its count) */
static uint32_t *made_slot(made_map *m, size_t n, uint32_t id)
{
    if (!m->tried) {
        size_t cap = 64;
        while (cap < 2 * n + 16)
            cap *= 2;
        m->tried = 1;
        m->key = calloc(cap, sizeof *m->key);
        m->val = calloc(cap, sizeof *m->val);
        if (!m->key || !m->val) { /* out of memory: each looked up where asked */
            free(m->key), free(m->val);
            m->key = m->val = NULL;
        } else {
            m->cap = cap;
        }
    }
    if (!m->cap)
        return NULL;
    size_t j = (size_t)hashseed_mix(id) & (m->cap - 1), probes = 0; /* (the trace's ids) */
    for (; m->key[j] && m->key[j] != id && probes < m->cap; j = (j + 1) & (m->cap - 1))
        probes++;
    if (m->key[j] != id && m->key[j])
        return NULL;
    m->key[j] = id;
    return &m->val[j];
}

static void made_map_free(made_map *m)
{
    free(m->key), free(m->val);
}

/* made_of_code: what one code object of a Python frame says */
static uint32_t made_of_code(made_memo *mm, const tables *t, uint32_t code_id)
{
    uint32_t *v = code_id ? made_slot(&mm->codes, tables_n_codes(t), code_id) : NULL;
    if (v && *v)
        return *v & ~(uint32_t)MADE_DONE;
    const tables_code *code = tables_code_get(t, code_id);
    const char *file = code ? code->filename.s : NULL;
    uint32_t m = 0;
    if (file) {
        m |= strstr(file, PHASES_KV_CACHE_FILE) ? MADE_KV : 0;
        m |= strstr(file, "/peft/") ? MADE_PEFT : 0;
        m |= strstr(file, MADE_CONV_FILE) ? MADE_CONV : 0;
        m |= (uint32_t)recognize_ema_code(file, code->qualname.s) << MADE_EMA_SHIFT;
    }
    if (v)
        *v = m | MADE_DONE;
    return m;
}

/* made_of: a stack's frames together (the innermost EMA's kind) */
static uint32_t made_of(made_memo *mm, const tables *t, uint32_t id)
{
    const tables_stack *st = id ? tables_stack_get(t, id) : NULL;
    uint32_t m = 0;
    for (unsigned k = st ? st->n_native : 0; st && k < st->n_native + st->n_python; k++) {
        uint32_t c = made_of_code(mm, t, VT_PYFRAME_CODE(st->frames[k]));
        m |= c & (MADE_KV | MADE_PEFT | MADE_CONV);
        if (!(m >> MADE_EMA_SHIFT))
            m |= c & ~(uint32_t)((1u << MADE_EMA_SHIFT) - 1);
    }
    return m;
}

static uint32_t made_lookup(made_memo *mm, const tables *t, uint32_t id)
{
    if (!id)
        return 0;
    if (!mm->scanned) { /* each file, else each code object once: most traces have none of
                         * these (no stack's frames need be read then) */
        static const char *const files[] = {PHASES_KV_CACHE_FILE, "/peft/", MADE_CONV_FILE, NULL};
        mm->scanned = mm->none = 1;
        size_t pos = 0;
        const tables_code *c;
        int may = tables_code_file_has(t, files) || recognize_ema_files(t);
        while (may && (c = tables_code_next(t, &pos)) != NULL)
            if (made_of_code(mm, t, c->code_id))
                mm->none = 0;
    }
    if (mm->none)
        return MADE_DONE;
    uint32_t *v = made_slot(&mm->stacks, tables_n_stacks(t), id);
    if (v && *v)
        return *v;
    uint32_t m = made_of(mm, t, id) | MADE_DONE;
    if (v)
        *v = m;
    return m;
}

/* made_under: the bytes alive in snapshot s, by category, made under the KV cache's, peft's
 * and an EMA's code (ema_which: the kind of the last EMA seen) */
typedef struct made_bytes {
    cat_breakdown kv, peft, ema;
    uint64_t conv_act; /* activations made under torch's convolution layers */
    int ema_which;
    uint64_t copies; /* parameters made after the first forward (classify.c's kept_copy) */
} made_bytes;

static made_bytes made_under(const tables *t, made_memo *mm, const replay_snapshot *s)
{
    made_bytes b;
    memset(&b, 0, sizeof b);
    for (size_t i = 0; i < s->n; i++) {
        const live_item *it = &s->items[i];
        uint32_t m = made_lookup(mm, t, it->stack_id);
        if (it->category >= CAT_COUNT)
            continue;
        if (it->category == CAT_PARAMETERS && it->phase_alloc == PHASE_FORWARD)
            b.copies += it->size;
        if (m & MADE_KV)
            b.kv.bytes[it->category] += it->size;
        if (m & MADE_PEFT)
            b.peft.bytes[it->category] += it->size;
        if ((m & MADE_CONV) && it->category == CAT_ACTIVATIONS)
            b.conv_act += it->size;
        if (m >> MADE_EMA_SHIFT) {
            b.ema.bytes[it->category] += it->size;
            b.ema_which = (int)(m >> MADE_EMA_SHIFT);
        }
    }
    return b;
}

struct ema_drop {
    made_memo *mm;
    const tables *t;
};

static int ema_drop(void *ctx, uint32_t stack)
{
    struct ema_drop *d = ctx;
    return (made_lookup(d->mm, d->t, stack) >> MADE_EMA_SHIFT) != 0;
}

/* less_ema: what the tensors say of the model without an EMA's copy of its weights (ema bytes
 * of them live at the moment explained, made under its code: words): inferred again as if the
 * copy's tensors were never made (its embedding is no second, untied head; its norms no more
 * of them in a block), said in P's where; P less its bytes when they cannot be told apart. */
static void less_ema(report_ctx *c, const replay_result *r, made_memo *mm, uint64_t ema,
                     const char *words)
{
    infer_pass *p = infer_pass_copy(r->inferred_from);
    struct ema_drop d = {mm, r->t};
    infer_result out;
    size_t n = 0;
    uint64_t bytes = 0;
    if (p && infer_finish_without(p, ema_drop, &d, &out, &n, &bytes) == 0 && n &&
        out.v[INFER_params].known) {
        if (r->accum) /* the step's own count (report_fill) */
            out.v[INFER_gradient_accumulation_steps] =
                c->inferred.v[INFER_gradient_accumulation_steps];
        c->inferred = out;
        infer_value *pv = &c->inferred.v[INFER_params];
        size_t w = strlen(pv->where);
        snprintf(pv->where + w, sizeof pv->where - w,
                 ", less the EMA copy (%llu B, %s: its %zu tensors left out)",
                 (unsigned long long)ema, words && *words ? words : "an EMA", n);
    } else {
        infer_params_less(&c->inferred, ema, words);
    }
    infer_pass_free(p);
}

/* optim_kept: the optimizer's state as its steps keep it: its largest live bytes over the run, or
 * those where the tensors peaked after a step when the largest exceeds them by no more than one
 * of its tensors there: a copy made before the one it replaces was freed (SAM's old_p, taken
 * anew in every step's first_step, had been 8.43 B of state per parameter where it keeps 8) */
static uint64_t optim_kept(const replay_result *r)
{
    uint64_t most = r->has_cat_peaks ? r->cat_peak[CAT_OPTIMIZER] : 0, one = 0;
    const replay_snapshot *s = &r->at_tensors;
    uint64_t at = s->by_cat.bytes[CAT_OPTIMIZER];
    if (!most || !r->tensor_mode || !s->n || !r->tensors_iter || !at || at >= most)
        return most;
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].category == CAT_OPTIMIZER && s->items[i].size > one)
            one = s->items[i].size;
    return most - at <= one ? at : most;
}

/* own_copies: the bytes where the tensors peaked that the program's own optimizer class keeps
 * as copies of the weights (classify.c's opt_copy), 0 none */
static uint64_t own_copies(const replay_result *r)
{
    const replay_snapshot *s = r->tensor_mode && r->at_tensors.n ? &r->at_tensors : &r->at_peak;
    int rule = 0, nr = classify_rule_count();
    while (rule < nr && strcmp(classify_rule_name(rule), "opt_copy"))
        rule++;
    uint64_t n = 0;
    for (size_t i = 0; rule < nr && i < s->n; i++)
        n += s->items[i].rule == rule ? s->items[i].size : 0;
    return n;
}

static int report_fill(report_ctx *c)
{
    replay_result *r = &c->runs[0];
    run_facts *f = &c->facts;
    memset(f, 0, sizeof *f);
    const tables_process *p = tables_process_get(r->t);
    if (p) {
        int n = p->argc < 512 ? (int)p->argc : 512;
        for (int i = 0; i < n; i++)
            c->argv_store[i] = p->argv[i].s;
        f->argc = n;
        f->argv = c->argv_store;
        f->cwd = p->cwd.s;
    }
    /* the configuration's own inputs: recorded files (never the disk), the trace's tensors
     * (both from the replay's one reading of the trace: a pipe or FIFO is read once) */
    cfgsrc_files(r->t, (int)r->minor, c->files_store, VT_FILE_MAX_COUNT, &c->files);
    f->files = &c->files;
    f->t = r->t;
    if (r->has_inferred) {
        c->inferred = r->inferred;
        f->inferred = &c->inferred;
        /* backward passes of one forward (retain_graph): the tensors alive after the first are
         * the weights and the forward's, kept for the next pass (PCGrad's 24 tasks: 419.61 M
         * "weight elements", "16-bit" from their sizes, where 36.34 M fp32 weights train) */
        if (r->free_steps_shared && r->tensor_mode)
            c->inferred.v[INFER_params].known = c->inferred.v[INFER_param_dtype_bytes].known = 0;
    }
    /* (not passes over one batch: a loss's terms back-propagated one by one, repcache.h) */
    if (f->inferred && r->accum && !repcache_one_batch(r)) { /* the step's own micro-steps */
        infer_value *a = &c->inferred.v[INFER_gradient_accumulation_steps];
        a->known = 1, a->value = r->accum;
        const char *cut = r->dropped_events ? " seen whole in the trace" : ""; /* (a gap's) */
        if (r->accum_steps == 1)
            snprintf(a->where, sizeof a->where, "A = %u: %u backward pass%s before the %s%s",
                     r->accum, r->accum, r->accum == 1 ? "" : "es",
                     *cut ? "one optimizer step" : "run's one optimizer step", cut);
        else
            snprintf(a->where, sizeof a->where,
                     "A = %u: %u backward pass%s before each of the %u optimizer steps%s", r->accum,
                     r->accum, r->accum == 1 ? "" : "es", r->accum_steps, cut);
    }
    f->alloc_conf = env_value(r, "PYTORCH_ALLOC_CONF") ? env_value(r, "PYTORCH_ALLOC_CONF")
                                                       : env_value(r, "PYTORCH_CUDA_ALLOC_CONF");
    f->tensor_mode = r->tensor_mode;
    const tables_config *cf = tables_config_get(r->t);
    f->card_bytes = cf ? cf->card_bytes : 0;
    f->card_name = cf && cf->card.s ? cf->card.s : "";
    const tables_device *d = tables_n_devices(r->t) ? tables_device_at(r->t, 0) : NULL;
    f->device_total = d ? d->total_bytes : 0;
    f->peak_allocated = r->tensor_mode ? r->peak_allocated : 0;
    f->peak_reserved = r->peak_reserved;
    f->again_first = r->again_first, f->again_reserved = r->again_reserved;
    f->peak_process = r->peak_process;
    f->at_peak = r->at_peak.by_cat;
    f->has_at_tensors = r->tensor_mode && r->at_tensors.n > 0;
    f->at_tensors = r->at_tensors.by_cat;
    f->has_at_step = r->tensor_mode && r->at_step.n > 0;
    f->at_step = r->at_step.by_cat;
    f->bwd_weight = report_weight_sized(f->has_at_tensors ? &r->at_tensors : &r->at_peak, 0,
                                        &f->oom_request_weight); /* (0 here: the OOM's below) */
    f->iterations = (int)r->iterations;
    /* torch.compile compiles at the first forward: forward frames and no compile frame = eager */
    /* (segment mode may allocate nothing while compiling: then a Python frame of inductor,
     * or of the code it generated, on a recorded stack says it ran; not torch/_dynamo alone:
     * its disable() wrappers are on eager stacks too) */
    static const char *const compile_files[] = {"torch/_inductor/", "torchinductor_", NULL};
    f->compile_frames = r->phase_peak[PHASE_COMPILE] || tables_code_file_has(r->t, compile_files)
                            ? MODEL_COMPILE_SEEN
                        : r->phase_peak[PHASE_FORWARD] ? MODEL_COMPILE_NOT_SEEN
                                                       : MODEL_COMPILE_UNKNOWN;
    /* an enabled GradScaler allocates under these (a disabled one returns before): fp16 AMP */
    static const char *const scaler_fns[] = {"GradScaler.scale", "GradScaler._unscale_grads_",
                                             "GradScaler._check_inf_per_device",
                                             "GradScaler._lazy_init_scale_growth_tracker", NULL};
    f->grad_scaler = tables_code_named(r->t, "grad_scaler.py", scaler_fns);
    /* a copy can be seen where an allocation's native frames reached an operator (not with no
     * stacks, Python frames alone, native ones cut short) and Python frames told the first
     * forward from the init before it (the copies made in it are no forward's otherwise) */
    f->casts_visible = r->op_frames && !tables_no_python(r->t);
    report_cast16(c, r, f); /* (first: what the sizes say is read of the others) */
    unsigned trained_elem = report_params16(c, r, f);
    f->backward_passes = (int)r->backward_passes, f->oom_recovered = r->oom_recovered;
    f->cache_passes = (int)r->cache_passes;
    f->free_steps_first = (int)r->free_steps_first;
    f->steps_why = replay_steps_why(r);
    /* (a caught error that is has_oom's: the advice of a run out of memory, which trained on) */
    f->caught_peak = replay_peak_in_caught(r) && !r->has_oom;
    f->caught_ns = r->caught.time_ns, f->caught_request = r->caught.requested;
    if (r->went_on_event && r->oom_went_on) /* (what it went on with: its steps measured) */
        f->went_on_batch = r->went_on_batch, f->went_on_tensors = r->went_on_tensors,
        f->went_on_reserved = r->went_on_reserved, f->went_on_process = r->went_on_process,
        f->went_on_unused = r->went_on_unused, f->went_on_steps = (int)r->went_on_steps;
    f->oom_went_on = r->oom_went_on;
    f->oom_first_batch = r->has_oom ? r->oom_first_batch : 0;
    f->fwd0_copies_made = r->fwd0_copies_made, f->peak_train = r->peak_train;
    f->truncated = replay_stopped_early(r);
    unsigned stop = replay_capture_stopped(r);
    f->stopped = stop == VT_TRAILER_DISK_FULL      ? ADVICE_STOPPED_DISK_FULL
                 : stop == VT_TRAILER_OUTPUT_ERROR ? ADVICE_STOPPED_OUTPUT_ERROR
                                                   : ADVICE_STOPPED_NOT;
    f->no_training = r->status == READER_OK && !r->ended && !r->has_oom && !r->backward_passes &&
                     !r->iterations && (r->phase_peak[PHASE_FORWARD] || r->phase_peak[PHASE_EVAL]);
    f->peak_phase = f->process_phase = r->peak_process ? phase_name(r->peak_phase) : NULL;
    f->phase_seen = 0; /* the phases any allocation was of (model_no_forward) */
    for (int ph = 0; ph < PHASE_COUNT; ph++)
        f->phase_seen |= r->phase_peak[ph] ? 1u << ph : 0;
    f->peak_bwd = (int)r->peak_bwd;
    f->peak_iter = (int)r->peak_iter;
    if (r->tensor_mode && r->at_tensors.n) { /* the model explains the tensors' peak */
        f->peak_phase = phase_name(r->tensors_phase);
        f->peak_bwd = (int)r->tensors_bwd;
        f->peak_iter = (int)r->tensors_iter;
    }
    report_step_pass(c, r); /* (a no-grad pass whose outputs the step uses: a rollout) */
    report_tokens_joined(r, f->inferred, f); /* (a DPO loop's chosen and rejected, joined) */
    report_images_folded(r, f->inferred ? &c->inferred : NULL); /* (a clip's frames) */
    f->has_cat_peaks = r->has_cat_peaks;
    for (int i = 0; r->has_cat_peaks && i < CAT_COUNT; i++)
        f->cat_peak[i] = r->cat_peak[i];
    /* transformers' KV cache in each snapshot the model reads (advice's use_cache=False); an
     * EMA's copy of the weights among the parameters: not the model's (P, the trainable share,
     * what the weights predict leave it out); peft's adapters */
    made_memo mm = {0};
    made_bytes at_peak = made_under(r->t, &mm, &r->at_peak), at_tensors, at_oom;
    memset(&at_tensors, 0, sizeof at_tensors);
    memset(&at_oom, 0, sizeof at_oom);
    if (f->has_at_tensors)
        at_tensors = made_under(r->t, &mm, &r->at_tensors);
    if (r->has_oom)
        at_oom = made_under(r->t, &mm, &r->at_oom);
    f->kv_at_peak = at_peak.kv, f->kv_at_tensors = at_tensors.kv, f->kv_at_oom = at_oom.kv;
    f->tensors_no_kv = r->tensors_no_kv_peak, f->kv_replaced = replay_kv_replaced(r);
    f->kv_unmeasured = replay_kv_unmeasured(r) && !f->no_training; /* (forwards only: none kept) */
    f->kv_read_bytes = r->kv_read_bytes;
    f->ema_at_peak = at_peak.ema.bytes[CAT_PARAMETERS];
    f->ema_at_tensors = at_tensors.ema.bytes[CAT_PARAMETERS];
    f->ema_at_oom = at_oom.ema.bytes[CAT_PARAMETERS];
    f->copies_at_peak = at_peak.copies, f->copies_at_tensors = at_tensors.copies;
    f->copies_at_oom = at_oom.copies;
    report_data(r, f); /* (the program's data among the inputs: no batch sizes it) */
    report_grads(r, f);
    report_oom_passes(r, f); /* (what a step made after its passes of one forward) */
    int ema_which = at_oom.ema_which       ? at_oom.ema_which
                    : at_tensors.ema_which ? at_tensors.ema_which
                                           : at_peak.ema_which;
    uint64_t ema = r->has_oom          ? f->ema_at_oom
                   : f->has_at_tensors ? f->ema_at_tensors
                                       : f->ema_at_peak;
    f->ema_words = recognize_ema_words(ema_which);
    if (f->inferred && ema)
        less_ema(c, r, &mm, ema, f->ema_words);
    made_map_free(&mm.stacks);
    made_map_free(&mm.codes);
    uint64_t params =
        r->has_cat_peaks ? r->cat_peak[CAT_PARAMETERS] : r->at_peak.by_cat.bytes[CAT_PARAMETERS];
    uint64_t grads = r->has_cat_peaks ? r->cat_peak[CAT_GRADIENTS] : 0;
    uint64_t weight_grads = repcache_weight_gradients(r); /* (a representation cache's: none) */
    if (weight_grads && weight_grads < grads)
        grads = weight_grads;
    /* what was trained and what was on, from the code on the stacks and the measured state */
    recognize_input ri = {
        .t = r->t,
        .inferred = f->inferred,
        .tensor_mode = r->tensor_mode,
        .iterations = (int)r->iterations,
        /* (not one the out-of-memory error cut short) */
        .backward_done = (int)r->backward_passes -
                         (r->has_oom && r->oom_phase == PHASE_BACKWARD && r->backward_passes),
        /* (its first backward: no set of gradients was finished before; one past that had
         * made all, which an accumulating loop keeps) */
        .grads_cut = r->has_oom && r->oom_phase == PHASE_BACKWARD && r->backward_passes <= 1
                         ? 1
                         : 2 * (r->has_oom && r->oom_new_step), /* (a step of a new kind) */
        .passes_shared = r->free_steps_shared && r->tensor_mode,
        .compile_phase = r->phase_peak[PHASE_COMPILE] != 0,
        .forward_seen = r->phase_peak[PHASE_FORWARD] != 0,
        .param_bytes = params > ema ? params - ema : params,
        .grad_peak = grads,
        .grad_union = r->grad_union,
        .grad_sets = r->grad_sets,
        .grad_union_lower = r->grad_union_lower,
        .optim_peak = optim_kept(r), /* (the state kept: not one copy's overlap) */
        .optim_own = own_copies(r),
        .has_cat_peaks = r->has_cat_peaks,
        .grad_scaler = f->grad_scaler,
        .state_cut = replay_oom_in_step(r) && r->iterations == 1,
        .adapter_bytes = at_peak.peft.bytes[CAT_PARAMETERS],
        .adapters16 = c->adapters16,
        /* at the moment the model explains (advice's use_cache=False saves it there) */
        .kv_cache_bytes = cat_breakdown_total(r->has_oom          ? &f->kv_at_oom
                                              : f->has_at_tensors ? &f->kv_at_tensors
                                                                  : &f->kv_at_peak),
        .kv_cache_replaced = f->kv_replaced,
        .kv_cache_unmeasured = f->kv_unmeasured,
        .kv_cache_at = r->has_oom          ? "at the out-of-memory error"
                       : f->has_at_tensors ? "at the tensors' peak"
                                           : "at the peak",
        .ema_bytes = ema,
        .ema_which = ema_which,
        .param_elem = f->inferred && f->inferred->v[INFER_param_dtype_bytes].known
                          ? (unsigned)f->inferred->v[INFER_param_dtype_bytes].value
                          : 4,
        .state_elem = trained_elem,
        .master_bytes = f->inferred ? f->inferred->master_bytes : 0,
        .trained_by_copies = f->inferred ? f->inferred->trained_by_copies : 0,
        .copies_freed = r->fwd0_copies_freed,
        .optim_ctor = r->optim_ctor_bytes,
    };
    /* the activations' share torch's convolution layers made, where the most were live */
    const struct {
        const replay_snapshot *s;
        const made_bytes *b;
        const char *at;
    } moments[] = {{&r->at_peak, &at_peak, "at the peak"},
                   {f->has_at_tensors ? &r->at_tensors : NULL, &at_tensors, "at the tensors' peak"},
                   {r->has_oom ? &r->at_oom : NULL, &at_oom, "at the out-of-memory error"}};
    for (size_t i = 0; i < sizeof moments / sizeof moments[0]; i++)
        if (moments[i].s && moments[i].s->by_cat.bytes[CAT_ACTIVATIONS] > ri.act_bytes) {
            ri.act_bytes = moments[i].s->by_cat.bytes[CAT_ACTIVATIONS];
            ri.conv_act_bytes = moments[i].b->conv_act, ri.act_at = moments[i].at;
        }
    ri.attention = (r->has_cat_peaks && r->cat_peak[CAT_ATTENTION]) ||
                   tables_code_find(r->t, "torch/nn/modules/activation.py",
                                    "MultiheadAttention.forward", NULL, NULL, 0);
    state_layout_read(r, ri.param_elem, &ri.layout); /* (8-bit pairs, or one state: optim) */
    weights_copy wc; /* (where no gradient says which weights train, a copy among them says) */
    if (weights_copy_at(r->has_oom          ? &r->at_oom
                        : f->has_at_tensors ? &r->at_tensors
                                            : &r->at_peak,
                        r->t, &wc) == 1)
        ri.copy_tensors = wc.tensors, ri.copy_bytes = wc.bytes, ri.copy_reordered = wc.reordered;
    if (weights_copy_beside_at(r->has_oom          ? &r->at_oom
                               : f->has_at_tensors ? &r->at_tensors
                                                   : &r->at_peak,
                               &wc, &ri.beside_extra) == 1)
        ri.beside_tensors = wc.tensors, ri.beside_bytes = wc.bytes;
    recognize_run(&ri, &c->recog);
    f->recog = &c->recog;
    if (c->recog.family == FAM_ENCODER_DECODER && f->inferred) {
        /* its encoder and decoder stacks differ (a T5's decoder blocks add cross-attention): one
         * repeating block, one sequence's position ids, and B from them are not its shape */
        static const infer_key one_stack[] = {INFER_n_layer, INFER_block_size, INFER_batch_size};
        for (size_t i = 0; i < sizeof one_stack / sizeof one_stack[0]; i++)
            c->inferred.v[one_stack[i]].known = 0;
    }
    if (f->inferred) /* the batch the moment explained ran (a ramp's is not its first's) */
        report_batch_now(r, f->has_at_tensors ? &r->at_tensors : &r->at_peak, f->inferred,
                         &f->tokens_now, &f->images_now);
    if (r->has_oom) {
        f->has_oom = 1;
        f->oom_requested = r->oom_requested;
        f->oom_capacity = r->oom_capacity ? r->oom_capacity
                          : f->card_bytes ? f->card_bytes
                                          : f->device_total;
        /* a card larger than the device (run --card 64GiB on 16 GiB): the device refused it,
         * at its own capacity; the record says the card's */
        f->oom_device_decided =
            !r->oom_emulated && f->card_bytes && f->device_total && f->card_bytes > f->device_total;
        if (f->oom_device_decided)
            f->oom_capacity = f->device_total;
        f->at_oom = r->at_oom.by_cat;
        /* (a request of a weight's size in the backward: a forward's B·T·d can match one) */
        f->bwd_weight_oom =
            report_weight_sized(&r->at_oom, r->oom_phase == PHASE_BACKWARD ? r->oom_requested : 0,
                                &f->oom_request_weight);
        f->oom_cache = r->oom_cache_released;
        f->at_oom.bytes[CAT_CACHE] += 0; /* the released cache is reported beside, not double */
        f->oom_outside = r->at_oom.by_cat.bytes[CAT_CONTEXT] +
                         r->at_oom.by_cat.bytes[CAT_KERNEL_CODE] +
                         r->at_oom.by_cat.bytes[CAT_EXTERNAL];
        f->oom_phase = phase_name(r->oom_phase);
        const tables_stack *ost = r->oom_stack ? tables_stack_get(r->t, r->oom_stack) : NULL;
        f->oom_step_pass =
            r->oom_phase == PHASE_EVAL && ost && evalsrc_stack(&r->eval_src, r->t, ost) == 2;
        f->oom_iter = (int)r->oom_iter;
        f->oom_bwd = (int)r->oom_bwd;
        f->oom_bwd_no_ws = r->oom_phase == PHASE_BACKWARD;
        for (size_t i = 0; i < r->at_oom.n; i++) /* (the backward thread's cuBLAS handle's) */
            if (r->at_oom.items[i].workspace && r->at_oom.items[i].phase_alloc == PHASE_BACKWARD)
                f->oom_bwd_no_ws = 0;
        f->oom_new_step = r->oom_new_step;
        replay_site_text(r, r->oom_stack, c->site_oom, sizeof c->site_oom);
        f->oom_site = c->site_oom;
        f->oom_pytorch_pattern = r->oom_pytorch_pattern;
        f->oom_frozen_forward = r->oom_frozen_forward;
        f->has_oom_ahead = fwd_ahead_measure(&r->at_oom, &f->oom_ahead);
    }
    return report_sites(c);
}

int report_build(report_ctx *c, char *err, size_t errlen)
{
    if (report_fill(c) < 0 || report_modules(c) < 0) {
        snprintf(err, errlen, "out of memory collecting the allocation sites");
        return -1;
    }
    c->model = malloc(sizeof *c->model);
    if (!c->model) {
        snprintf(err, errlen, "out of memory building the model section");
        return -1;
    }
    for (size_t i = 0; i < c->nsites && !c->facts.params_site; i++)
        if (c->sites[i].category == CAT_PARAMETERS) /* (most bytes first) */
            c->facts.params_site = c->sites[i].text;
    char merr[400];
    if (model_build(c->model, &c->facts, &c->opts, merr, sizeof merr) < 0) {
        snprintf(err, errlen, "configuration: %s", merr);
        free(c->model);
        c->model = NULL;
        return -1;
    }
    report_growth_fill(c);
    return 0;
}

/* of_trace: report_of_trace / report_of_stream (fp NULL: the file at path). */
static int of_trace(const char *path, FILE *fp, const void *head, size_t nhead, report_ctx *c,
                    char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->top = 3;
    c->runs = calloc(1, sizeof *c->runs);
    if (!c->runs) {
        snprintf(err, errlen, "out of memory");
        return VT_EXIT_USAGE;
    }
    int r = fp ? replay_stream(fp, path, head, nhead, &c->runs[0], err, errlen)
               : replay_file(path, &c->runs[0], err, errlen);
    c->nruns = 1;
    if (r)
        return r;
    return report_build(c, err, errlen) < 0 ? VT_EXIT_USAGE : 0;
}

int report_of_trace(const char *path, report_ctx *c, char *err, size_t errlen)
{
    return of_trace(path, NULL, NULL, 0, c, err, errlen);
}

int report_of_stream(FILE *fp, const char *path, const void *head, size_t nhead, report_ctx *c,
                     char *err, size_t errlen)
{
    return of_trace(path, fp, head, nhead, c, err, errlen);
}

void report_free(report_ctx *c)
{
    for (int i = 0; c->runs && i < c->nruns; i++)
        replay_free(&c->runs[i]);
    free(c->runs);
    free(c->sites);
    free(c->model);
    free(c->mod_peak);
    free(c->mod_oom);
    c->mod_peak = c->mod_oom = NULL;
    c->nmod_peak = c->nmod_oom = 0;
    c->runs = NULL;
    c->sites = NULL;
    c->model = NULL;
    c->nruns = 0;
}
