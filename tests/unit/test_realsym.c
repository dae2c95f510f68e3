/* test_realsym.c — driver symbol lookups (preload/core/realsym.c): a symbol the driver lacks
 * is looked up once and then answered from the cache (it used to be searched again on every
 * event); a present one is cached too; a pointer stored later in a missing slot wins. Uses
 * the fake libcuda.so.1 from $BUILD/fakecuda. The walk over the loaded objects that a fork
 * child of a multithreaded parent uses (no loader lock) sees what dl_iterate_phdr sees. */
#include <dlfcn.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../preload/core/config.h"
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

/* one object as a walk reports it: name, base, and its PT_LOAD segments' extent */
typedef struct seen_obj {
    char name[256];
    uintptr_t addr, lo, hi;
    int nload;
} seen_obj;
typedef struct seen {
    seen_obj o[256];
    int n;
} seen;

static int note_obj(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    seen *s = data;
    if (s->n >= 256)
        return 1;
    seen_obj *o = &s->o[s->n++];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", info->dlpi_name ? info->dlpi_name : "");
    o->addr = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        o->lo = o->nload++ ? (lo < o->lo ? lo : o->lo) : lo;
        o->hi = hi > o->hi ? hi : o->hi;
    }
    return 0;
}

static int stop_at_cuda(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    return info->dlpi_name && strstr(info->dlpi_name, "libcuda.so") ? 7 : 0;
}

/* last: it leaves the settings as a fork child's */
static void walk_without_loader_lock(void **state)
{
    (void)state;
    static seen locked, unlocked;
    assert_false(vt__config_get()->loader_unsafe);
    vt__loaded_objects(note_obj, &locked);
    vt__config_fork_child(0); /* a single-threaded parent: nothing changes */
    assert_false(vt__config_get()->loader_unsafe);
    vt__config_fork_child(1);
    assert_true(vt__config_get()->loader_unsafe);
    assert_true(vt__config_get()->native_off_fork);
    assert_false(vt__config_get()->stack_mode & 1); /* VT_STACKS_NATIVE */
    vt__loaded_objects(note_obj, &unlocked);
    assert_true(locked.n >= 4); /* the program, vdso, libc, ld.so, the fake driver, ... */
    assert_int_equal(unlocked.n, locked.n);
    for (int i = 0; i < locked.n; i++) {
        assert_string_equal(unlocked.o[i].name, locked.o[i].name);
        assert_true(unlocked.o[i].addr == locked.o[i].addr);
        assert_int_equal(unlocked.o[i].nload, locked.o[i].nload);
        assert_true(unlocked.o[i].lo == locked.o[i].lo && unlocked.o[i].hi == locked.o[i].hi);
    }
    assert_int_equal(vt__loaded_objects(stop_at_cuda, NULL), 7); /* the callback's stop */
    static _Atomic(void *) slot;
    assert_non_null(vt__driver_sym_cached(&slot, "cuMemFree_v2")); /* NOLOAD still finds it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_looked_up_once),
        cmocka_unit_test(present_cached),
        cmocka_unit_test(stored_pointer_wins_over_missing),
        cmocka_unit_test(walk_without_loader_lock),
    };
    return cmocka_run_group_tests(tests, load_fake_driver, NULL);
}
