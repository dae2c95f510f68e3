/* growth_view.h — growth across steps and a bounded trace's keeping, as text and JSON
 * (growth_view.c), for report_text.c and report_json.c. */
#ifndef VT_ANALYZER_GROWTH_VIEW_H
#define VT_ANALYZER_GROWTH_VIEW_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "report.h"

/* growth_text: the "Bounded trace" lines (a chunked trace) and the "Growth across steps"
 * section (a run with steps); bold / normal: the ANSI pair or "". */
void growth_text(FILE *out, const report_ctx *c, const char *bold, const char *normal);
/* growth_heading: "8 steps of forward and backward, 4 ending in an optimizer step, 0.0426 s
 * per step" (the micro-steps and the time where known) into out, for the text and the page. */
void growth_heading(const report_growth *g, char *out, size_t len);
/* growth_json: "bounded" (null for a plain trace) and "growth" into root. */
void growth_json(cJSON *root, const report_ctx *c);

#endif
