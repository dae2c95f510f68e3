/* test_pyexpr.c — the config expression evaluator (analyzer/pyexpr.c): Python's integer
 * semantics within 64 bits, refusals with a reason (overflow, division by zero, a float
 * that is not finite, nesting deeper than PYEXPR_MAX_DEPTH), no recursion without a bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../analyzer/pyexpr.h"

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
        cmocka_unit_test(test_python_ints),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
