/* test_timeline.c — the replay's timeline (analyzer/model/facts/timeline.c) as the category sweep
 * fills it (catpeaks.c): buckets keep each category's maximum exactly however many events share
 * a bucket; phase slices per thread; optimizer ticks; the ring keeps the newest actions; totals
 * per (stack, category) for `flame --at all`. Also the pickle writer (views/pickle.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catpeaks.h"
#include "timeline.h"
#include "../../analyzer/views/pickle.h"

static void test_buckets_keep_the_maximum(void **st)
{
    (void)st;
    timeline *tl = timeline_new();
    catpeaks cp = {0};
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT], best = 0;
    assert_non_null(tl);
    cp.tl = tl;
    /* a parameter, then 100k short-lived activations of varying size: far more events than
     * buckets. Noted as the replay would, then swept as the second pass does. */
    enum { N = 100000 };
    catpeaks_note(&cp, 1, CAT_PARAMETERS, CATPEAKS_PLAIN, 1);
    for (uint64_t i = 0; i < N; i++)
        catpeaks_note(&cp, 2 * i + 2, CAT_ACTIVATIONS, CATPEAKS_PLAIN, 1);
    catpeaks_sweep_begin(&cp, 2 * N + 1, 0);
    reader_event ev = {0};
    ev.api = VT_API_cudaMallocAsync;
    ev.addr = 0x100000, ev.size = 4096, ev.time_ns = 0;
    catpeaks_sweep_event(&cp, 1, 1, &ev);
    for (uint64_t i = 0; i < N; i++) {
        uint64_t size = 1000 + (i * 7919) % 5000;
        ev.addr = 0x200000, ev.size = size, ev.time_ns = 2 * i + 2;
        catpeaks_sweep_event(&cp, 2 * i + 2, 1, &ev);
        ev.size = 0, ev.time_ns = 2 * i + 3;
        catpeaks_sweep_event(&cp, 2 * i + 3, 0, &ev);
        if (size > best)
            best = size;
    }
    assert_int_equal(catpeaks_sweep_end(&cp, peak, ns), 1);
    assert_true(tl->has_cats);
    uint64_t m = 0, mp = 0, last_t = 0;
    size_t used = 0;
    for (size_t i = 0; i < TIMELINE_BUCKETS; i++) {
        const timeline_bucket *b = &tl->b[i];
        if (!b->used)
            continue;
        used++;
        assert_true(b->t_first >= last_t && b->t_last >= b->t_first); /* in time order */
        assert_true(b->t_max[CAT_ACTIVATIONS] >= b->t_first &&
                    b->t_max[CAT_ACTIVATIONS] <= b->t_last);
        last_t = b->t_last;
        if (b->max[CAT_ACTIVATIONS] > m)
            m = b->max[CAT_ACTIVATIONS];
        if (b->max[CAT_PARAMETERS] > mp)
            mp = b->max[CAT_PARAMETERS];
        assert_true(b->last[CAT_ACTIVATIONS] <= b->max[CAT_ACTIVATIONS]);
    }
    assert_int_equal(used, TIMELINE_BUCKETS);
    assert_int_equal(m, best);
    assert_int_equal(m, peak[CAT_ACTIVATIONS]);
    assert_int_equal(mp, 4096);
    catpeaks_free(&cp);
    timeline_free(tl);
}

static reader_event ev(uint64_t t, uint32_t thread, int api, uint64_t addr, uint64_t size)
{
    reader_event e;
    memset(&e, 0, sizeof e);
    e.time_ns = t;
    e.thread = thread;
    e.api = (uint8_t)api;
    e.addr = addr;
    e.size = size;
    return e;
}

static void test_slices_ticks_ring_totals(void **st)
{
    (void)st;
    timeline *tl = timeline_new();
    reader_event e;
    assert_non_null(tl);
    e = ev(10, 0, VT_API_torchAlloc, 0x1000, 64);
    timeline_event(tl, &e, 1, 1, 0); /* forward on thread 0 */
    e = ev(20, 1, VT_API_torchAlloc, 0x2000, 32);
    timeline_event(tl, &e, 1, 2, 0); /* backward on thread 1 */
    e = ev(30, 0, VT_API_torchAlloc, 0x3000, 16);
    timeline_event(tl, &e, 1, 1, 0); /* still forward: the slice grows */
    e = ev(40, 0, VT_API_torchAlloc, 0x4000, 16);
    timeline_event(tl, &e, 1, 3, 1); /* optimizer, the first step */
    e = ev(50, 0, VT_API_torchFree, 0x1000, 0);
    timeline_freed(tl, &e, 64);
    assert_int_equal(tl->nslices, 3);
    assert_int_equal(tl->slices[0].t0, 10);
    assert_int_equal(tl->slices[0].t1, 40); /* closed when the optimizer began */
    assert_int_equal(tl->slices[1].thread, 1);
    assert_int_equal(tl->nticks, 1);
    assert_int_equal(tl->ticks[0], 40);
    assert_int_equal(tl->ring_n, 5);
    assert_int_equal(timeline_ring_at(tl, 4)->kind, TL_FREE);
    assert_int_equal(timeline_ring_at(tl, 4)->size, 64);
    assert_string_equal(timeline_action_name(TL_FREE), "free_completed");
    /* the ring keeps the newest TIMELINE_RING actions */
    for (uint64_t i = 0; i < TIMELINE_RING + 10; i++) {
        e = ev(100 + i, 0, VT_API_torchAlloc, 0x10000 + i, 8);
        timeline_event(tl, &e, 1, 1, 1);
    }
    assert_int_equal(tl->ring_n, TIMELINE_RING);
    assert_int_equal(timeline_ring_at(tl, 0)->time_ns, 110); /* 15 dropped: the 5 first, 10 more */
    assert_int_equal(timeline_ring_at(tl, TIMELINE_RING - 1)->time_ns, 100 + TIMELINE_RING + 9);
    /* totals by (stack, category), kept only when asked for */
    timeline_total_add(tl, 1, CAT_ACTIVATIONS, 10);
    assert_int_equal(tl->ntotals, 0);
    timeline_totals = 1;
    for (int i = 0; i < 10000; i++)
        timeline_total_add(tl, (uint32_t)(i % 100) + 1, i % 2 ? CAT_ACTIVATIONS : CAT_GRADIENTS,
                           10);
    assert_int_equal(tl->ntotals, 100);
    uint64_t sum = 0;
    for (size_t i = 0; i < tl->captotals; i++)
        sum += tl->totals[i].bytes;
    assert_int_equal(sum, 100000);
    timeline_free(tl);
}

static void test_pickle_bytes(void **st)
{
    (void)st;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    pickle_begin(f);
    pickle_dict(f);
    pickle_cstr(f, "a");
    pickle_list(f);
    pickle_int(f, 1);
    pickle_uint(f, UINT64_MAX);
    pickle_int(f, -5000000000LL);
    pickle_none(f);
    pickle_close_list(f);
    pickle_put(f, 0);
    pickle_cstr(f, "b");
    pickle_get(f, 0);
    pickle_close_dict(f);
    pickle_end(f);
    fclose(f);
    static const unsigned char want[] = {0x80, 2,    '}',  '(',  'X',  1,    0,    0,
                                         0,    'a',  ']',  '(',  'J',  1,    0,    0,
                                         0,    0x8a, 9,    0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0, /* 2^64-1, kept positive */
                                         0x8a, 8,    0x00, 0x0e, 0xfa, 0xd5, 0xfe, 0xff,
                                         0xff, 0xff, /* -5e9 */
                                         'N',  'e',  'r',  0,    0,    0,    0,    'X',
                                         1,    0,    0,    0,    'b',  'j',  0,    0,
                                         0,    0,    'u',  '.'};
    assert_int_equal(len, sizeof want);
    assert_memory_equal(buf, want, sizeof want);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_keep_the_maximum),
        cmocka_unit_test(test_slices_ticks_ring_totals),
        cmocka_unit_test(test_pickle_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
