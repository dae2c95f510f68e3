/* html_config.c — the HTML page's account of the run (html_parts.h): the configuration with
 * each value's source and how it was found, what was trained (family, optimizer, features on
 * or off with their evidence), and where the activations come from by nn.Module. Rendered from
 * the built report; every string escaped. */
#include <string.h>

#include "html_parts.h"
#include "cards.h"
#include "model_views.h"

void html_config(FILE *out, const report_ctx *c)
{
    const model_result *m = c->model;
    if (!m)
        return;
    const nano_config *cfg = &m->cfg;
    int tr = model_config_shown(m);
    int n[CONFIG_SRC_UNKNOWN + 1] = {0}, hidden = 0;
    for (int k = 0; k < CFG_COUNT; k++)
        if (config_key_shown(cfg, (config_key)k, tr))
            n[cfg->v[k].src]++;
        else
            hidden++;
    fprintf(out,
            "<section id=config><h2>Configuration (%s)</h2>\n<p>%d from arguments or flags, %d "
            "from files (config files or the script's own), %d inferred from the trace",
            config_program_name(cfg->program), n[CONFIG_SRC_ARG] + n[CONFIG_SRC_FLAG],
            n[CONFIG_SRC_FILE], n[CONFIG_SRC_TRACE]);
    if (n[CONFIG_SRC_DEFAULT])
        fprintf(out, ", %d nanoGPT defaults", n[CONFIG_SRC_DEFAULT]);
    fprintf(out,
            ", %d unknown (never shown as a value; what a prediction assumes in its place, it "
            "says)",
            n[CONFIG_SRC_UNKNOWN]);
    if (hidden) /* the counts are of the rows below, as the text report says */
        fprintf(out,
                "; %d more not shown here (of a transformer's shape, which this model's "
                "what-ifs do not use; the JSON report's config has them)",
                hidden);
    fputs(".</p>\n", out);
    fputs("<table id=config-table><tr><th>key</th><th>value</th><th>source</th><th>where, or "
          "how it was found</th><th>meaning</th></tr>\n",
          out);
    for (int k = 0; k < CFG_COUNT; k++) {
        const config_value *v = &cfg->v[k];
        char buf[40];
        if (!config_key_shown(cfg, (config_key)k, tr))
            continue;
        /* (data-key: nanoGPT's name, as JSON keys it; the cell: as the text table names it) */
        char said[160];
        const char *name = config_key_said(cfg, (config_key)k, said, sizeof said);
        fprintf(out, "<tr data-key=\"%s\"><td><code>", config_key_name((config_key)k));
        html_esc(out, name);
        fputs("</code></td><td>", out);
        html_esc(out, config_value_text(cfg, (config_key)k, buf, sizeof buf));
        fprintf(out, "</td><td><span class=\"src src-%s\">%s</span></td><td class=sub2>",
                config_source_name(v->src), config_source_name(v->src));
        char why[sizeof v->where + 64];
        if (v->src == CONFIG_SRC_UNKNOWN) /* ("unknown" is the source column's) */
            html_esc(out, config_unknown_text(cfg, (config_key)k, why, sizeof why));
        else if (v->src == CONFIG_SRC_DEFAULT)
            fputs("nanoGPT train.py's default", out); /* predict's, without a trace */
        else if (v->src == CONFIG_SRC_FLAG)
            fputs("given on vramtrace's command line", out);
        if (v->where[0] && v->src != CONFIG_SRC_UNKNOWN) { /* (an unknown's: its reason) */
            fputs(v->src == CONFIG_SRC_DEFAULT || v->src == CONFIG_SRC_FLAG ? "; " : "", out);
            html_esc(out, v->where);
        }
        fprintf(out, "</td><td class=sub2>%s</td></tr>\n", config_key_doc((config_key)k));
    }
    fputs("</table>\n", out);
    if (m->note[0]) {
        fputs("<p class=sub>Note: ", out);
        html_esc(out, m->note);
        fputs("</p>\n", out);
    }
    for (int i = 0; i < cfg->nwarnings && i < 4; i++) {
        fputs("<p class=sub>Note: ", out);
        html_esc(out, cfg->warnings[i]);
        fputs("</p>\n", out);
    }
    if (cfg->torch_version[0]) {
        fputs("<p class=sub>Recorded: PyTorch ", out);
        html_esc(out, cfg->torch_version);
        if (cfg->cuda_version[0]) {
            fputs(", built for CUDA ", out);
            html_esc(out, cfg->cuda_version);
        }
        fputs("</p>\n", out);
    }
    fputs("</section>\n", out);
}

static void trained_row(FILE *out, const char *what, const char *state, const char *cls,
                        const char *where)
{
    fprintf(out, "<tr><td>%s</td><td><span class=\"st %s\">", what, cls);
    html_esc(out, state);
    fputs("</span></td><td class=sub2>", out);
    html_esc(out, where);
    fputs("</td></tr>\n", out);
}

void html_trained(FILE *out, const report_ctx *c)
{
    const model_result *m = c->model;
    if (!m)
        return;
    const run_recognition *r = &m->rec;
    char fam[160], buf[440], h2[160];
    const char *unsure = model_trained_unsure(m);
    snprintf(h2, sizeof h2, "What ran (%s)", unsure ? unsure : "");
    snprintf(fam, sizeof fam, "%s%s%s%s", family_text(r), r->model_class[0] ? " (" : "",
             r->model_class, r->model_class[0] ? ")" : "");
    fprintf(out,
            "<section id=trained><h2>%s</h2>\n<table id=trained-table><tr><th>"
            "</th><th>found</th><th>evidence</th></tr>\n",
            m->shape.no_training ? "What ran: forwards only (no backward pass, no optimizer step: "
                                   "nothing was trained)"
            : unsure             ? h2
                                 : "What was trained");
    trained_row(out, "model", fam, r->family == FAM_UNKNOWN ? "unk" : "fam", r->family_where);
    trained_row(out, "optimizer", r->optim == OPT_UNKNOWN ? "unknown" : optim_text(r),
                r->optim == OPT_UNKNOWN ? "unk" : "fam", r->optim_where);
    if (r->trainable && m->weights_untyped) {
        char ub[400];
        model_untyped_said(m, ub, sizeof ub);
        snprintf(buf, sizeof buf, "%.2f M weight elements; beside them %s",
                 (double)r->trainable / 1e6, ub);
        trained_row(out, "trainable", buf, "fam", r->trainable_where);
    } else if (r->trainable && m->params_trace) {
        snprintf(buf, sizeof buf, "%.2f M of the %.2f M weight elements%s",
                 (double)r->trainable / 1e6, (double)m->params_trace / 1e6,
                 m->ema_said[0] ? ", their EMA copy left out" : "");
        trained_row(out, "trainable", buf, "fam", r->trainable_where);
    }
    for (int i = 0; i < FEATURE_COUNT; i++) {
        int st = r->feat[i].state;
        trained_row(out, feature_words((feature_id)i), feature_state_word(st),
                    st == FEAT_ON    ? "on"
                    : st == FEAT_OFF ? "off"
                                     : "unk",
                    r->feat[i].where);
    }
    if (r->loop[0])
        trained_row(out, m->shape.no_training ? "loop" : "training loop",
                    recognize_loop_words(r->loop), "fam", r->loop_where);
    if (r->batchnorm)
        trained_row(out, "batch statistics", "BatchNorm", "fam",
                    "BatchNorm in the forward: its statistics depend on the micro-batch");
    fputs("</table>\n<p class=sub>What is on is never recommended; the what-ifs start from the "
          "run's own state.</p></section>\n",
          out);
}

/* module_table: one moment's modules (top 12, the rest summed, nothing hidden), each with a
 * bar of its bytes by category */
static void module_table(FILE *out, const report_module *mods, size_t n, uint64_t total,
                         const char *id, const char *when)
{
    char b[32];
    if (!n || !total)
        return;
    fprintf(out,
            "<h3>%s</h3>\n<table id=\"%s\" class=modules><tr><th class=n>bytes</th><th "
            "class=n>share</th><th></th><th class=n>tensors</th><th>module</th></tr>\n",
            when, id);
    uint64_t rest = 0, nrest = 0, top = mods[0].bytes ? mods[0].bytes : 1;
    for (size_t i = 0; i < n; i++) {
        const report_module *md = &mods[i];
        if (i >= 12) {
            rest += md->bytes;
            nrest += md->count;
            continue;
        }
        fprintf(out,
                "<tr><td class=n>%s</td><td class=n>%.1f %%</td><td class=barcell><div "
                "class=mbar style=\"width:%.1f%%\">",
                html_bytes(md->bytes, b, sizeof b), 100.0 * (double)md->bytes / (double)total,
                100.0 * (double)md->bytes / (double)top);
        for (int k = 0; k < CAT_COUNT; k++)
            if (md->by_cat[k] && md->bytes)
                fprintf(out, "<span class=\"c-%s\" style=\"width:%.2f%%\" title=\"%s: %s\"></span>",
                        category_key((category)k),
                        100.0 * (double)md->by_cat[k] / (double)md->bytes,
                        category_name((category)k), html_bytes(md->by_cat[k], b, sizeof b));
        fprintf(out, "</div></td><td class=n>%llu</td><td class=site>",
                (unsigned long long)md->count);
        html_esc(out, md->text);
        fputs("</td></tr>\n", out);
    }
    if (rest)
        fprintf(out,
                "<tr><td class=n>%s</td><td class=n>%.1f %%</td><td></td><td class=n>%llu</td>"
                "<td>(%zu more modules)</td></tr>\n",
                html_bytes(rest, b, sizeof b), 100.0 * (double)rest / (double)total,
                (unsigned long long)nrest, n - 12);
    fputs("</table>\n", out);
}

void html_modules(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    char said[64]; /* the categories that hold bytes in either table (a CNN's: no attention) */
    report_modules_cats(c->mod_peak, c->nmod_peak, c->mod_oom, r->has_oom ? c->nmod_oom : 0, said,
                        sizeof said);
    if (*said)
        said[0] = (char)(said[0] - 'a' + 'A');
    fprintf(out,
            "<section id=modules><h2>Where the activations come from</h2>\n<p class=sub>"
            "%s live at a moment, by the nn.Module whose forward made them; the bar shows each "
            "module's bytes by category.</p>\n",
            *said ? said : "Activations, logits/loss and attention");
    if (!r->tensor_mode)
        fputs("<p>By module needs tensor events: segment mode sees the allocator's segments "
              "only (vramtrace run --tensors records every tensor).</p>\n",
              out);
    else if (!c->nmod_peak && !(r->has_oom && c->nmod_oom))
        fputs("<p>No activations, logits or attention scores were live at the peak.</p>\n", out);
    char when[96]; /* the moment the text report names */
    snprintf(when, sizeof when, "at the %s peak (%.3f s)",
             c->mod_peak_is_tensors ? "allocated" : "process", (double)c->mod_peak_ns / 1e9);
    module_table(out, c->mod_peak, c->nmod_peak, c->mod_peak_total, "modules-peak", when);
    if (r->has_oom)
        module_table(out, c->mod_oom, c->nmod_oom, c->mod_oom_total, "modules-oom",
                     "when the out-of-memory allocation failed");
    fputs("</section>\n", out);
}
