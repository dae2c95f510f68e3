/* summary_text.c — the one-paragraph summary after `vramtrace run` (summary_text.h), printed
 * from the facts of the one replay (model/summary.c). The full analysis is `vramtrace report`. */
#include "summary_text.h"

#include <inttypes.h>

#include "cards.h"
#include "report_views.h"
#include "vramtrace/trace_format.h"

void summary_text(FILE *out, const char *path, const run_summary *s, const char *prog)
{
    char pr[32], pp[32], oq[32], fails[REPORT_FAILED_LEN], lost[REPORT_LOST_LEN];
    card_format_bytes(s->peak_reserved, pr, sizeof pr);
    card_format_bytes(s->peak_process, pp, sizeof pp);
    fprintf(
        out,
        "vramtrace: trace %s: %" PRIu64 " events (%s%s), peak %s reserved "
        "by the allocator (%s for the process, with contexts and kernel images), %" PRIu64
        " context%s, ",
        path, s->events,
        report_failed_text(s->failed, s->failed_frees, s->failed_frees_shutdown, fails,
                           sizeof fails),
        report_lost_text(s->lost, s->missing, s->made, s->lost_why | s->ended, lost, sizeof lost),
        pr, pp, s->contexts, s->contexts == 1 ? "" : "s");
    char cq[32];
    if (s->oom && s->oom_went_on) /* (the run went on after it) */
        fprintf(out, "OOM: yes, caught (a request for %s failed; the program went on after it%s), ",
                card_format_bytes(s->oom_requested, oq, sizeof oq),
                s->oom_caught > 1 ? " and the others it caught" : "");
    else if (s->oom && s->oom_caught)
        fprintf(out,
                "OOM: yes (a request for %s failed, after %u the program caught and went on "
                "from), ",
                card_format_bytes(s->oom_requested, oq, sizeof oq), s->oom_caught);
    else if (s->oom)
        fprintf(out, "OOM: yes (a request for %s failed), ",
                card_format_bytes(s->oom_requested, oq, sizeof oq));
    else if (s->oom_caught) /* (the run did not end in it) */
        fprintf(out, "OOM: %u caught, the program went on (the first a request for %s), ",
                s->oom_caught, card_format_bytes(s->caught_requested, cq, sizeof cq));
    else
        fprintf(out, "OOM: no, ");
    if (s->truncated)
        fprintf(out,
                "truncated (%s: the process did not stop cleanly; every complete record "
                "was kept).\n",
                s->truncated_why);
    else if (s->ended & (VT_TRAILER_DISK_FULL | VT_TRAILER_OUTPUT_ERROR))
        fprintf(out, "stopped early (%s; %s).\n", replay_stop_words(s->ended, s->end_error),
                s->lost || s->missing ? "events made before it are missing, counted above"
                                      : "every record made before was kept");
    else if (s->lost || s->missing) /* it ended well, without every event (counted above) */
        fprintf(out, "incomplete (the figures leave out the events lost).\n");
    else
        fprintf(out, "complete.\n");
    fprintf(out, "Run `%s report %s` for categories, phases and advice.\n", prog, path);
}
