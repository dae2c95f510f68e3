/* test_pyexpr.c — the evaluator of nanoGPT config expressions (analyzer/model/pyexpr.c):
 * literals, Python's int / float arithmetic (// and % floor toward -inf, / is float, **),
 * precedence and parentheses, strings, names through a lookup, and what it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../analyzer/model/pyexpr.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals), cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_strings),  cmocka_unit_test(test_names),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
