/* diff_view.h — the difference of two runs' peaks: bytes live at each run's process peak by
 * category and by allocation site (model/replay.c makes the snapshots), as text or JSON.
 * cmd_diff.c parses the command line. */
#ifndef VT_ANALYZER_DIFF_VIEW_H
#define VT_ANALYZER_DIFF_VIEW_H

#include <stdio.h>

#include "replay.h"

/* DIFF_SCHEMA_VERSION: "schema_version" of `diff --json` (README, `vramtrace diff`): raised when
 * a field changes meaning or goes. */
#define DIFF_SCHEMA_VERSION 1

/* diff_view_write: a against b (b minus a): the three peaks, every category either run has,
 * then the top sites by absolute change (at most top; sites keyed by replay_site_text).
 * json: one JSON document (category keys), else text (the report's category names, changes in
 * MiB, those under 0.05 MiB in KiB or bytes, never "-0.0"); a level or category a run's recording
 * does not measure is "-" (null). flags: what each run's report's model says of it: DIFF_FWD_ONLY
 * it made forwards only (an evaluation out of memory misses no optimizer state), DIFF_STEPS_UNSEEN
 * its optimizer steps may have run unseen (optim_steps_unseen: none seen, not none run). Returns
 * 0, or 2 when out of memory or a write failed. */
enum { DIFF_FWD_ONLY = 1, DIFF_STEPS_UNSEEN = 2 };
int diff_view_write(FILE *out, replay_result *a, replay_result *b, const int flags[2], int top,
                    int json);

#endif
