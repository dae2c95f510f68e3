/* test_reader_blocks.c — the block layout of a plain trace (format 2.0, trace_blocks.h) read by
 * the reader (analyzer/trace/reader_blocks.c): each window's definitions first, then its timed
 * records by time whatever block holds them; a window never mixed with the next; a killed file
 * read up to its last stored record; malformed blocks refused at their file byte; the same from
 * a stream; and a file still being written followed, into blocks read before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../analyzer/trace/reader.h"
#include "../../analyzer/trace/reader_blocks_merge.h"

#include "trace_enc.h"

/* w_block: a BLOCK of `size` bytes for (window, writer) begins; its records follow (w_*), then
 * w_block_end pads it with zeros to its end. The block's offset. */
static size_t w_block(wbuf *w, uint32_t window, uint32_t writer, uint32_t size)
{
    size_t off = w->n;
    vt_rec_header h = {VT_REC_BLOCK, 0, size};
    vt_rec_block b = {window, writer};
    w_bytes(w, &h, 8);
    w_bytes(w, &b, 8);
    return off;
}

static void w_block_end(wbuf *w, size_t off, uint32_t size)
{
    assert_true(w->n <= off + size);
    static const unsigned char z[4096];
    w_bytes(w, z, off + size - w->n);
}

static void w_thread(wbuf *w, uint32_t idx)
{
    vt_rec_thread t = {idx, 100 + idx, 0, 0};
    const char *name[1] = {"t"};
    w_rec_strs(w, VT_REC_THREAD, 0, &t, sizeof t, name, 1);
}

/* seen: what the reader handed out, "type@time" for events ("T" a THREAD, "X" the trailer) */
static char g_seen[4096];

static reader_status read_seq(reader *r)
{
    reader_record rec;
    g_seen[0] = 0;
    while (reader_next(r, &rec)) {
        char one[64];
        if (rec.type == VT_REC_ALLOC || rec.type == VT_REC_FREE)
            snprintf(one, sizeof one, "%s%llu ", rec.type == VT_REC_ALLOC ? "a" : "f",
                     (unsigned long long)rec.u.ev.time_ns);
        else
            snprintf(one, sizeof one, "%s ",
                     rec.type == VT_REC_THREAD    ? "T"
                     : rec.type == VT_REC_TRAILER ? "X"
                                                  : "?");
        strncat(g_seen, one, sizeof g_seen - strlen(g_seen) - 1);
    }
    return reader_status_of(r);
}

static reader_status read_file(const char *path)
{
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    reader_status st = read_seq(r);
    reader_close(r);
    return st;
}

static size_t g_at30; /* build: the offset of writer 0's ALLOC at t=30 */

/* two writers' blocks interleaved in window 1, their times crossing; window 2 after it */
static void build(wbuf *w, int trailer)
{
    w_header(w, VT_BLOCKS_MAJOR, VT_BLOCKS_MINOR);
    size_t b0 = w_block(w, 1, 0, 256);
    w_thread(w, 0);
    w_alloc(w, VT_API_cudaMalloc, 0, 10, 0, 0x1000, 512, 0);
    g_at30 = w->n;
    w_alloc(w, VT_API_cudaMalloc, 0, 30, 0, 0x3000, 512, 0);
    w_block_end(w, b0, 256);
    size_t b1 = w_block(w, 1, 1, 128);
    w_alloc(w, VT_API_cudaMalloc, 0, 20, 1, 0x2000, 512, 0);
    w_free(w, VT_API_cudaFree, 40, 0x1000);
    w_thread(w, 1); /* (a definition after events: handed out before them) */
    w_block_end(w, b1, 128);
    size_t b2 = w_block(w, 1, 0, 64); /* writer 0's next block: its first is whole */
    w_free(w, VT_API_cudaFree, 50, 0x2000);
    w_block_end(w, b2, 64);
    size_t b3 = w_block(w, 2, 1, 64); /* window 2: after every record of window 1 */
    w_alloc(w, VT_API_cudaMalloc, 0, 45, 1, 0x4000, 512, 0);
    w_block_end(w, b3, 64);
    if (trailer)
        w_trailer(w, 6);
}

static void test_time_order(void **state)
{
    (void)state;
    wbuf w = {0};
    build(&w, 1);
    assert_int_equal(read_file(save(&w)), READER_OK);
    assert_string_equal(g_seen, "T T a10 a20 a30 f40 f50 a45 X ");
    /* a window of one writer's blocks: handed out as they lie (in the order it made them) */
    wbuf v = {0};
    w_header(&v, VT_BLOCKS_MAJOR, VT_BLOCKS_MINOR);
    size_t b = w_block(&v, 1, 0, 128);
    w_alloc(&v, VT_API_cudaMalloc, 0, 5, 0, 0x1000, 512, 0);
    w_thread(&v, 0);
    w_free(&v, VT_API_cudaFree, 6, 0x1000);
    w_block_end(&v, b, 128);
    w_trailer(&v, 2);
    assert_int_equal(read_file(save(&v)), READER_OK);
    assert_string_equal(g_seen, "a5 T f6 X ");
    free(w.p);
    free(v.p);
}

static void test_killed(void **state)
{
    (void)state;
    wbuf w = {0};
    build(&w, 0);
    static const unsigned char z[4096];
    w_bytes(&w, z, sizeof z); /* a killed process's zero tail */
    assert_int_equal(read_file(save(&w)), READER_TRUNCATED);
    assert_string_equal(g_seen, "T T a10 a20 a30 f40 f50 a45 ");
    /* a record in flight (its header zero) ends its block's records; the others are read */
    wbuf k = {0};
    build(&k, 1);
    memset(k.p + g_at30, 0, 8); /* writer 0's second ALLOC (t=30) not stored */
    assert_int_equal(read_file(save(&k)), READER_OK);
    assert_string_equal(g_seen, "T T a10 a20 f40 f50 a45 X ");
    free(w.p);
    free(k.p);
}

static void expect_malformed(wbuf *w, uint64_t at)
{
    char msg[256];
    reader *r = reader_open(save(w), msg, sizeof msg);
    assert_non_null(r);
    assert_int_equal(read_seq(r), READER_MALFORMED);
    assert_int_equal(reader_error_offset(r), at);
    reader_close(r);
}

static void test_malformed(void **state)
{
    (void)state;
    /* a record running past its block's end */
    wbuf a = {0};
    w_header(&a, VT_BLOCKS_MAJOR, 0);
    size_t b = w_block(&a, 1, 0, 48); /* 16 + 32: an ALLOC (40) does not fit */
    w_alloc(&a, VT_API_cudaMalloc, 0, 1, 0, 0x1000, 512, 0);
    a.n = b + 48;
    w_trailer(&a, 1);
    expect_malformed(&a, 48);
    /* a BLOCK inside a block */
    wbuf c = {0};
    w_header(&c, VT_BLOCKS_MAJOR, 0);
    size_t o = w_block(&c, 1, 0, 64);
    w_block(&c, 1, 0, 32);
    w_block_end(&c, o, 64);
    w_trailer(&c, 0);
    expect_malformed(&c, 48);
    /* a BLOCK too small for its own header, or past the largest */
    wbuf d = {0};
    w_header(&d, VT_BLOCKS_MAJOR, 0);
    vt_rec_header h = {VT_REC_BLOCK, 0, 8};
    w_bytes(&d, &h, 8);
    w_trailer(&d, 0);
    expect_malformed(&d, 32);
    h.size = VT_BLOCK_MAX_SIZE + 8;
    memcpy(d.p + 32, &h, 8);
    expect_malformed(&d, 32);
    free(a.p);
    free(c.p);
    free(d.p);
}

static void test_stream(void **state)
{
    (void)state;
    wbuf w = {0};
    build(&w, 1);
    FILE *f = fopen(save(&w), "rb");
    assert_non_null(f);
    unsigned char head[40]; /* what a caller read to tell what the file is */
    assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
    char msg[256];
    reader *r = reader_open_stream(f, "stream", head, sizeof head, msg, sizeof msg);
    assert_non_null(r);
    assert_int_equal(read_seq(r), READER_OK);
    assert_string_equal(g_seen, "T T a10 a20 a30 f40 f50 a45 X ");
    assert_int_equal(reader_follow(r), -1); /* (a stream is not followed) */
    reader_close(r);
    fclose(f);
    free(w.p);
}

/* pwrite_at: bytes into the file at off */
static void put_at(const char *path, size_t off, const void *p, size_t n)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void test_follow(void **state)
{
    (void)state;
    /* being written: writer 0's block holds one record, writer 1's one, the rest zeros */
    wbuf w = {0};
    w_header(&w, VT_BLOCKS_MAJOR, 0);
    size_t b0 = w_block(&w, 1, 0, 128);
    w_alloc(&w, VT_API_cudaMalloc, 0, 10, 0, 0x1000, 512, 0);
    size_t more0 = w.n;
    w_block_end(&w, b0, 128);
    size_t b1 = w_block(&w, 1, 1, 128);
    w_alloc(&w, VT_API_cudaMalloc, 0, 20, 1, 0x2000, 512, 0);
    w_block_end(&w, b1, 128);
    size_t next = w.n;
    static const unsigned char z[4096];
    w_bytes(&w, z, 1024);
    const char *path = save(&w);
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    assert_int_equal(read_seq(r), READER_TRUNCATED);
    assert_string_equal(g_seen, "a10 a20 ");
    /* writer 0 stores a record into its block; window 2 begins with writer 1's block */
    wbuf m = {0};
    w_free(&m, VT_API_cudaFree, 25, 0x1000);
    put_at(path, more0, m.p, m.n);
    wbuf n = {0};
    size_t b2 = w_block(&n, 2, 1, 64);
    w_free(&n, VT_API_cudaFree, 30, 0x2000);
    w_block_end(&n, b2, 64);
    put_at(path, next, n.p, n.n);
    assert_int_equal(reader_follow(r), 0);
    assert_int_equal(read_seq(r), READER_TRUNCATED);
    assert_string_equal(g_seen, "f25 f30 ");
    /* writer 0, still in window 1's block (its writer has no later block), stores one more;
     * then its next block and the trailer */
    wbuf m2 = {0};
    w_alloc(&m2, VT_API_cudaMalloc, 0, 35, 0, 0x5000, 512, 0);
    put_at(path, more0 + m.n, m2.p, m2.n);
    wbuf t = {0};
    size_t b3 = w_block(&t, 2, 0, 64);
    w_free(&t, VT_API_cudaFree, 40, 0x5000);
    w_block_end(&t, b3, 64);
    w_trailer(&t, 5);
    put_at(path, next + n.n, t.p, t.n);
    assert_int_equal(reader_follow(r), 0);
    assert_int_equal(read_seq(r), READER_OK);
    assert_string_equal(g_seen, "a35 f40 X ");
    reader_close(r);
    free(w.p), free(m.p), free(n.p), free(m2.p), free(t.p);
}

/* many_blocks: n blocks of writer `writer` in `window`, one ALLOC each, at times t, t+1, ... */
static void many_blocks(wbuf *w, int n, uint32_t window, uint32_t writer, uint64_t t)
{
    for (int i = 0; i < n; i++) {
        size_t b = w_block(w, window, writer, 4096);
        w_alloc(w, VT_API_cudaMalloc, 0, t + (uint64_t)i, writer, 0x100000 + i * 0x1000, 512, 0);
        w_block_end(w, b, 4096);
    }
}

/* following, two open blocks of earlier windows megabytes apart: each looked at again (their
 * bytes had been kept as offsets into one cache that the second read started over: SIGSEGV,
 * found by a review) */
static void test_follow_far_apart(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, VT_BLOCKS_MAJOR, 0);
    size_t b0 = w_block(&w, 1, 0, 4096); /* writer 0, window 1: stays open */
    w_alloc(&w, VT_API_cudaMalloc, 0, 10, 0, 0x1000, 512, 0);
    size_t more0 = w.n;
    w_block_end(&w, b0, 4096);
    many_blocks(&w, 700, 1, 2, 11);      /* writer 2: 2.8 MB of window 1 */
    size_t b1 = w_block(&w, 2, 1, 4096); /* writer 1, window 2: stays open */
    w_alloc(&w, VT_API_cudaMalloc, 0, 1000, 1, 0x2000, 512, 0);
    size_t more1 = w.n;
    w_block_end(&w, b1, 4096);
    many_blocks(&w, 1, 3, 3, 2000); /* window 3 */
    static const unsigned char z[4096];
    w_bytes(&w, z, 4096);
    const char *path = save(&w);
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    assert_int_equal(read_seq(r), READER_TRUNCATED);
    wbuf m = {0}, n = {0};
    w_free(&m, VT_API_cudaFree, 3001, 0x1000);
    put_at(path, more0, m.p, m.n);
    w_free(&n, VT_API_cudaFree, 3000, 0x2000);
    put_at(path, more1, n.p, n.n);
    assert_int_equal(reader_follow(r), 0);
    assert_int_equal(read_seq(r), READER_TRUNCATED);
    assert_string_equal(g_seen, "f3000 f3001 ");
    reader_close(r);
    free(w.p), free(m.p), free(n.p);
}

/* a writer stores into a block between two reads of one pass over a live file, then takes its
 * next block, which the second read sees: the block is read anew before it is taken as whole
 * (its stale copy had ended where that record went: the record was never handed out) */
static int g_wfd = -1, g_npread;
static wbuf g_store, g_later;
static size_t g_store_off, g_later_off;

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (g_wfd >= 0 && n > 8 && ++g_npread == 2) { /* the writer goes on meanwhile (between
                                                   * the first two reads of bytes) */
        assert_int_equal(syscall(SYS_pwrite64, g_wfd, g_store.p, g_store.n, (off_t)g_store_off),
                         (long)g_store.n);
        assert_int_equal(syscall(SYS_pwrite64, g_wfd, g_later.p, g_later.n, (off_t)g_later_off),
                         (long)g_later.n);
    }
    return syscall(SYS_pread64, fd, buf, n, off);
}

static void test_stale_in_one_pass(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, VT_BLOCKS_MAJOR, 0);
    size_t a = w_block(&w, 1, 0, 4096); /* writer 0's block: one record so far */
    w_alloc(&w, VT_API_cudaMalloc, 0, 10, 0, 0x1000, 512, 0);
    g_store_off = w.n;
    w_block_end(&w, a, 4096);
    many_blocks(&w, 127, 1, 1, 11); /* writer 1: past the first read's 256 KiB */
    g_later_off = w.n;
    static const unsigned char z[4096];
    for (int i = 0; i < 4; i++)
        w_bytes(&w, z, 4096);
    w_free(&g_store, VT_API_cudaFree, 500, 0x1000); /* then writer 0's record, its next block */
    size_t b = w_block(&g_later, 1, 0, 4096);
    w_alloc(&g_later, VT_API_cudaMalloc, 0, 600, 0, 0x7000, 512, 0);
    w_block_end(&g_later, b, 4096);
    many_blocks(&g_later, 1, 2, 1, 700); /* and window 2 */
    const char *path = save(&w);
    g_wfd = open(path, O_RDWR);
    assert_true(g_wfd >= 0);
    g_npread = 0;
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    read_seq(r);
    assert_true(g_npread >= 2);
    close(g_wfd);
    g_wfd = -1;
    assert_non_null(strstr(g_seen, "f500 "));
    reader_close(r);
    free(w.p), free(g_store.p), free(g_later.p);
}

/* watched live (reader_watching), a file's records of its last 100 ms wait for the next look;
 * read once (a `report`, `run`'s summary), all of it */
static void test_watching_holds_the_last_moments(void **state)
{
    (void)state;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    wbuf w = {0};
    w_header(&w, VT_BLOCKS_MAJOR, 0);
    vt_file_header h;
    memcpy(&h, w.p, sizeof h);
    h.start_mono_ns = now - 10000000000ull; /* began 10 s ago, on this machine */
    memcpy(w.p, &h, sizeof h);
    size_t b = w_block(&w, 1, 0, 128);
    w_alloc(&w, VT_API_cudaMalloc, 0, 5000000000ull, 0, 0x1000, 512, 0); /* 5 s ago */
    w_free(&w, VT_API_cudaFree, 9990000000ull, 0x1000);                  /* 10 ms ago */
    w_block_end(&w, b, 128);
    const char *path = save(&w); /* (no trailer: live) */
    assert_int_equal(read_file(path), READER_TRUNCATED);
    assert_string_equal(g_seen, "a5000000000 f9990000000 ");
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    reader_watching(r, 1);
    assert_int_equal(read_seq(r), READER_TRUNCATED);
    assert_string_equal(g_seen, "a5000000000 ");
    /* its writer gone (watch's killed_end): the record held back is handed out at the next look */
    reader_watching(r, 0);
    assert_int_equal(reader_follow(r), 0);
    assert_int_equal(read_seq(r), READER_TRUNCATED);
    assert_string_equal(g_seen, "f9990000000 ");
    reader_close(r);
    free(w.p);
}

/* by_time_then_file: the order blocks_merge promises (time, equal times in file order) */
static int by_time_then_file(const void *a, const void *c)
{
    const item *x = a, *y = c;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* blocks_merge against a sort of the same items: writers' runs of 1 to 300 records (a block's
 * worth, a thread descheduled), times from a narrow range (many equal across writers), 1 to 8
 * writers merged; 9 writers, a shared block's record, or a writer out of order sorted instead:
 * always the sort's order, whatever the way */
static void test_merge_is_the_sorted_order(void **st)
{
    (void)st;
    srand(7);
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)(rand() % 3000), cap = n, captmp = 0;
        unsigned writers = 1 + (unsigned)(rand() % (round % 5 == 4 ? 9 : 8));
        item *t = malloc(n * sizeof *t), *want = malloc(n * sizeof *want), *tmp = NULL;
        assert_non_null(t), assert_non_null(want);
        uint64_t now[9] = {0}, off = 4096;
        unsigned w = 0;
        for (size_t i = 0; i < n; i++) {
            if (rand() % 100 == 0 || i == 0)
                w = (unsigned)rand() % writers; /* (a run of its records: a block) */
            now[w] += (uint64_t)(rand() % 3);   /* (equal times across writers) */
            t[i] = (item){.time = now[w], .off = off, .size = 32, .writer = 1 + w, .timed = 1};
            off += 32;
        }
        if (round % 7 == 6)
            t[rand() % (int)n].writer = VT_BLOCK_SHARED;
        if (round % 11 == 10 && n > 1)
            t[n - 1].time = 0, t[n - 1].writer = t[0].writer; /* (out of its writer's order) */
        memcpy(want, t, n * sizeof *t);
        qsort(want, n, sizeof *want, by_time_then_file);
        assert_int_equal(blocks_merge(&t, &cap, n, &tmp, &captmp), 0);
        /* (the capacities go with their buffers: the reader grows them by these) */
        assert_true(cap >= n && malloc_usable_size(t) >= cap * sizeof *t);
        assert_true(!tmp || malloc_usable_size(tmp) >= captmp * sizeof *tmp);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(t[i].off, want[i].off);
            assert_int_equal(t[i].time, want[i].time);
        }
        free(t), free(want), free(tmp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_order),
        cmocka_unit_test(test_killed),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_follow),
        cmocka_unit_test(test_follow_far_apart),
        cmocka_unit_test(test_stale_in_one_pass),
        cmocka_unit_test(test_watching_holds_the_last_moments),
        cmocka_unit_test(test_merge_is_the_sorted_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
