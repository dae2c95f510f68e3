/* main.c — the `vramtrace` command line: dispatches to the subcommands of commands.h.
 * Only main() exits; everything else returns error values. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "vramtrace/trace_format.h"

#ifndef VT_VERSION_STRING
#define VT_VERSION_STRING "0.1.0"
#endif

static void usage(FILE *out)
{
    fprintf(out, "usage: vramtrace <command> [options]\n\n"
                 "GPU memory profiler for PyTorch training.\n\ncommands:\n");
#define VT_CMD_HELP(name, fn, help) fprintf(out, "  %-8s %s\n", #name, help);
    VT_COMMANDS(VT_CMD_HELP)
#undef VT_CMD_HELP
    fprintf(out, "\n`vramtrace <command> --help` for each command's options.\n"
                 "exit codes: 0 ok, 1 findings, 2 usage or system error, 3 malformed trace\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return VT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return VT_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vramtrace %s (trace format %d.%d)\n", VT_VERSION_STRING, VT_VERSION_MAJOR,
               VT_VERSION_MINOR);
        return VT_EXIT_OK;
    }
#define VT_CMD_DISPATCH(name, fn, help) \
    if (!strcmp(cmd, #name))            \
        return fn(argc - 1, argv + 1);
    VT_COMMANDS(VT_CMD_DISPATCH)
#undef VT_CMD_DISPATCH
    fprintf(stderr, "vramtrace: unknown command '%s' (try `vramtrace --help`)\n", cmd);
    return VT_EXIT_USAGE;
}
