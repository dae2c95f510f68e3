/* test_writer_race.c — the writer's lock-free record path under threads: 8 threads racing
 * (every record once, intact, in its thread's order, records larger than the first windows),
 * close while threads write (every write that returned 0 is in the file, before the trailer),
 * a retired window kept mapped while a thread's slot holds it, and more threads than slots
 * (the shared path: every record counted in the trailer). */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "writer_files.h"
#include "../../preload/writer_internal.h"

/* ---- 8 threads racing: every record present once, intact, in its thread's order ------- */
#define RACE_THREADS 8
#define RACE_RECORDS 40000
#define RACE_BIG 70000 /* a record larger than the first windows */

static void race_pattern(unsigned char *b, size_t n, uint32_t th, uint32_t seq)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(th * 31u + seq * 7u + (uint32_t)i);
}

static size_t race_len(uint32_t seq)
{
    return seq % 5000 == 4999 ? RACE_BIG : 8 + (seq * 13u) % 201u;
}

static void *race_thread(void *arg)
{
    uint32_t th = (uint32_t)(uintptr_t)arg;
    unsigned char *buf = malloc(RACE_BIG);
    assert_non_null(buf);
    for (uint32_t seq = 0; seq < RACE_RECORDS; seq++) {
        uint32_t id[2] = {th, seq};
        size_t n = race_len(seq);
        race_pattern(buf, n, th, seq);
        assert_int_equal(vt__write(VT_REC_ALLOC, (uint16_t)th, id, sizeof id, buf, n), 0);
    }
    free(buf);
    return NULL;
}

static void test_threads_race(void **st)
{
    (void)st;
    use_output("race.vt");
    uint64_t first[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 0xff, first, 32, NULL, 0), 0); /* opens the file */
    pthread_t tid[RACE_THREADS];
    for (uintptr_t i = 0; i < RACE_THREADS; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, race_thread, (void *)i), 0);
    for (int i = 0; i < RACE_THREADS; i++)
        pthread_join(tid[i], NULL);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    size_t len;
    unsigned char *b = read_file(path, &len);
    unsigned char *want = malloc(RACE_BIG);
    uint32_t next[RACE_THREADS] = {0};
    size_t off = 32, end = 0; /* (end: the BLOCK it is in) */
    uint64_t nrec = 0;
    int trailer = 0;
    while (next_record(b, len, &off, &end) < len) {
        vt_rec_header h;
        memcpy(&h, b + off, sizeof h);
        assert_int_not_equal(h.type, 0); /* no hole: the trailer ends the file */
        assert_true(h.size >= 8 && h.size % 8 == 0 && off + h.size <= len);
        const unsigned char *p = b + off + 8;
        if (h.type == VT_REC_ALLOC && h.flags < RACE_THREADS) {
            uint32_t id[2];
            memcpy(id, p, sizeof id);
            assert_int_equal(id[0], h.flags);
            assert_int_equal(id[1], next[id[0]]); /* each thread's records in its order */
            size_t n = race_len(id[1]);
            assert_int_equal(h.size, (8 + 8 + n + 7) & ~(size_t)7);
            race_pattern(want, n, id[0], id[1]);
            assert_memory_equal(p + 8, want, n);
            for (size_t i = 8 + n; i < h.size - 8u; i++)
                assert_int_equal(p[i], 0);
            next[id[0]]++;
        } else if (h.type == VT_REC_TRAILER) {
            vt_rec_trailer t;
            memcpy(&t, p, sizeof t);
            assert_int_equal(t.n_events, 1 + RACE_THREADS * RACE_RECORDS);
            assert_int_equal(t.n_dropped, 0);
            assert_int_equal(t.n_records, nrec);
            assert_int_equal(h.flags, 0);
            assert_int_equal(off + h.size, len);
            trailer = 1;
        }
        nrec++;
        off += h.size;
    }
    assert_true(trailer);
    for (int i = 0; i < RACE_THREADS; i++)
        assert_int_equal(next[i], RACE_RECORDS);
    free(want);
    free(b);
}
/* ---- close while threads write: every write that returned 0 is in the file, before the
 * trailer, and the ones after it return -1 ---------------------------------------------- */
#define CLOSE_THREADS 4
static long g_close_ok[CLOSE_THREADS];

static void *close_race_thread(void *arg)
{
    uint32_t th = (uint32_t)(uintptr_t)arg;
    for (uint32_t seq = 0;; seq++) {
        uint32_t id[4] = {th, seq, ~th, ~seq};
        if (vt__write(VT_REC_ALLOC, (uint16_t)th, id, sizeof id, NULL, 0) != 0)
            break;
        g_close_ok[th]++;
    }
    return NULL;
}

static void test_close_race(void **st)
{
    (void)st;
    use_output("closerace.vt");
    uint64_t first[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 0xff, first, 32, NULL, 0), 0);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    pthread_t tid[CLOSE_THREADS];
    for (uintptr_t i = 0; i < CLOSE_THREADS; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, close_race_thread, (void *)i), 0);
    struct timespec ts = {0, 30 * 1000000};
    nanosleep(&ts, NULL);
    vt__writer_close();
    for (int i = 0; i < CLOSE_THREADS; i++)
        pthread_join(tid[i], NULL);
    size_t len;
    unsigned char *b = read_file(path, &len);
    long seen[CLOSE_THREADS] = {0};
    size_t off = 32, end = 0; /* (end: the BLOCK it is in) */
    int trailer = 0;
    while (next_record(b, len, &off, &end) < len) {
        vt_rec_header h;
        memcpy(&h, b + off, sizeof h);
        assert_int_not_equal(h.type, 0);
        assert_true(h.size >= 8 && off + h.size <= len);
        if (h.type == VT_REC_ALLOC && h.flags < CLOSE_THREADS) {
            uint32_t id[4];
            memcpy(id, b + off + 8, sizeof id);
            assert_int_equal(id[0], h.flags);
            assert_int_equal(id[1], (uint32_t)seen[h.flags]);
            assert_int_equal(id[2], ~id[0]);
            assert_int_equal(id[3], ~id[1]);
            seen[h.flags]++;
        }
        trailer = h.type == VT_REC_TRAILER;
        off += h.size;
    }
    free(b);
    assert_true(trailer && off == len);
    long total = 0;
    for (int i = 0; i < CLOSE_THREADS; i++) {
        assert_int_equal(seen[i], g_close_ok[i]);
        total += seen[i];
    }
    assert_true(total > 1000); /* the threads really were writing when it closed */
}
/* ---- a window a thread is still storing into stays mapped after it is retired; once that
 * thread is done, the next sweep unmaps it ------------------------------------------------ */
static window *g_held;
static vt__wslot *g_holder;

static void *hold_thread(void *arg)
{
    (void)arg;
    g_holder = vt__wslot_take(); /* this thread's slot, held as a writer mid-record holds it */
    if (g_holder)
        atomic_store(&g_holder->in, g_held);
    return NULL;
}

/* write_until: records from this thread until `stop` holds (at most `max`); the count */
static int write_until(int (*stop)(void), int max)
{
    uint64_t id[3] = {1, 2, 3};
    int n = 0;
    while (n < max && !stop()) {
        assert_int_equal(vt__write(VT_REC_ALLOC, 0, id, sizeof id, NULL, 0), 0);
        n++;
    }
    return n;
}

static int g_windows_at_retire;
static int windows_made(void)
{
    int n = 0;
    for (window *w = vt__ws.all; w; w = w->next_all)
        n++;
    return n;
}
static int held_retired_and_swept(void) /* two windows on since: sweeps have run */
{
    return atomic_load(&vt__ws.cur) != g_held && windows_made() >= g_windows_at_retire + 2;
}
static int held_unmapped(void)
{
    return g_held->unmapped;
}

static void test_held_window_stays_mapped(void **st)
{
    (void)st;
    use_output("held.vt");
    uint64_t first[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 0, first, 32, NULL, 0), 0);
    g_held = atomic_load(&vt__ws.cur);
    assert_non_null(g_held);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_thread, NULL), 0);
    pthread_join(t, NULL);
    assert_non_null(g_holder);
    g_windows_at_retire = windows_made();
    int n = write_until(held_retired_and_swept, 400000);
    assert_true(held_retired_and_swept()); /* the windows moved on (64 KiB, 128 KiB, ...) */
    assert_false(g_held->unmapped);
    assert_true(n > 1000);
    assert_memory_equal(g_held->base, VT_MAGIC, VT_MAGIC_LEN); /* still mapped: the header */
    atomic_store(&g_holder->in, NULL);                         /* that thread's record is stored */
    write_until(held_unmapped, 400000);
    assert_true(g_held->unmapped); /* the next sweep let it go */
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    assert_int_equal(last_trailer_flags(path), 0);
}

/* ---- more threads than slots: the rest go through the shared path, every record counted -- */
#define MANY_THREADS (VT__WSLOTS + 40)

static void *one_record_thread(void *arg)
{
    uint32_t id[2] = {(uint32_t)(uintptr_t)arg, 7};
    assert_int_equal(vt__write(VT_REC_FREE, 0, id, sizeof id, NULL, 0), 0);
    return NULL;
}

static void test_threads_past_slots(void **st)
{
    (void)st;
    use_output("many.vt");
    uint64_t first[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 0, first, 32, NULL, 0), 0);
    for (uintptr_t i = 0; i < MANY_THREADS; i++) {
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, one_record_thread, (void *)i), 0);
        pthread_join(t, NULL);
    }
    assert_int_equal(atomic_load(&vt__wsl.used), VT__WSLOTS); /* every slot handed out */
    assert_true(atomic_load(&vt__wsl.records) >= 40);         /* the rest shared */
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    size_t len;
    unsigned char *b = read_file(path, &len);
    size_t off = 32, end = 0; /* (end: the BLOCK it is in) */
    uint64_t nrec = 0, frees = 0;
    int trailer = 0;
    while (next_record(b, len, &off, &end) < len) {
        vt_rec_header h;
        memcpy(&h, b + off, sizeof h);
        assert_true(h.type != 0 && h.size >= 8 && off + h.size <= len);
        if (h.type == VT_REC_FREE)
            frees++;
        if (h.type == VT_REC_TRAILER) {
            vt_rec_trailer tr;
            memcpy(&tr, b + off + 8, sizeof tr);
            assert_int_equal(tr.n_records, nrec);
            assert_int_equal(tr.n_events, 1 + MANY_THREADS);
            trailer = 1;
        }
        nrec++;
        off += h.size;
    }
    free(b);
    assert_true(trailer);
    assert_int_equal(frees, MANY_THREADS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_race),
        cmocka_unit_test(test_close_race),
        cmocka_unit_test(test_held_window_stays_mapped),
        cmocka_unit_test(test_threads_past_slots),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
