/* test_writer.c — the trace writer without LD_PRELOAD: file header and record framing, the
 * PROCESS / CONFIG records at open, the trailer at close, mode 0600 and never overwriting,
 * %p/%r expansion, and output failures injected through vt__sys_ops (ENOSPC from fallocate,
 * a failing mmap): one warning, tracing off, every complete record kept. */
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

#include "../../preload/core.h"
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
