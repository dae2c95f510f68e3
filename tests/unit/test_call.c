/* test_call.c — the core sequence every hook hands its call to (preload/core/call.c): card
 * admission reserved before the real call and committed or rolled back after, refusals,
 * pitch sizes, nested calls passing through, VMM probes, errno kept, and 8 threads racing for
 * the last bytes of an emulated card. VRAMTRACE_CARD_BYTES = 1 GiB, trace in a temp dir. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace_walk.h"

#include "../../preload/core/call.h"
#include "../../preload/core/card.h"
#include "../../preload/core/output.h"
#include "../../preload/core/thread.h"
#include "../../preload/writer.h"
#include "vramtrace/trace_format.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define OOM 2

static char g_dir[64];

static uint64_t events(void)
{
    uint64_t ev = 0, dropped = 0;
    vt__writer_counts(&ev, &dropped);
    return ev;
}

/* a whole hooked allocation as a hook does it; real_result = what the "real" call returns */
static int hooked_alloc(uint16_t api, int space, uint64_t size, uint64_t addr, int real_result,
                        int *called)
{
    vt__call c;
    int r;
    *called = 0;
    if (vt__call_alloc_begin(&c, api, space, -1, size, 0)) {
        r = OOM;
    } else {
        *called = 1;
        r = real_result;
    }
    vt__call_alloc_end(&c, r, addr, size);
    return r;
}

static void hooked_free(int space, uint64_t addr)
{
    vt__call c;
    vt__call_free_begin(&c, VT_API_cudaFree, space, 0);
    vt__call_free_end(&c, 0, addr);
}

static int card_empty(void **state)
{
    (void)state;
    return vt__card_used(0) == 0 && vt__depth() == 0 ? 0 : -1;
}

static void commit_then_release(void **state)
{
    (void)state;
    int called;
    uint64_t before = events();
    assert_int_equal(hooked_alloc(VT_API_cudaMalloc, VT_SPACE_DEVICE, 3 * MIB, 0x1000, 0, &called),
                     0);
    assert_true(called);
    assert_int_equal(vt__card_used(0), 3 * MIB);
    hooked_free(VT_SPACE_DEVICE, 0x1000);
    assert_int_equal(vt__card_used(0), 0);
    assert_int_equal(events(), before + 2); /* one ALLOC, one FREE */
}

static void refused_when_full(void **state)
{
    (void)state;
    int called;
    vt__card_commit(0, VT_SPACE_DEVICE, 0x2000, 0, GIB - MIB);
    uint64_t before = events();
    assert_int_equal(hooked_alloc(VT_API_cudaMalloc, VT_SPACE_DEVICE, MIB + 1, 0x3000, 0, &called),
                     OOM);
    assert_false(called); /* the real function is not called */
    assert_int_equal(vt__card_used(0), GIB - MIB);
    assert_int_equal(events(), before + 1); /* the refusal is recorded (emulated OOM) */
    assert_int_equal(hooked_alloc(VT_API_cudaMalloc, VT_SPACE_DEVICE, MIB, 0x3000, 0, &called), 0);
    assert_true(called); /* exactly the last MiB fits */
    assert_int_equal(vt__card_used(0), GIB);
    hooked_free(VT_SPACE_DEVICE, 0x3000);
    hooked_free(VT_SPACE_DEVICE, 0x2000);
}

static void failure_rolls_back(void **state)
{
    (void)state;
    int called;
    assert_int_equal(
        hooked_alloc(VT_API_cudaMalloc, VT_SPACE_DEVICE, 64 * MIB, 0x4000, OOM, &called), OOM);
    assert_true(called);
    assert_int_equal(vt__card_used(0), 0); /* the reservation is returned */
    assert_int_equal(hooked_alloc(VT_API_cudaMalloc, VT_SPACE_DEVICE, 64 * MIB, 0x4000, 1, &called),
                     1);
    assert_int_equal(vt__card_used(0), 0);
}

static void pitch_commits_final_size(void **state)
{
    (void)state;
    vt__call c;
    assert_int_equal(
        vt__call_alloc_begin(&c, VT_API_cudaMallocPitch, VT_SPACE_DEVICE, -1, 1000 * 100, 0), 0);
    assert_int_equal(vt__card_used(0), 1000 * 100); /* reserved while in flight */
    vt__call_alloc_end(&c, 0, 0x5000, 1024 * 100);
    assert_int_equal(vt__card_used(0), 1024 * 100);
    hooked_free(VT_SPACE_DEVICE, 0x5000);
}

static void nested_passes_through(void **state)
{
    (void)state;
    int called;
    vt__card_commit(0, VT_SPACE_DEVICE, 0x6000, 0, GIB);
    uint64_t before = events();
    assert_true(vt__enter()); /* an outer hook (cudaMalloc) is running */
    assert_int_equal(hooked_alloc(VT_API_cuMemAlloc, VT_SPACE_DEVICE, MIB, 0x7000, 0, &called), 0);
    assert_true(called); /* the driver call inside is not admitted again, nor recorded */
    assert_int_equal(vt__depth(), 1);
    vt__leave();
    assert_int_equal(events(), before);
    assert_int_equal(vt__card_used(0), GIB);
    hooked_free(VT_SPACE_DEVICE, 0x6000);
}

static void host_never_refused(void **state)
{
    (void)state;
    int called;
    vt__card_commit(0, VT_SPACE_DEVICE, 0x8000, 0, GIB);
    assert_int_equal(hooked_alloc(VT_API_cudaHostAlloc, 0, 4 * GIB, 0x9000, 0, &called), 0);
    assert_true(called);
    assert_int_equal(vt__card_used(0), GIB);
    hooked_free(VT_SPACE_DEVICE, 0x8000);
}

static void vmm_probe_not_an_event(void **state)
{
    (void)state;
    int called;
    uint64_t before = events();
    /* CUDA_ERROR_NOT_SUPPORTED (801): PyTorch probing handle types */
    assert_int_equal(
        hooked_alloc(VT_API_cuMemCreate, VT_SPACE_VMM_HANDLE, 2 * MIB, 0, 801, &called), 801);
    assert_int_equal(events(), before);
    assert_int_equal(vt__card_used(0), 0);
    assert_int_equal(
        hooked_alloc(VT_API_cuMemCreate, VT_SPACE_VMM_HANDLE, 2 * MIB, 0, OOM, &called), OOM);
    assert_int_equal(events(), before + 1); /* out of memory is an event */
    assert_int_equal(
        hooked_alloc(VT_API_cuMemCreate, VT_SPACE_VMM_HANDLE, 2 * MIB, 0xa000, 0, &called), 0);
    assert_int_equal(vt__card_used(0), 2 * MIB);
    hooked_free(VT_SPACE_VMM_HANDLE, 0xa000);
}

static void errno_kept(void **state)
{
    (void)state;
    vt__call c;
    errno = 0;
    vt__call_alloc_begin(&c, VT_API_cudaMalloc, VT_SPACE_DEVICE, -1, MIB, 0);
    errno = 77; /* what the real call left */
    vt__call_alloc_end(&c, 0, 0xb000, MIB);
    assert_int_equal(errno, 77);
    vt__call_free_begin(&c, VT_API_cudaFree, VT_SPACE_DEVICE, 0);
    errno = 78;
    vt__call_free_end(&c, 0, 0xb000);
    assert_int_equal(errno, 78);
}

/* the records of one refusal, read back from a fresh trace file: a failed, emulated ALLOC
 * with the API's out-of-memory result, then an OOM naming the card and what was in use */
static void refusal_records(void **state)
{
    (void)state;
    int called;
    vt__writer_reset_for_tests();
    vt__card_commit(0, VT_SPACE_DEVICE, 0xc000, 0, GIB - MIB);
    assert_int_equal(hooked_alloc(VT_API_cuMemAlloc, VT_SPACE_DEVICE, 2 * MIB, 0xd000, 0, &called),
                     OOM);
    char path[4200];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    vt__card_release(VT_SPACE_DEVICE, 0xc000);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    vt_file_header h;
    assert_int_equal(fread(&h, sizeof h, 1, f), 1);
    vt_rec_header rh;
    int allocs = 0, ooms = 0;
    unsigned char buf[256];
    long end = 0;
    while (next_header(f, &rh, &end)) {
        size_t n = rh.size - sizeof rh;
        assert_true(n <= sizeof buf || rh.type == VT_REC_PROCESS);
        if (n > sizeof buf) {
            fseek(f, (long)n, SEEK_CUR);
            continue;
        }
        assert_int_equal(fread(buf, 1, n, f), n);
        if (rh.type == VT_REC_ALLOC) {
            vt_rec_alloc a;
            memcpy(&a, buf, sizeof a);
            assert_int_equal(VT_EVF_API(rh.flags), VT_API_cuMemAlloc);
            assert_true(rh.flags & VT_EVF_FAILED);
            assert_true(rh.flags & VT_EVF_EMULATED);
            assert_int_equal(a.result, OOM);
            assert_int_equal(a.size, 2 * MIB);
            assert_int_equal(a.addr, 0);
            allocs++;
        } else if (rh.type == VT_REC_OOM) {
            vt_rec_oom o;
            memcpy(&o, buf, sizeof o);
            assert_int_equal(allocs, 1); /* after its ALLOC */
            assert_int_equal(o.requested, 2 * MIB);
            assert_int_equal(o.capacity, GIB);
            assert_int_equal(o.process_used, GIB - MIB);
            ooms++;
        }
    }
    fclose(f);
    assert_int_equal(allocs, 1);
    assert_int_equal(ooms, 1);
    vt__writer_reset_for_tests(); /* the next test opens a new file */
}

/* ---- 8 threads racing for the last bytes ----------------------------------------------- */
#define THREADS 8
#define ROUNDS 50
#define SLICE (64 * MIB)
#define ROOM 3 /* slices left on the card each round */

static pthread_barrier_t g_start, g_done;
static _Atomic int g_passed;
static _Atomic uint64_t g_over; /* the largest card use seen by a passing thread */

static void *racer(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&g_start);
        vt__call c;
        uint64_t addr = 0x100000000ull + (round * THREADS + me) * SLICE;
        if (!vt__call_alloc_begin(&c, VT_API_cudaMalloc, VT_SPACE_DEVICE, -1, SLICE, 0)) {
            usleep(200); /* the real call takes time: others arrive meanwhile */
            vt__call_alloc_end(&c, 0, addr, SLICE);
            g_passed++;
            uint64_t used = vt__card_used(0);
            if (used > g_over)
                g_over = used;
        } else {
            vt__call_alloc_end(&c, OOM, 0, SLICE);
        }
        pthread_barrier_wait(&g_done);
        pthread_barrier_wait(&g_done); /* main checks and empties the card */
    }
    return NULL;
}

static void eight_threads_last_bytes(void **state)
{
    (void)state;
    pthread_t t[THREADS];
    pthread_barrier_init(&g_start, NULL, THREADS + 1);
    pthread_barrier_init(&g_done, NULL, THREADS + 1);
    for (uintptr_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, racer, (void *)i), 0);
    for (int round = 0; round < ROUNDS; round++) {
        vt__card_commit(0, VT_SPACE_DEVICE, 0x42, 0, GIB - ROOM * SLICE);
        g_passed = 0;
        pthread_barrier_wait(&g_start);
        pthread_barrier_wait(&g_done);
        assert_int_equal(g_passed, ROOM);
        assert_int_equal(vt__card_used(0), GIB);
        for (uintptr_t i = 0; i < THREADS; i++)
            vt__card_release(VT_SPACE_DEVICE, 0x100000000ull + (round * THREADS + i) * SLICE);
        vt__card_release(VT_SPACE_DEVICE, 0x42);
        pthread_barrier_wait(&g_done);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    assert_true(g_over <= GIB);
    assert_int_equal(vt__card_used(0), 0);
}

static int setup(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/vt-call-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char out[128];
    snprintf(out, sizeof out, "%s/t.vt", g_dir);
    setenv("VRAMTRACE_OUTPUT", out, 1);
    setenv("VRAMTRACE_CARD_BYTES", "1073741824", 1);
    setenv("VRAMTRACE_STACKS", "none", 1);
    vt__config_reload(); /* (the settings are the process's first environment's otherwise) */
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    vt__writer_close();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* once the trace has ended, a call made is counted as dropped (it had no place), but a VMM probe
 * is not: it would not have been an event either (an out-of-memory creation would) */
static void vmm_probe_after_the_end_not_dropped(void **state)
{
    (void)state;
    int called;
    uint64_t ev = 0, d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    vt__writer_close();
    vt__writer_counts(&ev, &d0);
    assert_int_equal(
        hooked_alloc(VT_API_cuMemCreate, VT_SPACE_VMM_HANDLE, 2 * MIB, 0, 801, &called), 801);
    vt__writer_counts(&ev, &d1);
    assert_int_equal(d1, d0);
    assert_int_equal(
        hooked_alloc(VT_API_cuMemCreate, VT_SPACE_VMM_HANDLE, 2 * MIB, 0, OOM, &called), OOM);
    vt__writer_counts(&ev, &d2);
    assert_int_equal(d2, d1 + 1);
    assert_int_equal(hooked_alloc(VT_API_cudaMalloc, VT_SPACE_DEVICE, MIB, 0xc000, 0, &called), 0);
    vt__writer_counts(&ev, &d3);
    assert_int_equal(d3, d2 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(commit_then_release, card_empty),
        cmocka_unit_test_setup(refused_when_full, card_empty),
        cmocka_unit_test_setup(failure_rolls_back, card_empty),
        cmocka_unit_test_setup(pitch_commits_final_size, card_empty),
        cmocka_unit_test_setup(nested_passes_through, card_empty),
        cmocka_unit_test_setup(host_never_refused, card_empty),
        cmocka_unit_test_setup(vmm_probe_not_an_event, card_empty),
        cmocka_unit_test_setup(errno_kept, card_empty),
        cmocka_unit_test_setup(refusal_records, card_empty),
        cmocka_unit_test_setup(eight_threads_last_bytes, card_empty),
        cmocka_unit_test_setup(vmm_probe_after_the_end_not_dropped, card_empty),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
