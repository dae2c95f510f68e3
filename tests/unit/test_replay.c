/* test_replay.c — replay on small hand-written traces: levels and peaks, phases from Python
 * frames, lifetimes (an activation freed in backward, a temporary freed in forward), the
 * categories at the peak and at an unrecovered OOM, the allocated peak in PyTorch's blocks,
 * truncated and malformed files (the category peaks: test_replay_cats.c; out-of-memory errors
 * the program caught and went on from: test_replay_oom.c). Traces are written with
 * replay_trace.h (trace_enc.h). */
#include <glob.h>
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

/* write_trace: the training-shaped scenario; trailer = 0 leaves it truncated. */
static void write_trace(const char *path, int trailer)
{
    begin();
    code(1, "/x/torch/nn/modules/module.py", "Module.to");
    code(2, "/x/train.py", "Block.forward");
    code(3, "/x/torch/nn/functional.py", "cross_entropy");
    code(4, "/x/torch/optim/adamw.py", "AdamW.step");
    for (uint32_t i = 1; i <= 4; i++)
        stack(i, i);
    alloc(0, 0, 0x1000, 100, 1, 0); /* parameters */
    alloc(0, 0, 0x2000, 200, 2, 0); /* activation: freed in backward */
    alloc(0, 0, 0x3000, 50, 2, 0);  /* temporary: freed in forward */
    release(0, 0, 0x3000);
    alloc(0, 0, 0x4000, 300, 3, 0); /* logits / loss */
    alloc(1, 1, 0x5000, 100, 0, 0); /* gradient, on the autograd thread: the peak (700) */
    release(1, 1, 0x2000);
    alloc(0, 0, 0x6000, 150, 4, 0); /* AdamW state */
    alloc(0, 0, 0, 1000, 2, 2);     /* out of memory, never recovered */
    if (trailer) {
        vt_rec_trailer t = {200000, 9, 0, 20, 0, 0};
        rec(VT_REC_TRAILER, 0, &t, sizeof t, NULL, 0);
    }
    end(path);
}

static void test_training_shape(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    write_trace(path, 1);
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_int_equal(r.status, READER_OK);
    assert_true(r.tensor_mode);
    assert_int_equal(r.peak_allocated, 700);
    assert_int_equal(r.peak_process, 700);
    assert_int_equal(r.iterations, 1);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_PARAMETERS], 100);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_ACTIVATIONS], 200);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_LOGITS], 300);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_GRADIENTS], 100);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_TEMPORARIES], 0); /* freed before the peak */
    assert_int_equal(cat_breakdown_total(&r.at_peak.by_cat), r.peak_process);
    assert_true(r.has_oom);
    assert_int_equal(r.oom_requested, 1000);
    assert_int_equal(r.at_oom.by_cat.bytes[CAT_OPTIMIZER], 150);
    assert_int_equal(r.at_oom.by_cat.bytes[CAT_ACTIVATIONS], 0);
    assert_int_equal(cat_breakdown_total(&r.at_oom.by_cat), 650);
    assert_int_equal(r.phase_peak[PHASE_BACKWARD], 700);
    char site[256];
    replay_site_text(&r, 2, site, sizeof site);
    assert_non_null(strstr(site, "Block.forward"));
    replay_free(&r);
    /* truncated: no trailer, same content, status truncated */
    write_trace(path, 0);
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_int_equal(r.status, READER_TRUNCATED);
    assert_int_equal(r.peak_process, 700);
    replay_free(&r);
    unlink(path);
}

/* gradient accumulation seen in the steps: counts[i] forward+backward micro-steps, then an
 * optimizer step; every step alike gives A, any difference none. */
static void accum_trace(const char *path, const int *counts, int nsteps)
{
    begin();
    code(2, "/x/train.py", "Block.forward");
    code(4, "/x/torch/optim/adamw.py", "AdamW.step");
    stack(2, 2);
    stack(4, 4);
    uint64_t a = 0x10000;
    for (int i = 0; i < nsteps; i++) {
        for (int k = 0; k < counts[i]; k++) {
            alloc(0, 0, a += 0x1000, 64, 2, 0); /* forward */
            alloc(1, 1, a += 0x1000, 64, 0, 0); /* backward, on the autograd thread */
        }
        alloc(0, 0, a += 0x1000, 64, 4, 0); /* the optimizer step */
    }
    vt_rec_trailer t = {200000, 9, 0, 20, 0, 0};
    rec(VT_REC_TRAILER, 0, &t, sizeof t, NULL, 0);
    end(path);
}

static void test_accumulation(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    replay_result r;
    char err[256];
    const int same[] = {2, 2, 2}, differ[] = {2, 3}, one[] = {4};
    accum_trace(path, same, 3);
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_int_equal(r.iterations, 3);
    assert_int_equal(r.backward_passes, 6);
    assert_int_equal(r.accum, 2);
    assert_int_equal(r.accum_steps, 3);
    replay_free(&r);
    accum_trace(path, differ, 2);
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_int_equal(r.iterations, 2);
    assert_int_equal(r.accum, 0); /* 2 then 3: no single A */
    replay_free(&r);
    accum_trace(path, one, 1);
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_int_equal(r.accum, 4);
    assert_int_equal(r.accum_steps, 1);
    replay_free(&r);
    unlink(path);
}

/* segment mode, PyTorch's OOM retry: a request fails, the allocator frees its cached segment,
 * the request fails again: that segment is the allocator cache at the OOM. */
static void test_segment_oom_cache(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    g_alloc_api = VT_API_cudaMalloc;
    g_free_api = VT_API_cudaFree;
    begin();
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0x1000, 2 << 20, 2, 0);  /* a segment in use */
    alloc(0, 0, 0x9000, 20 << 20, 2, 0); /* a segment that will be cached */
    alloc(0, 0, 0, 64 << 20, 2, 2);      /* fails */
    release(0, 0, 0x9000);               /* the allocator releases its cache */
    alloc(0, 0, 0, 64 << 20, 2, 2);      /* fails again: OOM */
    end(path);
    g_alloc_api = VT_API_cudaMallocAsync;
    g_free_api = VT_API_cudaFreeAsync;
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_true(r.segment_mode);
    assert_true(r.has_oom);
    assert_true(r.oom_pytorch_pattern);
    assert_int_equal(r.oom_cache_released, 20 << 20);
    assert_int_equal(r.at_oom.by_cat.bytes[CAT_CACHE], 20 << 20);
    assert_int_equal(r.at_oom.by_cat.bytes[CAT_ACTIVATIONS], 2 << 20);
    replay_free(&r);
    unlink(path);
}

/* tensor+segment: the allocator tracker's segments and tensors give the allocated peak in
 * PyTorch's blocks (blocks.c) under the run's recorded PYTORCH_CUDA_ALLOC_CONF: with
 * max_split_size_mb:2 a 3 MiB tensor keeps its whole 20 MiB segment (default rules: 3 MiB). */
static void test_allocator_blocks(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    vt_rec_process p = {77, 1, 1, 1, 5555};
    const char *ps[] = {"/usr/bin/python3", "/cwd", "host", "train.py",
                        "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:2"};
    rec(VT_REC_PROCESS, 0, &p, sizeof p, ps, 5);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    g_alloc_api = VT_API_cudaMalloc;
    alloc(0, 0, 0x10000000, 20 << 20, 2, 0);
    g_alloc_api = VT_API_torchSegmentAlloc;
    alloc(0, 0, 0x10000000, 20 << 20, 2, 0);
    g_alloc_api = VT_API_torchAlloc;
    g_free_api = VT_API_torchFree;
    alloc(0, 0, 0x10000000, 3 << 20, 2, 0);
    release(0, 0, 0x10000000);
    alloc(0, 0, 0x10000000, 100, 2, 0); /* a 512 B block: the peak stays */
    end(path);
    g_alloc_api = VT_API_cudaMallocAsync;
    g_free_api = VT_API_cudaFreeAsync;
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_true(r.allocator_mode);
    assert_int_equal(r.peak_allocated, 3 << 20);
    assert_int_equal(r.peak_allocated_blocks, 20 << 20);
    assert_int_equal(r.blocks_basis, BLOCKS_BASIS_CONFIGURED);
    assert_int_equal(r.blocks_unplaced, 0);
    /* the segment reached the process peak one event before its tensor: the breakdown is taken
     * at the same level with the tensor placed (3 MiB of tensors, 17 MiB of cache) */
    assert_int_equal(r.peak_process, 20 << 20);
    assert_int_equal(r.at_peak.by_cat.bytes[CAT_CACHE], 17 << 20);
    assert_int_equal(cat_breakdown_total(&r.at_peak.by_cat), 20 << 20);
    replay_free(&r);
    unlink(path);
}

/* a tensor's free of PyTorch's tracker in an ALLOC record (a malformed trace: the reader takes
 * any API in either record) frees its block as a FREE record's does: the blocks' free is not
 * left to apply_free, which an ALLOC record never reaches (a second 4 MiB tensor after it: the
 * allocated peak 4 MiB, not 8) */
static void test_allocator_free_in_alloc(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    g_alloc_api = VT_API_cudaMalloc;
    alloc(0, 0, 0x10000000, 20 << 20, 2, 0);
    g_alloc_api = VT_API_torchSegmentAlloc;
    alloc(0, 0, 0x10000000, 20 << 20, 2, 0);
    g_alloc_api = VT_API_torchAlloc;
    alloc(0, 0, 0x10000000, 4 << 20, 2, 0);
    g_alloc_api = VT_API_torchFree;
    alloc(0, 0, 0x10000000, 0, 2, 0);
    g_alloc_api = VT_API_torchAlloc;
    alloc(0, 0, 0x10400000, 4 << 20, 2, 0);
    end(path);
    g_alloc_api = VT_API_cudaMallocAsync;
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    assert_true(r.allocator_mode);
    assert_int_equal(r.peak_allocated_blocks, 4 << 20);
    replay_free(&r);
    unlink(path);
}

/* an evaluation's weights freed as the program exits (no gradient was ever freed, nothing
 * allocated after them) are parameters for the category peaks; one the program freed and went
 * on (goes_on: an allocation after it) is not: held back until the next allocation or the end
 * tells which (classified at its free, it was taken for kept to the end) */
static void exit_frees_trace(int goes_on, replay_result *r)
{
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(1, "/x/torch/nn/modules/module.py", "Module.to");
    code(2, "/x/eval.py", "Block.forward");
    stack(1, 1);
    stack(2, 2);
    alloc(0, 0, 0x1000, 4096, 1, 0); /* a weight */
    alloc(0, 0, 0x2000, 8192, 2, 0); /* the forward's */
    release(0, 0, 0x2000);
    alloc(0, 0, 0x3000, 512, 2, 0);
    release(0, 0, 0x3000);
    release(0, 0, 0x1000); /* the exit, or not */
    if (goes_on)
        alloc(0, 0, 0x4000, 256, 2, 0);
    replay_ended(path, r);
    unlink(path);
}

static void test_exit_frees_weights(void **st)
{
    (void)st;
    replay_result r;
    exit_frees_trace(0, &r);
    assert_true(r.has_cat_peaks);
    assert_int_equal(r.cat_peak[CAT_PARAMETERS], 4096);
    replay_free(&r);
    exit_frees_trace(1, &r);
    assert_true(r.has_cat_peaks);
    assert_int_equal(r.cat_peak[CAT_PARAMETERS], 0);
    replay_free(&r);
}

static void test_bad_files(void **st)
{
    (void)st;
    replay_result r;
    char err[256] = "";
    assert_int_equal(replay_file("/nonexistent/x.vt", &r, err, sizeof err), 2);
    assert_true(err[0] != '\0');
    replay_free(&r);
    char path[] = "/tmp/vt-replay-XXXXXX";
    int fd = mkstemp(path);
    assert_int_equal(write(fd, "NOTATRACEFILE-NOTATRACEFILE-NOTA", 32), 32);
    close(fd);
    assert_int_equal(replay_file(path, &r, err, sizeof err), 3);
    replay_free(&r);
    unlink(path);
}

/* kv_trace: a tensor of `first` bytes made and freed before any cache tensor, then 300 B, the
 * cache's 500 (800 live, 300 without it), 400 B (1200 live: the peak, 700 without it), the cache
 * freed, 150 B (850 live, all without it); replayed into *r */
static void kv_trace(uint64_t first, replay_result *r)
{
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(2, "/x/train.py", "Block.forward");
    code(5, "/x/site-packages/transformers/cache_utils.py", "DynamicLayer.update");
    stack(2, 2);
    stack(5, 5);
    alloc(0, 0, 0x1000, first, 2, 0);
    release(0, 0, 0x1000);
    alloc(0, 0, 0x2000, 300, 2, 0);
    alloc(0, 0, 0x3000, 500, 5, 0);
    alloc(0, 0, 0x4000, 400, 2, 0);
    release(0, 0, 0x3000);
    alloc(0, 0, 0x5000, 150, 2, 0);
    replay_ended(path, r);
    unlink(path);
}

/* the tensors at their largest without transformers' KV cache (tensors_no_kv_peak): before the
 * first cache tensor, the tensors' own largest; after it, the live tensors less the cache's, over
 * every allocation (not only at the peak); 0 in a trace with no cache */
static void test_no_kv_peak(void **st)
{
    (void)st;
    replay_result r;
    kv_trace(1000, &r);
    assert_int_equal(r.peak_allocated, 1200);
    assert_int_equal(r.tensors_no_kv_peak, 1000); /* the first tensor's moment */
    replay_free(&r);
    kv_trace(500, &r); /* the largest after the cache: 850, once it was freed */
    assert_int_equal(r.tensors_no_kv_peak, 850);
    replay_free(&r);

    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path); /* no cache: not computed */
    code(2, "/x/train.py", "Block.forward");
    stack(2, 2);
    alloc(0, 0, 0x1000, 500, 2, 0);
    replay_ended(path, &r);
    assert_int_equal(r.tensors_no_kv_peak, 0);
    replay_free(&r);
    unlink(path);
}

/* a step that allocates nothing (fused AdamW after its first) is seen at zero_grad's free of a
 * gradient right after a backward: the optimizer phase's peak is the process level then; a
 * closure's zero_grad after its forward (Lightning's) is no such moment (after_forward: a 20000 B
 * forward tensor made before the gradient is freed). The loop goes on (goes_on: the next
 * forward's tensor); where nothing follows, the program exited before its first step and the
 * free was its teardown: no step. */
static void fused_step_trace(int after_forward, int goes_on, replay_result *r)
{
    char path[] = "/tmp/vt-replay-XXXXXX";
    begin_file(path);
    code(1, "/x/torch/nn/modules/module.py", "Module.to");
    code(2, "/x/train.py", "Block.forward");
    stack(1, 1);
    stack(2, 2);
    alloc(0, 0, 0x1000, 4096, 1, 0); /* a parameter */
    alloc(0, 0, 0x2000, 8192, 2, 0); /* the forward's activation */
    alloc(1, 1, 0x3000, 4096, 0, 0); /* its gradient, on the autograd thread */
    release(1, 1, 0x2000);           /* the activation, used by the backward */
    if (after_forward == 1)
        alloc(0, 0, 0x4000, 20000, 2, 0);
    if (after_forward == 2) { /* an EMA update's temporary, made and freed: the step ran before */
        code(3, "/x/train.py", "update_ema");
        stack(3, 3);
        alloc(0, 0, 0x4000, 100, 3, 0);
        release(0, 0, 0x4000);
    }
    if (!goes_on && !after_forward)
        release(0, 0, 0x1000); /* the exit frees the weight first */
    release(0, 0, 0x3000);     /* zero_grad */
    if (goes_on)
        alloc(0, 0, 0x5000, 64, 2, 0);
    replay_ended(path, r);
    unlink(path);
}

static void test_fused_step_phase(void **st)
{
    (void)st;
    replay_result r;
    fused_step_trace(0, 1, &r);
    assert_int_equal(r.iterations, 1);
    assert_int_equal(r.phase_peak[PHASE_OPTIMIZER], 8192); /* the weights and the gradient */
    replay_free(&r);
    fused_step_trace(1, 1, &r);
    assert_int_equal(r.phase_peak[PHASE_OPTIMIZER], 0); /* not the forward's 28192 */
    replay_free(&r);
    fused_step_trace(2, 1, &r); /* zero_grad after an EMA update's temporaries were freed */
    assert_int_equal(r.iterations, 1);
    assert_int_equal(r.phase_peak[PHASE_OPTIMIZER], 8192);
    replay_free(&r);
    fused_step_trace(0, 0, &r); /* the gradient freed as the program exited */
    assert_int_equal(r.iterations, 0);
    assert_int_equal(r.phase_peak[PHASE_OPTIMIZER], 0);
    assert_int_equal(r.accum_steps, 0);
    /* its weight, freed first at the exit, is a parameter (kept to the end: no program freed a
     * gradient), not a temporary */
    assert_true(r.has_cat_peaks);
    assert_int_equal(r.cat_peak[CAT_PARAMETERS], 4096);
    replay_free(&r);
    fused_step_trace(1, 0, &r); /* something allocated after the backward, before the free (a
                                 * state's, with no Python frame to tell it): a step */
    assert_int_equal(r.iterations, 1);
    replay_free(&r);
}

/* same: a and b, replays of one trace, agree on what the views read of them */
static int same(const replay_result *a, const replay_result *b)
{
    const replay_snapshot *sa[] = {&a->at_peak, &a->at_tensors, &a->at_step, &a->at_oom};
    const replay_snapshot *sb[] = {&b->at_peak, &b->at_tensors, &b->at_step, &b->at_oom};
    for (int k = 0; k < 4; k++) {
        if (sa[k]->n != sb[k]->n || sa[k]->event != sb[k]->event)
            return 0;
        for (size_t i = 0; i < sa[k]->n; i++) {
            const live_item *x = &sa[k]->items[i], *y = &sb[k]->items[i];
            if (x->addr != y->addr || x->size != y->size || x->alloc_event != y->alloc_event ||
                x->free_event != y->free_event || x->category != y->category ||
                x->phase_free != y->phase_free)
                return 0;
        }
    }
    return a->n_events == b->n_events && a->end_ns == b->end_ns &&
           a->peak_allocated == b->peak_allocated && a->peak_reserved == b->peak_reserved &&
           a->peak_process == b->peak_process && a->t_process == b->t_process &&
           a->peak_allocated_blocks == b->peak_allocated_blocks && a->iterations == b->iterations &&
           a->backward_passes == b->backward_passes && a->has_oom == b->has_oom &&
           a->unknown_frees == b->unknown_frees &&
           !memcmp(a->phase_peak, b->phase_peak, sizeof a->phase_peak) &&
           !memcmp(a->cat_peak, b->cat_peak, sizeof a->cat_peak) &&
           !memcmp(a->cat_peak_ns, b->cat_peak_ns, sizeof a->cat_peak_ns) &&
           a->growth.steps == b->growth.steps && a->growth.last_live == b->growth.last_live;
}

/* every committed trace replays the same with its events read ahead from the first (the ring
 * big traces use) as applied as they are read (what a small live set gets) */
static void test_read_ahead_same(void **st)
{
    (void)st;
    const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
    const char *pats[] = {"examples/traces/*.vt", "examples/traces/*/*.vt", "tests/data/*.vt"};
    size_t n = 0;
    for (size_t d = 0; d < 3; d++) {
        char pat[1024];
        snprintf(pat, sizeof pat, "%s/%s", root, pats[d]);
        glob_t g;
        if (glob(pat, 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++, n++) {
            replay_result a, b;
            char err[512];
            int rca = replay_file(g.gl_pathv[i], &a, err, sizeof err);
            replay_read_ahead = 1;
            int rcb = replay_file(g.gl_pathv[i], &b, err, sizeof err);
            replay_read_ahead = 0;
            if (rca != rcb || !same(&a, &b))
                fail_msg("%s: read ahead, it replays otherwise", g.gl_pathv[i]);
            replay_free(&a);
            replay_free(&b);
        }
        globfree(&g);
    }
    assert_true(n >= 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_training_shape),
                                       cmocka_unit_test(test_accumulation),
                                       cmocka_unit_test(test_segment_oom_cache),
                                       cmocka_unit_test(test_allocator_blocks),
                                       cmocka_unit_test(test_allocator_free_in_alloc),
                                       cmocka_unit_test(test_bad_files),
                                       cmocka_unit_test(test_no_kv_peak),
                                       cmocka_unit_test(test_fused_step_phase),
                                       cmocka_unit_test(test_exit_frees_weights),
                                       cmocka_unit_test(test_read_ahead_same)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
