/* test_writer.c — the trace writer without LD_PRELOAD: file header and record framing, the
 * PROCESS / CONFIG records at open, the trailer at close, mode 0600 and never overwriting,
 * %p/%r/%% expansion, payload bytes and trailer counts, and output failures injected through
 * vt__sys_ops (ENOSPC from fallocate, a failing mmap): one warning, tracing off, every complete
 * record kept and a DISK_FULL trailer; a nearly full disk keeps what fits; 8 threads racing
 * (every record once, intact, in its thread's order); the EXEC trailer and its taking back. */
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

#include "../../preload/core/config.h"
#include "../../preload/core/output.h"
#include "vramtrace/trace_format.h"
#include "../../preload/writer.h"

/* The preload registers procinfo.c's PROCESS record with the writer from a constructor in
 * procinfo.c; a static test link would drop that object, so the test registers it itself. */
void vt__write_process_locked(void);
__attribute__((constructor)) static void test_register_process(void)
{
    vt__writer_on_open(vt__write_process_locked);
}

static char g_dir[64];

static void use_output(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    setenv("VRAMTRACE_OUTPUT", path, 1);
    unsetenv("VRAMTRACE_DISABLE");
    vt__config_reload();
    vt__writer_reset_for_tests();
}

/* read_records: the record types of a trace file in order (0-terminated), header checked. */
static int read_records(const char *path, uint16_t *types, int max)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    vt_file_header h;
    assert_int_equal(fread(&h, sizeof h, 1, f), 1);
    assert_memory_equal(h.magic, VT_MAGIC, VT_MAGIC_LEN);
    assert_int_equal(h.major, VT_VERSION_MAJOR);
    assert_int_equal(h.header_size, 32);
    int n = 0;
    vt_rec_header r;
    while (n < max && fread(&r, sizeof r, 1, f) == 1 && r.type) {
        assert_true(r.size >= 8 && r.size % 8 == 0);
        types[n++] = r.type;
        fseek(f, r.size - 8, SEEK_CUR);
    }
    fclose(f);
    types[n] = 0;
    return n;
}

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

/* read_file: the whole file (malloc'd, caller frees); *len its size. */
static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* last_trailer_flags: header.flags of the file's last record, which must be a TRAILER that
 * ends the file exactly (no zero tail); -1 otherwise. */
static int last_trailer_flags(const char *path)
{
    size_t len;
    unsigned char *b = read_file(path, &len);
    size_t off = 32;
    int flags = -1;
    while (off + 8 <= len) {
        vt_rec_header h;
        memcpy(&h, b + off, sizeof h);
        if (!h.type)
            break;
        assert_true(h.size >= 8 && h.size % 8 == 0 && off + h.size <= len);
        flags = h.type == VT_REC_TRAILER && off + h.size == len ? h.flags : -1;
        off += h.size;
    }
    free(b);
    return flags;
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
    size_t off = 32, idx = 0;
    int seen_trailer = 0;
    while (off + 8 <= len) {
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
    char errpath[256];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", g_dir);
    fflush(stderr);
    int saved_err = dup(2);
    int ef = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved_err >= 0 && ef >= 0);
    dup2(ef, 2);
    close(ef);
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
    fflush(stderr);
    dup2(saved_err, 2);
    close(saved_err);
    size_t elen;
    unsigned char *err = read_file(errpath, &elen);
    int warnings = 0;
    for (size_t i = 0; i + 10 <= elen; i++)
        if (!memcmp(err + i, "vramtrace:", 10))
            warnings++;
    free(err);
    assert_int_equal(warnings, 1); /* one warning however many writes failed */
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

/* ---- stderr capture: how many "vramtrace:" warnings a block of code printed ------------ */
static int g_saved_err = -1;
static void capture_stderr(void)
{
    char errpath[256];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", g_dir);
    fflush(stderr);
    g_saved_err = dup(2);
    int ef = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(g_saved_err >= 0 && ef >= 0);
    dup2(ef, 2);
    close(ef);
}

/* end_capture: restores stderr; the number of warnings; *text (if given) the first 200 bytes. */
static int end_capture(char *text, size_t cap)
{
    char errpath[256];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", g_dir);
    fflush(stderr);
    dup2(g_saved_err, 2);
    close(g_saved_err);
    size_t elen;
    unsigned char *err = read_file(errpath, &elen);
    int warnings = 0;
    for (size_t i = 0; i + 10 <= elen; i++)
        if (!memcmp(err + i, "vramtrace:", 10))
            warnings++;
    if (text) {
        size_t n = elen < cap - 1 ? elen : cap - 1;
        memcpy(text, err, n);
        text[n] = '\0';
    }
    free(err);
    return warnings;
}

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
    size_t off = 32;
    uint64_t nrec = 0;
    int trailer = 0;
    while (off + 8 <= len) {
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
    vt_rec_trailer tr;
    size_t len;
    unsigned char *b = read_file(path, &len);
    memcpy(&tr, b + len - sizeof tr, sizeof tr);
    free(b);
    assert_int_equal(tr.n_events, 8000);
    assert_int_equal(tr.n_dropped, 1); /* the write made while paused */
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
    size_t off = 32;
    int trailer = 0;
    while (off + 8 <= len) {
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

static int setup(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/vt-writer-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_enospc),
        cmocka_unit_test(test_mmap_failure), cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_payload_trailer), cmocka_unit_test(test_expand),
        cmocka_unit_test(test_threads_race),    cmocka_unit_test(test_small_disk),
        cmocka_unit_test(test_exec_trailer),    cmocka_unit_test(test_close_race),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
