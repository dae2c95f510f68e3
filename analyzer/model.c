/* model.c — the report's model sections (model.h): the run's nanoGPT configuration, the
 * measured peak beside the documents' and the refined formula, the OOM diagnosis and the
 * calibrated advice. Formulas: formula.c; calibration and candidates: advice.c. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advice.h"
#include "cards.h"
#include "config.h"
#include "formula.h"

/* Everything both outputs need, computed once. */
typedef struct model_ctx {
    nano_config cfg;
    char note[200];  /* how the run's shape was adjusted, "" if not */
    gpt_shape shape; /* the run (iteration0 when no optimizer step was seen) */
    doc_formula docf;
    cat_breakdown measured, doc, refined;
    char reason_doc[CAT_COUNT][200];
    char reason_ref[CAT_COUNT][200];
    double mult_act, mult_all; /* effective activation multipliers */
    model_calib calib;
    prediction current;
    uint64_t capacity;
    char capacity_name[80];
    int partial;
    oom_cause cause;
    char why[300];
    int expandable_set;
    uint64_t largest_batch;
    advice_item items[ADVICE_MAX];
    int nitems;
} model_ctx;

static double mibf(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

/* apply_overrides: `vramtrace report` flags (key=value, optional leading --) over the config. */
static int apply_overrides(model_ctx *m, const model_opts *o, char *err, size_t errlen)
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
static void explain(model_ctx *m, const run_facts *f)
{
    const gpt_shape *s = &m->shape;
    uint64_t P = formula_params_exact(s);
    uint64_t total = cat_breakdown_total(&m->measured);
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
        if (off_doc) {
            switch ((category)c) {
            case CAT_PARAMETERS:
                if (fabs((double)me - 4.0 * P) < 0.15 * 4.0 * P)
                    snprintf(rd, n,
                             "parameters are fp32 under autocast (4 B/param), the documents "
                             "assumed fp16 (2 B/param)");
                else
                    snprintf(rd, n, "%.2f B/param measured, the documents assumed 2 (fp16)",
                             (double)me / P);
                break;
            case CAT_GRADIENTS:
                if (me == 0)
                    snprintf(
                        rd, n, "no .grad alive at the peak: %s",
                        s->A > 1 && !s->iteration0 ? "the peak came before the first backward"
                        : s->iteration0
                            ? "the run had not reached a backward yet"
                            : "with A=1 zero_grad(set_to_none=True) frees them before the forward");
                else
                    snprintf(rd, n,
                             "gradients are fp32 (%.1f B/param), the documents assumed fp16%s",
                             (double)me / P,
                             s->A > 1 ? "; they stay alive across micro-steps (A > 1)" : "");
                break;
            case CAT_OPTIMIZER:
                if (me == 0)
                    snprintf(rd, n,
                             "no AdamW state yet: the run stopped before its first optimizer step");
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
                snprintf(
                    rd, n,
                    "the documents fold logits into activations; cross-entropy over V=%llu keeps "
                    "about %d*B*T*V bytes",
                    (unsigned long long)s->V, s->compile ? 8 : 12);
                break;
            case CAT_ATTENTION:
                if (me == 0)
                    snprintf(
                        rd, n,
                        "attention is fused (flash / SDPA): no B*H*T^2 score matrices are kept");
                else
                    snprintf(
                        rd, n,
                        "attention scores are materialized (unfused) and saved for every layer");
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
                snprintf(rd, n,
                         "kernel images %.0f MiB; the documents' 0.5-1 GB is for torch.compile",
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
            if (c == CAT_OPTIMIZER)
                snprintf(rr, n, "no AdamW state at the peak");
            else
                snprintf(rr, n, "none measured (classified elsewhere, or not reached)");
        }
    }
}

/* model_build: configuration, formulas, calibration, OOM cause and advice. 0 or -1 + err. */
static int model_build(model_ctx *m, const run_facts *f, const model_opts *o, char *err,
                       size_t errlen)
{
    memset(m, 0, sizeof *m);
    config_init(&m->cfg);
    if (config_from_cmdline(&m->cfg, f->argc, f->argv, f->cwd, err, errlen) < 0)
        return -1;
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
    /* compile=True that ran eager: our simulation says so; a complete run shows it by keeping
     * eager's 12*N*V of logits/loss (compiled keeps about 8*N*V) */
    if (m->shape.compile) {
        int sim = 0;
        for (int i = 0; i < f->argc && f->argv && f->argv[i]; i++)
            sim |= strstr(f->argv[i], "sim_train.py") != NULL;
        double nv = (double)m->shape.B * (double)m->shape.T * (double)m->shape.V;
        if (sim || (!f->has_oom && (double)m->measured.bytes[CAT_LOGITS] > 10.0 * nv)) {
            m->shape.compile = 0;
            snprintf(m->note, sizeof m->note,
                     "compile=True ran as eager (%s): the formulas use eager mode",
                     sim ? "the simulation simulates compile as eager"
                         : "logits/loss kept about 12*B*T*V bytes");
        }
    }
    if (m->measured.bytes[CAT_ATTENTION] > 0)
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
    gpt_shape steady = m->shape;
    steady.iteration0 = 0;
    advice_predict(&m->calib, &steady, &m->current);
    if (f->has_oom) {
        uint64_t cap = f->oom_capacity ? f->oom_capacity : m->capacity;
        m->cause = advice_oom_cause(&f->at_oom, f->oom_requested, cap, f->oom_cache, f->oom_outside,
                                    f->oom_phase, f->iterations, m->why, sizeof m->why);
        /* what the step needs is at least what was live plus what it asked for */
        uint64_t need = cat_breakdown_total(&f->at_oom) + f->oom_requested;
        if (m->current.peak_bytes < need)
            m->current.peak_bytes = need;
    }
    int cur_fits =
        f->has_oom ? 0 : advice_fits(m->current.peak_bytes, m->capacity, ADVICE_HEADROOM);
    m->largest_batch = advice_largest_batch(&m->calib, &steady, m->capacity, ADVICE_HEADROOM);
    m->nitems = advice_candidates(&m->calib, &steady, m->capacity,
                                  f->has_oom && m->cause == OOM_FRAGMENTATION, m->expandable_set,
                                  cur_fits, m->items, ADVICE_MAX);
    return 0;
}

/* ---- text ------------------------------------------------------------------------------ */

static void print_formula(FILE *out, const model_ctx *m)
{
    char b1[32], b2[32], b3[32];
    const gpt_shape *s = &m->shape;
    fprintf(out,
            "\nformula comparison at the peak (N = B*T = %llu tokens; P = %.2f M parameters, "
            "nanoGPT logs %.2f M)\n",
            (unsigned long long)(s->B * s->T), formula_params_exact(s) / 1e6,
            m->docf.params_reported / 1e6);
    fprintf(out, "  %-18s %12s %12s %12s %9s %9s\n", "category", "measured", "documents", "refined",
            "meas/doc", "meas/ref");
    int note = 0;
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t me = m->measured.bytes[c], d = m->doc.bytes[c], r = m->refined.bytes[c];
        if (!me && !d && !r && c != CAT_UNKNOWN)
            continue;
        char rd[16] = "-", rr[16] = "-";
        if (d)
            snprintf(rd, sizeof rd, "%.2f", (double)me / d);
        if (r)
            snprintf(rr, sizeof rr, "%.2f", (double)me / r);
        fprintf(out, "  %-18s %12s %12s %12s %9s %9s%s\n", category_name((category)c),
                card_format_bytes(me, b1, sizeof b1), card_format_bytes(d, b2, sizeof b2),
                card_format_bytes(r, b3, sizeof b3), rd, rr,
                (m->reason_doc[c][0] || m->reason_ref[c][0]) ? "  *" : "");
        note |= m->reason_doc[c][0] || m->reason_ref[c][0];
    }
    fprintf(out,
            "  effective activation multiplier (measured / (B*T*d*L*2 B)): %.1f activations alone, "
            "%.1f with "
            "logits/loss and attention; the documents use 24 (basic) and 160 (empirical)\n",
            m->mult_act, m->mult_all);
    if (note)
        fprintf(out, "  * where measured and formula differ by more than 25 %%:\n");
    for (int c = 0; c < CAT_COUNT; c++) {
        if (m->reason_doc[c][0])
            fprintf(out, "    %s (vs documents): %s\n", category_name((category)c),
                    m->reason_doc[c]);
        if (m->reason_ref[c][0])
            fprintf(out, "    %s (vs refined): %s\n", category_name((category)c), m->reason_ref[c]);
    }
}

static void print_oom(FILE *out, const model_ctx *m, const run_facts *f)
{
    char b1[32], b2[32];
    fprintf(out, "\nOOM: %s requested", card_format_bytes(f->oom_requested, b1, sizeof b1));
    if (f->oom_site && *f->oom_site)
        fprintf(out, " at %s", f->oom_site);
    if (f->oom_phase && *f->oom_phase)
        fprintf(out, " during %s", f->oom_phase);
    uint64_t cap = f->oom_capacity ? f->oom_capacity : m->capacity;
    fprintf(out, "; capacity %s%s\n", card_format_bytes(cap, b2, sizeof b2),
            f->oom_pytorch_pattern ? " (PyTorch released its cache and failed again)" : "");
    fprintf(out, "  live at the OOM:");
    for (int c = 0; c < CAT_COUNT; c++)
        if (f->at_oom.bytes[c])
            fprintf(out, " %s %s;", category_name((category)c),
                    card_format_bytes(f->at_oom.bytes[c], b1, sizeof b1));
    fprintf(out, "\n  allocator cache %s, outside PyTorch %s\n",
            card_format_bytes(f->oom_cache, b1, sizeof b1),
            card_format_bytes(f->oom_outside, b2, sizeof b2));
    fprintf(out, "  cause: %s\n    %s\n", advice_cause_text(m->cause), m->why);
}

static void print_advice(FILE *out, const model_ctx *m, const model_opts *o)
{
    char b1[32], b2[32];
    if (m->capacity)
        fprintf(out,
                "\nadvice for %s (%s; keep >= %.0f %% free); current configuration needs ~%s\n",
                m->capacity_name, card_format_bytes(m->capacity, b1, sizeof b1),
                ADVICE_HEADROOM * 100, card_format_bytes(m->current.peak_bytes, b2, sizeof b2));
    else
        fprintf(out,
                "\nadvice (no card size known: pass --card rtx4070 or a size); current "
                "configuration needs ~%s\n",
                card_format_bytes(m->current.peak_bytes, b2, sizeof b2));
    const char *bold = o && o->color ? "\033[1m" : "", *plain = o && o->color ? "\033[0m" : "";
    for (int i = 0; i < m->nitems; i++) {
        const advice_item *it = &m->items[i];
        char fit[96];
        if (it->fits < 0)
            snprintf(fit, sizeof fit, "card size unknown");
        else if (it->headroom_bytes >= 0)
            snprintf(fit, sizeof fit, "%s (%s left, %.0f %%)",
                     it->fits ? "fits" : "too tight for 5 % headroom",
                     card_format_bytes((uint64_t)it->headroom_bytes, b1, sizeof b1),
                     100.0 * (double)it->headroom_bytes / (double)m->capacity);
        else
            snprintf(fit, sizeof fit, "does not fit (%s over)",
                     card_format_bytes((uint64_t)-it->headroom_bytes, b1, sizeof b1));
        char extra[96] = "";
        if (it->required > it->predicted_peak)
            snprintf(extra, sizeof extra, " (+%s room for allocator fragmentation)",
                     card_format_bytes(it->required - it->predicted_peak, b1, sizeof b1));
        fprintf(out, "  %s%s %s%s\n      predicted peak %s%s: %s\n      %s\n",
                it->recommended ? bold : "", it->recommended ? "recommended:" : "-", it->change,
                it->recommended ? plain : "", card_format_bytes(it->predicted_peak, b2, sizeof b2),
                extra, fit, it->note);
        if (it->cmdline[0])
            fprintf(out, "      change: %s\n", it->cmdline);
    }
    if (m->capacity)
        fprintf(out, "  largest batch_size that fits (other settings unchanged): %llu\n",
                (unsigned long long)m->largest_batch);
}

/* model_new: a built context (free() it), or NULL with the reason printed on stderr. */
static model_ctx *model_new(const run_facts *f, const model_opts *o)
{
    model_ctx *m = malloc(sizeof *m);
    if (!m) {
        fprintf(stderr, "vramtrace report: out of memory building the model section\n");
        return NULL;
    }
    char err[512];
    if (model_build(m, f, o, err, sizeof err) < 0) {
        fprintf(stderr, "vramtrace report: configuration: %s\n", err);
        free(m);
        return NULL;
    }
    return m;
}

int model_report_text(FILE *out, const run_facts *f, const model_opts *o)
{
    model_ctx *m = model_new(f, o);
    if (!m)
        return -1;
    config_print(out, &m->cfg);
    if (m->note[0])
        fprintf(out, "  note: %s\n", m->note);
    print_formula(out, m);
    if (f->has_oom)
        print_oom(out, m, f);
    print_advice(out, m, o);
    free(m);
    return 0;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static cJSON *breakdown_json(const cat_breakdown *b)
{
    cJSON *o = cJSON_CreateObject();
    for (int c = 0; c < CAT_COUNT; c++)
        cJSON_AddNumberToObject(o, category_key((category)c), (double)b->bytes[c]);
    return o;
}

static void add_formula_json(cJSON *root, const model_ctx *m)
{
    cJSON *fo = cJSON_AddObjectToObject(root, "formula");
    uint64_t tm = 0, td = 0, tr = 0;
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t me = m->measured.bytes[c], d = m->doc.bytes[c], r = m->refined.bytes[c];
        tm += me, td += d, tr += r;
        cJSON *e = cJSON_AddObjectToObject(fo, category_key((category)c));
        cJSON_AddNumberToObject(e, "measured_bytes", (double)me);
        cJSON_AddNumberToObject(e, "document_bytes", (double)d);
        cJSON_AddNumberToObject(e, "refined_bytes", (double)r);
        if (r)
            cJSON_AddNumberToObject(e, "ratio", (double)me / r);
        else
            cJSON_AddNullToObject(e, "ratio");
        if (d)
            cJSON_AddNumberToObject(e, "ratio_document", (double)me / d);
        else
            cJSON_AddNullToObject(e, "ratio_document");
        if (m->reason_doc[c][0])
            cJSON_AddStringToObject(e, "reason", m->reason_doc[c]);
        if (m->reason_ref[c][0])
            cJSON_AddStringToObject(e, "reason_refined", m->reason_ref[c]);
    }
    cJSON *t = cJSON_AddObjectToObject(fo, "total");
    cJSON_AddNumberToObject(t, "measured_bytes", (double)tm);
    cJSON_AddNumberToObject(t, "document_bytes", (double)td);
    cJSON_AddNumberToObject(t, "refined_bytes", (double)tr);
    cJSON_AddNumberToObject(t, "ratio", tr ? (double)tm / tr : 0);
    cJSON *mu = cJSON_AddObjectToObject(fo, "activation_multiplier");
    cJSON_AddNumberToObject(mu, "measured", m->mult_act);
    cJSON_AddNumberToObject(mu, "measured_with_logits_attention", m->mult_all);
    cJSON_AddNumberToObject(mu, "document_basic", FORMULA_DOC_MULT_BASIC);
    cJSON_AddNumberToObject(mu, "document_empirical", FORMULA_DOC_MULT_EMPIRICAL);
    cJSON *pc = cJSON_AddObjectToObject(fo, "parameter_count");
    cJSON_AddNumberToObject(pc, "exact", (double)formula_params_exact(&m->shape));
    cJSON_AddNumberToObject(pc, "reported", (double)m->docf.params_reported);
    cJSON_AddNumberToObject(pc, "document_estimate", (double)m->docf.params_estimate);
    cJSON_AddNumberToObject(pc, "decayed", (double)m->docf.decayed_params);
}

static void add_oom_json(cJSON *root, const model_ctx *m, const run_facts *f)
{
    if (!f->has_oom) {
        cJSON_AddNullToObject(root, "oom");
        return;
    }
    cJSON *oo = cJSON_AddObjectToObject(root, "oom");
    cJSON_AddNumberToObject(oo, "requested_bytes", (double)f->oom_requested);
    cJSON_AddNumberToObject(oo, "capacity_bytes",
                            (double)(f->oom_capacity ? f->oom_capacity : m->capacity));
    cJSON_AddStringToObject(oo, "cause", advice_cause_key(m->cause));
    cJSON_AddStringToObject(oo, "cause_text", advice_cause_text(m->cause));
    cJSON_AddStringToObject(oo, "evidence", m->why);
    cJSON_AddItemToObject(oo, "live_by_category", breakdown_json(&f->at_oom));
    cJSON_AddNumberToObject(oo, "allocator_cache_bytes", (double)f->oom_cache);
    cJSON_AddNumberToObject(oo, "outside_pytorch_bytes", (double)f->oom_outside);
    cJSON_AddStringToObject(oo, "phase", f->oom_phase ? f->oom_phase : "");
    cJSON_AddStringToObject(oo, "site", f->oom_site ? f->oom_site : "");
    cJSON_AddBoolToObject(oo, "pytorch_retry", f->oom_pytorch_pattern != 0);
}

/* advice_json: one advice item. */
static cJSON *advice_json(const advice_item *it)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "change", it->change);
    cJSON_AddStringToObject(e, "command_line", it->cmdline);
    cJSON_AddNumberToObject(e, "predicted_peak_bytes", (double)it->predicted_peak);
    cJSON_AddNumberToObject(e, "predicted_reserved_bytes", (double)it->predicted_reserved);
    cJSON_AddNumberToObject(e, "predicted_allocated_bytes", (double)it->predicted_tensors);
    cJSON_AddNumberToObject(e, "required_bytes", (double)it->required);
    if (it->fits < 0)
        cJSON_AddNullToObject(e, "fits");
    else
        cJSON_AddBoolToObject(e, "fits", it->fits == 1);
    cJSON_AddNumberToObject(e, "headroom_bytes", (double)it->headroom_bytes);
    cJSON_AddStringToObject(e, "note", it->note);
    cJSON_AddBoolToObject(e, "recommended", it->recommended != 0);
    cJSON_AddNumberToObject(e, "batch_size", (double)it->shape.B);
    cJSON_AddNumberToObject(e, "gradient_accumulation_steps", (double)it->shape.A);
    cJSON_AddNumberToObject(e, "block_size", (double)it->shape.T);
    return e;
}

int model_report_json(cJSON *root, const run_facts *f, const model_opts *o)
{
    model_ctx *m = model_new(f, o);
    if (!m)
        return -1;
    config_add_json(root, &m->cfg);
    if (m->note[0])
        cJSON_AddStringToObject(root, "config_note", m->note);
    add_formula_json(root, m);
    add_oom_json(root, m, f);
    cJSON *adv = cJSON_AddArrayToObject(root, "advice");
    for (int i = 0; i < m->nitems; i++)
        cJSON_AddItemToArray(adv, advice_json(&m->items[i]));
    cJSON *pr = cJSON_AddObjectToObject(root, "prediction");
    cJSON_AddNumberToObject(pr, "current_peak_bytes", (double)m->current.peak_bytes);
    cJSON_AddNumberToObject(pr, "current_reserved_bytes", (double)m->current.reserved_bytes);
    cJSON_AddNumberToObject(pr, "current_allocated_bytes", (double)m->current.tensor_bytes);
    cJSON_AddNumberToObject(pr, "capacity_bytes", (double)m->capacity);
    cJSON_AddStringToObject(pr, "capacity_name", m->capacity_name);
    cJSON_AddNumberToObject(pr, "headroom_fraction", ADVICE_HEADROOM);
    cJSON_AddNumberToObject(pr, "largest_batch_size", (double)m->largest_batch);
    cJSON_AddItemToObject(pr, "calibrated_by_category", breakdown_json(&m->current.by_cat));
    free(m);
    return 0;
}
