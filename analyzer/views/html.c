/* html.c — the report as one HTML page (html.h): the page itself, its header, the timeline's
 * data (one JSON block, strings through jsonw.c), the breakdown at the peak and the top sites;
 * the diagnosis sections are html_model.c and html_config.c, the icicle html_flame.c, the
 * style and script html_assets.c. Every trace string goes through escape_html. */
#include "html.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "flame.h"
#include "html_parts.h"
#include "jsonw.h"
#include "model_views.h"
#include "report_views.h"

static const char *const phase_colors[] = {"#BBBBBB", "#0072B2", "#D55E00", "#009E73",
                                           "#CC79A7", "#E69F00", "#56B4E9", "#E3E3E3"};
_Static_assert(sizeof phase_colors / sizeof *phase_colors == PHASE_COUNT, "a colour per phase");

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

/* ---- the timeline: whole moments of the replay (timeline_moments), never a mix of instants,
 * so every drawn total is the process's live bytes at that instant ---- */
static void series(FILE *out, const timeline *tl)
{
    size_t n = 0;
    const timeline_moment **m = timeline_moments(tl, HTML_POINTS, &n);
    fputs("\"t\":[", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%.3f", i ? "," : "", ms(m[i]->t));
    fputs("],\"v\":{\"_\":0", out);
    for (int c = 0; c < CAT_COUNT; c++) {
        uint64_t any = 0;
        for (size_t i = 0; i < n; i++)
            any |= m[i]->v[c];
        if (!any)
            continue;
        fprintf(out, ",\"%s\":[", category_key(c));
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%" PRIu64, i ? "," : "", m[i]->v[c]);
        fputs("]", out);
    }
    fputs("}", out);
    free(m);
}

/* phase slices, one band row per thread (in order of appearance, 4 rows at most) */
static void slices(FILE *out, const timeline *tl, int *nthreads)
{
    uint32_t rows[4];
    int nrows = 0;
    uint64_t span = tl->t_end > tl->t_begin ? tl->t_end - tl->t_begin : 1;
    uint64_t min = tl->nslices > HTML_SLICES ? span / HTML_SLICES : 0;
    size_t k = 0;
    fputs(",\"slices\":[", out);
    for (size_t i = 0; i < tl->nslices; i++) {
        const timeline_slice *s = &tl->slices[i];
        int row = 0;
        while (row < nrows && rows[row] != s->thread)
            row++;
        if (row == nrows) {
            if (nrows == 4)
                continue;
            rows[nrows++] = s->thread;
        }
        if (s->t1 - s->t0 < min)
            continue;
        fprintf(out, "%s[%.3f,%.3f,%d,%d]", k++ ? "," : "", ms(s->t0), ms(s->t1), s->phase, row);
    }
    fputs("]", out);
    *nthreads = nrows;
}

static void data(FILE *out, report_ctx *c)
{
    replay_result *r = &c->runs[0];
    const timeline *tl = r->tl;
    int nthreads = 0;
    char site[512];
    fputs("{\"cats\":[", out);
    for (int k = 0; k < CAT_COUNT; k++)
        fprintf(out, "%s{\"key\":\"%s\",\"name\":\"%s\",\"color\":\"%s\",\"hatch\":%d}",
                k ? "," : "", category_key(k), category_name(k), html_cat_color(k), k == CAT_CACHE);
    fputs("],\"phaseNames\":[", out);
    for (int p = 0; p < PHASE_COUNT; p++)
        fprintf(out, "%s\"%s\"", p ? "," : "", phase_name(p));
    fputs("],\"phaseColors\":[", out);
    for (int p = 0; p < PHASE_COUNT; p++)
        fprintf(out, "%s\"%s\"", p ? "," : "", phase_colors[p]);
    fputs("],", out);
    series(out, tl);
    slices(out, tl, &nthreads);
    fprintf(out, ",\"threads\":%d,\"t0\":%.3f,\"t1\":%.3f,\"ticks\":[", nthreads, ms(tl->t_begin),
            ms(tl->t_end > r->end_ns ? tl->t_end : r->end_ns));
    for (size_t i = 0; i < tl->nticks && i < HTML_TICKS; i++)
        fprintf(out, "%s%.3f", i ? "," : "", ms(tl->ticks[i]));
    fprintf(out, "],\"peak\":{\"t\":%.3f,\"bytes\":%" PRIu64 "},\"oom\":", ms(r->t_process),
            r->peak_process);
    if (r->has_oom) {
        fprintf(out, "{\"t\":%.3f,\"requested\":%" PRIu64 ",\"site\":", ms(r->oom_time_ns),
                r->oom_requested);
        jsonw_cstr(out, replay_site_text(r, r->oom_stack, site, sizeof site));
        fputs("}", out);
    } else
        fputs("null", out);
    fprintf(out, ",\"cap\":%" PRIu64 ",\"capName\":", c->model ? c->model->capacity : 0);
    jsonw_cstr(out, c->model ? c->model->capacity_name : "");
    html_flame_data(out, r);
    fputs("}", out);
}

/* ---- the tables ---- */
static void breakdown(FILE *out, replay_result *r, const run_facts *f)
{
    char b1[32], b2[32];
    uint64_t total = cat_breakdown_total(&r->at_peak.by_cat);
    fprintf(out,
            "<section id=peak><h2>Every byte at the process peak (%s)%s</h2>\n"
            "<table id=\"breakdown\"><tr><th>category</th><th class=n>bytes</th><th "
            "class=n>share</th><th></th>%s<th>meaning</th></tr>\n",
            html_bytes(total, b1, sizeof b1), r->has_oom ? ", and at the OOM" : "",
            r->has_oom ? "<th class=n>at the OOM</th>" : "");
    for (int k = 0; k < CAT_COUNT; k++) {
        uint64_t v = r->at_peak.by_cat.bytes[k], o = r->has_oom ? r->at_oom.by_cat.bytes[k] : 0;
        if (!v && !o)
            continue;
        double share = total ? 100.0 * (double)v / (double)total : 0.0;
        fprintf(out, "<tr data-cat=\"%s\"><td>", category_key(k));
        html_swatch(out, k);
        fprintf(out,
                "%s</td><td class=n>%s</td><td class=n>%.1f %%</td><td class=barcell><div "
                "class=\"bar c-%s\" style=\"width:%.1f%%\"></div></td>",
                category_name(k), html_bytes(v, b1, sizeof b1), share, category_key(k), share);
        if (r->has_oom)
            fprintf(out, "<td class=n>%s</td>", html_bytes(o, b2, sizeof b2));
        fprintf(out, "<td class=sub2>%s", category_doc(k));
        if (k == CAT_PARAMETERS && (f->ema_at_peak || f->ema_at_oom)) /* not the model's own */
            fprintf(out, ", and an EMA copy of them (%s, %s)",
                    html_bytes(f->ema_at_peak ? f->ema_at_peak : f->ema_at_oom, b1, sizeof b1),
                    f->ema_words);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
    char why[400]; /* (as the text says it: report_text.c) */
    if (report_cache_text(r, why, sizeof why)) {
        why[0] = 'A'; /* a sentence of its own here */
        fputs("<p class=sub>", out);
        html_esc(out, why);
        fputs(".</p>\n", out);
    }
    if (!r->tensor_mode && r->segment_mode)
        fputs("<p class=sub>Segment mode: each row is the segments PyTorch's allocator reserved "
              "while that phase ran, not tensors of that kind; gradients, optimizer state and "
              "saved activations are told apart only with tensor events (vramtrace run "
              "--tensors).</p>\n",
              out);
    fputs("</section>\n", out);
}

static void sites(FILE *out, const report_ctx *c)
{
    char b[32];
    fputs("<section id=allocsites><h2>Top allocation sites at the peak</h2>\n<table "
          "id=\"sites\"><tr><th class=n>bytes</th><th class=n>count</th><th>category</th>"
          "<th>site (",
          out);
    html_esc(out, report_sites_heading(&c->runs[0]));
    fputs(")</th></tr>\n", out);
    for (size_t i = 0; i < c->nsites && i < HTML_SITES; i++) {
        const report_site *s = &c->sites[i];
        fprintf(out, "<tr><td class=n>%s</td><td class=n>%u</td><td>",
                html_bytes(s->bytes, b, sizeof b), s->count);
        html_swatch(out, s->category);
        fprintf(out, "%s</td><td class=site>", category_name((category)s->category));
        html_esc(out, s->text);
        const char *native = report_site_native(c, i);
        if (native[0] && strncmp(native, s->text, strlen(native))) { /* (not the site) */
            fputs("<br>via ", out);
            html_esc(out, native);
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table></section>\n", out);
}

/* unnamed_note: why some native frames stay "module+0xoffset" (flame_note), said on the page */
static void unnamed_note(FILE *out, replay_result *r)
{
    char note[1024];
    if (!*flame_note(r, &r->at_peak, note, sizeof note))
        return;
    fputs("<p class=sub id=unnamed>Native frames the capture could not name (it names exported "
          "functions only) stay module+0xoffset: ",
          out);
    html_esc(out, note);
    fputs(".</p>\n", out);
}

static void header(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    const tables_process *p = tables_process_get(r->t);
    char b1[32], b2[32], b3[32], fails[REPORT_FAILED_LEN], lost[REPORT_LOST_LEN];
    fputs("<header><h1>vramtrace report</h1>\n<p class=cmd>", out);
    for (uint32_t i = 0; p && i < p->argc && i < 64; i++) {
        fputs(i ? " " : "", out);
        escape_html_fputs(out, p->argv[i].s, p->argv[i].len);
    }
    fputs("</p>\n<dl class=run><dt>trace</dt><dd>", out);
    html_esc(out, r->path);
    fprintf(out, " (%s", reader_status_name(r->status));
    if (r->status == READER_TRUNCATED && r->status_msg[0]) {
        fputs(": ", out);
        html_esc(out, r->status_msg);
    }
    fputs(")</dd>\n", out);
    for (size_t i = 0; i < tables_n_devices(r->t); i++) {
        const tables_device *d = tables_device_at(r->t, i);
        fprintf(out, "<dt>device %u</dt><dd>", d->ordinal);
        escape_html_fputs(out, d->name.s, d->name.len);
        fprintf(out, ", %s</dd>\n", html_bytes(d->total_bytes, b1, sizeof b1));
    }
    if (c->facts.card_bytes) {
        fputs("<dt>card</dt><dd>emulated: ", out);
        html_esc(out, c->facts.card_name);
        fprintf(out, " (%s)</dd>\n", html_bytes(c->facts.card_bytes, b1, sizeof b1));
    }
    fputs("<dt>mode</dt><dd>", out);
    html_esc(out, report_mode_text(r));
    if (report_tracker_text(r)) {
        fputs("<br>", out);
        html_esc(out, report_tracker_text(r));
    }
    char sn[480];
    if (report_stacks_text(r, sn, sizeof sn)) {
        fputs("<br>stacks: ", out);
        html_esc(out, sn);
    }
    fprintf(out,
            "</dd>\n<dt>peaks</dt><dd>process %s at %.3f s, reserved %s, allocated %s</dd>\n"
            "<dt>events</dt><dd>%" PRIu64 " (%s%s), %u %s%s, %.2f s "
            "traced</dd></dl>\n",
            html_bytes(r->peak_process, b1, sizeof b1), (double)r->t_process / 1e9,
            html_bytes(r->peak_reserved, b2, sizeof b2),
            r->tensor_mode ? html_bytes(r->peak_allocated, b3, sizeof b3)
                           : "not visible in segment mode",
            r->n_events,
            report_failed_text(r->n_failed, r->n_failed_frees, r->n_failed_frees_shutdown, fails,
                               sizeof fails),
            report_lost_text(r->run_dropped, replay_missing_events(r), replay_made_events(r),
                             r->lost_why | r->ended, lost, sizeof lost),
            report_opt_steps(c), report_steps_noun(c),
            r->tensor_mode ? report_steps_hedge(c) : " that grew the cache",
            (double)r->end_ns / 1e9);
    char caught[REPORT_CAUGHT_LEN]; /* (as the text report's oom line says it) */
    if (report_caught_text(r, caught, sizeof caught)) {
        fputs("<p class=note>out of memory: ", out);
        html_esc(out, caught);
        fputs("</p>\n", out);
    }
    if (r->vmm_unmapped_handles) /* as the text report's peaks say it */
        fprintf(out,
                "<p class=note>not counted: %s in %" PRIu64
                " physical chunks created and released without being mapped (an expansion that "
                "failed when the device was full; PyTorch does not count them as reserved "
                "either)</p>\n",
                html_bytes(r->vmm_unmapped_bytes, b1, sizeof b1), r->vmm_unmapped_handles);
    fputs("<nav><a href=\"#summary\">summary</a><a href=\"#timeline\">timeline</a><a "
          "href=\"#peak\">at the peak</a>",
          out);
    if (r->has_oom)
        fputs("<a href=\"#oom\">OOM</a>", out);
    fprintf(out,
            "<a href=\"#advice\">advice</a><a href=\"#config\">configuration</a><a "
            "href=\"#trained\">%s</a><a href=\"#formula\">formula</a><a "
            "href=\"#modules\">by module</a><a href=\"#stacks\">by stack</a><a "
            "href=\"#allocsites\">sites</a></nav></header>\n",
            c->model && (c->model->shape.no_training || model_trained_unsure(c->model))
                ? "what ran"
                : "what was trained");
}

/* style: the page's style sheet, then one class per category colour (swatches, bars) */
static void style(FILE *out)
{
    fprintf(out, "<style>\n%s", html_css);
    for (int k = 0; k < CAT_COUNT; k++)
        if (k == CAT_CACHE)
            fprintf(out,
                    ".c-%s{background:repeating-linear-gradient(135deg,%s 0 3px,#fff 3px "
                    "5px)}\n",
                    category_key(k), html_cat_color(k));
        else
            fprintf(out, ".c-%s{background:%s}\n", category_key(k), html_cat_color(k));
    fputs("</style>", out);
}

static void timeline_section(FILE *out, const replay_result *r)
{
    fputs("<section id=timeline><h2>Live bytes per category over the run<button id=reset "
          "class=btn>reset zoom</button></h2>\n<p class=sub>Wheel: zoom, drag: pan, double-click: "
          "reset, hover: the bytes of each category at that instant. The band above: the phase "
          "of each thread; thin lines: optimizer steps; dashed: the peak; red: the OOM. Each "
          "point is one instant of the run (each span's lowest, tallest and last, every "
          "category's largest): its stack adds up to the process's live bytes then.</p>\n"
          "<div id=phases></div><canvas id=tl height=360></canvas><div id=legend></div>\n"
          "<p class=sub id=tlnote></p>\n",
          out);
    if (!r->tl->has_cats)
        fputs("<p>No per-category timeline: the replay could not sweep the trace's allocations a "
              "second time.</p>\n",
              out);
    else if (!r->tensor_mode && r->segment_mode)
        fputs("<p class=sub>Segment mode: each band is the segments PyTorch's allocator reserved, "
              "sorted by the phase that reserved them, not tensors of that kind (vramtrace run "
              "--tensors shows the tensors).</p>\n",
              out);
    fputs("</section>\n", out);
}

/* ranks: several files' peaks, one row each (the text's "Per rank / process"), and which one the
 * page is of; none for one file */
static void ranks(FILE *out, const report_ctx *c)
{
    char b1[32], b2[32];
    if (c->nruns < 2)
        return;
    fprintf(out,
            "<section id=ranks><h2>Per rank / process</h2>\n<p class=sub>%d files: this page is "
            "of %s.</p>\n<table><tr><th>rank</th><th class=n>pid</th><th class=n>reserved</th>"
            "<th class=n>process</th><th>OOM</th><th>file</th></tr>\n",
            c->nruns, report_full_rank_text(c));
    for (int i = 0; i < c->nruns; i++) {
        const replay_result *r = &c->runs[i];
        const tables_process *p = tables_process_get(r->t);
        const char *rank = tables_env(r->t, "RANK");
        fputs("<tr><td>", out);
        html_esc(out, rank ? rank : "-");
        fprintf(out,
                "</td><td class=n>%u</td><td class=n>%s</td><td class=n>%s</td><td>%s</td><td>",
                p ? p->pid : 0, html_bytes(r->peak_reserved, b1, sizeof b1),
                html_bytes(r->peak_process, b2, sizeof b2), r->has_oom ? "yes" : "no");
        html_esc(out, r->path);
        fputs(i ? "</td></tr>\n" : " (this page)</td></tr>\n", out);
    }
    fputs("</table></section>\n", out);
}

int html_write(FILE *out, report_ctx *c)
{
    replay_result *r = &c->runs[0];
    char why[512];
    if (!r->tl)
        return -1;
    fputs("<!doctype html>\n<html lang=en><head><meta charset=utf-8>\n"
          "<meta name=viewport content=\"width=device-width\">\n<title>vramtrace: ",
          out);
    html_esc(out, r->path);
    fputs("</title>\n", out);
    style(out);
    fputs("</head><body>\n", out);
    header(out, c);
    if (html_too_short(r, why, sizeof why)) {
        fputs("<p id=too-short class=warn>", out);
        html_esc(out, why);
        fputs("</p>\n", out);
    } else {
        html_summary(out, c);
    }
    ranks(out, c);
    timeline_section(out, r);
    if (html_too_short(r, why, sizeof why)) {
        html_config(out, c); /* the command line's, all a cut trace can say */
    } else {
        breakdown(out, r, &c->facts);
        html_oom(out, c);
        html_advice(out, c);
        html_config(out, c);
        html_trained(out, c);
        html_formula(out, c);
        html_modules(out, c);
        html_growth(out, c);
    }
    fputs("<section id=stacks><h2>Bytes live at the peak by stack (the program's outermost "
          "Python frame on top)</h2>\n<p class=sub>The Python stack first, the operation's "
          "native frames below it; CPython's own frames folded away. Hover: details, click: zoom "
          "into a frame (click it again to go back up).</p>\n"
          "<div id=flamebox><canvas id=flame></canvas></div><div id=details></div>\n",
          out);
    unnamed_note(out, r);
    fputs("</section>\n", out);
    sites(out, c);
    fputs("<div id=tip></div><pre id=vt-errors></pre>\n"
          "<script type=\"application/json\" id=\"vt-data\">",
          out);
    data(out, c);
    fprintf(out, "</script>\n<script>\n%s</script>\n</body></html>\n", html_js);
    return ferror(out) ? -1 : 0;
}
