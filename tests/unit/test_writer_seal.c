/* test_writer_seal.c — the race the seal check of the block layout is for (preload/writer.c,
 * in_block): a thread that loaded the current window, then was descheduled before saying it
 * holds it, while a close (or a switch) sealed the window and, finding no thread holding it,
 * ended it (wrote the trailer; or retired and unmapped it). Its block in that window still has
 * room; storing there would put a record behind the trailer's count (close) or into an unmapped
 * window (switch: SIGSEGV). This binary links writer.c built with VT_WRITER_TEST_HOOKS
 * (Makefile), whose call between the load and the hold (vt__writer_test_before_hold) stops the
 * thread there while the main thread closes or switches. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "writer_files.h"
#include "../../preload/writer_internal.h"

static _Atomic int g_armed, g_paused, g_go;
static _Atomic int g_store_armed; /* 1: the victim stops in vt__writer_test_before_store */
static __thread int t_victim;

static void pause_victim(_Atomic int *armed)
{
    if (!t_victim || !atomic_load(armed))
        return;
    atomic_store(armed, 0);
    atomic_store(&g_paused, 1);
    while (!atomic_load(&g_go))
        sched_yield();
}

void vt__writer_test_before_hold(void)
{
    pause_victim(&g_armed);
}

void vt__writer_test_before_store(void)
{
    pause_victim(&g_store_armed);
}

/* victim: a record (its block in the current window), then a second one stopped before its
 * hold (arg NULL) or before its store (arg non-NULL) until the main thread lets it go; the
 * second's result */
static void *victim(void *arg)
{
    t_victim = 1;
    uint64_t a[4] = {1, 1, 1, 1}, b[4] = {2, 2, 2, 2};
    if (vt__write(VT_REC_ALLOC, 1, a, sizeof a, NULL, 0) != 0)
        return (void *)(intptr_t)99;
    atomic_store(arg ? &g_store_armed : &g_armed, 1);
    return (void *)(intptr_t)vt__write(VT_REC_ALLOC, 2, b, sizeof b, NULL, 0);
}

/* start_victim: the trace `name` opened by a record of the main thread (its path), then the
 * victim stopped between its second record's load of the window and its hold (at_store 0), or
 * between its check that its block's window takes the record and its store (1) */
static pthread_t start_victim(const char *name, char *path, size_t n, int at_store)
{
    use_output(name);
    uint64_t p[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 0, p, sizeof p, NULL, 0), 0);
    snprintf(path, n, "%s", vt__writer_path());
    atomic_store(&g_paused, 0);
    atomic_store(&g_go, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, victim, at_store ? (void *)1 : NULL), 0);
    while (!atomic_load(&g_paused))
        sched_yield();
    return t;
}

static int finish_victim(pthread_t t)
{
    atomic_store(&g_go, 1);
    void *r;
    assert_int_equal(pthread_join(t, &r), 0);
    return (int)(intptr_t)r;
}

static int count_type(const uint16_t *t, int n, uint16_t type)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += t[i] == type;
    return k;
}

/* all_counted: the trace at path holds `want` ALLOC records, each once, and its trailer counts
 * exactly them, none dropped */
static void all_counted(const char *path, int want)
{
    uint16_t *types = malloc(sizeof *types * 40000);
    assert_non_null(types);
    int n = read_records(path, types, 39999);
    assert_int_equal(count_type(types, n, VT_REC_ALLOC), want);
    free(types);
    vt_rec_trailer tr = last_trailer(path);
    assert_int_equal(tr.n_events, (uint64_t)want);
    assert_int_equal(tr.n_dropped, 0);
}

/* a close while the victim stands between its load and its hold: its record is not stored in
 * the closed window (the trailer's count would not have it): refused and counted as dropped */
static void test_close_between_load_and_hold(void **st)
{
    (void)st;
    char path[256];
    pthread_t t = start_victim("sealclose.vt", path, sizeof path, 0);
    vt__writer_close();
    assert_int_equal(finish_victim(t), -1);
    uint16_t types[64];
    int n = read_records(path, types, 63);
    assert_int_equal(count_type(types, n, VT_REC_ALLOC), 2);
    assert_int_equal(types[n - 1], VT_REC_TRAILER);
    vt_rec_trailer tr = last_trailer(path);
    assert_int_equal(tr.n_events, 2);
    assert_int_equal(tr.n_dropped, 1);
}

/* a window switch meanwhile (the main thread fills the window: it is sealed, retired and, held
 * by no thread, unmapped): the victim's record goes into the next window, every record is in
 * the file once and counted */
static void test_switch_between_load_and_hold(void **st)
{
    (void)st;
    char path[256];
    pthread_t t = start_victim("sealswitch.vt", path, sizeof path, 0);
    uint64_t p[4] = {0};
    window *w = atomic_load(&vt__ws.cur);
    int mine = 1;
    while (atomic_load(&vt__ws.cur) == w) { /* past the victim's window */
        assert_int_equal(vt__write(VT_REC_ALLOC, 0, p, sizeof p, NULL, 0), 0);
        mine++;
    }
    for (int i = 0; i < 2000; i++, mine++) /* past the next, as far as the victim knows */
        assert_int_equal(vt__write(VT_REC_ALLOC, 0, p, sizeof p, NULL, 0), 0);
    assert_true(w->unmapped); /* (what a store into its block would have hit) */
    assert_int_equal(finish_victim(t), 0);
    vt__writer_close();
    all_counted(path, mine + 2);
}

static void *closer(void *arg)
{
    (void)arg;
    vt__writer_close();
    return NULL;
}

/* the victim holds its block's window, checked open, about to store its record, while the main
 * thread fills that window (switched: sealed and retired, not unmapped: held) and a close comes:
 * the close waits for the store before it counts, so the trailer counts every record its file
 * holds (a close that waited for the current window's holders alone had written its trailer one
 * event short: the victim's record stored after it, in the window before) */
static void test_close_while_storing_in_the_window_before(void **st)
{
    (void)st;
    char path[256];
    pthread_t t = start_victim("sealstore.vt", path, sizeof path, 1);
    uint64_t p[4] = {0};
    window *w = atomic_load(&vt__ws.cur);
    int mine = 1;
    while (atomic_load(&vt__ws.cur) == w) {
        assert_int_equal(vt__write(VT_REC_ALLOC, 0, p, sizeof p, NULL, 0), 0);
        mine++;
    }
    assert_false(w->unmapped);
    pthread_t c;
    assert_int_equal(pthread_create(&c, NULL, closer, NULL), 0);
    struct timespec ts = {0, 100 * 1000 * 1000}; /* the close waiting (or, unfixed, done) */
    nanosleep(&ts, NULL);
    assert_int_equal(finish_victim(t), 0);
    assert_int_equal(pthread_join(c, NULL), 0);
    all_counted(path, mine + 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_between_load_and_hold),
        cmocka_unit_test(test_switch_between_load_and_hold),
        cmocka_unit_test(test_close_while_storing_in_the_window_before),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
