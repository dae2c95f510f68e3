/* test_preload_config.c — the preload's configuration (preload/core/config.c): numbers that
 * are negative, not numbers or outside their range (129 frames, 2^64-1) and flags other than
 * 0 / 1 (VRAMTRACE_DISABLE=false) fall back to the default with exactly one warning each, the
 * value escaped; stack modes are exactly the names of include/vramtrace/env.h; %r in the
 * output template becomes $RANK in safe file-name characters (RANK=../../x stays inside);
 * values past their room are never cut in silence: an output name is refused (output_long), a
 * manifest name is none, a card name is cut at a whole character, each said. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../preload/core/config.h"
#include "../../preload/core/quietio.h"
#include "vramtrace/env.h"
#include "vramtrace/trace_format.h"

static char g_err[4096];

/* reload_capturing: vt__config_reload with stderr captured into g_err; the line count. */
static int reload_capturing(void)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    dup2(fileno(tmp), 2);
    vt__stderr_take(); /* (the preload writes only to the stderr it took) */
    vt__config_reload();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    vt__stderr_take();
    rewind(tmp);
    size_t n = fread(g_err, 1, sizeof g_err - 1, tmp);
    g_err[n] = '\0';
    fclose(tmp);
    int lines = 0;
    for (char *p = g_err; *p; p++)
        lines += *p == '\n';
    return lines;
}

static int clear_env(void **state)
{
    (void)state;
    const char *names[] = {VT_ENV_STACK_DEPTH, VT_ENV_SAMPLE_MS,   VT_ENV_CARD_BYTES,
                           VT_ENV_STACKS,      VT_ENV_OUTPUT,      "RANK",
                           VT_ENV_DISABLE,     VT_ENV_FREE_STACKS, VT_ENV_TORCH_TRACKER,
                           VT_ENV_CARD_NAME,   VT_ENV_MANIFEST};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
    return 0;
}

static void defaults_silent(void **state)
{
    (void)state;
    assert_int_equal(reload_capturing(), 0);
    const vt__config *c = vt__config_get();
    assert_int_equal(c->stack_depth, 32);
    assert_int_equal(c->sample_ms, 0);
    assert_int_equal(c->card_bytes, 0);
    assert_int_equal(c->stack_mode, VT_STACKS_NATIVE | VT_STACKS_PYTHON);
    assert_string_equal(c->output, "vramtrace.%p.vt");
}

static void good_numbers(void **state)
{
    (void)state;
    setenv(VT_ENV_STACK_DEPTH, "7", 1);
    setenv(VT_ENV_SAMPLE_MS, "250", 1);
    setenv(VT_ENV_CARD_BYTES, "12884901888", 1);
    assert_int_equal(reload_capturing(), 0);
    const vt__config *c = vt__config_get();
    assert_int_equal(c->stack_depth, 7);
    assert_int_equal(c->sample_ms, 250);
    assert_int_equal(c->card_bytes, 12884901888ull);
}

static void bad_numbers_default_one_warning_each(void **state)
{
    (void)state;
    setenv(VT_ENV_STACK_DEPTH, "-5", 1);
    setenv(VT_ENV_SAMPLE_MS, "-1", 1);
    setenv(VT_ENV_CARD_BYTES, "12GiB", 1);
    assert_int_equal(reload_capturing(), 3);
    assert_non_null(strstr(g_err, "VRAMTRACE_STACK_DEPTH=-5"));
    assert_non_null(strstr(g_err, "VRAMTRACE_SAMPLE_MS=-1"));
    assert_non_null(strstr(g_err, "VRAMTRACE_CARD_BYTES=12GiB"));
    const vt__config *c = vt__config_get();
    assert_int_equal(c->stack_depth, 32);
    assert_int_equal(c->sample_ms, 0);
    assert_int_equal(c->card_bytes, 0);
    setenv(VT_ENV_STACK_DEPTH, "abc", 1);
    setenv(VT_ENV_SAMPLE_MS, " 5", 1);
    setenv(VT_ENV_CARD_BYTES, "99999999999999999999999", 1); /* past 2^64 */
    assert_int_equal(reload_capturing(), 3);
    assert_int_equal(c->stack_depth, 32);
    assert_int_equal(c->sample_ms, 0);
    assert_int_equal(c->card_bytes, 0);
}

static void out_of_range_default_one_warning_each(void **state)
{
    (void)state;
    const vt__config *c = vt__config_get();
    setenv(VT_ENV_STACK_DEPTH, "129", 1);
    setenv(VT_ENV_SAMPLE_MS, "3600001", 1);
    setenv(VT_ENV_CARD_BYTES, "18446744073709551615", 1); /* 2^64-1: no card has it */
    assert_int_equal(reload_capturing(), 3);
    assert_non_null(strstr(g_err, "VRAMTRACE_STACK_DEPTH=129 is not a whole number from 1 to 128"));
    assert_non_null(strstr(g_err, "VRAMTRACE_SAMPLE_MS=3600001"));
    assert_non_null(strstr(g_err, "VRAMTRACE_CARD_BYTES=18446744073709551615"));
    assert_int_equal(c->stack_depth, 32);
    assert_int_equal(c->sample_ms, 0);
    assert_int_equal(c->card_bytes, 0);
    setenv(VT_ENV_STACK_DEPTH, "0", 1);
    setenv(VT_ENV_SAMPLE_MS, "3600000", 1);
    setenv(VT_ENV_CARD_BYTES, "4611686018427387904", 1); /* 2^62: the largest taken */
    assert_int_equal(reload_capturing(), 1);
    assert_int_equal(c->stack_depth, 32);
    assert_int_equal(c->sample_ms, 3600000);
    assert_int_equal(c->card_bytes, 1ull << 62);
    setenv(VT_ENV_STACK_DEPTH, "128", 1);
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(c->stack_depth, 128);
}

static void flags_are_0_or_1(void **state)
{
    (void)state;
    const vt__config *c = vt__config_get();
    setenv(VT_ENV_DISABLE, "false", 1); /* never read as "set, so disable" */
    setenv(VT_ENV_FREE_STACKS, "yes", 1);
    setenv(VT_ENV_TORCH_TRACKER, "off", 1);
    assert_int_equal(reload_capturing(), 3);
    assert_non_null(strstr(g_err, "VRAMTRACE_DISABLE=false is not 0 or 1; using 0"));
    assert_int_equal(c->disabled, 0);
    assert_int_equal(c->free_stacks, 0);
    assert_int_equal(c->torch_tracker, 1);
    setenv(VT_ENV_DISABLE, "1", 1);
    setenv(VT_ENV_FREE_STACKS, "1", 1);
    setenv(VT_ENV_TORCH_TRACKER, "0", 1);
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(c->disabled, 1);
    assert_int_equal(c->free_stacks, 1);
    assert_int_equal(c->torch_tracker, 0);
    setenv(VT_ENV_DISABLE, "0", 1);
    setenv(VT_ENV_TORCH_TRACKER, "", 1);
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(c->disabled, 0);
    assert_int_equal(c->torch_tracker, 1);
}

/* values from the environment are printed escaped: no terminal escape code, no raw byte */
static void warnings_escaped(void **state)
{
    (void)state;
    setenv(VT_ENV_STACKS, "\x1b]0;owned\x07\x1b[2J\\\xff", 1);
    assert_int_equal(reload_capturing(), 1);
    for (const char *p = g_err; *p; p++)
        assert_true((*p >= 0x20 && *p < 0x7f) || *p == '\n');
    assert_non_null(strstr(g_err, "VRAMTRACE_STACKS=\\x1b]0;owned\\x07\\x1b[2J\\\\\\xff is not"));
    char out[16], big[600];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_string_equal(vt__config_escape(big, out, sizeof out), "aaaaaaaaaaaa...");
    assert_string_equal(vt__config_escape("\x1b\x1b\x1b", out, sizeof out), "\\x1b\\x1b\\x1b");
    assert_string_equal(vt__config_escape("\x1b\x1b\x1b\x1b", out, sizeof out),
                        "\\x1b\\x1b\\x1b...");
}

static void stack_modes_strict(void **state)
{
    (void)state;
    const vt__config *c = vt__config_get();
    setenv(VT_ENV_STACKS, VT_STACKS_NAME_NONE, 1);
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(c->stack_mode, VT_STACKS_NONE);
    setenv(VT_ENV_STACKS, VT_STACKS_NAME_PYTHON, 1);
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(c->stack_mode, VT_STACKS_PYTHON);
    setenv(VT_ENV_STACKS, VT_STACKS_NAME_NATIVE, 1);
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(c->stack_mode, VT_STACKS_NATIVE);
    setenv(VT_ENV_STACKS, "Native", 1);
    assert_int_equal(reload_capturing(), 1);
    assert_non_null(strstr(g_err, "VRAMTRACE_STACKS=Native"));
    assert_int_equal(c->stack_mode, VT_STACKS_NATIVE | VT_STACKS_PYTHON);
}

static void rank_in_safe_characters(void **state)
{
    (void)state;
    const vt__config *c = vt__config_get();
    setenv(VT_ENV_OUTPUT, "/tmp/out/trace.%r.%p.vt", 1);
    setenv("RANK", "../../x", 1);
    assert_int_equal(reload_capturing(), 0);
    assert_string_equal(c->output, "/tmp/out/trace._._.._x.%p.vt");
    setenv(VT_ENV_OUTPUT, "/tmp/out/%r/t.vt", 1);
    setenv("RANK", "..", 1);
    vt__config_reload();
    assert_string_equal(c->output, "/tmp/out/_./t.vt"); /* never a ".." directory */
    setenv("RANK", "3", 1);
    vt__config_reload();
    assert_string_equal(c->output, "/tmp/out/3/t.vt");
    unsetenv("RANK");
    setenv(VT_ENV_OUTPUT, "r%r-%%r.vt", 1);
    vt__config_reload();
    assert_string_equal(c->output, "r0-%%r.vt"); /* %% stays for the writer */
    setenv("RANK", "a/b\nc%pd", 1);
    vt__config_reload();
    assert_string_equal(c->output, "ra_b_c_pd-%%r.vt");
}

/* set_long: name set to `head` then c repeated up to len bytes, then `tail` */
static void set_long(const char *name, const char *head, char c, size_t len, const char *tail)
{
    static char v[6000];
    size_t h = strlen(head), t = strlen(tail);
    assert_true(len + t < sizeof v && h <= len);
    memcpy(v, head, h);
    memset(v + h, c, len - h);
    memcpy(v + len, tail, t + 1);
    setenv(name, v, 1);
}

static void long_values_never_cut_in_silence(void **state)
{
    (void)state;
    const vt__config *c = vt__config_get();
    set_long(VT_ENV_OUTPUT, "/tmp/", 'a', 4095 - 3, ".vt"); /* 4095 bytes: fits */
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(c->output_long, 0);
    assert_int_equal(strlen(c->output), 4095);
    set_long(VT_ENV_OUTPUT, "/tmp/", 'a', 4096 - 3, ".vt"); /* its start names another file */
    assert_int_equal(reload_capturing(), 0);                /* (said when a trace is made) */
    assert_int_equal(c->output_long, 1);
    set_long(VT_ENV_OUTPUT, "/tmp/", 'a', 4095 - 6, ".%r.vt"); /* 4095, %r made 0: 4094 */
    vt__config_reload();
    assert_int_equal(c->output_long, 0);
    setenv("RANK", "12", 1); /* 4095: fits */
    vt__config_reload();
    assert_int_equal(c->output_long, 0);
    setenv("RANK", "123", 1); /* one byte more */
    vt__config_reload();
    assert_int_equal(c->output_long, 1);
    unsetenv("RANK");
    setenv(VT_ENV_OUTPUT, "t.vt", 1);
    vt__config_reload();
    assert_int_equal(c->output_long, 0);

    set_long(VT_ENV_MANIFEST, "/tmp/", 'm', 4095, ""); /* fits */
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(strlen(c->manifest), 4095);
    set_long(VT_ENV_MANIFEST, "/tmp/", 'm', 4096, ""); /* none, never the file its start names */
    assert_int_equal(reload_capturing(), 1);
    assert_non_null(strstr(g_err, "is not a file name of at most 4095 bytes; using none"));
    assert_string_equal(c->manifest, "");
    unsetenv(VT_ENV_MANIFEST);

    set_long(VT_ENV_CARD_NAME, "", 'n', 63, ""); /* fits */
    assert_int_equal(reload_capturing(), 0);
    assert_int_equal(strlen(c->card_name), 63);
    setenv(VT_ENV_CARD_NAME, /* 32 two-byte characters: 31 whole ones fit */
           "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
           "\u00e9\u00e9"
           "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
           "\u00e9\u00e9",
           1);
    assert_int_equal(reload_capturing(), 1);
    assert_non_null(strstr(g_err, "is not a name of at most 63 bytes; using its first"));
    assert_int_equal(strlen(c->card_name), 62);
}

static void safe_name_bounds(void **state)
{
    (void)state;
    char out[17];
    assert_string_equal(vt__config_safe_name("0123456789abcdefXYZ", "0", out, sizeof out),
                        "0123456789abcdef");
    assert_string_equal(vt__config_safe_name("", "0", out, sizeof out), "0");
    assert_string_equal(vt__config_safe_name(NULL, "0", out, sizeof out), "0");
    assert_string_equal(vt__config_safe_name(".", "0", out, sizeof out), "_");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(defaults_silent, clear_env),
        cmocka_unit_test_setup(good_numbers, clear_env),
        cmocka_unit_test_setup(bad_numbers_default_one_warning_each, clear_env),
        cmocka_unit_test_setup(out_of_range_default_one_warning_each, clear_env),
        cmocka_unit_test_setup(flags_are_0_or_1, clear_env),
        cmocka_unit_test_setup(warnings_escaped, clear_env),
        cmocka_unit_test_setup(stack_modes_strict, clear_env),
        cmocka_unit_test_setup(rank_in_safe_characters, clear_env),
        cmocka_unit_test_setup(safe_name_bounds, clear_env),
        cmocka_unit_test_setup(long_values_never_cut_in_silence, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
