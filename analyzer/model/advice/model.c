/* model.c — the model of a run (model.h): its nanoGPT configuration, the measured peak beside
 * the documents' and the refined formula, the OOM diagnosis and the calibrated advice, computed
 * once; printing is views/model_text.c and views/model_json.c. Formulas: formula.c;
 * calibration and candidates: advice.c. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advice.h"
#include "cfgsrc.h"
#include "config.h"
#include "formula.h"

static double mibf(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

/* apply_overrides: `vramtrace report` flags (key=value, optional leading --) over the config. */
static int apply_overrides(model_result *m, const model_opts *o, char *err, size_t errlen)
{
    for (int i = 0; o && i < o->noverrides; i++) {
        char key[64];
        const char *val = config_arg_key(o->overrides[i], key, sizeof key);
        if (!val) {
            snprintf(err, errlen, "override '%s' is not key=value (e.g. batch_size=8)",
                     o->overrides[i]);
            return -1;
        }
        int rc = config_set(&m->cfg, key, val, CONFIG_SRC_FLAG, o->overrides[i], err, errlen);
        if (rc < 0)
            return -1;
        for (int k = 0; rc == 0 && k < CFG_COUNT; k++)
            if (!strcmp(config_key_name((config_key)k), key))
                snprintf(m->cfg.v[k].where, sizeof m->cfg.v[k].where,
                         "given on vramtrace's command line (%.150s)", o->overrides[i]);
        if (rc == 1) {
            snprintf(
                err, errlen,
                "override '%s': unknown key '%s' (keys: batch_size, block_size, "
                "gradient_accumulation_steps, n_layer, n_head, n_embd, vocab_size, dropout, bias, "
                "dtype, compile)",
                o->overrides[i], key);
            return -1;
        }
    }
    return 0;
}

/* explain: the one-line reasons where measured and formula differ by more than 25 %. */
static void explain(model_result *m, const run_facts *f)
{
    const gpt_shape *s = &m->shape;
    uint64_t P = m->params_trace ? m->params_trace : formula_params_exact(s);
    uint64_t total = cat_breakdown_total(&m->measured);
    /* A from the run (not nanoGPT's default assumed): only then "A > 1" is a fact of the run */
    int a_known = m->cfg.v[CFG_gradient_accumulation_steps].src != CONFIG_SRC_DEFAULT;
    /* segment mode: gradients / optimizer state share segments with backward scratch */
    static const char seg_no_ratio[] =
        "segment mode counts whole segments under the phase that grew them: no bytes per "
        "parameter from it (run with --tensors)";
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t me = m->measured.bytes[c], d = m->doc.bytes[c], r = m->refined.bytes[c];
        char *rd = m->reason_doc[c], *rr = m->reason_ref[c];
        size_t n = sizeof m->reason_doc[c];
        rd[0] = rr[0] = '\0';
        /* immaterial rows (all under 2 % of the peak and 64 MiB) get no explanation */
        uint64_t big = me > d ? (me > r ? me : r) : (d > r ? d : r);
        if ((double)big < 0.02 * (double)total && big < (64ull << 20))
            continue;
        int off_doc =
            (d > 0 || me > 0) && fabs((double)me - (double)d) > 0.25 * (double)(d > 0 ? d : me);
        int off_ref =
            (r > 0 || me > 0) && fabs((double)me - (double)r) > 0.25 * (double)(r > 0 ? r : me);
        if (off_doc && !f->tensor_mode && me == 0 && (c == CAT_GRADIENTS || c == CAT_OPTIMIZER)) {
            /* segments are counted by the phase that forced them: no tensor is seen */
            snprintf(rd, n, "%s (run with --tensors)",
                     c == CAT_GRADIENTS
                         ? "segment mode cannot tell gradients from backward scratch: both are "
                           "under 'backward'"
                         : "segment mode sees only new segments: optimizer state placed in "
                           "cached ones is not attributed");
        } else if (off_doc) {
            switch ((category)c) {
            case CAT_PARAMETERS:
                if (me == 0)
                    snprintf(rd, n, "no parameter %s attributed at the peak",
                             f->tensor_mode ? "tensor" : "segment");
                else if (m->params_trace)
                    snprintf(rd, n,
                             "%.2f M parameters in the trace's weight tensors at 4 B each (fp32 "
                             "master weights), the documents assumed fp16 (2 B/param)",
                             (double)P / 1e6);
                else if (fabs((double)me - 4.0 * P) < 0.15 * 4.0 * P)
                    snprintf(rd, n,
                             "parameters are fp32 under autocast (4 B/param), the documents "
                             "assumed fp16 (2 B/param)");
                else
                    snprintf(rd, n, "%.2f B/param measured, the documents assumed 2 (fp16)",
                             (double)me / P);
                break;
            case CAT_GRADIENTS:
                if (me == 0)
                    snprintf(rd, n, "no .grad alive at the peak: %s",
                             m->measured.bytes[CAT_OPTIMIZER] > 0
                                 ? "zero_grad(set_to_none=True) had freed the last step's "
                                   "gradients, and the peak came before this step's first backward"
                             : f->iterations == 0
                                 ? "the peak came before the run's first backward"
                                 : "zero_grad(set_to_none=True) frees them between optimizer "
                                   "steps, and the peak came before a step's first backward");
                else if (!f->tensor_mode)
                    snprintf(rd, n, "%s", seg_no_ratio);
                else if (fabs((double)me - 4.0 * P) < 0.15 * 4.0 * P)
                    snprintf(
                        rd, n, "gradients are fp32 (%.1f B/param), the documents assumed fp16%s",
                        (double)me / P,
                        a_known && s->A > 1 ? "; they stay alive across micro-steps (A > 1)" : "");
                else if (m->partial && (double)me < 4.0 * P)
                    snprintf(rd, n,
                             "%.0f %% of the fp32 gradients were alive: the run stopped at the "
                             "out-of-memory error during the backward",
                             100.0 * (double)me / (4.0 * P));
                else
                    snprintf(rd, n,
                             "%.1f B/param of gradients measured, the documents assumed 2 (fp16)",
                             (double)me / P);
                break;
            case CAT_OPTIMIZER:
                if (me == 0 && f->iterations == 0)
                    snprintf(rd, n,
                             "no AdamW state yet: the run stopped before its first optimizer step");
                else if (me == 0)
                    snprintf(rd, n,
                             "no AdamW state at the peak: it came before the first "
                             "optimizer step created the state");
                else
                    snprintf(rd, n, "AdamW keeps exp_avg and exp_avg_sq (8 B) for every parameter");
                break;
            case CAT_ACTIVATIONS:
                snprintf(
                    rd, n,
                    "the documents' multiplier 24 %s: measured effective multiplier %.1f (refined: "
                    "36*N*d + 16*N + 4*N*H bytes per block)",
                    me > d ? "undercounts" : "overcounts", m->mult_act);
                break;
            case CAT_LOGITS:
                /* what this run kept, in B*T*V units (the refined formula says 8 compiled,
                 * 12 eager at the start of the loss backward) */
                snprintf(rd, n,
                         "the documents fold logits into activations; cross-entropy over V=%llu "
                         "kept %.1f*B*T*V bytes here (the refined formula: %d)",
                         (unsigned long long)s->V,
                         (double)me / ((double)s->B * (double)s->T * (double)s->V),
                         s->compile ? 8 : 12);
                break;
            case CAT_ATTENTION:
                if (me == 0)
                    snprintf(
                        rd, n,
                        "attention is fused (flash / SDPA): no B*H*T^2 score matrices are kept");
                else if (formula_attention_unfused(s, me))
                    snprintf(
                        rd, n,
                        "attention scores are materialized (unfused) and saved for every layer");
                else /* far below B*H*T^2 per layer: a fused kernel's own buffers */
                    snprintf(rd, n,
                             "attention is fused (flash / SDPA): %.1f MiB of its buffers "
                             "(log-sum-exp rows, workspaces), no B*H*T^2 score matrices",
                             (double)me / 1048576.0);
                break;
            case CAT_AUTOCAST:
                snprintf(rd, n,
                         "the documents do not count autocast's 16-bit weight copies (2 B per "
                         "matmul weight)");
                break;
            case CAT_CONTEXT:
                snprintf(rd, n,
                         "CUDA context measured %.0f MiB, the documents assume ~500 MB (driver, "
                         "lazy loading)",
                         mibf(me));
                break;
            case CAT_KERNEL_CODE:
                if (s->compile)
                    snprintf(rd, n,
                             "kernel images %.0f MiB, torch.compile's kernels included (the "
                             "documents allow 0.5-1 GB for torch.compile overall)",
                             mibf(me));
                else
                    snprintf(rd, n,
                             "kernel images %.0f MiB (modules and libraries loaded); not "
                             "in the documents' formula",
                             mibf(me));
                break;
            case CAT_CACHE:
                snprintf(
                    rd, n,
                    "the documents count the allocator's cache only as \"fragmentation\" overhead");
                break;
            default:
                if (d == 0)
                    snprintf(rd, n, "not in the documents' formula");
                break;
            }
        }
        if (off_ref && me > 0 && r > 0) {
            int grows = c == CAT_ACTIVATIONS || c == CAT_LOGITS || c == CAT_ATTENTION ||
                        c == CAT_GRADIENTS || c == CAT_AUTOCAST;
            if (m->partial && grows && me < r)
                snprintf(rr, n,
                         "the run stopped at the OOM%s%s before the step's peak: this is partial",
                         f->oom_phase && *f->oom_phase ? " in the " : "",
                         f->oom_phase ? f->oom_phase : "");
            else if (c == CAT_ACTIVATIONS && s->compile)
                snprintf(rr, n,
                         "torch.compile decides what is saved (the refined formula assumes 30*N*d "
                         "per block)");
            else
                snprintf(rr, n, "measured %.2fx the refined formula (%s)", (double)me / r,
                         category_doc((category)c));
        } else if (off_ref && me > 0 && r == 0) {
            if (c == CAT_ATTENTION)
                snprintf(rr, n, "attention is not fused: B*H*T^2 scores are materialized");
        } else if (off_ref && me == 0 && r > 0) {
            if (!f->tensor_mode && (c == CAT_GRADIENTS || c == CAT_OPTIMIZER))
                snprintf(rr, n, "not attributed in segment mode (run with --tensors)");
            else if (c == CAT_OPTIMIZER)
                snprintf(rr, n, "no AdamW state at the peak");
            else
                snprintf(rr, n, "none measured (classified elsewhere, or not reached)");
        }
    }
}

int model_build(model_result *m, const run_facts *f, const model_opts *o, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    static const config_files none = {0, NULL, 0};
    config_init(&m->cfg);
    m->cfg.files = f->files ? f->files : &none; /* a trace's files: never opened */
    if (config_from_cmdline(&m->cfg, f->argc, f->argv, f->cwd, err, errlen) < 0)
        return -1;
    cfgsrc_apply_hf(&m->cfg, m->cfg.files);
    cfgsrc_apply_inferred(&m->cfg, f->inferred);
    if (m->cfg.program != PROG_NANOGPT && f->inferred && f->inferred->v[INFER_params].known &&
        f->inferred->v[INFER_params].value > 0)
        m->params_trace = (uint64_t)f->inferred->v[INFER_params].value;
    cfgsrc_versions(&m->cfg, m->cfg.files);
    if (config_validate(&m->cfg, err, errlen) < 0) {
        /* the traced run's shape cannot be used: a note, and the defaults for both keys */
        char msg[300];
        snprintf(msg, sizeof msg, "%.240s; the formulas use n_embd=768, n_head=12", err);
        config_note(&m->cfg, msg);
        config_reset(&m->cfg, CFG_n_embd);
        config_reset(&m->cfg, CFG_n_head);
    }
    if (apply_overrides(m, o, err, errlen) < 0 || config_validate(&m->cfg, err, errlen) < 0)
        return -1;
    formula_shape_from_config(&m->cfg, &m->shape);
    m->shape.iteration0 = f->iterations == 0;
    m->measured = f->at_peak;
    if (cat_breakdown_total(&m->measured) == 0 && f->peak_reserved > 0) {
        /* no breakdown: the peaks alone, as unclassified tensor bytes (a global calibration) */
        uint64_t alloc = f->peak_allocated && f->peak_allocated <= f->peak_reserved
                             ? f->peak_allocated
                             : f->peak_reserved;
        m->measured.bytes[CAT_UNKNOWN] = alloc;
        m->measured.bytes[CAT_CACHE] = f->peak_reserved - alloc;
        if (f->peak_process > f->peak_reserved)
            m->measured.bytes[CAT_CONTEXT] = f->peak_process - f->peak_reserved;
    }
    /* compile=True that ran eager: the Python frames never entered torch.compile (our
     * simulation, a script that ignores the flag); a complete run shows it by keeping eager's
     * 12*N*V of logits/loss (compiled keeps about 8*N*V) */
    config_value *dv = &m->cfg.v[CFG_dtype];
    if (dv->src == CONFIG_SRC_DEFAULT && f->grad_scaler) {
        snprintf(dv->s, sizeof dv->s, "float16"); /* not given, but the trace shows it */
        dv->src = CONFIG_SRC_TRACE;
        snprintf(dv->where, sizeof dv->where,
                 "an enabled GradScaler allocated (scale / unscale_): fp16 mixed precision");
    } else if (dv->src == CONFIG_SRC_DEFAULT && !f->grad_scaler && f->iterations > 0 &&
               f->at_peak.bytes[CAT_AUTOCAST] > 0) {
        snprintf(dv->s, sizeof dv->s, "bfloat16");
        dv->src = CONFIG_SRC_TRACE;
        snprintf(dv->where, sizeof dv->where,
                 "16-bit autocast weight copies, no GradScaler over %d optimizer steps",
                 f->iterations);
    }
    config_value *cv = &m->cfg.v[CFG_compile];
    if (cv->src == CONFIG_SRC_DEFAULT && f->compile_frames == MODEL_COMPILE_SEEN) {
        cv->i = 1; /* not given, but the trace shows it */
        m->shape.compile = 1;
        cv->src = CONFIG_SRC_TRACE;
        snprintf(cv->where, sizeof cv->where,
                 "compiled: Python frames under torch._dynamo / torch._inductor");
    }
    if (m->shape.compile) {
        int no_frames = f->compile_frames == MODEL_COMPILE_NOT_SEEN;
        double nv = (double)m->shape.B * (double)m->shape.T * (double)m->shape.V;
        if (no_frames || (!f->has_oom && (double)m->measured.bytes[CAT_LOGITS] > 10.0 * nv)) {
            m->shape.compile = 0;
            if (cv->src == CONFIG_SRC_DEFAULT) { /* not given: what the trace shows is the value */
                cv->i = 0;
                cv->src = CONFIG_SRC_TRACE;
                snprintf(cv->where, sizeof cv->where, "ran as eager: %s",
                         no_frames ? "no Python frame under torch._dynamo / torch._inductor"
                                   : "logits/loss kept about 12*B*T*V bytes");
            } else
                snprintf(m->note, sizeof m->note,
                         "%s ran as eager (%s): the formulas use eager mode",
                         m->cfg.v[CFG_compile].src != CONFIG_SRC_DEFAULT ? "compile=True"
                         : m->cfg.program == PROG_NANOGPT
                             ? "compile (not given; nanoGPT's default True assumed)"
                             : "the run (compile not given)",
                         no_frames ? "no Python frame under torch._dynamo / torch._inductor"
                                   : "logits/loss kept about 12*B*T*V bytes");
        }
    }
    if (formula_attention_unfused(&m->shape, m->measured.bytes[CAT_ATTENTION]))
        m->shape.unfused_attention = 1;
    m->partial = f->has_oom;
    formula_documents(&m->shape, &m->docf);
    formula_documents_breakdown(&m->shape, &m->doc);
    formula_refined(&m->shape, &m->refined);
    if (m->shape.iteration0 && m->measured.bytes[CAT_GRADIENTS] == 0)
        m->refined.bytes[CAT_GRADIENTS] = 0; /* before the first backward there is no .grad */
    m->refined.bytes[CAT_CONTEXT] = FORMULA_CONTEXT_BYTES;
    double denom = (double)m->docf.act_elements * 2.0;
    if (denom > 0) {
        m->mult_act = (double)m->measured.bytes[CAT_ACTIVATIONS] / denom;
        m->mult_all = (double)(m->measured.bytes[CAT_ACTIVATIONS] + m->measured.bytes[CAT_LOGITS] +
                               m->measured.bytes[CAT_ATTENTION]) /
                      denom;
    }
    explain(m, f);

    if (o && o->target_card_bytes) {
        m->capacity = o->target_card_bytes;
        snprintf(m->capacity_name, sizeof m->capacity_name, "%s",
                 o->target_card_name ? o->target_card_name : "--card");
    } else if (f->card_bytes) {
        m->capacity = f->card_bytes;
        snprintf(m->capacity_name, sizeof m->capacity_name, "%s (emulated)",
                 f->card_name && *f->card_name ? f->card_name : "card");
    } else if (f->device_total) {
        m->capacity = f->device_total;
        snprintf(m->capacity_name, sizeof m->capacity_name, "the traced device");
    }
    m->expandable_set =
        f->alloc_conf && strcasestr(f->alloc_conf, "expandable_segments:true") != NULL;

    if (cat_breakdown_total(&m->measured) > 0)
        advice_calibrate(&m->calib, &m->shape, &m->measured, m->partial);
    else
        advice_calib_default(&m->calib, &m->shape);
    m->calib.expandable = m->expandable_set;
    m->calib.weights_exact = f->tensor_mode; /* segments mix weights with other tensors */
    if (f->has_oom && cat_breakdown_total(&f->at_oom) > 0)
        advice_calibrate_oom(&m->calib, &f->at_oom, f->oom_requested,
                             f->at_oom.bytes[CAT_GRADIENTS] > 0 ||
                                 (f->oom_phase && (!strcmp(f->oom_phase, "backward") ||
                                                   !strcmp(f->oom_phase, "optimizer"))));
    gpt_shape steady = m->shape;
    steady.iteration0 = 0;
    steady.accum_unknown = advice_accum_unknown(&m->cfg);
    advice_predict(&m->calib, &steady, &m->current);
    if (f->has_oom) {
        uint64_t cap = f->oom_capacity ? f->oom_capacity : m->capacity;
        /* the cache then: what PyTorch released to retry (segment mode sees only that), or, with
         * the allocator's tensors, every reserved byte no tensor held at the failure */
        uint64_t cache = f->oom_cache;
        if (f->tensor_mode && f->at_oom.bytes[CAT_CACHE] > cache)
            cache = f->at_oom.bytes[CAT_CACHE];
        m->cause = advice_oom_cause(&f->at_oom, f->oom_requested, cap, cache, f->oom_outside,
                                    f->oom_phase, f->iterations, m->why, sizeof m->why);
        /* what the step needs is at least what was live plus what it asked for */
        uint64_t need = cat_breakdown_total(&f->at_oom) + f->oom_requested;
        if (m->current.peak_bytes < need)
            m->current.peak_bytes = need;
        /* unused cache at the failure, but the step's tensors and what lies outside PyTorch
         * exceed the card without any cache: the micro-batch is too large, not the cache */
        uint64_t bare = m->current.tensor_bytes + f->at_oom.bytes[CAT_CONTEXT] +
                        f->at_oom.bytes[CAT_KERNEL_CODE] + f->at_oom.bytes[CAT_EXTERNAL];
        if (m->cause == OOM_FRAGMENTATION && f->tensor_mode && cap && bare > cap) {
            m->cause = OOM_ACTIVATIONS;
            snprintf(m->why, sizeof m->why,
                     "%.0f MiB sat unused in the allocator cache, more than the %.0f MiB "
                     "requested, but the step needs %.2f GiB of tensors and %.0f MiB outside "
                     "PyTorch even with no cache: more than the card",
                     (double)cache / 1048576.0, (double)f->oom_requested / 1048576.0,
                     (double)m->current.tensor_bytes / 1073741824.0,
                     (double)(bare - m->current.tensor_bytes) / 1048576.0);
        }
    }
    int cur_fits =
        f->has_oom ? 0 : advice_fits(m->current.peak_bytes, m->capacity, ADVICE_HEADROOM);
    m->largest_batch = advice_largest_batch(&m->calib, &steady, m->capacity, ADVICE_HEADROOM);
    m->nitems = advice_candidates(&m->calib, &steady, m->capacity,
                                  f->has_oom && m->cause == OOM_FRAGMENTATION, m->expandable_set,
                                  cur_fits, m->items, ADVICE_MAX);
    advice_speak(m->items, m->nitems, &m->cfg, &steady);
    return 0;
}
