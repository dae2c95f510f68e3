/* html.h — the report as one self-contained HTML page (no network): everything the text report
 * says — the run, the diagnosis at a glance, a zoomable stacked-area timeline of live bytes per
 * category (phase bands, optimizer steps, the peak, the OOM, the card), the breakdown at the
 * peak, the OOM's cause, the advice with predicted peaks, the configuration with each value's
 * source, what was trained, the formula comparison (or why none applies), where the
 * activations come from by module, an icicle of the bytes live at the peak and the top sites.
 * Data from the built report (report/report.c); html.c and its parts (html_parts.h) write it,
 * the page's script and style are html_assets.c. */
#ifndef VT_ANALYZER_HTML_H
#define VT_ANALYZER_HTML_H

#include <stdio.h>

#include "report.h"

#define HTML_POINTS 2000  /* timeline points at most */
#define HTML_SLICES 20000 /* phase slices at most (the shortest left out) */
#define HTML_TICKS 5000   /* optimizer-step ticks at most */
#define HTML_SITES 30     /* top sites listed */

extern const char html_css[], html_js[];

/* html_write: the page of c (built by report_build) into out. Returns 0, or -1 when out of
 * memory or a write failed. */
int html_write(FILE *out, report_ctx *c);

#endif
