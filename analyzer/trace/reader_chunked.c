/* reader_chunked.c — a chunked trace (trace_format.h, CHUNKED LAYOUT: run --max-size /
 * --compress) read as the plain trace it stands for: the slot grid walked once at open (each
 * SLOT and CHUNK header read and checked), then the logical trace handed out as bytes — the
 * file header, then per raw slot seq its raw records or its chunks (zstd frames decompressed
 * into a buffer of the size the chunk declares, never more), a SNAP chunk only where the events
 * before it are gone, then the SUMMARY slots' records. reader.c frames and checks those records
 * as any others. Memory: one slot's bytes twice, and 56 bytes per chunk. */
#include "reader_chunked.h"
#include "reader_decode.h"
#include "reader_snapjoin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define SLOT_SIZE_MIN (64u << 10)
#define SLOT_SIZE_MAX (64u << 20)
#define CHUNKS_MAX (8u << 20)       /* more chunk headers than any writer makes of a file */
#define SNAP_FREE_BYTES (16u << 20) /* a snapshot's pieces: this much, then ... */
#define SNAP_RATIO_MAX 64u          /* ... at most this many times their stored bytes */
/* definitions (HEAD and META chunks: stacks, code objects, symbols) are kept for good by whoever
 * reads them (the tables): this much, then at most DEFS_RATIO_MAX times their stored bytes (a real
 * bounded run's: ~5 times; ~600 stored bytes of zstd had made 16 MiB of one code object's line
 * table, a 40 KB file a gigabyte of tables) */
#define DEFS_FREE_BYTES (64u << 20)
#define DEFS_RATIO_MAX 64u

enum { IT_RAW, IT_HEAD, IT_META, IT_SNAP, IT_EVENTS, IT_SUMMARY, IT_SUMCHUNK };
#define IS_SUMMARY(k) ((k) == IT_SUMMARY || (k) == IT_SUMCHUNK)

typedef struct item {
    uint64_t key;     /* raw seq (summary: its seq) */
    uint64_t off;     /* file offset: a slot's records, or a chunk's stored bytes */
    uint64_t first;   /* a chunk's first_event */
    uint32_t len;     /* raw / summary slots: bytes to walk; chunks: stored bytes */
    uint32_t raw_len; /* chunks: bytes once decompressed */
    uint16_t kind;    /* IT_* */
    uint16_t method;  /* chunks: vt_chunk_method */
    uint64_t order;   /* the order it was written in: its PACK slot's seq, then its place in
                       * the slot (the pieces of one snapshot go in this order) */
    uint64_t events;  /* chunks: ALLOC + FREE records in it */
} item;

struct chunked {
    int fd;
    uint64_t fsize, slot_size;
    vt_file_header hdr;
    item *items;
    size_t n, cap, next;
    uint8_t *in, *out; /* stored bytes; the current item's records */
    size_t out_len, out_pos, out_cap;
    const uint8_t *cur; /* what is handed out now: out, or joined */
    size_t cur_len;
    snapjoin *join;     /* what was handed out, while a snapshot may still be needed */
    size_t last_needed; /* the plan's last snapshot with events missing before it, + 1 */
    uint8_t *joined;    /* the snapshot joined to it (snapjoin_merge), handed out */
    size_t joined_len;
    int header_done;
    uint64_t emitted; /* events handed out so far (the SNAP rule) */
    uint64_t raw_key; /* the last raw slot handed out (its chunks are skipped) */
    int have_raw;
    ZSTD_DCtx *dctx;
    chunked_info info;
    char err[200];
};

static int fail(chunked *c, const char *fmt, unsigned long long a)
{
    snprintf(c->err, sizeof c->err, fmt, a);
    return -1;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

static int add(chunked *c, item it)
{
    if (c->n == c->cap) {
        if (c->cap >= CHUNKS_MAX)
            return fail(c, "more than %llu chunks: not a file a writer makes", CHUNKS_MAX);
        size_t ncap = c->cap ? c->cap * 2 : 256;
        item *ni = realloc(c->items, ncap * sizeof *ni);
        if (!ni)
            return fail(c, "out of memory for %llu chunks", (unsigned long long)ncap);
        c->items = ni;
        c->cap = ncap;
    }
    c->items[c->n++] = it;
    return 0;
}

/* walk_summary: a SUMMARY slot's content [off, end): its CHUNK records (STEP records), then
 * the trailer (any other record: handed out as it is); seq: the slot's */
static int walk_summary(chunked *c, uint64_t off, uint64_t end, uint64_t seq)
{
    uint8_t h[8 + sizeof(vt_rec_chunk)];
    for (uint64_t place = 0; off + 8 <= end; place++) {
        if (pread_all(c->fd, h, 8, off))
            return fail(c, "read error at byte %llu", (unsigned long long)off);
        uint16_t type = rd16(h);
        uint32_t size = rd32(h + 4);
        if (!type || size < 8 || size % 8 || size > end - off)
            break; /* the end of what was written (or a record cut by a kill) */
        if (type == VT_REC_CHUNK) {
            vt_rec_chunk k;
            if (size < sizeof h || pread_all(c->fd, h, sizeof h, off))
                return fail(c, "malformed CHUNK record at byte %llu", (unsigned long long)off);
            memcpy(&k, h + 8, sizeof k);
            if (k.stream != VT_STREAM_SUMMARY || k.method > VT_CHUNK_ZSTD || !k.raw_len ||
                k.stored > size - sizeof h || size - sizeof h - k.stored >= 8 ||
                k.raw_len > VT_CHUNK_MAX_RAW || k.raw_len > c->slot_size ||
                (k.method == VT_CHUNK_NONE && k.stored != k.raw_len))
                return fail(c, "malformed CHUNK record at byte %llu", (unsigned long long)off);
            if (add(c, (item){seq, off + sizeof h, 0, k.stored, k.raw_len, IT_SUMCHUNK,
                              (uint16_t)k.method, place, 0}))
                return -1;
        } else if (add(c, (item){seq, off, 0, size, 0, IT_SUMMARY, 0, place, 0})) {
            return -1;
        }
        off += size;
    }
    return 0;
}

/* walk_pack: the CHUNK records of a PACK slot's content [off, end); seq: the slot's */
static int walk_pack(chunked *c, uint64_t off, uint64_t end, uint64_t seq)
{
    uint64_t place = 0;
    uint8_t h[8 + sizeof(vt_rec_chunk)];
    while (off + 8 <= end) {
        if (pread_all(c->fd, h, 8, off))
            return fail(c, "read error at byte %llu", (unsigned long long)off);
        uint16_t type = rd16(h);
        uint32_t size = rd32(h + 4);
        if (!type)
            break; /* the end of what was written */
        if (type != VT_REC_CHUNK || size < sizeof h || size % 8 || size > end - off)
            return fail(c, "a pack slot's record at byte %llu is not a whole CHUNK",
                        (unsigned long long)off);
        if (pread_all(c->fd, h, sizeof h, off))
            return fail(c, "read error at byte %llu", (unsigned long long)off);
        vt_rec_chunk k;
        memcpy(&k, h + 8, sizeof k);
        uint64_t payload = size - sizeof h;
        int kind = k.stream == VT_STREAM_HEAD     ? IT_HEAD
                   : k.stream == VT_STREAM_META   ? IT_META
                   : k.stream == VT_STREAM_SNAP   ? IT_SNAP
                   : k.stream == VT_STREAM_EVENTS ? IT_EVENTS
                                                  : -1;
        if (kind < 0 || k.method > VT_CHUNK_ZSTD || k.stored > payload || payload - k.stored >= 8 ||
            k.raw_len > VT_CHUNK_MAX_RAW || (k.raw_len > c->slot_size && kind != IT_SNAP) ||
            !k.raw_len || (k.method == VT_CHUNK_NONE && k.stored != k.raw_len))
            return fail(c, "malformed CHUNK record at byte %llu", (unsigned long long)off);
        if (add(c, (item){k.raw_seq, off + sizeof h, k.first_event, k.stored, k.raw_len,
                          (uint16_t)kind, (uint16_t)k.method, (seq << 20) | place++, k.events}))
            return -1;
        c->info.chunks++;
        c->info.stored_bytes += k.stored;
        c->info.raw_bytes += k.raw_len;
        off += size;
    }
    return 0;
}

/* by_plan: the logical trace's order: summaries last (by seq); else by raw seq, and within one
 * its raw slot, HEAD, META, then SNAP and EVENTS by the events before them (SNAP first) */
static int by_plan(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int sx = IS_SUMMARY(x->kind), sy = IS_SUMMARY(y->kind);
    int rx = x->kind >= IT_SNAP ? IT_SNAP : x->kind, ry = y->kind >= IT_SNAP ? IT_SNAP : y->kind;
    if (sx != sy)
        return sx - sy;
    if (sx) /* summaries: by slot, then in the order they were written in it */
        return x->key != y->key ? (x->key < y->key ? -1 : 1)
                                : (x->order > y->order) - (x->order < y->order);
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (rx != ry)
        return rx - ry;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind == IT_SNAP ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

int chunked_detect(int fd, uint64_t header_size)
{
    uint8_t h[8];
    return pread_all(fd, h, 8, header_size) == 0 && rd16(h) == VT_REC_SLOT;
}

chunked *chunked_open(int fd, uint64_t fsize, const vt_file_header *hdr, int summary_only,
                      char *msg, size_t len)
{
    chunked *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, len, "out of memory");
        return NULL;
    }
    c->fd = fd;
    c->fsize = fsize;
    c->hdr = *hdr;
    uint8_t h[VT_SLOT_REC_SIZE];
    vt_rec_slot s0;
    if (hdr->header_size != sizeof(vt_file_header) || pread_all(fd, h, sizeof h, 32) ||
        rd32(h + 4) != VT_SLOT_REC_SIZE) {
        fail(c, "malformed SLOT record at byte %llu", 32);
        goto bad;
    }
    memcpy(&s0, h + 8, sizeof s0);
    c->slot_size = s0.slot_size;
    if (s0.slot_size < SLOT_SIZE_MIN || s0.slot_size > SLOT_SIZE_MAX ||
        (s0.slot_size & (s0.slot_size - 1))) {
        fail(c, "slot size %llu is not a power of two from 64 KiB to 64 MiB",
             (unsigned long long)s0.slot_size);
        goto bad;
    }
    c->info.slot_size = s0.slot_size;
    c->info.max_size = s0.max_size;
    for (uint64_t i = 0; i * c->slot_size < fsize; i++) {
        uint64_t off = i ? i * c->slot_size : 32, end = (i + 1) * c->slot_size;
        if (end > fsize)
            end = fsize;
        if (off + sizeof h > end || pread_all(fd, h, sizeof h, off) || !rd16(h)) {
            c->info.free_slots++;
            continue;
        }
        vt_rec_slot s;
        memcpy(&s, h + 8, sizeof s);
        if (rd16(h) != VT_REC_SLOT || rd32(h + 4) != VT_SLOT_REC_SIZE ||
            s.slot_size != c->slot_size) {
            fail(c, "slot at byte %llu does not start with a SLOT record of this file",
                 (unsigned long long)off);
            goto bad;
        }
        uint64_t body = off + sizeof h;
        int r = 0;
        if (s.kind == VT_SLOT_RAW) {
            r = add(c, (item){s.seq, body, 0, (uint32_t)(end - body), 0, IT_RAW, 0, i});
            c->info.raw_slots++;
        } else if (s.kind == VT_SLOT_SUMMARY) {
            r = walk_summary(c, body, end, s.seq);
        } else if (s.kind == VT_SLOT_PACK) {
            r = walk_pack(c, body, end, s.seq);
            c->info.pack_slots++;
        } else {
            r = fail(c, "slot at byte %llu of an unknown kind", (unsigned long long)off);
        }
        if (r)
            goto bad;
    }
    if (summary_only) { /* the first raw slot (process, device, config), definitions, summaries */
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++)
            if (IS_SUMMARY(c->items[i].kind) || c->items[i].kind == IT_META ||
                ((c->items[i].kind == IT_RAW || c->items[i].kind == IT_HEAD) &&
                 c->items[i].key == 1))
                c->items[k++] = c->items[i];
        c->n = k;
    }
    /* the definitions to read, as their chunks say they decompress: past the bound, refused
     * before any is (the plan is made here, once: no chunk is added later) */
    uint64_t defs_raw = 0, defs_stored = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].kind == IT_HEAD || c->items[i].kind == IT_META)
            defs_raw += c->items[i].raw_len, defs_stored += c->items[i].len;
    if (defs_raw > DEFS_FREE_BYTES + DEFS_RATIO_MAX * defs_stored) {
        fail(c, "its definitions (%llu bytes) decompress to more than 64 times their size",
             (unsigned long long)defs_raw);
        goto bad;
    }
    if (c->n) /* (no item: items may be NULL, which qsort may not be given) */
        qsort(c->items, c->n, sizeof *c->items, by_plan);
    /* the snapshots with events missing before them (raw slots, the newest, come after) */
    uint64_t covered = 0;
    for (size_t i = 0; i < c->n; i++) {
        const item *it = &c->items[i];
        if ((it->kind == IT_HEAD || it->kind == IT_EVENTS) && it->first <= covered &&
            it->first + it->events > covered)
            covered = it->first + it->events;
        else if (it->kind == IT_SNAP && it->first > covered)
            c->last_needed = i + 1, covered = it->first;
    }
    c->join = c->last_needed ? snapjoin_new() : NULL;
    c->in = malloc(c->slot_size);
    c->out = malloc(c->slot_size);
    c->out_cap = c->slot_size;
    c->dctx = ZSTD_createDCtx();
    if (c->dctx)
        ZSTD_DCtx_setParameter(c->dctx, ZSTD_d_windowLogMax, 27);
    if (!c->in || !c->out || !c->dctx || (c->last_needed && !c->join)) {
        fail(c, "out of memory for a %llu-byte slot", (unsigned long long)c->slot_size);
        goto bad;
    }
    return c;
bad:
    snprintf(msg, len, "%s", c->err);
    chunked_close(c);
    return NULL;
}

/* records_prefix: the whole records at the start of b[0, n) up to a zero header (or one that is
 * not a record: a slot's end as it was left); their events counted into *events. */
static size_t records_prefix(const uint8_t *b, size_t n, uint64_t *events)
{
    size_t at = 0;
    while (at + 8 <= n) {
        uint16_t t = rd16(b + at);
        uint32_t s = rd32(b + at + 4);
        if (!t || s < 8 || s % 8 || s > n - at)
            break;
        *events += t == VT_REC_ALLOC || t == VT_REC_FREE;
        at += s;
    }
    return at;
}

/* load: the records of item it into c->out (c->out_len bytes, *ev events): read, decompressed
 * into what the chunk declares and no more, checked to be whole records. 0 or -1. */
static int load(chunked *c, const item *it, uint64_t *ev)
{
    *ev = 0;
    if (pread_all(c->fd, it->kind == IT_RAW || it->kind == IT_SUMMARY ? c->out : c->in, it->len,
                  it->off))
        return fail(c, "read error at byte %llu", (unsigned long long)it->off);
    if (it->kind == IT_RAW || it->kind == IT_SUMMARY) {
        c->out_len = records_prefix(c->out, it->len, ev);
        return 0;
    }
    if (it->raw_len > c->out_cap) { /* a snapshot larger than a slot (at most 16 MiB) */
        uint8_t *nb = realloc(c->out, it->raw_len);
        if (!nb)
            return fail(c, "out of memory for a %llu-byte chunk", it->raw_len);
        c->out = nb;
        c->out_cap = it->raw_len;
    }
    if (it->method == VT_CHUNK_ZSTD) {
        unsigned long long want = ZSTD_getFrameContentSize(c->in, it->len);
        size_t got = want == it->raw_len
                         ? ZSTD_decompressDCtx(c->dctx, c->out, it->raw_len, c->in, it->len)
                         : 0;
        if (want != it->raw_len || ZSTD_isError(got) || got != it->raw_len)
            return fail(c, "a compressed chunk at byte %llu does not decompress to its size",
                        (unsigned long long)it->off);
    } else {
        memcpy(c->out, c->in, it->len);
    }
    if (records_prefix(c->out, it->raw_len, ev) != it->raw_len)
        return fail(c, "a chunk at byte %llu does not hold whole records",
                    (unsigned long long)it->off);
    c->out_len = it->raw_len;
    return 0;
}

/* join_snapshot: the snapshot whose first piece is items[c->next] (its pieces follow it, with
 * the same raw seq and first event), joined to what was handed out (reader_snapjoin.c) into
 * c->joined; c->next past its pieces. 0, 1 when they do not start with its SNAPSHOT record (its
 * first piece went with its slot: a kill while the writer dropped that slot's group), or -1. */
static int join_snapshot(chunked *c)
{
    const item *first = &c->items[c->next];
    uint8_t *all = NULL;
    size_t n = 0;
    uint64_t ev, stored = 0;
    while (c->next < c->n && c->items[c->next].kind == IT_SNAP &&
           c->items[c->next].key == first->key && c->items[c->next].first == first->first) {
        /* each piece is at most 16 MiB once decompressed; their total past the first 16 MiB
         * at most SNAP_RATIO_MAX times what they take in the file (a writer's live set
         * compresses far less: a file of 64 KiB cannot make gigabytes) */
        stored += c->items[c->next].len;
        if (n + c->items[c->next].raw_len > SNAP_FREE_BYTES + SNAP_RATIO_MAX * stored) {
            free(all);
            return fail(c, "a snapshot at byte %llu decompresses to more than 64 times its size",
                        (unsigned long long)first->off);
        }
        if (load(c, &c->items[c->next], &ev)) {
            free(all);
            return -1;
        }
        uint8_t *na = realloc(all, n + c->out_len);
        if (!na) {
            free(all);
            return fail(c, "out of memory for a snapshot of %llu bytes", n + c->out_len);
        }
        all = na;
        memcpy(all + n, c->out, c->out_len);
        n += c->out_len;
        c->next++;
    }
    if (n < 8 || rd16(all) != VT_REC_SNAPSHOT) {
        free(all);
        return 1;
    }
    free(c->joined);
    c->joined = NULL;
    int r = snapjoin_merge(c->join, all, n, &c->joined, &c->joined_len);
    free(all);
    if (r)
        return fail(c, "a snapshot at byte %llu is not one (or out of memory)",
                    (unsigned long long)first->off);
    return 0;
}

/* next_item: the next records to hand out into c->cur / c->cur_len (0 bytes: none from this
 * item); 0, 1 at the plan's end, -1 on error. What the plan says of each item: a raw slot
 * stands for its chunks; a snapshot is handed out only where events before it are missing
 * (joined to what was handed out); events already handed out, or after missing ones with no
 * snapshot, are skipped. */
static int next_item(chunked *c)
{
    c->cur_len = c->out_pos = 0;
    if (c->next == c->n)
        return 1;
    const item *it = &c->items[c->next];
    if (it->kind != IT_RAW && !IS_SUMMARY(it->kind) && c->have_raw && c->raw_key == it->key) {
        c->next++;
        return 0;
    }
    /* a HEAD chunk whose events were handed out (its raw slot's chunk twice) is skipped, as an
     * EVENTS chunk is: read again, its events had pushed the count past every later chunk's first
     * event, all of them skipped with no gap said */
    if (it->kind == IT_HEAD && it->first < c->emitted) {
        c->next++;
        return 0;
    }
    if (it->kind == IT_SNAP) {
        if (c->emitted >= it->first) { /* the events before it are here */
            c->next++;
            return 0;
        }
        /* (not foreseen, in a file whose chunks' counts disagree: joined to nothing, its pieces
         * whole; the first piece alone had been handed out, a SNAPSHOT counting the others) */
        if (!c->join && !(c->join = snapjoin_new()))
            return fail(c, "out of memory for a snapshot at byte %llu", it->off);
        uint64_t first = it->first;
        int r = join_snapshot(c);
        if (r) /* its first piece gone: no way in, the events after it skipped (gaps) */
            return r < 0 ? -1 : 0;
        c->info.snapshots_used++;
        c->emitted = first;
        c->cur = c->joined;
        c->cur_len = c->joined_len;
        return 0;
    }
    uint64_t ev;
    if (it->kind == IT_RAW)
        c->have_raw = 1, c->raw_key = it->key;
    if (it->kind == IT_EVENTS && it->first != c->emitted) {
        c->info.gaps += it->first > c->emitted; /* no snapshot before it: skipped */
        c->next++;
        return 0;
    }
    if (load(c, it, &ev))
        return -1;
    c->next++;
    if (!IS_SUMMARY(it->kind) && it->kind != IT_META)
        c->emitted += ev;
    if (c->join && c->next <= c->last_needed)
        snapjoin_records(c->join, c->out, c->out_len);
    c->cur = c->out;
    c->cur_len = c->out_len;
    return 0;
}

/* rewritten: the slot item it was planned from holds something else now (its SLOT record gone,
 * or of another kind or seq): the writer reused it while this reader went on, a run still being
 * written, which ends here as a trace still running does (report on a live bounded trace had called
 * it malformed: "a compressed chunk ... does not decompress to its size", 9 to 13 reads of 15) */
static int rewritten(const chunked *c, const item *it)
{
    if (IS_SUMMARY(it->kind)) /* (a summary slot is never reused: its damage is damage) */
        return 0;
    uint64_t i = it->off / c->slot_size, off = i ? i * c->slot_size : 32;
    uint8_t h[VT_SLOT_REC_SIZE];
    vt_rec_slot s;
    if (pread_all(c->fd, h, sizeof h, off) || rd16(h) != VT_REC_SLOT)
        return 1;
    memcpy(&s, h + 8, sizeof s);
    return it->kind == IT_RAW ? s.kind != VT_SLOT_RAW || s.seq != it->key
                              : s.kind != VT_SLOT_PACK || s.seq != it->order >> 20;
}

ssize_t chunked_read(chunked *c, void *buf, size_t n)
{
    size_t got = 0;
    if (!c->header_done) {
        size_t k = sizeof c->hdr < n ? sizeof c->hdr : n;
        memcpy(buf, &c->hdr, k); /* readers ask for at least the header first */
        c->header_done = 1;
        got = k;
    }
    while (got < n) {
        if (c->out_pos == c->cur_len) {
            size_t at = c->next;
            int r = next_item(c), reused = 0;
            /* (the item that failed: a snapshot's pieces are read from at to next) */
            for (size_t k = at; r < 0 && k <= c->next && k < c->n && !reused; k++)
                reused = rewritten(c, &c->items[k]);
            if (reused) {
                c->next = c->n; /* (what follows is of the same moment or later: not read) */
                break;
            }
            if (r < 0)
                return -1;
            if (r > 0)
                break;
            continue;
        }
        size_t k = c->cur_len - c->out_pos;
        if (k > n - got)
            k = n - got;
        memcpy((char *)buf + got, c->cur + c->out_pos, k);
        c->out_pos += k;
        got += k;
    }
    return (ssize_t)got;
}

int chunked_rewind(chunked *c)
{
    c->next = c->out_len = c->out_pos = c->cur_len = 0;
    snapjoin_free(c->join);
    c->join = c->last_needed ? snapjoin_new() : NULL;
    c->header_done = 0;
    c->emitted = 0;
    c->have_raw = 0;
    c->info.snapshots_used = c->info.gaps = 0;
    return 0;
}

const chunked_info *chunked_get_info(const chunked *c)
{
    return &c->info;
}

const char *chunked_error(const chunked *c)
{
    return c->err;
}

void chunked_close(chunked *c)
{
    if (!c)
        return;
    free(c->items);
    free(c->joined);
    snapjoin_free(c->join);
    free(c->in);
    free(c->out);
    ZSTD_freeDCtx(c->dctx);
    free(c);
}
