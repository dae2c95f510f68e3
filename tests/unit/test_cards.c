/* test_cards.c — card presets, size parsing and byte formatting (analyzer/cards.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cards.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

static void test_presets(void **state)
{
    (void)state;
    card_spec c;
    char err[256];
    assert_int_equal(card_parse("rtx4070", &c, err, sizeof err), 0);
    assert_string_equal(c.name, "rtx4070");
    assert_true(c.bytes == 12282 * MiB);
    assert_int_equal(card_parse("RTX_4070", &c, err, sizeof err), 0);
    assert_true(c.bytes == 12282 * MiB);
    assert_int_equal(card_parse("rtx4090", &c, err, sizeof err), 0);
    assert_true(c.bytes == 24 * GiB);
    assert_int_equal(card_parse("a100-40gb", &c, err, sizeof err), 0);
    assert_true(c.bytes == 40 * GiB);
    assert_int_equal(card_parse("a100-80gb", &c, err, sizeof err), 0);
    assert_true(c.bytes == 80 * GiB);
    assert_int_equal(card_parse("h100-80gb", &c, err, sizeof err), 0);
    assert_true(c.bytes > 79 * GiB && c.bytes <= 80 * GiB);
    assert_int_equal(card_parse("rtx3060-12gb", &c, err, sizeof err), 0);
    assert_true(c.bytes == 12 * GiB);
}

static void test_sizes(void **state)
{
    (void)state;
    card_spec c;
    char err[256];
    assert_int_equal(card_parse("12GiB", &c, err, sizeof err), 0);
    assert_true(c.bytes == 12 * GiB);
    assert_string_equal(c.name, "12GiB");
    assert_int_equal(card_parse("12288MiB", &c, err, sizeof err), 0);
    assert_true(c.bytes == 12 * GiB);
    assert_int_equal(card_parse("11.5G", &c, err, sizeof err), 0);
    assert_true(c.bytes == 23 * GiB / 2);
    uint64_t b = 0;
    assert_int_equal(card_parse_size("4096", &b), CARD_SIZE_NO_UNIT);
    assert_int_equal(card_parse_size(" 13 ", &b), CARD_SIZE_NO_UNIT);
    assert_int_equal(card_parse_size("4096B", &b), 0);
    assert_true(b == 4096);
    assert_int_equal(card_parse_size("12gib", &b), 0);
    assert_true(b == 12 * GiB);
    assert_int_equal(card_parse_size("1.5KiB", &b), 0);
    assert_true(b == 1536);
    assert_int_equal(card_parse_size("12288MiB", &b), 0);
    assert_true(b == 12 * GiB);
    assert_int_equal(card_parse_size("2TiB", &b), 0);
    assert_true(b == 2048 * GiB);
    assert_int_equal(card_parse_size("5KB", &b), 0);
    assert_true(b == 5000);
    assert_int_equal(card_parse_size("80MB", &b), 0);
    assert_true(b == 80000000);
    assert_int_equal(card_parse_size("2K", &b), 0);
    assert_true(b == 2048);
    assert_int_equal(card_parse_size("1 TiB", &b), 0);
    assert_true(b == 1024 * GiB);
    assert_int_equal(card_parse_size("12GB", &b), 0);
    assert_true(b == 12000000000ull);
    assert_int_equal(card_parse_size("12XB", &b), -1);
    assert_int_equal(card_parse_size("-3G", &b), -1);
    assert_int_equal(card_parse_size("G", &b), -1);
    assert_int_equal(card_parse_size("12G junk", &b), -1);
    /* a decimal number only: hex and exponents are no size (0x10GiB was 16 GiB, 1e3GiB 1000) */
    assert_int_equal(card_parse_size("0x10GiB", &b), -1);
    assert_int_equal(card_parse_size("1e3GiB", &b), -1);
    assert_int_equal(card_parse_size("1.2.3GiB", &b), -1);
    assert_int_equal(card_parse_size(".5GiB", &b), 0);
    assert_true(b == GiB / 2);
    /* past 2^62 bytes: too large, said so (it was an unknown card); a part of a byte: refused
     * (0.5B was 1 byte) */
    assert_int_equal(card_parse_size("99999999999999999999GiB", &b), CARD_SIZE_TOO_LARGE);
    assert_int_equal(card_parse_size("4EiB", &b), -1);
    assert_int_equal(card_parse_size("4194304TiB", &b), 0);
    assert_int_equal(card_parse_size("4194305TiB", &b), CARD_SIZE_TOO_LARGE);
    assert_int_equal(card_parse_size("0.5B", &b), CARD_SIZE_FRACTION);
    assert_int_equal(card_parse_size("0.0001KiB", &b), CARD_SIZE_FRACTION);
    /* said in words a user can give back: the limit in a unit taken, a size below 0 as such
     * (it was "unknown card '-1GiB'", the limit "at most 4 EiB", a unit refused) */
    assert_int_equal(card_parse("4194305TiB", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "at most 2^62 bytes, 4194304TiB"));
    assert_int_equal(card_parse("-1GiB", &c, err, sizeof err), -1);
    assert_string_equal(err, "card size '-1GiB' is negative (give a positive size such as 12GiB)");
    assert_int_equal(card_parse("-rtx4070", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown card"));
}

static void test_errors(void **state)
{
    (void)state;
    card_spec c;
    char err[512] = "";
    assert_int_equal(card_parse("gtx9999", &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "gtx9999"));
    assert_non_null(strstr(err, "rtx4070"));
    err[0] = '\0';
    assert_int_equal(card_parse("0G", &c, err, sizeof err), -1);
    assert_true(strlen(err) > 0);
    assert_int_equal(card_parse("", &c, err, sizeof err), -1);
    err[0] = '\0';
    assert_int_equal(card_parse("13", &c, err, sizeof err), -1);
    assert_string_equal(err, "13: a size needs a unit (e.g. 12GiB, 12288MiB) or a card name");
}

static void test_format(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(card_format_bytes(12, buf, sizeof buf), "12 B");
    assert_string_equal(card_format_bytes(4096, buf, sizeof buf), "4.0 KiB");
    assert_string_equal(card_format_bytes(512 * MiB, buf, sizeof buf), "512.0 MiB");
    assert_string_equal(card_format_bytes(12282 * MiB, buf, sizeof buf), "11.99 GiB");
    assert_non_null(strstr(card_presets_help(), "rtx4070"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
