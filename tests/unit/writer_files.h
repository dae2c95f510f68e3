/* writer_files.h — what the writer's unit tests share (test_writer.c, test_writer_fail.c,
 * test_writer_race.c): a temp directory per binary, pointing the writer at a file in it, reading
 * a trace file's records back, and counting the warnings a block of code printed. */
#ifndef VT_TEST_WRITER_FILES_H
#define VT_TEST_WRITER_FILES_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../preload/core/config.h"
#include "../../preload/core/output.h"
#include "../../preload/core/quietio.h"
#include "vramtrace/trace_format.h"
#include "../../preload/writer.h"
#include "trace_walk.h"

/* The preload registers procinfo.c's PROCESS record with the writer from a constructor in
 * procinfo.c; a static test link would drop that object, so the test registers it itself. */
void vt__write_process_locked(void);
__attribute__((constructor)) static void test_register_process(void)
{
    vt__writer_on_open(vt__write_process_locked);
}

static char g_dir[64];

static inline void use_output(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    setenv("VRAMTRACE_OUTPUT", path, 1);
    unsetenv("VRAMTRACE_DISABLE");
    vt__config_reload();
    vt__writer_reset_for_tests();
}

/* read_records: the record types of a trace file in file order (0-terminated), header checked
 * (a plain trace: the block layout, 2.0), a BLOCK's records in it (trace_walk.h). */
static inline int read_records(const char *path, uint16_t *types, int max)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    vt_file_header h;
    assert_int_equal(fread(&h, sizeof h, 1, f), 1);
    assert_memory_equal(h.magic, VT_MAGIC, VT_MAGIC_LEN);
    assert_int_equal(h.major, VT_BLOCKS_MAJOR);
    assert_int_equal(h.header_size, 32);
    int n = 0;
    vt_rec_header r;
    long end = 0;
    while (n < max && next_header(f, &r, &end)) {
        assert_true(r.size >= 8 && r.size % 8 == 0);
        assert_true(r.type != VT_REC_BLOCK); /* (one inside a block) */
        types[n++] = r.type;
        fseek(f, r.size - 8, SEEK_CUR);
    }
    fclose(f);
    types[n] = 0;
    return n;
}

/* read_file: the whole file (malloc'd, caller frees); *len its size. */
static inline unsigned char *read_file(const char *path, size_t *len)
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

/* last_trailer: the payload of the file's last record (its TRAILER: last_trailer_flags says
 * whether it is one) */
static inline vt_rec_trailer last_trailer(const char *path)
{
    size_t len;
    unsigned char *b = read_file(path, &len);
    vt_rec_trailer tr;
    assert_true(len >= 32 + 8 + sizeof tr);
    memcpy(&tr, b + len - sizeof tr, sizeof tr);
    free(b);
    return tr;
}

/* last_trailer_flags: header.flags of the file's last record, which must be a TRAILER that
 * ends the file exactly (no zero tail); -1 otherwise. */
static inline int last_trailer_flags(const char *path)
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

/* ---- stderr capture: how many "vramtrace:" warnings a block of code printed ------------ */
static int g_saved_err = -1;
static inline void capture_stderr(void)
{
    char errpath[256];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", g_dir);
    fflush(stderr);
    g_saved_err = dup(2);
    int ef = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(g_saved_err >= 0 && ef >= 0);
    dup2(ef, 2);
    close(ef);
    vt__stderr_take(); /* the preload's warnings go to fd 2 only while it is stderr as taken */
}

/* end_capture: restores stderr; the number of warnings; *text (if given) the first 200 bytes. */
static inline int end_capture(char *text, size_t cap)
{
    char errpath[256];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", g_dir);
    fflush(stderr);
    dup2(g_saved_err, 2);
    close(g_saved_err);
    vt__stderr_take();
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
static inline int setup(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/vt-writer-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static inline int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
