/* summary.c — the run summary's facts (summary.h) from the one replay (replay.c): no live map
 * of its own, so `vramtrace run` and `vramtrace report` count the same events and peaks. */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"

void summary_of_replay(const replay_result *r, run_summary *s)
{
    memset(s, 0, sizeof *s);
    s->events = r->n_events;
    s->failed = r->n_failed;
    s->failed_frees = r->n_failed_frees;
    s->failed_frees_shutdown = r->n_failed_frees_shutdown;
    s->peak_reserved = r->peak_reserved;
    s->peak_process = r->peak_process;
    s->contexts = r->n_contexts;
    s->lost = r->run_dropped;
    s->missing = replay_missing_events(r);
    s->made = replay_made_events(r);
    s->oom = r->has_oom;
    s->oom_requested = r->has_oom ? r->oom_requested : 0;
    s->oom_caught = r->oom_caught, s->caught_requested = r->caught.requested;
    s->oom_went_on = r->oom_went_on;
    s->truncated = r->status == READER_TRUNCATED;
    s->ended = r->ended;
    s->end_error = r->end_error;
    s->lost_why = r->lost_why;
    if (s->truncated)
        snprintf(s->truncated_why, sizeof s->truncated_why, "%s", r->status_msg);
}

int summary_read(const char *path, run_summary *s, char *err, size_t errlen)
{
    replay_result *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory while summarizing", path);
        return VT_EXIT_USAGE;
    }
    int rc = replay_file(path, r, err, errlen);
    if (rc == 0)
        summary_of_replay(r, s);
    replay_free(r);
    free(r);
    return rc == 0 ? VT_EXIT_OK : rc == VT_EXIT_MALFORMED ? VT_EXIT_MALFORMED : VT_EXIT_USAGE;
}
