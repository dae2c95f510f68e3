/* cli.h — the one option parser of every `vramtrace` command: each command lists its options
 * once in a cli_opt table, from which both the getopt_long parsing and the options part of
 * its --help come. Errors are printed as "vramtrace CMD: ..." and returned as values. */
#ifndef VT_ANALYZER_CLI_H
#define VT_ANALYZER_CLI_H

#include <getopt.h>
#include <stdio.h>

/* One option. key: the short letter ('o' for -o/--output) or a value >= CLI_LONG_ONLY for a
 * long-only option; name: the long name without "--" (NULL: short only); arg: the
 * argument's name in --help (NULL: a flag); help: what it does (a '\n' starts a continued
 * line, indented under the first). A table ends with {0}. */
typedef struct cli_opt {
    int key;
    const char *name;
    const char *arg;
    const char *help;
} cli_opt;

enum {
    CLI_LONG_ONLY = 256, /* first key of long-only options */
    CLI_MAX_OPTS = 40,   /* options per table */
    CLI_END = -1,        /* cli_next: no more options (operands start at cli.optind) */
    CLI_ERROR = -2,      /* cli_next: a bad option, already reported on stderr */
    CLI_KEY_VALUE = -3,  /* cli_next: "--KEY=VALUE" outside the table (cli.key_value set) */
};

/* cli: the state of one parse. Flags for cli_init: */
enum {
    CLI_STOP_AT_OPERAND = 1, /* options end at the first operand (`run ... CMD ARGS`) */
    CLI_KEY_VALUES = 2,      /* unknown "--KEY=VALUE" words (and "--KEY VALUE" where is_key says
                              * KEY is one) are returned as CLI_KEY_VALUE */
};
typedef struct cli {
    const char *cmd; /* "report": for messages */
    const cli_opt *opts;
    int flags;
    struct option longs[CLI_MAX_OPTS + 1];
    char shorts[2 * CLI_MAX_OPTS + 4];
    const char *arg;                 /* the option's argument, or NULL */
    const char *key_value;           /* for CLI_KEY_VALUE: "KEY=VALUE" (without the dashes) */
    int optind;                      /* after CLI_END: index of the first operand in argv */
    const char *given[CLI_MAX_OPTS]; /* each option's value so far (a second, other one: refused) */
    /* with CLI_KEY_VALUES: whether "--NAME" (n bytes) is a key of the command's "--KEY=VALUE"
     * words, so that "--KEY VALUE" is one too (NULL: none is) */
    int (*is_key)(const char *name, size_t n);
    char kv[256]; /* key_value's text for "--KEY VALUE" */
} cli;

/* cli_init: prepares a parse of argv (argv[0] = the command name) with the table opts
 * (at most CLI_MAX_OPTS entries) and CLI_* flags; resets getopt's state. */
void cli_init(cli *c, const char *cmd, const cli_opt *opts, int flags);

/* cli_next: the key of the next option (c->arg holds its argument; a long option also spelled
 * with '_' for '-', "--grad_accum 4" as "--grad-accum 4"), CLI_END when the options
 * end ("--" or, with CLI_STOP_AT_OPERAND, the first operand; operands then start at
 * c->optind), CLI_KEY_VALUE (see above), or CLI_ERROR after printing "vramtrace CMD:
 * unknown option X", "X needs a value" or "--X given twice (A, then B): give one" (an option's
 * second value, another than its first: which one was meant is not known) with a pointer to
 * --help. */
int cli_next(cli *c, int argc, char **argv);

/* cli_print_options: the "options:" lines of --help for opts, aligned. */
void cli_print_options(FILE *out, const cli_opt *opts);

#endif
