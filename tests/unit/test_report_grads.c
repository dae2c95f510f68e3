/* test_report_grads.c — whether an out-of-memory error's request is the size of a weight live
 * then, as PyTorch's allocator rounds a block or a segment (analyzer/report/report_grads.c): a
 * DLRM's table of 128,000,000 B asks for a 124 MiB segment for its gradient. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"

#define MiB 1048576ull

static uint64_t weight_of(uint64_t requested, const live_item *items, size_t n, uint32_t *count)
{
    static replay_result r;
    static run_facts f;
    memset(&r, 0, sizeof r);
    memset(&f, 0xff, sizeof f); /* (what it sets is set, not left) */
    r.has_oom = 1, r.tensor_mode = 1, r.oom_requested = requested;
    r.at_oom.items = (live_item *)items, r.at_oom.n = n;
    report_grads(&r, &f);
    *count = f.oom_weight_n;
    return f.oom_weight;
}

static void test_weight_sized(void **state)
{
    (void)state;
    live_item v[5];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 3; i++)
        v[i].category = CAT_PARAMETERS, v[i].size = 128000000;
    v[3].category = CAT_PARAMETERS, v[3].size = 8192; /* (a small layer's) */
    v[4].category = CAT_GRADIENTS, v[4].size = 200 * MiB;
    uint32_t n;
    assert_int_equal(weight_of(124 * MiB, v, 5, &n), 128000000); /* its segment's 2 MiB */
    assert_int_equal(n, 3);
    assert_int_equal(weight_of(128000000, v, 5, &n), 128000000); /* the tensor itself */
    assert_int_equal(weight_of(126 * MiB, v, 5, &n), 0);         /* a segment too large */
    assert_int_equal(weight_of(122 * MiB, v, 5, &n), 0);         /* too small */
    assert_int_equal(n, 0);
    assert_int_equal(weight_of(200 * MiB, v, 5, &n), 0);  /* a gradient's size: no weight's */
    assert_int_equal(weight_of(2 * MiB, v, 5, &n), 8192); /* a small block's segment */
    assert_int_equal(weight_of(8192, v, 5, &n), 8192);
    /* a segment of 20 MiB for a block between 1 and 10 MiB */
    v[3].size = 5 * MiB + 3;
    assert_int_equal(weight_of(20 * MiB, v, 5, &n), 5 * MiB + 3);
    assert_int_equal(weight_of(5 * MiB + 512, v, 5, &n), 5 * MiB + 3); /* its block */
    /* two sizes of one segment: the larger, counted */
    v[0].size = 127 * MiB;
    assert_int_equal(weight_of(128 * MiB, v, 5, &n), 127 * MiB);
    assert_int_equal(n, 1);
    v[1].size = v[2].size = 127 * MiB + 4096;
    assert_int_equal(weight_of(128 * MiB, v, 5, &n), 127 * MiB + 4096);
    assert_int_equal(n, 2);
}

/* no OOM, segments only (no tensor's size), or a segment PyTorch reported: none */
static void test_not_known(void **state)
{
    (void)state;
    static replay_result r;
    static run_facts f;
    live_item v = {0};
    v.category = CAT_PARAMETERS, v.size = 64 * MiB;
    memset(&r, 0, sizeof r);
    r.has_oom = 1, r.tensor_mode = 1, r.oom_requested = 64 * MiB;
    r.at_oom.items = &v, r.at_oom.n = 1;
    report_grads(&r, &f);
    assert_int_equal(f.oom_weight, 64 * MiB);
    r.tensor_mode = 0;
    report_grads(&r, &f);
    assert_int_equal(f.oom_weight, 0);
    r.tensor_mode = 1, r.has_oom = 0;
    report_grads(&r, &f);
    assert_int_equal(f.oom_weight, 0);
    r.has_oom = 1, v.torch_segment = 1;
    report_grads(&r, &f);
    assert_int_equal(f.oom_weight, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weight_sized),
        cmocka_unit_test(test_not_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
