/* cmd_export.c — `vramtrace export --perfetto OUT.json | --memory-viz OUT.pickle | --html
 * OUT.html FILE`: replays the trace once (model/replay.c) and writes each asked-for file
 * through its view (views/perfetto.c, memviz.c, html.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
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

/* X(enum, "option", "its file", writer, "what it writes", "what was written") */
#define VT_EXPORTS(X)                                                                              \
    X(PERFETTO, "perfetto", "OUT.json", export_perfetto, "Chrome trace JSON for ui.perfetto.dev",  \
      "Perfetto trace JSON")                                                                       \
    X(MEMVIZ, "memory-viz", "OUT.pickle", export_memviz,                                           \
      "PyTorch memory snapshot for pytorch.org/memory_viz", "memory_viz snapshot")                 \
    X(HTML, "html", "OUT.html", export_html,                                                       \
      "one self-contained HTML page: timeline, breakdown, flame graph", "HTML page")

enum {
#define VT_EXP_ENUM(e, opt, arg, fn, doc, done) EXP_##e,
    VT_EXPORTS(VT_EXP_ENUM)
#undef VT_EXP_ENUM
        EXP_COUNT
};

/* The options of `export`, one table: parsing and --help both come from it. */
enum { OPT_EXPORT = CLI_LONG_ONLY }; /* + EXP_*: one option per file */
static const cli_opt export_opts[] = {
#define VT_EXP_OPT(e, opt, arg, fn, doc, done) {OPT_EXPORT + EXP_##e, opt, arg, doc},
    VT_EXPORTS(VT_EXP_OPT)
#undef VT_EXP_OPT
        {'h', "help", NULL, "this text"},
    {0}};

static void usage(FILE *out)
{
    fprintf(out, "usage: vramtrace export [--perfetto OUT.json] [--memory-viz OUT.pickle] [--html "
                 "OUT.html]\n                        FILE\n\n"
                 "Writes the trace in other tools' formats (one replay for all of them). An\n"
                 "output named - goes to standard output (one at most).\n\n");
    cli_print_options(out, export_opts);
    fprintf(out, "exit: 0 ok, 2 usage or unreadable file or unwritable output, 3 malformed "
                 "trace\n");
}

/* write_one: runs view k of c into path (its path printed); 0 or an exit code, said. */
static int write_one(int k, const char *path, report_ctx *c)
{
    static int (*const writers[])(FILE *, void *) = {
#define VT_EXP_FN(e, opt, arg, fn, doc, done) fn,
        VT_EXPORTS(VT_EXP_FN)
#undef VT_EXP_FN
    };
    static const char *const done[] = {
#define VT_EXP_DONE(e, opt, arg, fn, doc, done) done,
        VT_EXPORTS(VT_EXP_DONE)
#undef VT_EXP_DONE
    };
    return notes_write("export", path, done[k], writers[k], c);
}

/* parse_outputs: the options into outs (one path per view, each view and each path once). The
 * exit code when it ends here (--help, or an error said), else VT_EXIT_OK with *first set to the
 * trace's index in argv (*first stays 0 when it ends here). */
static int parse_outputs(int argc, char **argv, const char *outs[EXP_COUNT], int *first)
{
    static const char *const names[] = {
#define VT_EXP_NAME(e, opt, arg, fn, doc, done) opt,
        VT_EXPORTS(VT_EXP_NAME)
#undef VT_EXP_NAME
    };
    int k, any = 0;
    cli p;
    cli_init(&p, "export", export_opts, 0);
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        if (k == 'h') {
            usage(stdout);
            return VT_EXIT_OK;
        }
        if (k < OPT_EXPORT || k >= OPT_EXPORT + EXP_COUNT)
            return VT_EXIT_USAGE;
        int e = k - OPT_EXPORT;
        if (outs[e] && !strcmp(outs[e], p.arg)) /* the same value, spelled alike: taken */
            continue;
        if (outs[e]) { /* one file per view: the first would not be written */
            fprintf(stderr,
                    "vramtrace export: --%s given twice (%s, then %s): one file per format\n",
                    names[e], outs[e], p.arg);
            return VT_EXIT_USAGE;
        }
        for (int o = 0; o < EXP_COUNT; o++)
            if (outs[o] && !strcmp(outs[o], p.arg)) { /* the second would overwrite the first */
                fprintf(stderr,
                        "vramtrace export: --%s and --%s both write %s: give each its "
                        "own file\n",
                        names[o], names[e], p.arg);
                return VT_EXIT_USAGE;
            }
        outs[e] = p.arg;
        any = 1;
    }
    int files = argc - p.optind;
    if (!any || files != 1) {
        if (!any)
            fprintf(stderr, "vramtrace export: no output asked for: give --perfetto, "
                            "--memory-viz or --html (see vramtrace export --help)\n");
        else
            fprintf(stderr,
                    "vramtrace export: expected one trace file, got %d (usage: vramtrace export "
                    "[options] FILE)\n",
                    files);
        return VT_EXIT_USAGE;
    }
    *first = p.optind;
    return 0;
}

int cmd_export(int argc, char **argv)
{
    const char *outs[EXP_COUNT] = {0};
    int first = 0, rc;
    char err[512];
    report_ctx rep;
    rc = parse_outputs(argc, argv, outs, &first);
    if (!first)
        return rc;
    int dashes = 0;
    for (int e = 0; e < EXP_COUNT; e++) { /* before reading: no output written over a trace */
        if (outs[e] && notes_output_free("export", outs[e]))
            return VT_EXIT_USAGE;
        dashes += outs[e] && !strcmp(outs[e], "-");
    }
    if (dashes > 1) {
        fprintf(stderr, "vramtrace export: only one output can go to standard output (-)\n");
        return VT_EXIT_USAGE;
    }
    notes_stdout_data = dashes;
    timeline_segments = 1;                       /* a segment-mode trace's timeline is drawn too */
    tables_sources = outs[EXP_MEMVIZ] != NULL;   /* its frames carry file:line */
    replay_keep_end = outs[EXP_MEMVIZ] != NULL;  /* its snapshot: the state at the trace's end */
    timeline_actions = outs[EXP_MEMVIZ] != NULL; /* and the allocator's actions before it */
    rc = report_of_trace(argv[first], &rep, err, sizeof err);
    if (rc) {
        notes_error("export", err);
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
