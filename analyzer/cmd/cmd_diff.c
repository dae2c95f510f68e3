/* cmd_diff.c — `vramtrace diff [--json] [--top N] A B`: replays both traces (model/replay.c)
 * and prints how their peaks differ by category and by site (views/diff_view.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "diff_view.h"
#include "replay.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vramtrace diff [--json] [--top N] A.vt B.vt\n\n"
            "How two runs' peaks differ (before / after a configuration change): the three\n"
            "peaks, the bytes at the process peak by category, and the allocation sites whose\n"
            "bytes at the peak changed most. Changes are B minus A.\n\n"
            "options:\n"
            "  --json            one JSON document instead of text\n"
            "  --top N           sites to list (default 10)\n"
            "  -h, --help        this text\n"
            "exit: 0 ok, 2 usage or unreadable file, 3 malformed trace\n");
}

int cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"top", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c, json = 0, top = 10, rc = 0;
    char err[512], *end;
    replay_result r[2];
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else if (c == 't') {
            long v = strtol(optarg, &end, 10);
            if (*end || end == optarg || v < 0 || v > 100000) {
                fprintf(stderr, "vramtrace diff: --top %s: not a count (use 0..100000)\n", optarg);
                return VT_EXIT_USAGE;
            }
            top = (int)v;
        } else if (c == 'h') {
            usage(stdout);
            return VT_EXIT_OK;
        } else {
            usage(stderr);
            return VT_EXIT_USAGE;
        }
    }
    if (optind != argc - 2) {
        usage(stderr);
        return VT_EXIT_USAGE;
    }
    for (int i = 0; i < 2; i++) {
        int e = replay_file(argv[optind + i], &r[i], err, sizeof err);
        if (e) {
            fprintf(stderr, "vramtrace diff: %s\n", err);
            for (int k = 0; k <= i; k++)
                replay_free(&r[k]);
            return e;
        }
    }
    rc = diff_view_write(stdout, &r[0], &r[1], top, json);
    if (rc || fflush(stdout)) {
        fprintf(stderr, "vramtrace diff: cannot write the output (out of memory or disk full)\n");
        rc = VT_EXIT_USAGE;
    }
    replay_free(&r[0]);
    replay_free(&r[1]);
    return rc;
}
