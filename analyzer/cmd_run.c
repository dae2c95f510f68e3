/* cmd_run.c — placeholder until the subcommand lands. */
#include <stdio.h>
#include "commands.h"

int cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "vramtrace run: not implemented yet\n");
    return VT_EXIT_USAGE;
}
