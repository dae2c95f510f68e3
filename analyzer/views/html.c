/* html.c — the HTML report (html.h): tables rendered here with every trace string through
 * escape_html (trace/escape.h), the drawing data as one JSON block (strings through jsonw.c),
 * the folded stacks from flame.c made into a tree for the icicle. */
#include "html.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "flame.h"
#include "jsonw.h"
#include "stackview.h"

/* one colour per category (categories.h order) and per phase (phases.h order) */
static const char *const cat_colors[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#8cd17d", "#499894", "#86bcb6", "#d4d4d4", "#f1ce63", "#79706e"};
_Static_assert(sizeof cat_colors / sizeof *cat_colors == CAT_COUNT, "a colour per category");
static const char *const phase_colors[] = {"#9e9e9e", "#1f77b4", "#d62728", "#2ca02c",
                                           "#9467bd", "#8c564b", "#e377c2", "#c7c7c7"};
_Static_assert(sizeof phase_colors / sizeof *phase_colors == PHASE_COUNT, "a colour per phase");

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static const char *human(uint64_t b, char *buf, size_t len)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 4)
        v /= 1024, i++;
    snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, u[i]);
    return buf;
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

/* ---- the icicle: a trie of the folded stacks at the peak, frames outermost first ---- */
typedef struct fnode {
    int32_t parent, child, next, cat; /* cat: a leaf's category, else -1 */
    uint32_t name;
    uint64_t value;
    int32_t out; /* index in the page's node list, -1 when too small to show */
} fnode;

typedef struct ftree {
    fnode *n;
    size_t len, cap;
    char **names;
    size_t nnames, capnames;
    uint32_t *hash; /* name index + 1 by string hash */
    size_t caphash;
    int oom;
} ftree;

static uint32_t intern(ftree *t, const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = s; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    if ((t->nnames + 1) * 2 > t->caphash) {
        size_t nc = t->caphash ? t->caphash * 2 : 4096;
        uint32_t *nh = calloc(nc, sizeof *nh);
        if (!nh) {
            t->oom = 1;
            return 0;
        }
        for (size_t i = 0; i < t->nnames; i++) {
            uint64_t g = 1469598103934665603ull;
            for (const char *p = t->names[i]; *p; p++)
                g = (g ^ (unsigned char)*p) * 1099511628211ull;
            size_t j = g & (nc - 1);
            while (nh[j])
                j = (j + 1) & (nc - 1);
            nh[j] = (uint32_t)i + 1;
        }
        free(t->hash);
        t->hash = nh;
        t->caphash = nc;
    }
    size_t j = h & (t->caphash - 1);
    for (; t->hash[j]; j = (j + 1) & (t->caphash - 1))
        if (!strcmp(t->names[t->hash[j] - 1], s))
            return t->hash[j] - 1;
    if (t->nnames == t->capnames) {
        size_t nc = t->capnames ? t->capnames * 2 : 1024;
        char **nn = realloc(t->names, nc * sizeof *nn);
        if (!nn) {
            t->oom = 1;
            return 0;
        }
        t->names = nn;
        t->capnames = nc;
    }
    if (!(t->names[t->nnames] = strdup(s))) {
        t->oom = 1;
        return 0;
    }
    t->hash[j] = (uint32_t)++t->nnames;
    return (uint32_t)t->nnames - 1;
}

/* child: the child of parent named name (category cat for a leaf), made when missing */
static int32_t child(ftree *t, int32_t parent, uint32_t name, int32_t cat)
{
    for (int32_t c = t->n[parent].child; c >= 0; c = t->n[c].next)
        if (t->n[c].name == name && t->n[c].cat == cat)
            return c;
    if (t->len == t->cap) {
        size_t nc = t->cap * 2;
        fnode *nn = realloc(t->n, nc * sizeof *nn);
        if (!nn) {
            t->oom = 1;
            return parent;
        }
        t->n = nn;
        t->cap = nc;
    }
    t->n[t->len] = (fnode){parent, -1, t->n[parent].child, cat, name, 0, -1};
    t->n[parent].child = (int32_t)t->len;
    return (int32_t)t->len++;
}

static void tree_build(ftree *t, replay_result *r)
{
    size_t nrows = 0;
    flame_row *rows = flame_rows(&r->at_peak, &nrows);
    stackview_frame *v = malloc(STACKVIEW_MAX * sizeof *v);
    char buf[1024], leaf[64];
    t->cap = 1024;
    t->n = malloc(t->cap * sizeof *t->n);
    if (!rows || !t->n || !v) {
        t->oom = 1;
        free(rows);
        free(v);
        return;
    }
    t->n[0] = (fnode){-1, -1, -1, -1, intern(t, "all"), 0, -1};
    t->len = 1;
    for (size_t i = 0; i < nrows && !t->oom; i++) {
        size_t nv = stackview_build(r->t, rows[i].stack_id, 0, v); /* outermost first */
        int32_t at = 0;
        t->n[0].value += rows[i].bytes;
        if (!nv)
            at = child(t, at, intern(t, "[no stack]"), -1), t->n[at].value += rows[i].bytes;
        for (size_t k = 0; k < nv && !t->oom; k++) {
            at = child(t, at, intern(t, stackview_name(r->t, &v[k], buf, sizeof buf)), -1);
            t->n[at].value += rows[i].bytes;
        }
        snprintf(leaf, sizeof leaf, "[%s]", category_name((category)rows[i].category));
        at = child(t, at, intern(t, leaf), rows[i].category);
        t->n[at].value += rows[i].bytes;
    }
    free(rows);
    free(v);
}

/* emit: the tree from its root (pre-order, so a parent precedes its children), nodes under
 * min bytes left out */
static void emit(FILE *out, ftree *t, uint64_t min, int32_t *k)
{
    int32_t *stack = malloc((t->len + 1) * sizeof *stack); /* every node is pushed once */
    size_t sp = 0;
    if (!stack)
        return;
    stack[sp++] = 0;
    while (sp) {
        int32_t c = stack[--sp];
        fnode *n = &t->n[c];
        if (c && n->value < min)
            continue;
        n->out = (*k)++;
        fprintf(out, "%s[%d,%u,%" PRIu64 ",%d]", n->out ? "," : "", c ? t->n[n->parent].out : -1,
                n->name, n->value, n->cat);
        for (int32_t ch = n->child; ch >= 0; ch = t->n[ch].next)
            stack[sp++] = ch;
    }
    free(stack);
}

static void flame_data(FILE *out, replay_result *r)
{
    ftree t = {0};
    int32_t k = 0;
    tree_build(&t, r);
    fputs(",\"flame\":{\"nodes\":[", out);
    if (!t.oom)
        emit(out, &t, t.n[0].value / 4000 + 1, &k);
    fputs("],\"names\":[", out);
    for (size_t i = 0; i < t.nnames; i++) {
        fputs(i ? "," : "", out);
        jsonw_cstr(out, t.names[i]);
        free(t.names[i]);
    }
    fputs("]}", out);
    free(t.names);
    free(t.hash);
    free(t.n);
}

static void data(FILE *out, report_ctx *c)
{
    replay_result *r = &c->runs[0];
    const timeline *tl = r->tl;
    int nthreads = 0;
    char site[512];
    fputs("{\"cats\":[", out);
    for (int k = 0; k < CAT_COUNT; k++)
        fprintf(out, "%s{\"key\":\"%s\",\"name\":\"%s\",\"color\":\"%s\"}", k ? "," : "",
                category_key(k), category_name(k), cat_colors[k]);
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
    flame_data(out, r);
    fputs("}", out);
}

/* ---- the tables ---- */
static void breakdown(FILE *out, replay_result *r)
{
    char b1[32], b2[32];
    uint64_t total = cat_breakdown_total(&r->at_peak.by_cat);
    fprintf(out,
            "<h2>At the peak (%s)%s</h2>\n<table id=\"breakdown\"><tr><th>category</th>"
            "<th class=n>bytes</th><th class=n>share</th>%s<th>meaning</th></tr>\n",
            human(total, b1, sizeof b1), r->has_oom ? " and at the OOM" : "",
            r->has_oom ? "<th class=n>at the OOM</th>" : "");
    for (int k = 0; k < CAT_COUNT; k++) {
        uint64_t v = r->at_peak.by_cat.bytes[k], o = r->has_oom ? r->at_oom.by_cat.bytes[k] : 0;
        if (!v && !o)
            continue;
        fprintf(out, "<tr data-cat=\"%s\"><td>%s</td><td class=n>%s</td><td class=n>%.1f %%</td>",
                category_key(k), category_name(k), human(v, b1, sizeof b1),
                total ? 100.0 * (double)v / (double)total : 0.0);
        if (r->has_oom)
            fprintf(out, "<td class=n>%s</td>", human(o, b2, sizeof b2));
        fprintf(out, "<td>%s</td></tr>\n", category_doc(k));
    }
    fputs("</table>\n", out);
}

static void sites(FILE *out, report_ctx *c)
{
    char b[32];
    fputs("<h2>Top allocation sites at the peak</h2>\n<table id=\"sites\"><tr><th class=n>bytes"
          "</th><th class=n>count</th><th>category</th><th>site</th></tr>\n",
          out);
    for (size_t i = 0; i < c->nsites && i < HTML_SITES; i++) {
        const report_site *s = &c->sites[i];
        fprintf(out, "<tr><td class=n>%s</td><td class=n>%u</td><td>%s</td><td class=site>",
                human(s->bytes, b, sizeof b), s->count, category_name((category)s->category));
        escape_html_fputs(out, s->text, strlen(s->text));
        if (s->native[0] && strcmp(s->native, s->text)) {
            fputs("<br>via ", out);
            escape_html_fputs(out, s->native, strlen(s->native));
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
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
    escape_html_fputs(out, note, strlen(note));
    fputs(".</p>\n", out);
}

static void header(FILE *out, replay_result *r)
{
    const tables_process *p = tables_process_get(r->t);
    char b1[32], b2[32], b3[32];
    fputs("<h1>vramtrace report</h1>\n<p class=sub>", out);
    for (uint32_t i = 0; p && i < p->argc && i < 64; i++) {
        fputs(i ? " " : "", out);
        escape_html_fputs(out, p->argv[i].s, p->argv[i].len);
    }
    fputs(p ? "<br>" : "", out);
    escape_html_fputs(out, r->path, strlen(r->path));
    fprintf(out,
            "</p>\n<p>peak: process %s, reserved %s, allocated %s; %" PRIu64
            " events, %u optimizer steps",
            human(r->peak_process, b1, sizeof b1), human(r->peak_reserved, b2, sizeof b2),
            human(r->peak_allocated, b3, sizeof b3), r->n_events, r->iterations);
    if (r->has_oom)
        fprintf(out, "; <span class=oom>out of memory in the %s asking for %s</span>",
                phase_name(r->oom_phase), human(r->oom_requested, b1, sizeof b1));
    fputs("</p>\n", out);
}

int html_write(FILE *out, report_ctx *c)
{
    replay_result *r = &c->runs[0];
    if (!r->tl)
        return -1;
    fprintf(out, "<!doctype html>\n<html lang=en><head><meta charset=utf-8>\n"
                 "<meta name=viewport content=\"width=device-width\">\n<title>vramtrace: ");
    escape_html_fputs(out, r->path, strlen(r->path));
    fprintf(out, "</title>\n<style>\n%s</style></head><body>\n", html_css);
    header(out, r);
    fputs("<h2>Live bytes per category over the run<button id=reset class=btn>reset zoom</button>"
          "</h2>\n<p class=sub>wheel: zoom, drag: pan, double-click: reset. Bands above: the phase "
          "of each thread; grey lines: optimizer steps; dashed: the peak; red: the OOM. Each point "
          "is "
          "one instant of the run (each span's lowest, tallest and last, every category's "
          "largest): its stack adds up to the process's live bytes then.</p>\n"
          "<div id=phases></div><canvas id=tl height=340></canvas><div id=legend></div>\n",
          out);
    if (!r->tl->has_cats)
        fputs("<p>No per-category timeline: the replay could not sweep the trace's allocations a "
              "second time.</p>\n",
              out);
    else if (!r->tensor_mode)
        fputs("<p class=sub>Segment mode: each band is the segments PyTorch's allocator reserved, "
              "sorted by the phase that reserved them, not tensors of that kind (run with "
              "--tensors to see the tensors).</p>\n",
              out);
    breakdown(out, r);
    fputs("<h2>Bytes live at the peak by stack (the program's outermost Python frame on top)</h2>"
          "\n<p class=sub>The Python stack first, the operation's native frames below it; "
          "CPython's own frames folded away. Hover: details, click: zoom into a frame (click it "
          "again to go back up).</p>\n"
          "<div id=flamebox><canvas id=flame></canvas></div><div id=details></div>\n",
          out);
    unnamed_note(out, r);
    sites(out, c);
    fputs("<div id=tip></div><pre id=vt-errors></pre>\n"
          "<script type=\"application/json\" id=\"vt-data\">",
          out);
    data(out, c);
    fprintf(out, "</script>\n<script>\n%s</script>\n</body></html>\n", html_js);
    return ferror(out) ? -1 : 0;
}
