/* html_growth.c — the HTML page's section on long runs (#growth): what a bounded trace kept and
 * dropped, the live bytes at each step's end drawn as a line (the growth series), and the
 * stacks that grow step after step with their rate, since which step, and when the card is
 * reached. The same facts as the text report's (growth_view.c); render only. */
#include <stdio.h>
#include <string.h>

#include "growth_view.h"
#include "html_parts.h"

/* line: the series of live bytes at step ends, an SVG polyline 640 x 120 */
static void line(FILE *out, const growth *g)
{
    if (g->npts < 2)
        return;
    uint64_t hi = 1;
    for (unsigned i = 0; i < g->npts; i++)
        hi = g->pts[i].live > hi ? g->pts[i].live : hi;
    uint32_t s0 = g->pts[0].step, s1 = g->pts[g->npts - 1].step;
    char b[32];
    fprintf(out,
            "<svg id=growth-line width=640 height=140 viewBox=\"0 0 640 140\" role=img "
            "aria-label=\"live bytes at each step's end\"><text x=0 y=12 font-size=11>%s</text>"
            "<polyline fill=none stroke=\"#0072B2\" stroke-width=1.5 points=\"",
            html_bytes(hi, b, sizeof b));
    for (unsigned i = 0; i < g->npts; i++)
        fprintf(out, "%s%.1f,%.1f", i ? " " : "",
                s1 > s0 ? 640.0 * (g->pts[i].step - s0) / (double)(s1 - s0) : 0.0,
                130.0 - 110.0 * (double)g->pts[i].live / (double)hi);
    fprintf(out,
            "\"/><text x=0 y=139 font-size=11>step %u</text><text x=600 y=139 font-size=11>"
            "step %u</text></svg>\n",
            s0, s1);
}

void html_growth(FILE *out, const report_ctx *c)
{
    const report_growth *g = &c->growth;
    const replay_result *r = &c->runs[0];
    char a[32], b[32], d[32];
    if (!g->steps && !r->chunked)
        return;
    fputs("<section id=growth><h2>Long runs: growth across steps</h2>\n", out);
    if (r->chunked) {
        fprintf(out, "<p id=bounded>Bounded trace: %s",
                r->layout.max_size ? "kept under " : "compressed, not bounded");
        if (r->layout.max_size)
            fputs(html_bytes(r->layout.max_size, a, sizeof a), out);
        if (r->dropped_events)
            fprintf(out,
                    ". %llu of the run's %llu events were dropped (%.3f s to %.3f s); the "
                    "beginning is kept in full and the replay starts again at %.3f s from a "
                    "snapshot of what was alive then, exact from there to the end.</p>\n",
                    (unsigned long long)r->dropped_events, (unsigned long long)r->run_events,
                    (double)r->dropped_from_ns / 1e9, (double)r->dropped_to_ns / 1e9,
                    (double)r->snapshot_ns / 1e9);
        else
            fputs(". Nothing was dropped: every event of the run is in the file.</p>\n", out);
    }
    if (!g->steps) {
        fputs("</section>\n", out);
        return;
    }
    char head[200]; /* the text report's words: numbers and fixed text, nothing to escape */
    growth_heading(g, head, sizeof head);
    fprintf(out, "<p class=sub>%s%s; the live bytes at the end of each step (%s):</p>\n", head,
            g->from_records ? ", every one from the trace's per-step summaries" : "",
            g->tensors ? "tensors" : "device memory");
    line(out, &r->growth);
    if (g->quiet == REPORT_GROWTH_NO_END) {
        fprintf(out,
                "<p id=growth-few>No step end seen before the trace's end (a step is seen to "
                "end at the first allocation after its backward or optimizer allocations): "
                "nothing to compare step to step (%s live at the trace's end).</p></section>\n",
                html_bytes(g->last_live, a, sizeof a));
        return;
    }
    if (g->quiet == REPORT_GROWTH_TOO_FEW) { /* the rule cannot find growth in so few */
        fprintf(out,
                "<p id=growth-few>Too few step ends to tell growth (%u seen before the trace's "
                "end, %u needed: growth is a rise over at least %d steps): %s live at the last "
                "step end seen (step %u).</p></section>\n",
                g->step_ends, g->ends_needed, GROWTH_MIN_SPAN,
                html_bytes(g->last_live, a, sizeof a), g->last_live_step);
        return;
    }
    if (g->quiet == REPORT_GROWTH_NONE) {
        fprintf(out,
                "<p id=growth-none>Nothing grows step after step (%u step ends compared; "
                "growth is a rise over at least %d steps): %s live at the last step end seen "
                "(step %u).</p></section>\n",
                g->step_ends, GROWTH_MIN_SPAN, html_bytes(g->last_live, a, sizeof a),
                g->last_live_step);
        return;
    }
    fputs("<table id=growing><tr><th class=n>per step</th><th class=n>since step</th>"
          "<th class=n>then</th><th class=n>last step</th><th>phase</th><th>site (the "
          "script's line below)</th></tr>\n",
          out);
    for (int i = 0; i < g->nsites; i++) {
        const report_growth_site *s = &g->sites[i];
        fprintf(out,
                "<tr><td class=n>+%s</td><td class=n>%u</td><td class=n>%s</td><td "
                "class=n>%s</td><td>%s</td><td class=site>",
                html_bytes((uint64_t)s->rate, a, sizeof a), s->since_step,
                html_bytes(s->bytes_since, b, sizeof b), html_bytes(s->bytes_last, d, sizeof d),
                s->phase);
        html_esc(out, s->text);
        if (s->caller[0]) {
            fputs("<br>from ", out);
            html_esc(out, s->caller);
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
    if (g->nmore)
        fprintf(out, "<p>and %d more stacks growing (%s per step in all)</p>\n", g->nmore,
                html_bytes((uint64_t)g->rate, a, sizeof a));
    if (g->reaches)
        fprintf(out,
                "<p id=growth-card>At %s per step the process reaches the card (%s; %s at its "
                "highest in the last step) in about %.0f steps, at step %u.</p>\n",
                html_bytes((uint64_t)g->rate, a, sizeof a), html_bytes(g->capacity, b, sizeof b),
                html_bytes(g->last_peak, d, sizeof d), g->steps_to_card, g->at_step);
    fputs("</section>\n", out);
}
