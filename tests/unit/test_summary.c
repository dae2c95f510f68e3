/* test_summary.c — the run summary after `vramtrace run` (analyzer/model/facts/summary.c,
 * analyzer/views/summary_text.c): on every committed trace (examples/traces/, tests/data/) it
 * says what `vramtrace report` says — events, failed events, reserved and process peaks, OOM,
 * truncation — compared on the printed text of both; read errors give the same exit codes. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "summary.h"
#include "../../analyzer/report/report.h"
#include "../../analyzer/views/report_views.h"
#include "../../analyzer/views/summary_text.h"
#include "trace_enc.h"

#define MiB (1024ull * 1024ull)

/* text_after: the text after the first occurrence of key in s, up to the first of stop. */
static void text_after(const char *s, const char *key, const char *stop, char *buf, size_t len)
{
    const char *p = strstr(s, key);
    assert_non_null(p);
    p += strlen(key);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, stop);
    assert_true(n < len);
    memcpy(buf, p, n);
    buf[n] = '\0';
}

/* two_words: "10.26 GiB" — the two words after key in s. */
static void two_words(const char *s, const char *key, char *buf, size_t len)
{
    const char *p = strstr(s, key);
    assert_non_null(p);
    char w1[32], w2[32];
    assert_int_equal(sscanf(p + strlen(key), "%31s %31s", w1, w2), 2);
    snprintf(buf, len, "%s %s", w1, w2);
}

__attribute__((noinline)) static char *render_report(const report_ctx *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(report_text(out, c), 0);
    fclose(out);
    return buf;
}

__attribute__((noinline)) static char *render_summary(const char *path, const run_summary *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    summary_text(out, path, s, "vramtrace");
    fclose(out);
    return buf;
}

/* agree: summary and report of one trace say the same. Returns 1 if it was readable. */
static int agree(const char *path)
{
    report_ctx c;
    char rerr[600] = "", serr[600] = "";
    int rrc = report_of_trace(path, &c, rerr, sizeof rerr);
    run_summary s;
    int src = summary_read(path, &s, serr, sizeof serr);
    if (rrc != 0 || src != 0) {
        /* a trace the report refuses, the summary refuses the same way (and vice versa) */
        print_message("%s: report %d (%s), summary %d (%s)\n", path, rrc, rerr, src, serr);
        assert_int_equal(rrc, src);
        report_free(&c);
        return 0;
    }
    char *rt = render_report(&c), *st = render_summary(path, &s);
    char a[64], b[64];
    /* report: "events   92 (2 failed), ..." ; summary: "92 events (2 failed)" */
    text_after(rt, "  events ", ",;", a, sizeof a);
    const char *after_path = strstr(st, path);
    assert_non_null(after_path);
    text_after(after_path + strlen(path), ": ", ",;", b, sizeof b);
    char n1[32], f1[32], n2[32], f2[32];
    assert_int_equal(sscanf(a, "%31s (%31s failed)", n1, f1), 2);
    assert_int_equal(sscanf(b, "%31s events (%31s failed)", n2, f2), 2);
    assert_string_equal(n1, n2);
    assert_string_equal(f1, f2);
    /* the peaks, as "10.26 GiB" in both */
    two_words(rt, "reserved (allocator)", a, sizeof a);
    two_words(st, " peak ", b, sizeof b);
    assert_string_equal(a, b);
    two_words(rt, "process (all device)", a, sizeof a);
    two_words(st, "by the allocator (", b, sizeof b);
    assert_string_equal(a, b);
    /* OOM: the report has its "OOM:" diagnosis exactly when the summary says yes */
    int report_oom = strstr(rt, "\nOOM: ") != NULL;
    assert_int_equal(report_oom, strstr(st, "OOM: yes") != NULL);
    if (report_oom) {
        two_words(rt, "\nOOM: ", a, sizeof a);
        two_words(st, "OOM: yes (a request for ", b, sizeof b);
        assert_string_equal(a, b);
    }
    assert_int_equal(strstr(rt, "(truncated)") != NULL, strstr(st, "truncated (") != NULL);
    free(rt);
    free(st);
    report_free(&c);
    return 1;
}

static void test_committed_traces_agree(void **state)
{
    (void)state;
    const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
    const char *dirs[] = {"examples/traces", "tests/data"};
    int readable = 0, total = 0;
    for (size_t d = 0; d < 2; d++) {
        char pat[1024];
        snprintf(pat, sizeof pat, "%s/%s/*.vt", root, dirs[d]);
        glob_t g;
        if (glob(pat, 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++, total++)
            readable += agree(g.gl_pathv[i]);
        globfree(&g);
    }
    assert_true(total >= 8); /* 4 examples + the report and dump traces of tests/data */
    assert_true(readable >= 6);
}

/* The input of the old disagreement: the summary's own live map counted 12 failed events and
 * a 10.33 GiB peak on this trace where the report counts 2 failed and 10.26 GiB reserved. */
static void test_b_oom_12gib(void **state)
{
    (void)state;
    const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/traces/b_oom_12gib.vt", root);
    run_summary s;
    char err[600];
    assert_int_equal(summary_read(path, &s, err, sizeof err), 0);
    assert_int_equal(s.failed, 2);
    assert_int_equal(s.failed_frees, 10); /* cuLibraryUnload at exit, as vramtrace dump shows */
    assert_true(s.oom);
    char *st = render_summary(path, &s);
    assert_non_null(strstr(st,
                           "(2 failed allocations; 10 frees refused as the driver shut down at the "
                           "exit), peak 10.26 GiB reserved"));
    free(st);
    assert_true(agree(path));
}

/* summary_print: summary_read, then summary_text on success (what `vramtrace run` does). */
static int summary_print(FILE *out, const char *path)
{
    run_summary s;
    char err[600];
    int rc = summary_read(path, &s, err, sizeof err);
    if (rc == 0)
        summary_text(out, path, &s, "build/vramtrace");
    return rc;
}

/* a hand-made trace: levels, contexts, an unrecovered OOM, truncated / complete / malformed */
static void test_summary_text(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, 1, 0);
    w_alloc(&w, VT_API_cuDevicePrimaryCtxRetain, 0, 1, 0, 0x50, 300 * MiB, 0);
    w_alloc(&w, VT_API_cudaMalloc, 0, 2, 0, 0x1000, 100 * MiB, 0);
    w_alloc(&w, VT_API_cuMemCreate, 0, 3, 0, 0x77, 50 * MiB, 0);
    /* a physical handle counts once mapped (the map's aux names it) */
    vt_rec_alloc m = {VT_TT_MAKE(3, 0), 0x7000000, 50 * MiB, 0, 0, 0};
    uint64_t handle = 0x77;
    pl(&m, sizeof m), pl(&handle, sizeof handle);
    w_rec(&w, VT_REC_ALLOC, VT_EVF_MAKE(VT_API_cuMemMap, 0));
    /* one released without ever being mapped (a failed expansion): never counted */
    w_alloc(&w, VT_API_cuMemCreate, 0, 3, 0, 0x78, 4096 * MiB, 0);
    w_free(&w, VT_API_cuMemRelease, 3, 0x78);
    w_alloc(&w, VT_API_cudaHostAlloc, 0, 4, 0, 0x3000, 900 * MiB, 0); /* not VRAM */
    w_free(&w, VT_API_cudaFree, 5, 0x1000);
    w_alloc(&w, VT_API_cudaMalloc, 0, 6, 0, 0x1000, 20 * MiB, 0); /* reused address */
    /* the failed request returns cudaErrorMemoryAllocation (2), as a real one does */
    vt_rec_alloc fa = {VT_TT_MAKE(7, 0), 0, 64 * 1024 * MiB, 0, 0, 2};
    pl(&fa, sizeof fa),
        w_rec(&w, VT_REC_ALLOC, (uint16_t)(VT_EVF_MAKE(VT_API_cudaMalloc, 0) | VT_EVF_FAILED));
    vt_rec_oom o = {VT_TT_MAKE(8, 0), 64 * 1024 * MiB, 24 * 1024 * MiB, 0, 0, 2};
    pl(&o, sizeof o), w_rec(&w, VT_REC_OOM, VT_EVF_MAKE(VT_API_cudaMalloc, 0));
    char out[2048] = {0};
    FILE *f = fmemopen(out, sizeof out - 1, "w");
    assert_int_equal(summary_print(f, save(&w)), 0);
    fclose(f);
    unlink(g_path);
    assert_non_null(strstr(out, "10 events (1 failed allocation), peak"));
    assert_non_null(
        strstr(out, "peak 150.0 MiB reserved by the allocator (450.0 MiB for the process"));
    assert_non_null(strstr(out, "1 context,"));
    assert_non_null(strstr(out, "OOM: yes (a request for 64.00 GiB failed)"));
    assert_non_null(strstr(out, "truncated"));

    w_trailer(&w, 7);
    f = fmemopen(out, sizeof out - 1, "w");
    assert_int_equal(summary_print(f, save(&w)), 0);
    fclose(f);
    unlink(g_path);
    assert_non_null(strstr(out, "complete."));
    assert_non_null(strstr(out, "Run `build/vramtrace report ")); /* the program as given */
    assert_null(strstr(out, "lost"));

    /* a clean end whose trailer counts events the capture could not store: not "complete" */
    size_t clean = w.n;
    w.n -= 8 + sizeof(vt_rec_trailer);
    vt_rec_trailer lost = {999, 7, 4000, 0, 0, 0};
    pl(&lost, sizeof lost), w_rec(&w, VT_REC_TRAILER, 0);
    assert_int_equal(w.n, clean);
    f = fmemopen(out, sizeof out - 1, "w");
    assert_int_equal(summary_print(f, save(&w)), 0);
    fclose(f);
    unlink(g_path);
    assert_non_null(strstr(out, "10 events (1 failed allocation; 4000 of the run's 4007 events "
                                "lost: the capture could not store them), peak"));
    assert_non_null(strstr(out, "OOM: yes (a request for 64.00 GiB failed), incomplete (the "
                                "figures leave out the events lost)."));
    assert_null(strstr(out, "complete."));

    w.p[0] = 'Z';
    f = fmemopen(out, sizeof out - 1, "w");
    assert_int_equal(summary_print(f, save(&w)), 3);
    fclose(f);
    unlink(g_path);
    assert_int_equal(summary_print(stdout, "/nonexistent.vt"), 2);
    free(w.p);
}

/* the failed calls' words whole at any counts: the largest three fill the buffer's size */
static void test_failed_text_whole(void **state)
{
    (void)state;
    char buf[REPORT_FAILED_LEN];
    report_failed_text(UINT64_MAX, UINT64_MAX, UINT64_MAX - 1, buf, sizeof buf);
    assert_string_equal(buf, "18446744073709551615 failed allocations; 18446744073709551615 "
                             "failed frees, 18446744073709551614 of them refused as the driver "
                             "shut down at the exit");
    report_failed_text(1, 3, 3, buf, sizeof buf);
    assert_string_equal(buf, "1 failed allocation; 3 frees refused as the driver shut down at "
                             "the exit");
    report_failed_text(2, 1, 0, buf, sizeof buf);
    assert_string_equal(buf, "2 failed allocations; 1 failed free");
}

/* the events not in the file, said by why the trace ended: the disk or the file-size limit, a
 * window the tracer could not map (`ulimit -v`: it had been said "no room ... on the disk"), else
 * the bound too; every reason at once whole in the buffer */
static void test_lost_text_why(void **state)
{
    (void)state;
    char buf[REPORT_LOST_LEN];
    report_lost_text(0, 5, 10, VT_TRAILER_OUTPUT_ERROR, buf, sizeof buf);
    assert_non_null(strstr(buf, "5 of the run's 10 events lost: not in the file (writing the "
                                "trace failed: a window the tracer could not map or write"));
    assert_null(strstr(buf, "disk"));
    report_lost_text(0, 5, 10, VT_TRAILER_DISK_FULL, buf, sizeof buf);
    assert_non_null(strstr(buf, "not in the file (no room for them on the disk or under the "
                                "file-size limit)"));
    assert_null(strstr(buf, "bound"));
    report_lost_text(0, 5, 10, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "(no room for them within the bound, on the disk or under the "
                                "file-size limit)"));
    report_lost_text(UINT64_MAX / 4, UINT64_MAX / 4, UINT64_MAX,
                     VT_TRAILER_OUTPUT_ERROR | VT_TRAILER_LOST_IN_HOOK | VT_TRAILER_NO_HELPER, buf,
                     sizeof buf);
    size_t n = strlen(buf);
    assert_true(n + 1 < sizeof buf);
    assert_string_equal(buf + n - strlen("named the error)"), "named the error)");
}

static void test_unreadable(void **state)
{
    (void)state;
    run_summary s;
    char err[600] = "";
    assert_int_equal(summary_read("/nonexistent.vt", &s, err, sizeof err), 2);
    assert_non_null(strstr(err, "/nonexistent.vt"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_committed_traces_agree), cmocka_unit_test(test_b_oom_12gib),
        cmocka_unit_test(test_summary_text),           cmocka_unit_test(test_failed_text_whole),
        cmocka_unit_test(test_lost_text_why),          cmocka_unit_test(test_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
