/* html.h — the report as one self-contained HTML page (no network): a zoomable stacked-area
 * timeline of live bytes per category with phase bands, optimizer-step ticks, the peak and the
 * OOM; the breakdown at the peak; the top allocation sites; an icicle of the bytes live at the
 * peak by stack. Data from the report (report/report.c) and the replay's timeline, downsampled
 * here; the page's script and style are html_assets.c. */
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
