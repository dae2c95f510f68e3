/* test_snapjoin.c — the join of a chunked trace's live set to the snapshot after a gap
 * (analyzer/trace/reader_snapjoin.c): what was handed out and is not in the snapshot is freed
 * at the snapshot's time, oldest first whatever the hash seed (the table's own order is the
 * seed's: hashseed.h); what is in both is left alone; what is new is allocated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hashseed.h"
#include "reader_snapjoin.h"
#include "vramtrace/trace_chunked.h"
#include "vramtrace/trace_format.h"

enum { N = 300 }; /* allocations handed out before the gap */

static size_t put_alloc(uint8_t *at, uint64_t tt, uint64_t addr, uint64_t size)
{
    vt_rec_alloc a = {tt, addr, size, 0, 0, 0};
    uint64_t h = (uint64_t)VT_REC_ALLOC | ((uint64_t)VT_EVF_MAKE(VT_API_cudaMalloc, 0) << 16) |
                 ((uint64_t)VT_ALLOC_REC_SIZE << 32);
    memcpy(at, &h, 8);
    memcpy(at + 8, &a, sizeof a);
    return VT_ALLOC_REC_SIZE;
}

/* join: N allocations handed out (addresses in a scrambled order, times rising), then a
 * snapshot holding every third of them and one new one; the joined records into *out */
static size_t join(uint64_t seed, uint8_t **out)
{
    hashseed_value = seed;
    snapjoin *j = snapjoin_new();
    assert_non_null(j);
    uint8_t *b = malloc(N * VT_ALLOC_REC_SIZE);
    assert_non_null(b);
    size_t n = 0;
    for (uint64_t i = 0; i < N; i++) /* address order unlike time order */
        n += put_alloc(b + n, VT_TT_MAKE(1000 + i, 0), 0x7f0000000000ull + ((i * 7919) % N) * 4096,
                       4096);
    snapjoin_records(j, b, n);
    uint8_t *snap = malloc(8 + sizeof(vt_rec_snapshot) + (N / 3 + 2) * VT_ALLOC_REC_SIZE);
    assert_non_null(snap);
    size_t m = 8 + sizeof(vt_rec_snapshot), kept = 0;
    for (uint64_t i = 0; i < N; i += 3, kept++)
        m += put_alloc(snap + m, VT_TT_MAKE(1000 + i, 0),
                       0x7f0000000000ull + ((i * 7919) % N) * 4096, 4096);
    m += put_alloc(snap + m, VT_TT_MAKE(5000, 0), 0x7e0000000000ull, 8192);
    vt_rec_snapshot s = {VT_TT_MAKE(9000, 0), 0, 0, 0, 0, kept + 1, 0};
    uint64_t h = (uint64_t)VT_REC_SNAPSHOT | ((uint64_t)(8 + sizeof s) << 32);
    memcpy(snap, &h, 8);
    memcpy(snap + 8, &s, sizeof s);
    size_t len = 0;
    assert_int_equal(snapjoin_merge(j, snap, m, out, &len), 0);
    free(snap);
    free(b);
    snapjoin_free(j);
    return len;
}

static void test_ends_oldest_first(void **st)
{
    (void)st;
    uint64_t keep = hashseed_value;
    uint8_t *a = NULL, *b = NULL;
    size_t la = join(1, &a), lb = join(0x9e3779b97f4a7c15ull, &b);
    hashseed_value = keep;
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la); /* the same records whatever the seed */
    size_t at = 8 + sizeof(vt_rec_snapshot), frees = 0, allocs = 0;
    uint64_t last = 0;
    while (at + 8 <= la) {
        uint16_t type;
        uint32_t size;
        memcpy(&type, a + at, 2);
        memcpy(&size, a + at + 4, 4);
        assert_true(size >= 8 && size <= la - at);
        if (type == VT_REC_FREE) {
            assert_int_equal(allocs, 0); /* the frees first: an address may be reused */
            uint64_t tt, addr;
            memcpy(&tt, a + at + 8, 8);
            memcpy(&addr, a + at + 16, 8);
            assert_int_equal(tt, VT_TT_MAKE(9000, 0)); /* at the snapshot's time */
            /* oldest first: the handed-out allocation at addr was made at 1000 + i */
            uint64_t slot = (addr - 0x7f0000000000ull) / 4096, i = 0;
            while ((i * 7919) % N != slot)
                i++;
            assert_true(i % 3 != 0); /* not one the snapshot kept */
            assert_true(frees == 0 || i > last);
            last = i;
            frees++;
        } else {
            assert_int_equal(type, VT_REC_ALLOC);
            allocs++;
        }
        at += size;
    }
    assert_int_equal(frees, N - (N + 2) / 3);
    assert_int_equal(allocs, 1); /* only the new one: the kept ones are left alone */
    free(a);
    free(b);
}

/* a SNAP chunk whose records do not start with its SNAPSHOT is not a snapshot: -1. It had been
 * joined: its first ALLOC records read as the SNAPSHOT's fields, the rest walked from the middle
 * of a record (a 2 MiB size read as a zero header: the walk ended), so every allocation handed
 * out was freed and none of the snapshot's made (report of such a chunked trace: exit 0, its
 * process peak 420 MiB -> 351 MiB) */
static void test_not_a_snapshot(void **st)
{
    (void)st;
    snapjoin *j = snapjoin_new();
    assert_non_null(j);
    uint8_t before[2 * VT_ALLOC_REC_SIZE], snap[4 * VT_ALLOC_REC_SIZE];
    size_t n = put_alloc(before, VT_TT_MAKE(10, 0), 0x7f0000000000ull, 2 << 20);
    n += put_alloc(before + n, VT_TT_MAKE(20, 0), 0x7f0000200000ull, 2 << 20);
    snapjoin_records(j, before, n);
    size_t m = 0;
    for (uint64_t i = 0; i < 4; i++) /* the live set's ALLOC records, no SNAPSHOT before them */
        m +=
            put_alloc(snap + m, VT_TT_MAKE(10 + 10 * i, 0), 0x7f0000000000ull + (i << 21), 2 << 20);
    uint8_t *out = NULL;
    size_t len = 0;
    assert_int_equal(snapjoin_merge(j, snap, m, &out, &len), -1);
    assert_null(out);
    snapjoin_free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ends_oldest_first),
                                       cmocka_unit_test(test_not_a_snapshot)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
