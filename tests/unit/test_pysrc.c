/* test_pysrc.c — a recorded script's source cleaned and cut into logical lines
 * (analyzer/model/facts/pysrc.c), through its memo of the sources cleaned last: a source is known
 * by its bytes alone (one of the same bytes elsewhere, the same answer; a shorter one that begins
 * the same, or the same buffer written over, an answer of its own), and every call hands back a
 * copy of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pysrc.h"

static void check_clean(const char *src, const char *want)
{
    char *c = pysrc_clean(src, strlen(src));
    assert_non_null(c);
    assert_string_equal(c, want);
    free(c);
}

static void test_clean_by_bytes(void **state)
{
    (void)state;
    check_clean("x = 'abc'  # c\n", "x = '   '     \n");
    check_clean("x = 'abc'  # c\n", "x = '   '     \n"); /* (from the memo) */
    check_clean("x = 'ab", "x = '  ");                   /* a shorter one, the same start */
    char buf[32];
    snprintf(buf, sizeof buf, "%s", "y = \"q\" # z\n");
    check_clean(buf, "y = \" \"    \n");
    buf[4] = 'w'; /* the same buffer written over: its new bytes' answer */
    check_clean(buf, "y = wq\"    \n");
    for (int k = 0; k < 6; k++) { /* more sources than the memo keeps, and back */
        char s[32];
        snprintf(s, sizeof s, "v%d = '%d'\n", k, k);
        char want[32];
        snprintf(want, sizeof want, "v%d = ' '\n", k);
        check_clean(s, want);
    }
    check_clean("x = 'abc'  # c\n", "x = '   '     \n");
}

static void test_lines_of_their_own(void **state)
{
    (void)state;
    const char *a = "a = f(1,\n      2)\nb = 3\n";
    char *c = pysrc_clean(a, strlen(a));
    assert_non_null(c);
    lline *L = NULL;
    assert_int_equal(pysrc_lines(c, strlen(c), &L), 2);
    assert_int_equal(L[0].first, 1);
    assert_int_equal(L[0].last, 2);
    assert_int_equal(L[1].first, 3);
    free(L);
    L = NULL;
    assert_int_equal(pysrc_lines(c, strlen(c), &L), 2); /* (the memo's, a copy) */
    assert_int_equal(L[1].first, 3);
    L[1].first = 99; /* (the caller's own copy) */
    free(L);
    L = NULL;
    assert_int_equal(pysrc_lines(c, strlen(c), &L), 2);
    assert_int_equal(L[1].first, 3);
    free(L);
    /* the cleaned copy written over (same length): its own lines, not the memo's */
    const char *b = "a = 1\n\n\nb = 2\nc = 3\nd=4\n";
    assert_int_equal(strlen(b), strlen(a));
    memcpy(c, b, strlen(b) + 1);
    L = NULL;
    assert_int_equal(pysrc_lines(c, strlen(c), &L), 4);
    assert_int_equal(L[0].first, 1);
    assert_int_equal(L[1].first, 4);
    free(L);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_by_bytes),
        cmocka_unit_test(test_lines_of_their_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
