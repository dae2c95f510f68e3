/* summary_text.h — the one-paragraph summary `vramtrace run` prints after the traced command,
 * rendered from a run_summary (model/summary.h); it only prints. */
#ifndef VT_ANALYZER_SUMMARY_TEXT_H
#define VT_ANALYZER_SUMMARY_TEXT_H

#include <stdio.h>

#include "summary.h"

/* summary_text: the file, events (failed), the reserved and process peaks, contexts, OOM yes/no
 * (with the requested size), truncated or complete, and the report command (prog: the
 * program as the user can run it again: `vramtrace`, or its path). */
void summary_text(FILE *out, const char *path, const run_summary *s, const char *prog);

#endif
