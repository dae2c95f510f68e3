/* cmd_watch.c — `vramtrace watch [options] TRACE`: its options and usage; the watching itself
 * (what a trace being written says, shown as it grows) is watching.c, which `run --watch` uses
 * too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "watch.h"

enum { OPT_INTERVAL = CLI_LONG_ONLY, OPT_ONCE, OPT_PLAIN };
static const cli_opt watch_opts[] = {
    {OPT_INTERVAL, "interval", "SECONDS", "refresh every SECONDS (0.1 to 3600, default 1)"},
    {OPT_ONCE, "once", NULL, "read what is there, print it once and stop"},
    {OPT_PLAIN, "plain", NULL, "one line per refresh even on a terminal"},
    {'h', "help", NULL, "this text"},
    {0}};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vramtrace watch [options] TRACE\n\n"
            "Follows a run while it is alive, from its trace as it is written: the live bytes,\n"
            "the peak so far, the card's headroom, the steps and the growth per step (the\n"
            "growing site, and when it reaches the card at that rate), and an out-of-memory\n"
            "error the run did not recover from (the request that failed, and when). On a\n"
            "terminal a block is redrawn in place; otherwise one line per refresh. Stops when\n"
            "the trace ends (its trailer). A trace written with --max-size or --compress is\n"
            "read as its per-step summaries. `vramtrace run --watch -- CMD` runs CMD and\n"
            "watches it.\n\n");
    cli_print_options(out, watch_opts);
    fprintf(out, "exit: 0 the trace ended (or --once printed it), 2 usage or unreadable file, 3 "
                 "malformed trace\n");
}

int cmd_watch(int argc, char **argv)
{
    double interval = 1.0;
    int once = 0, plain = 0, k;
    cli p;
    cli_init(&p, "watch", watch_opts, 0);
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        char *end;
        switch (k) {
        case 'h':
            usage(stdout);
            return VT_EXIT_OK;
        case OPT_INTERVAL:
            interval = strtod(p.arg, &end);
            if (*end || end == p.arg || strpbrk(p.arg, "xXpP") || /* (no hex: 0x10 had been 16) */
                !(interval >= 0.1 && interval <= 3600)) {
                fprintf(stderr,
                        "vramtrace watch: --interval %s: expected seconds from 0.1 to "
                        "3600\n",
                        p.arg);
                return VT_EXIT_USAGE;
            }
            break;
        case OPT_ONCE:
            once = 1;
            break;
        case OPT_PLAIN:
            plain = 1;
            break;
        default:
            return VT_EXIT_USAGE;
        }
    }
    if (p.optind != argc - 1) {
        fprintf(stderr,
                "vramtrace watch: expected one trace file (usage: vramtrace watch [options] "
                "TRACE)\n");
        return VT_EXIT_USAGE;
    }
    int reaped = 0;
    return watch_loop(argv[p.optind], interval, once, plain, 0, NULL, &reaped, NULL);
}
