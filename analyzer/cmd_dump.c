/* cmd_dump.c — placeholder until the subcommand lands. */
#include <stdio.h>
#include "commands.h"

int cmd_dump(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "vramtrace dump: not implemented yet\n");
    return VT_EXIT_USAGE;
}
