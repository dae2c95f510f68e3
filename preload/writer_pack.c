/* writer_pack.c — the packer of a chunked trace (trace_format.h, CHUNKED LAYOUT; run
 * --max-size / --compress): one background thread, never a program's, that takes each raw slot
 * the writers filled (oldest first), copies its records into CHUNK records (zstd, level 1) of
 * the HEAD stream while the run's beginning fits its budget (1/8 of the bound), else of META
 * (definitions, kept) and EVENTS (the rolling window: each EVENTS slot starts with a SNAP chunk,
 * the live set then), drops the oldest EVENTS slot when the file is at its bound, and frees the
 * raw slot once its chunks are complete. STEP records (writer_pack_live.c) go to SUMMARY slots,
 * the trailer last. The slots themselves are writer_slots.c's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced: the context's memory from mmap */
#include <zstd.h>

#include "core/config.h"
#include "core/output.h"
#include "core/quietio.h"
#include "vramtrace/trace_format.h"
#include "writer.h"
#include "writer_internal.h"
#include "writer_mem.h"

#define ZSTD_LEVEL 1
#define RAW_RESERVE 4 /* free slots the packer keeps for the writers' next raw slots */

/* one output slot the packer is filling: records at base[0, pos), room for cap */
typedef struct out {
    int open;
    uint64_t slot;
    char *map, *base;
    uint64_t pos, cap;
    uint64_t events, first_ns, last_ns, chunks; /* EVENTS slots: what dropping it loses */
} out;

static struct packer {
    pthread_t thread;
    int have_thread, stop;
    ZSTD_CCtx *cctx;
    char *zbuf, *meta, *evs, *snap, *sum; /* sum: STEP records waiting for flush_summary */
    size_t zcap, meta_cap, evs_cap, snap_cap, nsum, sum_cap;
    out head, meta_o, events, summary;
    struct fifo_item { /* closed EVENTS slots, oldest first: dropped in this order */
        uint64_t slot, events, first_ns, last_ns, group;
    } * fifo;
    /* EVENTS slots come in groups, each led by a snapshot: a new group once the events stored
     * since the last snapshot are 3 times its size (so snapshots take at most a quarter of the
     * window), and a group is dropped whole */
    uint64_t group, group_bytes, snap_bytes;
    size_t nfifo, capfifo;
    uint64_t pack_seq, summary_seq;
    uint64_t head_left; /* bytes of HEAD slots the run's beginning may still take */
    uint64_t dropped_events, dropped_from, dropped_to;
    uint64_t lost_records; /* what the packer could not place (for a debugger: not n_dropped) */
    uint64_t last_ns;      /* the time of the last event packed */
} P;

/* ---- slots ------------------------------------------------------------------------------- */

/* drop_oldest: the oldest group of closed EVENTS slots goes, its events with it: each slot's
 * SLOT header zeroed on disk first (a reader sees a free slot from then on), its blocks punched
 * out; the first slot is the caller's, the others free. -1 when the oldest group is the one
 * being filled (the window keeps at least that). */
static int64_t drop_oldest(void)
{
    pthread_mutex_lock(&vt__ws.lock);
    if (!P.nfifo || P.fifo[0].group == P.group) {
        pthread_mutex_unlock(&vt__ws.lock);
        return -1;
    }
    uint64_t g = P.fifo[0].group;
    size_t k = 0;
    while (k < P.nfifo && P.fifo[k].group == g)
        k++;
    struct fifo_item one, *items = vt__wm_alloc(k * sizeof *items);
    if (!items) /* out of memory: one slot (the rest of its group waits for the next drop) */
        k = 1, items = &one;
    memcpy(items, P.fifo, k * sizeof *items);
    memmove(P.fifo, P.fifo + k, (P.nfifo - k) * sizeof *P.fifo);
    P.nfifo -= k;
    pthread_mutex_unlock(&vt__ws.lock);
    for (size_t i = 0; i < k; i++) {
        vt__slot_wipe(items[i].slot, NULL);
        if (!P.dropped_events || items[i].first_ns < P.dropped_from)
            P.dropped_from = items[i].first_ns;
        if (items[i].last_ns > P.dropped_to)
            P.dropped_to = items[i].last_ns;
        P.dropped_events += items[i].events;
    }
    int64_t first = (int64_t)items[0].slot;
    pthread_mutex_lock(&vt__ws.lock);
    for (size_t i = 1; i < k; i++)
        vt__slot_release_locked(items[i].slot, NULL);
    pthread_mutex_unlock(&vt__ws.lock);
    if (items != &one)
        vt__wm_free(items);
    return first;
}

/* out_open: o gets a fresh slot of this kind and stream, its SLOT record written; not HEAD: an old
 * EVENTS slot dropped when none is free (also once the disk bounds the grid). 0, or an errno. */
static int out_open(out *o, uint32_t kind, uint32_t stream)
{
    int err = 0;
    int64_t i;
    char *map = NULL;
    for (int tries = 0; !map; tries++) {
        pthread_mutex_lock(&vt__ws.lock);
        i = vt__slot_take_locked();
        pthread_mutex_unlock(&vt__ws.lock);
        if (i < 0 && stream != VT_STREAM_HEAD)
            i = drop_oldest();
        if (i < 0)
            return err ? err : ENOMEM;
        map = vt__slot_map((uint64_t)i, &err);
        if (!map && (!vt__slot_map_failed((uint64_t)i, err) || tries))
            return err ? err : ENOMEM;
    }
    uint64_t S = vt__ws.slot_size, first = vt__slot_off((uint64_t)i) - (uint64_t)i * S;
    uint64_t seq = kind == VT_SLOT_SUMMARY ? ++P.summary_seq : ++P.pack_seq;
    vt_rec_slot sr = {seq, S, vt__ws.max_size, kind, kind == VT_SLOT_PACK ? stream : 0, 0};
    vt__put_record(map + first, VT_SLOT_REC_SIZE, VT_REC_SLOT, 0, &sr, sizeof sr, NULL, 0, NULL, 0);
    *o = (out){1,   (uint64_t)i,
               map, map + first + VT_SLOT_REC_SIZE,
               0,   S - first - VT_SLOT_REC_SIZE - TRAILER_ROOM,
               0,   0,
               0,   0};
    return 0;
}

/* out_close: o is full; an EVENTS slot joins the ones that may be dropped. Its mapping goes:
 * dropping maps it again (rare), reading is the reader's. */
static void out_close(out *o, int events)
{
    if (!o->open)
        return;
    vt__sys_ops.munmap(o->map, (size_t)vt__ws.slot_size);
    if (events) {
        pthread_mutex_lock(&vt__ws.lock);
        if (P.nfifo == P.capfifo) {
            size_t n = P.capfifo ? P.capfifo * 2 : 64;
            struct fifo_item *nf = vt__wm_realloc(P.fifo, n * sizeof *nf);
            if (nf)
                P.fifo = nf, P.capfifo = n;
        }
        if (P.nfifo < P.capfifo)
            P.fifo[P.nfifo++] =
                (struct fifo_item){o->slot, o->events, o->first_ns, o->last_ns, P.group};
        pthread_mutex_unlock(&vt__ws.lock);
    }
    o->open = 0;
}

/* put: one record (header + payload, len bytes, a multiple of 8) at o's end: the payload, a
 * zero header after it (where readers stop: a reused slot holds zeros only where it was
 * punched), then its header last. Room for a trailer is kept unless this is it. -1 when it does
 * not fit. */
static int put(out *o, const char *rec, size_t len, int trailer)
{
    if (!o->open || o->pos + len > o->cap + (trailer ? TRAILER_ROOM : 0))
        return -1;
    char *dst = o->base + o->pos;
    memcpy(dst + 8, rec + 8, len - 8);
    if (o->pos + len + 8 <= o->cap + TRAILER_ROOM)
        __atomic_store_n((uint64_t *)(void *)(dst + len), 0, __ATOMIC_RELAXED);
    uint64_t h;
    memcpy(&h, rec, 8);
    __atomic_store_n((uint64_t *)(void *)dst, h, __ATOMIC_RELEASE);
    o->pos += len;
    return 0;
}

/* chunk: the CHUNK record of data[0, len) (events of them: nev, spanning first..last ns) in
 * P.zbuf, compressed when that is smaller; its size. */
static size_t chunk(uint64_t raw_seq, uint32_t stream, const char *data, size_t len, uint64_t nev,
                    uint64_t first_ns, uint64_t last_ns, uint64_t first_event)
{
    size_t bound = 8 + sizeof(vt_rec_chunk) + ZSTD_compressBound(len) + 8;
    if (bound > P.zcap) {
        char *nb = vt__wm_realloc(P.zbuf, bound);
        if (!nb)
            return 0;
        P.zbuf = nb;
        P.zcap = bound;
    }
    char *payload = P.zbuf + 8 + sizeof(vt_rec_chunk);
    size_t stored = len;
    uint32_t method = VT_CHUNK_NONE;
    if (vt__config_get()->compress && P.cctx) {
        size_t z = ZSTD_compressCCtx(P.cctx, payload, bound - 16 - sizeof(vt_rec_chunk), data, len,
                                     ZSTD_LEVEL);
        if (!ZSTD_isError(z) && z < len)
            stored = z, method = VT_CHUNK_ZSTD;
    }
    if (method == VT_CHUNK_NONE)
        memcpy(payload, data, len);
    vt_rec_chunk c = {raw_seq, stream,   method,  (uint32_t)len, (uint32_t)stored,
                      nev,     first_ns, last_ns, first_event};
    memcpy(P.zbuf + 8, &c, sizeof c);
    size_t size = (8 + sizeof c + stored + 7) & ~(size_t)7;
    memset(P.zbuf + 8 + sizeof c + stored, 0, size - (8 + sizeof c + stored));
    uint64_t h = (uint64_t)VT_REC_CHUNK | ((uint64_t)size << 32);
    memcpy(P.zbuf, &h, 8);
    return size;
}

/* ---- what a raw slot's records are ------------------------------------------------------- */
static uint16_t rec_type(const char *r)
{
    uint16_t t;
    memcpy(&t, r, 2);
    return t;
}
static uint32_t rec_size(const char *r)
{
    uint32_t s;
    memcpy(&s, r + 4, 4);
    return s;
}
static int is_event(uint16_t t)
{
    return t == VT_REC_ALLOC || t == VT_REC_FREE || t == VT_REC_MEMINFO || t == VT_REC_OOM;
}
/* span: events and their time span among the records data[0, len) */
static uint64_t span(const char *data, size_t len, uint64_t *first, uint64_t *last)
{
    uint64_t n = 0;
    *first = *last = 0;
    for (size_t at = 0; at < len; at += rec_size(data + at)) {
        uint16_t t = rec_type(data + at);
        if (t != VT_REC_ALLOC && t != VT_REC_FREE)
            continue;
        uint64_t tt;
        memcpy(&tt, data + at + 8, 8);
        if (!n++)
            *first = VT_TT_NS(tt);
        *last = VT_TT_NS(tt);
    }
    return n;
}

/* emit_summary: a STEP record, kept until the raw slot being packed is done (flush_summary) */
static void emit_summary(const void *rec, size_t len)
{
    if (P.nsum + len > P.sum_cap) {
        size_t n = P.sum_cap ? P.sum_cap * 2 : 65536;
        while (n < P.nsum + len)
            n *= 2;
        char *nb = vt__wm_realloc(P.sum, n);
        if (!nb) {
            P.lost_records++;
            return;
        }
        P.sum = nb;
        P.sum_cap = n;
    }
    memcpy(P.sum + P.nsum, rec, len);
    P.nsum += len;
}

/* flush_summary: the STEP records of the raw slot just packed, as one SUMMARY chunk; no slot free
 * for one: kept for the next flush, up to a quarter of a slot (lost before: a run's steps) */
static void flush_summary(uint64_t raw_seq)
{
    size_t n =
        P.nsum <= vt__ws.slot_size / 2 ? P.nsum : 0; /* (no reader takes a chunk past a slot) */
    size_t c = n ? chunk(raw_seq, VT_STREAM_SUMMARY, P.sum, n, 0, 0, 0, vt__pl_events()) : 0;
    if (!P.nsum)
        return;
    if (c && put(&P.summary, P.zbuf, c, 0)) {
        out_close(&P.summary, 0);
        int open = !out_open(&P.summary, VT_SLOT_SUMMARY, 0);
        if (!open && P.nsum < vt__ws.slot_size / 4)
            return; /* (kept: no slot for them yet) */
        c = open && !put(&P.summary, P.zbuf, c, 0) ? c : 0;
    }
    P.lost_records += !c;
    P.nsum = 0;
}

/* feed: the records data[0, len) in order to the live set and the steps */
static void feed(const char *data, size_t len, int meta, int events)
{
    for (size_t at = 0; at < len; at += rec_size(data + at)) {
        uint16_t t = rec_type(data + at);
        if (is_event(t)) {
            if (events)
                vt__pl_event(data + at, rec_size(data + at), emit_summary);
        } else if (meta) {
            vt__pl_meta(data + at, rec_size(data + at));
        }
    }
}

/* open_events: a new EVENTS slot; one that starts a group begins with its SNAP chunks (the live
 * set before what follows) */
static int open_events(uint64_t raw_seq)
{
    out_close(&P.events, 1);
    int lead = !P.group || P.group_bytes >= 3 * P.snap_bytes;
    if (lead) /* a new group: the old one may be dropped from now on */
        P.group++, P.group_bytes = P.snap_bytes = 0;
    if (out_open(&P.events, VT_SLOT_PACK, VT_STREAM_EVENTS))
        return -1;
    if (!lead)
        return 0;
    vt_rec_snapshot snap = {VT_TT_MAKE(P.last_ns, 0), vt__pl_events(), P.dropped_events};
    snap.dropped_from_ns = P.dropped_from, snap.dropped_to_ns = P.dropped_to;
    size_t n = vt__pl_snapshot(&P.snap, &P.snap_cap, &snap);
    if (!n)
        return 0; /* out of memory: the slot holds events without a way in (said by readers) */
    /* in pieces that fit an empty slot, cut between records, over as many slots of the group as
     * they take; readers take the pieces with the same first_event together */
    size_t most = (size_t)(P.events.cap - 128) < VT_CHUNK_MAX_RAW ? (size_t)(P.events.cap - 128)
                                                                  : VT_CHUNK_MAX_RAW;
    for (size_t at = 0; at < n;) {
        size_t piece = 0;
        while (at + piece < n) {
            uint32_t rs = rec_size(P.snap + at + piece);
            if (piece + rs > most)
                break;
            piece += rs;
        }
        size_t c =
            piece ? chunk(raw_seq, VT_STREAM_SNAP, P.snap + at, piece, 0, 0, 0, vt__pl_events())
                  : 0;
        if (c && put(&P.events, P.zbuf, c, 0)) { /* the next slot of the group takes it */
            out_close(&P.events, 1);
            if (out_open(&P.events, VT_SLOT_PACK, VT_STREAM_EVENTS))
                return -1;
            if (put(&P.events, P.zbuf, c, 0))
                c = 0;
        }
        if (!c) {
            P.lost_records++; /* readers skip this group's events to the next snapshot */
            break;
        }
        P.snap_bytes += c;
        at += piece;
    }
    return 0;
}

/* pack_events: data[0, len) (events only) into EVENTS chunks, each fed to the live set once
 * stored; a piece that does not fit goes to a new slot, halved when even that is too small. */
static void pack_events(uint64_t raw_seq, const char *data, size_t len)
{
    size_t at = 0;
    while (at < len) {
        if (!P.events.open && open_events(raw_seq)) {
            P.lost_records++;
            return;
        }
        size_t piece = len - at;
        for (;;) {
            uint64_t f, l, n = span(data + at, piece, &f, &l);
            size_t c = chunk(raw_seq, VT_STREAM_EVENTS, data + at, piece, n, f, l, vt__pl_events());
            if (c && put(&P.events, P.zbuf, c, 0) == 0) {
                P.group_bytes += c;
                P.events.events += n;
                if (!P.events.first_ns)
                    P.events.first_ns = f;
                if (l)
                    P.events.last_ns = l;
                P.events.chunks++;
                if (l)
                    P.last_ns = l;
                feed(data + at, piece, 0, 1);
                at += piece;
                break;
            }
            if (P.events.chunks) { /* a fresh slot may take it */
                out_close(&P.events, 1);
                break;
            }
            size_t half = 0; /* the record boundary nearest the middle */
            for (size_t k = 0; k < piece && k < piece / 2; k += rec_size(data + at + k))
                half = k;
            if (!half) { /* not even one record fits: it is lost */
                feed(data + at, rec_size(data + at), 0, 1);
                at += rec_size(data + at);
                P.lost_records++;
                break;
            }
            piece = half;
        }
    }
}

/* pack_raw: one raw slot's records data[0, len) into chunks */
static void pack_raw(uint64_t raw_seq, const char *data, size_t len)
{
    if (!len)
        return;
    if (P.head_left) { /* the run's beginning: every record, as written */
        uint64_t f, l, n = span(data, len, &f, &l);
        size_t c = chunk(raw_seq, VT_STREAM_HEAD, data, len, n, f, l, vt__pl_events());
        int ok = c && put(&P.head, P.zbuf, c, 0) == 0;
        if (!ok && c && P.head_left >= vt__ws.slot_size) {
            out_close(&P.head, 0);
            ok = out_open(&P.head, VT_SLOT_PACK, VT_STREAM_HEAD) == 0 &&
                 put(&P.head, P.zbuf, c, 0) == 0;
            if (ok && P.head_left != UINT64_MAX)
                P.head_left -= vt__ws.slot_size;
        }
        if (ok) {
            if (l)
                P.last_ns = l;
            feed(data, len, 1, 1);
            return;
        }
        P.head_left = 0; /* the head is full: the window from here on */
        out_close(&P.head, 0);
    }
    size_t nm = 0, ne = 0;
    if (len > P.meta_cap || len > P.evs_cap) {
        char *a = vt__wm_realloc(P.meta, len), *b = a ? vt__wm_realloc(P.evs, len) : NULL;
        if (a)
            P.meta = a, P.meta_cap = len;
        if (b)
            P.evs = b, P.evs_cap = len;
        if (!a || !b) {
            P.lost_records++;
            return;
        }
    }
    for (size_t at = 0; at < len; at += rec_size(data + at)) {
        uint32_t s = rec_size(data + at);
        if (is_event(rec_type(data + at)))
            memcpy(P.evs + ne, data + at, s), ne += s;
        else
            memcpy(P.meta + nm, data + at, s), nm += s;
    }
    if (nm) {
        size_t c = chunk(raw_seq, VT_STREAM_META, P.meta, nm, 0, 0, 0, vt__pl_events());
        int ok = c && put(&P.meta_o, P.zbuf, c, 0) == 0;
        if (!ok && c) {
            out_close(&P.meta_o, 0);
            ok = out_open(&P.meta_o, VT_SLOT_PACK, VT_STREAM_META) == 0 &&
                 put(&P.meta_o, P.zbuf, c, 0) == 0;
        }
        if (!ok)
            P.lost_records++;
        feed(P.meta, nm, 1, 0);
    }
    if (ne)
        pack_events(raw_seq, P.evs, ne);
}

/* ---- the thread -------------------------------------------------------------------------- */

/* pack_window_locked: packs the oldest queued raw window (waiting, ~1 s at most, for records
 * still being stored) and frees its slot. vt__ws.lock held; released while packing. */
static void pack_window_locked(void)
{
    window *w = vt__ws.pack_first;
    vt__ws.pack_first = w->next_retired;
    if (!vt__ws.pack_first)
        vt__ws.pack_last = NULL;
    uint64_t s = atomic_load(&w->sealed);
    for (int i = 0; !vt__window_scan_locked(w, s) && i < 11000; i++) {
        pthread_mutex_unlock(&vt__ws.lock);
        struct timespec ts = {0, i < 1000 ? 1000 : 100000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&vt__ws.lock);
    }
    uint64_t upto = w->scanned;
    int whole = upto >= s; /* else a writer still holds a record in it (descheduled a second) */
    pthread_mutex_unlock(&vt__ws.lock);
    pack_raw(w->raw_seq, w->base, upto);
    flush_summary(w->raw_seq);
    pthread_mutex_lock(&vt__ws.lock);
    if (whole) { /* freed; one a writer may still store into stays mapped, and stays in the
                  * file (readers take a raw slot over its chunks) */
        w->unmapped = 1;
        pthread_mutex_unlock(&vt__ws.lock);
        vt__slot_wipe(w->slot, w->map);
        pthread_mutex_lock(&vt__ws.lock);
        vt__slot_release_locked(w->slot, NULL);
    }
    /* free slots kept for the writers, so that they seldom find none: old events go first (4:
     * the milliseconds of a snapshot or a drop at a million events a second) */
    while (vt__ws.n_free < RAW_RESERVE && vt__ws.n_slots >= vt__ws.max_slots && P.nfifo) {
        pthread_mutex_unlock(&vt__ws.lock);
        int64_t d = drop_oldest();
        pthread_mutex_lock(&vt__ws.lock);
        if (d < 0)
            break;
        vt__slot_release_locked((uint64_t)d, NULL);
    }
    /* records were dropped for want of a raw slot: one is free now */
    if (!atomic_load(&vt__ws.cur) && atomic_load(&vt__ws.state) == W_OPEN && !P.stop) {
        int err = 0;
        window *nw = vt__window_new(0, 0, &err);
        if (nw)
            vt__window_set_cur_locked(nw);
    }
}

static void *pack_main(void *arg)
{
    (void)arg; /* (every signal blocked: vt__thread_start) */
    pthread_mutex_lock(&vt__ws.lock);
    for (;;) {
        while (!vt__ws.pack_first && !P.stop)
            pthread_cond_wait(&vt__ws.pack_cond, &vt__ws.lock);
        if (!vt__ws.pack_first)
            break;
        pack_window_locked();
    }
    pthread_mutex_unlock(&vt__ws.lock);
    return NULL;
}

static const ZSTD_customMem ZMEM = {vt__wm_alloc_cb, vt__wm_free_cb, NULL}; /* writer_mem.h */
int vt__pack_start_locked(const vt_file_header *h, int *err)
{
    vt__pl_reset();
    ZSTD_freeCCtx(P.cctx);
    vt__wm_free(P.zbuf), vt__wm_free(P.meta), vt__wm_free(P.evs), vt__wm_free(P.snap),
        vt__wm_free(P.fifo), vt__wm_free(P.sum);
    memset(&P, 0, sizeof P);
    P.head_left = vt__ws.max_size ? vt__ws.max_size / 8 : UINT64_MAX;
    if (P.head_left != UINT64_MAX && P.head_left < 2 * vt__ws.slot_size)
        P.head_left = 2 * vt__ws.slot_size;
    P.cctx = ZSTD_createCCtx_advanced(ZMEM);                           /* NULL: chunks are stored */
    if ((*err = out_open(&P.head, VT_SLOT_PACK, VT_STREAM_HEAD)) != 0) /* slot 0: the header */
        return -1;
    memcpy(P.head.map, h, sizeof *h);
    P.head_left -= P.head_left == UINT64_MAX ? 0 : vt__ws.slot_size;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_JOINABLE);
    P.have_thread = vt__pack_thread_start(&P.thread, &a, pack_main, pack_window_locked);
    pthread_attr_destroy(&a);
    return 0; /* without a thread the close packs everything (raw slots may run out first) */
}

void vt__pack_finish_locked(window *w, uint64_t s, uint16_t flags, int err)
{
    if (w) { /* NULL: the writers had no raw slot when the trace ended */
        atomic_store(&w->sealed, s);
        vt__window_retire_locked(w);
    }
    P.stop = 1;
    pthread_cond_broadcast(&vt__ws.pack_cond);
    if (P.have_thread && !pthread_equal(P.thread, pthread_self())) {
        int held = vt__ws_unlock_all(); /* (twice inside a fork: writer_internal.h) */
        pthread_join(P.thread, NULL);
        vt__ws_relock(held);
        P.have_thread = 0;
    }
    for (vt__pack_inline_wait_locked(); vt__ws.pack_first;)
        pack_window_locked();
    pthread_mutex_unlock(&vt__ws.lock);
    uint64_t now = vt__now_ns();
    vt__pl_end(now, emit_summary);
    flush_summary(vt__ws.raw_seq);
    out_close(&P.head, 0);
    out_close(&P.meta_o, 0);
    out_close(&P.events, 1);
    if (!P.summary.open && !out_open(&P.summary, VT_SLOT_SUMMARY, 0))
        flush_summary(vt__ws.raw_seq); /* (what waited for a slot) */
    pthread_mutex_lock(&vt__ws.lock);
    uint64_t records, events;
    vt__window_totals_locked(&records, &events);
    vt_rec_trailer t = {now,
                        events,
                        atomic_load(&vt__ws.n_dropped), /* (a lost group: missing) */
                        records,
                        atomic_load(&vt__ws.stacks_truncated),
                        (uint32_t)err};
    if (vt__ws.full_err && !err) { /* the disk or the file-size limit stopped the grid */
        flags |= VT_TRAILER_DISK_FULL;
        t.error = (uint32_t)vt__ws.full_err;
    }
    if (P.summary.open) {
        char rec[TRAILER_ROOM];
        uint64_t h =
            (uint64_t)VT_REC_TRAILER | ((uint64_t)flags << 16) | ((uint64_t)TRAILER_ROOM << 32);
        memcpy(rec, &h, 8);
        memcpy(rec + 8, &t, sizeof t);
        put(&P.summary, rec, TRAILER_ROOM, 1); /* kept mapped: later drops are counted in it */
        vt__writer_late_at(P.summary.base + P.summary.pos - TRAILER_ROOM);
        P.summary.open = 0;
    }
    vt__slots_trim_locked();
}

void vt__pack_forget_child(void)
{
    memset(&P, 0, sizeof P); /* the parent's memory, as the fork left it: never freed here */
    vt__pl_forget();
}
