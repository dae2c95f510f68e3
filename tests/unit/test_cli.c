/* test_cli.c — the one option parser of the commands (analyzer/cmd/cli.c): short and long
 * options, values in either spelling, operands after options, "--", stopping at the command
 * (run), --KEY=VALUE words (report), errors, and the --help lines from the same table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../analyzer/cmd/cli.h"

enum { OPT_JSON = CLI_LONG_ONLY, OPT_TOP, OPT_ACCUM, OPT_NO_COLOR };
static const cli_opt opts[] = {{'o', "output", "FILE", "where\ncontinued"},
                               {'q', "quiet", NULL, "quiet"},
                               {OPT_JSON, "json", NULL, "json"},
                               {OPT_TOP, "top", "N", "count"},
                               {OPT_ACCUM, "grad-accum", "N", "steps"},
                               {OPT_NO_COLOR, "no-color", NULL, "plain"},
                               {'h', "help", NULL, "this text"},
                               {0}};

/* is_key: the keys of "--KEY VALUE" (report's: its configuration's) */
static int is_key(const char *name, size_t n)
{
    return (n == 10 && !strncmp(name, "block_size", n)) ||
           (n == 10 && !strncmp(name, "batch_size", n));
}
static int (*g_is_key)(const char *, size_t);

/* parse: runs the parser over words (argv[0] = "t"); keys and args into out as text such as
 * "o=x q KV:a=1 END@3"; returns the last cli_next result. */
static int parse(int flags, const char *const *words, char *out, size_t len)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"t";
    for (; *words; words++)
        argv[argc++] = (char *)*words;
    argv[argc] = NULL;
    cli c;
    cli_init(&c, "t", opts, flags);
    c.is_key = g_is_key;
    out[0] = '\0';
    int k;
    size_t n = 0;
    while ((k = cli_next(&c, argc, argv)) != CLI_END && k != CLI_ERROR) {
        if (k == CLI_KEY_VALUE)
            n += (size_t)snprintf(out + n, len - n, "KV:%s ", c.key_value);
        else if (k >= CLI_LONG_ONLY)
            n += (size_t)snprintf(out + n, len - n, "L%d%s%s ", k - CLI_LONG_ONLY, c.arg ? "=" : "",
                                  c.arg ? c.arg : "");
        else
            n += (size_t)snprintf(out + n, len - n, "%c%s%s ", k, c.arg ? "=" : "",
                                  c.arg ? c.arg : "");
    }
    if (k == CLI_END) {
        snprintf(out + n, len - n, "END@%d", c.optind);
        /* the operands, in order, after END (getopt moves them behind the options) */
        for (int i = c.optind; i < argc; i++) {
            n = strlen(out);
            snprintf(out + n, len - n, " %s", argv[i]);
        }
    }
    return k;
}

static void test_options_and_operands(void **state)
{
    (void)state;
    char out[256];
    const char *const a[] = {"-o", "x.vt", "--json", "f1", "--top=3", "-q", "f2", NULL};
    assert_int_equal(parse(0, a, out, sizeof out), CLI_END);
    assert_string_equal(out, "o=x.vt L0 L1=3 q END@6 f1 f2");
    const char *const b[] = {"--output=y", "-qo", "y", "--top", "5", "--", "-q", NULL};
    assert_int_equal(parse(0, b, out, sizeof out), CLI_END);
    assert_string_equal(out, "o=y q o=y L1=5 END@7 -q"); /* (the same value twice: taken) */
    /* two values of one option: refused (which one was meant is not known) */
    const char *const c[] = {"--output=y", "-qo", "z", "f1", NULL};
    assert_int_equal(parse(0, c, out, sizeof out), CLI_ERROR);
}

static void test_stop_at_operand(void **state)
{
    (void)state;
    char out[256];
    const char *const a[] = {"-q", "python", "train.py", "--help", "-o", "x", NULL};
    assert_int_equal(parse(CLI_STOP_AT_OPERAND, a, out, sizeof out), CLI_END);
    assert_string_equal(out, "q END@2 python train.py --help -o x");
}

static void test_key_values(void **state)
{
    (void)state;
    char out[256];
    const char *const a[] = {"--batch_size=8", "f", "--json", "--n_head=6", NULL};
    assert_int_equal(parse(CLI_KEY_VALUES, a, out, sizeof out), CLI_END);
    assert_string_equal(out, "KV:batch_size=8 L0 KV:n_head=6 END@4 f");
    /* without the flag, or without '=', or a flag given a value: errors */
    assert_int_equal(parse(0, a, out, sizeof out), CLI_ERROR);
    const char *const b[] = {"--batch_size", NULL};
    assert_int_equal(parse(CLI_KEY_VALUES, b, out, sizeof out), CLI_ERROR);
    const char *const c[] = {"--json=1", NULL};
    assert_int_equal(parse(CLI_KEY_VALUES, c, out, sizeof out), CLI_ERROR);
}

/* a long option also spelled with '_' for '-' ("--grad_accum 4", "--no_color"), and "--KEY
 * VALUE" beside "--KEY=VALUE" where the command's keys say KEY is one; a flag so spelled given a
 * value, or a key with none, is refused */
static void test_spellings(void **state)
{
    (void)state;
    char out[256];
    g_is_key = is_key;
    const char *const a[] = {"f",
                             "--grad_accum",
                             "4",
                             "--no_color",
                             "--block_size",
                             "512",
                             "--batch_size=8",
                             "--grad_accum=4",
                             NULL};
    assert_int_equal(parse(CLI_KEY_VALUES, a, out, sizeof out), CLI_END);
    assert_string_equal(out, "L2=4 L3 KV:block_size=512 KV:batch_size=8 L2=4 END@8 f");
    const char *const b[] = {"--no_color=1", NULL}, *const c[] = {"--block_size", NULL},
                      *const d[] = {"--top_n", "3", NULL}, *const e[] = {"--grad_accum", NULL};
    assert_int_equal(parse(CLI_KEY_VALUES, b, out, sizeof out), CLI_ERROR);
    assert_int_equal(parse(CLI_KEY_VALUES, c, out, sizeof out), CLI_ERROR);
    assert_int_equal(parse(CLI_KEY_VALUES, d, out, sizeof out), CLI_ERROR);
    assert_int_equal(parse(0, e, out, sizeof out), CLI_ERROR);
    /* two spellings, two values: refused */
    const char *const f[] = {"--grad-accum", "2", "--grad_accum=4", NULL};
    assert_int_equal(parse(0, f, out, sizeof out), CLI_ERROR);
    /* no keys: "--block_size 512" is no option */
    g_is_key = NULL;
    const char *const g[] = {"--block_size", "512", NULL};
    assert_int_equal(parse(CLI_KEY_VALUES, g, out, sizeof out), CLI_ERROR);
}

static void test_errors(void **state)
{
    (void)state;
    char out[256];
    const char *const a[] = {"-x", NULL};
    assert_int_equal(parse(0, a, out, sizeof out), CLI_ERROR);
    const char *const b[] = {"f", "--top", NULL};
    assert_int_equal(parse(0, b, out, sizeof out), CLI_ERROR);
    const char *const c[] = {"-o", NULL};
    assert_int_equal(parse(0, c, out, sizeof out), CLI_ERROR);
    /* a parse after an error starts afresh */
    const char *const d[] = {"-q", "f", NULL};
    assert_int_equal(parse(0, d, out, sizeof out), CLI_END);
    assert_string_equal(out, "q END@2 f");
}

static void test_help_lines(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cli_print_options(f, opts);
    fclose(f);
    assert_non_null(strstr(buf, "options:\n  -o, --output FILE   where\n"
                                "                      continued\n"));
    assert_non_null(strstr(buf, "\n  --top N             count\n"));
    assert_non_null(strstr(buf, "\n  -h, --help          this text\n"));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_and_operands), cmocka_unit_test(test_stop_at_operand),
        cmocka_unit_test(test_key_values),           cmocka_unit_test(test_errors),
        cmocka_unit_test(test_help_lines),           cmocka_unit_test(test_spellings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
