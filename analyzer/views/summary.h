/* summary.h — the one-paragraph summary `vramtrace run` prints after the traced command. */
#ifndef VT_ANALYZER_SUMMARY_H
#define VT_ANALYZER_SUMMARY_H

#include <stdio.h>

/* summary_print: reads the trace at path and prints: the file, events, peak device bytes
 * (reserved and process), OOM yes/no (with the requested size), truncated or not.
 * Returns 0, 2 (cannot open) or 3 (malformed), having printed a message. */
int summary_print(FILE *out, const char *path);

#endif
