/* test_diff_view.c — `vramtrace diff`'s view at its edges (views/diff_view.c): two runs with no
 * site at all (the fuzz input tests/data/fuzz_diff_no_sites.vt: qsort was handed a NULL list,
 * UBSan under `make check`), and a site at the replay's bound of 4 EiB live (two 2^61-byte
 * allocations; a third is not counted): sums and changes exact, signs right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "diff_view.h"
#include "replay.h"
#include "trace_enc.h"

/* write_diff: `diff` of traces a and b (json or text) into a string (free it); 0 in *rc ok */
static char *write_diff(const char *a, const char *b, int json, int *rc)
{
    replay_result r[2];
    char err[512], *text = NULL;
    size_t len = 0;
    assert_int_equal(replay_file(a, &r[0], err, sizeof err), 0);
    assert_int_equal(replay_file(b, &r[1], err, sizeof err), 0);
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    *rc = diff_view_write(m, &r[0], &r[1], (const int[2]){0, 0}, 10, json);
    fclose(m);
    replay_free(&r[0]);
    replay_free(&r[1]);
    return text;
}

static void test_no_sites(void **state)
{
    (void)state;
    char path[4096];
    const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
    snprintf(path, sizeof path, "%s/tests/data/fuzz_diff_no_sites.vt", root);
    for (int json = 0; json < 2; json++) {
        int rc;
        char *t = write_diff(path, path, json, &rc);
        assert_int_equal(rc, 0);
        assert_non_null(strstr(t, json ? "\"sites\":[]" : "sites that changed most"));
        free(t);
    }
}

static void test_huge_sites(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, 1, 2);
    w_alloc(&w, VT_API_cudaMalloc, 0, 10, 0, 0x100000000000ull, 1ull << 61, 0);
    w_alloc(&w, VT_API_cudaMalloc, 0, 20, 0, 0x200000000000ull, 1ull << 61, 0);
    w_alloc(&w, VT_API_cudaMalloc, 0, 30, 0, 0x300000000000ull, 1ull << 61, 0);
    w_trailer(&w, 3);
    char big[4096];
    snprintf(big, sizeof big, "%s", save(&w));
    wbuf e = {0};
    w_header(&e, 1, 2);
    w_trailer(&e, 0);
    char empty[4096];
    snprintf(empty, sizeof empty, "%s", save(&e));
    int rc;
    char *t = write_diff(big, empty, 1, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(t, "{\"site\":\"(no stack)\",\"a\":4611686018427387904,\"b\":0,"
                              "\"change\":-4611686018427387904}"));
    free(t);
    t = write_diff(empty, big, 0, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(t, "+4398046511104.0  (no stack)")); /* 2^62 B in MiB */
    free(t);
    unlink(big);
    unlink(empty);
    free(w.p);
    free(e.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_sites),
        cmocka_unit_test(test_huge_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
