/* test_mem.c — allocation failures through the analyzer's allocator seam (trace/mem.h): the Nth
 * allocation fails, for N = 1, 2, ... until a run needs no failure, in the trace layer (reader,
 * tables, stack resolution) and in the views of `dump`, `flame`, Perfetto, memory_viz and
 * `diff`. Each run must either return an error or give exactly the answer of a run where
 * nothing failed — never a smaller one — and mem_failed() must have seen every failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "diff_view.h"
#include "failing_alloc.h"
#include "dump_json.h"
#include "flame.h"
#include "mem.h"
#include "memviz.h"
#include "perfetto.h"
#include "reader.h"
#include "replay.h"
#include "tables.h"

/* ---- scenarios: prepare (nothing fails), run (the seam fails), cleanup -------------------- */

static char g_path[2][4096];

typedef struct scenario {
    const char *name;
    void (*prepare)(void);
    int (*run)(FILE *out); /* 0, or -1 when it reported an error */
    void (*cleanup)(void);
} scenario;

/* the trace layer as every command uses it: records into the tables, every stack resolved */
static int run_tables(FILE *out)
{
    reader *r = reader_open(g_path[0], NULL, 0);
    tables *t = tables_new();
    int rc = r && t ? 0 : -1;
    reader_record rec;
    while (!rc && reader_next(r, &rec)) {
        if (tables_add(t, &rec)) {
            rc = -1;
            break;
        }
        if (rec.type != VT_REC_ALLOC || !rec.u.ev.stack_id)
            continue;
        size_t n;
        const tables_frame *f = tables_resolve_stack(t, rec.u.ev.stack_id, &n);
        if (!f && mem_failed()) /* the contract: NULL for want of memory is not "no stack" */
            rc = -1;
        for (size_t i = 0; f && i < n; i++) {
            char buf[512];
            tables_frame_text(&f[i], buf, sizeof buf);
            fprintf(out, "%u %s\n", (unsigned)rec.u.ev.stack_id, buf);
        }
    }
    if (r && reader_status_of(r) == READER_IOERR)
        rc = -1; /* the read window could not grow */
    tables_free(t);
    reader_close(r);
    return rc;
}

/* what cmd_dump does with them (its loop, on out) */
static int run_dump(FILE *out)
{
    reader *r = reader_open(g_path[0], NULL, 0);
    tables *t = r ? tables_new() : NULL;
    dump_json *d = t ? dump_json_new(t, out, true) : NULL;
    int rc = d ? dump_json_header(d, g_path[0], reader_header(r)) : -1;
    reader_record rec;
    while (!rc && reader_next(r, &rec))
        if ((rec.type != VT_REC_STACK && tables_add(t, &rec)) || dump_json_record(d, &rec))
            rc = -1;
    if (!rc && dump_json_status(d, reader_status_of(r), reader_records(r), 0, ""))
        rc = -1;
    dump_json_free(d);
    tables_free(t);
    reader_close(r);
    return rc;
}

static replay_result g_r[2];

static void prepare_one(void)
{
    char err[512];
    timeline_totals = 1;
    assert_int_equal(replay_file(g_path[0], &g_r[0], err, sizeof err), 0);
    memset(&g_r[1], 0, sizeof g_r[1]);
}
static void prepare_two(void)
{
    char err[512];
    prepare_one();
    assert_int_equal(replay_file(g_path[1], &g_r[1], err, sizeof err), 0);
}
/* prepare_end: as prepare_one, keeping the live set at the trace's end (memory_viz's
 * snapshot, as export does) */
static void prepare_end(void)
{
    replay_keep_end = 1;
    prepare_one();
    replay_keep_end = 0;
    assert_true(g_r[0].end_kept);
}
static void cleanup_replay(void)
{
    replay_free(&g_r[0]);
    replay_free(&g_r[1]);
}

static int run_flame(FILE *out)
{
    int io_err = 0;
    flame_write(out, &g_r[0], &g_r[0].at_peak, &io_err);
    return io_err ? -1 : 0;
}
static int run_flame_all(FILE *out)
{
    replay_snapshot all;
    int io_err = flame_all(&g_r[0], &all);
    if (!io_err)
        flame_write(out, &g_r[0], &all, &io_err);
    free(all.items);
    return io_err ? -1 : 0;
}
static int run_perfetto(FILE *out)
{
    return perfetto_write(out, &g_r[0]);
}
static int run_memviz(FILE *out)
{
    return memviz_write(out, &g_r[0]);
}
static int run_diff(FILE *out)
{
    return diff_view_write(out, &g_r[0], &g_r[1], (const int[2]){0, 0}, 10, 0) ? -1 : 0;
}
static int run_diff_json(FILE *out)
{
    return diff_view_write(out, &g_r[0], &g_r[1], (const int[2]){0, 0}, 10, 1) ? -1 : 0;
}

static void nothing(void) {}

/* capture: s's output with the seam failing call at (0: none); *calls gets the calls made */
static int capture(const scenario *s, long at, char **text, size_t *len, long *calls)
{
    s->prepare();
    FILE *m = open_memstream(text, len);
    assert_non_null(m);
    mem_reset();
    g_at = at;
    g_calls = 0;
    mem_set_ops(&failing);
    int rc = s->run(m);
    mem_set_ops(NULL);
    *calls = g_calls;
    fclose(m);
    s->cleanup();
    return rc;
}

/* sweep: every N until a run needs no failure; returns the number of allocations made */
static long sweep(const scenario *s)
{
    char *ref = NULL, *got = NULL;
    size_t nref = 0, ngot = 0;
    long calls, n = 0, errors = 0;
    assert_int_equal(capture(s, 0, &ref, &nref, &calls), 0);
    assert_false(mem_failed());
    assert_true(calls > 0);
    for (long at = 1;; at++) {
        int rc = capture(s, at, &got, &ngot, &calls);
        if (calls < at) { /* nothing failed: the same answer */
            assert_int_equal(rc, 0);
            assert_false(mem_failed());
            assert_int_equal(ngot, nref);
            assert_memory_equal(got, ref, nref);
            free(got);
            n = at - 1;
            break;
        }
        assert_true(mem_failed()); /* the seam's failure was seen */
        if (rc == 0 && (ngot != nref || memcmp(got, ref, nref))) {
            fprintf(stderr, "%s: allocation %ld of %ld failed, no error, and the answer differs\n",
                    s->name, at, calls);
            fail();
        }
        errors += rc != 0;
        free(got);
        got = NULL;
    }
    free(ref);
    mem_reset();
    printf("%-14s %ld allocations, each failed once: %ld errors, the rest the same answer\n",
           s->name, n, errors);
    return n;
}

static const scenario scenarios[] = {
    {"tables", nothing, run_tables, nothing},
    {"dump", nothing, run_dump, nothing},
    {"flame", prepare_one, run_flame, cleanup_replay},
    {"flame --at all", prepare_one, run_flame_all, cleanup_replay},
    {"perfetto", prepare_one, run_perfetto, cleanup_replay},
    {"memory_viz", prepare_end, run_memviz, cleanup_replay},
    {"diff", prepare_two, run_diff, cleanup_replay},
    {"diff --json", prepare_two, run_diff_json, cleanup_replay},
};

static void set_paths(const char *a, const char *b)
{
    const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
    snprintf(g_path[0], sizeof g_path[0], "%s/%s", root, a);
    snprintf(g_path[1], sizeof g_path[1], "%s/%s", root, b);
}

static void test_small_trace(void **state)
{
    (void)state;
    set_paths("tests/data/dump_small.vt", "tests/data/report_rank0.vt");
    for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++)
        assert_true(sweep(&scenarios[i]) > 0);
}

static void test_tensor_trace(void **state)
{
    (void)state;
    set_paths("tests/fuzz/corpus/trace/slice_sim_gpt2_ckpt_b16_fit_start.vt",
              "tests/data/dump_small.vt");
    for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++)
        assert_true(sweep(&scenarios[i]) > 0);
}

/* memory_viz's snapshot is the trace's end: a replay that did not keep it writes nothing and
 * says so (it had written a snapshot with no segments) */
static void test_memviz_needs_end(void **state)
{
    (void)state;
    set_paths("tests/fuzz/corpus/trace/slice_sim_gpt2_ckpt_b16_fit_start.vt",
              "tests/data/dump_small.vt");
    char *text = NULL;
    size_t len = 0;
    prepare_one();
    assert_false(g_r[0].end_kept);
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    assert_int_equal(memviz_write(m, &g_r[0]), -1);
    fclose(m);
    assert_int_equal(len, 0);
    free(text);
    cleanup_replay();
    prepare_end(); /* kept: its segments are there */
    assert_true(g_r[0].at_end.n > 0);
    cleanup_replay();
}

/* the wrappers themselves: a failure of n > 0 bytes is seen, realloc(p, 0) and malloc(0) are
 * not failures, strdup / strndup go through the seam */
static void test_wrappers(void **state)
{
    (void)state;
    mem_reset();
    char *p = malloc(0);
    free(p);
    p = realloc(NULL, 8);
    assert_non_null(p);
    p = realloc(p, 0);
    free(p);
    assert_false(mem_failed());
    g_calls = 0;
    g_at = 1;
    mem_set_ops(&failing);
    assert_null(strdup("x"));
    mem_set_ops(NULL);
    assert_true(mem_failed());
    mem_reset();
    g_calls = 0;
    g_at = 1;
    mem_set_ops(&failing);
    assert_null(strndup("xyz", 2));
    p = calloc(4, 4); /* only call 1 fails */
    assert_non_null(p);
    free(p);
    mem_set_ops(NULL);
    assert_true(mem_failed());
    mem_reset();
    assert_false(mem_failed());
}

/* smaps_value: the field fmt ("THPeligible: %ld") of the mapping holding address a, from
 * /proc/self/smaps (-1: not found) */
static long smaps_value(uintptr_t a, const char *fmt)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0;
    long r = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = a >= lo && a < hi;
        else if (in && sscanf(line, fmt, &r) == 1)
            break;
    }
    fclose(f);
    return r;
}

/* thp_eligible / anon_huge_kib: smaps' THPeligible / AnonHugePages of the mapping holding a */
static long thp_eligible(uintptr_t a)
{
    return smaps_value(a, "THPeligible: %ld");
}

static long anon_huge_kib(uintptr_t a)
{
    return smaps_value(a, "AnonHugePages: %ld");
}

/* mem_grow: the capacity doubles from first up to what is needed, never past max; past max, an
 * overflowing size or a failed realloc: -1, the array and its capacity as they were (and the
 * failure remembered: mem_failed) */
static void test_grow(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    assert_int_equal(mem_grow((void **)&a, &cap, 1, sizeof *a, 64, 0), 0);
    assert_int_equal(cap, 64);
    a[63] = 7;
    assert_int_equal(mem_grow((void **)&a, &cap, 64, sizeof *a, 64, 0), 0);
    assert_int_equal(cap, 64); /* (room enough: nothing moves) */
    assert_int_equal(mem_grow((void **)&a, &cap, 300, sizeof *a, 64, 0), 0);
    assert_int_equal(cap, 512);
    assert_int_equal(a[63], 7);
    assert_int_equal(mem_grow((void **)&a, &cap, 600, sizeof *a, 64, 700), 0);
    assert_int_equal(cap, 700); /* (1024 clamped) */
    int *before = a;
    assert_int_equal(mem_grow((void **)&a, &cap, 701, sizeof *a, 64, 700), -1);
    assert_int_equal(mem_grow((void **)&a, &cap, SIZE_MAX / 2, 16, 64, 0), -1);
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 700);
    mem_reset();
    g_calls = 0, g_at = 1;
    mem_set_ops(&failing);
    assert_int_equal(mem_grow((void **)&a, &cap, 701, sizeof *a, 64, 0), -1);
    mem_set_ops(NULL);
    assert_true(mem_failed());
    mem_reset();
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 700);
    assert_int_equal(a[63], 7);
    free(a);
}

/* the heap on 2 MiB pages (mem_heap_huge): where the kernel gives transparent huge pages on
 * request and malloc is glibc's with its sbrk heap, an allocation made after it lies in the range
 * marked for them */
static void test_heap_huge(void **state)
{
    (void)state;
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = 0;
        fclose(f);
    }
    if (!strstr(mode, "[madvise]"))
        skip(); /* never: nothing to ask for; always: every mapping is eligible */
    mem_heap_huge();
    void *q = malloc(256 << 10);
    assert_non_null(q);
    uintptr_t end = (uintptr_t)sbrk(0);
    if ((uintptr_t)q < end && end - (uintptr_t)q < (64u << 20)) /* glibc's sbrk heap */
        assert_int_equal(thp_eligible((uintptr_t)q + (128 << 10)), 1);
    /* and what comes after: the heap grown past the range marked at the start (blocks under
     * the mapping threshold, 48 MiB in all), a block of its own mapping, a block grown into one
     * by realloc (moved before anything touches the new one) */
    enum { NB = 16 };
    char *b[NB];
    for (int i = 0; i < NB; i++) {
        b[i] = malloc(3u << 20);
        assert_non_null(b[i]);
    }
    end = (uintptr_t)sbrk(0);
    if ((uintptr_t)b[NB - 1] < end && end - (uintptr_t)b[NB - 1] < (64u << 20))
        assert_int_equal(thp_eligible((uintptr_t)b[NB - 1] + (2u << 20)), 1);
    char *big = malloc(12u << 20);
    assert_non_null(big);
    assert_int_equal(thp_eligible((uintptr_t)big + (6u << 20)), 1);
    char *grown = malloc(3u << 20), *fence = malloc(64); /* (fenced: it cannot grow in place) */
    assert_non_null(grown);
    assert_non_null(fence);
    memset(grown, 7, 3u << 20);
    grown = realloc(grown, 40u << 20); /* past the heap's top: a mapping of its own */
    assert_non_null(grown);
    assert_int_equal(grown[(3u << 20) - 1], 7); /* its bytes moved with it */
    assert_int_equal(thp_eligible((uintptr_t)grown + (20u << 20)), 1);
    /* marked before its bytes were copied in: where the kernel gave the block written after it
     * was marked 2 MiB pages, the copy's first whole 2 MiB range has one too */
    memset(big, 1, 12u << 20);
    uintptr_t first = ((uintptr_t)grown + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
    if (anon_huge_kib((uintptr_t)big + (6u << 20)) > 0)
        assert_true(anon_huge_kib(first) > 0);
    /* a block of its own mapping grown: its pages moved (mremap), none copied into fresh ones
     * (a copy would take a fault at least every 2 MiB of the 12 MiB), the rest marked too */
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    big = realloc(big, 24u << 20);
    getrusage(RUSAGE_SELF, &u1);
    assert_non_null(big);
    assert_true(u1.ru_minflt - u0.ru_minflt < 3);
    assert_int_equal(big[(12u << 20) - 1], 1);
    assert_int_equal(thp_eligible((uintptr_t)big + (18u << 20)), 1);
    /* a heap block grown past 4 MiB (into the heap's top, where it fits) is given room of its
     * own: grown again, none of its pages is copied */
    char *g2 = malloc(3u << 20), *fence2 = malloc(64);
    assert_non_null(g2);
    assert_non_null(fence2);
    g2 = realloc(g2, 5u << 20);
    assert_non_null(g2);
    /* the room itself, whatever the kernel's page sizes: far more than the 5 MiB asked for */
    assert_true(malloc_usable_size(g2) >= (32u << 20));
    memset(g2, 3, 5u << 20);
    getrusage(RUSAGE_SELF, &u0);
    g2 = realloc(g2, 10u << 20);
    getrusage(RUSAGE_SELF, &u1);
    assert_non_null(g2);
    assert_true(u1.ru_minflt - u0.ru_minflt < 2);
    assert_int_equal(g2[(5u << 20) - 1], 3);
    free(fence2);
    free(g2);
    free(fence);
    free(grown);
    free(big);
    for (int i = 0; i < NB; i++)
        free(b[i]);
    free(q);
}

int main(void)
{
    cJSON_Hooks hooks = {mem_malloc, mem_free};
    cJSON_InitHooks(&hooks);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_huge), /* (first: a heap with no large block freed yet) */
        cmocka_unit_test(test_memviz_needs_end),
        cmocka_unit_test(test_wrappers),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_small_trace),
        cmocka_unit_test(test_tensor_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
