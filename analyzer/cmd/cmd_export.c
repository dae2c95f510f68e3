/* cmd_export.c — `vramtrace export --perfetto OUT.json | --memory-viz OUT.pickle | --html
 * OUT.html FILE`: replays the trace once (model/replay.c) and writes each asked-for file
 * through its view (views/perfetto.c, memviz.c, html.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "html.h"
#include "mem.h"
#include "memviz.h"
#include "notes.h"
#include "perfetto.h"
#include "report.h"

static int export_perfetto(FILE *f, void *c)
{
    return perfetto_write(f, &((report_ctx *)c)->runs[0]);
}
static int export_memviz(FILE *f, void *c)
{
    return memviz_write(f, &((report_ctx *)c)->runs[0]);
}
static int export_html(FILE *f, void *c)
{
    return html_write(f, c);
}

/* X(enum, "option", writer, "what it writes", "what was written") */
#define VT_EXPORTS(X)                                                                              \
    X(PERFETTO, "perfetto", export_perfetto, "Chrome trace JSON for ui.perfetto.dev",              \
      "Perfetto trace JSON")                                                                       \
    X(MEMVIZ, "memory-viz", export_memviz, "PyTorch memory snapshot for pytorch.org/memory_viz",   \
      "memory_viz snapshot")                                                                       \
    X(HTML, "html", export_html, "one self-contained HTML page: timeline, breakdown, flame graph", \
      "HTML page")

enum {
#define VT_EXP_ENUM(e, opt, fn, doc, done) EXP_##e,
    VT_EXPORTS(VT_EXP_ENUM)
#undef VT_EXP_ENUM
        EXP_COUNT
};

static void usage(FILE *out)
{
    fprintf(out, "usage: vramtrace export [--perfetto OUT.json] [--memory-viz OUT.pickle] [--html "
                 "OUT.html]\n                        FILE\n\n"
                 "Writes the trace in other tools' formats (one replay for all of them).\n\n"
                 "options:\n");
#define VT_EXP_HELP(e, opt, fn, doc, done) fprintf(out, "  --%-12s OUT  %s\n", opt, doc);
    VT_EXPORTS(VT_EXP_HELP)
#undef VT_EXP_HELP
    fprintf(out, "  -h, --help          this text\n"
                 "exit: 0 ok, 2 usage or unreadable file or unwritable output, 3 malformed "
                 "trace\n");
}

/* write_one: runs view k of c into path (its path printed); 0 or an exit code, said. */
static int write_one(int k, const char *path, report_ctx *c)
{
    static int (*const writers[])(FILE *, void *) = {
#define VT_EXP_FN(e, opt, fn, doc, done) fn,
        VT_EXPORTS(VT_EXP_FN)
#undef VT_EXP_FN
    };
    static const char *const done[] = {
#define VT_EXP_DONE(e, opt, fn, doc, done) done,
        VT_EXPORTS(VT_EXP_DONE)
#undef VT_EXP_DONE
    };
    return notes_write("export", path, done[k], writers[k], c);
}

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
#define VT_EXP_OPT(e, opt, fn, doc, done) {opt, required_argument, NULL, 'A' + EXP_##e},
        VT_EXPORTS(VT_EXP_OPT)
#undef VT_EXP_OPT
            {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *outs[EXP_COUNT] = {0};
    int c, any = 0, rc;
    char err[512];
    report_ctx rep;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c >= 'A' && c < 'A' + EXP_COUNT) {
            outs[c - 'A'] = optarg;
            any = 1;
        } else if (c == 'h') {
            usage(stdout);
            return VT_EXIT_OK;
        } else {
            usage(stderr);
            return VT_EXIT_USAGE;
        }
    }
    if (!any || optind != argc - 1) {
        usage(stderr);
        return VT_EXIT_USAGE;
    }
    timeline_segments = 1; /* a segment-mode trace's timeline is drawn too */
    rc = report_of_trace(argv[optind], &rep, err, sizeof err);
    if (rc) {
        fprintf(stderr, "vramtrace export: %s\n", err);
        report_free(&rep);
        return rc;
    }
    if (mem_failed()) { /* the replay lost something: nothing written from it (main says why) */
        report_free(&rep);
        return VT_EXIT_USAGE;
    }
    notes_trace("export", &rep.runs[0], "exporting");
    for (int k = 0; k < EXP_COUNT && !rc; k++)
        if (outs[k])
            rc = write_one(k, outs[k], &rep);
    report_free(&rep);
    return rc;
}
