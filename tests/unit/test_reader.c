/* test_reader.c — the streaming reader (analyzer/trace/reader.c), the lookup tables and
 * resolver (tables.c, demangle.c), on traces written by the unit tests' encoder (trace_enc.h):
 * round trip of every record type, truncation, malformed inputs, a random-corruption loop,
 * buffer-window boundaries, rewind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../analyzer/trace/reader.h"
#include "../../analyzer/trace/tables.h"

#define MiB (1024ull * 1024ull)

#include "trace_enc.h"

/* read_all: count of records and final status of path; *off gets the error offset. */
static uint64_t read_all(const char *path, reader_status *st, uint64_t *off)
{
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    reader_record rec;
    uint64_t n = 0;
    while (reader_next(r, &rec))
        n++;
    assert_false(reader_next(r, &rec)); /* stays at the end */
    *st = reader_status_of(r);
    if (off)
        *off = reader_error_offset(r);
    assert_true(n == reader_records(r));
    reader_close(r);
    return n;
}

/* ---- every record type ------------------------------------------------------------------ */

/* build_all: one record of every type with known values; *n gets the record count. */
static void build_all(wbuf *w, int *n)
{
    w_header(w, VT_VERSION_MAJOR, VT_VERSION_MINOR);
    vt_rec_process p = {77, 1, 2, 1, 5555};
    pl(&p, sizeof p);
    pl_str("/usr/bin/python3"), pl_str("/cwd"), pl_str("host1");
    pl_str("python3"), pl_str("train.py"), pl_str("RANK=3");
    w_rec(w, VT_REC_PROCESS, 0);
    vt_rec_config c = {12 * 1024 * MiB, 3, 32, 10, 0};
    pl(&c, sizeof c), pl_str("rtx4070"), w_rec(w, VT_REC_CONFIG, 0);
    vt_rec_device d = {0, 8, 9, 0, 24 * 1024 * MiB, {1, 2, 3}};
    pl(&d, sizeof d), pl_str("Fake GPU"), w_rec(w, VT_REC_DEVICE, 0);
    vt_rec_thread t = {1, 78, VT_ROLE_AUTOGRAD, 0};
    pl(&t, sizeof t), pl_str("pt_autograd_0"), w_rec(w, VT_REC_THREAD, 0);
    vt_rec_pyinfo py = {3, 11, 7, 1};
    pl(&py, sizeof py), w_rec(w, VT_REC_PYINFO, 0);
    vt_rec_module m = {1, 0, 0x7f0000000000ull};
    pl(&m, sizeof m), pl_str("/lib/libtorch_cuda.so"), w_rec(w, VT_REC_MODULE, 0);
    vt_rec_symbol s = {0x7f0000001234ull, 0x1234, 1, 0x34};
    pl(&s, sizeof s), pl_str("_ZN3c104cuda6mallocEm"), w_rec(w, VT_REC_SYMBOL, 0);
    /* 3.11 table: entry 1 (form 13, 2 code units, delta 0), entry 2 (form 13, 1 unit, +3) */
    static const unsigned char lt[] = {0x80 | (13 << 3) | 1, 0x00, 0x80 | (13 << 3) | 0, 0x06};
    vt_rec_code cd = {5, 40};
    uint32_t ltn = sizeof lt;
    pl(&cd, sizeof cd), pl_str("model.py"), pl_str("Block.forward"), pl(&ltn, 4), pl(lt, ltn);
    w_rec(w, VT_REC_CODE, 0);
    vt_rec_stack st = {9, 2, 1};
    uint64_t fr[3] = {0x7f0000001234ull, 0x5555, VT_PYFRAME(5, 4)};
    pl(&st, sizeof st), pl(fr, sizeof fr), w_rec(w, VT_REC_STACK, 0);
    w_alloc(w, VT_API_cudaMallocAsync, VT_EVF_BACKWARD, 1000, 1, 0xa000, 4096, 9);
    vt_rec_alloc a = {VT_TT_MAKE(1100, 0), 0x7d00, 2 * MiB, 0, 3, 0};
    uint64_t aux = 0x9001;
    pl(&a, sizeof a), pl(&aux, 8), w_rec(w, VT_REC_ALLOC, VT_EVF_MAKE(VT_API_cuMemMap, 2));
    w_free(w, VT_API_cudaFreeAsync, 1200, 0xa000);
    vt_rec_free f = {VT_TT_MAKE(1300, 0), 0xdead};
    vt_rec_free_ext fx = {9, 4, -2};
    pl(&f, sizeof f), pl(&fx, sizeof fx);
    w_rec(w, VT_REC_FREE, (uint16_t)(VT_EVF_MAKE(VT_API_cuMemFree, 20) | VT_EVF_FAILED));
    vt_rec_meminfo mi = {VT_TT_MAKE(1400, 1), 100, 200, 0, VT_MEMINFO_SAMPLER};
    pl(&mi, sizeof mi), w_rec(w, VT_REC_MEMINFO, 0);
    vt_rec_oom o = {VT_TT_MAKE(1500, 0), 8 * MiB, 12 * 1024 * MiB, 11 * 1024 * MiB, 9, 2};
    pl(&o, sizeof o);
    w_rec(w, VT_REC_OOM,
          (uint16_t)(VT_EVF_MAKE(VT_API_cudaMalloc, 0) | VT_EVF_FAILED | VT_EVF_EMULATED));
    uint64_t unk[3] = {1, 2, 3};
    pl(unk, sizeof unk), w_rec(w, 300, 5);
    w_trailer(w, 4);
    *n = 17;
}

static void test_every_record_type(void **state)
{
    (void)state;
    wbuf w = {0};
    int n;
    build_all(&w, &n);
    const char *path = save(&w);
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    assert_int_equal(reader_status_of(r), READER_OK);
    assert_int_equal(reader_header(r)->start_mono_ns, 222);
    tables *t = tables_new();
    reader_record rec;
    int i = 0;
    while (reader_next(r, &rec)) {
        assert_int_equal(tables_add(t, &rec), 0);
        switch (i++) {
        case 0:
            assert_int_equal(rec.type, VT_REC_PROCESS);
            assert_int_equal(rec.offset, 32);
            assert_int_equal(rec.u.process.fixed.pid, 77);
            assert_memory_equal(rec.u.process.cwd.p, "/cwd", 4);
            assert_int_equal(rec.u.process.argv.n, 2);
            assert_int_equal(rec.u.process.env.n, 1);
            break;
        case 1:
            assert_int_equal(rec.u.config.fixed.card_bytes, 12 * 1024 * MiB);
            assert_int_equal(rec.u.config.card.len, 7);
            break;
        case 2:
            assert_int_equal(rec.u.device.fixed.total_bytes, 24 * 1024 * MiB);
            break;
        case 3:
            assert_int_equal(rec.u.thread.fixed.tid, 78);
            break;
        case 4:
            assert_int_equal(rec.u.pyinfo.minor, 11);
            break;
        case 5:
            assert_int_equal(rec.u.module.fixed.base, 0x7f0000000000ull);
            break;
        case 6:
            assert_int_equal(rec.u.symbol.fixed.sym_offset, 0x34);
            break;
        case 7:
            assert_int_equal(rec.u.code.first_line, 40);
            assert_int_equal(rec.u.code.linetable.len, 4);
            break;
        case 8:
            assert_int_equal(rec.u.stack.n_native, 2);
            assert_int_equal(reader_stack_frame(&rec.u.stack, 1), 0x5555);
            assert_int_equal(reader_stack_frame(&rec.u.stack, 2), VT_PYFRAME(5, 4));
            break;
        case 9:
            assert_int_equal(rec.type, VT_REC_ALLOC);
            assert_int_equal(rec.u.ev.api, VT_API_cudaMallocAsync);
            assert_int_equal(rec.u.ev.time_ns, 1000);
            assert_int_equal(rec.u.ev.thread, 1);
            assert_int_equal(rec.u.ev.size, 4096);
            assert_int_equal(rec.u.ev.stack_id, 9);
            assert_true(rec.u.ev.backward);
            assert_false(rec.u.ev.failed);
            assert_false(rec.u.ev.has_aux);
            break;
        case 10:
            assert_true(rec.u.ev.has_aux);
            assert_int_equal(rec.u.ev.aux, 0x9001);
            assert_int_equal(rec.u.ev.device, 2);
            assert_int_equal(rec.u.ev.stream, 3);
            assert_int_equal(reader_api_kind(rec.u.ev.api), VT_KIND_MAP);
            break;
        case 11:
            assert_int_equal(rec.type, VT_REC_FREE);
            assert_false(rec.u.ev.has_ext);
            assert_int_equal(rec.u.ev.addr, 0xa000);
            assert_int_equal(rec.u.ev.stack_id, 0);
            break;
        case 12:
            assert_true(rec.u.ev.has_ext);
            assert_true(rec.u.ev.failed);
            assert_int_equal(rec.u.ev.result, -2);
            assert_int_equal(rec.u.ev.stream, 4);
            assert_int_equal(rec.u.ev.device, VT_DEVICE_UNKNOWN);
            break;
        case 13:
            assert_int_equal(rec.u.meminfo.thread, 1);
            assert_int_equal(rec.u.meminfo.source, VT_MEMINFO_SAMPLER);
            break;
        case 14:
            assert_int_equal(rec.u.oom.requested, 8 * MiB);
            assert_true(rec.u.oom.emulated);
            assert_int_equal(rec.u.oom.stack_id, 9);
            break;
        case 15:
            assert_int_equal(rec.type, 300);
            assert_int_equal(rec.payload_len, 24);
            assert_string_equal(reader_type_name(rec.type), "unknown");
            break;
        case 16:
            assert_int_equal(rec.u.trailer.n_events, 4);
            break;
        }
    }
    assert_int_equal(i, n);
    assert_int_equal(reader_status_of(r), READER_OK);

    /* tables and resolver */
    assert_string_equal(tables_env(t, "RANK"), "3");
    assert_null(tables_env(t, "RAN"));
    assert_string_equal(tables_thread_get(t, 1)->name.s, "pt_autograd_0");
    assert_string_equal(tables_config_get(t)->card.s, "rtx4070");
    assert_string_equal(tables_process_get(t)->argv[1].s, "train.py");
    assert_int_equal(tables_n_devices(t), 1);
    size_t nf;
    const tables_frame *fr = tables_resolve_stack(t, 9, &nf);
    assert_int_equal(nf, 3);
    char buf[256];
    tables_frame_text(&fr[0], buf, sizeof buf);
    assert_string_equal(buf, "c10::cuda::malloc(unsigned long)+0x34 (libtorch_cuda.so)");
    tables_frame_text(&fr[1], buf, sizeof buf);
    assert_string_equal(buf, "0x5555");
    /* offset 4 is the second entry: line 40 + 3 */
    assert_int_equal(fr[2].line, 43);
    tables_frame_text(&fr[2], buf, sizeof buf);
    assert_string_equal(buf, "model.py:43 Block.forward");
    assert_true(tables_resolve_stack(t, 9, &nf) == fr); /* cached */
    assert_null(tables_resolve_stack(t, 10, &nf));
    assert_int_equal(nf, 0);

    /* rewind: the same records again */
    assert_int_equal(reader_rewind(r), 0);
    int again = 0;
    while (reader_next(r, &rec))
        again++;
    assert_int_equal(again, n);
    tables_free(t);
    reader_close(r);
    unlink(path);
    free(w.p);
}

/* ---- truncation ------------------------------------------------------------------------- */

/* reader_next_event gives every record reader_next gives, an event decoded into the caller's
 * place (nothing written there for other records), the status and offsets alike */
static void test_next_event(void **state)
{
    (void)state;
    wbuf w = {0};
    int n;
    build_all(&w, &n);
    char msg[256];
    const char *path = save(&w);
    reader *a = reader_open(path, msg, sizeof msg), *b = reader_open(path, msg, sizeof msg);
    assert_non_null(a);
    assert_non_null(b);
    reader_record ra, rb;
    int count = 0, events = 0;
    for (;;) {
        reader_event ev; /* both start alike: every field written, the padding left as is */
        memset(&ev, 0xa5, sizeof ev);
        memset(&ra, 0xa5, sizeof ra);
        bool ga = reader_next(a, &ra), gb = reader_next_event(b, &rb, &ev);
        assert_int_equal(ga, gb);
        if (!ga)
            break;
        count++;
        assert_int_equal(ra.type, rb.type);
        assert_int_equal(ra.offset, rb.offset);
        assert_int_equal(ra.size, rb.size);
        if (ra.type == VT_REC_ALLOC || ra.type == VT_REC_FREE) {
            assert_memory_equal(&ra.u.ev, &ev, sizeof ev);
            events++;
        } else {
            reader_event untouched;
            memset(&untouched, 0xa5, sizeof untouched);
            assert_memory_equal(&ev, &untouched, sizeof ev);
        }
    }
    assert_int_equal(count, n);
    assert_int_equal(events, 4);
    assert_int_equal(reader_status_of(a), reader_status_of(b));
    reader_close(a);
    reader_close(b);
    unlink(g_path);
    free(w.p);
}

static void test_truncated(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, 1, 0);
    for (int i = 0; i < 10; i++)
        w_alloc(&w, VT_API_cudaMalloc, 0, i, 0, 0x1000 * (i + 1), 512, 0);
    size_t body = w.n;
    reader_status st;
    uint64_t off;

    /* no trailer */
    assert_int_equal(read_all(save(&w), &st, &off), 10);
    assert_int_equal(st, READER_TRUNCATED);
    assert_int_equal(off, body);
    unlink(g_path);

    /* zero-filled tail (SIGKILL after pre-extension) */
    static const unsigned char z[4096];
    w_bytes(&w, z, sizeof z);
    assert_int_equal(read_all(save(&w), &st, &off), 10);
    assert_int_equal(st, READER_TRUNCATED);
    assert_int_equal(off, body);
    unlink(g_path);

    /* a record cut at every possible byte: all complete records kept */
    w.n = body;
    w_alloc(&w, VT_API_cudaMalloc, 0, 99, 0, 0x99000, 512, 0);
    for (size_t cut = body + 1; cut < w.n; cut++) {
        wbuf c = {w.p, cut, w.cap};
        assert_int_equal(read_all(save(&c), &st, &off), 10);
        assert_int_equal(st, READER_TRUNCATED);
        unlink(g_path);
    }
    /* with a trailer: ok, and nothing after it is read */
    w_trailer(&w, 11);
    w_bytes(&w, "garbage!", 8);
    assert_int_equal(read_all(save(&w), &st, &off), 12);
    assert_int_equal(st, READER_OK);
    unlink(g_path);
    free(w.p);
}

/* ---- malformed -------------------------------------------------------------------------- */

/* expect_malformed: w's file reads `good` records then stops malformed at byte `at`. */
static void expect_malformed(const wbuf *w, uint64_t good, uint64_t at)
{
    reader_status st;
    uint64_t off;
    assert_int_equal(read_all(save(w), &st, &off), good);
    assert_int_equal(st, READER_MALFORMED);
    assert_int_equal(off, at);
    unlink(g_path);
}

static void test_malformed(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, 1, 0);
    w_alloc(&w, VT_API_cudaMalloc, 0, 1, 0, 0x1000, 512, 0);
    size_t base = w.n;

    /* bad magic, other major, short header; a higher minor is fine */
    w.p[0] = 'X';
    expect_malformed(&w, 0, 0);
    w.p[0] = 'V';
    w.p[8] = 3; /* (2: the block layout, read) */
    expect_malformed(&w, 0, 8);
    w.p[8] = 1;
    w.p[10] = 7;
    reader_status st;
    assert_int_equal(read_all(save(&w), &st, NULL), 1);
    assert_int_equal(st, READER_TRUNCATED);
    unlink(g_path);
    wbuf shortw = {w.p, 20, w.cap};
    expect_malformed(&shortw, 0, 20);

    /* a longer header (a future minor) is skipped to header_size; a misaligned one is not */
    wbuf longer = {0};
    w_header(&longer, 1, 3);
    uint32_t hsz = 48;
    memcpy(longer.p + 12, &hsz, 4);
    w_bytes(&longer, "extra...extra...", 16);
    w_alloc(&longer, VT_API_cudaMalloc, 0, 1, 0, 0x1000, 512, 0);
    w_trailer(&longer, 1);
    assert_int_equal(read_all(save(&longer), &st, NULL), 2);
    assert_int_equal(st, READER_OK);
    unlink(g_path);
    hsz = 44;
    memcpy(longer.p + 12, &hsz, 4);
    expect_malformed(&longer, 0, 12);
    free(longer.p);

    struct {
        uint16_t type;
        uint32_t size;
    } bad[] = {
        {VT_REC_ALLOC, 0},           {VT_REC_ALLOC, 4},         {VT_REC_ALLOC, 44},
        {VT_REC_ALLOC, 0xfffffff8u}, {VT_REC_ALLOC, 32},        {VT_REC_ALLOC, 1024},
        {VT_REC_FREE, 16},           {VT_REC_TRAILER, 1 << 20}, {999, (16u << 20) + 8},
        {VT_REC_CODE, 16},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        w.n = base;
        vt_rec_header h = {bad[i].type, 0, bad[i].size};
        w_bytes(&w, &h, 8);
        static const unsigned char z[64];
        w_bytes(&w, z, sizeof z);
        w_alloc(&w, VT_API_cudaMalloc, 0, 1, 0, 0x2000, 512, 0);
        expect_malformed(&w, 1, base);
    }

    /* type 0 with a size is not a zero tail */
    w.n = base;
    vt_rec_header h0 = {0, 0, 40};
    w_bytes(&w, &h0, 8);
    expect_malformed(&w, 1, base);

    /* a string running past its record */
    w.n = base;
    vt_rec_thread t = {1, 2, 0, 0};
    uint32_t len = 9;
    pl(&t, sizeof t), pl(&len, 4), pl("abcd", 4);
    w_rec(&w, VT_REC_THREAD, 0);
    w_trailer(&w, 1);
    expect_malformed(&w, 1, base);

    /* a process record whose argc claims more strings than fit */
    w.n = base;
    vt_rec_process p = {1, 1, 1000000, 0, 0};
    pl(&p, sizeof p), pl_str("a"), pl_str("b"), pl_str("c"), pl_str("x");
    w_rec(&w, VT_REC_PROCESS, 0);
    expect_malformed(&w, 1, base);

    /* stack frames past the record, and a stack size that does not match its frames */
    w.n = base;
    vt_rec_stack s = {1, 5, 0};
    uint64_t fr[2] = {1, 2};
    pl(&s, sizeof s), pl(fr, sizeof fr), w_rec(&w, VT_REC_STACK, 0);
    expect_malformed(&w, 1, base);
    w.n = base;
    s.n_native = 1;
    pl(&s, sizeof s), pl(fr, sizeof fr), w_rec(&w, VT_REC_STACK, 0);
    expect_malformed(&w, 1, base);

    /* a size past EOF in a record whose contents contradict it: malformed, not truncated */
    w.n = base;
    vt_rec_header hs = {VT_REC_STACK, 0, 1u << 20};
    s.n_native = 1;
    w_bytes(&w, &hs, 8), w_bytes(&w, &s, 8), w_bytes(&w, fr, 8);
    for (int i = 0; i < 20; i++)
        w_alloc(&w, VT_API_cudaMalloc, 0, 1, 0, 0x2000, 512, 0);
    expect_malformed(&w, 1, base);
    free(w.p);
}

/* ---- windows, big records, corruption loop ------------------------------------------------ */

static void test_many_records_and_big_record(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, 1, 0);
    uint64_t want = 0;
    const int n = 150000; /* 6 MB: several read windows, records straddling their edges */
    for (int i = 0; i < n; i++) {
        if (i % 3 == 2) {
            w_free(&w, VT_API_cudaFree, i, i);
        } else {
            w_alloc(&w, VT_API_cudaMalloc, 0, i, 0, i, (uint64_t)i * 8, 0);
            want += (uint64_t)i * 8;
        }
        if (i == n / 2) { /* a 3 MiB CODE record, larger than the read window */
            static unsigned char big[3 << 20];
            vt_rec_code c = {1, 1};
            uint32_t bl = sizeof big;
            wbuf rec = {0};
            vt_rec_header h = {VT_REC_CODE, 0, 0};
            uint32_t e = 0;
            h.size = (uint32_t)((8 + 8 + 4 + 4 + 4 + bl + 7) & ~7u);
            w_bytes(&rec, &h, 8), w_bytes(&rec, &c, 8), w_bytes(&rec, &e, 4);
            w_bytes(&rec, &e, 4), w_bytes(&rec, &bl, 4), w_bytes(&rec, big, bl);
            while (rec.n % 8)
                w_bytes(&rec, "", 1);
            w_bytes(&w, rec.p, rec.n);
            free(rec.p);
        }
    }
    w_trailer(&w, (uint64_t)n);
    char msg[256];
    reader *r = reader_open(save(&w), msg, sizeof msg);
    reader_record rec;
    uint64_t got = 0, count = 0, code_len = 0;
    while (reader_next(r, &rec)) {
        count++;
        if (rec.type == VT_REC_ALLOC)
            got += rec.u.ev.size;
        if (rec.type == VT_REC_CODE)
            code_len = rec.u.code.linetable.len;
    }
    assert_int_equal(reader_status_of(r), READER_OK);
    assert_int_equal(count, (uint64_t)n + 2);
    assert_int_equal(got, want);
    assert_int_equal(code_len, 3u << 20);
    assert_int_equal(reader_position(r), w.n);
    reader_close(r);
    unlink(g_path);
    free(w.p);
}

static void test_random_corruption(void **state)
{
    (void)state;
    wbuf w = {0};
    int nrec;
    build_all(&w, &nrec);
    size_t keep = w.n;
    srand(12345);
    char msg[256];
    int seen[4] = {0};
    for (int iter = 0; iter < 3000; iter++) {
        wbuf m = {malloc(keep), keep, keep};
        memcpy(m.p, w.p, keep);
        int flips = 1 + rand() % 6;
        for (int k = 0; k < flips; k++) {
            size_t at = 8 + (size_t)rand() % (keep - 8); /* keep the magic mostly */
            m.p[at] = (unsigned char)(rand() % 4 == 0 ? 0xff : rand());
        }
        if (rand() % 4 == 0)
            m.n = 32 + (size_t)rand() % (keep - 32);
        reader *r = reader_open(save(&m), msg, sizeof msg);
        assert_non_null(r);
        tables *t = tables_new();
        reader_record rec;
        int n = 0;
        while (reader_next(r, &rec)) {
            n++;
            assert_true(rec.size >= 8 && rec.size % 8 == 0);
            assert_int_equal(tables_add(t, &rec), 0);
            if (rec.type == VT_REC_ALLOC || rec.type == VT_REC_FREE) {
                size_t nf;
                const tables_frame *fr = tables_resolve_stack(t, rec.u.ev.stack_id, &nf);
                char buf[128];
                for (size_t i = 0; fr && i < nf; i++)
                    tables_frame_text(&fr[i], buf, sizeof buf);
            }
        }
        reader_status st = reader_status_of(r);
        assert_true(st == READER_OK || st == READER_TRUNCATED || st == READER_MALFORMED);
        assert_true(n <= nrec + 1);
        seen[st]++;
        tables_free(t);
        reader_close(r);
        unlink(g_path);
        free(m.p);
    }
    /* the loop really produced all three outcomes */
    assert_true(seen[READER_OK] > 0 && seen[READER_TRUNCATED] > 0 && seen[READER_MALFORMED] > 0);
    free(w.p);
}

static void test_open_errors_and_api_names(void **state)
{
    (void)state;
    char msg[256];
    assert_null(reader_open("/nonexistent/x.vt", msg, sizeof msg));
    assert_non_null(strstr(msg, "No such file"));
    assert_null(reader_open("/tmp", msg, sizeof msg));
    assert_string_equal(reader_api_name(VT_API_cuMemCreate), "cuMemCreate");
    assert_null(reader_api_name(200));
    assert_int_equal(reader_api_space(VT_API_cuMemCreate), VT_SPACE_VMM_HANDLE);
    assert_int_equal(reader_api_layer(VT_API_cudaMalloc), VT_LAYER_RUNTIME);
    assert_string_equal(reader_space_name(VT_SPACE_HOST), "HOST");
    assert_string_equal(reader_kind_name(VT_KIND_UNCONTEXT), "UNCONTEXT");
    assert_string_equal(reader_type_name(VT_REC_MEMINFO), "meminfo");
    char *d;
    assert_int_equal(demangle("_ZN2at6native3addERKNS_6TensorE", 31, &d), 0);
    assert_non_null(d);
    assert_string_equal(d, "at::native::add(at::Tensor const&)");
    free(d);
    assert_int_equal(demangle("cudaMalloc", 10, &d), 0);
    assert_null(d);
    assert_int_equal(demangle("_Zgarbage", 9, &d), 0);
    assert_null(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_record_type),
        cmocka_unit_test(test_next_event),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_many_records_and_big_record),
        cmocka_unit_test(test_random_corruption),
        cmocka_unit_test(test_open_errors_and_api_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
