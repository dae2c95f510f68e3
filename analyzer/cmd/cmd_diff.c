/* cmd_diff.c — `vramtrace diff [--json] [--top N] A B`: replays both traces and builds their
 * reports (report/report.c) and prints how their peaks differ by category and by site
 * (views/diff_view.c). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "diff_view.h"
#include "mem.h"
#include "notes.h"
#include "model.h"
#include "replay.h"
#include "report.h"

/* The options of `diff`, one table: parsing and --help both come from it. */
enum { OPT_JSON = CLI_LONG_ONLY, OPT_TOP };
static const cli_opt diff_opts[] = {{OPT_JSON, "json", NULL, "one JSON document instead of text"},
                                    {OPT_TOP, "top", "N", "sites to list (default 10)"},
                                    {'h', "help", NULL, "this text"},
                                    {0}};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vramtrace diff [--json] [--top N] [-h] A.vt B.vt\n\n"
            "How two runs' peaks differ (before / after a configuration change): the three\n"
            "peaks, the bytes at the process peak by category, and the allocation sites whose\n"
            "bytes at the peak changed most. Changes are B minus A.\n\n");
    cli_print_options(out, diff_opts);
    fprintf(out, "exit: 0 ok, 2 usage or unreadable file, 3 malformed trace\n");
}

int cmd_diff(int argc, char **argv)
{
    int c, json = 0, top = 10, rc = 0;
    char err[512], *end;
    report_ctx rep[2];
    cli p;
    cli_init(&p, "diff", diff_opts, 0);
    while ((c = cli_next(&p, argc, argv)) != CLI_END) {
        if (c == OPT_JSON)
            json = 1;
        else if (c == OPT_TOP) {
            long v = strtol(p.arg, &end, 10);
            if (*end || end == p.arg || v < 0 || v > 100000) {
                fprintf(stderr, "vramtrace diff: --top %s: not a count (use 0..100000)\n", p.arg);
                return VT_EXIT_USAGE;
            }
            top = (int)v;
        } else if (c == 'h') {
            usage(stdout);
            return VT_EXIT_OK;
        } else {
            return VT_EXIT_USAGE;
        }
    }
    int first = p.optind;
    if (first != argc - 2) {
        fprintf(stderr,
                "vramtrace diff: expected two traces, got %d (usage: vramtrace diff [options] A.vt "
                "B.vt)\n",
                argc - first);
        return VT_EXIT_USAGE;
    }
    /* each run's report, built as `report` builds it: its model tells a run of forwards only
     * (an evaluation out of memory is not "missing an optimizer's state") */
    int flags[2] = {0, 0}; /* (diff_view.h) */
    for (int i = 0; i < 2; i++) {
        int e = report_of_trace(argv[first + i], &rep[i], err, sizeof err);
        if (e) {
            notes_error("diff", err);
            for (int k = 0; k <= i; k++)
                report_free(&rep[k]);
            return e;
        }
        notes_trace("diff", &rep[i].runs[0], "comparing");
        const model_result *m = rep[i].model;
        flags[i] = (m && m->shape.no_training ? DIFF_FWD_ONLY : 0) |
                   (m && optim_steps_unseen(&m->rec) ? DIFF_STEPS_UNSEEN : 0);
    }
    if (mem_failed()) /* a replay lost something: no comparison drawn from it (main says why) */
        rc = VT_EXIT_USAGE;
    else if (notes_stdout_error("diff", diff_view_write(stdout, &rep[0].runs[0], &rep[1].runs[0],
                                                        flags, top, json) != 0))
        rc = VT_EXIT_USAGE;
    report_free(&rep[0]);
    report_free(&rep[1]);
    return rc;
}
