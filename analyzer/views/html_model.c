/* html_model.c — the diagnosis on the HTML page (html_parts.h): the summary at the top, the
 * OOM's cause with its evidence, the advice with predicted peaks against the card and the
 * notes the text report prints, the formula comparison or why none applies. Rendered from the
 * built report (report_ctx, model_result), never computed here; every string escaped. */
#include <inttypes.h>
#include <string.h>

#include "html_parts.h"
#include "cards.h"
#include "model_views.h"
#include "report_views.h"

static const char *verdict_class(const advice_item *it)
{
    return it->fits < 0 ? "unk" : it->fits ? "ok" : it->headroom_bytes >= 0 ? "tight" : "over";
}

/* verdict: model_item_verdict's words (the text report's), escaped */
static void verdict(FILE *out, const advice_item *it, const model_result *m)
{
    char v[192];
    html_esc(out, model_item_verdict(it, m->capacity, m->lower_bounds, v, sizeof v));
}

void html_summary(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    const model_result *m = c->model;
    const run_facts *f = &c->facts;
    char b1[32], b2[32];
    fputs("<section id=summary class=cards>\n", out);
    fprintf(out,
            "<div class=card><h3>peak</h3><p class=big>%s</p><p>process (as nvidia-smi shows it) "
            "at %.3f s",
            html_bytes(r->peak_process, b1, sizeof b1), (double)r->t_process / 1e9);
    const char *ph = r->peak_process ? phase_name(r->peak_phase) : NULL; /* the process peak's */
    if (ph && *ph) {
        fputs(", in the ", out);
        html_esc(out, ph);
    }
    fprintf(out, "; the reserved peak %s at %.3f s</p></div>\n",
            html_bytes(r->peak_reserved, b1, sizeof b1), (double)r->t_reserved / 1e9);
    if (m && m->capacity) { /* the current configuration against the card, as model.c says */
        uint64_t need = m->current.peak_bytes, cap = m->capacity;
        int over = need > cap || f->has_oom;
        int fits = !over && advice_fits(need, cap, ADVICE_HEADROOM) == 1;
        char b3[32];
        fputs("<div class=card><h3>card</h3><p class=big>", out);
        html_esc(out, m->capacity_name);
        char b4[32] = "", b5[32] = ""; /* (a range: its cache the run's own, or the floor) */
        uint64_t low = m->current_own;
        if (low)
            snprintf(b4, sizeof b4, "%s to ", html_bytes(low, b5, sizeof b5));
        fprintf(out, "</p><p>%s; this configuration needs %s%s%s: <b class=%s>%s",
                html_bytes(cap, b1, sizeof b1), m->lower_bounds ? "at least " : "~", b4,
                html_bytes(need, b2, sizeof b2),
                fits   ? "ok"
                : over ? "over"
                       : "tight",
                fits   ? "fits"
                : over ? "does not fit"
                       : "fits, with less than " ADVICE_HEADROOM_PCT_TEXT " % free");
        if (low && need > cap)
            fprintf(out, ", %s%s%s over", low > cap ? html_bytes(low - cap, b5, sizeof b5) : "up",
                    " to ", html_bytes(need - cap, b3, sizeof b3));
        else if (need != cap)
            fprintf(out, ", %s %s", html_bytes(need > cap ? need - cap : cap - need, b3, sizeof b3),
                    need > cap ? "over" : "free");
        fputs("</b></p></div>\n", out);
    }
    if (f->has_oom && m) {
        fputs("<div class=\"card bad\"><h3>out of memory</h3><p class=big>in the ", out);
        html_esc(out, f->oom_step_pass      ? "no-grad pass whose outputs the step uses"
                      : m->cause == OOM_OWN ? "program's own request, before any forward"
                      : f->oom_passes       ? "step, after its backward passes of one forward"
                      : f->oom_phase && *f->oom_phase ? f->oom_phase
                                                      : "run");
        fprintf(out, "</p><p>asking for %s: <b>", html_bytes(f->oom_requested, b1, sizeof b1));
        html_esc(out, advice_cause_text_on(m->cause, model_cause_on(m, f)));
        fputs("</b> <a href=\"#oom\">why</a></p></div>\n", out);
    } else {
        fprintf(out,
                "<div class=card><h3>run</h3><p class=big>no OOM</p><p>%u %s%s "
                "traced%s%s</p></div>\n",
                report_opt_steps(c), report_steps_noun(c), report_steps_hedge(c),
                m && m->tight ? "; it fit with less than " ADVICE_HEADROOM_PCT_TEXT " % free" : "",
                m && m->tight && f->oom_recovered
                    ? ", after its allocator reached the card and released its cache"
                    : "");
    }
    const advice_item *it = m ? model_recommended(m) : NULL;
    if (m && model_none_fits(m))
        fprintf(out,
                "<div class=\"card rec\"><h3>recommended</h3><p class=big>none</p><p>no option "
                "of the advice fits the card with &ge; %d %% free <a href=\"#advice\">all "
                "advice</a></p></div>\n",
                ADVICE_HEADROOM_PCT);
    if (it) {
        fputs("<div class=\"card rec\"><h3>recommended</h3><p class=big>", out);
        html_esc(out, it->change);
        fprintf(out, "</p><p>predicted peak %s%s: <b class=%s>", m->lower_bounds ? "at least " : "",
                html_bytes(it->predicted_peak, b1, sizeof b1), verdict_class(it));
        verdict(out, it, m);
        fputs("</b>", out);
        if (it->cmdline[0]) {
            fputs("<br><code>", out);
            html_esc(out, it->cmdline);
            fputs("</code>", out);
        }
        fputs(" <a href=\"#advice\">all advice</a></p></div>\n", out);
    }
    fputs("</section>\n", out);
}

/* cardbar: bytes by category (and the request, hatched) along a bar scaled to scale bytes,
 * with the card's capacity marked; a title on each part says its bytes */
static void cardbar(FILE *out, const cat_breakdown *live, uint64_t requested, uint64_t cap,
                    uint64_t scale)
{
    char b[32];
    fputs("<div class=cardbar>", out);
    for (int k = 0; k < CAT_COUNT; k++) {
        if (!live->bytes[k])
            continue;
        fprintf(out, "<span class=\"c-%s\" style=\"width:%.2f%%\" title=\"%s: %s\"></span>",
                category_key((category)k), 100.0 * (double)live->bytes[k] / (double)scale,
                category_name((category)k), html_bytes(live->bytes[k], b, sizeof b));
    }
    if (requested)
        fprintf(out,
                "<span class=req style=\"width:%.2f%%\" title=\"the failed request: %s\"></span>",
                100.0 * (double)requested / (double)scale, html_bytes(requested, b, sizeof b));
    if (cap)
        fprintf(out, "<em class=capline style=\"left:%.2f%%\" title=\"the card: %s\"></em>",
                100.0 * (double)cap / (double)scale, html_bytes(cap, b, sizeof b));
    fputs("</div>\n", out);
}

void html_oom(FILE *out, const report_ctx *c)
{
    const model_result *m = c->model;
    const run_facts *f = &c->facts;
    char b1[32], b2[32];
    if (!f->has_oom || !m)
        return;
    uint64_t cap = f->oom_capacity ? f->oom_capacity : m->capacity;
    uint64_t live = cat_breakdown_total(&f->at_oom);
    uint64_t scale = live + f->oom_requested > cap ? live + f->oom_requested : cap;
    fputs("<section id=oom><h2>Out of memory: why</h2>\n<p class=cause><b>cause: ", out);
    html_esc(out, advice_cause_text_on(m->cause, model_cause_on(m, f)));
    fputs("</b><br>", out);
    html_esc(out, m->why);
    fprintf(out, "</p>\n<p>%s requested", html_bytes(f->oom_requested, b1, sizeof b1));
    if (f->oom_site && *f->oom_site) {
        fputs(" at <span class=site>", out);
        html_esc(out, f->oom_site);
        fputs("</span>", out);
    }
    if (f->oom_step_pass) {
        fputs(" during a no-grad pass whose outputs the step uses (phase eval: not an evaluation)",
              out);
    } else if (f->oom_passes) {
        fprintf(out, " after %d backward passes of one forward, outside a forward", f->oom_passes);
    } else if (f->oom_phase && *f->oom_phase) {
        fputs(m->cause == OOM_OWN ? " before any forward the trace shows, in the phase "
                                  : " during the ",
              out);
        html_esc(out, f->oom_phase);
    }
    fprintf(out,
            "; capacity %s%s. What was live then, and the request (hatched), against the "
            "card (the black line):</p>\n",
            html_bytes(cap, b2, sizeof b2),
            f->oom_pytorch_pattern ? " (PyTorch released its cache and failed again)" : "");
    if (scale)
        cardbar(out, &f->at_oom, f->oom_requested, cap, scale);
    fputs("<p class=keys>", out);
    for (int k = 0; k < CAT_COUNT; k++)
        if (f->at_oom.bytes[k]) {
            fputs("<span>", out);
            html_swatch(out, k);
            fprintf(out, "%s %s", category_name((category)k),
                    html_bytes(f->at_oom.bytes[k], b1, sizeof b1));
            if (k == CAT_PARAMETERS && f->ema_at_oom) /* not the model's own */
                fprintf(out, " (%s of it the EMA copy)", html_bytes(f->ema_at_oom, b1, sizeof b1));
            if (k == CAT_PARAMETERS && f->copies_at_oom) /* a checkpoint the program keeps */
                fprintf(out, " (%s of it the program's copies made between steps)",
                        html_bytes(f->copies_at_oom, b1, sizeof b1));
            fputs("</span>", out);
        }
    fprintf(out,
            "</p>\n<p class=sub>Cache PyTorch released to retry: %s; outside PyTorch (context, "
            "kernel code, external): %s.</p></section>\n",
            html_bytes(f->oom_cache, b1, sizeof b1), html_bytes(f->oom_outside, b2, sizeof b2));
}

static void advice_notes(FILE *out, const model_result *m)
{
    if (!m->nnotes)
        return;
    fputs("<ul class=notes>", out);
    for (int i = 0; i < m->nnotes; i++) {
        fputs("<li>", out);
        html_esc(out, m->notes[i]);
        fputs(".</li>", out);
    }
    fputs("</ul>\n", out);
}

static void advice_row(FILE *out, const model_result *m, const advice_item *it, uint64_t scale)
{
    char b1[32], b2[32];
    fprintf(out, "<tr class=\"%s\"><td>%s", it->recommended ? "recommended" : "",
            it->recommended ? "<b class=badge>recommended</b> " : "");
    html_esc(out, it->change);
    if (it->cmdline[0]) {
        fputs("<br><code>", out);
        html_esc(out, it->cmdline);
        fputs("</code>", out);
    }
    fprintf(out,
            "</td><td class=n>%s%s</td><td class=barcell><div class=pbar><span class=%s "
            "style=\"width:%.1f%%\" title=\"predicted peak %s\"></span>",
            m->lower_bounds ? "at least " : "", html_bytes(it->predicted_peak, b1, sizeof b1),
            verdict_class(it),
            100.0 * (double)(it->predicted_peak < scale ? it->predicted_peak : scale) /
                (double)scale,
            b1);
    if (m->capacity)
        fprintf(out, "<em class=capline style=\"left:%.1f%%\" title=\"the card: %s\"></em>",
                100.0 * (double)m->capacity / (double)scale,
                html_bytes(m->capacity, b2, sizeof b2));
    fprintf(out, "</div></td><td class=%s>", verdict_class(it));
    verdict(out, it, m);
    if (it->moment == PREDICT_AT_OPTIMIZER_STEP) /* not the forward's end */
        fputs(
            " (its peak in the optimizer step: weights, gradients, optimizer state, and what else "
            "was live then)",
            out);
    else if (it->moment == PREDICT_AT_BACKWARD_END)
        fputs(" (its peak at the backward's end: weights, all their gradients, optimizer state)",
              out);
    else if (it->moment == PREDICT_AT_EVALUATION)
        fprintf(out, " (its peak in the %s pass, at its own batch)",
                advice_pass_word(m->calib.eval_flag));
    else if (it->moment == PREDICT_AT_MEASURED)
        fputs(" (the run's own peak, as measured)", out);
    if (it->required > it->predicted_peak)
        fprintf(out, " (with +%s room for allocator fragmentation)",
                html_bytes(it->required - it->predicted_peak, b1, sizeof b1));
    fputs("</td><td class=sub2>", out);
    html_esc(out, it->note);
    if (it->cache_limit)
        fprintf(out,
                "<br>The allocator cache decides: %s of it assumed here; with at most %s the rest "
                "keeps %d %% free (measure it: vramtrace fit).",
                html_bytes(it->cache_assumed, b1, sizeof b1),
                html_bytes(it->cache_limit, b2, sizeof b2), ADVICE_HEADROOM_PCT);
    fputs("</td></tr>\n", out);
}

void html_advice(FILE *out, const report_ctx *c)
{
    const model_result *m = c->model;
    char b1[32];
    if (!m)
        return;
    if (m->advice_none[0]) { /* (the text's "advice: none (...)") */
        fputs("<section id=advice><h2>Advice</h2>\n<p>None: ", out);
        html_esc(out, m->advice_none);
        fputs(".</p>\n</section>\n", out);
        return;
    }
    fputs("<section id=advice><h2>", out);
    if (m->capacity) {
        fputs("Advice for ", out);
        html_esc(out, m->capacity_name);
        fprintf(out, " (%s; keep &ge; %d %% free)</h2>\n", html_bytes(m->capacity, b1, sizeof b1),
                ADVICE_HEADROOM_PCT);
    } else {
        fputs("Advice (no card size known: pass --card rtx4070 or a size)</h2>\n", out);
    }
    char b6[40];
    fprintf(out, "<p>The current configuration needs %s", m->lower_bounds ? "at least " : "~");
    html_esc(out, model_need_text(m, b6, sizeof b6));
    fputs(".</p>\n", out);
    advice_notes(out, m);
    uint64_t scale = m->capacity + m->capacity / 10;
    for (int i = 0; i < m->nitems; i++)
        if (m->items[i].predicted_peak > scale)
            scale = m->items[i].predicted_peak;
    if (scale > 2 * (m->capacity + m->capacity / 10) && m->capacity)
        scale = 2 * (m->capacity + m->capacity / 10); /* a far-off item does not shrink the rest */
    if (!scale)
        scale = 1;
    if (m->nitems) {
        fputs("<table id=advice-table><tr><th>change</th><th class=n>predicted peak</th><th>"
              "against the card (black line)</th><th>verdict</th><th>what it costs</th></tr>\n",
              out);
        for (int i = 0; i < m->nitems; i++)
            advice_row(out, m, &m->items[i], scale);
        fputs("</table>\n", out);
    }
    if (model_none_fits(m))
        fprintf(out,
                "<p>None of these fits the card with &ge; %d %% free: none is recommended.</p>\n",
                ADVICE_HEADROOM_PCT);
    char un[400];
    if (m->capacity && config_known(&m->cfg, CFG_batch_size) && m->largest_unpredicted) {
        fprintf(out, "<p>Largest %s that fits: ", model_batch_word(m));
        html_esc(out, model_unpredicted_text(model_batch_word(m), m->eval_batch, un, sizeof un));
        fputs(".</p>\n", out);
    } else if (m->capacity && config_known(&m->cfg, CFG_batch_size)) {
        char u64s[48], none[200];
        snprintf(u64s, sizeof u64s, m->largest_own ? "%llu to %llu" : "%llu",
                 (unsigned long long)m->largest_batch, (unsigned long long)m->largest_own);
        fprintf(out, "<p>Largest %s that fits (other settings unchanged, keeping &ge; %d %% free",
                model_batch_word(m), ADVICE_HEADROOM_PCT);
        if (m->unreached_short[0]) { /* (the script's file name: the trace's bytes) */
            fputs("; ", out);
            html_esc(out, m->unreached_short);
        }
        fprintf(out, "): %s<b>%s</b>", m->lower_bounds && m->largest_batch ? "at most " : "",
                m->largest_batch
                    ? u64s
                    : model_largest_none_text(m, model_batch_word(m), none, sizeof none));
        unsigned long long per = m->cfg.batch_per > 1 ? (unsigned long long)m->cfg.batch_per : 0;
        if (per && m->largest_batch) { /* (sequences: the flag's samples too, as the text) */
            fputs(" sequences: ", out);
            html_esc(out, m->cfg.v[CFG_batch_size].flag);
            fprintf(out, " %llu%s%.0llu", (unsigned long long)m->largest_batch / per,
                    m->largest_own ? " to " : "", (unsigned long long)m->largest_own / per);
        }
        fprintf(out, "%s</p>\n", m->lower_bounds ? " (the what-ifs are lower bounds)" : "");
        char why[320];
        if (m->largest_own) { /* (model.h), in the text's words */
            model_own_share_text(m->largest_batch, m->largest_own, m->largest_own_share,
                                 advice_cache_floor(&m->shape, m->calib.expandable),
                                 model_batch_word(m), why, sizeof why);
            /* "N with ...; M at ...": a sentence of its own here */
            fputs("<p>", out);
            html_esc(out, why);
            fputs(".</p>\n", out);
        }
        if (m->largest_cache_most) { /* (model.h), in the text's words */
            model_largest_cache_text(m->largest_cache, m->largest_batch, m->largest_cache_most, why,
                                     sizeof why);
            why[0] = 'T'; /* "the allocator cache ...": a sentence of its own here */
            fputs("<p>", out);
            html_esc(out, why);
            fputs(".</p>\n", out);
        }
        if (m->next_cache_most) {
            model_next_cache_text(m->next_cache, m->largest_batch, m->next_cache_most, why,
                                  sizeof why);
            why[0] = 'A'; /* "at B+1 ...": a sentence of its own */
            fputs("<p>", out);
            html_esc(out, why);
            fputs(".</p>\n", out);
        }
    } else if (m->capacity && config_batch_flags(&m->cfg)[0]) { /* (--max-tokens: not read) */
        fputs("<p>The micro-batch is not known: no what-if of it, nor of the flags that may set "
              "it (",
              out);
        html_esc(out, config_batch_flags(&m->cfg));
        fputs("), which vramtrace does not read.</p>\n", out);
    } else if (m->capacity)
        fputs("<p>The micro-batch is not known: no what-if of it.</p>\n", out);
    fputs("</section>\n", out);
}

/* formula_head: what N and P are for the comparison, as the text report says them */
static void formula_head(FILE *out, const model_result *m)
{
    const gpt_shape *s = &m->shape;
    const char *unit = s->patch_tokens ? "patch tokens" : "tokens";
    fprintf(out, "<p>N = B&middot;T = %llu %s; ", (unsigned long long)(s->B * s->T), unit);
    char words[160];
    char ub[32];
    if (m->params_trace && m->weights_untyped) /* (a count at 4 B each: not theirs) */
        fprintf(out,
                "P = %.2f M elements were the trace's weight tensors all 4 B each, but %s "
                "of them take no gradient and the trace does not give their element size; "
                "%.2f M for the formula's %s.",
                m->params_trace / 1e6, card_format_bytes(m->weights_untyped, ub, sizeof ub),
                formula_params_exact(s) / 1e6, formula_params_words(s, words, sizeof words));
    else if (m->params_trace)
        fprintf(out,
                "P = %.2f M elements in the trace's weight tensors (parameters, and any buffers "
                "made with them), %.2f M for the formula's %s%s.",
                m->params_trace / 1e6, formula_params_exact(s) / 1e6,
                formula_params_words(s, words, sizeof words),
                !m->frozen_params      ? ""
                : m->rec.beside_unused ? "; a second model's weights beside the one trained, "
                                         "mostly not cast by autocast before the error (taken "
                                         "as frozen), are added to the formula's parameters"
                                       : "; a frozen model's weights beside the one trained are "
                                         "added to the formula's parameters");
    else if (m->cfg.program == PROG_NANOGPT)
        fprintf(out,
                "P = %.2f M parameters, %.2f M without the position embedding, as nanoGPT's "
                "get_num_params counts.",
                formula_params_exact(s) / 1e6, m->docf.params_reported / 1e6);
    else
        fprintf(out, "P = %.2f M parameters of the formula's GPT shape.",
                formula_params_exact(s) / 1e6);
    fprintf(out,
            " <i>Basic</i>: the usual rule of thumb (16-bit weights and gradients, AdamW 8 B per "
            "parameter, activations B&middot;T&middot;d&middot;L&middot;24&middot;2 B); "
            "<i>refined</i>: %s (docs/formula.md).</p>\n",
            formula_refined_words(s));
}

static void ratio(FILE *out, uint64_t me, uint64_t f)
{
    if (!f) {
        fputs("<td class=n>-</td>", out);
        return;
    }
    double q = (double)me / (double)f;
    fprintf(out, "<td class=\"n%s\">%.2f</td>", q > 1.25 || q < 0.75 ? " off" : "", q);
}

void html_formula(FILE *out, const report_ctx *c)
{
    const model_result *m = c->model;
    char b1[32], b2[32], b3[32];
    if (!m)
        return;
    if (!m->formula_ok) {
        fputs("<section id=formula><h2>Formula: not applied</h2>\n<p>", out);
        html_esc(out, m->formula_why);
        fputs("</p>\n", out);
        int any = 0;
        for (int k = 0; k < CAT_COUNT; k++)
            if (m->reason_doc[k][0]) {
                fputs(any++ ? "" : "<p>What the measurement says:</p><ul id=measured-says>", out);
                fputs("<li>", out);
                html_swatch(out, k);
                fprintf(out, "<b>%s</b>: ", category_name((category)k));
                html_esc(out, m->reason_doc[k]);
                fputs("</li>", out);
            }
        fputs(any ? "</ul></section>\n" : "</section>\n", out);
        return;
    }
    /* the tensors where they peaked (as the text report says), not the process peak */
    fprintf(out, "<section id=formula><h2>Formula comparison at the %s</h2>\n",
            m->measured_at_oom       ? "out-of-memory error"
            : m->measured_at_tensors ? "tensors' peak"
                                     : "peak");
    formula_head(out, m);
    if (m->formula_block[0]) {
        fputs("<p id=formula-block>", out);
        html_esc(out, m->formula_block);
        fputs("</p>\n", out);
    }
    fputs("<table id=formula-table><tr><th>category</th><th class=n>measured</th><th "
          "class=n>basic</th><th class=n>refined</th><th class=n>meas/basic</th><th "
          "class=n>meas/refined</th><th>where they differ by more than 25 % (rows of 64 MiB or "
          "2 % of the peak and more)</th></tr>\n",
          out);
    for (int k = 0; k < CAT_COUNT; k++) {
        uint64_t me = m->measured.bytes[k], d = m->doc.bytes[k], r = m->refined.bytes[k];
        if (!me && !d && !r)
            continue;
        fputs("<tr><td>", out);
        html_swatch(out, k);
        fprintf(out, "%s</td><td class=n>%s</td><td class=n>%s</td><td class=n>%s</td>",
                category_name((category)k), html_bytes(me, b1, sizeof b1),
                html_bytes(d, b2, sizeof b2), html_bytes(r, b3, sizeof b3));
        ratio(out, me, d);
        ratio(out, me, r);
        fputs("<td class=sub2>", out);
        if (m->reason_doc[k][0]) {
            fputs("vs basic: ", out);
            html_esc(out, m->reason_doc[k]);
        }
        if (m->reason_ref[k][0]) {
            fputs(m->reason_doc[k][0] ? "<br>vs refined: " : "vs refined: ", out);
            html_esc(out, m->reason_ref[k]);
        }
        fputs("</td></tr>\n", out);
    }
    fprintf(out,
            "</table>\n<p>Effective activation multiplier (measured / (B&middot;T&middot;d&middot;"
            "L&middot;2 B)): <b>%.1f</b> activations alone, %.1f with logits/loss and attention; "
            "the basic formula uses 24 (and 160 as an empirical upper figure).</p></section>\n",
            m->mult_act, m->mult_all);
}
