/* test_replay_oom.c — the replay's out-of-memory failures (replay_oom.h) on small hand-written
 * traces: an error the program caught and went on from (a backward pass began after it, another
 * request failed), which stays the run's OOM against later failures (recovered, caught too) unless
 * the trace ends in one; a backward pass such an error cut short is not an ended one. Traces are
 * written with replay_trace.h (trace_enc.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "replay.h"
#include "replay_trace.h"

/* a backward pass an OOM cut short, which the program caught to go on at a smaller batch
 * (accelerate's find_executable_batch_size), did not end: only a whole one counts (what the KV
 * cache's copies the attention keeps is measured by one: replay_kv_unmeasured); one whose failed
 * request later succeeded (the allocator freed its cache) goes on, and ends */
static void backward_oom_trace(const char *path, int recovered, int retried_whole)
{
    begin();
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0x1000, 64, 2, 0); /* forward */
    alloc(1, 1, 0x2000, 64, 0, 0); /* backward */
    alloc(1, 1, 0, 4096, 0, 2);    /* fails: out of memory */
    if (recovered)
        alloc(1, 1, 0x3000, 4096, 0, 0); /* the same request, after the cache's release */
    alloc(0, 0, 0x4000, 32, 2, 0);       /* the next forward (the retry at half the batch) */
    if (retried_whole) {
        alloc(1, 1, 0x5000, 32, 0, 0); /* its backward, whole */
        alloc(0, 0, 0x6000, 32, 2, 0);
    }
    end(path);
}

static void test_backward_oom_not_ended(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    const int cases[][3] = {{0, 0, 0}, {1, 0, 1}, {0, 1, 1}}; /* recovered, retried, ended */
    for (int i = 0; i < 3; i++) {
        backward_oom_trace(path, cases[i][0], cases[i][1]);
        replay_result r;
        char err[256];
        assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
        assert_int_equal(r.backward_passes, 1 + cases[i][1]);
        assert_int_equal(r.backward_ended, cases[i][2]);
        replay_free(&r);
    }
    unlink(path);
}

/* an out-of-memory failure the program went on from: a backward pass began after it (a smaller
 * batch's retry) is an error it caught, still the run's OOM (its configuration failed; no request
 * as large succeeded) but one it went on from; one no progress followed ends the run */
static void test_oom_caught(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    for (int went_on = 0; went_on < 2; went_on++) {
        begin();
        code(2, "/x/train.py", "Block.forward");
        stack(2, 2);
        alloc(0, 0, 0x1000, 64, 2, 0); /* forward */
        alloc(0, 0, 0, 4096, 2, 2);    /* fails: out of memory */
        release(0, 0, 0x1000);         /* unwound */
        alloc(0, 0, 0x2000, 16, 2, 0); /* the retry's forward, at a smaller batch */
        if (went_on) {
            alloc(1, 1, 0x3000, 16, 0, 0); /* its backward */
            alloc(0, 0, 0x4000, 16, 2, 0);
        }
        replay_result r;
        replay_ended(path, &r);
        assert_int_equal(r.oom_caught, went_on);
        assert_true(r.has_oom);
        assert_int_equal(r.oom_went_on, went_on);
        if (went_on) {
            assert_int_equal(r.caught.requested, 4096);
            assert_int_equal(r.caught.phase, PHASE_FORWARD);
            assert_true(replay_peak_in_caught(&r)); /* (64 B, before it; 48 after) */
        }
        replay_free(&r);
    }
    unlink(path);
}

/* the first error caught where another request failed next (a retry at a batch still too large)
 * and the run ended in that one; a peak in a backward pass is not in the forward after it that
 * an error cut short (the same backward passes begun) */
static void test_oom_caught_next(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0, 4096, 2, 2); /* fails */
    alloc(0, 0, 0, 2048, 2, 2); /* the retry's request fails too: the run ends in it */
    replay_result r;
    replay_ended(path, &r);
    assert_int_equal(r.oom_caught, 1);
    assert_int_equal(r.caught.requested, 4096);
    assert_true(r.has_oom);
    assert_false(r.oom_went_on); /* (the run ended in the second) */
    assert_int_equal(r.oom_requested, 2048);
    replay_free(&r);
    begin();
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0x1000, 64, 2, 0); /* forward */
    alloc(1, 1, 0x2000, 16, 0, 0); /* backward: the peak, 80 B */
    vt_rec_free fr[2] = {{VT_TT_MAKE(1, 0), 0x1000}, {VT_TT_MAKE(1, 0), 0x2000}};
    for (int i = 0; i < 2; i++)
        rec(VT_REC_FREE, VT_EVF_MAKE(g_free_api, 0), &fr[i], sizeof fr[i], NULL, 0);
    alloc(0, 0, 0x3000, 16, 2, 0); /* the next forward */
    alloc(0, 0, 0, 4096, 2, 2);    /* fails: caught, the program goes on */
    alloc(1, 1, 0x4000, 8, 0, 0);  /* a backward */
    replay_ended(path, &r);
    assert_int_equal(r.oom_caught, 1);
    assert_true(r.has_oom && r.oom_went_on);
    assert_int_equal(r.peak_process, 80);
    assert_false(replay_peak_in_caught(&r));
    replay_free(&r);
    /* a failure its allocator recovers from after it (the same request succeeding) leaves the
     * caught one the run's OOM; one that fails again is the run's OOM instead */
    for (int again = 0; again < 2; again++) {
        begin();
        code(2, "/x/train.py", "Block.forward");
        stack(2, 2);
        alloc(0, 0, 0, 4096, 2, 2);   /* fails */
        alloc(1, 1, 0x1000, 8, 0, 0); /* a backward: the program went on */
        alloc(0, 0, 0, 512, 2, 2);    /* another request fails ... */
        alloc(0, 0, again ? 0 : 0x2000, 512, 2, again ? 2 : 0); /* ... and succeeds, or not */
        replay_ended(path, &r);
        assert_true(r.has_oom);
        assert_int_equal(r.oom_requested, again ? 512 : 4096);
        assert_int_equal(r.oom_went_on, !again);
        assert_int_equal(r.oom_recovered, !again);
        replay_free(&r);
    }
    /* a second error caught after the first (a retry still too large) leaves the first the run's
     * OOM: its configuration is the one the trace's first forward shows */
    begin();
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0, 4096, 2, 2);   /* fails */
    alloc(1, 1, 0x1000, 8, 0, 0); /* a backward: caught */
    alloc(0, 0, 0, 2048, 2, 2);   /* the retry fails */
    alloc(1, 1, 0x2000, 8, 0, 0); /* a backward: caught too */
    replay_ended(path, &r);
    assert_int_equal(r.oom_caught, 2);
    assert_true(r.has_oom && r.oom_went_on);
    assert_int_equal(r.oom_requested, 4096);
    replay_free(&r);
    unlink(path);
}

/* find_item: the item of address addr in snapshot snap, or NULL */
static const live_item *find_item(const replay_snapshot *snap, uint64_t addr)
{
    for (size_t i = 0; i < snap->n; i++)
        if (snap->items[i].addr == addr)
            return &snap->items[i];
    return NULL;
}

/* a later failure after a caught one has its own snapshot, taken as it began: the trace that ends
 * in it describes what was live then, not what the program's teardown left (it had been taken
 * as the trace ended); resolved, the caught one's is back, with the ends its window saw */
static void test_oom_later_snapshot(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0, 4096, 2, 2);     /* fails */
    alloc(1, 1, 0x1000, 8, 0, 0);   /* a backward: caught */
    alloc(0, 0, 0x2000, 100, 2, 0); /* the retry's forward */
    alloc(0, 0, 0, 512, 2, 2);      /* fails: the trace ends in it */
    release(0, 0, 0x2000);          /* the program's teardown */
    replay_result r;
    replay_ended(path, &r);
    assert_int_equal(r.oom_requested, 512);
    assert_false(r.oom_went_on);
    assert_non_null(find_item(&r.at_oom, 0x2000));
    replay_free(&r);
    begin();
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0x1000, 64, 2, 0);  /* forward: live at the first failure */
    alloc(0, 0, 0, 4096, 2, 2);     /* fails */
    alloc(1, 1, 0x2000, 8, 0, 0);   /* a backward: caught */
    alloc(0, 0, 0, 512, 2, 2);      /* another request fails ... */
    release(1, 1, 0x1000);          /* (the first forward's tensor freed meanwhile) */
    alloc(0, 0, 0x3000, 512, 2, 0); /* ... and succeeds: recovered */
    release(0, 0, 0x3000);
    replay_ended(path, &r);
    assert_int_equal(r.oom_requested, 4096);
    assert_true(r.oom_went_on);
    const live_item *it = find_item(&r.at_oom, 0x1000);
    assert_non_null(it);
    assert_int_not_equal(it->free_event, 0);
    assert_int_equal(it->phase_free, PHASE_BACKWARD);
    assert_null(find_item(&r.at_oom, 0x3000)); /* (the later failure's window's) */
    replay_free(&r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backward_oom_not_ended),
        cmocka_unit_test(test_oom_caught),
        cmocka_unit_test(test_oom_caught_next),
        cmocka_unit_test(test_oom_later_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
