/* cmd_report.c — `vramtrace report [options] FILE...`: replays each trace (replay.c), builds
 * the one report (report/report.c: facts, sites, model), then writes text (report_text.c) or
 * JSON (report_json.c), or with --html the page of views/html.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cards.h"
#include "cfgsrc.h"
#include "cli.h"
#include "escape.h"
#include "commands.h"
#include "html.h"
#include "notes.h"
#include "report.h"
#include "report_views.h"
#include "mem.h"

/* The options of `report`, one table: parsing and --help both come from it. */
enum {
    OPT_JSON = CLI_LONG_ONLY,
    OPT_TOP,
    OPT_CARD,
    OPT_NO_COLOR,
    OPT_FAIL_IF_OOM,
    OPT_HTML,
    OPT_CFG
};
static const cli_opt report_opts[] = {
    {OPT_JSON, "json", NULL, "one JSON document instead of text"},
    {OPT_HTML, "html", "OUT.html",
     "one self-contained page instead (as `vramtrace export --html`; - for\n"
     "standard output)"},
    {OPT_TOP, "top", "N", "allocation sites per category (default 3)"},
    {OPT_CARD, "card", "SPEC",
     "target card for the advice (default: the emulated card, else the\n"
     "traced device): a size with a unit (12GiB, 12288MiB; KB/MB/GB are\n"
     "decimal) or a preset (see below)"},
    {OPT_NO_COLOR, "no-color", NULL, "no ANSI colour (also: NO_COLOR set, or not a terminal)"},
    {OPT_FAIL_IF_OOM, "fail-if-oom", NULL, "exit 1 when a trace ends in an out-of-memory error"},
/* the run's values when the trace cannot say them (cfgsrc.h): key OPT_CFG + the config key */
#define VT_REPORT_CFG_OPT(name, key)                                                               \
    {OPT_CFG + (key), name, "N", "the run's value (\"given on vramtrace's command line\")"},
    VT_CFGSRC_OPTIONS(VT_REPORT_CFG_OPT)
#undef VT_REPORT_CFG_OPT
        {'h', "help", NULL, "this text"},
    {0}};

/* html_page: notes_write's writer for --html */
static int html_page(FILE *f, void *c)
{
    return html_write(f, c);
}

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: vramtrace report [options] FILE...\n\n"
        "Where the memory of a traced run went: peaks (allocated / reserved / process), every\n"
        "byte at the peak by category, the sites that caused them, phases, the formula\n"
        "comparison, the OOM diagnosis and the configuration change that fits the card.\n"
        "Several files (one per rank / process): the first that ran out of memory in full, else\n"
        "the first file, then a per-rank table of all.\n\n");
    cli_print_options(out, report_opts);
    fprintf(out,
            "  --KEY=VALUE         override a value of the run's configuration by its key, as\n"
            "                      JSON config names it (e.g. --batch_size=8, --block_size=512):\n"
            "                      any program, nanoGPT or not\n"
            "card presets: %s\n"
            "the categories (formula.md §1), the basic and the refined formula (§2, §3)\n"
            "and the advice rules (§4): docs/formula.md\n"
            "exit: 0 ok, 1 OOM with --fail-if-oom, 2 usage or unreadable file, 3 malformed trace\n",
            card_presets_help());
}

/* same_file: a and b name one file (the same name, or the same device and inode) */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    if (!strcmp(a, b))
        return 1;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int cmd_report(int argc, char **argv)
{
    int json = 0, top = 3, fail_if_oom = 0, no_color = 0;
    const char *card = NULL, *html = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
    const char **said = calloc((size_t)argc + 1, sizeof *said); /* how each override was typed */
    char **owned =
        calloc(2 * (size_t)argc + 1, sizeof *owned); /* built from --n-layer etc.: 2 an option */
    /* the report's context on the heap, on the pages mem_heap_huge asked for (as the replay's
     * state): 26 KiB of it on the stack had been first touches of stack pages, each a fault */
    report_ctx *c = calloc(1, sizeof *c);
    int nfiles = 0, nover = 0, nowned = 0;
    if (!files || !overrides || !said || !owned || !c) {
        free(files);
        free(overrides);
        free(said);
        free(owned);
        free(c);
        return VT_EXIT_USAGE;
    }
    int rc = VT_EXIT_OK, k;
    const char *took_key = NULL, *took_value = NULL; /* an option's value that names a file */
    cli p;
    cli_init(&p, "report", report_opts, CLI_KEY_VALUES);
    p.is_key = config_key_named; /* (--block_size 512 as --block_size=512) */
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        char *end;
        switch (k) {
        case 'h':
            usage(stdout);
            goto out;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_NO_COLOR:
            no_color = 1;
            break;
        case OPT_FAIL_IF_OOM:
            fail_if_oom = 1;
            break;
        case OPT_CARD:
            card = p.arg;
            break;
        case OPT_HTML:
            if (html && strcmp(html, p.arg)) { /* one page per report: the first would be lost */
                fprintf(stderr,
                        "vramtrace report: --html given twice (%s, then %s): the report writes one "
                        "page\n",
                        html, p.arg);
                rc = VT_EXIT_USAGE;
                goto out;
            }
            html = p.arg;
            break;
        case OPT_TOP:
            top = (int)strtol(p.arg, &end, 10);
            if (*end || end == p.arg || top < 0 || top > 1000) {
                fprintf(
                    stderr,
                    "vramtrace report: --top %s: expected a number from 0 to 1000 (see vramtrace "
                    "report --help)\n",
                    p.arg);
                rc = VT_EXIT_USAGE;
                goto out;
            }
            break;
        case CLI_KEY_VALUE:
            overrides[nover++] = p.key_value;
            break;
        default:
            if (k >= OPT_CFG && k < OPT_CFG + CFG_COUNT) {
                /* "--n-layer 24" -> the override "n_layer=24", said as typed ("--n-layer 24":
                 * a ResNet's --grad-accum 4 had been said "gradient_accumulation_steps=4") */
                const char *name = "";
                for (int j = 0; report_opts[j].name; j++)
                    if (report_opts[j].key == k)
                        name = report_opts[j].name;
                size_t len = strlen(config_key_name((config_key)(k - OPT_CFG))) + strlen(p.arg) + 2;
                size_t slen = strlen(name) + strlen(p.arg) + 4;
                char *o = malloc(len), *as = malloc(slen);
                if (!o || !as) {
                    free(o), free(as);
                    rc = VT_EXIT_USAGE;
                    goto out;
                }
                snprintf(o, len, "%s=%s", config_key_name((config_key)(k - OPT_CFG)), p.arg);
                snprintf(as, slen, "--%s %s", name, p.arg);
                owned[nowned++] = o;
                owned[nowned++] = as;
                said[nover] = as;
                overrides[nover++] = o;
                if (access(p.arg, F_OK) == 0) /* a file: the trace, its value left out? */
                    took_key = name, took_value = p.arg;
                break;
            }
            rc = VT_EXIT_USAGE;
            goto out;
        }
    }
    if (json && html) { /* --html writes the page instead of the text or the JSON */
        fprintf(stderr,
                "vramtrace report: --json and --html %s: give one (--json prints the "
                "report as JSON, --html writes it as a page)\n",
                html);
        rc = VT_EXIT_USAGE;
        goto out;
    }
    for (int i = p.optind; i < argc; i++) { /* a trace given twice is read once (one rank) */
        int again = 0;
        for (int j = 0; j < nfiles && !again; j++)
            again = same_file(files[j], argv[i]);
        if (again) {
            fputs("vramtrace report: ", stderr);
            escape_term_fputs(stderr, argv[i], strlen(argv[i]));
            fputs(" given twice: read once\n", stderr);
            continue;
        }
        files[nfiles++] = argv[i];
    }
    if (!nfiles && took_key) { /* "--batch-size run.vt": the option's value left out */
        fprintf(stderr,
                "vramtrace report: --%s %s: a number expected, not a file: no trace file given "
                "(usage: vramtrace report [options] FILE...)\n",
                took_key, took_value);
    } else if (!nfiles)
        fprintf(
            stderr,
            "vramtrace report: no trace file given (usage: vramtrace report [options] FILE...)\n");
    if (!nfiles) {
        rc = VT_EXIT_USAGE;
        goto out;
    }
    c->top = top;
    c->color = !json && !no_color && !getenv("NO_COLOR") && isatty(1);
    c->opts.noverrides = nover;
    c->opts.overrides = overrides;
    c->opts.overrides_said = said;
    c->opts.color = c->color;
    card_spec spec;
    if (card) {
        char err[256];
        if (card_parse(card, &spec, err, sizeof err) < 0) {
            fprintf(stderr, "vramtrace report: --card: %s\n", err);
            rc = VT_EXIT_USAGE;
            goto out;
        }
        c->opts.target_card_bytes = spec.bytes;
        c->opts.target_card_name = spec.name;
    }
    if (html && notes_output_free("report", html)) { /* before reading: never over a trace */
        rc = VT_EXIT_USAGE;
        goto out;
    }
    replay_progress = isatty(2);
    timeline_segments = html != NULL; /* the page draws a segment-mode timeline too */
    c->runs = calloc((size_t)nfiles, sizeof *c->runs);
    if (!c->runs) {
        rc = VT_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < nfiles; i++) {
        char err[512] = "";
        if (isatty(2) && nfiles > 1)
            fprintf(stderr, "\rvramtrace report: reading %d/%d ", i + 1, nfiles),
                escape_term_fputs(stderr, files[i], strlen(files[i]));
        int r = replay_file(files[i], &c->runs[i], err, sizeof err);
        c->nruns = i + 1;
        if (r) {
            notes_error("report", err);
            rc = r == 2 ? VT_EXIT_USAGE : VT_EXIT_MALFORMED;
            goto free_runs;
        }
        notes_trace("report", &c->runs[i], "reporting");
    }
    if (isatty(2) && nfiles > 1)
        fprintf(stderr, "\n");
    /* several ranks: the one reported in full (its advice, its page) is the first that ran out
     * of memory, else the first file (a rank out of memory beside a first that was not had been
     * told "(ok)" and "keep the current configuration"); every rank is in the per-rank table */
    for (int i = 1; i < c->nruns && !c->runs[0].has_oom; i++)
        if (c->runs[i].has_oom) { /* (first, the rest in their order: 2, 0, 1, 3) */
            replay_result oom = c->runs[i];
            memmove(&c->runs[1], &c->runs[0], (size_t)i * sizeof *c->runs);
            c->runs[0] = oom;
            c->full_oom = 1;
        }
    char berr[512] = "";
    if (report_build(c, berr, sizeof berr) < 0) {
        fprintf(stderr, "vramtrace report: %s\n", berr);
        rc = VT_EXIT_USAGE;
        goto free_runs;
    }
    if (mem_failed()) /* a replay or the report lost something: nothing written (main says why) */
        goto free_runs;
    int w;
    if (html) /* the page `vramtrace export --html` writes, of this report; its path said */
        w = notes_write("report", html, "HTML page", html_page, c) ? -1 : 0;
    else
        w = json ? report_json(stdout, c) : report_text(stdout, c);
    if (w < 0)
        rc = VT_EXIT_USAGE;
    else if (fail_if_oom)
        for (int i = 0; i < c->nruns; i++)
            if (c->runs[i].has_oom && !c->runs[i].oom_went_on) /* (not one it went on from) */
                rc = VT_EXIT_FINDINGS;
free_runs:
    report_free(c);
out:
    for (int i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    free(files);
    free(overrides);
    free(said);
    free(c);
    return rc;
}
