/* test_blocks.c — PyTorch's allocator blocks emulated (analyzer/model/facts/blocks.c): round_size,
 * should_split in both pools and under the allocator's settings, the settings read from
 * PYTORCH_CUDA_ALLOC_CONF, and block sizes carved from free ranges inside segments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "blocks.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)

static void test_round(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL);
    assert_int_equal(blocks_round(&rl, 1), 512);
    assert_int_equal(blocks_round(&rl, 511), 512);
    assert_int_equal(blocks_round(&rl, 512), 512);
    assert_int_equal(blocks_round(&rl, 513), 1024);
    assert_int_equal(blocks_round(&rl, 3 * MiB + 1), 3 * MiB + 512);
    /* roundup_power2_divisions:4 — quarters between powers of two above 4 x 512 B */
    rl = blocks_rules_parse("roundup_power2_divisions:4");
    assert_int_equal(rl.divisions, 4);
    assert_int_equal(blocks_round(&rl, MiB + 1), MiB + 256 * KiB);
    assert_int_equal(blocks_round(&rl, 5 * MiB + 1), 6 * MiB);
    assert_int_equal(blocks_round(&rl, 4 * MiB), 4 * MiB); /* a power of two stays */
    assert_int_equal(blocks_round(&rl, 1500), 1536);       /* not above 4 x 512: 512 steps */
}

static void test_should_split(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse("");
    /* small pool (rounded <= 1 MiB): any remainder of 512 B or more is split off */
    assert_true(blocks_should_split(&rl, 2 * MiB, 512));
    assert_true(blocks_should_split(&rl, 1024, 512));
    assert_false(blocks_should_split(&rl, 512, 512));
    /* large pool: only a remainder above 1 MiB */
    assert_false(blocks_should_split(&rl, 3 * MiB, 2 * MiB));
    assert_true(blocks_should_split(&rl, 3 * MiB + 512, 2 * MiB));
    assert_int_equal(blocks_size(&rl, 3 * MiB, 2 * MiB - 100), 3 * MiB); /* whole range */
    assert_int_equal(blocks_size(&rl, 20 * MiB, 2 * MiB - 100), 2 * MiB);
    /* max_split_size_mb: blocks that big are never split */
    rl = blocks_rules_parse("max_split_size_mb:64");
    assert_int_equal(rl.max_split, 64 * MiB);
    assert_false(blocks_should_split(&rl, 200 * MiB, 64 * MiB));
    assert_true(blocks_should_split(&rl, 200 * MiB, 63 * MiB));
    /* expandable segments: split at 512 B in the large pool too */
    rl = blocks_rules_parse("expandable_segments:True");
    assert_true(blocks_should_split(&rl, 3 * MiB, 2 * MiB));
    assert_false(blocks_should_split(&rl, 2 * MiB, 2 * MiB));
}

static void test_rules_parse(void **st)
{
    (void)st;
    assert_int_equal(blocks_rules_parse(NULL).basis, BLOCKS_BASIS_DEFAULT);
    assert_int_equal(blocks_rules_parse("garbage_collection_threshold:0.6").basis,
                     BLOCKS_BASIS_DEFAULT);
    assert_int_equal(blocks_rules_parse("expandable_segments:False").basis, BLOCKS_BASIS_DEFAULT);
    blocks_rules rl = blocks_rules_parse("expandable_segments:True");
    assert_int_equal(rl.basis, BLOCKS_BASIS_EXPANDABLE);
    assert_true(rl.expandable);
    rl = blocks_rules_parse("max_split_size_mb:128, garbage_collection_threshold:0.8");
    assert_int_equal(rl.basis, BLOCKS_BASIS_CONFIGURED);
    assert_int_equal(rl.max_split, 128 * MiB);
    assert_int_equal(blocks_rules_parse("backend:cudaMallocAsync").basis, BLOCKS_BASIS_ASYNC);
    /* a per-size list is not emulated; the options after it are still read */
    rl = blocks_rules_parse("roundup_power2_divisions:[256:1,512:2,>:4],expandable_segments:True");
    assert_int_equal(rl.basis, BLOCKS_BASIS_APPROXIMATE);
    assert_true(rl.expandable);
    assert_string_equal(blocks_basis_key(BLOCKS_BASIS_EXPANDABLE), "expandable_segments");
}

static void test_small_pool(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t seg = 0x7f0000000000ull;
    assert_int_equal(blocks_segment_add(&b, seg, 2 * MiB), 0);
    assert_int_equal(blocks_alloc(&b, seg, 100, 1), 512);
    assert_int_equal(blocks_alloc(&b, seg + 512, 1000, 2), 1024);
    assert_int_equal(b.allocated, 1536);
    assert_int_equal(blocks_free(&b, seg), 512);
    assert_int_equal(blocks_alloc(&b, seg, 200, 3), 512); /* the 512 B left before the next */
    assert_int_equal(b.peak, 1536);
    assert_int_equal(b.unplaced, 0);
    assert_int_equal(blocks_free(&b, seg + 4096), 0); /* no block there */
    blocks_free_all(&b);
}

/* a free requested and completed later (record_stream): out of the count at the request, its
 * place kept until the free, never counted out twice */
static void test_free_requested(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t seg = 0x7f0000000000ull;
    blocks_segment_add(&b, seg, 2 * MiB);
    assert_int_equal(blocks_alloc(&b, seg, 1000, 1), 1024);
    assert_int_equal(blocks_free_request(&b, seg), 1024);
    assert_int_equal(b.allocated, 0);
    assert_int_equal(blocks_free_request(&b, seg), 0);        /* requested already */
    assert_int_equal(blocks_free_request(&b, seg + 4096), 0); /* no block there */
    /* the next tensor goes after the pending block, which still holds its place */
    assert_int_equal(blocks_alloc(&b, seg + 1024, 512, 2), 512);
    assert_int_equal(b.allocated, 512);
    assert_int_equal(b.peak, 1024);
    assert_int_equal(blocks_free(&b, seg), 1024); /* completed: not counted out again */
    assert_int_equal(b.allocated, 512);
    assert_int_equal(blocks_free(&b, seg + 1024), 512);
    assert_int_equal(b.allocated, 0);
    blocks_free_all(&b);
}

static void test_large_pool_keeps_remainders(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t seg = 0x7f0000000000ull;
    blocks_segment_add(&b, seg, 20 * MiB); /* kLargeBuffer */
    assert_int_equal(blocks_alloc(&b, seg, 3 * MiB, 1), 3 * MiB);
    /* 16.5 MiB from the 17 MiB left: a 0.5 MiB remainder is not split off */
    assert_int_equal(blocks_alloc(&b, seg + 3 * MiB, 16 * MiB + 512 * KiB, 2), 17 * MiB);
    assert_int_equal(b.allocated, 20 * MiB);
    assert_int_equal(blocks_free(&b, seg), 3 * MiB);
    /* 2.5 MiB where 3 MiB is free up to the next live block: all 3 MiB */
    assert_int_equal(blocks_alloc(&b, seg, 2 * MiB + 512 * KiB, 3), 3 * MiB);
    /* the second block freed: the first one's range now runs to the segment's end */
    assert_int_equal(blocks_free(&b, seg + 3 * MiB), 17 * MiB);
    assert_int_equal(blocks_free(&b, seg), 3 * MiB);
    assert_int_equal(blocks_alloc(&b, seg, 19 * MiB + 1, 4), 20 * MiB);
    assert_int_equal(b.peak, 20 * MiB);
    assert_int_equal(b.t_peak, 2);
    blocks_free_all(&b);
}

static void test_unplaced_and_segment_free(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t seg = 0x7f0000000000ull;
    assert_int_equal(blocks_alloc(&b, seg, 1000, 1), 1024); /* no segment known: rounded */
    assert_int_equal(b.unplaced, 1);
    blocks_free(&b, seg);
    blocks_segment_add(&b, seg, 8 * MiB);
    blocks_alloc(&b, seg, 1 * MiB + 1, 2);
    blocks_alloc(&b, seg + 6 * MiB, 1 * MiB + 1, 3);
    /* a hole cut in the middle: the tail is a segment of its own with its live block */
    blocks_segment_del(&b, seg + 2 * MiB, 2 * MiB);
    assert_int_equal(b.nsegs, 2);
    assert_int_equal(blocks_alloc(&b, seg + 4 * MiB, 1 * MiB + 512 * KiB, 4), 2 * MiB);
    assert_int_equal(blocks_alloc(&b, seg + 3 * MiB, 512, 5), 512); /* in the hole: unplaced */
    assert_int_equal(b.unplaced, 2);
    /* two cudaMalloc segments that touch are not one range: 2 MiB to the end, not split */
    blocks_segment_add(&b, seg + 8 * MiB, 2 * MiB);
    assert_int_equal(blocks_free(&b, seg + 6 * MiB), 2 * MiB);
    assert_int_equal(blocks_alloc(&b, seg + 6 * MiB, 1 * MiB + 1, 6), 2 * MiB);
    blocks_segment_del(&b, seg, 16 * MiB);
    assert_int_equal(b.nsegs, 0);
    blocks_free_all(&b);
}

/* a segment released before its blocks (the hole cut through one, or all of it): the blocks keep
 * their sizes, their frees count them out; a block taken where one still lives replaces it */
static void test_segment_released_first(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t seg = 0x7f0000000000ull;
    blocks_segment_add(&b, seg, 8 * MiB);
    assert_int_equal(blocks_alloc(&b, seg, 1000, 1), 1024);
    assert_int_equal(blocks_alloc(&b, seg + 2 * MiB, 512, 2), 512);
    assert_int_equal(blocks_alloc(&b, seg + 4 * MiB, 3 * MiB, 3), 4 * MiB); /* 1 MiB: not split */
    assert_int_equal(blocks_free_request(&b, seg + 4 * MiB), 4 * MiB);
    blocks_segment_del(&b, seg + 2 * MiB, MiB); /* a hole through the second block */
    assert_int_equal(b.nsegs, 2);
    assert_int_equal(blocks_free(&b, seg + 2 * MiB), 512);
    blocks_segment_del(&b, seg, 8 * MiB);
    assert_int_equal(b.nsegs, 0);
    assert_int_equal(b.allocated, 1024);
    assert_int_equal(blocks_free(&b, seg), 1024);
    assert_int_equal(b.allocated, 0);
    /* the range reserved again: the requested block is replaced, not counted out twice */
    blocks_segment_add(&b, seg, 8 * MiB);
    assert_int_equal(blocks_alloc(&b, seg + 4 * MiB, 512, 4), 512);
    assert_int_equal(b.allocated, 512);
    assert_int_equal(blocks_alloc(&b, seg + 4 * MiB, 1000, 5), 1024); /* its free not seen */
    assert_int_equal(b.allocated, 1024);
    assert_int_equal(blocks_free(&b, seg + 4 * MiB), 1024);
    assert_int_equal(blocks_free(&b, seg + 4 * MiB), 0);
    assert_int_equal(b.allocated, 0);
    assert_int_equal(b.peak, 1536 + 4 * MiB);
    assert_int_equal(b.unplaced, 0);
    blocks_free_all(&b);
}

static void test_expandable_maps_join(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL); /* set at run time: the maps tell */
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t va = 0x7f0000000000ull;
    blocks_segment_map(&b, va, 2 * MiB);
    assert_true(b.rules.expandable);
    assert_int_equal(b.rules.basis, BLOCKS_BASIS_EXPANDABLE);
    blocks_segment_map(&b, va + 2 * MiB, 2 * MiB); /* mapped next to it: one range */
    assert_int_equal(b.nsegs, 1);
    assert_int_equal(blocks_alloc(&b, va, 3 * MiB + 100, 1), 3 * MiB + 512);
    assert_int_equal(b.unplaced, 0);
    assert_int_equal(blocks_alloc(&b, va + 3 * MiB + 512, MiB - 512, 2), MiB - 512);
    blocks_free(&b, va + 3 * MiB + 512);
    blocks_segment_del(&b, va + 2 * MiB, 2 * MiB); /* unmapped */
    assert_int_equal(blocks_alloc(&b, va + 3 * MiB, 512, 3), 512);
    assert_int_equal(b.unplaced, 1);
    blocks_free_all(&b);
}

/* many_segments: past BLOCKS_MANY_SEGS segments, added out of order and then some deleted and
 * others added between them (every one of them moves the segments after it in the sorted list):
 * each tensor still finds its own segment, by the hint of its 2 MiB once it was found there, so a
 * second round of the same lookups searches (almost) never */
static void test_many_segments(void **st)
{
    (void)st;
    enum { N = 3000 };
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t base = (uint64_t)1 << 40, step = 4 * MiB;
    /* the segments in an order that inserts everywhere: i * 7919 mod N visits each once */
    for (unsigned k = 0; k < N; k++) {
        uint64_t i = (uint64_t)k * 7919 % N;
        assert_int_equal(blocks_segment_add(&b, base + i * step, 2 * MiB + 512 * KiB), 0);
    }
    assert_int_equal(b.nsegs, N);
    assert_true(blocks_many_segs(&b));
    /* 1.5 MiB at each segment's start: the large pool's rule keeps the whole 2.5 MiB range
     * (a remainder of 1 MiB is not split off); found in no segment, it would be 1.5 MiB */
    for (unsigned k = 0; k < N; k++) {
        uint64_t i = (uint64_t)k * 104729 % N, a = base + i * step;
        blocks_hint(&b, blocks_prefetch_seg(&b, blocks_prefetch(&b, a)));
        assert_int_equal(blocks_alloc(&b, a, MiB + 512 * KiB, k), 2 * MiB + 512 * KiB);
    }
    assert_int_equal(b.unplaced, 0);
    /* every third segment goes (its block first), a 1 MiB one comes in each gap after it */
    for (unsigned i = 0; i < N; i += 3) {
        assert_int_equal(blocks_free(&b, base + i * step), 2 * MiB + 512 * KiB);
        blocks_segment_del(&b, base + i * step, 2 * MiB + 512 * KiB);
        assert_int_equal(blocks_segment_add(&b, base + i * step + 3 * MiB, MiB), 0);
    }
    assert_int_equal(b.nsegs, N);
    /* the remaining blocks freed and taken again: their segments are known by id, not place */
    uint64_t before = b.searches;
    unsigned n = 0;
    for (unsigned i = 0; i < N; i++) {
        if (i % 3 == 0)
            continue;
        uint64_t a = base + i * step;
        assert_int_equal(blocks_free(&b, a), 2 * MiB + 512 * KiB);
        assert_int_equal(blocks_alloc(&b, a, MiB + 512 * KiB, 0), 2 * MiB + 512 * KiB);
        n += 2;
    }
    assert_int_equal(b.unplaced, 0);
    assert_true(b.searches - before < n / 20); /* a hint shared by two pieces: at most 5 % */
    /* and the new 1 MiB segments hold their tensors: 512 KiB in 1 MiB is split (small pool) */
    assert_int_equal(blocks_alloc(&b, base + 3 * MiB, 512 * KiB, 0), 512 * KiB);
    assert_int_equal(b.unplaced, 0);
    /* a deleted segment's range holds nothing */
    assert_int_equal(blocks_alloc(&b, base + 3 * step, MiB + 512 * KiB, 0), MiB + 512 * KiB);
    assert_int_equal(b.unplaced, 1);
    blocks_free_all(&b);
}

/* shared_piece: two 1 MiB segments in each 2 MiB piece (past BLOCKS_MANY_SEGS of them): each
 * piece's hint names the segment added last from its addition on (its tensors search never), and
 * the other once a search found it (its tensors after its first search never) */
static void test_shared_piece(void **st)
{
    (void)st;
    enum { N = 1024 };
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t base = (uint64_t)1 << 40;
    for (unsigned i = 0; i < N; i++) {
        assert_int_equal(blocks_segment_add(&b, base + i * 2 * MiB, MiB), 0);
        assert_int_equal(blocks_segment_add(&b, base + i * 2 * MiB + MiB, MiB), 0);
    }
    assert_true(blocks_many_segs(&b));
    uint64_t before = b.searches;
    for (unsigned i = 0; i < N; i++) /* (one segment after another: the last found never helps) */
        assert_int_equal(blocks_alloc(&b, base + i * 2 * MiB + MiB, 256 * KiB, 0), 256 * KiB);
    assert_int_equal(b.searches, before);
    for (unsigned r = 0; r < 4; r++) /* the first of each piece, filled in four rounds */
        for (unsigned i = 0; i < N; i++)
            assert_int_equal(blocks_alloc(&b, base + i * 2 * MiB + r * 256 * KiB, 256 * KiB, 0),
                             256 * KiB);
    assert_true(b.searches - before <= N + N / 20); /* the first round's */
    assert_int_equal(b.unplaced, 0);
    blocks_free_all(&b);
}

static void test_async_counts_requests(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse("backend:cudaMallocAsync");
    blocks b;
    blocks_init(&b, &rl);
    assert_int_equal(blocks_alloc(&b, 0x1000, 100, 1), 100);
    assert_int_equal(blocks_free(&b, 0x1000), 100);
    assert_int_equal(b.allocated, 0);
    blocks_free_all(&b);
}

/* ---- the emulation against a model of its rules --------------------------------------------- */

/* The model: blocks.h's rules the plainest way, every lookup a scan of all blocks and segments: a
 * tensor's block runs from its address to the next live block of its segment or the segment's
 * end; blocks in no list (no segment there when made, or their range released) are loose. */
enum { M_SEGS = 256, M_BLOCKS = 3000 };
typedef struct {
    uint64_t start, size;
    int requested, listed;
    unsigned hint; /* the emulation's place hint of it when made (blocks.hint) */
} m_block;
typedef struct {
    blocks_rules rl;
    uint64_t seg_addr[M_SEGS], seg_size[M_SEGS];
    int nseg, nblk;
    m_block blk[M_BLOCKS];
    uint64_t allocated, peak, unplaced;
} model;

static int m_seg_of(const model *m, uint64_t a)
{
    for (int i = 0; i < m->nseg; i++)
        if (a - m->seg_addr[i] < m->seg_size[i])
            return i;
    return -1;
}

static int m_block_at(const model *m, uint64_t a)
{
    for (int i = 0; i < m->nblk; i++)
        if (m->blk[i].start == a)
            return i;
    return -1;
}

static uint64_t m_gone(model *m, int k)
{
    uint64_t size = m->blk[k].size;
    if (!m->blk[k].requested)
        m->allocated -= size;
    m->blk[k] = m->blk[--m->nblk];
    return size;
}

static uint64_t m_alloc(model *m, uint64_t a, uint64_t size)
{
    uint64_t r = blocks_round(&m->rl, size), bsize = r;
    int k = m_block_at(m, a), s = m_seg_of(m, a);
    if (k >= 0) /* its free not seen: replaced */
        m_gone(m, k);
    if (s >= 0) {
        uint64_t end = m->seg_addr[s] + m->seg_size[s];
        for (int i = 0; i < m->nblk; i++)
            if (m->blk[i].listed && m->blk[i].start > a && m->blk[i].start < end)
                end = m->blk[i].start;
        if (end - a < r)
            m->unplaced++;
        else
            bsize = blocks_size(&m->rl, end - a, size);
    } else {
        m->unplaced++;
    }
    m->blk[m->nblk++] = (m_block){a, bsize, 0, s >= 0};
    m->allocated += bsize;
    if (m->allocated > m->peak)
        m->peak = m->allocated;
    return bsize;
}

static uint64_t m_request(model *m, uint64_t a)
{
    int k = m_block_at(m, a);
    if (k < 0 || m->blk[k].requested)
        return 0;
    m->blk[k].requested = 1;
    m->allocated -= m->blk[k].size;
    return m->blk[k].size;
}

static void m_seg_del(model *m, uint64_t a, uint64_t size)
{
    uint64_t end = a + size;
    for (int i = 0; i < m->nblk; i++)
        if (m->blk[i].listed && m->blk[i].start >= a && m->blk[i].start < end)
            m->blk[i].listed = 0;
    for (int i = 0; i < m->nseg; i++) {
        uint64_t s = m->seg_addr[i], e = s + m->seg_size[i];
        if (e <= a || s >= end)
            continue;
        m->seg_addr[i] = m->seg_addr[--m->nseg], m->seg_size[i] = m->seg_size[m->nseg];
        i--;
        if (s < a)
            m->seg_addr[m->nseg] = s, m->seg_size[m->nseg++] = a - s;
        if (e > end)
            m->seg_addr[m->nseg] = end, m->seg_size[m->nseg++] = e - end;
    }
}

static void m_seg_add(model *m, uint64_t a, uint64_t size, int joins)
{
    uint64_t lo = a, hi = a + size; /* joined to the ranges it touches (not theirs) */
    m_seg_del(m, a, size);
    for (int i = 0; joins && i < m->nseg; i++)
        if (m->seg_addr[i] + m->seg_size[i] == lo || m->seg_addr[i] == hi) {
            a = a < m->seg_addr[i] ? a : m->seg_addr[i];
            size += m->seg_size[i];
            m->seg_addr[i] = m->seg_addr[--m->nseg], m->seg_size[i] = m->seg_size[m->nseg];
            i--;
        }
    m->seg_addr[m->nseg] = a, m->seg_size[m->nseg++] = size;
}

static uint64_t rnd(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* random_ops: n random events on b and its model, each answer the same: tensors where the one
 * before ends (the caching allocator's), at segments' starts and anywhere (a trace cut in the
 * middle, other rules), frees, requested frees, and (seg_ops) ranges released and reserved again,
 * mapped. With small sizes many blocks share a segment (long sorted lists, memmoves). */
static void random_ops(uint64_t seed, int n, uint64_t max_size, int seg_ops)
{
    const uint64_t base = 0x7f0000000000ull;
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    model *m = test_calloc(1, sizeof *m);
    blocks_init(&b, &rl);
    m->rl = rl;
    uint64_t x = seed;
    for (uint64_t i = 0; i < 8; i++) { /* 2 to 32 MiB, the last two touching */
        uint64_t a = base + i * 64 * MiB - (i == 7) * 32 * MiB, size = (2 + 4 * i) * MiB;
        assert_int_equal(blocks_segment_add(&b, a, size), 0);
        m_seg_add(m, a, size, 0);
    }
    for (int op = 0; op < n; op++) {
        uint64_t c = rnd(&x) % (seg_ops ? 100 : 95), a = base + rnd(&x) % (8 * 64 * MiB);
        int s = m->nseg ? (int)(rnd(&x) % (uint64_t)m->nseg) : -1;
        int k = m->nblk ? (int)(rnd(&x) % (uint64_t)m->nblk) : -1;
        if (c < 50 && m->nblk < M_BLOCKS - 1) {
            uint64_t how = rnd(&x) % 100, size = 1 + rnd(&x) % max_size;
            if (how < 45 && k >= 0)
                a = m->blk[k].start + m->blk[k].size;
            else if (how < 55 && s >= 0)
                a = m->seg_addr[s];
            else if (how < 90 && s >= 0)
                a = m->seg_addr[s] + rnd(&x) % m->seg_size[s] / 512 * 512;
            else if (how < 95 && k >= 0)
                a = m->blk[k].start;
            assert_int_equal(blocks_alloc(&b, a, size, (uint64_t)op), m_alloc(m, a, size));
            m->blk[m->nblk - 1].hint = b.hint;
        } else if (c < 90) { /* its hint from its making (stale once its list changed), or any */
            if (k >= 0 && c < 86)
                a = m->blk[k].start;
            int j = m_block_at(m, a);
            unsigned h = j >= 0 && c % 8 ? m->blk[j].hint : (unsigned)(rnd(&x) % 256);
            assert_int_equal(blocks_free_hinted(&b, a, h), j < 0 ? 0 : m_gone(m, j));
        } else if (c < 95) {
            if (k >= 0)
                a = m->blk[k].start;
            assert_int_equal(blocks_free_request(&b, a), m_request(m, a));
        } else if (c < 97 && s >= 0) { /* a piece of a segment released */
            uint64_t from = rnd(&x) % m->seg_size[s] / 512 * 512,
                     size = 512 + rnd(&x) % (m->seg_size[s] - from) / 512 * 512;
            a = m->seg_addr[s] + from;
            blocks_segment_del(&b, a, size);
            m_seg_del(m, a, size);
        } else if (m->nseg < M_SEGS - 4) { /* reserved (over what was there) or mapped */
            uint64_t size = (1 + rnd(&x) % 16) * MiB;
            a &= ~(MiB - 1);
            if (c < 99) {
                assert_int_equal(blocks_segment_add(&b, a, size), 0);
            } else {
                assert_int_equal(blocks_segment_map(&b, a, size), 0);
                m->rl.expandable = 1;
            }
            m_seg_add(m, a, size, c == 99);
        }
        assert_int_equal(b.allocated, m->allocated);
        assert_int_equal(b.peak, m->peak);
        assert_int_equal(b.unplaced, m->unplaced);
    }
    assert_int_equal(b.nsegs, m->nseg);
    blocks_free_all(&b);
    test_free(m);
}

static void test_against_model(void **st)
{
    (void)st;
    random_ops(1, 40000, 3 * MiB, 1);  /* both pools */
    random_ops(2, 40000, 16 * KiB, 1); /* many small blocks to a segment */
    random_ops(3, 40000, 4 * KiB, 0);  /* hundreds of blocks to a segment */
}

/* an epoch (a program going on after an error it caught): the segments reserved before it that
 * no block of it was given, nothing live in them and nothing freed there after its peak */
static void test_epoch_unused(void **st)
{
    (void)st;
    blocks_rules rl = blocks_rules_parse(NULL);
    blocks b;
    blocks_init(&b, &rl);
    const uint64_t A = 0x7f0000000000ull, B = A + 64 * MiB, C = B + 64 * MiB, P = C + 64 * MiB;
    for (uint64_t s = A; s <= P; s += 64 * MiB)
        assert_int_equal(blocks_segment_add(&b, s, 20 * MiB), 0);
    blocks_alloc(&b, P, 10 * MiB, 1); /* a weight, live throughout */
    blocks_alloc(&b, A, 20 * MiB, 2), blocks_alloc(&b, B, 20 * MiB, 3);
    blocks_alloc(&b, C, 20 * MiB, 4);             /* the attempt that failed */
    assert_int_equal(blocks_epoch_unused(&b), 0); /* (no epoch) */
    blocks_epoch_begin(&b);
    blocks_free(&b, A), blocks_free(&b, B);
    blocks_alloc(&b, A + 2 * MiB, 12 * MiB, 5); /* the steps after it: A again, their peak */
    const uint64_t D = P + 64 * MiB;
    assert_int_equal(blocks_segment_add(&b, D, 4 * MiB), 0); /* reserved for them */
    blocks_alloc(&b, D, 4 * MiB, 6);
    blocks_free(&b, D);
    blocks_free(&b, C);                                  /* live at their peak: C held it then */
    assert_int_equal(blocks_epoch_unused(&b), 20 * MiB); /* B alone */
    blocks_free(&b, A + 2 * MiB);
    assert_int_equal(blocks_segment_add(&b, D + 64 * MiB, 20 * MiB), 0);
    assert_int_equal(blocks_segment_add(&b, D + 128 * MiB, 20 * MiB), 0);
    blocks_alloc(&b, D + 128 * MiB, 20 * MiB, 7);
    blocks_alloc(&b, D + 64 * MiB, 20 * MiB, 8); /* a higher peak: C's free came before it */
    assert_int_equal(blocks_epoch_unused(&b), 40 * MiB); /* B and C; A was used */
    blocks_segment_del(&b, B + 2 * MiB, 2 * MiB);        /* a part released: its parts not known */
    assert_int_equal(blocks_epoch_unused(&b), 0);
    blocks_free_all(&b);
    /* a block made again where one of the attempt that failed was: its segment used */
    blocks_init(&b, &rl);
    for (uint64_t s = A; s <= C; s += 64 * MiB)
        assert_int_equal(blocks_segment_add(&b, s, 20 * MiB), 0);
    blocks_alloc(&b, A, 20 * MiB, 1), blocks_alloc(&b, B, 20 * MiB, 2);
    blocks_epoch_begin(&b);
    blocks_free(&b, A), blocks_free(&b, B);
    blocks_alloc(&b, A, 20 * MiB, 3);
    blocks_free(&b, A);
    blocks_alloc(&b, C, 20 * MiB, 4);
    blocks_alloc(&b, C + 20 * MiB, 1, 5);                /* (in none: counted, a higher peak) */
    assert_int_equal(blocks_epoch_unused(&b), 20 * MiB); /* B alone */
    blocks_free_all(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round),
        cmocka_unit_test(test_should_split),
        cmocka_unit_test(test_rules_parse),
        cmocka_unit_test(test_small_pool),
        cmocka_unit_test(test_free_requested),
        cmocka_unit_test(test_large_pool_keeps_remainders),
        cmocka_unit_test(test_unplaced_and_segment_free),
        cmocka_unit_test(test_segment_released_first),
        cmocka_unit_test(test_expandable_maps_join),
        cmocka_unit_test(test_many_segments),
        cmocka_unit_test(test_shared_piece),
        cmocka_unit_test(test_async_counts_requests),
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_epoch_unused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
