/* cmd_flame.c — `vramtrace flame [--at peak|tensors|oom|all] FILE`: replays the trace
 * (model/replay.c) and prints the folded stacks of what was live at that moment, or of every
 * allocation of the run (views/flame.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "flame.h"
#include "mem.h"
#include "notes.h"
#include "replay.h"

/* The options of `flame`, one table: parsing and --help both come from it. */
enum { OPT_AT = CLI_LONG_ONLY };
static const cli_opt flame_opts[] = {
    {OPT_AT, "at", "peak|tensors|oom|all",
     "the moment (default peak, the process peak; tensors: the\n"
     "allocated peak, the moment the formula comparison and advice\n"
     "explain, for a trace with tensors; oom needs a trace that ran\n"
     "out); all: every allocation of the run (PyTorch's segments\n"
     "left out, but in a trace of segments alone)"},
    {'h', "help", NULL, "this text"},
    {0}};

static void usage(FILE *out)
{
    fprintf(out, "usage: vramtrace flame [--at peak|tensors|oom|all] FILE\n\n"
                 "Folded stacks of the bytes live at the process peak (or at the tensors' peak,\n"
                 "the out-of-memory error, or allocated over the whole run): one line per stack,\n"
                 "`outer;...;inner;[category] bytes`, for flamegraph.pl and speedscope.\n\n");
    cli_print_options(out, flame_opts);
    fprintf(out, "exit: 0 ok, 2 usage or unreadable file or no OOM (no tensors) in the trace, 3\n"
                 "malformed trace\n");
}

int cmd_flame(int argc, char **argv)
{
    const char *at = "peak";
    int k, io_err = 0, rc;
    char err[512];
    replay_result r;
    cli p;
    cli_init(&p, "flame", flame_opts, 0);
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        if (k == OPT_AT)
            at = p.arg;
        else if (k == 'h') {
            usage(stdout);
            return VT_EXIT_OK;
        } else {
            return VT_EXIT_USAGE;
        }
    }
    if (strcmp(at, "peak") && strcmp(at, "tensors") && strcmp(at, "oom") && strcmp(at, "all")) {
        fprintf(stderr,
                "vramtrace flame: --at %s: unknown moment (use peak, tensors, oom or all)\n", at);
        return VT_EXIT_USAGE;
    }
    if (p.optind != argc - 1) {
        fprintf(
            stderr,
            "vramtrace flame: expected one trace file, got %d (usage: vramtrace flame [options] "
            "FILE)\n",
            argc - p.optind);
        return VT_EXIT_USAGE;
    }
    const char *path = argv[p.optind];
    timeline_totals = !strcmp(at, "all");
    rc = replay_file(path, &r, err, sizeof err);
    if (rc) {
        notes_error("flame", err);
        replay_free(&r);
        return rc;
    }
    if (mem_failed()) { /* the replay lost something: no stacks drawn from it (main says why) */
        replay_free(&r);
        return VT_EXIT_USAGE;
    }
    notes_trace("flame", &r, "folding");
    if (!strcmp(at, "oom") && !r.has_oom) {
        char why[600];
        snprintf(why, sizeof why, "%s: the run did not run out of memory (use --at peak)", path);
        notes_error("flame", why);
        replay_free(&r);
        return VT_EXIT_USAGE;
    }
    if (!strcmp(at, "tensors") && !(r.tensor_mode && r.at_tensors.n)) {
        fprintf(stderr,
                "vramtrace flame: %s: the trace has no tensors (a segment-mode capture): no "
                "tensors' peak (use --at peak)\n",
                path);
        replay_free(&r);
        return VT_EXIT_USAGE;
    }
    if (!strcmp(at, "all")) {
        replay_snapshot all;
        if (flame_all(&r, &all))
            io_err = 1;
        else
            flame_write(stdout, &r, &all, &io_err);
        free(all.items);
    } else {
        const replay_snapshot *snap = !strcmp(at, "oom")       ? &r.at_oom
                                      : !strcmp(at, "tensors") ? &r.at_tensors
                                                               : &r.at_peak;
        char note[1024];
        flame_write(stdout, &r, snap, &io_err);
        if (*flame_note(&r, snap, note, sizeof note)) { /* said, never invented */
            fputs("vramtrace flame: note: native frames the capture could not name (it names "
                  "exported functions only) stay module+0xoffset: ",
                  stderr);
            escape_term_fputs(stderr, note, strlen(note)); /* module names from the trace */
            fputc('\n', stderr);
        }
    }
    replay_free(&r);
    return notes_stdout_error("flame", io_err) ? VT_EXIT_USAGE : VT_EXIT_OK;
}
