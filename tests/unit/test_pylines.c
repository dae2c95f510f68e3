/* test_pylines.c — CPython line tables (analyzer/pylines.c): hand-made tables for each entry
 * form, and the real thing: for every CPython 3.10-3.13 under $(pyenv root)/versions, a
 * script compiles sample functions and prints co_linetable, co_firstlineno and the
 * expected (offset -> line) from co_lines() / co_positions(); every offset must agree. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../analyzer/trace/pylines.h"

static void test_310_forms(void **state)
{
    (void)state;
    /* [0,6) line 10; [6,8) no line; [8,12) line 10+5 = 15 (after -128 the line is kept);
     * [12,14) +0 (same line); then a 2-pair jump of +127 +3 over an empty range */
    static const uint8_t t[] = {6, 0, 2, 0x80, 4, 5, 2, 0, 0, 127, 4, 3};
    assert_int_equal(pylines_line(3, 10, t, sizeof t, 10, 0), 10);
    assert_int_equal(pylines_line(3, 10, t, sizeof t, 10, 4), 10);
    assert_int_equal(pylines_line(3, 10, t, sizeof t, 10, 6), -1);
    assert_int_equal(pylines_line(3, 10, t, sizeof t, 10, 8), 15);
    assert_int_equal(pylines_line(3, 10, t, sizeof t, 10, 12), 15);
    assert_int_equal(pylines_line(3, 10, t, sizeof t, 10, 14), 145);
    assert_int_equal(pylines_line(3, 10, t, sizeof t, 10, 18), -1); /* past the table */
    assert_int_equal(pylines_line(3, 10, t, 3, 10, 6), -1);         /* odd tail ignored */
    /* a line beyond int (a hostile first line or table): malformed, never a wrapped line */
    static const uint8_t up[] = {2, 0, 2, 5};
    assert_int_equal(pylines_line(3, 10, up, sizeof up, INT_MAX - 2, 0), INT_MAX - 2);
    assert_int_equal(pylines_line(3, 10, up, sizeof up, INT_MAX - 2, 2), -1);
}

static void test_311_forms(void **state)
{
    (void)state;
    static const uint8_t t[] = {
        0x80 | (0 << 3) | 0,  0x05,                /* short form, 1 unit: line 20 */
        0x80 | (11 << 3) | 1, 3,    9,             /* one-line +1, 2 units: 21 */
        0x80 | (12 << 3) | 0, 3,    9,             /* one-line +2: 23 */
        0x80 | (13 << 3) | 0, 0x07,                /* no columns, -3: 20 */
        0x80 | (15 << 3) | 0,                      /* no location */
        0x80 | (14 << 3) | 0, 0x50, 0x06, 2, 1, 5, /* long form +200 (svarint 400 = 0x50 0x06) */
        0x80 | (10 << 3) | 7, 1,    2,             /* one-line +0, 8 units: 220 */
    };
    unsigned v = 11;
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 0), 20);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 2), 21);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 4), 21);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 6), 23);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 8), 20);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 10), -1);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 12), 220);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 14), 220);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 28), 220);
    assert_int_equal(pylines_line(3, v, t, sizeof t, 20, 30), -1);
    /* a varint cut by the end of the table: no line, no overread */
    static const uint8_t cut[] = {0x80 | (14 << 3) | 0, 0x48};
    assert_int_equal(pylines_line(3, 12, cut, sizeof cut, 1, 0), -1);
    /* a line beyond int (a hostile first line or delta): malformed, never a wrapped line */
    static const uint8_t up[] = {0x80 | (12 << 3) | 0, 3, 9};
    assert_int_equal(pylines_line(3, 11, up, sizeof up, INT_MAX - 2, 0), INT_MAX);
    assert_int_equal(pylines_line(3, 11, up, sizeof up, INT_MAX - 1, 0), -1);
    /* two deltas of +(2^31 - 1) from 2^30: a wrapping sum would come back to 2^30 - 2 */
    static const uint8_t wrap[] = {0x80 | (13 << 3) | 0, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03,
                                   0x80 | (13 << 3) | 0, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03};
    assert_int_equal(pylines_line(3, 12, wrap, sizeof wrap, 1 << 30, 0), -1);
    assert_int_equal(pylines_line(3, 12, wrap, sizeof wrap, 1 << 30, 2), -1);
    /* a table not starting on an entry header */
    static const uint8_t bad[] = {0x05, 0x80};
    assert_int_equal(pylines_line(3, 13, bad, sizeof bad, 1, 0), -1);
    assert_int_equal(pylines_line(3, 9, t, sizeof t, 20, 0), -1); /* unsupported */
    assert_int_equal(pylines_line(3, 14, t, sizeof t, 20, 0), -1);
    assert_int_equal(pylines_supported(3, 13), 1);
    assert_int_equal(pylines_supported(2, 7), 0);
}

static const char emit_py[] = "import sys, types\n"
                              "src = '''\n"
                              "def simple(a, b):\n"
                              "    c = a + b\n"
                              "    return c * 2\n"
                              "\n"
                              "def loops(n):\n"
                              "    total = 0\n"
                              "    for i in range(n):\n"
                              "        if i % 2:\n"
                              "            total += i\n"
                              "        else:\n"
                              "            total -= (i\n"
                              "                      + 1)\n"
                              "    while total > 10:\n"
                              "        total //= 2\n"
                              "    return total\n"
                              "\n"
                              "def tryexc(x):\n"
                              "    try:\n"
                              "        y = 1 / x\n"
                              "    except ZeroDivisionError:\n"
                              "        y = None\n"
                              "    finally:\n"
                              "        x = 0\n"
                              "    return y\n"
                              "\n"
                              "class Model:\n"
                              "    def forward(self, x):\n"
                              "        h = [v * 2 for v in x]\n"
                              "        g = (lambda q: q + 1)(3)\n"
                              "        return sum(h) + g\n"
                              "\n"
                              "def gen(n):\n"
                              "    for i in range(n):\n"
                              "        yield i\n"
                              "''' + \"\\n\" * 300 + '''\n"
                              "def far(a):\n"
                              "    b = a\n"
                              "''' + \"\\n\" * 200 + '''\n"
                              "    return b\n"
                              "'''\n"
                              "co = compile(src, \"emit_src.py\", \"exec\")\n"
                              "print(\"VERSION\", sys.version_info[0], sys.version_info[1])\n"
                              "def walk(c):\n"
                              "    yield c\n"
                              "    for k in c.co_consts:\n"
                              "        if isinstance(k, types.CodeType):\n"
                              "            yield from walk(k)\n"
                              "for c in walk(co):\n"
                              "    print(\"CODE\", c.co_qualname if hasattr(c, \"co_qualname\") "
                              "else c.co_name, c.co_firstlineno, c.co_linetable.hex() or \"-\")\n"
                              "    for s, e, l in c.co_lines():\n"
                              "        print(\"L\", s, e, -1 if l is None else l)\n"
                              "    if hasattr(c, \"co_positions\"):\n"
                              "        for i, p in enumerate(c.co_positions()):\n"
                              "            print(\"P\", 2 * i, -1 if p[0] is None else p[0])\n"
                              "\n";

static int unhex(const char *h, uint8_t *out, size_t cap)
{
    size_t n = 0;
    if (!strcmp(h, "-"))
        return 0;
    for (; h[0] && h[1] && n < cap; h += 2) {
        unsigned v;
        if (sscanf(h, "%2x", &v) != 1)
            return -1;
        out[n++] = (uint8_t)v;
    }
    return (int)n;
}

/* check_interpreter: runs the script with python; returns the offsets checked (asserting
 * each), or 0 if the interpreter could not run it. */
static long check_interpreter(const char *python, const char *script)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' '%s'", python, script);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char line[1 << 16];
    static uint8_t table[1 << 15];
    unsigned major = 0, minor = 0;
    int first = 0, tlen = -1;
    long checked = 0, codes = 0;
    char name[256];
    while (fgets(line, sizeof line, p)) {
        char hex[sizeof line];
        long s, e, l;
        if (sscanf(line, "VERSION %u %u", &major, &minor) == 2)
            continue;
        if (sscanf(line, "CODE %255s %d %s", name, &first, hex) == 3) {
            tlen = unhex(hex, table, sizeof table);
            assert_true(tlen >= 0);
            codes++;
        } else if (sscanf(line, "L %ld %ld %ld", &s, &e, &l) == 3) {
            for (long off = s; off < e; off += 2) {
                int got = pylines_line(major, minor, table, (size_t)tlen, first, (uint32_t)off);
                if (got != l)
                    fail_msg("%s %u.%u %s offset %ld: line %d, co_lines says %ld", python, major,
                             minor, name, off, got, l);
                checked++;
            }
        } else if (sscanf(line, "P %ld %ld", &s, &l) == 2) {
            int got = pylines_line(major, minor, table, (size_t)tlen, first, (uint32_t)s);
            if (got != l)
                fail_msg("%s %u.%u %s offset %ld: line %d, co_positions says %ld", python, major,
                         minor, name, s, got, l);
            checked++;
        }
    }
    int rc = pclose(p);
    if (rc != 0)
        return 0;
    assert_true(codes >= 7);
    return checked;
}

/* a table decoded once (pylines_decode, as the tables keep one a code object) answers as
 * pylines_line does at every offset, a longer table than its first sizing included; unsupported
 * versions and no table decode to nothing */
static void test_decoded(void **state)
{
    (void)state;
    static uint8_t t310[10000], t311[10000];
    for (size_t i = 0; i < sizeof t310; i += 2)
        t310[i] = 2, t310[i + 1] = i % 7 == 0 ? 0x80 : (uint8_t)(i % 5);
    for (size_t i = 0; i < sizeof t311; i++)
        t311[i] = (uint8_t)(0x80 | ((i % 3 ? 15 : 0) << 3) | (i % 4)), i += i % 3 ? 0 : 1;
    for (unsigned minor = 10; minor <= 11; minor++) {
        const uint8_t *t = minor == 10 ? t310 : t311;
        pylines_table *p = pylines_decode(3, minor, t, sizeof t310, 7);
        assert_non_null(p);
        for (uint32_t off = 0; off < 3 * sizeof t310; off += 3)
            assert_int_equal(pylines_table_line(p, off),
                             pylines_line(3, minor, t, sizeof t310, 7, off));
        pylines_table_free(p);
    }
    assert_null(pylines_decode(3, 9, t310, sizeof t310, 7));
    assert_null(pylines_decode(3, 11, NULL, 0, 7));
    pylines_table_free(NULL);
}

static void test_real_interpreters(void **state)
{
    (void)state;
    char script[] = "/tmp/test_pylines.XXXXXX";
    int fd = mkstemp(script);
    assert_true(fd >= 0);
    assert_true(write(fd, emit_py, sizeof emit_py - 1) == (ssize_t)(sizeof emit_py - 1));
    close(fd);
    FILE *ls = popen("r=$(pyenv root 2>/dev/null || echo \"${PYENV_ROOT:-$HOME/.pyenv}\"); "
                     "for p in \"$r\"/versions/3.1[0-3].*/bin/python3; do "
                     "[ -x \"$p\" ] && echo \"$p\"; done",
                     "r");
    assert_non_null(ls);
    char py[512];
    int versions = 0;
    while (fgets(py, sizeof py, ls)) {
        py[strcspn(py, "\n")] = 0;
        long n = check_interpreter(py, script);
        if (n > 0) {
            printf("pylines: %s: %ld offsets agree\n", py, n);
            versions++;
        } else {
            printf("pylines: %s: could not run, skipped\n", py);
        }
    }
    pclose(ls);
    unlink(script);
    if (versions == 0)
        fail_msg(
            "no CPython 3.10-3.13 found under $(pyenv root)/versions: at least one is required");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_310_forms),
        cmocka_unit_test(test_311_forms),
        cmocka_unit_test(test_decoded),
        cmocka_unit_test(test_real_interpreters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
