/* test_escape.c — escaping of trace strings for terminals, HTML and JSON (analyzer/escape.c):
 * control bytes, ESC sequences, invalid / overlong / surrogate UTF-8, entities, truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../analyzer/trace/escape.h"

/* term / html / utf8: the escape of a literal (with its length, NULs included). */
static char g_out[512];
#define TERM(lit) (escape_term(lit, sizeof(lit) - 1, g_out, sizeof g_out), g_out)
#define HTML(lit) (escape_html(lit, sizeof(lit) - 1, g_out, sizeof g_out), g_out)
#define UTF8(lit) (escape_utf8(lit, sizeof(lit) - 1, g_out, sizeof g_out), g_out)

static void test_term(void **state)
{
    (void)state;
    assert_string_equal(TERM("model.py"), "model.py");
    assert_string_equal(TERM("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
    assert_string_equal(TERM("a\nb\tc\rd\x7f"), "a\\x0ab\\x09c\\x0dd\\x7f");
    assert_string_equal(TERM("nul\0byte"), "nul\\x00byte");
    assert_string_equal(TERM("back\\slash"), "back\\\\slash");
    /* valid UTF-8 passes: é, €, 😀 */
    assert_string_equal(TERM("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    /* invalid: lone continuation, overlong '/', surrogate, > U+10FFFF, cut sequence, C1 */
    assert_string_equal(TERM("\x80"), "\\x80");
    assert_string_equal(TERM("\xc0\xaf"), "\\xc0\\xaf");
    assert_string_equal(TERM("\xed\xa0\x80"), "\\xed\\xa0\\x80");
    assert_string_equal(TERM("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
    assert_string_equal(TERM("ab\xe2\x82"), "ab\\xe2\\x82");
    assert_string_equal(TERM("\xe2\x82x"), "\\xe2\\x82x");
    /* C1 controls encoded in UTF-8 (U+009B is a CSI to some terminals), then the first after */
    assert_string_equal(TERM("a\xc2\x9b"
                             "31mb"),
                        "a\\xc2\\x9b31mb");
    assert_string_equal(TERM("\xc2\x80\xc2\xa0"), "\\xc2\\x80\xc2\xa0");
    /* HTML characters are left alone on a terminal */
    assert_string_equal(TERM("<a href='x'>&</a>"), "<a href='x'>&</a>");
}

static void test_html(void **state)
{
    (void)state;
    assert_string_equal(HTML("<script>alert(\"x\")</script>"),
                        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    assert_string_equal(HTML("a&b 'q'"), "a&amp;b &#39;q&#39;");
    assert_string_equal(HTML("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
    assert_string_equal(HTML("caf\xc3\xa9\xff"), "caf\xc3\xa9\\xff");
}

static void test_utf8(void **state)
{
    (void)state;
    /* control characters pass (JSON escapes them), invalid bytes do not, NUL never does */
    assert_string_equal(UTF8("a\nb\x1b"), "a\nb\x1b");
    assert_string_equal(UTF8("x\xfe\\y"), "x\\xfe\\y");
    assert_string_equal(UTF8("n\0"), "n\\x00");
    assert_string_equal(UTF8("\xc2\x9b"), "\xc2\x9b"); /* (JSON escapes what it must) */
}

static void test_sizes_and_dup(void **state)
{
    (void)state;
    char small[8];
    /* the needed length is returned; output is cut at a whole escape and NUL-terminated */
    size_t need = escape_term("abc\x01\x02", 5, small, sizeof small);
    assert_int_equal(need, 11);
    assert_string_equal(small, "abc\\x01");
    need = escape_term("abc\x01", 4, small, 5);
    assert_int_equal(need, 7);
    assert_string_equal(small, "abc");
    assert_int_equal(escape_html("<>", 2, NULL, 0), 8);
    char *d = escape_html_dup("x<\xff", 3);
    assert_string_equal(d, "x&lt;\\xff");
    free(d);
    d = escape_term_dup("", 0);
    assert_string_equal(d, "");
    free(d);
    d = escape_utf8_dup("\xc3", 1);
    assert_string_equal(d, "\\xc3");
    free(d);
    /* fputs: long strings go through the heap path */
    char *big = malloc(5000);
    memset(big, '\x1b', 5000);
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    assert_int_equal(escape_term_fputs(f, big, 5000), 0);
    assert_int_equal(escape_html_fputs(f, "&", 1), 0);
    fclose(f);
    assert_int_equal(blen, 20005);
    assert_memory_equal(buf, "\\x1b\\x1b", 8);
    assert_string_equal(buf + 20000, "&amp;");
    free(buf);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_term),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_sizes_and_dup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
