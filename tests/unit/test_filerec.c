/* test_filerec.c — the FILE record (trace format 1.2) from the reader to the configuration:
 * round trip through reader.c and tables.c, hostile lengths (strings past the record, contents
 * over the bound, a cut record), then the recorded contents as config files (config.c,
 * cfgsrc.c): a config file and a Hugging Face config.json read from the record, never from
 * the disk, and hostile contents as notes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfgsrc.h"
#include "scriptflags.h"
#include "../../analyzer/trace/reader.h"
#include "../../analyzer/trace/tables.h"

#include "trace_enc.h"

/* w_file: one FILE record with the given strings (contents may hold any bytes). */
static void w_file(wbuf *w, uint32_t kind, uint32_t argi, uint32_t flags, const char *name,
                   const char *path, const char *contents, uint32_t clen)
{
    vt_rec_file f = {kind, argi, clen, flags, 0};
    pl(&f, sizeof f);
    pl_str(name);
    pl_str(path);
    pl(&clen, 4);
    pl(contents, clen);
    w_rec(w, VT_REC_FILE, 0);
}

/* read_tables: reads path into a new tables; *st gets the final status, *n the records. */
static tables *read_tables(const char *path, reader_status *st, int *n)
{
    reader *r = reader_open(path, NULL, 0);
    assert_non_null(r);
    tables *t = tables_new();
    reader_record rec;
    *n = 0;
    while (reader_next(r, &rec)) {
        assert_int_equal(tables_add(t, &rec), 0);
        (*n)++;
    }
    *st = reader_status_of(r);
    reader_close(r);
    return t;
}

static void test_round_trip(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, 1, 2);
    static const char bin[] = "batch_size = 8\n\0\xff tail";
    w_file(&w, VT_FILE_ARG, 2, 0, "cfg.py", "/run/cfg.py", bin, sizeof bin - 1);
    w_file(&w, VT_FILE_DIR_CONFIG, 3, 0, "m/config.json", "/run/m/config.json", "{}", 2);
    w_file(&w, 77, 4, VT_FILEF_TOO_LARGE, "big.py", "/run/big.py", "", 0);
    w_trailer(&w, 0);
    reader_status st;
    int n;
    tables *t = read_tables(save(&w), &st, &n);
    unlink(g_path);
    assert_int_equal(st, READER_OK);
    assert_int_equal(n, 4);
    assert_int_equal(tables_n_files(t), 3);
    const tables_file *f = tables_file_at(t, 0);
    assert_int_equal(f->kind, VT_FILE_ARG);
    assert_int_equal(f->argi, 2);
    assert_int_equal(f->size, sizeof bin - 1);
    assert_int_equal(f->contents.len, sizeof bin - 1);
    assert_memory_equal(f->contents.s, bin, sizeof bin - 1);
    assert_string_equal(f->name.s, "cfg.py");
    assert_string_equal(f->path.s, "/run/cfg.py");
    assert_string_equal(tables_file_kind_name(tables_file_at(t, 1)->kind), "dir_config");
    assert_string_equal(tables_file_kind_name(tables_file_at(t, 2)->kind), "unknown");
    assert_int_equal(tables_file_at(t, 2)->flags, VT_FILEF_TOO_LARGE);
    assert_null(tables_file_at(t, 3));
    assert_string_equal(reader_type_name(VT_REC_FILE), "file");
    tables_free(t);
    free(w.p);
}

/* Hostile lengths: each trace stops malformed (or truncated) at the FILE record, the records
 * before it kept, and nothing is read past the record. */
static void test_hostile_lengths(void **state)
{
    (void)state;
    reader_status st;
    int n;
    /* 1. the contents' length runs past the record */
    wbuf w = {0};
    w_header(&w, 1, 2);
    w_alloc(&w, VT_API_cudaMalloc, 0, 1, 0, 0x1000, 512, 0);
    size_t at = w.n;
    w_file(&w, VT_FILE_ARG, 1, 0, "a.py", "/a.py", "x = 1\n", 6);
    uint32_t huge = 0xfffffff0u;
    memcpy(w.p + at + 8 + sizeof(vt_rec_file) + 4 + 4 + 4 + 5, &huge, 4); /* contents length */
    w_trailer(&w, 1);
    tables_free(read_tables(save(&w), &st, &n));
    assert_int_equal(st, READER_MALFORMED);
    assert_int_equal(n, 1);
    /* 2. the name's length is 2^32 - 1 */
    huge = 0xffffffffu;
    memcpy(w.p + at + 8 + sizeof(vt_rec_file), &huge, 4);
    tables_free(read_tables(save(&w), &st, &n));
    assert_int_equal(st, READER_MALFORMED);
    assert_int_equal(n, 1);
    /* 3. shorter than its fixed part + three string lengths */
    vt_rec_header h = {VT_REC_FILE, 0, 8 + 16};
    memcpy(w.p + at, &h, 8);
    tables_free(read_tables(save(&w), &st, &n));
    assert_int_equal(st, READER_MALFORMED);
    /* 4. cut by EOF inside the record: truncated, the ALLOC kept */
    wbuf cut = {0};
    w_header(&cut, 1, 2);
    w_alloc(&cut, VT_API_cudaMalloc, 0, 1, 0, 0x1000, 512, 0);
    w_file(&cut, VT_FILE_ARG, 1, 0, "a.py", "/a.py", "batch_size = 4\n", 15);
    cut.n -= 12;
    tables_free(read_tables(save(&cut), &st, &n));
    assert_int_equal(st, READER_TRUNCATED);
    assert_int_equal(n, 1);
    unlink(g_path);
    free(cut.p);
    free(w.p);
    /* 5. contents longer than VT_FILE_MAX_BYTES (a writer never makes one): malformed */
    wbuf big = {0};
    w_header(&big, 1, 2);
    uint32_t clen = VT_FILE_MAX_BYTES + 8;
    uint32_t size = (uint32_t)((8 + sizeof(vt_rec_file) + 12 + clen + 7) & ~7u);
    vt_rec_header bh = {VT_REC_FILE, 0, size};
    vt_rec_file bf = {VT_FILE_ARG, 1, clen, 0, 0};
    uint32_t zero = 0;
    w_bytes(&big, &bh, 8);
    w_bytes(&big, &bf, sizeof bf);
    w_bytes(&big, &zero, 4);
    w_bytes(&big, &zero, 4);
    w_bytes(&big, &clen, 4);
    char *fill = calloc(1, size);
    assert_non_null(fill);
    w_bytes(&big, fill, size - 8 - sizeof bf - 12);
    free(fill);
    w_trailer(&big, 0);
    tables_free(read_tables(save(&big), &st, &n));
    unlink(g_path);
    assert_int_equal(st, READER_MALFORMED);
    assert_int_equal(n, 0);
    free(big.p);
}

/* More FILE records than a writer makes: the tables keep VT_FILE_MAX_COUNT. */
static void test_count_bound(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, 1, 2);
    for (unsigned i = 0; i < VT_FILE_MAX_COUNT + 5; i++)
        w_file(&w, VT_FILE_ARG, i, 0, "a.py", "/a.py", "x", 1);
    reader_status st;
    int n;
    tables *t = read_tables(save(&w), &st, &n);
    unlink(g_path);
    assert_int_equal(st, READER_TRUNCATED);
    assert_int_equal(n, VT_FILE_MAX_COUNT + 5);
    assert_int_equal(tables_n_files(t), VT_FILE_MAX_COUNT);
    config_recfile buf[4];
    config_files cf;
    cfgsrc_files(t, 2, buf, 4, &cf); /* the caller's bound holds too */
    assert_int_equal(cf.n, 4);
    assert_int_equal(cf.recorded, 1);
    tables_free(t);
    free(w.p);
}

/* Recorded contents as config files: read from the record (the name exists on no disk),
 * hostile contents give notes, never a failure. */
static void test_config_from_record(void **state)
{
    (void)state;
    static const char good[] = "batch_size = 6\nn_layer = 2 ** 3\ndtype = 'float16'";
    static const char junk[] = "\xff\xfe\0\0batch_size = (((((1\n\x01n_embd = 1e999\n";
    static const char json[] = "{\"num_hidden_layers\": 3, \"hidden_size\": 256, "
                               "\"vocab_size\": -5, \"n_positions\": 1e30}";
    static const config_recfile rec[] = {
        {"/nonexistent/good.py", good, sizeof good - 1, 0, VT_FILE_ARG},
        {"junk.py", junk, sizeof junk - 1, 0, VT_FILE_ARG},
        {"big.py", "", 0, VT_FILEF_TOO_LARGE, VT_FILE_ARG},
        {"m/config.json", json, sizeof json - 1, 0, VT_FILE_DIR_CONFIG},
        {"bad/config.json", "[1, 2", 5, 0, VT_FILE_DIR_CONFIG},
    };
    static const config_files files = {5, rec, 1};
    static const char *const argv[] = {"python3", "train.py", "/nonexistent/good.py",
                                       "junk.py", "big.py",   "missing.py"};
    nano_config c;
    char err[300];
    config_init(&c);
    c.files = &files;
    assert_int_equal(config_from_cmdline(&c, 6, argv, "/", err, sizeof err), 0);
    assert_int_equal(c.v[CFG_batch_size].i, 6);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_FILE);
    assert_string_equal(c.v[CFG_batch_size].where, "/nonexistent/good.py:1");
    assert_int_equal(c.v[CFG_n_layer].i, 8);
    assert_string_equal(c.v[CFG_dtype].s, "float16"); /* the last line has no newline */
    int big = 0, missing = 0;
    for (int i = 0; i < c.nwarnings && i < 4; i++) {
        big += strstr(c.warnings[i], "big.py: not recorded (larger than 256 KiB)") != NULL;
        missing += strstr(c.warnings[i], "missing.py: not recorded (it was not a regular") != NULL;
    }
    assert_int_equal(big, 1);
    assert_int_equal(missing, 1);
    /* config.json: Llama names; a negative vocabulary and a 1e30 context are notes */
    config_init(&c);
    c.program = PROG_HF_TRAINER;
    cfgsrc_apply_hf(&c, &files);
    assert_int_equal(c.v[CFG_n_layer].i, 3);
    assert_int_equal(c.v[CFG_n_layer].src, CONFIG_SRC_FILE);
    assert_string_equal(c.v[CFG_n_layer].where, "m/config.json: num_hidden_layers");
    assert_int_equal(c.v[CFG_n_embd].i, 256);
    assert_int_equal(c.v[CFG_vocab_size].src, CONFIG_SRC_DEFAULT);
    assert_int_equal(c.v[CFG_block_size].src, CONFIG_SRC_DEFAULT);
    assert_true(c.nwarnings >= 3); /* vocab_size, n_positions, bad/config.json */
    assert_non_null(strstr(c.warnings[c.nwarnings - 1], "bad/config.json: not a JSON object"));
}

/* A nanoGPT-style script's defaults are its own: a key it assigns at top level takes its value
 * ("train.py:1 (the script's own)"), one it does not is unknown, never upstream nanoGPT's
 * default (the mutation nanogpt-script-unassigned, which gave n_layer upstream's 12 here, had
 * survived every test) */
static void test_nanogpt_script_own(void **state)
{
    (void)state;
    static const char script[] = "batch_size = 6\nlearning_rate = 3e-4\n";
    static const config_recfile rec[] = {{"train.py", script, sizeof script - 1, 0, VT_FILE_ARG}};
    static const config_files files = {1, rec, 1};
    static const char *const argv[] = {"python3", "train.py"};
    nano_config c;
    config_init(&c);
    c.files = &files;
    config_nanogpt_script(&c, 2, argv);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_FILE);
    assert_int_equal(c.v[CFG_batch_size].i, 6);
    assert_non_null(strstr(c.v[CFG_batch_size].where, "(the script's own)"));
    assert_int_equal(c.v[CFG_n_layer].src, CONFIG_SRC_UNKNOWN); /* not upstream's 12 */
    assert_int_equal(c.v[CFG_block_size].src, CONFIG_SRC_UNKNOWN);
}

/* torch/version.py as recorded: the two strings; hostile contents leave them empty */
static void test_versions(void **state)
{
    (void)state;
    static const char real[] = "from typing import Optional\n__version__ = '2.11.0+cu130'\n"
                               "debug = False\ncuda: Optional[str] = '13.0'\nhip = None\n";
    static const char bad[] = "x__version__ = '9'\n__version__ = '2.11\ncuda = None\ncuda";
    config_recfile rec[] = {{"torch/version.py", real, sizeof real - 1, 0, VT_FILE_TORCH_VERSION}};
    config_files files = {1, rec, 1};
    nano_config c;
    config_init(&c);
    cfgsrc_versions(&c, &files);
    assert_string_equal(c.torch_version, "2.11.0+cu130");
    assert_string_equal(c.cuda_version, "13.0");
    rec[0] = (config_recfile){"torch/version.py", bad, sizeof bad - 1, 0, VT_FILE_TORCH_VERSION};
    config_init(&c);
    cfgsrc_versions(&c, &files);
    assert_string_equal(c.torch_version, "");
    assert_string_equal(c.cuda_version, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),  cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_count_bound), cmocka_unit_test(test_config_from_record),
        cmocka_unit_test(test_versions),    cmocka_unit_test(test_nanogpt_script_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
