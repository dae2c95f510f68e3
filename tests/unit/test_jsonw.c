/* test_jsonw.c — JSON string literals of trace text (analyzer/views/jsonw.c): quotes,
 * backslashes and control characters escaped, '<' '>' '&' as \u escapes (inert inside an HTML
 * <script>), invalid UTF-8 repaired, valid UTF-8 kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../analyzer/views/jsonw.h"

static char *lit(const char *s, size_t len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    assert_int_equal(jsonw_str(f, s, len), 0);
    fclose(f);
    return buf;
}

static void test_markup_and_controls(void **st)
{
    (void)st;
    char *o = lit("</script><b a=\"x\">&\\\n\t", 22);
    assert_string_equal(
        o, "\"\\u003c/script\\u003e\\u003cb a=\\\"x\\\"\\u003e\\u0026\\\\\\u000a\\u0009\"");
    assert_null(strchr(o + 1, '<'));
    free(o);
}

static void test_utf8(void **st)
{
    (void)st;
    char *o = lit("caf\xc3\xa9", 5); /* valid: kept */
    assert_string_equal(o, "\"caf\xc3\xa9\"");
    free(o);
    o = lit("a\xff"
            "b",
            3); /* invalid byte: made text, never passed through */
    assert_null(strchr(o, '\xff'));
    assert_true(o[0] == '"' && o[strlen(o) - 1] == '"');
    free(o);
    o = lit("a\0b", 3); /* an embedded NUL does not cut the string */
    assert_string_equal(o, "\"a\\\\x00b\"");
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markup_and_controls),
        cmocka_unit_test(test_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
