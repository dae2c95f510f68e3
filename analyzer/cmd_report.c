/* cmd_report.c — placeholder until the subcommand lands. */
#include <stdio.h>
#include "commands.h"

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "vramtrace report: not implemented yet\n");
    return VT_EXIT_USAGE;
}
