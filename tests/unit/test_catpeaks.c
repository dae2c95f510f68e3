/* test_catpeaks.c — category_peaks (analyzer/model/catpeaks.c): each category's largest live
 * bytes over a run, when it came, the allocator cache as segments less their tensors, and the
 * vocabulary the logits rule uses (classify_vocab). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../analyzer/model/catpeaks.h"
#include "../../analyzer/model/classify.h"

static void test_peaks_over_the_run(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    /* two optimizer-state tensors that stay; an activation spike that comes and goes, twice */
    catpeaks_add(&cp, 10, 100, 0, 0, 0, 800, CAT_OPTIMIZER, CATPEAKS_PLAIN);
    catpeaks_add(&cp, 11, 110, 0, 0, 0, 800, CAT_OPTIMIZER, CATPEAKS_PLAIN);
    catpeaks_add(&cp, 1, 10, 1, 5, 50, 5000, CAT_ACTIVATIONS, CATPEAKS_PLAIN);
    catpeaks_add(&cp, 2, 20, 1, 4, 40, 3000, CAT_ACTIVATIONS, CATPEAKS_PLAIN);
    catpeaks_add(&cp, 20, 200, 1, 30, 300, 6000, CAT_ACTIVATIONS, CATPEAKS_PLAIN);
    assert_int_equal(catpeaks_sweep(&cp, 0, peak, ns), 1);
    assert_int_equal(peak[CAT_OPTIMIZER], 1600);
    assert_int_equal(ns[CAT_OPTIMIZER], 110);
    assert_int_equal(peak[CAT_ACTIVATIONS], 8000); /* 5000 + 3000 at event 2, not 6000 later */
    assert_int_equal(ns[CAT_ACTIVATIONS], 20);
    assert_int_equal(peak[CAT_GRADIENTS], 0);
    catpeaks_free(&cp);
}

static void test_cache_is_segments_less_tensors(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    catpeaks_add(&cp, 1, 1, 0, 0, 0, 1000, CAT_CACHE, CATPEAKS_SEGMENT);
    catpeaks_add(&cp, 2, 2, 1, 3, 3, 600, CAT_ACTIVATIONS, CATPEAKS_INNER);
    catpeaks_add(&cp, 4, 4, 0, 0, 0, 100, CAT_PARAMETERS, CATPEAKS_INNER);
    assert_int_equal(catpeaks_sweep(&cp, 1, peak, ns), 1);
    assert_int_equal(peak[CAT_CACHE], 1000); /* before any tensor: all of it is cache */
    assert_int_equal(peak[CAT_ACTIVATIONS], 600);
    assert_int_equal(peak[CAT_PARAMETERS], 100);
    catpeaks_free(&cp);
    /* nothing recorded: no peaks claimed */
    assert_int_equal(catpeaks_sweep(&cp, 1, peak, ns), 0);
}

static void test_vocab(void **st)
{
    (void)st;
    /* GPT-2: wte 50257 x 768 fp32, norms 768 fp32 (twice or more), a d x 3d weight */
    uint64_t gpt2[] = {50257ull * 768 * 4, 768 * 4, 768 * 3 * 768 * 4, 768 * 4, 768 * 4, 2304 * 4};
    assert_int_equal(classify_vocab(gpt2, 6), 50257);
    /* negative: no size occurs twice (no norm weight to divide by) */
    uint64_t odd[] = {50257ull * 768 * 4, 768 * 4, 999 * 4, 12345 * 4};
    assert_int_equal(classify_vocab(odd, 4), 0);
    /* negative: too few tensors to say */
    uint64_t few[] = {4096, 4096};
    assert_int_equal(classify_vocab(few, 2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peaks_over_the_run),
        cmocka_unit_test(test_cache_is_segments_less_tensors),
        cmocka_unit_test(test_vocab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
