/* test_catpeaks.c — category_peaks (analyzer/model/facts/catpeaks.c): each category's largest live
 * bytes over a run and when it came, swept from a window whose records wait for their category;
 * the allocator cache as segments less their tensors; the sweep's one look at a record
 * (catpeaks_take, in both modes); a window past its cap said lost; a window grown with its records
 * wrapped round its ring; and the vocabulary the logits rule uses (classify_vocab). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "catpeaks.h"
#include "classify.h"

/* One ALLOC or FREE record: its number is its index + 1; code 0 = settled later. */
typedef struct ev {
    int is_alloc;
    uint32_t ref;
    uint64_t size, t;
    uint8_t code;
} ev;

#define P(cat) CATPEAKS_CODE(CATPEAKS_PLAIN, CAT_##cat)

/* add: the records in order (each allocation's free carries its code); then settle every
 * record whose code was left 0 with late[] (by allocation ref), sweeping as it goes. */
static int run(catpeaks *cp, const ev *evs, size_t n, int alloc_mode, const uint8_t *late,
               uint64_t *peak, uint64_t *ns)
{
    catpeaks_init(cp, NULL);
    catpeaks_set_alloc_mode(cp, alloc_mode);
    uint64_t rec[64] = {0};
    for (size_t i = 0; i < n; i++) {
        uint64_t r = catpeaks_add(cp, i + 1, evs[i].t, evs[i].size,
                                  evs[i].is_alloc ? CATPEAKS_F_ALLOC : 0, evs[i].ref, evs[i].code);
        if (evs[i].is_alloc)
            rec[evs[i].ref] = r;
        else if (!evs[i].code && late) /* settled at its free: both records */
            catpeaks_settle(cp, rec[evs[i].ref], late[evs[i].ref]),
                catpeaks_settle(cp, r, late[evs[i].ref]);
        catpeaks_advance(cp);
    }
    for (size_t i = 0; late && i < 64; i++)
        if (rec[i] && late[i])
            catpeaks_settle(cp, rec[i], late[i]);
    return catpeaks_end(cp, peak, ns);
}

static void test_peaks_over_the_run(void **st)
{
    (void)st;
    catpeaks cp;
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    /* an activation spike that comes and goes, twice; two optimizer-state tensors that stay;
     * the first activations settled only at their free, after later records waited */
    const ev evs[] = {
        {1, 1, 5000, 10, 0},
        {1, 2, 3000, 20, 0},
        {0, 2, 3000, 40, 0},
        {0, 1, 5000, 50, 0},
        {1, 5, 800, 100, P(OPTIMIZER)},
        {1, 6, 800, 110, P(OPTIMIZER)},
        {1, 7, 6000, 200, 0},
        {1, 8, 99999, 250, CATPEAKS_NONE},
        {0, 7, 6000, 300, 0},
        {0, 8, 99999, 310, CATPEAKS_NONE},
    };
    uint8_t late[64] = {0};
    late[1] = late[2] = late[7] = P(ACTIVATIONS);
    assert_int_equal(run(&cp, evs, sizeof evs / sizeof evs[0], 0, late, peak, ns), 1);
    assert_null(cp.lost);
    assert_int_equal(peak[CAT_OPTIMIZER], 1600);
    assert_int_equal(ns[CAT_OPTIMIZER], 110);
    assert_int_equal(peak[CAT_ACTIVATIONS], 8000); /* 5000 + 3000 at event 2, not 6000 later */
    assert_int_equal(ns[CAT_ACTIVATIONS], 20);
    assert_int_equal(peak[CAT_GRADIENTS], 0);
    for (int c = 0; c < CAT_COUNT; c++) /* the 99999 bytes counted nowhere are in no category */
        assert_true(peak[c] <= 8000);
    catpeaks_free(&cp);
}

/* records wait for the first unsettled one: nothing is swept past it */
static void test_records_wait_in_order(void **st)
{
    (void)st;
    catpeaks cp;
    catpeaks_init(&cp, NULL);
    catpeaks_set_alloc_mode(&cp, 0);
    uint64_t a = catpeaks_add(&cp, 1, 1, 100, CATPEAKS_F_ALLOC, 1, 0);
    catpeaks_add(&cp, 2, 2, 50, CATPEAKS_F_ALLOC, 2, P(TEMPORARIES));
    assert_int_equal(catpeaks_advance(&cp), a); /* waits at the first */
    catpeaks_settle(&cp, a, P(PARAMETERS));
    assert_int_equal(catpeaks_advance(&cp), cp.tail);
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    assert_int_equal(catpeaks_end(&cp, peak, ns), 1);
    assert_int_equal(peak[CAT_PARAMETERS], 100);
    assert_int_equal(peak[CAT_TEMPORARIES], 50);
    catpeaks_free(&cp);
}

static void test_cache_is_segments_less_tensors(void **st)
{
    (void)st;
    catpeaks cp;
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    const ev evs[] = {
        {1, 1, 1000, 1, CATPEAKS_CODE(CATPEAKS_SEGMENT, CAT_CACHE)},
        {1, 2, 600, 2, CATPEAKS_CODE(CATPEAKS_INNER, CAT_ACTIVATIONS)},
        {0, 2, 600, 3, CATPEAKS_CODE(CATPEAKS_INNER, CAT_ACTIVATIONS)},
        {1, 3, 100, 4, CATPEAKS_CODE(CATPEAKS_INNER, CAT_PARAMETERS)},
    };
    assert_int_equal(run(&cp, evs, 4, 1, NULL, peak, ns), 1);
    assert_int_equal(peak[CAT_CACHE], 1000); /* before any tensor: all of it is cache */
    assert_int_equal(peak[CAT_ACTIVATIONS], 600);
    assert_int_equal(peak[CAT_PARAMETERS], 100);
    catpeaks_free(&cp);
    /* a segment waits until the mode is known: the cache counts segments only in allocator mode */
    catpeaks_init(&cp, NULL);
    catpeaks_add(&cp, 1, 1, 1000, CATPEAKS_F_ALLOC, 1, CATPEAKS_CODE(CATPEAKS_SEGMENT, CAT_CACHE));
    assert_int_equal(catpeaks_advance(&cp), 1);
    catpeaks_set_alloc_mode(&cp, 0);
    assert_int_equal(catpeaks_advance(&cp), 2);
    assert_int_equal(catpeaks_end(&cp, peak, ns), 1);
    assert_int_equal(peak[CAT_CACHE], 0); /* not allocator mode: a segment counts nowhere */
    catpeaks_free(&cp);
    /* nothing noted: no peaks claimed, and none said lost */
    catpeaks_init(&cp, NULL);
    assert_int_equal(catpeaks_end(&cp, peak, ns), 0);
    assert_null(cp.lost);
    assert_int_equal(peak[CAT_CACHE], 0);
    catpeaks_free(&cp);
}

/* the sweep's one look at a record (catpeaks_take, catpeaks_add_swept: replay_cats.c's sweep)
 * sweeps a common one as catpeaks_advance would and leaves it the others (a join's) */
static void test_take(void **st)
{
    (void)st;
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    catpeaks cp;
    catpeaks_init(&cp, NULL);
    catpeaks_set_alloc_mode(&cp, 0);
    uint8_t opt = P(OPTIMIZER);
    catpeaks_add(&cp, 1, 1, 700, CATPEAKS_F_ALLOC, 1, opt);
    assert_int_equal(catpeaks_advance(&cp), 2);
    /* to an empty window: swept at once */
    assert_int_equal(catpeaks_add_swept(&cp, 2, 50, CATPEAKS_F_ALLOC, opt), 2);
    assert_int_equal(cp.head, 3);
    assert_int_equal(cp.tail, 3);
    uint64_t a = catpeaks_add(&cp, 3, 3, 300, CATPEAKS_F_ALLOC, 2, 0);
    assert_int_equal(catpeaks_add_swept(&cp, 4, 700, 0, opt), 0); /* the window waits: added */
    catpeaks_add(&cp, 4, 4, 700, 0, 1, opt);
    uint64_t j = catpeaks_add(&cp, 5, 5, 1000, CATPEAKS_F_ALLOC | CATPEAKS_F_JOIN, 3, opt);
    catpeaks_settle(&cp, a, opt);
    for (uint64_t n = cp.head;
         n < cp.tail && catpeaks_take(&cp, &cp.rec[n & (cp.cap - 1)], catpeaks_fast(&cp)); n++)
        cp.head = n + 1;
    assert_int_equal(cp.head, j); /* left to catpeaks_advance */
    assert_int_equal(catpeaks_advance(&cp), cp.tail);
    assert_int_equal(catpeaks_end(&cp, peak, ns), 1);
    assert_int_equal(peak[CAT_OPTIMIZER], 1050); /* not 1350: a join's moment is not noted */
    assert_int_equal(ns[CAT_OPTIMIZER], 3);
    catpeaks_free(&cp);
}

/* in allocator mode the sweep's one look takes a tensor inside a segment as catpeaks_advance
 * would: its category's sum, the cache (the segments less the tensors) at its largest after a
 * free (a segment added while a tensor was alive: 2000 of cache once it goes, not 1200) */
static void test_take_inner(void **st)
{
    (void)st;
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    catpeaks cp;
    catpeaks_init(&cp, NULL);
    catpeaks_set_alloc_mode(&cp, 1);
    const uint8_t seg = CATPEAKS_CODE(CATPEAKS_SEGMENT, CAT_CACHE),
                  act = CATPEAKS_CODE(CATPEAKS_INNER, CAT_ACTIVATIONS);
    catpeaks_add(&cp, 1, 1, 1000, CATPEAKS_F_ALLOC, 1, seg);
    catpeaks_add(&cp, 2, 2, 800, CATPEAKS_F_ALLOC, 2, act);
    catpeaks_add(&cp, 3, 3, 1000, CATPEAKS_F_ALLOC, 3, seg);
    catpeaks_add(&cp, 4, 4, 800, 0, 2, act);
    int fast = catpeaks_fast(&cp);
    assert_int_equal(fast, CATPEAKS_FAST_INNER);
    uint64_t n = cp.head;
    for (; n < cp.tail && catpeaks_take(&cp, &cp.rec[n & (cp.cap - 1)], fast); n++)
        cp.head = n + 1;
    assert_int_equal(cp.head, cp.tail); /* every one swept by the look */
    /* a tensor to the empty window: swept at once, inside the segments (a third segment makes
     * the cache 1500: 3000 less the 1500 of tensors, not 3000) */
    assert_int_equal(catpeaks_add_swept(&cp, 5, 1500, CATPEAKS_F_ALLOC, act), 5);
    assert_int_equal(cp.head, 6);
    assert_int_equal(cp.tail, 6);
    catpeaks_add(&cp, 6, 6, 1000, CATPEAKS_F_ALLOC, 4, seg);
    assert_int_equal(catpeaks_advance(&cp), cp.tail);
    assert_int_equal(catpeaks_end(&cp, peak, ns), 1);
    assert_int_equal(peak[CAT_ACTIVATIONS], 1500);
    assert_int_equal(ns[CAT_ACTIVATIONS], 5);
    assert_int_equal(peak[CAT_CACHE], 2000);
    assert_int_equal(ns[CAT_CACHE], 4);
    catpeaks_free(&cp);
}

static void test_lost_is_said(void **st)
{
    (void)st;
    catpeaks cp;
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    catpeaks_init(&cp, NULL);
    catpeaks_add(&cp, 1, 1, 64, CATPEAKS_F_ALLOC, 1, 0); /* never settled: all the rest waits */
    for (uint64_t i = 1; i <= CATPEAKS_WINDOW_MAX && !cp.lost; i++)
        catpeaks_add(&cp, i + 1, i + 1, 64, CATPEAKS_F_ALLOC, 2, P(TEMPORARIES));
    assert_non_null(cp.lost); /* past the window's cap */
    assert_int_equal(catpeaks_add(&cp, 1, 1, 64, CATPEAKS_F_ALLOC, 3, P(TEMPORARIES)), 0);
    assert_int_equal(catpeaks_add_swept(&cp, 1, 64, 0, P(TEMPORARIES)), 0); /* none swept */
    assert_int_equal(catpeaks_end(&cp, peak, ns), 0);
    assert_int_equal(peak[CAT_TEMPORARIES], 0);
    catpeaks_free(&cp);
    /* a record never settled by the end */
    catpeaks_init(&cp, NULL);
    catpeaks_add(&cp, 1, 1, 64, CATPEAKS_F_ALLOC, 1, 0);
    assert_int_equal(catpeaks_end(&cp, peak, ns), 0);
    assert_non_null(cp.lost);
    catpeaks_free(&cp);
}

/* a window that grows while its records wrap round its ring (its head moved on first): every
 * record kept in order, the ones past the ring's end too (catpeaks_grow moves those) */
static void test_grow_wrapped(void **st)
{
    (void)st;
    catpeaks cp;
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    catpeaks_init(&cp, NULL);
    catpeaks_set_alloc_mode(&cp, 0);
    uint64_t t = 1, n = 1;
    for (uint32_t i = 0; i < 3000; i++) { /* swept at once: the head moves on */
        catpeaks_add(&cp, n++, t++, 10, CATPEAKS_F_ALLOC, i, P(ACTIVATIONS));
        catpeaks_add(&cp, n++, t++, 10, 0, i, P(ACTIVATIONS));
        catpeaks_advance(&cp);
    }
    uint64_t wait = catpeaks_add(&cp, n++, t++, 1000, CATPEAKS_F_ALLOC, 9999, 0);
    for (uint32_t i = 0; i < 6000; i++) /* past the first ring's end, and its size */
        catpeaks_add(&cp, n++, t++, 1 + i % 7, CATPEAKS_F_ALLOC, 10000 + i, P(OPTIMIZER));
    assert_null(cp.lost);
    assert_true(cp.cap > 4096);
    catpeaks_settle(&cp, wait, P(ACTIVATIONS));
    catpeaks_advance(&cp);
    assert_int_equal(catpeaks_end(&cp, peak, ns), 1);
    uint64_t opt = 0;
    for (uint32_t i = 0; i < 6000; i++)
        opt += 1 + i % 7;
    assert_int_equal(peak[CAT_OPTIMIZER], opt);
    assert_int_equal(ns[CAT_OPTIMIZER], t - 1);
    assert_int_equal(peak[CAT_ACTIVATIONS], 1000);
    catpeaks_free(&cp);
}

static void test_vocab(void **st)
{
    (void)st;
    /* GPT-2: wte 50257 x 768 fp32, norms 768 fp32 (four times or more), a d x 3d weight */
    uint64_t gpt2[] = {
        50257ull * 768 * 4, 768 * 4, 768 * 3 * 768 * 4, 768 * 4, 768 * 4, 768 * 4, 2304 * 4};
    assert_int_equal(classify_vocab(gpt2, 7), 50257);
    /* T5-small: the shared 32128 x 512 embedding, two relative-position tables of 32 x 8 (a
     * pair smaller than the width, not the width: 2 x V was said), norms of 512 */
    uint64_t t5[] = {
        32128ull * 512 * 4, 512 * 512 * 4, 256 * 4, 512 * 4, 512 * 4, 256 * 4, 512 * 4, 512 * 4,
        2048 * 512 * 4};
    assert_int_equal(classify_vocab(t5, 9), 32128);
    /* a 16-bit GPT-2 and the fp32 master copies its loop keeps, made after it: the largest is
     * the embedding's copy, its 16-bit original first (before: no vocabulary) */
    uint64_t master[] = {50257ull * 768 * 2, 768 * 2, 768 * 3 * 768 * 2, 768 * 2, 768 * 2, 768 * 2,
                         50257ull * 768 * 4, 768 * 4, 768 * 3 * 768 * 4, 768 * 4, 768 * 4, 768 * 4};
    assert_int_equal(classify_vocab(master, 12), 50257);
    /* negative: a ViT's late MLP weight's copy: its original comes late too */
    uint64_t vit16[] = {768 * 3 * 16 * 16 * 2, 768 * 2, 197 * 768 * 2,     768 * 2, 768 * 2,
                        3072ull * 768 * 2,     768 * 2, 3072ull * 768 * 4, 768 * 4, 768 * 4};
    assert_int_equal(classify_vocab(vit16, 10), 0);
    /* negative: a late largest whose half comes first by chance, the others no copies (two
     * models, a GAN's generator and discriminator) */
    uint64_t two[] = {50257ull * 768 * 2, 768 * 2, 768 * 3 * 768 * 2, 768 * 2, 768 * 2, 768 * 2,
                      50257ull * 768 * 4, 768 * 2, 768 * 3 * 768 * 4, 768 * 4, 768 * 4, 768 * 4};
    assert_int_equal(classify_vocab(two, 12), 0);
    /* negative: no size occurs four times (no norm weight to divide by) */
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
        cmocka_unit_test(test_records_wait_in_order),
        cmocka_unit_test(test_cache_is_segments_less_tensors),
        cmocka_unit_test(test_take),
        cmocka_unit_test(test_take_inner),
        cmocka_unit_test(test_lost_is_said),
        cmocka_unit_test(test_grow_wrapped),
        cmocka_unit_test(test_vocab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
