/* test_pyexpr.c — the evaluator of nanoGPT config expressions (analyzer/model/recognize/pyexpr.c):
 * literals, Python's int / float arithmetic (// and % floor toward -inf, / is float, **)
 * within 64 bits, precedence and parentheses, strings, names through a lookup; what it
 * refuses, with a reason where there is one (overflow, division by zero, a float that is not
 * finite, nesting deeper than PYEXPR_MAX_DEPTH), and no recursion without a bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pyexpr.h"

static pyval ev(const char *text)
{
    return pyexpr_eval(text, NULL, NULL);
}

static void expect_int(const char *text, long long want)
{
    pyval v = ev(text);
    if (v.k != PYV_INT || v.i != want)
        fail_msg("%s: kind %d value %lld, expected int %lld", text, v.k, v.i, want);
}

static void expect_float(const char *text, double want)
{
    pyval v = ev(text);
    if (v.k != PYV_FLOAT || v.f != want)
        fail_msg("%s: kind %d value %g, expected float %g", text, v.k, v.f, want);
}

static void expect_err(const char *text)
{
    pyval v = ev(text);
    if (v.k != PYV_ERR)
        fail_msg("%s: kind %d, expected an error", text, v.k);
}

static void test_literals(void **state)
{
    (void)state;
    expect_int("12", 12);
    expect_int("  1024  ", 1024);
    expect_float("6e-4", 6e-4);
    expect_float("0.1", 0.1);
    pyval v = ev("True");
    assert_int_equal(v.k, PYV_BOOL);
    assert_int_equal(v.i, 1);
    v = ev("False");
    assert_int_equal(v.k, PYV_BOOL);
    assert_int_equal(v.i, 0);
    assert_int_equal(ev("None").k, PYV_NONE);
    v = ev("'bfloat16'");
    assert_int_equal(v.k, PYV_STR);
    assert_string_equal(v.s, "bfloat16");
    v = ev("\"gpt2\"");
    assert_int_equal(v.k, PYV_STR);
    assert_string_equal(v.s, "gpt2");
}

static void test_arithmetic(void **state)
{
    (void)state;
    expect_int("5 * 8", 40);
    expect_int("1024*12//16", 768);
    expect_int("2 + 3 * 4", 14);   /* precedence */
    expect_int("(2 + 3) * 4", 20); /* parentheses */
    expect_int("2 ** 10", 1024);
    expect_int("-7 // 2", -4);  /* Python floors toward -inf */
    expect_int("-7 % 2", 1);    /* the sign of the divisor */
    expect_float("7 / 2", 3.5); /* true division is float */
    expect_float("1 + 0.5", 1.5);
    expect_int("True + 1", 2); /* bool is an int */
    assert_true(pyexpr_numeric(ev("3")));
    assert_true(pyexpr_numeric(ev("3.5")));
    assert_true(pyexpr_numeric(ev("True")));
    assert_false(pyexpr_numeric(ev("'x'")));
    assert_true(pyexpr_num(ev("7 / 2")) == 3.5);
}

static void test_strings(void **state)
{
    (void)state;
    pyval v = ev("'gpt2' + '-small'");
    assert_int_equal(v.k, PYV_STR);
    assert_string_equal(v.s, "gpt2-small");
}

static int lookup(void *ctx, const char *name, pyval *out)
{
    (void)ctx;
    if (!strcmp(name, "batch_size")) {
        *out = (pyval){.k = PYV_INT, .i = 12};
        return 0;
    }
    return -1;
}

static void test_names(void **state)
{
    (void)state;
    pyval v = pyexpr_eval("batch_size * 2", lookup, NULL);
    assert_int_equal(v.k, PYV_INT);
    assert_int_equal(v.i, 24);
    assert_int_equal(pyexpr_eval("unknown_name + 1", lookup, NULL).k, PYV_ERR);
    expect_err("batch_size"); /* no lookup: like ast.literal_eval */
}

static void test_refused(void **state)
{
    (void)state;
    expect_err("");
    expect_err("1 / 0");
    expect_err("1 // 0");
    expect_err("open('x')");  /* a call */
    expect_err("os.environ"); /* an attribute */
    expect_err("(1 + 2");     /* unbalanced */
    expect_err("1 +");        /* incomplete */
    expect_err("1 2");        /* trailing text */
    expect_err("'unterminated");
}

static void assert_int_value(const char *text, long long want)
{
    pyval v = pyexpr_eval(text, NULL, NULL);
    if (v.k != PYV_INT || v.i != want)
        fail_msg("%s: kind %d value %lld, want int %lld", text, (int)v.k, v.i, want);
}

static void assert_refused(const char *text, const char *why)
{
    pyval v = pyexpr_eval(text, NULL, NULL);
    if (v.k != PYV_ERR || !v.why || !strstr(v.why, why))
        fail_msg("%.60s: kind %d value %lld why %s, want refused (%s)", text, (int)v.k, v.i,
                 v.why ? v.why : "(none)", why);
}

static void test_python_ints(void **state)
{
    (void)state;
    assert_int_value("(-1)**65 + 2", 1);
    assert_int_value("(-1)**64", 1);
    assert_int_value("(-1)**1000001", -1);
    assert_int_value("1**100000000000", 1);
    assert_int_value("0**0", 1);
    assert_int_value("2**62", 4611686018427387904ll);
    assert_int_value("3**39", 4052555153018976267ll);
    assert_int_value("-7 // 2", -4);
    assert_int_value("-7 % 2", 1);
    assert_int_value("7 % -2", -1);
    assert_int_value("7 // -2", -4);
    assert_int_value("1024*12//16", 768);
    assert_int_value("9223372036854775807", 9223372036854775807ll);
    assert_int_value("True + 1", 2);
    pyval v = pyexpr_eval("2**-1", NULL, NULL);
    assert_int_equal(v.k, PYV_FLOAT);
    assert_true(v.f == 0.5);
    v = pyexpr_eval("7.5 // 2", NULL, NULL);
    assert_int_equal(v.k, PYV_FLOAT);
    assert_true(v.f == 3.0);
    v = pyexpr_eval("1e-999", NULL, NULL); /* underflow is 0.0 in Python too */
    assert_int_equal(v.k, PYV_FLOAT);
    assert_true(v.f == 0.0);
}

static void test_refusals(void **state)
{
    (void)state;
    assert_refused("2**64 + 8", "64 bits");
    assert_refused("2**63", "64 bits");
    assert_refused("9223372036854775808", "64 bits");
    assert_refused("9223372036854775807 + 1", "64 bits");
    assert_refused("-9223372036854775807 - 2", "64 bits");
    assert_refused("4294967296 * 4294967296", "64 bits");
    assert_refused("10 // 0", "division by zero");
    assert_refused("10 % 0", "division by zero");
    assert_refused("1 / 0.0", "division by zero");
    assert_refused("0 ** -1", "division by zero");
    assert_refused("1e999", "not finite");
    assert_refused("1e308 * 10", "not finite");
    assert_refused("10.0 ** 400", "not finite");
    assert_refused("(-8) ** 0.5", "complex");
    assert_refused("'a' + (1 // 0)", "division by zero");
    /* not an expression we evaluate, without a reason */
    pyval v = pyexpr_eval("os.cpu_count()", NULL, NULL);
    assert_int_equal(v.k, PYV_ERR);
    assert_null(v.why);
}

/* nest: n copies of open, then mid, then n copies of close (malloc'ed). */
static char *nest(size_t n, const char *open, const char *mid, const char *close)
{
    size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
    char *s = malloc(n * (lo + lc) + lm + 1), *p = s;
    assert_non_null(s);
    for (size_t i = 0; i < n; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, mid, lm), p += lm;
    for (size_t i = 0; i < n; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return s;
}

static void test_depth(void **state)
{
    (void)state;
    char *s = nest(PYEXPR_MAX_DEPTH - 1, "(", "8", ")");
    assert_int_value(s, 8);
    free(s);
    const size_t deep[] = {PYEXPR_MAX_DEPTH + 1, 20000, 1000000};
    for (size_t i = 0; i < 3; i++) {
        s = nest(deep[i], "(", "8", ")");
        assert_refused(s, "nested");
        free(s);
        s = nest(deep[i], "-", "8", "");
        assert_refused(s, "nested");
        free(s);
        s = nest(deep[i], "2**", "2", "");
        assert_refused(s, "nested");
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals), cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_strings),  cmocka_unit_test(test_names),
        cmocka_unit_test(test_refused),  cmocka_unit_test(test_python_ints),
        cmocka_unit_test(test_refusals), cmocka_unit_test(test_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
