/* test_catpeaks.c — category_peaks (analyzer/model/facts/catpeaks.c): each category's largest live
 * bytes over a run, when it came, the allocator cache as segments less their tensors, and the
 * vocabulary the logits rule uses (classify_vocab). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "catpeaks.h"
#include "classify.h"

/* One ALLOC or FREE record of the second pass: its number is its index + 1. */
typedef struct ev {
    int is_alloc;
    uint64_t addr, size, t;
} ev;

static int sweep(catpeaks *cp, const ev *evs, size_t n, int allocator_mode, uint64_t *peak,
                 uint64_t *ns)
{
    catpeaks_sweep_begin(cp, n, allocator_mode);
    for (size_t i = 0; i < n; i++) {
        reader_event e = {0};
        e.api = VT_API_cudaMallocAsync; /* a DEVICE allocation */
        e.addr = evs[i].addr;
        e.size = evs[i].is_alloc ? evs[i].size : 0;
        e.time_ns = evs[i].t;
        catpeaks_sweep_event(cp, i + 1, evs[i].is_alloc, &e);
    }
    return catpeaks_sweep_end(cp, peak, ns);
}

static void test_peaks_over_the_run(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    /* an activation spike that comes and goes, twice; two optimizer-state tensors that stay;
     * an allocation the first pass did not note (never counted, its free neither) */
    const ev evs[] = {
        {1, 0x1000, 5000, 10},  {1, 0x2000, 3000, 20},   {0, 0x2000, 0, 40},
        {0, 0x1000, 0, 50},     {1, 0x3000, 800, 100},   {1, 0x4000, 800, 110},
        {1, 0x5000, 6000, 200}, {1, 0x6000, 99999, 250}, {0, 0x5000, 0, 300},
        {0, 0x6000, 0, 310},
    };
    catpeaks_note(&cp, 1, CAT_ACTIVATIONS, CATPEAKS_PLAIN, 1);
    catpeaks_note(&cp, 2, CAT_ACTIVATIONS, CATPEAKS_PLAIN, 1);
    catpeaks_note(&cp, 5, CAT_OPTIMIZER, CATPEAKS_PLAIN, 1);
    catpeaks_note(&cp, 6, CAT_OPTIMIZER, CATPEAKS_PLAIN, 1);
    catpeaks_note(&cp, 7, CAT_ACTIVATIONS, CATPEAKS_PLAIN, 1);
    assert_int_equal(sweep(&cp, evs, sizeof evs / sizeof evs[0], 0, peak, ns), 1);
    assert_null(cp.lost);
    assert_int_equal(peak[CAT_OPTIMIZER], 1600);
    assert_int_equal(ns[CAT_OPTIMIZER], 110);
    assert_int_equal(peak[CAT_ACTIVATIONS], 8000); /* 5000 + 3000 at event 2, not 6000 later */
    assert_int_equal(ns[CAT_ACTIVATIONS], 20);
    assert_int_equal(peak[CAT_GRADIENTS], 0);
    for (int c = 0; c < CAT_COUNT; c++) /* the unnoted 99999 bytes are in no category */
        assert_true(peak[c] <= 8000);
    catpeaks_free(&cp);
}

static void test_cache_is_segments_less_tensors(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    const ev evs[] = {
        {1, 0x10000, 1000, 1},
        {1, 0x10000 + 1, 600, 2},
        {0, 0x10000 + 1, 0, 3},
        {1, 0x10000 + 2, 100, 4},
    };
    catpeaks_note(&cp, 1, CAT_CACHE, CATPEAKS_SEGMENT, 1);
    catpeaks_note(&cp, 2, CAT_ACTIVATIONS, CATPEAKS_INNER, 1);
    catpeaks_note(&cp, 4, CAT_PARAMETERS, CATPEAKS_INNER, 1);
    assert_int_equal(sweep(&cp, evs, 4, 1, peak, ns), 1);
    assert_int_equal(peak[CAT_CACHE], 1000); /* before any tensor: all of it is cache */
    assert_int_equal(peak[CAT_ACTIVATIONS], 600);
    assert_int_equal(peak[CAT_PARAMETERS], 100);
    catpeaks_free(&cp);
    /* nothing noted: no peaks claimed, and none said lost */
    assert_int_equal(sweep(&cp, evs, 4, 1, peak, ns), 0);
    assert_null(cp.lost);
    assert_int_equal(peak[CAT_CACHE], 0);
}

static void test_lost_is_said(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    const ev evs[] = {{1, 0x1000, 64, 1}};
    catpeaks_note(&cp, 1, CAT_ACTIVATIONS, CATPEAKS_PLAIN, 1);
    catpeaks_note(&cp, CATPEAKS_MAX_EVENTS, CAT_ACTIVATIONS, CATPEAKS_PLAIN, 1); /* past the cap */
    assert_non_null(cp.lost);
    assert_int_equal(sweep(&cp, evs, 1, 0, peak, ns), 0);
    assert_int_equal(peak[CAT_ACTIVATIONS], 0);
    catpeaks_free(&cp);
    /* a run that has shown no tensor: notes stop (their memory freed) past the first 16M events */
    catpeaks_note(&cp, 5, CAT_CACHE, CATPEAKS_PLAIN, 0);
    assert_null(cp.lost);
    catpeaks_note(&cp, CATPEAKS_MAX_BEFORE_TENSORS, CAT_CACHE, CATPEAKS_PLAIN, 0);
    assert_non_null(cp.lost);
    assert_null(cp.code);
    catpeaks_free(&cp);
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
    /* negative: the largest weight comes late, in a block (a ViT's MLP, 3072 x 768): no
     * vocabulary, so its activations are not taken for logits */
    uint64_t vit[] = {768 * 3 * 16 * 16 * 4, 768 * 4, 197 * 768 * 4,    768 * 4, 768 * 4,
                      3072ull * 768 * 4,     768 * 4, 3072ull * 768 * 4};
    assert_int_equal(classify_vocab(vit, 8), 0);
    /* negative: too few tensors to say */
    uint64_t few[] = {4096, 4096};
    assert_int_equal(classify_vocab(few, 2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peaks_over_the_run),
        cmocka_unit_test(test_cache_is_segments_less_tensors),
        cmocka_unit_test(test_lost_is_said),
        cmocka_unit_test(test_vocab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
