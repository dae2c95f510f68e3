/* test_predict_anchors.c — predict_anchors (analyzer/cmd/predict_print.c): what the calibration
 * moved beyond a prediction's rows, as signed byte counts, held within int64 whatever the sizes
 * (a hostile trace's sizes near 2^64 once overflowed it: the fuzz round's finding) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "predict_print.h"

/* rows: the tensors' rows, the cache, and what lies outside PyTorch, then the totals */
static void test_plain(void **state)
{
    (void)state;
    prediction p;
    memset(&p, 0, sizeof p);
    p.by_cat.bytes[CAT_PARAMETERS] = 100;
    p.by_cat.bytes[CAT_ACTIVATIONS] = 50;
    p.by_cat.bytes[CAT_CACHE] = 30;
    p.by_cat.bytes[CAT_CONTEXT] = 20;
    p.tensor_bytes = 170; /* 20 beyond the rows */
    p.peak_bytes = 215;   /* 5 short of the tensors, the cache and the context */
    int64_t t, r;
    predict_anchors(&p, &t, &r);
    assert_int_equal(t, 20);
    assert_int_equal(r, -5);
    p.tensor_bytes = 140; /* the rows scaled down: negative */
    p.peak_bytes = 200;
    predict_anchors(&p, &t, &r);
    assert_int_equal(t, -10);
    assert_int_equal(r, 10);
}

/* sizes past int64 (and sums past uint64) are held at +-INT64_MAX, never wrapped */
static void test_huge(void **state)
{
    (void)state;
    prediction p;
    memset(&p, 0, sizeof p);
    p.by_cat.bytes[CAT_PARAMETERS] = 1000;
    p.tensor_bytes = UINT64_MAX - 5;
    p.peak_bytes = 10;
    int64_t t, r;
    predict_anchors(&p, &t, &r);
    assert_int_equal(t, INT64_MAX);
    assert_int_equal(r, -INT64_MAX);
    p.tensor_bytes = 10;
    p.by_cat.bytes[CAT_PARAMETERS] = UINT64_MAX;
    p.by_cat.bytes[CAT_ACTIVATIONS] = UINT64_MAX; /* the rows' sum past uint64 */
    p.by_cat.bytes[CAT_CACHE] = UINT64_MAX;
    p.by_cat.bytes[CAT_EXTERNAL] = UINT64_MAX;
    p.peak_bytes = UINT64_MAX;
    predict_anchors(&p, &t, &r);
    assert_int_equal(t, -INT64_MAX);
    assert_int_equal(r, 0); /* the peak and the (held) sum of the rest both at UINT64_MAX */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
