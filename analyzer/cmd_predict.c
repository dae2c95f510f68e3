/* cmd_predict.c — placeholder until the subcommand lands. */
#include <stdio.h>
#include "commands.h"

int cmd_predict(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "vramtrace predict: not implemented yet\n");
    return VT_EXIT_USAGE;
}
