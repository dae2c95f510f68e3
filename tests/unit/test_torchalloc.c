/* test_torchalloc.c — the allocator tracker's checks (preload/torch/torchalloc.c) without
 * LD_PRELOAD: layouts from mangled names, the .symtab reader on the fake libc10_cuda.so
 * builds, the vtable slot search, the segment self-check, and the state machine attaching to
 * the fake for real (a wrong first segment refuses, the right one activates; events that came
 * during the check are dropped and counted in the trace). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../preload/core/config.h"
#include "../../preload/core/output.h"
#include "../../preload/torch/torchalloc.h"
#include "../../preload/writer.h"
#include "reader.h"

#define ATTACH VT_TORCH_SYM_ATTACH_PREFIX

static char g_dir[512];

/* fake_lib: the fake libc10_cuda.so of a layout, under $BUILD/fakecuda (or, for the
 * sanitizer build in $BUILD = build/asan, the plain build's one level up). */
static const char *fake_lib(const char *variant, char *buf, size_t len)
{
    const char *b = getenv("BUILD");
    snprintf(buf, len, "%s/fakecuda/c10/%s/libc10_cuda.so", b ? b : "build", variant);
    if (access(buf, R_OK) != 0)
        snprintf(buf, len, "%s/../fakecuda/c10/%s/libc10_cuda.so", b ? b : "build", variant);
    return buf;
}

static void layouts_from_names(void **st)
{
    (void)st;
    assert_int_equal(
        vt__torch_layout_of(ATTACH "St8functionIFvRKNS_22CachingDeviceAllocator10TraceEntryEEE"),
        VT_TORCH_LAYOUT_CDA);
    assert_int_equal(vt__torch_layout_of(ATTACH "St8functionIFvRKNS1_10TraceEntryEEE"),
                     VT_TORCH_LAYOUT_CCA);
    /* another namespace, a longer name, another class, nothing */
    assert_int_equal(
        vt__torch_layout_of(ATTACH "St8functionIFvRKNS_18SomeOtherAllocator10TraceEntryEEE"),
        VT_TORCH_LAYOUT_NONE);
    assert_int_equal(vt__torch_layout_of(ATTACH "St8functionIFvRKNS1_10TraceEntryEEEx"),
                     VT_TORCH_LAYOUT_NONE);
    assert_int_equal(
        vt__torch_layout_of("_ZN3c104cuda20CUDACachingAllocator18PerTensorAllocator27"
                            "attachAllocatorTraceTrackerESt8functionIFvRKNS1_10TraceEntryEEE"),
        VT_TORCH_LAYOUT_NONE);
    assert_int_equal(vt__torch_layout_of(NULL), VT_TORCH_LAYOUT_NONE);
    assert_string_equal(vt__torch_layout_name(VT_TORCH_LAYOUT_CDA),
                        "c10::CachingDeviceAllocator::TraceEntry");
    assert_string_equal(vt__torch_layout_name(99), "unknown");
}

static void symtab_of_fakes(void **st)
{
    (void)st;
    char p[600], why[600];
    vt__torch_syms s;
    assert_int_equal(vt__torch_read_symtab(fake_lib("cda", p, sizeof p), 0, &s, why, sizeof why),
                     0);
    assert_true(s.allocator && s.vtable && s.attach && s.vtable_size >= 24);
    assert_int_equal(s.layout, VT_TORCH_LAYOUT_CDA);
    assert_int_equal(
        vt__torch_read_symtab(fake_lib("cca", p, sizeof p), 0x1000, &s, why, sizeof why), 0);
    assert_int_equal(s.layout, VT_TORCH_LAYOUT_CCA);
    /* the method exists but its TraceEntry is unknown: found, layout NONE (caller refuses) */
    assert_int_equal(vt__torch_read_symtab(fake_lib("odd", p, sizeof p), 0, &s, why, sizeof why),
                     0);
    assert_int_equal(s.layout, VT_TORCH_LAYOUT_NONE);
    assert_non_null(strstr(s.attach_name, "SomeOtherAllocator"));
    /* stripped: no .symtab */
    char cmd[1400], stripped[600];
    snprintf(stripped, sizeof stripped, "%s/stripped.so", g_dir);
    snprintf(cmd, sizeof cmd, "strip -o %s %s 2>/dev/null", stripped, fake_lib("cda", p, sizeof p));
    if (system(cmd) == 0) {
        assert_int_equal(vt__torch_read_symtab(stripped, 0, &s, why, sizeof why), -1);
        assert_non_null(strstr(why, "stripped"));
    }
    /* not ELF, missing */
    snprintf(stripped, sizeof stripped, "%s/notelf.so", g_dir);
    FILE *f = fopen(stripped, "w");
    assert_non_null(f);
    fputs("this is not an ELF file, but long enough to have a header's size", f);
    fclose(f);
    assert_int_equal(vt__torch_read_symtab(stripped, 0, &s, why, sizeof why), -1);
    assert_int_equal(vt__torch_read_symtab("/nonexistent/libc10_cuda.so", 0, &s, why, sizeof why),
                     -1);
}

static void vtable_slots(void **st)
{
    (void)st;
    char why[300];
    uint64_t vt[6] = {0, 0x1111, 0xa0, 0xb0, 0xc0, 0xd0};
    uint64_t vptr = (uint64_t)(uintptr_t)&vt[2];
    assert_int_equal(vt__torch_find_slot(vt, sizeof vt, vptr, 0xc0, why, sizeof why), 2);
    assert_int_equal(vt__torch_find_slot(vt, sizeof vt, vptr, 0xa0, why, sizeof why), 0);
    /* another class's object: its vptr is not this vtable */
    assert_int_equal(vt__torch_find_slot(vt, sizeof vt, vptr + 8, 0xc0, why, sizeof why), -1);
    assert_non_null(strstr(why, "vtable"));
    /* the method is not in the vtable (or past its size) */
    assert_int_equal(vt__torch_find_slot(vt, sizeof vt, vptr, 0xe0, why, sizeof why), -1);
    assert_int_equal(vt__torch_find_slot(vt, 4 * 8, vptr, 0xd0, why, sizeof why), -1);
}

static void segment_check(void **st)
{
    (void)st;
    char why[400];
    const uint64_t A = 0x200000000000ull, M = 2u << 20;
    assert_true(vt__torch_check(VT_TORCH_SEGMENT_ALLOC, A, M, A, M, 0, why, sizeof why));
    assert_false(vt__torch_check(VT_TORCH_SEGMENT_ALLOC, A + 512, M, A, M, 0, why, sizeof why));
    assert_non_null(strstr(why, "not the one the hook recorded"));
    assert_false(vt__torch_check(VT_TORCH_SEGMENT_ALLOC, A, M + 512, A, M, 0, why, sizeof why));
    assert_false(
        vt__torch_check(VT_TORCH_SEGMENT_ALLOC, A, M, A, M, 1, why, sizeof why)); /* hook mapped */
    /* expandable segments: one SEGMENT_MAP covers the chunks mapped one by one; the last ends it */
    assert_true(vt__torch_check(VT_TORCH_SEGMENT_MAP, A, 3 * M, A + 2 * M, M, 1, why, sizeof why));
    assert_true(vt__torch_check(VT_TORCH_SEGMENT_MAP, A, M, A, M, 1, why, sizeof why));
    assert_false(vt__torch_check(VT_TORCH_SEGMENT_MAP, A, 3 * M, A + M, M, 1, why, sizeof why));
    assert_false(vt__torch_check(VT_TORCH_SEGMENT_MAP, A, 3 * M, A + 2 * M, M, 0, why, sizeof why));
    assert_false(vt__torch_check(VT_TORCH_ALLOC, A, M, A, M, 0, why, sizeof why));
}

typedef void *(*malloc_fn)(size_t);
typedef void (*void_fn)(void);
typedef void (*free_fn)(void *);

/* The whole path on the fake (layout cda), in this process: no library -> stays idle; a wrong
 * first segment -> refused and nothing recorded as active; the right one -> active. */
static void attach_for_real(void **st)
{
    (void)st;
    vt__torch_reset();
    vt__torch_segment(0x1000, 4096, 0); /* no libc10_cuda.so loaded: try again later */
    assert_int_equal(vt__torch_state(), VT_TORCH_IDLE);
    char p[600];
    void *h = dlopen(fake_lib("cda", p, sizeof p), RTLD_NOW | RTLD_GLOBAL);
    assert_non_null(h);
    malloc_fn m = (malloc_fn)dlsym(h, "fake_c10_malloc");
    free_fn f = (free_fn)dlsym(h, "fake_c10_free");
    void_fn empty = (void_fn)dlsym(h, "fake_c10_empty_cache");
    assert_true(m && f && empty);
    /* learn where the next 2 MiB segment goes (first fit gives it back after empty_cache) */
    void *t = m(100);
    assert_non_null(t);
    uint64_t seg = (uint64_t)(uintptr_t)t;
    f(t);
    empty();

    /* 1. the hook says it recorded another segment than the one the tracker then reports */
    vt__torch_segment(seg + 4096, 2u << 20, 0);
    assert_int_equal(vt__torch_state(), VT_TORCH_CHECKING);
    t = m(100); /* SEGMENT_ALLOC(seg) arrives: mismatch */
    assert_int_equal(vt__torch_state(), VT_TORCH_REFUSED);
    assert_non_null(strstr(vt__torch_reason(), "not the one the hook recorded"));
    vt__torch_segment(seg, 2u << 20, 0); /* refused stays refused: segment mode */
    assert_int_equal(vt__torch_state(), VT_TORCH_REFUSED);
    f(t);
    empty();

    /* 2. the right segment: active */
    vt__torch_reset();
    vt__torch_segment(seg, 2u << 20, 0);
    assert_int_equal(vt__torch_state(), VT_TORCH_CHECKING);
    t = m(100);
    assert_int_equal(vt__torch_state(), VT_TORCH_ACTIVE);
    assert_string_equal(vt__torch_reason(), "");
    f(t);

    /* 3. an action no layout has: stop using it */
    vt__torch_entry bad = {42, 0, {0}, 0, {0, 0}, 0, 0};
    vt__torch_on_entry(&bad);
    assert_int_equal(vt__torch_state(), VT_TORCH_REFUSED);
    assert_non_null(strstr(vt__torch_reason(), "action 42"));

    /* 4. initialized() is known: a segment the tracker does not report (another library's
     * cudaMalloc) is not a failure; the allocator's next segment completes the check */
    vt__torch_reset();
    empty();
    vt__torch_segment(seg + (64u << 20), 2u << 20, 0); /* not the allocator's */
    assert_int_equal(vt__torch_state(), VT_TORCH_CHECKING);
    vt__torch_segment(seg, 2u << 20, 0); /* the allocator's, reported by the tracker next */
    assert_int_equal(vt__torch_state(), VT_TORCH_CHECKING);
    t = m(100);
    assert_int_equal(vt__torch_state(), VT_TORCH_ACTIVE);
    f(t);
    vt__torch_reset();
}

/* notes_dropped: the counts of the DROPPED notes in the trace at path (their addr). */
static uint64_t notes_dropped(const char *path, int *n)
{
    char msg[200];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    reader_record rec;
    uint64_t count = 0;
    *n = 0;
    while (reader_next(r, &rec))
        if (rec.type == VT_REC_ALLOC && rec.u.ev.api == VT_API_torchTrackerNote &&
            rec.u.ev.size == VT_TRACKER_DROPPED)
            count += rec.u.ev.addr, (*n)++;
    reader_close(r);
    return count;
}

/* 5. tensor events (of other threads) that arrive while the first segment is being checked are
 * dropped, not trusted, and the trace says how many: one DROPPED note whose addr is the count. */
static void dropped_before_check(void **st)
{
    (void)st;
    char p[600], out[700];
    void *h = dlopen(fake_lib("cda", p, sizeof p), RTLD_NOW | RTLD_GLOBAL);
    assert_non_null(h);
    malloc_fn m = (malloc_fn)dlsym(h, "fake_c10_malloc");
    free_fn f = (free_fn)dlsym(h, "fake_c10_free");
    void_fn empty = (void_fn)dlsym(h, "fake_c10_empty_cache");
    assert_true(m && f && empty);
    void *t = m(100);
    uint64_t seg = (uint64_t)(uintptr_t)t;
    f(t);
    empty();
    snprintf(out, sizeof out, "%s/dropped.vt", g_dir);
    setenv("VRAMTRACE_OUTPUT", out, 1);
    vt__config_reload();
    vt__writer_reset_for_tests();
    vt__torch_reset();
    vt__torch_segment(seg, 2u << 20, 0);
    assert_int_equal(vt__torch_state(), VT_TORCH_CHECKING);
    vt__torch_entry other = {VT_TORCH_ALLOC, 0, {0}, seg + 4096, {0, 0}, 0, 512};
    for (int i = 0; i < 3; i++)
        vt__torch_on_entry(&other);
    assert_int_equal(vt__torch_state(), VT_TORCH_CHECKING);
    t = m(100); /* the tracker's SEGMENT_ALLOC(seg): confirmed */
    assert_int_equal(vt__torch_state(), VT_TORCH_ACTIVE);
    f(t);
    vt__torch_reset();
    vt__writer_close();
    int n;
    assert_int_equal(notes_dropped(out, &n), 3);
    assert_int_equal(n, 1);
}

int main(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/vt-torchalloc.%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", g_dir);
    if (system(cmd) != 0)
        return 1;
    char out[700];
    snprintf(out, sizeof out, "%s/t.vt", g_dir);
    setenv("VRAMTRACE_OUTPUT", out, 1);
    unsetenv("VRAMTRACE_DISABLE");
    vt__config_reload();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layouts_from_names), cmocka_unit_test(symtab_of_fakes),
        cmocka_unit_test(vtable_slots),       cmocka_unit_test(segment_check),
        cmocka_unit_test(attach_for_real),    cmocka_unit_test(dropped_before_check),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
