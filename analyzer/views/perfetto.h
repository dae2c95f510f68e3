/* perfetto.h — a replayed trace as Chrome trace-event JSON ({"traceEvents": [...]}), which
 * ui.perfetto.dev and chrome://tracing open: a counter track of live bytes per category (whole
 * moments of the replay's timeline: their sum never passes the process peak, and each
 * category's maximum is kept exactly) on a process named by the device (pid 2), phase slices on
 * one track per thread of the traced process (pid 1), instant events for optimizer steps, the
 * peak and the OOM. cmd_export.c runs it. */
#ifndef VT_ANALYZER_PERFETTO_H
#define VT_ANALYZER_PERFETTO_H

#include <stdio.h>

#include "replay.h"

#define PERFETTO_POINTS 16384 /* moments sampled at most: points per counter track */

/* perfetto_write: the whole JSON document of r into out. Returns 0, or -1 when the replay
 * has no timeline (out of memory) or a write failed. */
int perfetto_write(FILE *out, replay_result *r);

#endif
