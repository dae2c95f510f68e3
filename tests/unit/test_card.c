/* test_card.c — card emulation accounting (preload/core/card.c): admission at the capacity
 * boundary, release sizes per (space, key), devices apart, re-committed keys counted once,
 * the rewritten memory info, bounded map under churn, threads. VRAMTRACE_CARD_BYTES = 1 GiB. */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../preload/core/card.h"
#include "../../preload/core/config.h"
#include "vramtrace/trace_format.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)

/* fits: whether `size` more bytes would be admitted now (a reservation, returned at once) */
static int fits(int device, uint64_t size)
{
    int ok = vt__card_reserve(device, size);
    if (ok)
        vt__card_unreserve(device, size);
    return ok;
}

/* each test leaves the card empty; this checks it and is the per-test setup */
static int card_empty(void **state)
{
    (void)state;
    for (int d = 0; d < 4; d++)
        if (vt__card_used(d) != 0)
            return -1;
    return 0;
}

static void admit_boundary(void **state)
{
    (void)state;
    assert_true(vt__card_enabled());
    assert_true(fits(0, GIB));
    assert_false(fits(0, GIB + 1));
    vt__card_commit(0, VT_SPACE_DEVICE, 0x1000, 0, GIB - MIB);
    assert_int_equal(vt__card_used(0), GIB - MIB);
    assert_true(fits(0, MIB));
    assert_false(fits(0, MIB + 1));
    assert_false(fits(0, UINT64_MAX)); /* overflow is not room */
    assert_int_equal(vt__card_release(VT_SPACE_DEVICE, 0x1000), GIB - MIB);
    assert_true(fits(0, GIB));
}

static void release_by_space_and_key(void **state)
{
    (void)state;
    vt__card_commit(0, VT_SPACE_DEVICE, 0x2000, 0, 3 * MIB);
    vt__card_commit(0, VT_SPACE_VMM_HANDLE, 0x2000, 0, 5 * MIB); /* same key, other space */
    assert_int_equal(vt__card_used(0), 8 * MIB);
    assert_int_equal(vt__card_release(VT_SPACE_VMM_HANDLE, 0x2000), 5 * MIB);
    assert_int_equal(vt__card_release(VT_SPACE_VMM_HANDLE, 0x2000), 0); /* twice: unknown */
    assert_int_equal(vt__card_release(VT_SPACE_DEVICE, 0x3000), 0);
    assert_int_equal(vt__card_used(0), 3 * MIB);
    assert_int_equal(vt__card_release(VT_SPACE_DEVICE, 0x2000), 3 * MIB);
    vt__card_commit(0, VT_SPACE_DEVICE, 0, 0, 7 * MIB); /* a failed allocation's NULL */
    assert_int_equal(vt__card_used(0), 0);
}

/* reserve: admission counts the bytes of calls in flight; commit settles the reservation at
 * the final size, unreserve returns it, a key-less commit drops it */
static void reserve_then_settle(void **state)
{
    (void)state;
    assert_true(vt__card_reserve(0, GIB - MIB));
    assert_int_equal(vt__card_used(0), GIB - MIB);
    assert_false(vt__card_reserve(0, 2 * MIB)); /* the reserved bytes count */
    assert_int_equal(vt__card_used(0), GIB - MIB);
    assert_true(vt__card_reserve(0, MIB));
    vt__card_unreserve(0, MIB); /* that call failed */
    vt__card_commit(0, VT_SPACE_DEVICE, 0x9000, GIB - MIB, GIB - 2 * MIB);
    assert_int_equal(vt__card_used(0), GIB - 2 * MIB);
    assert_int_equal(vt__card_release(VT_SPACE_DEVICE, 0x9000), GIB - 2 * MIB);
    assert_true(vt__card_reserve(0, 5));
    vt__card_commit(0, VT_SPACE_DEVICE, 0, 5, 5); /* no key: not accounted, reservation gone */
    assert_int_equal(vt__card_used(0), 0);
    assert_false(vt__card_reserve(0, UINT64_MAX)); /* overflow is not room */
}

static void devices_apart(void **state)
{
    (void)state;
    vt__card_commit(1, VT_SPACE_DEVICE, 0x4000, 0, GIB);
    assert_int_equal(vt__card_used(1), GIB);
    assert_int_equal(vt__card_used(0), 0);
    assert_false(fits(1, 1));
    assert_true(fits(0, GIB));
    /* the release finds the device from the entry */
    assert_int_equal(vt__card_release(VT_SPACE_DEVICE, 0x4000), GIB);
    assert_int_equal(vt__card_used(1), 0);
}

static void recommit_counted_once(void **state)
{
    (void)state;
    vt__card_commit(0, VT_SPACE_DEVICE, 0x5000, 0, 10 * MIB);
    vt__card_commit(2, VT_SPACE_DEVICE, 0x5000, 0, 4 * MIB); /* free never seen; address reused */
    assert_int_equal(vt__card_used(0), 0);
    assert_int_equal(vt__card_used(2), 4 * MIB);
    assert_int_equal(vt__card_release(VT_SPACE_DEVICE, 0x5000), 4 * MIB);
    assert_int_equal(vt__card_release(VT_SPACE_DEVICE, 0x5000), 0);
    assert_int_equal(vt__card_used(2), 0);
}

static void meminfo_rewritten(void **state)
{
    (void)state;
    uint64_t f = 70 * GIB, t = 80 * GIB;
    vt__card_meminfo(0, &f, &t);
    assert_int_equal(t, GIB);
    assert_int_equal(f, GIB);
    vt__card_commit(0, VT_SPACE_DEVICE, 0x6000, 0, 256 * MIB);
    f = 70 * GIB, t = 80 * GIB;
    vt__card_meminfo(0, &f, &t);
    assert_int_equal(f, GIB - 256 * MIB);
    f = 100 * MIB, t = 80 * GIB; /* the real card has less free than the emulated one */
    vt__card_meminfo(0, &f, &t);
    assert_int_equal(f, 100 * MIB);
    assert_int_equal(t, GIB);
    vt__card_commit(0, VT_SPACE_DEVICE, 0x7000, 0, GIB); /* past the card (in-flight admits) */
    f = 70 * GIB, t = 80 * GIB;
    vt__card_meminfo(0, &f, &t);
    assert_int_equal(f, 0);
    vt__card_release(VT_SPACE_DEVICE, 0x6000);
    vt__card_release(VT_SPACE_DEVICE, 0x7000);
}

/* a card larger than the device (run --card 64GiB on a 16 GiB GPU): the total is the device's,
 * never the card's, so that total - free is what the device holds in use (PyTorch's "this
 * process has 63.25 GiB memory in use" had come from a 64 GiB total and the device's free) */
static void meminfo_card_over_device(void **state)
{
    (void)state;
    uint64_t f = 200 * MIB, t = 512 * MIB;
    vt__card_meminfo(0, &f, &t);
    assert_int_equal(t, 512 * MIB);
    assert_int_equal(f, 200 * MIB);
    vt__card_commit(0, VT_SPACE_DEVICE, 0x8000, 0, 100 * MIB);
    f = 100 * MIB, t = 512 * MIB;
    vt__card_meminfo(0, &f, &t);
    assert_true(f <= t);
    assert_int_equal(t, 512 * MIB);
    assert_int_equal(f, 100 * MIB);
    vt__card_release(VT_SPACE_DEVICE, 0x8000);
}

static uint64_t heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* a million distinct addresses, few live at a time (an allocator without a cache): the map
 * must stay the size of what is live, not grow with every address ever seen */
static void churn_stays_small(void **state)
{
    (void)state;
    vt__card_commit(0, VT_SPACE_DEVICE, 0x10, 0, 1); /* the map exists before measuring */
    vt__card_release(VT_SPACE_DEVICE, 0x10);
    uint64_t before = heap_bytes();
    enum { LIVE = 16, N = 1000000 };
    for (uint64_t i = 1; i <= N; i++) {
        vt__card_commit(0, VT_SPACE_DEVICE, i << 9, 0, 512);
        if (i > LIVE)
            assert_int_equal(vt__card_release(VT_SPACE_DEVICE, (i - LIVE) << 9), 512);
    }
    assert_int_equal(vt__card_used(0), LIVE * 512);
    uint64_t after = heap_bytes();
    assert_true(after < before + MIB);
    for (uint64_t i = N - LIVE + 1; i <= N; i++)
        assert_int_equal(vt__card_release(VT_SPACE_DEVICE, i << 9), 512);
}

/* many live entries: the map grows and keeps every size */
static void many_live(void **state)
{
    (void)state;
    enum { N = 100000 };
    for (uint64_t i = 1; i <= N; i++)
        vt__card_commit(3, VT_SPACE_DEVICE, i * 4096, 0, i);
    assert_int_equal(vt__card_used(3), (uint64_t)N * (N + 1) / 2);
    for (uint64_t i = N; i >= 1; i--)
        assert_int_equal(vt__card_release(VT_SPACE_DEVICE, i * 4096), i);
}

static void *worker(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg << 40;
    for (uint64_t i = 1; i <= 20000; i++) {
        vt__card_commit(0, VT_SPACE_DEVICE, base + i * 256, 0, 256);
        if (i % 2 == 0) {
            vt__card_release(VT_SPACE_DEVICE, base + (i - 1) * 256);
            vt__card_release(VT_SPACE_DEVICE, base + i * 256);
        }
    }
    return NULL;
}

static void threads_exact(void **state)
{
    (void)state;
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(vt__card_used(0), 0);
}

int main(void)
{
    setenv("VRAMTRACE_CARD_BYTES", "1073741824", 1); /* before the first vt__config_get */
    vt__config_reload(); /* (the settings are the process's first environment's otherwise) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(admit_boundary, card_empty),
        cmocka_unit_test_setup(reserve_then_settle, card_empty),
        cmocka_unit_test_setup(release_by_space_and_key, card_empty),
        cmocka_unit_test_setup(devices_apart, card_empty),
        cmocka_unit_test_setup(recommit_counted_once, card_empty),
        cmocka_unit_test_setup(meminfo_rewritten, card_empty),
        cmocka_unit_test_setup(meminfo_card_over_device, card_empty),
        cmocka_unit_test_setup(churn_stays_small, card_empty),
        cmocka_unit_test_setup(many_live, card_empty),
        cmocka_unit_test_setup(threads_exact, card_empty),
    };
    return cmocka_run_group_tests(tests, NULL, card_empty);
}
