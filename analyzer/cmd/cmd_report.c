/* cmd_report.c — `vramtrace report [options] FILE...`: replays each trace (replay.c), builds
 * the one report (report/report.c: facts, sites, model), then writes text (report_text.c) or
 * JSON (report_json.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cards.h"
#include "commands.h"
#include "report.h"
#include "report_views.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vramtrace report [options] FILE...\n\n"
            "Where the memory of a traced run went: peaks (allocated / reserved / process), every\n"
            "byte at the peak by category, the sites that caused them, phases, the formula\n"
            "comparison, the OOM diagnosis and the configuration change that fits the card.\n"
            "Several files (one per rank / process): the first in full, then a per-rank table.\n\n"
            "options:\n"
            "  --json            one JSON document instead of text\n"
            "  --html OUT.html   one self-contained page instead (as `vramtrace export --html`)\n"
            "  --top N           allocation sites per category (default 3)\n"
            "  --card SPEC       target card for the advice (default: the emulated card, else the\n"
            "                    traced device): a size (12GiB) or a preset (%s)\n"
            "  --no-color        no ANSI colour (also: NO_COLOR set, or not a terminal)\n"
            "  --fail-if-oom     exit 1 when a trace ends in an out-of-memory error\n"
            "  --KEY=VALUE       override the run's nanoGPT configuration (e.g. --batch_size=8)\n"
            "  -h, --help        this text\n"
            "exit: 0 ok, 1 OOM with --fail-if-oom, 2 usage or unreadable file, 3 malformed trace\n",
            card_presets_help());
}

int cmd_report(int argc, char **argv)
{
    int json = 0, top = 3, fail_if_oom = 0, no_color = 0;
    const char *card = NULL;
    for (int i = 1; i < argc; i++) /* --html OUT: the page `vramtrace export --html` writes */
        if (!strcmp(argv[i], "--html") || !strncmp(argv[i], "--html=", 7))
            return cmd_export(argc, argv);
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
    int nfiles = 0, nover = 0;
    if (!files || !overrides) {
        free(files);
        free(overrides);
        return VT_EXIT_USAGE;
    }
    int rc = VT_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            goto out;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--no-color")) {
            no_color = 1;
        } else if (!strcmp(a, "--fail-if-oom")) {
            fail_if_oom = 1;
        } else if (!strcmp(a, "--top") && i + 1 < argc) {
            char *end;
            top = (int)strtol(argv[++i], &end, 10);
            if (*end || top < 0 || top > 1000) {
                fprintf(stderr, "vramtrace report: --top %s: expected a number from 0 to 1000\n", argv[i]);
                rc = VT_EXIT_USAGE;
                goto out;
            }
        } else if (!strcmp(a, "--card") && i + 1 < argc) {
            card = argv[++i];
        } else if (!strncmp(a, "--", 2) && strchr(a, '=')) {
            overrides[nover++] = a + 2;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "vramtrace report: unknown option %s (see --help)\n", a);
            rc = VT_EXIT_USAGE;
            goto out;
        } else {
            files[nfiles++] = a;
        }
    }
    if (!nfiles) {
        fprintf(stderr, "vramtrace report: no trace file given (usage: vramtrace report [options] FILE...)\n");
        rc = VT_EXIT_USAGE;
        goto out;
    }
    report_ctx c;
    memset(&c, 0, sizeof c);
    c.top = top;
    c.color = !json && !no_color && !getenv("NO_COLOR") && isatty(1);
    c.opts.noverrides = nover;
    c.opts.overrides = overrides;
    c.opts.color = c.color;
    card_spec spec;
    if (card) {
        char err[256];
        if (card_parse(card, &spec, err, sizeof err) < 0) {
            fprintf(stderr, "vramtrace report: --card %s: %s\n", card, err);
            rc = VT_EXIT_USAGE;
            goto out;
        }
        c.opts.target_card_bytes = spec.bytes;
        c.opts.target_card_name = spec.name;
    }
    replay_progress = isatty(2);
    c.runs = calloc((size_t)nfiles, sizeof *c.runs);
    if (!c.runs) {
        rc = VT_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < nfiles; i++) {
        char err[512] = "";
        if (isatty(2) && nfiles > 1)
            fprintf(stderr, "\rvramtrace report: reading %d/%d %s", i + 1, nfiles, files[i]);
        int r = replay_file(files[i], &c.runs[i], err, sizeof err);
        c.nruns = i + 1;
        if (r) {
            fprintf(stderr, "vramtrace report: %s\n", err);
            rc = r == 2 ? VT_EXIT_USAGE : VT_EXIT_MALFORMED;
            goto free_runs;
        }
        if (c.runs[i].n_implausible)
            fprintf(stderr, "vramtrace report: warning: %s: %llu allocations not counted (they "
                            "would make more than 4 EiB live at once: not a real run)\n",
                    files[i], (unsigned long long)c.runs[i].n_implausible);
        if (c.runs[i].status == READER_TRUNCATED)
            fprintf(stderr, "vramtrace report: warning: %s is truncated (no trailer: the process was "
                            "killed or is still running); reporting every complete record\n", files[i]);
        else if (c.runs[i].ended & (VT_TRAILER_DISK_FULL | VT_TRAILER_OUTPUT_ERROR))
            fprintf(stderr, "vramtrace report: warning: %s stopped early (%s: tracing stopped, the "
                            "program went on); reporting every record made before\n", files[i],
                    c.runs[i].ended & VT_TRAILER_DISK_FULL ? "disk full" : "writing the trace failed");
    }
    if (isatty(2) && nfiles > 1)
        fprintf(stderr, "\n");
    char berr[512] = "";
    if (report_build(&c, berr, sizeof berr) < 0) {
        fprintf(stderr, "vramtrace report: %s\n", berr);
        rc = VT_EXIT_USAGE;
        goto free_runs;
    }
    int w = json ? report_json(stdout, &c) : report_text(stdout, &c);
    if (w < 0)
        rc = VT_EXIT_USAGE;
    else if (fail_if_oom)
        for (int i = 0; i < c.nruns; i++)
            if (c.runs[i].has_oom)
                rc = VT_EXIT_FINDINGS;
free_runs:
    report_free(&c);
out:
    free(files);
    free(overrides);
    return rc;
}
