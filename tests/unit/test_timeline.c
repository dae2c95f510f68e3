/* test_timeline.c — the replay's timeline (analyzer/model/facts/timeline.c) as the category sweep
 * fills it (catpeaks.c): buckets (a power of two of events each, merged in pairs as the run grows)
 * keep whole moments, the run's tallest and each category's largest exactly, however many events
 * share a bucket; phase slices per thread; optimizer ticks; the ring keeps the newest actions;
 * totals per (stack, category) for `flame --at all`, spread under the hash seed however a trace
 * chose its stack ids. Also the pickle writer (views/pickle.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catpeaks.h"
#include "hashseed.h"
#include "phases.h"
#include "timeline.h"
#include "../../analyzer/views/pickle.h"

/* sweep_two: n events into a fresh timeline: activations and gradients take turns holding
 * size bytes (one frees as the other allocates), over a parameter of 4096 B that stays. Never
 * more than 4096 + size live at once, but each category alone reaches size in every span.
 * peak_event: the replay's process-peak event, or NULL. */
static const uint64_t *g_phase_events; /* what sweep_two_at gives the timeline (NULL: none) */

/* assert_drawn: the moments of seq a and b (a == b: one) are each drawn once, whatever the
 * number of moments asked for */
static void assert_drawn(const timeline *tl, uint64_t a, uint64_t b)
{
    for (size_t max = 2 * (CAT_COUNT + 4 + PHASE_COUNT); max <= 20000; max = max * 3 + 1) {
        size_t n = 0, seen = 0;
        const timeline_moment **m = timeline_moments(tl, max, &n);
        assert_non_null(m);
        assert_true(n <= max);
        for (size_t i = 0; i < n; i++)
            seen += (m[i]->seq == a) + (a != b && m[i]->seq == b);
        assert_int_equal(seen, a == b ? 1 : 2);
        free(m);
    }
}

static timeline *sweep_two_at(catpeaks *cp, uint64_t n, uint64_t *best, const uint64_t *peak_event)
{
    timeline *tl = timeline_new();
    uint64_t peak[CAT_COUNT], ns[CAT_COUNT];
    assert_non_null(tl);
    tl->peak_event = peak_event;
    tl->phase_events = g_phase_events;
    catpeaks_init(cp, tl);
    catpeaks_set_alloc_mode(cp, 0);
    catpeaks_add(cp, 1, 0, 4096, CATPEAKS_F_ALLOC, 1,
                 CATPEAKS_CODE(CATPEAKS_PLAIN, CAT_PARAMETERS));
    *best = 0;
    uint64_t prev = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t size = 1000 + (i * 7919) % 5000;
        uint8_t code = CATPEAKS_CODE(CATPEAKS_PLAIN, i % 2 ? CAT_GRADIENTS : CAT_ACTIVATIONS);
        uint8_t was = CATPEAKS_CODE(CATPEAKS_PLAIN, i % 2 ? CAT_ACTIVATIONS : CAT_GRADIENTS);
        if (i) /* the previous one goes */
            catpeaks_add(cp, 2 * i + 1, 2 * i + 1, prev, 0, 2, was);
        catpeaks_add(cp, 2 * i + 2, 2 * i + 2, size, CATPEAKS_F_ALLOC, 2, code);
        catpeaks_advance(cp);
        prev = size;
        if (size > *best)
            *best = size;
    }
    assert_int_equal(catpeaks_end(cp, peak, ns), 1);
    assert_int_equal(peak[CAT_ACTIVATIONS] > peak[CAT_GRADIENTS] ? peak[CAT_ACTIVATIONS]
                                                                 : peak[CAT_GRADIENTS],
                     *best);
    return tl;
}

static timeline *sweep_two(catpeaks *cp, uint64_t n, uint64_t *best)
{
    return sweep_two_at(cp, n, best, NULL);
}

/* every bucket keeps whole moments: its tallest, lowest and last each add up to their total;
 * the run's tallest is the true maximum, each category's largest is kept exactly */
static void test_buckets_keep_whole_moments(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t best;
    enum { N = 100000 }; /* far more events than buckets */
    timeline *tl = sweep_two(&cp, N, &best);
    assert_true(tl->has_cats);
    size_t used = 0;
    uint64_t last_t = 0, hi = 0;
    for (size_t i = 0; i < TIMELINE_BUCKETS; i++) {
        const timeline_bucket *b = &tl->b[i];
        if (!b->used)
            continue;
        used++;
        assert_true(b->t_first >= last_t && b->t_last >= b->t_first); /* in time order */
        last_t = b->t_last;
        const timeline_moment *m[3] = {&b->hi, &b->lo, &b->end};
        for (int k = 0; k < 3; k++) {
            uint64_t sum = 0;
            for (int c = 0; c < CAT_COUNT; c++)
                sum += m[k]->v[c];
            assert_int_equal(sum, m[k]->total);
            assert_true(m[k]->t >= b->t_first && m[k]->t <= b->t_last);
            assert_true(m[k]->total <= 4096 + best); /* never a mix of two instants */
            assert_int_equal(m[k]->v[CAT_ACTIVATIONS] && m[k]->v[CAT_GRADIENTS], 0);
        }
        assert_true(b->lo.total <= b->end.total && b->end.total <= b->hi.total);
        if (b->hi.total > hi)
            hi = b->hi.total;
    }
    assert_true(used > TIMELINE_BUCKETS / 2 && used <= TIMELINE_BUCKETS); /* merged in pairs */
    assert_int_equal(tl->width, 32); /* 200000 events: 8192 buckets of 32 */
    assert_int_equal(hi, 4096 + best);
    assert_int_equal(tl->top.total, 4096 + best);
    assert_int_equal(tl->cat_top[CAT_PARAMETERS].v[CAT_PARAMETERS], 4096);
    catpeaks_free(&cp);
    timeline_free(tl);
}

/* timeline_moments: at most max, in time order, the tallest and each category's largest among
 * them, each one moment: a stack of them never passes the run's peak */
static void test_moments_to_draw(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t best;
    timeline *tl = sweep_two(&cp, 100000, &best);
    for (size_t max = 2 * (CAT_COUNT + 4 + PHASE_COUNT); max <= 20000; max = max * 3 + 1) {
        size_t n = 0;
        const timeline_moment **m = timeline_moments(tl, max, &n);
        assert_non_null(m);
        assert_true(n >= 3 && n <= max);
        uint64_t top = 0, act = 0, grad = 0;
        for (size_t i = 0; i < n; i++) {
            assert_true(!i || m[i]->seq > m[i - 1]->seq);
            assert_true(!i || m[i]->t >= m[i - 1]->t);
            assert_true(m[i]->total <= 4096 + best);
            top = m[i]->total > top ? m[i]->total : top;
            act = m[i]->v[CAT_ACTIVATIONS] > act ? m[i]->v[CAT_ACTIVATIONS] : act;
            grad = m[i]->v[CAT_GRADIENTS] > grad ? m[i]->v[CAT_GRADIENTS] : grad;
        }
        assert_int_equal(top, 4096 + best);
        assert_int_equal(act > grad ? act : grad, best);
        assert_int_equal(act, tl->cat_top[CAT_ACTIVATIONS].v[CAT_ACTIVATIONS]);
        assert_int_equal(grad, tl->cat_top[CAT_GRADIENTS].v[CAT_GRADIENTS]);
        free(m);
    }
    size_t n = 1;
    assert_null(timeline_moments(tl, 2 * CAT_COUNT + 3, &n)); /* too few to keep the peaks */
    assert_int_equal(n, 0);
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
    /* the allocator's actions: none kept unless asked for (export --memory-viz) */
    timeline *none = timeline_new();
    assert_non_null(none);
    e = ev(5, 0, VT_API_torchAlloc, 0x800, 8);
    timeline_event(none, &e, 1, 1, 0);
    assert_int_equal(none->ring_n, 0);
    assert_null(none->ring);
    timeline_free(none);
    timeline_actions = 1;
    e = ev(10, 0, VT_API_torchAlloc, 0x1000, 64);
    timeline_event(tl, &e, 1, 1, 0); /* forward on thread 0 */
    e = ev(20, 1, VT_API_torchAlloc, 0x2000, 32);
    timeline_event(tl, &e, 1, 2, 0); /* backward on thread 1 */
    e = ev(30, 0, VT_API_torchAlloc, 0x3000, 16);
    timeline_event(tl, &e, 1, 1, 0); /* still forward: the slice grows */
    e = ev(40, 0, VT_API_torchAlloc, 0x4000, 16);
    timeline_event(tl, &e, 1, 3, 1); /* optimizer, the first step */
    e = ev(50, 0, VT_API_torchFree, 0x1000, 0);
    timeline_freed(tl, &e, 64, 0, 0);
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
    /* a stream-ordered allocator's tensor (cudaMallocAsync): a segment of its own and the tensor,
     * its free then its segment's on its allocation's device (cudaFreeAsync names none:
     * VT_DEVICE_UNKNOWN) */
    e = ev(60, 0, VT_API_cudaMallocAsync, 0x9000, 48);
    e.device = 2;
    timeline_stream_made(tl, &e);
    e = ev(70, 0, VT_API_cudaFreeAsync, 0x9000, 0);
    e.device = VT_DEVICE_UNKNOWN;
    timeline_freed(tl, &e, 48, 1, 2);
    e = ev(71, 0, VT_API_cudaFree, 0x9000, 0); /* (a plain free: no action) */
    timeline_freed(tl, &e, 48, 0, 2);
    /* its OOM: the request, the card less what the process held as the device's free bytes */
    reader_oom o = {.time_ns = 80,
                    .requested = 4096,
                    .capacity = 1 << 20,
                    .process_used = 1 << 19,
                    .device = 2};
    timeline_stream_oom(tl, &o);
    assert_int_equal(tl->ring_n, 10);
    assert_int_equal(timeline_ring_at(tl, 9)->kind, TL_OOM);
    assert_int_equal(timeline_ring_at(tl, 9)->size, 4096);
    assert_int_equal(timeline_ring_at(tl, 9)->addr, 1 << 19);
    o.process_used = 2 << 20; /* (more than the card: none free, not a wrapped count) */
    timeline_stream_oom(tl, &o);
    assert_int_equal(timeline_ring_at(tl, 10)->addr, 0);
    static const int kinds[] = {TL_SEGMENT_ALLOC, TL_ALLOC, TL_FREE, TL_SEGMENT_FREE};
    for (size_t i = 0; i < 4; i++) {
        const timeline_action *a = timeline_ring_at(tl, 5 + i);
        assert_int_equal(a->kind, kinds[i]);
        assert_int_equal(a->addr, 0x9000);
        assert_int_equal(a->size, 48);
        assert_int_equal(a->device, 2);
    }
    /* the ring keeps the newest TIMELINE_RING actions */
    for (uint64_t i = 0; i < TIMELINE_RING + 10; i++) {
        e = ev(100 + i, 0, VT_API_torchAlloc, 0x10000 + i, 8);
        timeline_event(tl, &e, 1, 1, 1);
    }
    assert_int_equal(tl->ring_n, TIMELINE_RING);
    assert_int_equal(timeline_ring_at(tl, 0)->time_ns, 110); /* 21 dropped: the 11 first, 10 more */
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

/* step: one event of thread th at t ms into tl, an allocation (alloc) or a free, in phase ph */
static void step(timeline *tl, uint64_t t, uint32_t th, int alloc, int ph)
{
    reader_event e = ev(t * 1000000, th, alloc ? VT_API_torchAlloc : VT_API_torchFree, 0x1000 + t,
                        alloc ? 64 : 0);
    timeline_event(tl, &e, alloc, ph, ph == PHASE_OPTIMIZER);
}

/* each slice of tl: {phase, t0 ms, t1 ms}, n of them */
static void slices_are(const timeline *tl, const uint64_t (*want)[3], size_t n)
{
    assert_int_equal(tl->nslices, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(tl->slices[i].phase, want[i][0]);
        assert_int_equal(tl->slices[i].t0, want[i][1] * 1000000);
        assert_int_equal(tl->slices[i].t1, want[i][2] * 1000000);
    }
}

/* a run's last slice: its events up to a pause (>= TIMELINE_PAUSE_NS, longer than the slice had
 * run) after which only frees came end it; the frees are an "other" slice. An allocation after
 * the pause keeps the slice whole; frees after it in another phase (the driver's unloads at
 * exit) give way too, a second thread's slice kept; a pause shorter than the slice had run
 * before it is not the program's end. */
/* the longest distance of a total from its home slot, where home is what slot_of gives */
static size_t longest_total_probe(const timeline *tl, size_t (*slot_of)(uint64_t key, size_t cap))
{
    size_t worst = 0, mask = tl->captotals - 1;
    for (size_t j = 0; j < tl->captotals; j++) {
        const timeline_total *t = &tl->totals[j];
        if (!t->bytes)
            continue;
        size_t home = slot_of((uint64_t)t->stack_id << 8 | t->category, tl->captotals);
        if (((j - home) & mask) > worst)
            worst = (j - home) & mask;
    }
    return worst;
}
/* the slot the totals' hash gave until 2026-12-02 (a fixed multiplication, no seed) */
static size_t unseeded_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}
static size_t seeded_slot(uint64_t key, size_t cap)
{
    return (size_t)hashseed_mix(key) & (cap - 1);
}

/* CHOSEN stack ids that all had one home slot of the 4096 the totals start with (found by
 * trying ids, as a hostile trace would): each add walked past all before it. Under a drawn
 * seed they spread as any ids do. */
enum { CHOSEN = 1500 };
static void test_totals_seeded(void **st)
{
    (void)st;
    uint64_t keep = hashseed_value;
    unsetenv("VRAMTRACE_HASH_SEED");
    hashseed_init();
    timeline *tl = timeline_new();
    assert_non_null(tl);
    timeline_totals = 1;
    size_t n = 0;
    for (uint32_t id = 1; n < CHOSEN; id++)
        if (unseeded_slot((uint64_t)id << 8 | CAT_ACTIVATIONS, 4096) == 0) {
            timeline_total_add(tl, id, CAT_ACTIVATIONS, 1);
            n++;
        }
    assert_int_equal(tl->ntotals, CHOSEN);
    assert_int_equal(tl->captotals, 4096);
    assert_true(longest_total_probe(tl, seeded_slot) < 64);
    timeline_free(tl);
    timeline_totals = 0;
    hashseed_value = keep;
}

static void test_end_after_pause(void **st)
{
    (void)st;
    enum { F = PHASE_FORWARD, B = PHASE_BACKWARD, O = PHASE_OPTIMIZER, X = PHASE_OTHER };
    for (int alloc_after = 0; alloc_after < 2; alloc_after++) {
        timeline *tl = timeline_new();
        assert_non_null(tl);
        step(tl, 0, 0, 1, F);
        step(tl, 5, 0, 1, O);
        step(tl, 15, 0, 0, O); /* the step's own frees */
        step(tl, 815, 0, 0, O);
        step(tl, 900, 0, alloc_after, O);
        timeline_end(tl);
        static const uint64_t cut[][3] = {{F, 0, 5}, {O, 5, 15}, {X, 815, 900}},
                              whole[][3] = {{F, 0, 5}, {O, 5, 900}};
        if (alloc_after) /* still running after the pause: nothing cut */
            slices_are(tl, whole, 2);
        else
            slices_are(tl, cut, 3);
        timeline_free(tl);
    }
    timeline *tl = timeline_new();
    assert_non_null(tl);
    step(tl, 0, 0, 1, F);
    step(tl, 1, 1, 1, B);
    step(tl, 10, 0, 1, F);
    step(tl, 2000, 0, 0, X);
    step(tl, 2100, 0, 0, O);
    timeline_end(tl);
    static const uint64_t other[][3] = {{F, 0, 10}, {B, 1, 1}, {X, 2000, 2100}};
    slices_are(tl, other, 3);
    timeline_free(tl);
    tl = timeline_new();
    assert_non_null(tl);
    step(tl, 0, 0, 1, F);
    step(tl, 500, 0, 1, F);
    step(tl, 700, 0, 0, F);
    timeline_end(tl);
    static const uint64_t kept[][3] = {{F, 0, 700}};
    slices_are(tl, kept, 1);
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

/* the process peak's moment (the replay's snapshot event, not the run's first tallest: the
 * replay may pick a later moment at the same level) is kept as swept, and drawn at every size */
static void test_peak_moment_drawn(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t best, ev = 2 * 40001 + 2; /* an allocation in the middle, not the tallest */
    timeline *tl = sweep_two_at(&cp, 100000, &best, &ev);
    assert_int_not_equal(tl->at_peak.seq, 0);
    assert_int_equal(tl->at_peak.t, ev); /* sweep_two's times are its event numbers */
    assert_int_equal(tl->at_peak.v[CAT_PARAMETERS], 4096);
    assert_int_equal(tl->at_peak.total, 4096 + 1000 + (40001ull * 7919) % 5000);
    assert_true(tl->at_peak.seq != tl->top.seq);
    assert_drawn(tl, tl->at_peak.seq, tl->at_peak.seq);
    catpeaks_free(&cp);
    timeline_free(tl);
}

/* each phase's peak (the event that set it, replay_result.phase_peak_event) is a moment kept and
 * drawn, whatever the buckets kept (an init phase's had been drawn 1 MiB under the report's) */
static void test_phase_moments_drawn(void **st)
{
    (void)st;
    catpeaks cp = {0};
    uint64_t best, ev[PHASE_COUNT] = {0};
    ev[PHASE_INIT] = 2 * 777 + 2, ev[PHASE_BACKWARD] = 2 * 50001 + 2; /* allocations, not tallest */
    g_phase_events = ev;
    timeline *tl = sweep_two_at(&cp, 100000, &best, NULL);
    g_phase_events = NULL;
    assert_int_equal(tl->at_phase[PHASE_INIT].t, ev[PHASE_INIT]);
    assert_int_equal(tl->at_phase[PHASE_BACKWARD].t, ev[PHASE_BACKWARD]);
    assert_int_equal(tl->at_phase[PHASE_FORWARD].seq, 0); /* none set */
    assert_drawn(tl, tl->at_phase[PHASE_INIT].seq, tl->at_phase[PHASE_BACKWARD].seq);
    catpeaks_free(&cp);
    timeline_free(tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_keep_whole_moments),
        cmocka_unit_test(test_moments_to_draw),
        cmocka_unit_test(test_peak_moment_drawn),
        cmocka_unit_test(test_phase_moments_drawn),
        cmocka_unit_test(test_slices_ticks_ring_totals),
        cmocka_unit_test(test_totals_seeded),
        cmocka_unit_test(test_end_after_pause),
        cmocka_unit_test(test_pickle_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
