/* test_allocsim.c — PyTorch's caching allocator simulated (analyzer/model/facts/allocsim.c):
 * the default rules of c10/cuda/CUDACachingAllocator.cpp, each seen in what is reserved: 512 B
 * rounding, the small pool's 2 MiB segments, 20 MiB segments under 10 MiB, larger ones rounded
 * to 2 MiB, best fit (the smallest free block, then the lowest address), a split only past its
 * threshold, freed blocks merged with their free neighbours, a stale handle ignored; and many
 * free blocks at once (the pools' runs of keys) against a plain reference that scans every block,
 * and those blocks taken back one by one (the runs merged, their number bounded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "allocsim.h"
#include "failing_alloc.h"

#define MiB ((uint64_t)1 << 20)

static void test_segments(void **state)
{
    (void)state;
    allocsim *a = allocsim_new();
    assert_non_null(a);
    uint32_t s1 = allocsim_alloc(a, 1); /* small pool: one 2 MiB segment */
    assert_true(s1 > 0);
    assert_int_equal(allocsim_reserved(a), 2 * MiB);
    assert_int_equal(allocsim_requested(a), 1);
    uint32_t s2 = allocsim_alloc(a, MiB); /* 1 MiB: still small, in the same segment */
    assert_int_equal(allocsim_reserved(a), 2 * MiB);
    uint32_t l1 = allocsim_alloc(a, MiB + 1); /* large, under 10 MiB: a 20 MiB segment */
    assert_int_equal(allocsim_reserved(a), 22 * MiB);
    uint32_t l2 = allocsim_alloc(a, 11 * MiB); /* the free rest of that segment serves it */
    assert_int_equal(allocsim_reserved(a), 22 * MiB);
    uint32_t l3 = allocsim_alloc(a, 8 * MiB); /* 8 MiB - 512 B left there: a new 20 MiB one */
    assert_int_equal(allocsim_reserved(a), 42 * MiB);
    uint32_t l4 = allocsim_alloc(a, 13 * MiB); /* 12 MiB left: its own, rounded to 2 MiB: 14 */
    assert_int_equal(allocsim_reserved(a), 56 * MiB);
    allocsim_free(a, s1), allocsim_free(a, s2), allocsim_free(a, l1), allocsim_free(a, l2);
    allocsim_free(a, l3), allocsim_free(a, l4);
    assert_int_equal(allocsim_requested(a), 0);
    assert_int_equal(allocsim_reserved(a), 56 * MiB); /* nothing released */
    allocsim_delete(a);
}

/* best fit, splits and merges: a freed 12 MiB block serves 6 MiB (split: the rest is more than
 * 1 MiB), then the two halves merged again serve 12 MiB with no new segment; a 20 MiB
 * segment's block that would leave 1 MiB or less is not split (the whole block taken) */
static void test_fit_split_merge(void **state)
{
    (void)state;
    allocsim *a = allocsim_new();
    uint32_t big = allocsim_alloc(a, 12 * MiB), keep = allocsim_alloc(a, 14 * MiB);
    assert_int_equal(allocsim_reserved(a), 26 * MiB);
    allocsim_free(a, big);
    uint32_t h1 = allocsim_alloc(a, 6 * MiB), h2 = allocsim_alloc(a, 6 * MiB);
    assert_int_equal(allocsim_reserved(a), 26 * MiB);
    allocsim_free(a, h1), allocsim_free(a, h2);
    uint32_t whole = allocsim_alloc(a, 12 * MiB); /* the halves merged */
    assert_int_equal(allocsim_reserved(a), 26 * MiB);
    /* the smallest that fits: a 14 MiB block freed beside the 12 MiB one, 11 MiB goes to 12 */
    allocsim_free(a, whole), allocsim_free(a, keep);
    uint32_t fit = allocsim_alloc(a, 11 * MiB);
    uint32_t other = allocsim_alloc(a, 13 * MiB); /* so the 14 MiB one is still free */
    assert_int_equal(allocsim_reserved(a), 26 * MiB);
    allocsim_free(a, fit), allocsim_free(a, other);
    /* 10.5 MiB from the 12 MiB block: 1.5 MiB left, more than 1 MiB: split off, and a 1.5 MiB
     * request takes it */
    uint32_t most = allocsim_alloc(a, 10 * MiB + 512 * 1024);
    uint32_t rest = allocsim_alloc(a, MiB + 512 * 1024);
    assert_int_equal(allocsim_reserved(a), 26 * MiB);
    allocsim_free(a, most), allocsim_free(a, rest);
    /* 19.5 MiB in a 20 MiB segment: 0.5 MiB left, not split off; a 0.5 MiB request then takes
     * the small pool, not that tail */
    allocsim *b = allocsim_new();
    uint32_t l = allocsim_alloc(b, 9 * MiB);
    allocsim_free(b, l);
    uint32_t t = allocsim_alloc(b, 19 * MiB + 512 * 1024);
    assert_int_equal(allocsim_reserved(b), 20 * MiB);
    allocsim_alloc(b, 512 * 1024);
    assert_int_equal(allocsim_reserved(b), 22 * MiB);
    allocsim_free(b, t);
    allocsim_free(b, t); /* freed twice: nothing */
    allocsim_free(b, 0), allocsim_free(b, 12345);
    assert_int_equal(allocsim_requested(b), 512 * 1024);
    allocsim_delete(a);
    allocsim_delete(b);
}

/* a request no device holds (past 2^40 bytes, a hostile trace's): the simulation says nothing
 * more (its sums had wrapped past 2^64) */
static void test_bounds(void **state)
{
    (void)state;
    allocsim *a = allocsim_new();
    assert_true(allocsim_alloc(a, MiB) > 0);
    assert_false(allocsim_failed(a));
    assert_int_equal(allocsim_alloc(a, (uint64_t)1 << 51), 0);
    assert_true(allocsim_failed(a));
    assert_int_equal(allocsim_alloc(a, 1), 0);
    allocsim_delete(a);
    a = allocsim_new(); /* (a size that rounding up to 512 B would wrap to 0) */
    assert_int_equal(allocsim_alloc(a, UINT64_MAX), 0);
    assert_true(allocsim_failed(a));
    allocsim_delete(a);
    /* segments of hundreds of GiB: a free one found by size and address like any other (its
     * key's size far above a small block's); past 2^40 bytes in segments, nothing more */
    a = allocsim_new();
    uint64_t GiB = 1024 * MiB;
    uint32_t big = allocsim_alloc(a, 500 * GiB), small = allocsim_alloc(a, 512);
    assert_true(big > 0 && small > 0);
    allocsim_free(a, big);
    assert_true(allocsim_alloc(a, 300 * GiB) > 0);
    assert_true(allocsim_alloc(a, 100 * GiB) > 0); /* the rest of the split 500 */
    assert_int_equal(allocsim_reserved(a), 500 * GiB + 2 * MiB);
    assert_false(allocsim_failed(a));
    assert_true(allocsim_alloc(a, 300 * GiB) > 0); /* 800 GiB + 2 MiB reserved */
    assert_int_equal(allocsim_alloc(a, 300 * GiB), 0);
    assert_true(allocsim_failed(a));
    allocsim_delete(a);
}

/* The reference: the same rules over a plain list of blocks, a best fit found by scanning all of
 * them, the neighbours found by address, the segments laid out from 0 one after another as
 * allocsim's. What it reserves and where it places each request (address and block size) is
 * what allocsim must give. */
#define REF_MAX 20000
typedef struct {
    uint64_t addr, size, seg; /* seg: its segment's first address */
    int small, free, used;
} ref_blk;
static ref_blk g_ref[REF_MAX];
static int g_nref;
static uint64_t g_ref_next, g_ref_reserved;

static int ref_alloc(uint64_t n)
{
    uint64_t size = n < 512 ? 512 : (n + 511) / 512 * 512;
    int small = size <= MiB, k = -1;
    for (int i = 0; i < g_nref; i++) {
        const ref_blk *b = &g_ref[i];
        if (b->used && b->free && b->small == small && b->size >= size &&
            (k < 0 || b->size < g_ref[k].size ||
             (b->size == g_ref[k].size && b->addr < g_ref[k].addr)))
            k = i;
    }
    if (k < 0) {
        uint64_t seg = small             ? 2 * MiB
                       : size < 10 * MiB ? 20 * MiB
                                         : (size + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
        k = g_nref++;
        g_ref[k] = (ref_blk){g_ref_next, seg, g_ref_next, small, 1, 1};
        g_ref_next += seg;
        g_ref_reserved += seg;
    }
    uint64_t rest = g_ref[k].size - size;
    if (small ? rest >= 512 : rest > MiB) {
        int r = g_nref++;
        g_ref[r] = (ref_blk){g_ref[k].addr + size, rest, g_ref[k].seg, small, 1, 1};
        g_ref[k].size = size;
    }
    g_ref[k].free = 0;
    return k;
}

/* ref_at: the block in use at address addr of segment seg, or -1 */
static int ref_at(uint64_t seg, uint64_t addr)
{
    for (int i = 0; i < g_nref; i++)
        if (g_ref[i].used && g_ref[i].seg == seg && g_ref[i].addr == addr)
            return i;
    return -1;
}

/* same_place: allocsim's block h is the reference's block k (address and size) */
static void same_place(const allocsim *a, uint32_t h, int k)
{
    uint64_t size, addr = allocsim_where(a, h, &size);
    assert_int_equal(addr, g_ref[k].addr);
    assert_int_equal(size, g_ref[k].size);
}

static void ref_free(int k)
{
    g_ref[k].free = 1;
    int nx = ref_at(g_ref[k].seg, g_ref[k].addr + g_ref[k].size);
    if (nx >= 0 && g_ref[nx].free)
        g_ref[k].size += g_ref[nx].size, g_ref[nx].used = 0;
    for (int i = 0; i < g_nref; i++) { /* the free block ending where k begins */
        ref_blk *b = &g_ref[i];
        if (b->used && b->free && i != k && b->seg == g_ref[k].seg &&
            b->addr + b->size == g_ref[k].addr) {
            b->size += g_ref[k].size, g_ref[k].used = 0;
            break;
        }
    }
}

/* many blocks, freed in a shuffled order, requests of every size class: what is reserved after
 * each call and the bytes requested are the reference's; every live block's handle kept */
static void test_many_against_reference(void **state)
{
    (void)state;
    allocsim *a = allocsim_new();
    enum { LIVE = 3000 };
    static uint32_t h[LIVE];
    static int ref[LIVE];
    static uint64_t req[LIVE];
    uint64_t requested = 0, x = 88172645463325252ull;
    int n = 0, frees = 0;
    for (int step = 0; step < 12000 && g_nref < REF_MAX - 2; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (n > 0 && (n == LIVE || x % 5 < 2)) { /* a live block freed, any of them */
            int k = (int)((x >> 20) % (uint64_t)n);
            allocsim_free(a, h[k]);
            ref_free(ref[k]);
            requested -= req[k];
            h[k] = h[n - 1], ref[k] = ref[n - 1], req[k] = req[n - 1];
            n--, frees++;
        } else { /* small mostly, some large under 10 MiB, a few of their own */
            unsigned c = (unsigned)(x >> 32) % 16;
            uint64_t sz = c < 11   ? 1 + (x >> 8) % MiB
                          : c < 15 ? MiB + (x >> 8) % (9 * MiB)
                                   : 10 * MiB + (x >> 8) % (40 * MiB);
            h[n] = allocsim_alloc(a, sz);
            assert_true(h[n] > 0);
            ref[n] = ref_alloc(sz);
            same_place(a, h[n], ref[n]);
            req[n] = sz;
            requested += sz;
            n++;
        }
        assert_int_equal(allocsim_reserved(a), g_ref_reserved);
        assert_int_equal(allocsim_requested(a), requested);
    }
    assert_true(frees > 3000); /* (the pools held thousands of free blocks) */
    assert_false(allocsim_failed(a));
    allocsim_delete(a);
}

static void ref_reset(void)
{
    g_nref = 0, g_ref_next = 0, g_ref_reserved = 0;
}

/* ref_live_around: block k of the reference has a live block (in use, not free) on both sides */
static int ref_live_around(int k)
{
    const ref_blk *b = &g_ref[k];
    int nx = ref_at(b->seg, b->addr + b->size), pv = -1;
    for (int i = 0; i < g_nref && pv < 0; i++)
        if (g_ref[i].used && g_ref[i].seg == b->seg && g_ref[i].addr + g_ref[i].size == b->addr)
            pv = i;
    return nx >= 0 && !g_ref[nx].free && pv >= 0 && !g_ref[pv].free;
}

/* hundreds of free blocks of 128 sizes, each between two live ones (never merged: chosen by
 * the reference's addresses), then taken back one by one in a shuffled order by requests of
 * exactly their sizes: as the pool empties, its runs of keys merge, and every request still
 * finds a block of its size (nothing more reserved, as the reference); the pools' runs stay
 * within their bound, fewer than n / 16 + 2 for n free blocks, however the blocks came and
 * went */
static void test_drain_against_reference(void **state)
{
    (void)state;
    ref_reset();
    allocsim *a = allocsim_new();
    enum { K = 1800 };
    static uint32_t h[K];
    static int ref[K], order[K];
    static uint64_t size[K];
    for (int i = 0; i < K; i++) {
        size[i] = 512 * (uint64_t)(1 + (i * 7919) % 128); /* (up to 64 KiB: few segments) */
        h[i] = allocsim_alloc(a, size[i]), ref[i] = ref_alloc(size[i]);
        assert_true(h[i] > 0);
        same_place(a, h[i], ref[i]);
    }
    int n = 0;
    for (int i = 0; i < K; i++)
        if (ref_live_around(ref[i])) {
            allocsim_free(a, h[i]), ref_free(ref[i]);
            order[n++] = i;
        }
    uint64_t reserved = allocsim_reserved(a), x = 0x9e3779b97f4a7c15ull;
    assert_int_equal(reserved, g_ref_reserved);
    size_t blocks, runs;
    allocsim_pools(a, &blocks, &runs);
    assert_true(n >= 300 && blocks >= (size_t)n && 16 * runs < blocks + 32);
    for (int i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int j = (int)(x % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (int i = 0; i < n; i++) {
        uint32_t got = allocsim_alloc(a, size[order[i]]);
        assert_true(got > 0);
        same_place(a, got, ref_alloc(size[order[i]]));
        assert_int_equal(allocsim_reserved(a), reserved);
        assert_int_equal(g_ref_reserved, reserved);
        allocsim_pools(a, &blocks, &runs);
        assert_true(16 * runs < blocks + 32);
    }
    assert_false(allocsim_failed(a));
    allocsim_delete(a);
}

/* ref_free_blocks: the reference's free blocks (each one allocsim must hold in a pool) */
static size_t ref_free_blocks(void)
{
    size_t n = 0;
    for (int i = 0; i < g_nref; i++)
        n += g_ref[i].used && g_ref[i].free;
    return n;
}

/* each allocation the simulation makes (its blocks, their spare slots, the pools' runs and
 * their lists) failing in turn, in a run of 1,500 requests and frees: it says it failed from
 * then on (every later request 0) and nothing breaks, or the failure cost nothing: every
 * placement is still the reference's, and every free block is in a pool after each call */
static void test_out_of_memory(void **state)
{
    (void)state;
    long total = -1;
    for (g_at = 1; total < 0 || g_at <= total; g_at++) {
        ref_reset();
        g_calls = 0;
        mem_set_ops(&failing);
        allocsim *a = allocsim_new();
        enum { LIVE = 400 };
        uint32_t h[LIVE];
        int ref[LIVE], n = 0, failed_at = -1;
        uint64_t x = 88172645463325252ull;
        for (int step = 0; a && step < 1500; step++) {
            size_t blocks, runs;
            allocsim_pools(a, &blocks, &runs);
            if (!allocsim_failed(a)) /* (after the call before) */
                assert_int_equal(blocks, ref_free_blocks());
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (n > 0 && (n == LIVE || x % 5 < 2)) {
                int k = (int)((x >> 20) % (uint64_t)n);
                allocsim_free(a, h[k]);
                ref_free(ref[k]);
                h[k] = h[n - 1], ref[k] = ref[n - 1], n--;
                continue;
            }
            uint64_t sz = (x >> 32) % 16 < 12 ? 1 + (x >> 8) % MiB : MiB + (x >> 8) % (9 * MiB);
            h[n] = allocsim_alloc(a, sz);
            ref[n] = ref_alloc(sz);
            if (allocsim_failed(a)) {
                if (failed_at < 0)
                    failed_at = step;
                assert_int_equal(h[n], 0); /* (a request after the failure: 0 too) */
                continue;
            }
            same_place(a, h[n], ref[n]);
            assert_int_equal(allocsim_reserved(a), g_ref_reserved);
            n++;
        }

        mem_set_ops(NULL);
        if (g_at == 1)
            assert_null(a); /* (allocsim_new's own) */
        allocsim_delete(a);
        if (total < 0 && g_calls < g_at)
            total = g_calls; /* (the first run: how many calls it made, none failing) */
    }
    assert_true(total >= 8); /* (the blocks, the runs and their lists: 11 calls here) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_fit_split_merge),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_many_against_reference),
        cmocka_unit_test(test_drain_against_reference),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
