/* fuzz_chunked.c — libFuzzer target for the chunked layout (trace format 1.3, run --max-size /
 * --compress; reader_chunked.c, reader_snapjoin.c): the input is a plain trace (changed as one
 * by the structure-aware mutator, harness.c) that this harness lays out as a writer would —
 * raw slots of a capacity, PACK slots of HEAD / META / SNAP + EVENTS chunks, stored or zstd
 * frames, dropped EVENTS slots, a SUMMARY slot of STEP chunks and the trailer — with the
 * parameters of an FZ_PARAMS record of the input (an unknown type: readers skip it) or, where
 * it has none, a hash of it; then up to three fields of the layout (SLOT and CHUNK headers,
 * frame headers, SNAPSHOT fields) are set to other values. The file is read by `dump`,
 * `flame --at all`, the summary reader (`watch`'s) and, for a share of inputs, the report. An
 * input that is already chunked (its first record a SLOT) is read as it is. FZ_WRITE=FILE keeps
 * the file as laid out (a finding's regression input for tests/data/, read by every target).
 * Corpus: tests/fuzz/corpus/chunked/ (seeds made by chunked_seeds.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "commands.h"
#include "harness.h"
#include "reader.h"
#include "reader_decode.h"
#include "report.h"
#include "report_views.h"

#define FZ_PARAMS 0x7ff0 /* the record type of the layout's parameters (fz_params) */
#define MAX_SLOTS 40
#define MAX_RECS 8192
#define MAX_FIELDS 2048
#define ROOM(c) ((c)->S - 32 - VT_SLOT_REC_SIZE) /* the records a slot holds (slot 0's less) */

typedef struct fz_params {
    uint32_t raw_cap;    /* record bytes per raw slot (clamped to [256, S/2]) */
    uint32_t modes;      /* 2 bits per raw slot: 0 raw, 1 packed, 2 both, 3 packed as HEAD */
    uint32_t zmask;      /* bit per chunk: zstd (else stored) */
    uint32_t dropmask;   /* bit per EVENTS pack slot: dropped (zeroed) */
    uint16_t piece_cap;  /* a snapshot's piece, in 8-byte units (at least 8) */
    uint8_t zlevel;      /* 1 + zlevel % 3 */
    uint8_t flags;       /* FL_* */
    uint32_t corrupt[3]; /* low 16 bits: which field (0: none); high: the value */
} fz_params;
_Static_assert(sizeof(fz_params) == 32, "layout");
#define FL_SUMMARY 0x1u  /* STEP records and the trailer in SUMMARY slots */
#define FL_SNAP_ALL 0x2u /* a SNAP chunk before every EVENTS chunk (else per pack slot) */
#define FL_REVERSE 0x4u  /* slots after the first in reverse order */
#define FL_BIG 0x8u      /* 128 KiB slots (else 64 KiB) */
#define FL_TRIM 0x10u    /* the file ends at the last slot's last record */
#define FL_MAXSIZE 0x20u /* the SLOT records say a --max-size */
#define FL_REPORT 0x40u  /* the report built too */

typedef struct rec {
    const uint8_t *p; /* header included */
    uint32_t size;
    uint16_t type;
} rec;

typedef struct field {
    uint32_t off;
    uint8_t width;
} field;

typedef struct lay {
    fz_params P;
    uint64_t S;
    uint8_t *file; /* MAX_SLOTS slots of S bytes */
    int nslots;
    field f[MAX_FIELDS];
    int nf;
    unsigned nchunk;
    uint64_t pack_seq, sum_seq;
    /* the pack slot being filled per stream (HEAD, META, EVENTS, SUMMARY): slot index, used */
    int cur[4];
    uint64_t used[4];
    uint8_t *zbuf, *raw;
    size_t zcap, rawcap;
} lay;

static rec g_recs[MAX_RECS];
static size_t g_n;
static const rec *g_live[MAX_RECS];
static size_t g_nlive;

static void note(lay *L, uint64_t off, uint8_t width)
{
    if (L->nf < MAX_FIELDS)
        L->f[L->nf++] = (field){(uint32_t)off, width};
}

/* new_slot: a fresh slot with its SLOT record; its index, or -1 when the grid is full. The
 * slot's records start at slot_base(i) + 48. */
static uint64_t slot_base(const lay *L, int i)
{
    return i ? (uint64_t)i * L->S : 32;
}
static int new_slot(lay *L, uint64_t seq, uint32_t kind, uint32_t stream)
{
    if (L->nslots == MAX_SLOTS)
        return -1;
    int i = L->nslots++;
    uint8_t *p = L->file + slot_base(L, i);
    memset(L->file + (uint64_t)i * L->S + (i ? 0 : 32), 0, L->S - (i ? 0 : 32));
    vt_rec_header h = {VT_REC_SLOT, 0, VT_SLOT_REC_SIZE};
    vt_rec_slot s = {seq, L->S, L->P.flags & FL_MAXSIZE ? 8 * L->S : 0, kind, stream, 0};
    memcpy(p, &h, 8);
    memcpy(p + 8, &s, sizeof s);
    uint64_t o = slot_base(L, i);
    note(L, o, 2);
    note(L, o + 4, 4);
    note(L, o + 8, 8);
    note(L, o + 16, 8);
    note(L, o + 32, 4);
    note(L, o + 36, 4);
    note(L, o + 40, 8);
    return i;
}

static int grow(uint8_t **b, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    uint8_t *nb = realloc(*b, n);
    if (!nb)
        return -1;
    *b = nb;
    *cap = n;
    return 0;
}

/* put_chunk: raw_len bytes of records as a CHUNK of stream into the pack slot of stream index
 * si (a new slot of kind / pstream when it does not fit); a chunk no slot holds is left out. */
static int put_chunk(lay *L, int si, uint32_t kind, uint32_t pstream, uint32_t stream,
                     uint64_t raw_seq, const uint8_t *raw, size_t raw_len, uint64_t events,
                     uint64_t first)
{
    if (!raw_len)
        return 0;
    const uint8_t *data = raw;
    size_t stored = raw_len;
    unsigned k = L->nchunk++;
    uint32_t method = (L->P.zmask >> (k % 32)) & 1;
    if (method) {
        size_t bound = ZSTD_compressBound(raw_len);
        if (grow(&L->zbuf, &L->zcap, bound))
            return -1;
        stored = ZSTD_compress(L->zbuf, bound, raw, raw_len, 1 + L->P.zlevel % 3);
        if (ZSTD_isError(stored))
            return -1;
        data = L->zbuf;
    }
    uint64_t size = 8 + sizeof(vt_rec_chunk) + ((stored + 7) & ~(uint64_t)7);
    if (size > ROOM(L))
        return 0; /* no writer makes it: left out */
    if (L->cur[si] < 0 || L->used[si] + size > ROOM(L)) {
        uint64_t seq = kind == VT_SLOT_SUMMARY ? ++L->sum_seq : ++L->pack_seq;
        if ((L->cur[si] = new_slot(L, seq, kind, pstream)) < 0)
            return -1;
        L->used[si] = 0;
    }
    uint64_t o = slot_base(L, L->cur[si]) + VT_SLOT_REC_SIZE + L->used[si];
    uint8_t *p = L->file + o;
    vt_rec_header h = {VT_REC_CHUNK, 0, (uint32_t)size};
    vt_rec_chunk c = {raw_seq, stream, method, (uint32_t)raw_len, (uint32_t)stored, events,
                      0,       0,      first};
    memcpy(p, &h, 8);
    memcpy(p + 8, &c, sizeof c);
    memcpy(p + 8 + sizeof c, data, stored);
    L->used[si] += size;
    for (unsigned f = 0; f < 8; f++) /* size, raw_seq, stream, method, raw_len, stored, events */
        note(L, o + (uint64_t[]){4, 8, 16, 20, 24, 28, 32, 56}[f], f == 1 || f >= 6 ? 8 : 4);
    note(L, o + 64, 4); /* a frame's magic, its header, its last bytes */
    note(L, o + 68, 1);
    note(L, o + 69, 1);
    note(L, o + 70, 4);
    if (stored >= 8)
        note(L, o + 64 + stored - 4, 4);
    for (unsigned f = 0; !method && f < 4; f++) { /* SNAPSHOT / STEP fields of a stored chunk */
        unsigned at = (unsigned[]){16, 48, 56, 72}[f]; /* events_before, n_allocs, .. n_stacks */
        if (at + 8 <= stored)
            note(L, o + 64 + at, f == 3 ? 4 : 8);
    }
    return 0;
}

/* gather: the records of [a, b) whose type passes keep into L->raw; their bytes (events
 * counted into *ev). keep: 0 all but STEP / trailer, 1 definitions, 2 events, 3 STEP. */
static int is_event(uint16_t t)
{
    return t == VT_REC_ALLOC || t == VT_REC_FREE || t == VT_REC_MEMINFO || t == VT_REC_OOM;
}
static int summary_rec(const lay *L, uint16_t t)
{
    return (L->P.flags & FL_SUMMARY) && (t == VT_REC_STEP || t == VT_REC_TRAILER);
}
static size_t gather(lay *L, size_t a, size_t b, int keep, uint64_t *ev)
{
    size_t n = 0;
    *ev = 0;
    for (size_t i = a; i < b; i++) {
        uint16_t t = g_recs[i].type;
        int ok = keep == 3           ? t == VT_REC_STEP && summary_rec(L, t)
                 : summary_rec(L, t) ? 0
                 : keep == 1         ? !is_event(t)
                 : keep == 2         ? is_event(t)
                                     : 1;
        if (!ok || grow(&L->raw, &L->rawcap, n + g_recs[i].size))
            continue;
        memcpy(L->raw + n, g_recs[i].p, g_recs[i].size);
        n += g_recs[i].size;
        *ev += t == VT_REC_ALLOC || t == VT_REC_FREE;
    }
    return n;
}

/* live: the ALLOC records alive before record index upto (paired by address) */
static void live_until(size_t upto)
{
    g_nlive = 0;
    for (size_t i = 0; i < upto; i++) {
        if (g_recs[i].type == VT_REC_ALLOC && g_recs[i].size >= 32 && g_nlive < MAX_RECS)
            g_live[g_nlive++] = &g_recs[i];
        else if (g_recs[i].type == VT_REC_FREE && g_recs[i].size >= 24)
            for (size_t k = g_nlive; k-- > 0;)
                if (rd64(g_live[k]->p + 16) == rd64(g_recs[i].p + 16)) {
                    g_live[k] = g_live[--g_nlive];
                    break;
                }
    }
}

/* snap: the SNAPSHOT of the live set before record index at (first: events before it), in
 * pieces of the piece size, into the EVENTS stream's pack slots */
static int snap(lay *L, uint64_t raw_seq, size_t at, uint64_t first, uint64_t tt)
{
    live_until(at);
    size_t n = 8 + sizeof(vt_rec_snapshot);
    if (grow(&L->raw, &L->rawcap, n))
        return -1;
    vt_rec_snapshot s = {tt, first, 0, 0, 0, g_nlive, 0};
    for (size_t i = 0; i < g_nlive; i++)
        s.live_bytes += rd64(g_live[i]->p + 24);
    vt_rec_header h = {VT_REC_SNAPSHOT, 0, (uint32_t)n};
    memcpy(L->raw, &h, 8);
    memcpy(L->raw + 8, &s, sizeof s);
    size_t piece = 8u * (L->P.piece_cap < 8 ? 8 : L->P.piece_cap), start = 0;
    if (piece > L->S / 2)
        piece = L->S / 2;
    for (size_t i = 0; i <= g_nlive; i++) {
        size_t sz = i < g_nlive ? g_live[i]->size : 0;
        if (i == g_nlive || (n - start + sz > piece && n > start)) {
            if (put_chunk(L, 2, VT_SLOT_PACK, VT_STREAM_EVENTS, VT_STREAM_SNAP, raw_seq,
                          L->raw + start, n - start, 0, first))
                return -1;
            start = n;
        }
        if (i < g_nlive) {
            if (grow(&L->raw, &L->rawcap, n + sz))
                return -1;
            memcpy(L->raw + n, g_live[i]->p, sz);
            n += sz;
        }
    }
    return 0;
}

/* raw_slot: the records [a, b) as RAW slot seq */
static int raw_slot(lay *L, uint64_t seq, size_t a, size_t b)
{
    uint64_t ev;
    size_t n = gather(L, a, b, 0, &ev);
    int i = new_slot(L, seq, VT_SLOT_RAW, 0);
    if (i < 0)
        return -1;
    memcpy(L->file + slot_base(L, i) + VT_SLOT_REC_SIZE, L->raw, n);
    return 0;
}

/* pack: raw slot seq's records [a, b) as chunks; first: the events before them */
static int pack(lay *L, uint64_t seq, size_t a, size_t b, uint64_t first, int as_head)
{
    uint64_t ev;
    size_t n;
    if (as_head) {
        n = gather(L, a, b, 0, &ev);
        if (put_chunk(L, 0, VT_SLOT_PACK, VT_STREAM_HEAD, VT_STREAM_HEAD, seq, L->raw, n, ev,
                      first))
            return -1;
    } else {
        n = gather(L, a, b, 1, &ev);
        if (put_chunk(L, 1, VT_SLOT_PACK, VT_STREAM_META, VT_STREAM_META, seq, L->raw, n, 0, first))
            return -1;
        int fresh = L->cur[2] < 0 || (L->P.flags & FL_SNAP_ALL);
        n = gather(L, a, b, 2, &ev);
        uint64_t room = L->cur[2] < 0 ? 0 : ROOM(L) - L->used[2];
        fresh |= n + 8 + sizeof(vt_rec_chunk) + 8 > room; /* a new EVENTS pack slot */
        if (fresh && n) {
            L->cur[2] = -1;
            uint64_t tt = 0;
            for (size_t i = a; i < b && !tt; i++)
                if (is_event(g_recs[i].type) && g_recs[i].size >= 16)
                    tt = rd64(g_recs[i].p + 8);
            if (snap(L, seq, a, first, tt))
                return -1;
            n = gather(L, a, b, 2, &ev); /* (snap used the buffer) */
        }
        if (put_chunk(L, 2, VT_SLOT_PACK, VT_STREAM_EVENTS, VT_STREAM_EVENTS, seq, L->raw, n, ev,
                      first))
            return -1;
    }
    if (L->P.flags & FL_SUMMARY) {
        n = gather(L, a, b, 3, &ev);
        if (put_chunk(L, 3, VT_SLOT_SUMMARY, 0, VT_STREAM_SUMMARY, seq, L->raw, n, 0, 0))
            return -1;
    }
    return 0;
}

/* drop: the EVENTS pack slots the drop mask names zeroed (a --max-size drop) */
static void drop(lay *L)
{
    unsigned k = 0;
    for (int i = 0; i < L->nslots; i++) {
        uint8_t *p = L->file + slot_base(L, i);
        vt_rec_slot s;
        memcpy(&s, p + 8, sizeof s);
        if (rd32(p) == VT_REC_SLOT && s.kind == VT_SLOT_PACK && s.stream == VT_STREAM_EVENTS &&
            ((L->P.dropmask >> (k++ % 32)) & 1))
            memset(p, 0, 8);
    }
}

static const uint64_t values[] = {0,          1,           2,          3,          7,
                                  8,          16,          255,        4096,       65535,
                                  65536,      65537,       1u << 20,   16u << 20,  (16u << 20) + 1,
                                  1ull << 31, 0xffffffffu, 1ull << 32, 1ull << 63, ~0ull};

/* corrupt: field sel % nf set to a value picked by v */
static void corrupt(lay *L, uint32_t c)
{
    if (!(c & 0xffff) || !L->nf)
        return;
    field f = L->f[(c & 0xffff) % L->nf];
    uint64_t old = 0, v = c >> 16;
    memcpy(&old, L->file + f.off, f.width);
    switch (v & 3) {
    case 0:
        v = values[(v >> 2) % (sizeof values / sizeof *values)];
        break;
    case 1:
        v = old + ((v >> 2) & 0xff) - 128;
        break;
    case 2:
        v = old ^ (1ull << ((v >> 2) % (8u * f.width)));
        break;
    default:
        v = (v >> 2) * 8;
    }
    memcpy(L->file + f.off, &v, f.width);
}

static uint64_t fnv(const uint8_t *d, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

/* build: the input's records laid out in L->file; the file's size, 0 when the input is not a
 * trace */
static size_t build(lay *L, const uint8_t *d, size_t n)
{
    int have = 0;
    g_n = 0;
    if (n < 32)
        return 0;
    for (size_t at = 32; at + 8 <= n && g_n < MAX_RECS;) {
        uint16_t t = (uint16_t)(d[at] | d[at + 1] << 8);
        uint32_t s = rd32(d + at + 4);
        if (!t || s < 8 || s % 8 || s > n - at)
            break;
        if (t == FZ_PARAMS && s >= 8 + sizeof L->P && !have)
            memcpy(&L->P, d + at + 8, sizeof L->P), have = 1;
        else if (t != FZ_PARAMS)
            g_recs[g_n++] = (rec){d + at, s, t};
        at += s;
    }
    if (!have) { /* no parameters: a hash of the input */
        uint64_t h = fnv(d, n), g = h * 0x9e3779b97f4a7c15ull;
        uint64_t k = g * 0x9e3779b97f4a7c15ull; /* fields changed: 0 to 3, one most often */
        L->P = (fz_params){
            (uint32_t)h, (uint32_t)(h >> 32), (uint32_t)g, (uint32_t)(g >> 40), (uint16_t)(g >> 16),
            0,           (uint8_t)(h >> 8),   {0, 0, 0}};
        L->P.corrupt[0] = h & 0x3 ? (uint32_t)k : 0;
        L->P.corrupt[1] = (h & 0xc) == 0xc ? (uint32_t)(k >> 32) : 0;
        L->P.corrupt[2] = (h & 0x30) == 0x30 ? (uint32_t)(k * 3) : 0;
    }
    L->S = L->P.flags & FL_BIG ? 128u << 10 : 64u << 10;
    L->nslots = L->nf = 0;
    L->nchunk = 0;
    L->pack_seq = L->sum_seq = 0;
    for (int i = 0; i < 4; i++)
        L->cur[i] = -1, L->used[i] = 0;
    memcpy(L->file, d, 32);
    uint64_t cap = L->P.raw_cap % (L->S / 2);
    if (cap < 256)
        cap = 256;
    uint64_t seq = 0, first = 0;
    for (size_t a = 0, b; a < g_n; a = b) {
        uint64_t bytes = 0, ev = 0;
        for (b = a; b < g_n && (b == a || bytes + g_recs[b].size <= cap); b++) {
            bytes += g_recs[b].size;
            ev += g_recs[b].type == VT_REC_ALLOC || g_recs[b].type == VT_REC_FREE;
        }
        if (bytes > ROOM(L) / 2)
            continue; /* a record no slot takes */
        unsigned mode = (L->P.modes >> (2 * (seq % 16))) & 3;
        seq++;
        if ((mode == 0 || mode == 2) && raw_slot(L, seq, a, b))
            break;
        if (mode && pack(L, seq, a, b, first, mode == 3 || seq == 1))
            break;
        first += ev;
    }
    if (L->P.flags & FL_SUMMARY) { /* the trailer, raw, after the last summary chunks */
        size_t tn = 0;
        for (size_t i = 0; i < g_n; i++)
            if (g_recs[i].type == VT_REC_TRAILER && !grow(&L->raw, &L->rawcap, tn + g_recs[i].size))
                memcpy(L->raw + tn, g_recs[i].p, g_recs[i].size), tn += g_recs[i].size;
        if (tn && (L->cur[3] < 0 || L->used[3] + tn > ROOM(L))) {
            if ((L->cur[3] = new_slot(L, ++L->sum_seq, VT_SLOT_SUMMARY, 0)) >= 0)
                L->used[3] = 0;
        }
        if (tn && L->cur[3] >= 0 && L->used[3] + tn <= ROOM(L))
            memcpy(L->file + slot_base(L, L->cur[3]) + VT_SLOT_REC_SIZE + L->used[3], L->raw, tn);
    }
    if (!L->nslots)
        return 0;
    drop(L);
    if ((L->P.flags & FL_REVERSE) && L->nslots > 2) { /* slots 1.. in reverse (fields too) */
        uint8_t *tmp = malloc(L->S);
        if (tmp)
            for (int i = 1, j = L->nslots - 1; i < j; i++, j--) {
                memcpy(tmp, L->file + (uint64_t)i * L->S, L->S);
                memcpy(L->file + (uint64_t)i * L->S, L->file + (uint64_t)j * L->S, L->S);
                memcpy(L->file + (uint64_t)j * L->S, tmp, L->S);
            }
        free(tmp);
        for (int k = 0; k < L->nf; k++) {
            uint64_t i = L->f[k].off / L->S;
            if (i)
                L->f[k].off = (uint32_t)((L->nslots - i) * L->S + L->f[k].off % L->S);
        }
    }
    for (int k = 0; k < 3; k++)
        corrupt(L, L->P.corrupt[k]);
    size_t size = (size_t)L->nslots * L->S;
    if (L->P.flags & FL_TRIM) { /* the last slot's zero tail cut, after its last record */
        size_t at = slot_base(L, L->nslots - 1);
        while (at + 8 <= size) {
            uint32_t s = rd32(L->file + at + 4);
            if (!rd32(L->file + at) || s < 8 || s % 8 || s > size - at)
                break;
            at += s;
        }
        size = at + 8 <= size ? at + 8 : size;
    }
    return size;
}

static void summary_read(const char *path)
{
    char msg[256];
    reader *r = reader_open_summary(path, msg, sizeof msg);
    reader_record rec;
    if (!r)
        return;
    while (reader_next(r, &rec))
        ;
    reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static lay L;
    static FILE *devnull;
    if (!L.file && !(L.file = malloc((size_t)MAX_SLOTS << 17)))
        abort();
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    int chunked = size >= 34 && data[32] == VT_REC_SLOT && !data[33];
    size_t n = chunked ? size : build(&L, data, size);
    if (!n)
        return 0;
    char *path = (char *)harness_file(chunked ? data : L.file, n);
    const char *keep = getenv("FZ_WRITE"); /* the file as laid out (a finding for tests/data) */
    FILE *kf = keep ? fopen(keep, "wb") : NULL;
    if (kf) {
        fwrite(chunked ? data : L.file, 1, n, kf);
        fclose(kf);
    }
    harness_cmd(cmd_dump, "dump", "--no-resolve", path, NULL);
    if (chunked || (L.P.flags & FL_REPORT)) { /* (half the speed: for a share of inputs) */
        report_ctx c;
        char err[512];
        if (report_of_trace(path, &c, err, sizeof err) == 0)
            report_text(devnull, &c);
        report_free(&c);
    }
    harness_cmd(cmd_flame, "flame", "--at", "all", path, NULL);
    summary_read(path);
    return 0;
}
