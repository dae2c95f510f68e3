/* test_device.c — context measuring (preload/core/device.c): the memory a new context takes,
 * read with the driver's functions given as a table (here fakes): used = total - free, the
 * thread's current context restored whether the measurement works or fails; the first
 * context of each device is measured once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../preload/core/device.h"

#define GIB (1ull << 30)

static CUcontext g_current;
static int g_set_calls, g_fail_info, g_fail_set, g_fail_get;
static size_t g_free = 3 * GIB, g_total = 8 * GIB;
static CUcontext g_current_during_info;

static CUresult fake_get(CUcontext *c)
{
    if (g_fail_get)
        return CUDA_ERROR_NOT_INITIALIZED;
    *c = g_current;
    return CUDA_SUCCESS;
}

static CUresult fake_set(CUcontext c)
{
    g_set_calls++;
    if (g_fail_set)
        return CUDA_ERROR_NOT_INITIALIZED;
    g_current = c;
    return CUDA_SUCCESS;
}

static CUresult fake_info(size_t *f, size_t *t)
{
    g_current_during_info = g_current;
    if (g_fail_info)
        return CUDA_ERROR_NOT_INITIALIZED;
    *f = g_free;
    *t = g_total;
    return CUDA_SUCCESS;
}

static const vt__ctx_ops g_ops = {fake_get, fake_set, fake_info};
#define CTX_A ((CUcontext)0x1000)
#define CTX_NEW ((CUcontext)0x2000)

static int reset(void **state)
{
    (void)state;
    g_current = CTX_A;
    g_set_calls = g_fail_info = g_fail_set = g_fail_get = 0;
    g_current_during_info = NULL;
    g_free = 3 * GIB;
    g_total = 8 * GIB;
    return 0;
}

static void measured_in_new_context(void **state)
{
    (void)state;
    uint64_t used = 1, total = 1;
    assert_int_equal(vt__context_measure(&g_ops, CTX_NEW, &used, &total), 0);
    assert_int_equal(used, 5 * GIB);
    assert_int_equal(total, 8 * GIB);
    assert_ptr_equal(g_current_during_info, CTX_NEW); /* asked inside the new context */
    assert_ptr_equal(g_current, CTX_A);               /* and the caller's one restored */
}

static void info_fails_context_restored(void **state)
{
    (void)state;
    uint64_t used = 1, total = 1;
    g_fail_info = 1;
    assert_int_equal(vt__context_measure(&g_ops, CTX_NEW, &used, &total), -1);
    assert_int_equal(used, 0);
    assert_int_equal(total, 0);
    assert_ptr_equal(g_current, CTX_A);
}

static void set_or_get_fails(void **state)
{
    (void)state;
    uint64_t used = 1, total = 1;
    g_fail_set = 1;
    assert_int_equal(vt__context_measure(&g_ops, CTX_NEW, &used, &total), -1);
    assert_ptr_equal(g_current, CTX_A);
    g_fail_set = 0;
    g_fail_get = 1;
    g_set_calls = 0;
    assert_int_equal(vt__context_measure(&g_ops, CTX_NEW, &used, &total), -1);
    assert_int_equal(g_set_calls,
                     0); /* no previous context known: the current one is not touched */
    assert_int_equal(used, 0);
}

static void missing_function(void **state)
{
    (void)state;
    uint64_t used = 1, total = 1;
    vt__ctx_ops ops = {fake_get, fake_set, NULL};
    assert_int_equal(vt__context_measure(&ops, CTX_NEW, &used, &total), -1);
    assert_int_equal(g_set_calls, 0);
    assert_int_equal(total, 0);
}

static void free_above_total_is_no_size(void **state)
{
    (void)state;
    uint64_t used = 1, total = 1;
    g_free = 9 * GIB; /* an inconsistent answer never becomes a huge size */
    assert_int_equal(vt__context_measure(&g_ops, CTX_NEW, &used, &total), -1);
    assert_int_equal(used, 0);
    assert_ptr_equal(g_current, CTX_A);
}

static void first_context_once_per_device(void **state)
{
    (void)state;
    assert_true(vt__context_first(0));
    assert_false(vt__context_first(0));
    assert_true(vt__context_first(5));
    assert_true(vt__context_first(63));
    assert_false(vt__context_first(5));
    assert_false(vt__context_first(-1));
    assert_false(vt__context_first(64));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(measured_in_new_context, reset),
        cmocka_unit_test_setup(info_fails_context_restored, reset),
        cmocka_unit_test_setup(set_or_get_fails, reset),
        cmocka_unit_test_setup(missing_function, reset),
        cmocka_unit_test_setup(free_above_total_is_no_size, reset),
        cmocka_unit_test_setup(first_context_once_per_device, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
