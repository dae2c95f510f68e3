/* reader_blocks.c — a plain trace of format 2.0 (trace_blocks.h) read as the record stream it
 * stands for (reader_blocks.h). The top level is walked in file order: a BLOCK joins its window's
 * group (the blocks of one window lie together); a group is handed out when the next window's
 * first block comes, a record outside blocks (the trailer) comes, or the file ends here: its
 * blocks' definitions first, in file order, then their timed records (ALLOC, FREE, OOM,
 * MEMINFO) in the order of their times, equal times in file order. Each block keeps where its
 * records taken so far end, so a trace still being written (blocks_follow) is looked at again
 * from there, blocks of earlier windows too until their writer has a later block. Memory: a
 * group's bytes three times (read, copied, ordered), GROUP_MAX at most, 40 bytes a block and 16 a
 * writer.
 * Trusts no length: a block past VT_BLOCK_MAX_SIZE, a record running past its block or a BLOCK
 * inside one is malformed. */
#include "reader_blocks.h"
#include "reader_blocks_merge.h"
#include "reader_blocks_writers.h"
#include "mem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GROUP_MAX (64u << 20) /* a window's blocks handed out together: more, in parts */
#define READ_AHEAD (256u << 10)
#define OLD_MAX 4096u /* blocks of earlier windows followed until their writer moves on */
/* a live file's records of the last LIVE_HOLD_NS wait for the next look: a thread that reserved
 * a block then has its block's header stored by now, so no record older than what is handed
 * out can still be hidden behind it (the window's blocks are read up to the first header not
 * stored: a view cut there, across threads, had made `watch` see a step end that was none) */
#define LIVE_HOLD_NS 100000000ull

typedef struct blk {
    uint64_t off, end, cur; /* the BLOCK's file offset, its end, its next record not taken */
    uint32_t window, writer;
    /* its number among the file's blocks: whole (its writer has a later block: looked at once
     * more, then dropped) when its writer's latest is another (is_whole) */
    uint64_t seq;
} blk;
_Static_assert(sizeof(blk) == 40, "40 bytes a block");

typedef struct cache {
    uint8_t *p; /* file bytes [off, off + len) */
    size_t len, cap;
    uint64_t off;
} cache;

struct blocks {
    int fd;
    FILE *fp;
    uint8_t *head; /* a stream's bytes read before (a copy) */
    size_t nhead, head_pos;
    cache in;      /* the top level and the current window's blocks: forward only */
    cache side;    /* earlier windows' blocks, looked at again while following (a file only) */
    uint64_t scan; /* the next top-level item's file offset */
    blk *g;        /* the current window's blocks */
    size_t ng, capg;
    uint32_t window;
    blk *old; /* earlier windows' blocks whose writer may still store into them */
    size_t nold, capold;
    size_t old_whole; /* of them, at most this many whole (a compaction's due: drop_whole) */
    writers wl;       /* each writer's latest block (a block's writer moving on is one lookup: a
                       * scan of the window's blocks had made 160,000 empty ones 38 s) */
    uint64_t nblk;    /* blocks seen: the next one's seq */
    item *it, *tmp;   /* a flush's records in file order; the merge's */
    size_t nit, capit, captmp;
    uint8_t *rec; /* the bytes of a flush's records from `side` */
    size_t rec_len, rec_cap;
    size_t old_next; /* old[] full: the entry the next one replaces */
    int live;        /* a file being written (no trailer at its end, or followed): a flush reads its
                      * blocks anew (a writer may have stored into bytes read before) */
    uint64_t newest; /* the latest time of a record taken */
    int watching;    /* read while its writer runs (watch): the last LIVE_HOLD_NS wait */
    uint8_t *out;    /* a flush's records in the order handed out */
    size_t out_len, out_pos, out_cap;
    int following, ended, header_done, bad;
    vt_file_header hdr;
    char err[200];
    uint64_t err_off;
};

static int fail(blocks *b, uint64_t off, const char *why)
{
    if (!b->bad) {
        b->bad = 1;
        b->err_off = off;
        snprintf(b->err, sizeof b->err, "%s", why);
    }
    return -1;
}

/* raw: up to n bytes of the file at off (a file: pread; a stream: the next bytes, off being where
 * it stands). The count, 0 at the end, -1 on a read error. */
static ssize_t raw(blocks *b, void *buf, size_t n, uint64_t off)
{
    if (b->fd >= 0) {
        ssize_t k;
        do
            k = pread(b->fd, buf, n, (off_t)off);
        while (k < 0 && errno == EINTR);
        return k;
    }
    size_t got = 0;
    if (b->head_pos < b->nhead) {
        got = b->nhead - b->head_pos < n ? b->nhead - b->head_pos : n;
        memcpy(buf, b->head + b->head_pos, got);
        b->head_pos += got;
    }
    if (got < n && b->fp) {
        got += fread((char *)buf + got, 1, n - got, b->fp);
        if (ferror(b->fp))
            return -1;
    }
    return (ssize_t)got;
}

/* fetch: file bytes [off, off + need) in c (moved forward, or on a file anywhere); *have: how
 * many of them the file has. NULL on a read error or out of memory (b->bad). */
static const uint8_t *fetch(blocks *b, cache *c, uint64_t off, size_t need, size_t *have)
{
    *have = 0;
    /* (forward, the cache grows: an item of the flush under way may point into it; a gap past
     * any group: read from there) */
    if (off < c->off || (b->fd >= 0 && off > c->off + c->len + 2 * (uint64_t)GROUP_MAX)) {
        if (b->fd < 0) {
            fail(b, off, "a stream read backwards");
            return NULL;
        }
        c->off = off; /* (a file: read again from there) */
        c->len = 0;
    }
    while (off + need > c->off + c->len) {
        size_t want = (size_t)(off + need - c->off) + READ_AHEAD;
        if (mem_grow((void **)&c->p, &c->cap, want, 1, 64, 0) < 0) {
            fail(b, off, "out of memory");
            return NULL;
        }
        /* (what is needed and READ_AHEAD more, not all the room there is: discard moves the
         * bytes read past a group to the front, and the room grows with the largest group) */
        ssize_t k = raw(b, c->p + c->len, want - c->len, c->off + c->len);
        if (k < 0) {
            fail(b, c->off + c->len, strerror(errno ? errno : EIO));
            return NULL;
        }
        if (k == 0)
            break;
        c->len += (size_t)k;
    }
    uint64_t end = c->off + c->len;
    *have = off >= end ? 0 : (size_t)(end - off < need ? end - off : need);
    return c->p + (off - c->off);
}

/* discard: c keeps bytes from off on */
static void discard(cache *c, uint64_t off)
{
    if (off <= c->off)
        return;
    uint64_t end = c->off + c->len;
    size_t drop = (size_t)((off < end ? off : end) - c->off);
    memmove(c->p, c->p + drop, c->len - drop);
    c->len -= drop;
    c->off += drop;
}

static int timed_type(unsigned t)
{
    return t == VT_REC_ALLOC || t == VT_REC_FREE || t == VT_REC_OOM || t == VT_REC_MEMINFO;
}

/* take: the records stored in k since it was last looked at, as items (their bytes in c). 0, or
 * -1 (malformed, read error). */
static int take(blocks *b, cache *c, blk *k, int side, int items, uint64_t upto)
{
    if (k->cur + 8 > k->end)
        return 0;
    size_t have;
    const uint8_t *p = fetch(b, c, k->cur, (size_t)(k->end - k->cur), &have);
    if (!p)
        return -1;
    uint64_t at = k->cur, stop = k->cur + have; /* (the file may end inside the block) */
    while (at + 8 <= stop) {
        const uint8_t *q = p + (at - k->cur);
        vt_rec_header h;
        memcpy(&h, q, sizeof h);
        if (!h.type && !h.flags && !h.size)
            break; /* nothing stored here (yet) */
        if (h.size < 8 || h.size % VT_REC_ALIGN || h.size > k->end - at)
            return fail(b, at, "a record in a block runs past the block's end");
        if (h.type == VT_REC_BLOCK || !h.type)
            return fail(b, at, "a BLOCK (or a type-0 record) inside a block");
        if (h.size > stop - at)
            break; /* (cut at the end of the file) */
        uint64_t t = 0;
        int timed = timed_type(h.type) && h.size >= 16;
        if (timed) {
            memcpy(&t, q + 8, 8);
            t = VT_TT_NS(t);
            if (t > upto)
                break; /* (the block's later records wait: live) */
            if (t > b->newest)
                b->newest = t;
        }
        if (!items) { /* (one writer: its records handed out as they lie) */
            at += h.size;
            continue;
        }
        if (b->nit == b->capit &&
            mem_grow((void **)&b->it, &b->capit, b->nit + 1, sizeof *b->it, 64, 0) < 0)
            return fail(b, at, "out of memory");
        item *x = &b->it[b->nit++];
        x->timed = (uint8_t)timed;
        x->time = t;
        x->off = at;
        x->size = h.size;
        x->writer = k->writer;
        x->side = (uint8_t)side;
        if (side) {
            if (mem_grow((void **)&b->rec, &b->rec_cap, b->rec_len + h.size, 1, 64, 0) < 0)
                return fail(b, at, "out of memory");
            memcpy(b->rec + b->rec_len, q, h.size);
            x->at = b->rec_len;
            b->rec_len += h.size;
        }
        at += h.size;
    }
    k->cur = at;
    return 0;
}

/* item_bytes: where item x's bytes are (copied from `side`, or in `in`) */
static const uint8_t *item_bytes(const blocks *b, const item *x)
{
    return x->side ? b->rec + x->at : b->in.p + (x->off - b->in.off);
}

/* put_out: item x's bytes onto the output */
static int put_out(blocks *b, const item *x)
{
    const uint8_t *src = item_bytes(b, x);
    if (mem_grow((void **)&b->out, &b->out_cap, b->out_len + x->size, 1, 64, 0) < 0)
        return fail(b, x->off, "out of memory");
    memcpy(b->out + b->out_len, src, x->size);
    b->out_len += x->size;
    return 0;
}

/* is_whole: k's writer has a later block (a shared block's writer never does) */
static int is_whole(const blocks *b, const blk *k)
{
    return k->writer != VT_BLOCK_SHARED && b->wl.cap &&
           writers_at(&b->wl, k->writer)->seq != k->seq;
}

/* whole_due: a quarter or more of the earlier windows' blocks are whole (at most: old_whole), so
 * that a compaction (drop_whole) pays for itself */
static int whole_due(const blocks *b)
{
    return b->old_whole && b->old_whole * 4 >= b->nold;
}

/* drop_whole: earlier windows' blocks whose writer has moved on: done with */
static void drop_whole(blocks *b)
{
    size_t w = 0;
    for (size_t i = 0; i < b->nold; i++)
        if (!is_whole(b, &b->old[i]))
            b->old[w++] = b->old[i];
    b->nold = w;
    b->old_next = 0;
    b->old_whole = 0;
}

/* flush: what the current group's blocks (and, following, the earlier windows' open blocks)
 * stored since last looked at, onto the output: definitions first, then timed records by time */
static int flush(blocks *b, uint64_t upto)
{
    b->nit = b->rec_len = 0;
    if (b->live) /* (read anew from the window's first block: bytes read before may be stale) */
        b->in.len = 0;
    /* one writer (a program that records from one thread, the common case): its records are in
     * the order it made them, handed out as they lie, a block's new ones in one copy */
    int one = !(b->following && b->nold) && b->ng && b->g[0].writer != VT_BLOCK_SHARED;
    for (size_t i = 1; i < b->ng && one; i++)
        one = b->g[i].writer == b->g[0].writer;
    for (size_t i = 0; i < b->ng && one; i++) {
        blk *k = &b->g[i];
        uint64_t from = k->cur;
        if (take(b, &b->in, k, 0, 0, upto) < 0)
            return -1;
        if (k->cur > from) {
            item run = {.off = from, .size = (uint32_t)(k->cur - from)};
            if (put_out(b, &run) < 0)
                return -1;
        }
    }
    if (one)
        return 0;
    for (size_t i = 0; i < b->nold && b->following; i++) {
        b->side.len = 0; /* (each read anew: its bytes are copied out) */
        b->side.off = b->old[i].cur;
        if (take(b, &b->side, &b->old[i], 1, 1, upto) < 0)
            return -1;
    }
    for (size_t i = 0; i < b->ng; i++)
        if (take(b, &b->in, &b->g[i], 0, 1, upto) < 0)
            return -1;
    if (b->following) /* (their last look was just now) */
        drop_whole(b);
    /* the definitions first, in file order; the timed records after them, kept in place */
    int sorted = 1;
    uint64_t last = 0;
    size_t nt = 0;
    for (size_t i = 0; i < b->nit; i++) {
        item x = b->it[i];
        if (!x.timed) {
            if (put_out(b, &x) < 0)
                return -1;
            continue;
        }
        sorted &= x.time >= last;
        last = x.time;
        b->it[nt++] = x;
    }
    if (!sorted && blocks_merge(&b->it, &b->capit, nt, &b->tmp, &b->captmp) < 0)
        return -1;
    size_t bytes = 0; /* (the output grown once, then each record copied) */
    for (size_t i = 0; i < nt; i++)
        bytes += b->it[i].size;
    if (mem_grow((void **)&b->out, &b->out_cap, b->out_len + bytes, 1, 64, 0) < 0)
        return fail(b, nt ? b->it[0].off : b->scan, "out of memory");
    for (size_t i = 0; i < nt; i++) {
        const item *x = &b->it[i];
        memcpy(b->out + b->out_len, item_bytes(b, x), x->size);
        b->out_len += x->size;
    }
    return 0;
}

/* end_group: the current window is over: its blocks looked at a last time, those whose writer
 * may still store into them kept (followed), the cache let go of up to the next item */
static int end_group(blocks *b)
{
    if (flush(b, UINT64_MAX) < 0) /* (every block of the window is seen: all of it) */
        return -1;
    for (size_t i = 0; i < b->ng; i++) {
        blk *k = &b->g[i];
        int done = is_whole(b, k) || (k->writer == VT_BLOCK_SHARED && k->cur > k->off + 16);
        if (done || mem_grow((void **)&b->old, &b->capold, b->nold + 1, sizeof *b->old, 64, 0) < 0)
            continue;
        if (k->writer != VT_BLOCK_SHARED) /* (its writer's latest: is_whole) */
            writers_at(&b->wl, k->writer)->in_old = 1;
        if (b->nold == OLD_MAX && whole_due(b))
            drop_whole(b);
        if (b->nold == OLD_MAX) { /* (one of them is taken as done, in turn) */
            b->old[b->old_next] = *k;
            b->old_next = (b->old_next + 1) % OLD_MAX;
            continue;
        }
        b->old[b->nold++] = *k;
    }
    b->ng = 0;
    discard(&b->in, b->scan);
    return 0;
}

/* moved_on: writer has a new block, seq: its earlier ones are whole. -1: out of memory */
static int moved_on(blocks *b, uint32_t writer, uint64_t seq)
{
    if (writer == VT_BLOCK_SHARED)
        return 0;
    wlast *e = writers_get(&b->wl, writer);
    if (!e)
        return -1;
    b->old_whole += e->in_old; /* (its block among the old ones is whole now) */
    e->seq = seq, e->in_old = 0;
    /* (following: the next flush looks at them once more, then drops them; else nothing looks at
     * them again: dropped once a quarter of them or more are whole) */
    if (!b->following && whole_due(b))
        drop_whole(b);
    return 0;
}

/* live_upto: at the end of what a file holds now, the time up to which its records are handed
 * out: all of them, but in a live file watched on the machine that writes it (the reader's
 * monotonic clock past every time read) those of the last LIVE_HOLD_NS */
static uint64_t live_upto(const blocks *b)
{
    struct timespec ts;
    if (!b->live || !b->watching || clock_gettime(CLOCK_MONOTONIC, &ts))
        return UINT64_MAX;
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (now < b->hdr.start_mono_ns) /* (another machine's clock) */
        return UINT64_MAX;
    if (now - b->hdr.start_mono_ns < LIVE_HOLD_NS) /* (the run's first moments: all wait) */
        return 0;
    uint64_t upto = now - b->hdr.start_mono_ns - LIVE_HOLD_NS;
    return upto + LIVE_HOLD_NS < b->newest ? UINT64_MAX : upto; /* (another machine's clock) */
}

/* produce: the next part of the stream onto the (empty) output. 1: some; 0: nothing more now;
 * -1: malformed or unreadable. */
static int produce(blocks *b)
{
    b->out_len = b->out_pos = 0;
    while (!b->ended) {
        size_t have;
        const uint8_t *p = fetch(b, &b->in, b->scan, 16, &have);
        if (!p)
            return -1;
        vt_rec_header h = {0, 0, 0};
        if (have >= 8)
            memcpy(&h, p, sizeof h);
        if (have < 8 || (!h.type && !h.flags && !h.size)) { /* the end of what is written now */
            if (flush(b, live_upto(b)) < 0)
                return -1;
            return b->out_len > 0;
        }
        if (h.size < 8 || h.size % VT_REC_ALIGN)
            return fail(b, b->scan, "bad record size at the top level");
        if (h.type == VT_REC_BLOCK) {
            if (h.size < VT_BLOCK_HEAD_SIZE || h.size > VT_BLOCK_MAX_SIZE)
                return fail(b, b->scan, "bad BLOCK size");
            if (have < 16) { /* (its header cut by the end of the file) */
                if (flush(b, live_upto(b)) < 0)
                    return -1;
                return b->out_len > 0;
            }
            vt_rec_block v;
            memcpy(&v, p + 8, sizeof v);
            if (b->ng && (v.window != b->window || b->scan - b->g[0].off > GROUP_MAX)) {
                if (end_group(b) < 0)
                    return -1;
                if (b->out_len)
                    return 1; /* (this block again at the next call) */
                continue;
            }
            if (mem_grow((void **)&b->g, &b->capg, b->ng + 1, sizeof *b->g, 64, 0) < 0)
                return fail(b, b->scan, "out of memory");
            if (moved_on(b, v.writer, b->nblk) < 0)
                return fail(b, b->scan, "out of memory");
            b->g[b->ng++] = (blk){b->scan,  b->scan + h.size, b->scan + VT_BLOCK_HEAD_SIZE,
                                  v.window, v.writer,         b->nblk++};
            b->window = v.window;
            b->scan += h.size;
            continue;
        }
        /* a record at the top level (the trailer): what came before it first */
        if (h.size > VT_REC_MAX_SIZE)
            return fail(b, b->scan, "bad record size at the top level");
        if (b->ng) {
            if (end_group(b) < 0)
                return -1;
            if (b->out_len)
                return 1;
        }
        p = fetch(b, &b->in, b->scan, h.size, &have);
        if (!p)
            return -1;
        if (have < h.size)
            return 0; /* (cut by the end of the file: read as the end) */
        item top = {.off = b->scan, .size = h.size};
        if (put_out(b, &top) < 0)
            return -1;
        b->ended = h.type == VT_REC_TRAILER;
        b->scan += h.size;
        return 1;
    }
    return 0;
}

ssize_t blocks_read(blocks *b, void *buf, size_t n)
{
    size_t got = 0;
    if (!b->header_done) {
        size_t have;
        const uint8_t *p = fetch(b, &b->in, 0, sizeof b->hdr, &have);
        if (!p)
            return -1;
        if (have < sizeof b->hdr)
            return fail(b, 0, "the file header is cut short");
        memcpy(&b->hdr, p, sizeof b->hdr);
        b->scan = b->hdr.header_size >= sizeof b->hdr ? b->hdr.header_size : sizeof b->hdr;
        size_t k = sizeof b->hdr < n ? sizeof b->hdr : n;
        memcpy(buf, &b->hdr, k); /* readers ask for at least the header first */
        b->header_done = 1;
        discard(&b->in, b->scan);
        return (ssize_t)k; /* (the header alone: blocks_watching may come before the records) */
    }
    while (got < n) {
        if (b->out_pos == b->out_len) {
            if (b->bad)
                return got ? (ssize_t)got : -1;
            int r = produce(b);
            if (r < 0)
                return got ? (ssize_t)got : -1;
            if (r == 0)
                break;
            continue;
        }
        size_t k = b->out_len - b->out_pos;
        if (k > n - got)
            k = n - got;
        memcpy((char *)buf + got, b->out + b->out_pos, k);
        b->out_pos += k;
        got += k;
    }
    return (ssize_t)got;
}

int blocks_follow(blocks *b)
{
    if (b->fd < 0 || b->bad)
        return -1;
    b->following = b->live = 1;  /* (watching as blocks_watching left it) */
    b->in.len = b->side.len = 0; /* what was read may be zeros a writer has filled since */
    return 0;
}

void blocks_watching(blocks *b, int on)
{
    b->watching = on;
}

/* ended: the file fd ends with a trailer, as a writer leaves it at its end (cut right after
 * it): nothing more will be written into it */
static int ended(int fd)
{
    struct stat sb;
    const uint32_t room = 8 + (uint32_t)sizeof(vt_rec_trailer);
    vt_rec_header h;
    return fstat(fd, &sb) == 0 && (uint64_t)sb.st_size >= sizeof(vt_file_header) + room &&
           pread(fd, &h, sizeof h, sb.st_size - room) == (ssize_t)sizeof h &&
           h.type == VT_REC_TRAILER && h.size == room;
}

blocks *blocks_open(int fd, FILE *fp, const void *head, size_t nhead)
{
    blocks *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->live = fd >= 0 && !ended(fd);
    b->fd = fd;
    b->fp = fd >= 0 ? NULL : fp;
    if (fd < 0 && nhead) {
        b->head = malloc(nhead);
        if (!b->head) {
            free(b);
            return NULL;
        }
        memcpy(b->head, head, nhead);
        b->nhead = nhead;
    }
    return b;
}

/* free_bufs: every buffer of b (not b, nor a stream's head) */
static void free_bufs(blocks *b)
{
    free(b->in.p), free(b->side.p), free(b->g), free(b->old), free(b->it), free(b->tmp);
    free(b->out), free(b->rec);
    writers_free(&b->wl);
}

int blocks_rewind(blocks *b)
{
    if (b->fd < 0)
        return -1;
    int fd = b->fd;
    free_bufs(b);
    memset(b, 0, sizeof *b);
    b->fd = fd;
    b->live = !ended(fd);
    return 0;
}

const char *blocks_error(const blocks *b)
{
    return b->err;
}

uint64_t blocks_error_offset(const blocks *b)
{
    return b->err_off;
}

void blocks_close(blocks *b)
{
    if (!b)
        return;
    free_bufs(b);
    free(b->head);
    free(b);
}
