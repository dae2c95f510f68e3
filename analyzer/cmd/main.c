/* main.c — the `vramtrace` command line: dispatches to the subcommands of commands.h.
 * Only main() exits; everything else returns error values. An allocation that failed anywhere
 * (mem.h) makes the exit 2 "out of memory", whatever the command made of it, and so does output
 * that never reached standard output (a full disk, a closed pipe: notes.h). */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commands.h"
#include "hashseed.h"
#include "mem.h"
#include "notes.h"
#include "vramtrace/trace_format.h"

#ifndef VT_VERSION_STRING
#define VT_VERSION_STRING "0.1.0"
#endif

/* main's own options (before the command), one table: parsing and --help come from it. */
enum { OPT_VERSION = CLI_LONG_ONLY };
static const cli_opt main_opts[] = {{'h', "help", NULL, "this text"},
                                    {OPT_VERSION, "version", NULL, "the version and trace format"},
                                    {0}};

static void usage(FILE *out)
{
    fprintf(out, "usage: vramtrace [-h | --version] <command> [options]\n\n"
                 "GPU memory profiler for PyTorch training.\n\ncommands:\n");
#define VT_CMD_HELP(name, fn, help) fprintf(out, "  %-8s %s\n", #name, help);
    VT_COMMANDS(VT_CMD_HELP)
#undef VT_CMD_HELP
    fprintf(out, "\n");
    cli_print_options(out, main_opts);
    fprintf(out,
            "\n`vramtrace <command> --help` for each command's options; docs/formula.md for\n"
            "the categories, formulas and advice rules the reports cite (docs/: in the source\n"
            "tree, and in PREFIX/share/doc/vramtrace after `make install` or `pip install`).\n"
            "exit codes: 0 ok, 1 findings, 2 usage or system error, 3 malformed trace\n");
}

static int version(void)
{
    /* (it writes 2.0, a bounded or compressed trace 1.3; it reads both majors) */
    printf("vramtrace %s (trace format %d.%d; reads %d.x and %d.x)\n", VT_VERSION_STRING,
           VT_BLOCKS_MAJOR, VT_BLOCKS_MINOR, VT_VERSION_MAJOR, VT_BLOCKS_MAJOR);
    return VT_EXIT_OK;
}

/* finish: the command's exit code, or 2 with the one message for it when an allocation failed
 * (whether or not the command noticed: mem.h) or what it printed did not all reach standard
 * output: every command's output is checked here once, so none can end 0 having written
 * nothing (report, dump, watch and predict did, into a full disk). A command that failed has
 * said why already; run's exit code is its program's, kept. */
static int finish(const char *cmd, int rc)
{
    if (mem_failed()) { /* (run's summary said what it could not read; its program's code) */
        const char *crash = mem_crash(); /* (a library crashed: its words) */
        fprintf(stderr, "vramtrace %s: %s\n", cmd, crash ? crash : MEM_OOM_MESSAGE);
        return strcmp(cmd, "run") ? VT_EXIT_USAGE : rc;
    }
    if ((rc != VT_EXIT_OK && rc != VT_EXIT_FINDINGS) || !notes_stdout_error(cmd, 0))
        return rc;
    return strcmp(cmd, "run") ? VT_EXIT_USAGE : rc;
}

int main(int argc, char **argv)
{
    mem_heap_huge();
    hashseed_init(); /* before any table is made */
    cJSON_Hooks hooks = {mem_malloc, mem_free};
    cJSON_InitHooks(&hooks);
    cli p;
    int k;
    cli_init(&p, "", main_opts, CLI_STOP_AT_OPERAND);
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        if (k == 'h') {
            usage(stdout);
            return finish("--help", VT_EXIT_OK); /* (into a full disk: 2, as every command) */
        }
        if (k == OPT_VERSION)
            return finish("--version", version());
        return VT_EXIT_USAGE;
    }
    if (p.optind >= argc) {
        usage(stderr);
        return VT_EXIT_USAGE;
    }
    argc -= p.optind;
    argv += p.optind;
    const char *cmd = argv[0];
    char *help[] = {argc > 1 ? argv[1] : NULL, "--help", NULL};
    if (!strcmp(cmd, "help") && argc == 2 && strcmp(argv[1], "help")) { /* `help report` */
        argc = 2, argv = help;
        cmd = argv[0];
    } else if (!strcmp(cmd, "help")) {
        usage(stdout);
        return finish("help", VT_EXIT_OK);
    }
    if (!strcmp(cmd, "version"))
        return finish("version", version());
#define VT_CMD_DISPATCH(name, fn, help)                                                            \
    if (!strcmp(cmd, #name))                                                                       \
        return finish(#name, fn(argc, argv));
    VT_COMMANDS(VT_CMD_DISPATCH)
#undef VT_CMD_DISPATCH
    fprintf(stderr, "vramtrace: unknown command '%s' (try `vramtrace --help`)\n", cmd);
    return VT_EXIT_USAGE;
}
