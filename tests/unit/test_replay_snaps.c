/* test_replay_snaps.c — the replay's snapshots and phases beyond the training shape
 * (test_replay.c): the optimizer step's snapshot, the allocations freed after each snapshot's
 * moment kept once for all three, and PyTorch's allocator giving segments back after the last
 * step (a free's phase, no slice of its own). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "exit_codes.h"
#include "replay.h"
#include "replay_trace.h"
#include "vramtrace/trace_chunked.h"
#include "timeline.h"

/* scene: a trace begun for path (a mkstemp template) with three one-frame stacks (1 a module's
 * .to: init, 2 a block's forward, 4 AdamW's step) and the parameters' 100 bytes (stack 1); with
 * backward, one forward and backward after it: a 500-byte activation freed by the autograd
 * engine, which made a 100-byte gradient at 0x3000 */
static void scene(char *path, int backward)
{
    begin_file(path);
    code(1, "/x/torch/nn/modules/module.py", "Module.to");
    code(2, "/x/train.py", "Block.forward");
    code(4, "/x/torch/optim/adamw.py", "AdamW.step");
    stack(1, 1);
    stack(2, 2);
    stack(4, 4);
    alloc(0, 0, 0x1000, 100, 1, 0); /* parameters */
    if (!backward)
        return;
    alloc(0, 0, 0x2000, 500, 2, 0); /* an activation, freed in backward */
    alloc(1, 1, 0x3000, 100, 0, 0); /* the gradient */
    release(1, 1, 0x2000);
}

/* the tensors at their largest in an optimizer step (at_step): the weights, their gradients,
 * the optimizer's state and the step's temporaries, including what was freed after that moment
 * (the gradients at zero_grad, the temporary), not a later forward's tensors nor a later smaller
 * step */
static void test_step_snapshot(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    scene(path, 0);
    uint64_t a = 0x10000;
    for (int step = 0; step < 2; step++) {
        alloc(0, 0, a + 0x100, 500, 2, 0); /* an activation, freed in backward */
        alloc(1, 1, a + 0x200, 100, 0, 0); /* the gradient */
        release(1, 1, a + 0x100);
        if (step == 0)
            alloc(0, 0, 0x2000, 200, 4, 0);           /* the state, made by the first step */
        alloc(0, 0, a + 0x300, step ? 40 : 64, 4, 0); /* the step's temporary */
        release(0, 0, a + 0x300);
        release(0, 0, a + 0x200); /* zero_grad */
        a += 0x1000;
    }
    replay_result r;
    replay_ended(path, &r);
    assert_int_equal(r.peak_allocated, 900); /* step 2's backward: the state beside */
    assert_int_equal(r.peak_step, 464);      /* params, gradient, state, temporary */
    assert_int_equal(cat_breakdown_total(&r.at_step.by_cat), 464);
    assert_int_equal(r.at_step.by_cat.bytes[CAT_PARAMETERS], 100);
    assert_int_equal(r.at_step.by_cat.bytes[CAT_GRADIENTS], 100);
    assert_int_equal(r.at_step.by_cat.bytes[CAT_OPTIMIZER], 200);
    assert_int_equal(r.at_step.by_cat.bytes[CAT_TEMPORARIES], 64);
    assert_int_equal(r.at_step.by_cat.bytes[CAT_ACTIVATIONS], 0);
    replay_free(&r);
    unlink(path);
}

/* test_kept_snapshots: more allocations freed after the snapshots' moments than the replay keeps
 * room for at first: a step's 1500 temporaries, freed after the step's largest moment, then a
 * forward of 2000 that moves the peaks past it and frees them all; each snapshot holds exactly
 * what was live at its moment (its total is its peak), the step's too once the peaks moved on */
static void test_kept_snapshots(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    scene(path, 1);
    for (uint64_t i = 0; i < 1500; i++) /* the step's temporaries: its largest moment at the last */
        alloc(0, 0, 0x100000 + i * 0x100, 8, 4, 0);
    for (uint64_t i = 0; i < 1500; i++)
        release(0, 0, 0x100000 + i * 0x100);
    release(0, 0, 0x3000);              /* zero_grad */
    for (uint64_t i = 0; i < 2000; i++) /* the next forward: the peaks move past the step */
        alloc(0, 0, 0x400000 + i * 0x100, 8, 2, 0);
    for (uint64_t i = 0; i < 2000; i++)
        release(0, 0, 0x400000 + i * 0x100);
    replay_result r;
    replay_ended(path, &r);
    assert_int_equal(r.peak_step, 100 + 100 + 1500 * 8);
    assert_int_equal(cat_breakdown_total(&r.at_step.by_cat), r.peak_step);
    assert_int_equal(r.peak_allocated, 100 + 2000 * 8);
    assert_int_equal(cat_breakdown_total(&r.at_tensors.by_cat), r.peak_allocated);
    assert_int_equal(r.peak_process, r.peak_allocated);
    assert_int_equal(cat_breakdown_total(&r.at_peak.by_cat), r.peak_process);
    assert_int_equal(r.at_peak.n, 1 + 2000);
    replay_free(&r);
    unlink(path);
}

/* test_segment_release_phase: PyTorch's allocator giving segments back after the last step
 * (empty_cache under a teardown: ALLOC records, a stack with no phase in it) takes a free's phase
 * and begins no slice: lit_gpt2_b4_fit's teardown was drawn as a forward holding 8.82 GiB */
static void test_segment_release_phase(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    scene(path, 1);
    code(5, "/x/torch/cuda/memory.py", "empty_cache");
    stack(5, 5);
    alloc(0, 0, 0x4000, 200, 4, 0); /* the optimizer's state */
    g_alloc_api = VT_API_torchSegmentFree;
    alloc(0, 0, 0x9000000, 2 << 20, 5, 0);
    alloc(0, 0, 0xa000000, 2 << 20, 5, 0);
    g_alloc_api = VT_API_cudaMallocAsync;
    timeline_segments = 1;
    replay_result r;
    replay_ended(path, &r);
    timeline_segments = 0;
    assert_non_null(r.tl);
    int opt = 0;
    for (size_t i = 0; i < r.tl->nslices; i++) {
        const timeline_slice *sl = &r.tl->slices[i];
        if (sl->thread == 0 && sl->phase == PHASE_OPTIMIZER)
            opt = 1;
        assert_false(opt && sl->thread == 0 && sl->phase == PHASE_FORWARD);
    }
    assert_true(opt);
    assert_int_equal(r.iterations, 1);
    replay_free(&r);
    unlink(path);
}

/* test_join_gap_free: a chunked trace's events were dropped mid-backward; the join after the gap
 * frees what ended in it (a FREE on the program's thread at the snapshot: reader_snapjoin.c), here
 * a backward's parameter-sized temporary. That is no program's free: no zero_grad, so no optimizer
 * step, and it ends as at the gap's start, in its backward (a temporary, not a gradient: a bounded
 * nanoGPT run had counted 621.8 MiB of gradients for 474.4, and one step more) */
static void test_join_gap_free(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    scene(path, 0);
    alloc(0, 0, 0x2000, 500, 2, 0); /* an activation */
    alloc(1, 1, 0x3000, 100, 0, 0); /* the gradient, alive to the end */
    alloc(1, 1, 0x4000, 100, 0, 0); /* a temporary of the gradient's size, ended in the gap */
    release(1, 1, 0x2000);
    vt_rec_snapshot snap = {VT_TT_MAKE(900000, 0), 10, 4, 20000, 900000, 1, 0};
    rec(VT_REC_SNAPSHOT, 0, &snap, sizeof snap, NULL, 0);
    release(0, 0, 0x4000);          /* the join's free of it */
    alloc(0, 0, 0x5000, 500, 2, 0); /* the next forward */
    release(0, 0, 0x5000);
    replay_result r;
    replay_ended(path, &r);
    assert_int_equal(r.iterations, 0);
    assert_true(r.has_cat_peaks);
    assert_int_equal(r.cat_peak[CAT_GRADIENTS], 100);
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 100);
    replay_free(&r);
    unlink(path);
}

/* test_join_gap_free_actions: the same join's free of a stream-ordered tensor (cudaMallocAsync)
 * that ended in the gap is in memory_viz's device trace too, its free and its segment's, as
 * PyTorch's tracker's frees at a join are (it had stayed made there to the trace's end, beside a
 * snapshot without it) */
static void test_join_gap_free_actions(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    timeline_segments = timeline_actions = 1;
    scene(path, 0);
    alloc(0, 0, 0x2000, 500, 2, 0);
    alloc(1, 1, 0x4000, 100, 0, 0); /* ended in the gap */
    release(1, 1, 0x2000);
    vt_rec_snapshot snap = {VT_TT_MAKE(900000, 0), 10, 4, 20000, 900000, 1, 0};
    rec(VT_REC_SNAPSHOT, 0, &snap, sizeof snap, NULL, 0);
    release(0, 0, 0x4000); /* the join's free of it */
    replay_result r;
    replay_ended(path, &r);
    timeline_segments = timeline_actions = 0;
    assert_non_null(r.tl);
    int made = 0, freed = 0, seg_freed = 0;
    for (size_t i = 0; i < r.tl->ring_n; i++) {
        const timeline_action *a = timeline_ring_at(r.tl, i);
        if (a->addr != 0x4000)
            continue;
        made += a->kind == TL_ALLOC;
        freed += a->kind == TL_FREE && a->size == 100;
        seg_freed += a->kind == TL_SEGMENT_FREE && a->size == 100;
    }
    assert_int_equal(made, 1);
    assert_int_equal(freed, 1);
    assert_int_equal(seg_freed, 1);
    replay_free(&r);
    unlink(path);
}

/* join_after_steps: three optimizer steps of accum backward passes each (an activation, a
 * gradient per step at the first, a temporary of its size added into it at the later ones, the
 * zero_grad; with temp, each pass also makes and frees a parameter-sized temporary after the
 * gradient, temp events later), then a gap of dropped events cut the fourth step's backward pass
 * number `cut` (1-based) with its parameter-sized tensors alive; the gap dropped gap events; the
 * replay's category peaks into r */
static void join_after_steps(int accum, int cut, uint64_t gap, int temp, replay_result *r)
{
    char path[] = "/tmp/vt-replay-XXXXXX";
    scene(path, 0);
    uint64_t a = 0x10000, events = 1;
    for (int step = 0; step < 4; step++) {
        for (int m = 1; m <= accum; m++) {
            alloc(0, 0, a + 0x100, 500, 2, 0);               /* an activation, freed in backward */
            alloc(1, 1, a + 0x200 + (uint64_t)m, 100, 0, 0); /* the gradient, or its addend */
            release(1, 1, a + 0x100);
            events += 3;
            for (int k = 1; k < temp; k++) /* (the temporary later by temp events) */
                alloc(1, 1, a + 0x400 + (uint64_t)k, 8, 0, 0), events++;
            if (temp)
                alloc(1, 1, a + 0x300, 100, 0, 0), events++; /* a temporary of its size */
            if (step == 3 && m == cut)
                break;
            if (temp)
                release(1, 1, a + 0x300), events++;
            for (int k = 1; k < temp; k++)
                release(1, 1, a + 0x400 + (uint64_t)k), events++;
            if (m > 1) /* (added into the gradient) */
                release(1, 1, a + 0x200 + (uint64_t)m), events++;
        }
        if (step == 3)
            break;
        release(0, 0, a + 0x201); /* zero_grad */
        events++;
        a += 0x1000;
    }
    /* the join: the parameters live on; what was cut ended in the gap */
    /* (n_allocs: the join's records after it, as the reader makes them: its frees, the live) */
    vt_rec_snapshot snap = {VT_TT_MAKE(900000, 0),
                            events + gap,
                            gap,
                            20000,
                            900000,
                            (cut > 1 ? 3 : 2) + (temp ? (uint64_t)temp : 0),
                            100};
    rec(VT_REC_SNAPSHOT, 0, &snap, sizeof snap, NULL, 0);
    if (cut > 1)
        release(0, 0, a + 0x201);
    release(0, 0, a + 0x200 + (uint64_t)cut);
    if (temp)
        release(0, 0, a + 0x300);
    for (int k = 1; k < temp; k++)
        release(0, 0, a + 0x400 + (uint64_t)k);
    alloc(0, 0, 0x1000, 100, 1, 0); /* (the snapshot's: the parameters, as they were) */
    replay_ended(path, r);
    unlink(path);
}

/* test_join_gap_steps: a gap longer than any step held a step's zero_grad: the first backward's
 * parameter-sized tensor that ended in it was that step's gradient (a bounded nanoGPT-style run
 * had counted its gradients as backward temporaries: "backward 128 MiB" where the run's largest
 * was 30); a later micro-step's was the temporary added into the gradient, and a gap shorter
 * than a step held no zero_grad (both temporaries, as before) */
static void test_join_gap_steps(void **st)
{
    (void)st;
    replay_result r;
    join_after_steps(1, 1, 1000, 0, &r); /* first backward, whole steps dropped: a gradient */
    assert_int_equal(r.cat_peak[CAT_GRADIENTS], 100);
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 0);
    assert_int_equal(r.accum, 1);
    replay_free(&r);
    join_after_steps(1, 1, 2, 0, &r); /* a gap shorter than a step: no zero_grad in it */
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 100);
    replay_free(&r);
    join_after_steps(2, 2, 1000, 0, &r); /* the second micro-step's: the temporary */
    assert_int_equal(r.cat_peak[CAT_GRADIENTS], 100);
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 100);
    assert_int_equal(r.accum, 2);
    replay_free(&r);
}

/* test_join_gap_temporary: the pass the gap cut had, beside its gradient, a parameter-sized
 * tensor alive where every whole first pass freed its temporary (same offset, same size): a
 * temporary, not a second gradient (a bounded simulated run had counted 2.23 MiB of gradients for
 * 2.13, 1 run in ~10); a first pass learnt only from whole ones: with the temporary at another
 * offset in the cut pass than in the whole ones, the size alone decides (a gradient) */
static void test_join_gap_temporary(void **st)
{
    (void)st;
    replay_result r;
    join_after_steps(1, 1, 1000, 1, &r);
    assert_int_equal(r.cat_peak[CAT_GRADIENTS], 100);
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 100);
    replay_free(&r);
    join_after_steps(1, 1, 1000, 3, &r); /* (further from the pass's start: the same) */
    assert_int_equal(r.cat_peak[CAT_GRADIENTS], 100);
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 100 + 2 * 8);
    replay_free(&r);
    join_after_steps(2, 1, 1000, 1, &r); /* accumulation: the first pass cut, learnt from firsts */
    assert_int_equal(r.cat_peak[CAT_GRADIENTS], 100);
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 200); /* (a later pass's addend and temporary) */
    replay_free(&r);
}

/* pass: a backward pass at a: an activation freed in it, the gradient (alive), a temporary of the
 * gradient's size freed in it unless the pass is cut there (5 events, 4 when cut) */
static void pass(uint64_t a, int cut)
{
    alloc(0, 0, a + 0x100, 500, 2, 0);
    alloc(1, 1, a + 0x201, 100, 0, 0);
    release(1, 1, a + 0x100);
    alloc(1, 1, a + 0x300, 100, 0, 0);
    if (!cut)
        release(1, 1, a + 0x300);
}

/* test_join_gap_twice: two gaps, each cutting a first backward pass with its temporary alive, the
 * second the pass right after the first join: what the first cut pass freed before its gap is not
 * what a whole pass frees, so the second join still learns from the last whole pass (the
 * temporary stays one: gradients 100, not 200) */
static void test_join_gap_twice(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    scene(path, 0);
    uint64_t a = 0x10000, events = 1;
    for (int step = 0; step < 3; step++, a += 0x1000) {
        pass(a, 0);
        release(0, 0, a + 0x201); /* zero_grad */
        events += 6;
    }
    pass(a, 1);
    events += 4;
    vt_rec_snapshot snap = {VT_TT_MAKE(900000, 0), events + 1000, 1000, 20000, 900000, 3, 100};
    rec(VT_REC_SNAPSHOT, 0, &snap, sizeof snap, NULL, 0);
    release(0, 0, a + 0x201), release(0, 0, a + 0x300); /* (ended in the gap) */
    alloc(0, 0, 0x1000, 100, 1, 0);                     /* (the parameters, as they were) */
    events += 1000;
    a += 0x1000;
    alloc(0, 0, 0x9000, 50, 4, 0); /* an optimizer step's state: a step */
    pass(a, 1);
    events += 5;
    vt_rec_snapshot snap2 = {VT_TT_MAKE(1900000, 0), events + 1000, 2000, 20000, 1900000, 4, 150};
    rec(VT_REC_SNAPSHOT, 0, &snap2, sizeof snap2, NULL, 0);
    release(0, 0, a + 0x201), release(0, 0, a + 0x300);
    alloc(0, 0, 0x1000, 100, 1, 0), alloc(0, 0, 0x9000, 50, 4, 0);
    replay_result r;
    replay_ended(path, &r);
    unlink(path);
    assert_int_equal(r.cat_peak[CAT_GRADIENTS], 100);
    assert_int_equal(r.cat_peak[CAT_BACKWARD], 100);
    replay_free(&r);
}

/* at the process peak's level, a later moment with more tensor bytes than that peak's first had
 * (but fewer than the tensors' own peak, reached before) is the peak's moment: its cache is what
 * the tensors then leave of the segments */
static void test_peak_moment_later_tensor(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    const uint64_t seg[2] = {0x10000000, 0x20000000}, mib[2] = {8, 20};
    for (int i = 0; i < 2; i++) {
        g_alloc_api = VT_API_cudaMalloc;
        alloc(0, 0, seg[i], mib[i] << 20, 2, 0);
        g_alloc_api = VT_API_torchSegmentAlloc;
        alloc(0, 0, seg[i], mib[i] << 20, 2, 0);
        g_alloc_api = VT_API_torchAlloc;
        g_free_api = VT_API_torchFree;
        alloc(0, 0, seg[i], (i ? 4ull : 6ull) << 20, 2, 0); /* 6 MiB, freed; then 4 MiB */
        if (!i)
            release(0, 0, seg[i]);
    }
    end(path);
    g_alloc_api = VT_API_cudaMallocAsync;
    g_free_api = VT_API_cudaFreeAsync;
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_int_equal(r.peak_allocated, 6 << 20);
    assert_int_equal(r.peak_process, 28 << 20);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_CACHE], 24 << 20);
    replay_free(&r);
    unlink(path);
}

/* so many of PyTorch's segments that the snapshot finds a tensor's through a table of 2 MiB
 * pieces (replay_snap.c's torch_cache; a segment names its first 64): 1,099 segments of 2 MiB
 * 34 MiB apart, a 1 MiB tensor in each, then one of 1 GiB with 300 tensors of 1 MiB past its
 * first 128 MiB, 36 of whose pieces' slots name small segments before it: each tensor is taken
 * out of its own segment's cache, not left out of every one */
static void test_many_segments_cache(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    const uint64_t base = 0x100000000ull, n = 1099, step = 34 << 20, big = base + n * step;
    for (uint64_t i = 0; i <= n; i++) {
        uint64_t a = base + i * step, size = i < n ? 2 << 20 : 1ull << 30;
        g_alloc_api = VT_API_cudaMalloc;
        alloc(0, 0, a, size, 2, 0);
        g_alloc_api = VT_API_torchSegmentAlloc;
        alloc(0, 0, a, size, 2, 0);
        g_alloc_api = VT_API_torchAlloc;
        for (uint64_t j = 0; j < (i < n ? 1 : 300); j++)
            alloc(0, 0, i < n ? a : big + (128ull << 20) + j * (2 << 20), 1 << 20, 2, 0);
    }
    end(path);
    g_alloc_api = VT_API_cudaMallocAsync;
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_CACHE], (n + 1024 - 300) << 20);
    replay_free(&r);
    unlink(path);
}

/* a SNAPSHOT whose n_allocs says more allocations follow it than do (a definition, then the
 * program's own events, come where its live set should be): malformed (exit 3). The replay had
 * taken the program's events after it as the snapshot's join records, exit 0 (a plain trace with
 * such a record: its categories' peaks other numbers, the report "(ok)") */
static void test_snapshot_count_lies(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    scene(path, 0);
    vt_rec_snapshot snap = {VT_TT_MAKE(900000, 0), 10, 4, 20000, 900000, 1000, 100};
    rec(VT_REC_SNAPSHOT, 0, &snap, sizeof snap, NULL, 0);
    alloc(0, 0, 0x1000, 100, 1, 0); /* (the one the snapshot holds) */
    code(5, "/x/train.py", "Head.forward");
    stack(5, 5);
    alloc(0, 0, 0x6000, 300, 5, 0); /* the program's own */
    release(0, 0, 0x6000);
    end(path);
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), VT_EXIT_MALFORMED);
    assert_non_null(strstr(err, "where a SNAPSHOT before it said its allocations are"));
    replay_free(&r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_step_snapshot),
                                       cmocka_unit_test(test_kept_snapshots),
                                       cmocka_unit_test(test_segment_release_phase),
                                       cmocka_unit_test(test_join_gap_free),
                                       cmocka_unit_test(test_join_gap_free_actions),
                                       cmocka_unit_test(test_join_gap_steps),
                                       cmocka_unit_test(test_join_gap_temporary),
                                       cmocka_unit_test(test_join_gap_twice),
                                       cmocka_unit_test(test_peak_moment_later_tensor),
                                       cmocka_unit_test(test_many_segments_cache),
                                       cmocka_unit_test(test_snapshot_count_lies)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
