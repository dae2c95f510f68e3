/* test_flame.c — `vramtrace flame`'s folded lines (flame.c) from a hand-written trace whose frame
 * names hold what a terminal must not get raw: an ESC sequence and a C1 control come out as
 * \xNN, the folded format's separator ';' as '_', and a non-ASCII name stays readable (it had
 * been made '_' byte by byte). Traces are written with the unit tests' encoder (trace_enc.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "flame.h"
#include "replay.h"
#include "trace_enc.h"

static void test_names_escaped(void **st)
{
    (void)st;
    char path[] = "/tmp/vt-flame-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    wbuf w = {0};
    w_header(&w, VT_VERSION_MAJOR, VT_VERSION_MINOR);
    vt_rec_code c = {1, 1};
    const char *names[3] = {"/x/caf\xc3\xa9.py",
                            "f;\x1b[31mred\xc2\x9b"
                            "x",
                            ""};
    w_rec_strs(&w, VT_REC_CODE, 0, &c, sizeof c, names, 3);
    struct {
        vt_rec_stack s;
        uint64_t f;
    } s = {{1, 0, 1}, VT_PYFRAME(1, 0)};
    w_rec_strs(&w, VT_REC_STACK, 0, &s, sizeof s, NULL, 0);
    vt_rec_alloc a = {VT_TT_MAKE(1000, 0), 0x1000, 4096, 1, 0, 0};
    w_rec_strs(&w, VT_REC_ALLOC, VT_EVF_MAKE(VT_API_cudaMallocAsync, 0), &a, sizeof a, NULL, 0);
    vt_rec_trailer t = {2000, 1, 0, 1, 0, 0};
    w_rec_strs(&w, VT_REC_TRAILER, 0, &t, sizeof t, NULL, 0);
    save_to(&w, path);
    replay_result r;
    char err[256];
    assert_int_equal(replay_file(path, &r, err, sizeof err), 0);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    int io_err = 0;
    assert_int_equal(flame_write(f, &r, &r.at_peak, &io_err), 4096);
    fclose(f);
    assert_int_equal(io_err, 0);
    assert_non_null(strstr(out, "caf\xc3\xa9.py"));            /* UTF-8 kept */
    assert_non_null(strstr(out, "f_\\x1b[31mred\\xc2\\x9bx")); /* ';' made '_', controls escaped */
    assert_null(strchr(out, '\x1b'));
    assert_null(strstr(out, "\xc2\x9b"));
    free(out);
    free(w.p);
    replay_free(&r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_names_escaped)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
