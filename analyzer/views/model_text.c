/* model_text.c — the model's sections of the text report (model_views.h): configuration, what
 * was trained, the formula comparison (or why none applies), OOM diagnosis and advice, printed
 * from a built model_result. */
#include <stdio.h>
#include <string.h>

#include "cards.h"
#include "config_view.h"
#include "escape.h"
#include "model_views.h"

/* tx: s as a terminal may show it (escape.h): the recognition's evidence names the trace's own
 * code (a class, a qualname, a file name), which may hold terminal escapes */
static const char *tx(const char *s, char *buf, size_t n)
{
    escape_term(s, strlen(s), buf, n);
    return buf;
}

const char *model_trained_unsure(const model_result *m)
{
    const run_recognition *r = &m->rec;
    if (m->shape.no_training || r->feat[FEATURE_LORA].state == FEAT_ON)
        return NULL; /* (LoRA's adapters are in its blocks) */
    /* (a step ran: an OOM in a first backward leaves weights it had not reached yet without a
     * gradient, not frozen) */
    if (r->trainable && !r->trainable_lower && !m->shape.iteration0 && m->shape.train_frac > 0 &&
        m->shape.train_frac < 0.5)
        return "most weights take no gradient (trainable below): which model's weights train "
               "is not known";
    if (!r->trainable && m->shape.none_seen_trained)
        return "no backward ran to tell which weights train";
    return NULL;
}

/* print_recognized: what was trained and what was on, each with its evidence. */
static void print_recognized(FILE *out, const model_result *m)
{
    const run_recognition *r = &m->rec;
    char c[4 * sizeof r->model_class], q[sizeof c + 3] = "", e[4 * sizeof r->optim_where + 1];
    if (r->model_class[0])
        snprintf(q, sizeof q, " (%s)", tx(r->model_class, c, sizeof c));
    if (m->shape.no_training)
        fprintf(out,
                "\nwhat ran: %s%s, forwards only (no backward pass, no optimizer step: "
                "nothing was trained)\n",
                family_text(r), q);
    else if (model_trained_unsure(m))
        fprintf(out, "\nwhat ran: %s%s; %s\n", family_text(r), q, model_trained_unsure(m));
    else
        fprintf(out, "\nwhat was trained: %s%s\n", family_text(r), q);
    if (r->family_where[0])
        fprintf(out, "  %-26s %s\n", "evidence", tx(r->family_where, e, sizeof e));
    fprintf(out, "  %-26s %s%s%s\n", "optimizer",
            r->optim == OPT_UNKNOWN ? "unknown" : optim_text(r), r->optim_where[0] ? "  " : "",
            tx(r->optim_where, e, sizeof e));
    char ub[400]; /* (untyped weights in a unit that shows them: MiB below a GiB) */
    model_untyped_said(m, ub, sizeof ub);
    if (r->trainable && m->weights_untyped) /* (their count at 4 B an element is not theirs) */
        fprintf(out, "  %-26s %.2f M weight elements (%s); beside them %s\n", "trainable",
                (double)r->trainable / 1e6, tx(r->trainable_where, e, sizeof e), ub);
    else if (r->trainable && r->passes_lower && !m->params_trace) /* (passes of one forward) */
        fprintf(out, "  %-26s %.2f M weight elements (%s)\n", "trainable",
                (double)r->trainable / 1e6, tx(r->trainable_where, e, sizeof e));
    else if (r->trainable && m->params_trace)
        fprintf(out, "  %-26s %.2f M of the %.2f M weight elements made before training%s (%s)\n",
                "trainable", (double)r->trainable / 1e6, (double)m->params_trace / 1e6,
                m->ema_said[0] ? ", their EMA copy left out" : "",
                tx(r->trainable_where, e, sizeof e));
    for (int i = 0; i < FEATURE_COUNT; i++)
        fprintf(out, "  %-26s %s%s%s\n", feature_words((feature_id)i),
                feature_state_word(r->feat[i].state), r->feat[i].where[0] ? "  " : "",
                tx(r->feat[i].where, e, sizeof e));
    if (r->loop[0])
        fprintf(out, "  %-26s %s  %s\n", m->shape.no_training ? "loop" : "training loop",
                recognize_loop_words(r->loop), tx(r->loop_where, e, sizeof e));
    if (r->batchnorm)
        fprintf(out, "  %-26s %s\n", "batch statistics",
                "BatchNorm in the forward: its statistics depend on the micro-batch");
}

/* print_generic: no formula applies: why, and what the measurement says. */
static void print_generic(FILE *out, const model_result *m)
{
    fputs("\nformula: not applied. ", out); /* (it names the command line's flags: escaped) */
    escape_term_fputs(out, m->formula_why, strlen(m->formula_why));
    fputc('\n', out);
    int any = 0;
    for (int c = 0; c < CAT_COUNT; c++)
        if (m->reason_doc[c][0]) {
            if (!any++)
                fprintf(out, "  what the measurement says:\n");
            fprintf(out, "    %s: %s\n", category_name((category)c), m->reason_doc[c]);
        }
}

static void print_formula(FILE *out, const model_result *m)
{
    char b1[32], b2[32], b3[32];
    const gpt_shape *s = &m->shape;
    if (!m->formula_ok) {
        print_generic(out, m);
        return;
    }
    const char *unit = s->patch_tokens ? "patch tokens" : "tokens";
    /* the tensors where they peaked, with the process peak's cache, context and kernel code */
    const char *at = m->measured_at_oom       ? "out-of-memory error"
                     : m->measured_at_tensors ? "tensors' peak"
                                              : "peak";
    char frozen[200] = "", words[160], ub2[32];
    if (m->frozen_params && m->rec.beside_unused) /* (frozen or not: not told) */
        snprintf(frozen, sizeof frozen,
                 "; %.2f M of the trace's, a second model's mostly not cast by autocast before "
                 "the error (taken as frozen) and any weights the formula's blocks lack, added to "
                 "its parameters",
                 m->frozen_params / 1e6);
    else if (m->frozen_params)
        snprintf(frozen, sizeof frozen,
                 "; %.2f M of the trace's are a frozen model's beside the one trained, added "
                 "to the formula's parameters",
                 m->frozen_params / 1e6);
    if (m->params_trace && m->weights_untyped) /* (a count at 4 B each: not theirs) */
        fprintf(out,
                "\nformula comparison at the %s (N = B*T = %llu %s; P = %.2f M elements were "
                "the trace's weight tensors all 4 B each, but %s of them take no gradient "
                "and the trace does not give their element size; %.2f M for the formula's %s%s)\n",
                at, (unsigned long long)(s->B * s->T), unit, m->params_trace / 1e6,
                card_format_bytes(m->weights_untyped, ub2, sizeof ub2),
                formula_params_exact(s) / 1e6, formula_params_words(s, words, sizeof words),
                frozen);
    else if (m->params_trace)
        fprintf(out,
                "\nformula comparison at the %s (N = B*T = %llu %s; P = %.2f M elements in "
                "the trace's weight tensors (parameters, and any buffers made with them), %.2f M "
                "for the formula's %s%s)\n",
                at, (unsigned long long)(s->B * s->T), unit, m->params_trace / 1e6,
                formula_params_exact(s) / 1e6, formula_params_words(s, words, sizeof words),
                frozen);
    else if (m->cfg.program == PROG_NANOGPT)
        fprintf(out,
                "\nformula comparison at the %s (N = B*T = %llu %s; P = %.2f M parameters, "
                "%.2f M without the position embedding, as nanoGPT's get_num_params counts)\n",
                at, (unsigned long long)(s->B * s->T), unit, formula_params_exact(s) / 1e6,
                m->docf.params_reported / 1e6);
    else
        fprintf(out,
                "\nformula comparison at the %s (N = B*T = %llu %s; P = %.2f M parameters "
                "of the formula's GPT shape)\n",
                at, (unsigned long long)(s->B * s->T), unit, formula_params_exact(s) / 1e6);
    fprintf(out,
            "  basic: the usual rule of thumb (16-bit weights and gradients, AdamW 8 B/param, "
            "activations B*T*d*L*24*2 B);\n  refined: %s (docs/formula.md)\n",
            formula_refined_words(s));
    if (m->formula_block[0]) { /* (it may name the trace's model class) */
        fputs("  ", out);
        escape_term_fputs(out, m->formula_block, strlen(m->formula_block));
        fputc('\n', out);
    }
    fprintf(out, "  %-18s %12s %12s %12s %9s %9s\n", "category", "measured", "basic", "refined",
            "meas/bas", "meas/ref");
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
            "%.1f with logits/loss and attention%s; the basic formula uses 24 (and 160 as an "
            "empirical upper figure)\n",
            m->mult_act, m->mult_all,
            m->forward_cut ? " (at the out-of-memory error, in a forward that had not finished)"
                           : "");
    if (note)
        fprintf(out,
                "  * where measured and formula differ by more than 25 %% (rows of 64 MiB or 2 %% "
                "of the peak and more):\n");
    for (int c = 0; c < CAT_COUNT; c++) {
        if (m->reason_doc[c][0])
            fprintf(out, "    %s (vs basic): %s\n", category_name((category)c), m->reason_doc[c]);
        if (m->reason_ref[c][0])
            fprintf(out, "    %s (vs refined): %s\n", category_name((category)c), m->reason_ref[c]);
    }
}

static void print_oom(FILE *out, const model_result *m, const run_facts *f)
{
    char b1[32], b2[32];
    fprintf(out, "\nOOM: %s requested", card_format_bytes(f->oom_requested, b1, sizeof b1));
    if (f->oom_site && *f->oom_site)
        fprintf(out, " at %s", f->oom_site);
    if (f->oom_step_pass)
        fputs(" during a no-grad pass whose outputs the step uses (phase eval: not an evaluation)",
              out);
    else if (f->oom_passes) /* (it had been "during forward") */
        fprintf(out, " after %d backward passes of one forward, outside a forward", f->oom_passes);
    else if (f->oom_phase && *f->oom_phase) /* (init: no forward the trace tells had run) */
        fprintf(out,
                m->cause == OOM_OWN ? " before any forward the trace shows (phase %s)"
                                    : " during %s",
                f->oom_phase);
    uint64_t cap = f->oom_capacity ? f->oom_capacity : m->capacity;
    fprintf(out, "; capacity %s%s\n", card_format_bytes(cap, b2, sizeof b2),
            f->oom_pytorch_pattern ? " (PyTorch released its cache and failed again)" : "");
    if (f->oom_device_decided) {
        char name[4 * 64]; /* (the trace's string: escaped) */
        escape_term(f->card_name, strlen(f->card_name), name, sizeof name);
        fprintf(out,
                "  the device refused it, not the emulated card: the card asked (%s, %s) is "
                "larger than the device (%s), whose own capacity decided\n",
                *name ? name : "--card", card_format_bytes(f->card_bytes, b1, sizeof b1), b2);
    }
    fprintf(out, "  live at the OOM:");
    for (int c = 0; c < CAT_COUNT; c++)
        if (f->at_oom.bytes[c]) {
            fprintf(out, " %s %s", category_name((category)c),
                    card_format_bytes(f->at_oom.bytes[c], b1, sizeof b1));
            if (c == CAT_PARAMETERS && f->ema_at_oom) /* not the model's own */
                fprintf(out, " (%s of it the EMA copy)",
                        card_format_bytes(f->ema_at_oom, b1, sizeof b1));
            if (c == CAT_PARAMETERS && f->copies_at_oom) /* a checkpoint the program keeps */
                fprintf(out, " (%s of it the program's copies made between steps)",
                        card_format_bytes(f->copies_at_oom, b1, sizeof b1));
            fputc(';', out);
        }
    fprintf(out,
            "\n  cache PyTorch released to retry %s, outside PyTorch (context, kernel code, "
            "external) %s\n",
            card_format_bytes(f->oom_cache, b1, sizeof b1),
            card_format_bytes(f->oom_outside, b2, sizeof b2));
    fprintf(out, "  cause: %s\n    %s\n", advice_cause_text_on(m->cause, model_cause_on(m, f)),
            m->why);
}

const char *model_need_text(const model_result *m, char *out, size_t n)
{
    char lo[32], hi[32];
    card_format_bytes(m->current.peak_bytes, hi, sizeof hi);
    if (m->current_own)
        snprintf(out, n, "%s to %s", card_format_bytes(m->current_own, lo, sizeof lo), hi);
    else
        snprintf(out, n, "%s", hi);
    return out;
}

static void print_advice(FILE *out, const model_result *m, const model_opts *o)
{
    if (m->advice_none[0]) {
        fprintf(out, "\nadvice: none (%s)\n", m->advice_none);
        return;
    }
    char b1[32], b2[40], name[4 * sizeof m->capacity_name];
    /* (the emulated card's name is the trace's: escaped, as every string of it) */
    escape_term(m->capacity_name, strlen(m->capacity_name), name, sizeof name);
    model_need_text(m, b2, sizeof b2);
    if (m->capacity)
        fprintf(out,
                "\nadvice for %s (%s; keep >= %.0f %% free); current configuration needs %s%s\n",
                name, card_format_bytes(m->capacity, b1, sizeof b1), ADVICE_HEADROOM * 100,
                m->lower_bounds ? "at least " : "~", b2);
    else
        fprintf(out,
                "\nadvice (no card size known: pass --card rtx4070 or a size); current "
                "configuration needs %s%s\n",
                m->lower_bounds ? "at least " : "~", b2);
    for (int i = 0; i < m->nnotes; i++)
        fprintf(out, "  (%s)\n", m->notes[i]);
    const char *bold = o && o->color ? "\033[1m" : "", *plain = o && o->color ? "\033[0m" : "";
    for (int i = 0; i < m->nitems; i++) {
        const advice_item *it = &m->items[i];
        char fit[192];
        model_item_verdict(it, m->capacity, m->lower_bounds, fit, sizeof fit);
        char extra[160] = "";
        int n = 0;
        if (it->moment == PREDICT_AT_OPTIMIZER_STEP) /* not the forward's end */
            n = snprintf(extra, sizeof extra,
                         " in the optimizer step (weights, gradients, optimizer state, and what "
                         "else was live then)");
        else if (it->moment == PREDICT_AT_BACKWARD_END)
            n = snprintf(extra, sizeof extra,
                         " at the backward's end (weights, all their gradients, optimizer state)");
        else if (it->moment == PREDICT_AT_EVALUATION)
            n = snprintf(extra, sizeof extra, " in the %s pass (its own batch)",
                         advice_pass_word(m->calib.eval_flag));
        else if (it->moment == PREDICT_AT_MEASURED)
            n = snprintf(extra, sizeof extra, " (the run's own peak, as measured)");
        if (it->required > it->predicted_peak)
            snprintf(extra + n, sizeof extra - (size_t)n, " (+%s room for allocator fragmentation)",
                     card_format_bytes(it->required - it->predicted_peak, b1, sizeof b1));
        fprintf(out, "  %s%s %s%s\n      predicted peak %s%s%s: %s\n      %s\n",
                it->recommended ? bold : "", it->recommended ? "recommended:" : "-", it->change,
                it->recommended ? plain : "", m->lower_bounds ? "at least " : "",
                card_format_bytes(it->predicted_peak, b2, sizeof b2), extra, fit, it->note);
        if (it->cache_limit)
            fprintf(out,
                    "      the allocator cache decides: %s of it assumed here; with at most %s the "
                    "rest keeps %.0f %% free (measure it: vramtrace fit)\n",
                    card_format_bytes(it->cache_assumed, b1, sizeof b1),
                    card_format_bytes(it->cache_limit, b2, sizeof b2), ADVICE_HEADROOM * 100);
        if (it->cmdline[0])
            fprintf(out, "      change: %s\n", it->cmdline);
    }
    if (model_none_fits(m))
        fprintf(out, "  none of these fits the card with >= %.0f %% free: none is recommended\n",
                ADVICE_HEADROOM * 100);
    const char *mb = model_batch_word(m);
    char un[400];
    if (m->capacity && config_known(&m->cfg, CFG_batch_size) && m->largest_unpredicted)
        fprintf(out, "  largest %s that fits: %s\n", mb,
                model_unpredicted_text(mb, m->eval_batch, un, sizeof un));
    else if (m->capacity && config_known(&m->cfg, CFG_batch_size)) {
        char u64s[160], none[200];
        snprintf(u64s, sizeof u64s, m->largest_own ? "%llu to %llu" : "%llu",
                 (unsigned long long)m->largest_batch, (unsigned long long)m->largest_own);
        unsigned long long per = m->cfg.batch_per > 1 ? (unsigned long long)m->cfg.batch_per : 0;
        if (per && m->largest_batch) { /* (sequences: the flag's samples too) */
            size_t n = strlen(u64s);
            snprintf(u64s + n, sizeof u64s - n, " sequences: %.48s %llu%s%.0llu",
                     m->cfg.v[CFG_batch_size].flag, (unsigned long long)m->largest_batch / per,
                     m->largest_own ? " to " : "", (unsigned long long)m->largest_own / per);
        }
        fprintf(out,
                "  largest %s that fits (other settings unchanged, keeping >= %.0f %% "
                "free%s%s): %s%s%s\n",
                mb, ADVICE_HEADROOM * 100, m->unreached_short[0] ? "; " : "", m->unreached_short,
                m->lower_bounds && m->largest_batch ? "at most " : "",
                m->largest_batch ? u64s : model_largest_none_text(m, mb, none, sizeof none),
                m->lower_bounds ? " (the what-ifs are lower bounds)" : "");
        char why[320];
        if (m->largest_own) /* (model.h) */
            fprintf(out, "      %s\n",
                    model_own_share_text(m->largest_batch, m->largest_own, m->largest_own_share,
                                         advice_cache_floor(&m->shape, m->calib.expandable), mb,
                                         why, sizeof why));
        if (m->largest_cache_most) /* (model.h) */
            fprintf(out, "      %s\n",
                    model_largest_cache_text(m->largest_cache, m->largest_batch,
                                             m->largest_cache_most, why, sizeof why));
        if (m->next_cache_most)
            fprintf(out, "      %s\n",
                    model_next_cache_text(m->next_cache, m->largest_batch, m->next_cache_most, why,
                                          sizeof why));
    } else if (m->capacity && config_batch_flags(&m->cfg)[0]) { /* (--max-tokens: not read) */
        fputs("  the micro-batch is not known: no what-if of it, nor of the flags that may set it "
              "(",
              out);
        escape_term_fputs(out, config_batch_flags(&m->cfg), strlen(config_batch_flags(&m->cfg)));
        fputs("), which vramtrace does not read\n", out);
    } else if (m->capacity)
        fprintf(out, "  the micro-batch is not known: no what-if of it\n");
}

void model_text_verdict(FILE *out, const prediction *p, const char *card_name, uint64_t capacity,
                        int lower, uint64_t low)
{
    char b1[32], b2[32], b3[32], name[320];
    int fits = advice_fits(p->required_bytes, capacity, ADVICE_HEADROOM);
    int over = p->required_bytes > capacity;
    uint64_t gap = over ? p->required_bytes - capacity : capacity - p->required_bytes, cache;
    uint64_t limit = advice_cache_limit(p, capacity, ADVICE_HEADROOM, &cache);
    /* a lower bound: what is free is at most that, what is over at least; where the assumed
     * cache decides, the verdict says so, as the report's what-ifs do */
    escape_term(card_name, strlen(card_name), name, sizeof name); /* (a trace's, with --from) */
    /* (a range, low given: from its low end's gap, or "up to" where that end is under the card) */
    char pre[48] = "";
    if (lower)
        snprintf(pre, sizeof pre, "%s", over ? "at least " : "at most ");
    else if (low && over)
        snprintf(pre, sizeof pre, "%s to ",
                 low > capacity ? card_format_bytes(low - capacity, b3, sizeof b3) : "up");
    fprintf(out, "card %s (%s): %s%s, %s%s %s\n", name, card_format_bytes(capacity, b1, sizeof b1),
            fits == 1 ? (lower ? "may fit" : "fits")
            : !over   ? "too tight (less than " ADVICE_HEADROOM_PCT_TEXT " % free)"
                      : "does not fit",
            fits != 1 && limit ? " with the cache assumed" : "", pre,
            card_format_bytes(gap, b2, sizeof b2), over ? "over" : "free");
    /* the fit is judged on the peak and the room the cache may need on top (advice.c): said,
     * so the peak printed before and the gap add up */
    if (p->required_bytes > p->peak_bytes)
        fprintf(out, "  (judged on %s: the peak and %s of room for allocator fragmentation)\n",
                card_format_bytes(p->required_bytes, b1, sizeof b1),
                card_format_bytes(p->required_bytes - p->peak_bytes, b2, sizeof b2));
    if (limit)
        fprintf(out,
                "the allocator cache decides: %s of it assumed here; with at most %s the rest "
                "keeps %.0f %% free (measure it: vramtrace fit)\n",
                card_format_bytes(cache, b1, sizeof b1), card_format_bytes(limit, b2, sizeof b2),
                ADVICE_HEADROOM * 100);
}

void model_text(FILE *out, const model_result *m, const run_facts *f, int color)
{
    const model_opts o = {.color = color};
    config_print(out, &m->cfg, model_config_shown(m));
    char ne[4 * sizeof m->note]; /* (a flag's spelling in it: the trace's bytes) */
    if (m->note[0])
        fprintf(out, "  note: %s\n", tx(m->note, ne, sizeof ne));
    print_recognized(out, m);
    print_formula(out, m);
    if (f->has_oom)
        print_oom(out, m, f);
    print_advice(out, m, &o);
}

int model_config_shown(const model_result *m)
{
    if (!m->formula_ok && !family_transformer(m->rec.family))
        return CONFIG_SHOW_OTHER;
    return m->rec.family == FAM_VISION_TRANSFORMER ? CONFIG_SHOW_NO_VOCAB : CONFIG_SHOW_TRANSFORMER;
}

const char *model_unpredicted_text(const char *mb, uint64_t eval_batch, char *out, size_t n)
{
    if (eval_batch) /* (it had read as if the training step peaked late) */
        snprintf(out, n,
                 "not predicted (this run's tensors peaked in its evaluation pass, at its own "
                 "batch of %llu, after the training forward's were freed, so it does not measure "
                 "how the training step grows with the %s: a run that peaks in training measures "
                 "it, or vramtrace fit)",
                 (unsigned long long)eval_batch, mb);
    else
        snprintf(out, n,
                 "not predicted (this run's tensors peaked after its forward's were freed, so it "
                 "does not measure how they grow with the %s: a larger one measures it, or "
                 "vramtrace fit)",
                 mb);
    return out;
}

const char *model_largest_cache_text(uint64_t cache, uint64_t B, uint64_t most, char *out, size_t n)
{
    char b1[32], b2[32];
    snprintf(out, n,
             "the allocator cache decides: %s of it assumed at %llu; with more than %s it keeps "
             "less than %.0f %% free (measure it: vramtrace fit)",
             card_format_bytes(cache, b1, sizeof b1), (unsigned long long)B,
             card_format_bytes(most, b2, sizeof b2), ADVICE_HEADROOM * 100);
    return out;
}

const char *model_largest_none_text(const model_result *m, const char *mb, char *out, size_t n)
{
    if (!m->largest_ran)
        snprintf(out, n, "none, not even 1");
    else
        snprintf(out, n,
                 "none with that room; %llu, this run's own %s, ran on the card with less free "
                 "(its process peak %.2f GiB)",
                 (unsigned long long)m->largest_ran, mb,
                 (double)m->largest_ran_peak / 1073741824.0);
    return out;
}

const char *model_own_share_text(uint64_t lb, uint64_t hi, double share, double floor,
                                 const char *mb, char *out, size_t n)
{
    snprintf(out, n,
             "%llu with the allocator cache at %.0f %% of its tensors, the room for fragmentation "
             "a run can need; %llu at the %.0f %% this run measured (a share that can grow with "
             "the %s; measure it: vramtrace fit)",
             (unsigned long long)lb, floor * 100, (unsigned long long)hi, share * 100, mb);
    return out;
}

const char *model_next_cache_text(uint64_t cache, uint64_t B, uint64_t most, char *out, size_t n)
{
    char b1[32], b2[32];
    snprintf(out, n,
             "at %llu the allocator cache decides: %s of it assumed; with at most %s it would keep "
             "%.0f %% free (measure it: vramtrace fit)",
             (unsigned long long)B + 1, card_format_bytes(cache, b1, sizeof b1),
             card_format_bytes(most, b2, sizeof b2), ADVICE_HEADROOM * 100);
    return out;
}

const char *model_item_verdict(const advice_item *it, uint64_t capacity, int lower, char *out,
                               size_t n)
{
    char b[32];
    const char *cache = it->cache_limit ? " with the cache assumed" : "";
    if (it->fits < 0)
        snprintf(out, n, "card size unknown");
    else if (it->headroom_bytes >= 0)
        /* too tight: a tenth of a percent, so 4.9 % free never reads as the 5 % wanted */
        snprintf(out, n, "%s%s (%s%s left, %.*f %%)",
                 it->fits ? (lower ? "may fit" : "fits")
                          : "too tight for " ADVICE_HEADROOM_PCT_TEXT " % headroom",
                 it->fits ? "" : cache, lower ? "at most " : "",
                 card_format_bytes((uint64_t)it->headroom_bytes, b, sizeof b), it->fits ? 0 : 1,
                 capacity ? 100.0 * (double)it->headroom_bytes / (double)capacity : 0.0);
    else
        snprintf(out, n, "does not fit%s (%s%s over)", cache, lower ? "at least " : "",
                 card_format_bytes((uint64_t)-it->headroom_bytes, b, sizeof b));
    return out;
}
