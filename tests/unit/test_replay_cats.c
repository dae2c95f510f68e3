/* test_replay_cats.c — the category peaks' sweep of the replay (replay_cats.c) on small
 * hand-written traces: an allocation's category settled after its key was made (before the first
 * tensor, freed while it waits), the window holding about a step, the categories at the free, and
 * how long a run's first tensor is waited for. Traces are written with replay_trace.h. */
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

/* category peaks: an allocation whose category is settled after what its settle key was made
 * from changed (replay_cats.c: keys_from). A plain cudaMalloc in forward comes before the run's
 * first tensor, so its key says segment mode; nobody names it PyTorch's segment, so it waits 256
 * records, and by then the run is in tensor mode. Its key is redone: in tensor mode a device
 * allocation outside PyTorch's allocator freed within the forward is a temporary, not an
 * activation (what every forward segment is in segment mode). */
static void test_cat_peaks_key_redone(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    g_alloc_api = VT_API_cudaMalloc;
    g_free_api = VT_API_cudaFree;
    alloc(0, 0, 0x100000, 1 << 20, 2, 0); /* before any tensor */
    g_alloc_api = VT_API_cudaMallocAsync;
    g_free_api = VT_API_cudaFreeAsync;
    for (uint64_t i = 0; i < 200; i++) { /* tensors: 400 records */
        alloc(0, 0, 0x10000000 + i * 0x1000, 64, 2, 0);
        release(0, 0, 0x10000000 + i * 0x1000);
    }
    g_free_api = VT_API_cudaFree;
    release(0, 0, 0x100000); /* still in forward: a temporary */
    g_free_api = VT_API_cudaFreeAsync;
    replay_result r;
    replay_ended(path, &r);
    assert_true(r.tensor_mode);
    assert_true(r.has_cat_peaks);
    /* its key kept from before the first tensor would settle it as segment mode's forward
     * segment, an activation, whatever its end */
    assert_int_equal(r.cat_peak[CAT_ACTIVATIONS], 0);
    assert_int_equal(r.cat_peak[CAT_TEMPORARIES], (1 << 20) + 64);
    replay_free(&r);
    unlink(path);
}

/* category peaks wait for the run's first tensor during its first 65,536 events (each real trace
 * had it at its 3rd): segments (cudaMalloc pairs) until just before that, then a tensor: computed;
 * until just past it: left out, said why */
static void test_cat_peaks_first_tensor_late(void **st)
{
    (void)st;
    for (int late = 0; late < 2; late++) {
        char path[] = "/tmp/vt-replay-XXXXXX";
        begin_file(path);
        code(2, "/x/train.py", "Block.forward");
        stack(2, 2);
        g_alloc_api = VT_API_cudaMalloc;
        g_free_api = VT_API_cudaFree;
        uint64_t pairs = late ? 32768 + 50 : 32768 - 50; /* (2 events a pair) */
        for (uint64_t i = 0; i < pairs; i++) {
            alloc(0, 0, 0x100000 + (i % 64) * 0x100000, 1 << 20, 2, 0);
            release(0, 0, 0x100000 + (i % 64) * 0x100000);
        }
        g_alloc_api = VT_API_cudaMallocAsync;
        g_free_api = VT_API_cudaFreeAsync;
        for (uint64_t i = 0; i < 20; i++) {
            alloc(0, 0, 0x10000000 + i * 0x1000, 64, 2, 0);
            release(0, 0, 0x10000000 + i * 0x1000);
        }
        replay_result r;
        replay_ended(path, &r);
        assert_true(r.tensor_mode);
        assert_int_equal(r.has_cat_peaks, !late);
        if (late)
            assert_non_null(strstr(r.cat_peaks_lost, "after its first 65,536 events"));
        else
            assert_int_equal(r.cat_peak[CAT_TEMPORARIES], 64);
        replay_free(&r);
        unlink(path);
    }
}

/* category peaks: the same allocation freed while it still waits (20 tensors, 40 records): its
 * end's category is looked up by its key as it is now (tensor mode), not the one its allocation
 * got: that one names what a device allocation freed in forward before the first tensor is
 * (segment mode's forward segment, an activation: the 4 KiB one), which would answer for it */
static void test_cat_peaks_end_key_redone(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    g_alloc_api = VT_API_cudaMalloc;
    g_free_api = VT_API_cudaFree;
    alloc(0, 0, 0x100000, 1 << 20, 2, 0); /* before any tensor */
    alloc(0, 0, 0x300000, 4096, 2, 0);
    release(0, 0, 0x300000); /* in segment mode still */
    g_alloc_api = VT_API_cudaMallocAsync;
    g_free_api = VT_API_cudaFreeAsync;
    for (uint64_t i = 0; i < 20; i++) { /* tensors: 40 records */
        alloc(0, 0, 0x10000000 + i * 0x1000, 64, 2, 0);
        release(0, 0, 0x10000000 + i * 0x1000);
    }
    g_free_api = VT_API_cudaFree;
    release(0, 0, 0x100000); /* still in forward: a temporary */
    g_free_api = VT_API_cudaFreeAsync;
    alloc(0, 0, 0x20000000, 64, 2, 0); /* (its free is not the run's last: not kept to the end) */
    replay_result r;
    replay_ended(path, &r);
    assert_true(r.tensor_mode);
    assert_true(r.has_cat_peaks);
    assert_int_equal(r.cat_peak[CAT_ACTIVATIONS], 4096);
    assert_int_equal(r.cat_peak[CAT_TEMPORARIES], (1 << 20) + 64);
    replay_free(&r);
    unlink(path);
}

/* category peaks: the sweep's window holds about a step, not the run, when an allocation made in
 * the first forward lives to the end: the backward pass that began settles it (replay_cats.c
 * looks at the first waiting allocation again at each such change), so the records behind it
 * are swept step by step. 100 steps of 100 records: 10,000 records; the window stays at its
 * first size (4,096). */
/* category peaks: with nothing that changes (one backward pass's allocations, each settled at
 * its first look) the sweep still looks at the window's first record: FIRST_LOOK records after
 * it at the latest, not only at a change, so the 10,000 records are swept as they come and the
 * window stays at its first size (4,096), not the run's 16,384. */
static void test_cat_window_no_change(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0x100000, 4096, 2, 0); /* the forward's, before the backward pass */
    for (int k = 0; k < 10000; k++)    /* one backward pass, on the autograd thread */
        alloc(1, 1, 0x10000000 + (uint64_t)k * 0x1000, 32, 2, 0);
    replay_result r;
    replay_ended(path, &r);
    assert_true(r.has_cat_peaks);
    assert_int_equal(r.backward_passes, 1);
    assert_int_equal(r.cat_window, 4096);
    replay_free(&r);
    unlink(path);
}

static void test_cat_window_a_step(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    code(4, "/x/torch/optim/adamw.py", "AdamW.step");
    stack(2, 2);
    stack(4, 4);
    alloc(0, 0, 0x100000, 4096, 2, 0); /* made in the first forward, alive to the end */
    uint64_t a = 0x10000000;
    for (int step = 0; step < 100; step++) {
        for (int k = 0; k < 25; k++) { /* forward: activations, freed in the backward */
            alloc(0, 0, a + (uint64_t)k * 0x1000, 64, 2, 0);
        }
        for (int k = 0; k < 25; k++) { /* backward, on the autograd thread */
            alloc(1, 1, a + 0x100000 + (uint64_t)k * 0x1000, 32, 0, 0);
            release(1, 1, a + (uint64_t)k * 0x1000);
        }
        for (int k = 0; k < 25; k++) /* the optimizer step frees the gradients */
            release(0, 0, a + 0x100000 + (uint64_t)k * 0x1000);
        a += 0x1000000;
    }
    replay_result r;
    replay_ended(path, &r);
    assert_true(r.has_cat_peaks);
    assert_true(r.backward_passes >= 100);
    assert_int_equal(r.cat_window, 4096);
    assert_int_equal(r.cat_peak[CAT_ACTIVATIONS], 4096 + 25 * 64);
    replay_free(&r);
    unlink(path);
}

/* categories at the free: two segments (cudaMalloc, beside tensors) the forward made alike,
 * one freed by the autograd thread before the backward made anything (kept for it: an
 * activation), one freed in the forward (a temporary): only the phase of their frees differs,
 * and the second is not given the first's answer (replay_cats.c keys the lifetimes that ended by
 * their allocation's features and their end's). */
static void test_end_categories(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0x1000, 64, 2, 0); /* a tensor: tensor mode */
    g_alloc_api = VT_API_cudaMalloc;
    g_free_api = VT_API_cudaFree;
    alloc(0, 0, 0x100000, 1 << 20, 2, 0);
    release(1, 1, 0x100000); /* freed by the backward */
    alloc(0, 0, 0x200000, 1 << 20, 2, 0);
    release(0, 0, 0x200000); /* freed in the forward */
    g_alloc_api = VT_API_cudaMallocAsync;
    g_free_api = VT_API_cudaFreeAsync;
    alloc(0, 0, 0x2000, 64, 2, 0);
    replay_result r;
    replay_ended(path, &r);
    assert_true(r.has_cat_peaks);
    assert_int_equal(r.cat_peak[CAT_TEMPORARIES], 1 << 20);
    assert_true(r.cat_peak[CAT_ACTIVATIONS] >= 1 << 20);
    replay_free(&r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cat_peaks_key_redone),
                                       cmocka_unit_test(test_cat_peaks_end_key_redone),
                                       cmocka_unit_test(test_cat_window_a_step),
                                       cmocka_unit_test(test_cat_window_no_change),
                                       cmocka_unit_test(test_end_categories),
                                       cmocka_unit_test(test_cat_peaks_first_tensor_late)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
