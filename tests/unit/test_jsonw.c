/* test_jsonw.c — JSON string literals of trace text (analyzer/views/jsonw.c): quotes,
 * backslashes and control characters escaped, '<' '>' '&' as \u escapes (inert inside an HTML
 * <script>), invalid UTF-8 repaired, valid UTF-8 kept; jsonw_print writes what
 * cJSON_PrintUnformatted writes. */
#include <setjmp.h>
#include <math.h>
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

/* same_as_cjson: jsonw_print's text is cJSON_PrintUnformatted's */
static void same_as_cjson(const cJSON *doc)
{
    char *want = cJSON_PrintUnformatted(doc), *got = jsonw_print(doc);
    assert_non_null(want);
    assert_non_null(got);
    size_t at = 0; /* (the first difference, with its surroundings: long texts) */
    while (want[at] && want[at] == got[at])
        at++;
    if (want[at] != got[at])
        print_error("at %zu: \"%.60s\" != \"%.60s\"\n", at, got + (at > 30 ? at - 30 : 0),
                    want + (at > 30 ? at - 30 : 0));
    assert_string_equal(got, want);
    free(want), free(got);
}

static void test_print_numbers(void **st)
{
    (void)st;
    static const double fixed[] = {0.0,
                                   -0.0,
                                   1,
                                   -1,
                                   2147483647.0,
                                   2147483648.0,
                                   -2147483648.0,
                                   -2147483649.0,
                                   1e15 - 1,
                                   1e15,
                                   -1e15 + 1,
                                   1e15 + 1,
                                   9007199254740993.0,
                                   1e17,
                                   1e21,
                                   1e300,
                                   0.1,
                                   1.0 / 3,
                                   -2.5,
                                   1e-7,
                                   5e-324,
                                   2.2250738585072014e-308,
                                   123456789.123456789,
                                   0.30000000000000004,
                                   1e100 / 3};
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(fixed[i]));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(NAN));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(INFINITY));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(-INFINITY));
    uint64_t x = 88172645463325252ull; /* xorshift: bit patterns, whole numbers, ratios */
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        cJSON_AddItemToArray(a, cJSON_CreateNumber(d));
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)(x >> (x % 64))));
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)(x % 100000) / (double)(1 + x % 977)));
    }
    same_as_cjson(a);
    cJSON_Delete(a);
}

static void test_print_structure(void **st)
{
    (void)st;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "s", "a\"b\\c\b\f\n\r\t\x01\x1f\x7f caf\xc3\xa9 <&>");
    cJSON_AddStringToObject(o, "k\"ey\n", "");
    cJSON_AddNullToObject(o, "n");
    cJSON_AddTrueToObject(o, "t");
    cJSON_AddFalseToObject(o, "f");
    cJSON_AddObjectToObject(o, "empty");
    cJSON_AddArrayToObject(o, "none");
    cJSON_AddRawToObject(o, "raw", "[1, 2]");
    cJSON *arr = cJSON_AddArrayToObject(o, "arr");
    cJSON_AddItemToArray(arr, cJSON_CreateString("x"));
    cJSON_AddItemToArray(arr, cJSON_CreateObject());
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(42));
    same_as_cjson(o);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markup_and_controls),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_print_numbers),
        cmocka_unit_test(test_print_structure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
