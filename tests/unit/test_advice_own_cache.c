/* test_advice_own_cache.c — the low end of an out-of-memory run's need (advice_own_cache): its
 * prediction with the allocator cache at the share of the tensors the run held when it failed,
 * where the prediction counts the fragmentation floor in its place (a DLRM "needs ~19.72 GiB"
 * at the floor had taken 16.55 on a larger card; its own share 0.6 %). None where the cache is
 * measured or not told: a complete run, a lower bound, a trace of segments alone, a what-if at
 * another micro-batch, a share not below the prediction's cache; never below what was live at
 * the failure and the request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"

#define GiB (1024ull * 1024ull * 1024ull)

/* an out-of-memory run at B=2048 (no formula), its share at the failure 0.6 %, and its
 * prediction: 16 GiB of tensors, the floor's 20 % of them, 300 MiB outside PyTorch */
static void oom_run(model_calib *c, gpt_shape *s, prediction *p)
{
    memset(c, 0, sizeof *c);
    memset(s, 0, sizeof *s);
    memset(p, 0, sizeof *p);
    s->B = 2048, s->generic = 1;
    c->measured_shape = *s;
    c->has_oom = c->partial = c->calibrated = c->weights_exact = 1;
    c->cache_fraction = 0.006;
    c->later_cache_fraction = -1;
    c->oom_live.bytes[CAT_PARAMETERS] = 8 * GiB;
    c->oom_request = 2 * GiB;
    p->tensor_bytes = 16 * GiB;
    p->by_cat.bytes[CAT_CACHE] = 16 * GiB / 5;
    p->by_cat.bytes[CAT_CONTEXT] = 300ull << 20;
    p->peak_bytes = p->tensor_bytes + p->by_cat.bytes[CAT_CACHE] + (300ull << 20);
}

static void test_low_end(void **state)
{
    (void)state;
    model_calib c;
    gpt_shape s;
    prediction p;
    oom_run(&c, &s, &p);
    double share = 0;
    uint64_t low = advice_own_cache(&c, &s, &p, &share);
    uint64_t own = advice_bytes((double)(16 * GiB) * 0.006);
    assert_int_equal(low, 16 * GiB + own + (300ull << 20));
    assert_true(share == 0.006);
    /* never below what was live at the failure and the request */
    c.oom_live.bytes[CAT_PARAMETERS] = 16 * GiB;
    low = advice_own_cache(&c, &s, &p, &share);
    assert_int_equal(low, 18 * GiB);
    /* ... and none where that is the prediction's own peak or more */
    c.oom_live.bytes[CAT_PARAMETERS] = 18 * GiB;
    assert_int_equal(advice_own_cache(&c, &s, &p, &share), 0);
}

static void test_none(void **state)
{
    (void)state;
    model_calib c;
    gpt_shape s, t;
    prediction p;
    double share = 0;
    oom_run(&c, &s, &p);
    c.has_oom = 0; /* (a complete run: its share measured) */
    assert_int_equal(advice_own_cache(&c, &s, &p, &share), 0);
    oom_run(&c, &s, &p);
    c.lower = 1; /* (a lower bound counts no cache) */
    assert_int_equal(advice_own_cache(&c, &s, &p, &share), 0);
    oom_run(&c, &s, &p);
    c.weights_exact = 0; /* (segments alone: the cache at the failure not told) */
    assert_int_equal(advice_own_cache(&c, &s, &p, &share), 0);
    oom_run(&c, &s, &p);
    t = s, t.B = 1024; /* (a what-if: its verdict counts the floor) */
    assert_int_equal(advice_own_cache(&c, &t, &p, &share), 0);
    oom_run(&c, &s, &p);
    c.cache_fraction = 0.25; /* (its share above the prediction's cache) */
    assert_int_equal(advice_own_cache(&c, &s, &p, &share), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_low_end),
        cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
