/* test_argfiles.c — the preload's FILE records (preload/core/argfiles.c) without LD_PRELOAD:
 * a made-up command line names config files, a model directory, files that must not be read
 * (a FIFO, /dev/zero, a .txt, a missing file, a directory without config.json), one named
 * twice, and a file over the bound; the trace written through the real writer holds exactly
 * the expected FILE records, read back with the analyzer's reader. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../analyzer/trace/reader.h"
#include "../../analyzer/trace/tables.h"
#include "../../preload/core/argfiles.h"
#include "../../preload/core/config.h"
#include "../../preload/core/output.h"
#include "../../preload/writer.h"

static char g_dir[64];
static int g_argc;
static const char *g_argv[16];

/* the writer's on-open callback: this test's command line instead of /proc/self/cmdline */
static void first_records(void)
{
    vt__write_argfiles_locked(g_argc, g_argv, g_dir);
}

static void put(const char *name, const char *text, size_t repeat)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < repeat; i++)
        fputs(text, f);
    fclose(f);
}

static void test_argfiles(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/vt-argfiles.XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    char p[256];
    put("cfg.py", "batch_size = 4\n", 1);
    put("x.yaml", "lr: 1\n", 1);
    put("notes.txt", "not a config\n", 1);
    put("big.py", "# padding padding padding padding padding padding padding padd\n", 5000);
    snprintf(p, sizeof p, "%s/model", g_dir);
    assert_int_equal(mkdir(p, 0700), 0);
    put("model/config.json", "{\"n_layer\": 2}", 1);
    snprintf(p, sizeof p, "%s/empty", g_dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/pipe.py", g_dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    static char abs_cfg[300];
    snprintf(abs_cfg, sizeof abs_cfg, "%s/cfg.py", g_dir);
    const char *argv[] = {"python3", "cfg.py", "--opt=x.yaml", "notes.txt", "big.py",
                          "model",   "empty",  "pipe.py",      "/dev/zero", "missing.py",
                          abs_cfg,   "--flag", "--x=",         "cfg.py",    NULL};
    g_argc = 14;
    memcpy(g_argv, argv, sizeof argv);

    snprintf(p, sizeof p, "%s/t.vt", g_dir);
    setenv("VRAMTRACE_OUTPUT", p, 1);
    unsetenv("VRAMTRACE_DISABLE");
    vt__config_reload();
    vt__writer_reset_for_tests();
    vt__writer_on_open(first_records);
    uint64_t payload[4] = {1, 2, 3, 4};
    assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 32, NULL, 0), 0);
    vt__writer_close();

    reader *r = reader_open(p, NULL, 0);
    assert_non_null(r);
    tables *t = tables_new();
    reader_record rec;
    while (reader_next(r, &rec))
        assert_int_equal(tables_add(t, &rec), 0);
    assert_int_equal(reader_status_of(r), READER_OK);
    reader_close(r);
    /* cfg.py (once, though named twice), x.yaml, big.py (no contents), model/config.json, and
     * cfg.py's absolute spelling under its own name (the analyzer looks names up); nothing else */
    assert_int_equal(tables_n_files(t), 5);
    assert_string_equal(tables_file_at(t, 4)->name.s, abs_cfg);
    assert_int_equal(tables_file_at(t, 4)->argi, 10);
    const tables_file *f = tables_file_at(t, 0);
    assert_string_equal(f->name.s, "cfg.py");
    assert_string_equal(f->path.s, abs_cfg);
    assert_int_equal(f->kind, VT_FILE_ARG);
    assert_int_equal(f->argi, 1);
    assert_int_equal(f->flags, 0);
    assert_string_equal(f->contents.s, "batch_size = 4\n");
    f = tables_file_at(t, 1);
    assert_string_equal(f->name.s, "x.yaml");
    assert_int_equal(f->argi, 2);
    f = tables_file_at(t, 2);
    assert_string_equal(f->name.s, "big.py");
    assert_int_equal(f->flags, VT_FILEF_TOO_LARGE);
    assert_int_equal(f->contents.len, 0);
    assert_true(f->size > VT_FILE_MAX_BYTES);
    f = tables_file_at(t, 3);
    assert_string_equal(f->name.s, "model/config.json");
    assert_int_equal(f->kind, VT_FILE_DIR_CONFIG);
    assert_int_equal(f->argi, 5);
    assert_string_equal(f->contents.s, "{\"n_layer\": 2}");
    tables_free(t);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argfiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
