/* test_writer_fail.c — the writer's output failures, injected through vt__sys_ops: ENOSPC from
 * fallocate and a failing mmap give one warning, tracing off, every complete record kept and a
 * DISK_FULL trailer; a nearly full disk keeps what fits; an unwritable directory leaves no file. */
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

static int fail_fallocate_after;
static int fallocate_enospc(int fd, off_t off, off_t len)
{
    (void)fd, (void)off, (void)len;
    if (fail_fallocate_after-- > 0)
        return posix_fallocate(fd, off, len);
    return ENOSPC;
}

static void test_enospc(void **st)
{
    (void)st;
    use_output("full.vt");
    capture_stderr();
    vt__sys saved = vt__sys_ops;
    fail_fallocate_after = 1; /* the first window (4 MiB) works, growing past it fails */
    vt__sys_ops.fallocate = fallocate_enospc;
    uint64_t payload[4] = {0};
    int ok = 0, failed = 0;
    for (int i = 0; i < 200000; i++) {
        if (vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0) == 0)
            ok++;
        else
            failed++;
    }
    vt__sys_ops = saved;
    assert_int_equal(end_capture(NULL, 0), 1); /* one warning however many writes failed */
    assert_true(ok > 1000);
    assert_true(failed > 0);
    assert_false(vt__active()); /* tracing stopped; the caller goes on */
    assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), -1);
    char path[256];
    snprintf(path, sizeof path, "%s/full.vt", g_dir);
    uint16_t *t = malloc(sizeof *t * 300000);
    int n = read_records(path, t, 299999);
    assert_int_equal(n, 2 + ok + 1); /* every record that was accepted, then the trailer */
    assert_int_equal(t[n - 1], VT_REC_TRAILER);
    free(t);
    assert_int_equal(last_trailer_flags(path), VT_TRAILER_DISK_FULL);
}

static void *mmap_fails(size_t len, int fd, off_t off)
{
    (void)len, (void)fd, (void)off;
    errno = ENOMEM;
    return MAP_FAILED;
}

static void test_mmap_failure(void **st)
{
    (void)st;
    use_output("nomap.vt");
    vt__sys saved = vt__sys_ops;
    vt__sys_ops.mmap = mmap_fails;
    uint64_t payload[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), -1);
    vt__sys_ops = saved;
    assert_false(vt__active());
}

static void test_unwritable(void **st)
{
    (void)st;
    setenv("VRAMTRACE_OUTPUT", "/nonexistent-dir-vt/x.vt", 1);
    vt__config_reload();
    vt__writer_reset_for_tests();
    uint64_t payload[4] = {0};
    assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), -1);
    assert_false(vt__active());
}
/* ---- a nearly full disk: a seam whose disk holds g_disk_cap bytes of this file ---------- */
static uint64_t g_disk_cap;
static int fallocate_small_disk(int fd, off_t off, off_t len)
{
    if ((uint64_t)off + (uint64_t)len > g_disk_cap)
        return ENOSPC;
    return posix_fallocate(fd, off, len);
}

/* small_disk_run: n ALLOC records onto a disk of cap bytes; how many were accepted. */
static int small_disk_run(const char *name, uint64_t cap, int n, int *warnings, char *msg,
                          size_t msgcap)
{
    use_output(name);
    vt__sys saved = vt__sys_ops;
    g_disk_cap = cap;
    vt__sys_ops.fallocate = fallocate_small_disk;
    capture_stderr();
    uint64_t payload[4] = {7, 7, 7, 7};
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0) == 0;
    vt__writer_close();
    *warnings = end_capture(msg, msgcap);
    vt__sys_ops = saved;
    return ok;
}

static void test_small_disk(void **st)
{
    (void)st;
    char path[256], msg[256];
    int warnings;
    /* 1 MiB free: once every event was lost (the first window was 4 MiB); now what fits */
    int ok = small_disk_run("mib.vt", 1u << 20, 100000, &warnings, msg, sizeof msg);
    snprintf(path, sizeof path, "%s/mib.vt", g_dir);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(msg, "disk full"));
    assert_true(ok > 25000 && ok < 26215); /* 40-byte records in 1 MiB, less the first ones */
    assert_false(vt__active());
    assert_int_equal(last_trailer_flags(path), VT_TRAILER_DISK_FULL);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size <= (off_t)(1u << 20));
    uint16_t *t = malloc(sizeof *t * 30000);
    assert_int_equal(read_records(path, t, 29999), 2 + ok + 1);
    free(t);
    /* 40 KiB free: still a readable trace, less than the first window */
    ok = small_disk_run("small.vt", 40u << 10, 5000, &warnings, msg, sizeof msg);
    snprintf(path, sizeof path, "%s/small.vt", g_dir);
    assert_int_equal(warnings, 1);
    assert_true(ok > 500 && ok < 1024);
    assert_int_equal(last_trailer_flags(path), VT_TRAILER_DISK_FULL);
    /* nothing free: no file at all (an empty file would read as a malformed trace) */
    ok = small_disk_run("none.vt", 0, 10, &warnings, msg, sizeof msg);
    snprintf(path, sizeof path, "%s/none.vt", g_dir);
    assert_int_equal(ok, 0);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(msg, "disk full"));
    assert_int_not_equal(access(path, F_OK), 0);
    assert_false(vt__active());
}
/* ---- a bounded trace whose disk fills as it ends: the packer's own slot ----------------- */
/* summary_trailer_flags: a chunked trace's trailer (in its SUMMARY slot): its flags and *error;
 * -1 when no SUMMARY slot ends with one */
static int summary_trailer_flags(const char *path, uint32_t *error)
{
    size_t len;
    unsigned char *b = read_file(path, &len);
    vt_rec_slot first;
    memcpy(&first, b + 32 + 8, sizeof first);
    int flags = -1;
    for (uint64_t at = 0; first.slot_size && at + VT_SLOT_REC_SIZE <= len; at += first.slot_size) {
        uint64_t off = at ? at : 32;
        vt_rec_slot sr;
        memcpy(&sr, b + off + 8, sizeof sr);
        if (sr.kind != VT_SLOT_SUMMARY)
            continue;
        for (off += VT_SLOT_REC_SIZE; off + 8 <= len && off < at + first.slot_size;) {
            vt_rec_header h;
            memcpy(&h, b + off, sizeof h);
            if (!h.type || h.size < 8 || off + h.size > len)
                break;
            if (h.type == VT_REC_TRAILER) {
                vt_rec_trailer t;
                memcpy(&t, b + off + 8, sizeof t);
                flags = h.flags, *error = t.error;
            }
            off += h.size;
        }
    }
    free(b);
    return flags;
}

/* fallocate_held: fallocate_small_disk, where any thread but the test's own waits while g_hold
 * (the packer thread held behind the writers, as a busy machine may hold it) */
static pthread_mutex_t g_hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_hold_cv = PTHREAD_COND_INITIALIZER;
static int g_hold;
static pthread_t g_test_thread;
static int fallocate_held(int fd, off_t off, off_t len)
{
    pthread_mutex_lock(&g_hold_mu);
    while (g_hold && !pthread_equal(pthread_self(), g_test_thread))
        pthread_cond_wait(&g_hold_cv, &g_hold_mu);
    pthread_mutex_unlock(&g_hold_mu);
    return fallocate_small_disk(fd, off, len);
}

/* The bounded (chunked) trace's packer takes slots of its own (the raw windows' chunks, the
 * trailer's summary). Held behind the writers, it finds the disk full only as the trace ends: that
 * had been said by nobody (no warning, no DISK_FULL trailer, the trailer itself could find no
 * slot): the writers' slots say it, and they take none once the program exits. */
static void test_bounded_full_at_close(void **st)
{
    (void)st;
    setenv("VRAMTRACE_MAX_SIZE", "8388608", 1);
    setenv("VRAMTRACE_COMPRESS", "0", 1);
    g_test_thread = pthread_self();
    g_hold = 1; /* the packer waits at its first new slot (or before) */
    g_disk_cap = UINT64_MAX;
    vt__sys saved = vt__sys_ops;
    vt__sys_ops.fallocate = fallocate_held;
    use_output("bclose.vt");
    capture_stderr();
    uint64_t payload[4] = {1, 2, 3, 4};
    int ok = 0;
    for (int i = 0; i < 60000; i++) /* 2.4 MB: past the run's beginning, raw slots of 256 KiB */
        ok += vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0) == 0;
    assert_int_equal(ok, 60000);
    char path[256];
    struct stat sb;
    snprintf(path, sizeof path, "%s/bclose.vt", g_dir);
    assert_int_equal(stat(path, &sb), 0);
    g_disk_cap = (uint64_t)sb.st_size; /* the disk is full from here: the file cannot grow */
    pthread_mutex_lock(&g_hold_mu);
    g_hold = 0;
    pthread_cond_broadcast(&g_hold_cv);
    pthread_mutex_unlock(&g_hold_mu);
    vt__writer_close();
    char msg[400];
    int warnings = end_capture(msg, sizeof msg);
    vt__sys_ops = saved;
    unsetenv("VRAMTRACE_MAX_SIZE");
    unsetenv("VRAMTRACE_COMPRESS");
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(msg, "bclose.vt: No space left on device at "));
    assert_non_null(strstr(msg, "the trace keeps what fits there"));
    uint32_t error = 0; /* the trailer was written (an old EVENTS slot made room) and says why */
    assert_int_equal(summary_trailer_flags(path, &error), VT_TRAILER_DISK_FULL);
    assert_int_equal(error, ENOSPC);
}

/* The same at an exec: the trace ends there (the EXEC trailer), the packer's last slots find the
 * disk full. The bound is said once there too, as at the close: it went unsaid (the trailer said
 * DISK_FULL, stderr nothing) while the exec's state was neither W_OPEN nor W_CLOSED. */
static void test_bounded_full_at_exec(void **st)
{
    (void)st;
    setenv("VRAMTRACE_MAX_SIZE", "8388608", 1);
    setenv("VRAMTRACE_COMPRESS", "0", 1);
    g_test_thread = pthread_self();
    g_hold = 1;
    g_disk_cap = UINT64_MAX;
    vt__sys saved = vt__sys_ops;
    vt__sys_ops.fallocate = fallocate_held;
    use_output("bexec.vt");
    capture_stderr();
    uint64_t payload[4] = {1, 2, 3, 4};
    int ok = 0;
    for (int i = 0; i < 60000; i++)
        ok += vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0) == 0;
    assert_int_equal(ok, 60000);
    char path[256];
    struct stat sb;
    snprintf(path, sizeof path, "%s/bexec.vt", g_dir);
    assert_int_equal(stat(path, &sb), 0);
    g_disk_cap = (uint64_t)sb.st_size;
    pthread_mutex_lock(&g_hold_mu);
    g_hold = 0;
    pthread_cond_broadcast(&g_hold_cv);
    pthread_mutex_unlock(&g_hold_mu);
    vt__writer_exec_prepare();
    char msg[400];
    int warnings = end_capture(msg, sizeof msg);
    vt__writer_exec_failed(); /* (a chunked trace stays ended) */
    vt__sys_ops = saved;
    unsetenv("VRAMTRACE_MAX_SIZE");
    unsetenv("VRAMTRACE_COMPRESS");
    uint32_t error = 0;
    assert_int_equal(summary_trailer_flags(path, &error), VT_TRAILER_EXEC | VT_TRAILER_DISK_FULL);
    assert_int_equal(error, ENOSPC);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(msg, "bexec.vt: No space left on device at "));
}

/* ---- a window descriptor that cannot be allocated (out of address space) ---------------- */
/* The test's own aligned_alloc (the writer's descriptors' allocator; nothing else here uses it):
 * NULL while g_fail_desc. A bounded trace's next raw slot whose descriptor failed had been
 * unmapped by vt__window_make, then written into and unmapped again by its release: the host
 * killed by SIGSEGV under ulimit -v (audit finding 1). */
static int g_fail_desc;
void *aligned_alloc(size_t align, size_t n)
{
    void *p = NULL;
    if (__atomic_load_n(&g_fail_desc, __ATOMIC_RELAXED))
        return NULL;
    return posix_memalign(&p, align, n) ? NULL : p;
}

/* desc_fails: writes 60,000 records, the descriptors failing from the 20,000th on: tracing stops
 * there with one warning, no crash; the trace up to there reads */
static void desc_fails(const char *name, const char *max_size)
{
    if (max_size)
        setenv("VRAMTRACE_MAX_SIZE", max_size, 1);
    setenv("VRAMTRACE_COMPRESS", "0", 1);
    use_output(name);
    capture_stderr();
    uint64_t payload[4] = {1, 2, 3, 4};
    int ok = 0, failed = 0;
    for (int i = 0; i < 60000; i++) {
        if (i == 20000)
            __atomic_store_n(&g_fail_desc, 1, __ATOMIC_RELAXED);
        if (vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0) == 0)
            ok++;
        else
            failed++;
    }
    assert_false(vt__active());
    __atomic_store_n(&g_fail_desc, 0, __ATOMIC_RELAXED);
    vt__writer_close();
    char msg[400];
    int warnings = end_capture(msg, sizeof msg);
    unsetenv("VRAMTRACE_MAX_SIZE");
    unsetenv("VRAMTRACE_COMPRESS");
    assert_true(ok >= 20000 && failed > 0);
    assert_int_equal(warnings, 1);
}

static void test_desc_fails_bounded(void **st)
{
    (void)st;
    desc_fails("bdesc.vt", "8388608");
}

static void test_desc_fails(void **st)
{
    (void)st;
    desc_fails("desc.vt", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enospc),
        cmocka_unit_test(test_mmap_failure),
        cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_small_disk),
        cmocka_unit_test(test_bounded_full_at_close),
        cmocka_unit_test(test_bounded_full_at_exec),
        cmocka_unit_test(test_desc_fails),
        cmocka_unit_test(test_desc_fails_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
