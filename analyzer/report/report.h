/* report.h — `vramtrace report`: what cmd_report.c (arguments, facts) hands to the text and
 * JSON writers (report_text.c, report_json.c). */
#ifndef VT_ANALYZER_REPORT_H
#define VT_ANALYZER_REPORT_H

#include <stdio.h>

#include "model.h"
#include "replay.h"

/* One allocation site at the peak: bytes per (category, site). */
typedef struct report_site {
    int category;
    uint64_t bytes;
    uint32_t count;
    char text[512];   /* escaped for a terminal */
    char native[256]; /* the native op below it ("at::native::..." first), escaped; "" if none */
} report_site;

typedef struct report_ctx {
    replay_result *runs; /* one per file; runs[0] is the one reported in full */
    int nruns;
    run_facts facts;     /* for runs[0] */
    model_opts opts;
    report_site *sites;  /* sorted by bytes, descending */
    size_t nsites;
    int top;             /* sites shown per category */
    int color;
    const char *argv_store[512];
    char site_oom[512];
} report_ctx;

/* report_fill: facts and sites of runs[0]; 0 or -1 (out of memory). */
int report_fill(report_ctx *c);
int report_text(FILE *out, report_ctx *c);
int report_json(FILE *out, report_ctx *c);
/* report_json_of_trace: `vramtrace report --json PATH` as a malloc'ed string (for
 * `predict --from TRACE`); NULL with a message in err when the trace cannot be read. */
char *report_json_of_trace(const char *path, char *err, size_t errlen);
/* report_mode_text: one line saying what the capture mode means. */
const char *report_mode_text(const replay_result *r);

#endif
