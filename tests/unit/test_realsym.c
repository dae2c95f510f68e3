/* test_realsym.c — driver symbol lookups (preload/core/realsym.c): a symbol the driver lacks
 * is looked up once and then answered from the cache (it used to be searched again on every
 * event); a present one is cached too; a pointer stored later in a missing slot wins. Uses
 * the fake libcuda.so.1 from $BUILD/fakecuda. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../preload/core/realsym.h"

static int load_fake_driver(void **state)
{
    (void)state;
    const char *build = getenv("BUILD");
    char path[4096];
    snprintf(path, sizeof path, "%s/fakecuda/libcuda.so.1", build && *build ? build : "build");
    if (dlopen(path, RTLD_NOW | RTLD_GLOBAL))
        return 0;
    /* make check builds into $BUILD/asan: the fake driver is the plain build's */
    snprintf(path, sizeof path, "%s/../fakecuda/libcuda.so.1", build && *build ? build : "build");
    return dlopen(path, RTLD_NOW | RTLD_GLOBAL) ? 0 : -1;
}

static void missing_looked_up_once(void **state)
{
    (void)state;
    static _Atomic(void *) slot;
    unsigned long before = vt__driver_sym_lookups();
    assert_null(vt__driver_sym_cached(&slot, "cuNoSuchFunctionInAnyDriver"));
    assert_int_equal(vt__driver_sym_lookups(), before + 1);
    for (int i = 0; i < 1000; i++)
        assert_null(vt__driver_sym_cached(&slot, "cuNoSuchFunctionInAnyDriver"));
    assert_int_equal(vt__driver_sym_lookups(), before + 1);
}

static void present_cached(void **state)
{
    (void)state;
    static _Atomic(void *) slot;
    unsigned long before = vt__driver_sym_lookups();
    void *p = vt__driver_sym_cached(&slot, "cuMemAlloc_v2");
    assert_non_null(p);
    assert_ptr_equal(vt__driver_sym_cached(&slot, "cuMemAlloc_v2"), p);
    assert_int_equal(vt__driver_sym_lookups(), before + 1);
}

static void stored_pointer_wins_over_missing(void **state)
{
    (void)state;
    static _Atomic(void *) slot;
    assert_null(vt__driver_sym_cached(&slot, "cuNoSuchFunctionEither"));
    slot = (void *)&missing_looked_up_once; /* cuGetProcAddress handed the real one later */
    assert_ptr_equal(vt__driver_sym_cached(&slot, "cuNoSuchFunctionEither"),
                     (void *)&missing_looked_up_once);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_looked_up_once),
        cmocka_unit_test(present_cached),
        cmocka_unit_test(stored_pointer_wins_over_missing),
    };
    return cmocka_run_group_tests(tests, load_fake_driver, NULL);
}
