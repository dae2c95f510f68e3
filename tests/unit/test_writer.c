/* test_writer.c — the trace writer without LD_PRELOAD: file header and record framing, the
 * PROCESS / CONFIG records at open, the trailer at close, mode 0600 and never overwriting,
 * %p/%r/%% expansion, payload bytes and trailer counts, and output failures injected through
 * vt__sys_ops (ENOSPC from fallocate, a failing mmap): one warning, tracing off, every complete
 * record kept. */
#include <errno.h>
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

#include "../../preload/core/core.h"
#include "../../preload/writer.h"

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
    free(t);
    assert_int_equal(n, 2 + ok); /* every record that was accepted is in the file */
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
