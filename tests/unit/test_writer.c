/* test_writer.c — the trace writer without LD_PRELOAD, on a working disk: file header and
 * record framing, the PROCESS / CONFIG records at open, the trailer at close, mode 0600 and never
 * overwriting, %p/%r/%% expansion, payload bytes and trailer counts, the EXEC trailer and its
 * taking back. Output failures are test_writer_fail.c, threads test_writer_race.c. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

static void test_round_trip(void **st)
{
    (void)st;
    use_output("rt.%p.vt");
    uint64_t payload[4] = {1, 2, 3, 4};
    for (int i = 0; i < 10; i++)
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), 0);
    const char *s[2] = {"a", "bc"};
    vt_rec_code c = {1, 10};
    assert_int_equal(vt__write_strings(VT_REC_CODE, 0, &c, sizeof c, s, NULL, 2), 0);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    char want[300];
    snprintf(want, sizeof want, "%s/rt.%d.vt", g_dir, (int)getpid());
    assert_string_equal(path, want);
    vt__writer_close();
    uint16_t t[64];
    int n = read_records(path, t, 63);
    assert_int_equal(n, 2 + 10 + 1 + 1);
    assert_int_equal(t[0], VT_REC_PROCESS);
    assert_int_equal(t[1], VT_REC_CONFIG);
    assert_int_equal(t[2], VT_REC_ALLOC);
    assert_int_equal(t[12], VT_REC_CODE);
    assert_int_equal(t[13], VT_REC_TRAILER);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    /* the same name again: a new file beside it, the old one untouched */
    vt__writer_reset_for_tests();
    assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), 0);
    snprintf(want, sizeof want, "%s.1", path);
    assert_string_equal(vt__writer_path(), want);
    vt__writer_close();
    assert_int_equal(read_records(path, t, 63), n);
}

/* payloads and trailer: each record's bytes as written (zero padded to 8), the trailer's
 * counts equal to what was written. */
static void test_payload_trailer(void **st)
{
    (void)st;
    use_output("pay.vt");
    uint64_t a[4] = {0x1111, 0x2222, 0x3333, 0x4444};
    uint64_t f[2] = {0xaaaa, 0xbbbb};
    uint8_t odd[13];
    for (int i = 0; i < 13; i++)
        odd[i] = (uint8_t)(0xc0 + i);
    assert_int_equal(vt__write(VT_REC_ALLOC, 7, a, 32, odd, 13), 0);
    assert_int_equal(vt__write(VT_REC_FREE, 0, f, 16, NULL, 0), 0);
    assert_int_equal(vt__write(VT_REC_ALLOC, 0, a, 24, NULL, 0), 0);
    const char *s[2] = {"file.py", "qual"};
    vt_rec_code c = {9, 42};
    assert_int_equal(vt__write_strings(VT_REC_CODE, 0, &c, sizeof c, s, NULL, 2), 0);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    size_t len;
    unsigned char *b = read_file(path, &len);
    size_t off = 32, idx = 0, end = 0;
    int seen_trailer = 0;
    while (next_record(b, len, &off, &end) < len) { /* (a BLOCK's records in it) */
        vt_rec_header h;
        memcpy(&h, b + off, sizeof h);
        assert_true(h.size >= 8 && h.size % 8 == 0 && off + h.size <= len);
        const unsigned char *p = b + off + 8;
        if (idx == 2) { /* ALLOC: 32 + 13 bytes, flags kept, padded with zeros */
            assert_int_equal(h.type, VT_REC_ALLOC);
            assert_int_equal(h.flags, 7);
            assert_int_equal(h.size, 8 + 48);
            assert_memory_equal(p, a, 32);
            assert_memory_equal(p + 32, odd, 13);
            assert_int_equal(p[45] | p[46] | p[47], 0);
        } else if (idx == 3) {
            assert_int_equal(h.type, VT_REC_FREE);
            assert_int_equal(h.size, 8 + 16);
            assert_memory_equal(p, f, 16);
        } else if (idx == 4) {
            assert_int_equal(h.type, VT_REC_ALLOC);
            assert_int_equal(h.size, 8 + 24);
        } else if (idx == 5) { /* CODE: fixed part then (u32 length, bytes) per string */
            assert_int_equal(h.type, VT_REC_CODE);
            assert_int_equal(h.size, 8 + 8 + 4 + 7 + 4 + 4 + 5);
            assert_memory_equal(p, &c, sizeof c);
            uint32_t l1, l2;
            memcpy(&l1, p + 8, 4);
            assert_int_equal(l1, 7);
            assert_memory_equal(p + 12, "file.py", 7);
            memcpy(&l2, p + 19, 4);
            assert_int_equal(l2, 4);
            assert_memory_equal(p + 23, "qual", 4);
        } else if (idx == 6) {
            assert_int_equal(h.type, VT_REC_TRAILER);
            vt_rec_trailer t;
            memcpy(&t, p, sizeof t);
            assert_int_equal(t.n_events, 3);
            assert_int_equal(t.n_dropped, 0);
            assert_int_equal(t.n_records, 6); /* PROCESS, CONFIG, 3 events, CODE */
            seen_trailer = 1;
        }
        off += h.size;
        idx++;
    }
    assert_true(seen_trailer);
    assert_int_equal(idx, 7);
    assert_int_equal(off, len); /* the file ends at the trailer: nothing reserved is left */
    free(b);
}

/* %r is $RANK (0 when unset or empty), %% a single '%'. */
static void test_expand(void **st)
{
    (void)st;
    char want[300];
    setenv("RANK", "3", 1);
    use_output("r%r-100%%.%p.vt");
    uint64_t payload[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 0, payload, 32, NULL, 0), 0);
    snprintf(want, sizeof want, "%s/r3-100%%.%d.vt", g_dir, (int)getpid());
    assert_string_equal(vt__writer_path(), want);
    assert_int_equal(access(want, F_OK), 0);
    unsetenv("RANK");
    use_output("r%r.vt");
    assert_int_equal(vt__write(VT_REC_ALLOC, 0, payload, 32, NULL, 0), 0);
    snprintf(want, sizeof want, "%s/r0.vt", g_dir);
    assert_string_equal(vt__writer_path(), want);
    vt__writer_close();
}
/* ---- exec: a trailer before it, taken back when it fails ------------------------------ */
static void test_exec_trailer(void **st)
{
    (void)st;
    use_output("exec.vt");
    uint64_t payload[4] = {1, 2, 3, 4};
    for (int i = 0; i < 5000; i++) /* past the first windows */
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), 0);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_exec_prepare();
    assert_int_equal(last_trailer_flags(path), VT_TRAILER_EXEC); /* and no zero tail */
    uint16_t *t = malloc(sizeof *t * 20000);
    assert_int_equal(read_records(path, t, 19999), 2 + 5000 + 1);
    assert_true(vt__active()); /* paused, not stopped: the exec may fail */
    assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), -1);
    vt__writer_exec_failed();
    for (int i = 0; i < 3000; i++)
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), 0);
    vt__writer_close();
    int n = read_records(path, t, 19999);
    assert_int_equal(n, 2 + 5000 + 3000 + 1); /* the exec trailer is gone, one at the end */
    for (int i = 0; i < n - 1; i++)
        assert_int_not_equal(t[i], VT_REC_TRAILER);
    free(t);
    assert_int_equal(last_trailer_flags(path), 0);
    vt_rec_trailer tr = last_trailer(path);
    assert_int_equal(tr.n_events, 8000);
    assert_int_equal(tr.n_dropped, 1); /* the write made while paused */
}

/* a failed exec while a thread is still counting into the exec's trailer (late_busy: this one,
 * interrupted inside the count by the handler whose exec failed, or one stalled past the wait):
 * the trace is not taken back (the count would land in records written where the trailer was);
 * it stays ended, whole, its trailer saying the output stopped (not EXEC: no new image came), and
 * what is made after it counted there as dropped */
/* drops_in_wait: 1000 records made (and dropped: the exec has ended the trace) while the failed
 * exec waits for the count under way, with no drop counted into the trailer (late NULL) */
static void *drops_in_wait(void *arg)
{
    (void)arg;
    uint64_t payload[4] = {5, 6, 7, 8};
    while (atomic_load(&vt__ws.late) != NULL)
        sched_yield();
    for (int i = 0; i < 1000; i++)
        if (vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0) != -1)
            return (void *)1;
    return NULL;
}

static void test_exec_failed_while_counting(void **st)
{
    (void)st;
    use_output("execbusy.vt");
    uint64_t payload[4] = {1, 2, 3, 4};
    for (int i = 0; i < 500; i++)
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), 0);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_exec_prepare();
    assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), -1);
    atomic_store(&vt__ws.late_busy, 1); /* (a count under way) */
    pthread_t dropper;
    assert_int_equal(pthread_create(&dropper, NULL, drops_in_wait, NULL), 0);
    vt__writer_exec_failed();
    void *bad;
    assert_int_equal(pthread_join(dropper, &bad), 0); /* (done within the wait, as a rule) */
    assert_null(bad);
    atomic_store(&vt__ws.late_busy, 0);
    vt_rec_trailer tr = last_trailer(path); /* the wait's drops counted there, no later one */
    assert_int_equal(tr.n_dropped, 1 + 1000);
    for (int i = 0; i < 7; i++)
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), -1);
    vt__writer_close();
    uint16_t *t = malloc(sizeof *t * 2000);
    assert_int_equal(read_records(path, t, 1999), 2 + 500 + 1);
    free(t);
    assert_int_equal(last_trailer_flags(path), VT_TRAILER_OUTPUT_ERROR);
    tr = last_trailer(path);
    assert_int_equal(tr.n_events, 500);
    assert_int_equal(tr.n_dropped, 1 + 1000 + 7); /* paused, in the wait, after */
}

/* windows of a huge page or more: their mapping starts and ends on huge-page boundaries of the
 * file and sits at an address that agrees with its offset modulo a huge page (so the kernel can
 * map the file's large folios whole); the records in them read back all the same. */
static void test_huge_windows(void **st)
{
    (void)st;
    use_output("huge.vt");
    uint64_t payload[3] = {1, 2, 3};
    enum { N = 400000 }; /* 12.8 MB: windows of 64 KiB doubling past 4 MiB */
    for (int i = 0; i < N; i++)
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 24, NULL, 0), 0);
    int huge = 0;
    for (window *w = vt__ws.all; w; w = w->next_all) {
        if (w->map_len < HUGE_SPAN)
            continue;
        huge++;
        assert_int_equal(w->map_off % HUGE_SPAN, 0);
        assert_int_equal(w->map_len % HUGE_SPAN, 0);
        if (!w->unmapped)
            assert_int_equal((uintptr_t)w->map % HUGE_SPAN, 0);
    }
    assert_true(huge >= 2);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    uint16_t *t = malloc(sizeof *t * (N + 8));
    assert_int_equal(read_records(path, t, N + 7), 2 + N + 1);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_payload_trailer),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_exec_trailer),
        cmocka_unit_test(test_exec_failed_while_counting),
        cmocka_unit_test(test_huge_windows),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
