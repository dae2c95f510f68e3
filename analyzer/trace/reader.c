/* reader.c — the streaming trace reader (reader.h): one fd, one growable-but-bounded
 * buffer (a window on the file, at most one maximal record larger than READER_BUF), records
 * decoded in place (reader_decode.c) with no per-record allocation. Trusts no length
 * (trace_format.h rules). */
#include "reader.h"
#include "reader_blocks.h"
#include "reader_chunked.h"
#include "reader_decode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READER_BUF (256u << 10) /* read window; grows only for records larger than it */

/* ---- the reader state ------------------------------------------------------------------- */

struct reader {
    int fd;
    FILE *fp;    /* reader_open_stream: read through it instead (the caller's, not closed) */
    chunked *ck; /* the chunked layout: bytes come from it (reader_chunked.c) */
    blocks *bl;  /* the block layout (2.0): bytes come from it in time order (reader_blocks.c) */
    char *path;
    vt_file_header hdr;
    uint64_t fsize; /* at open */
    uint8_t *buf;   /* window: buf[0..len) holds file bytes [buf_off, buf_off + len) */
    size_t cap, len;
    uint64_t buf_off;
    uint64_t pos; /* file offset of the next record */
    bool eof;     /* read() returned 0 */
    bool done;
    reader_status st;
    uint64_t err_off;
    uint64_t nrec;
    char msg[256];
    bool bad_header;      /* the header itself is not a vramtrace header (reader_describe) */
    uint64_t nstacks;     /* STACK records read */
    uint64_t stack_bound; /* the highest stack id a record may name now (VT_STACK_ID_SLACK) */
    bool any_stack_ids;   /* reader_any_stack_ids: no bound */
    uint64_t snap_until;  /* records read once a SNAPSHOT's n_allocs ALLOC records all came */
};

/* set_status: records a final status with offset and message; always returns false so
 * reader_next can `return set_status(...)`. */
static bool set_status(reader *r, reader_status st, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->st = st;
    r->err_off = off;
    r->done = true;
    return false;
}

/* fill: makes file bytes [r->pos, r->pos + need) present in the window unless EOF comes
 * first. Returns the number of bytes from r->pos available (>= need unless EOF), or -1 on a
 * read error (status set). need <= VT_REC_MAX_SIZE + 8. */
static ssize_t fill(reader *r, size_t need)
{
    size_t start = (size_t)(r->pos - r->buf_off);
    size_t have = r->len - start;
    if (have >= need || r->eof)
        return (ssize_t)have;
    if (start > 0) {
        memmove(r->buf, r->buf + start, have);
        r->buf_off = r->pos;
        r->len = have;
    }
    if (need > r->cap) {
        size_t ncap = need + READER_BUF;
        uint8_t *nb = realloc(r->buf, ncap);
        if (!nb) {
            set_status(r, READER_IOERR, r->pos, "out of memory for a %zu-byte record", need);
            return -1;
        }
        r->buf = nb;
        r->cap = ncap;
    }
    while (r->len < need) {
        ssize_t n;
        if (r->ck) { /* the chunked layout: the plain trace it stands for */
            n = chunked_read(r->ck, r->buf + r->len, r->cap - r->len);
            if (n < 0) {
                set_status(r, READER_MALFORMED, r->buf_off + r->len, "%s", chunked_error(r->ck));
                return -1;
            }
        } else if (r->bl) { /* the block layout: its records in time order */
            n = blocks_read(r->bl, r->buf + r->len, r->cap - r->len);
            if (n < 0) {
                set_status(r, READER_MALFORMED, blocks_error_offset(r->bl), "%s (file byte)",
                           blocks_error(r->bl));
                return -1;
            }
        } else if (r->fp) { /* the caller's stream: what its buffer holds comes first */
            size_t got = fread(r->buf + r->len, 1, r->cap - r->len, r->fp);
            if (!got && ferror(r->fp)) {
                set_status(r, READER_IOERR, r->buf_off + r->len, "read failed: %s",
                           strerror(errno ? errno : EIO));
                return -1;
            }
            n = (ssize_t)got;
        } else {
            n = read(r->fd, r->buf + r->len, r->cap - r->len);
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            set_status(r, READER_IOERR, r->buf_off + r->len, "read failed: %s", strerror(errno));
            return -1;
        }
        if (n == 0) {
            r->eof = true;
            break;
        }
        r->len += (size_t)n;
    }
    return (ssize_t)r->len;
}

/* read_header: reads and validates the file header from offset 0 into r->hdr and sets
 * r->pos to the first record. Returns false with status set when it is bad. */
static bool read_header(reader *r, size_t have_bytes)
{
    r->pos = r->buf_off = 0;
    r->len = have_bytes; /* bytes the window holds already (reader_open_stream's head) */
    r->eof = false;
    r->done = false;
    r->st = READER_OK;
    r->err_off = 0;
    r->nrec = 0;
    r->nstacks = r->snap_until = 0;
    r->stack_bound = r->any_stack_ids ? UINT32_MAX : VT_STACK_ID_SLACK;
    r->msg[0] = 0;
    memset(&r->hdr, 0, sizeof r->hdr);
    ssize_t have = fill(r, sizeof(vt_file_header));
    if (have < 0)
        return false;
    r->bad_header = true; /* until the header is known good */
    if (have == 0) {      /* what empty input is: a file being written, a pipe's, a device's */
        const char *what = "an empty file: the traced process wrote nothing, or it is still "
                           "starting";
        struct stat st;
        int fdo = r->fp ? fileno(r->fp) : r->fd;
        if (fdo >= 0 && !fstat(fdo, &st) && !S_ISREG(st.st_mode))
            what = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)
                       ? "empty input: nothing was written into the pipe"
                       : "a device that reads as empty, not a trace file";
        return set_status(r, READER_MALFORMED, 0, "not a vramtrace trace (%s)", what);
    }
    if ((size_t)have < VT_MAGIC_LEN || memcmp(r->buf, VT_MAGIC, VT_MAGIC_LEN) != 0)
        return set_status(r, READER_MALFORMED, 0, "not a vramtrace trace (bad magic)");
    if ((size_t)have < sizeof(vt_file_header))
        return set_status(r, READER_MALFORMED, (uint64_t)have,
                          "a vramtrace trace cut short inside its header (%zd of 32 bytes)", have);
    memcpy(&r->hdr, r->buf, sizeof r->hdr);
    if (r->hdr.major != VT_VERSION_MAJOR && r->hdr.major != VT_BLOCKS_MAJOR)
        return set_status(r, READER_MALFORMED, 8,
                          "trace format version %u.%u, this vramtrace reads %u.x and %u.x (use "
                          "a matching vramtrace)",
                          r->hdr.major, r->hdr.minor, VT_VERSION_MAJOR, VT_BLOCKS_MAJOR);
    if (r->hdr.header_size < sizeof(vt_file_header) || r->hdr.header_size % VT_REC_ALIGN ||
        r->hdr.header_size > 4096)
        return set_status(r, READER_MALFORMED, 12, "malformed trace header (bad header_size %u)",
                          (unsigned)r->hdr.header_size);
    r->bad_header = false;
    r->pos = r->hdr.header_size;
    return true;
}

/* open_chunked: the file is in the chunked layout: its bytes come from reader_chunked.c from the
 * header on (re-read through it); a malformed grid is a malformed trace at byte 32. */
static void open_chunked(reader *r, int summary_only, char *msg, size_t msgsz)
{
    char why[200];
    r->ck = chunked_open(r->fd, r->fsize, &r->hdr, summary_only, why, sizeof why);
    if (!r->ck) {
        set_status(r, READER_MALFORMED, r->hdr.header_size, "%s", why);
        if (msg && msgsz)
            reader_describe(r, msg, msgsz);
        return;
    }
    if (!read_header(r, 0) && msg && msgsz) /* its first chunk did not read */
        reader_describe(r, msg, msgsz);
}

/* open_blocks: the file (or the stream, of which nhead bytes from head are read) is in the block
 * layout: its bytes come from reader_blocks.c from the header on (read again through it) */
static void open_blocks(reader *r, const void *head, size_t nhead, char *msg, size_t msgsz)
{
    r->bl = blocks_open(r->fd, r->fp, head, nhead);
    if (!r->bl) {
        set_status(r, READER_IOERR, 0, "out of memory");
    } else if (r->fd >= 0 || !r->fp || nhead >= r->hdr.header_size) {
        if (read_header(r, 0))
            return;
    } else {
        set_status(r, READER_MALFORMED, 0, "the header of a stream could not be read again");
    }
    if (msg && msgsz)
        reader_describe(r, msg, msgsz);
}

int reader_follow(reader *r)
{
    struct stat sb;
    if (r->ck || r->st != READER_TRUNCATED || r->bad_header || r->pos < r->hdr.header_size ||
        (r->bl ? blocks_follow(r->bl) < 0 : lseek(r->fd, (off_t)r->pos, SEEK_SET) != (off_t)r->pos))
        return -1;
    r->done = r->eof = false;
    r->st = READER_OK;
    r->msg[0] = 0;
    r->err_off = 0;
    r->buf_off = r->pos; /* what was read past pos (zeros, a record in flight) is read again */
    r->len = 0;
    if (fstat(r->fd, &sb) == 0)
        r->fsize = (uint64_t)sb.st_size;
    return 0;
}

void reader_watching(reader *r, int on)
{
    if (r->bl)
        blocks_watching(r->bl, on);
}

const chunked_info *reader_chunked_info(const reader *r)
{
    return r->ck ? chunked_get_info(r->ck) : NULL;
}

static reader *open_file(const char *path, int summary_only, char *msg, size_t msgsz);

/* first_is_slot: the first record is a SLOT: the chunked layout (1.3) */
static bool first_is_slot(reader *r)
{
    ssize_t have = fill(r, 8);
    return have >= 8 && r->buf[r->pos - r->buf_off] == VT_REC_SLOT &&
           !r->buf[r->pos - r->buf_off + 1];
}

/* refuse_chunked_stream: the chunked layout is read by slot, out of order: from its file only */
static void refuse_chunked_stream(reader *r, char *msg, size_t msgsz)
{
    set_status(r, READER_MALFORMED, r->pos,
               "a bounded or compressed trace (run --max-size / --compress) is read from its "
               "file, not from a pipe");
    if (msg && msgsz)
        reader_describe(r, msg, msgsz);
}

reader *reader_open(const char *path, char *msg, size_t msgsz)
{
    return open_file(path, 0, msg, msgsz);
}

reader *reader_open_summary(const char *path, char *msg, size_t msgsz)
{
    return open_file(path, 1, msg, msgsz);
}

static reader *open_file(const char *path, int summary_only, char *msg, size_t msgsz)
{
    reader *r = calloc(1, sizeof *r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (!r || fd < 0 || fstat(fd, &sb) != 0) {
        if (msg && msgsz)
            snprintf(msg, msgsz, "%s: %s", path, strerror(r ? errno : ENOMEM));
        if (fd >= 0)
            close(fd);
        free(r);
        return NULL;
    }
    if (S_ISDIR(sb.st_mode)) {
        if (msg && msgsz)
            snprintf(msg, msgsz, "%s: %s", path, strerror(EISDIR));
        close(fd);
        free(r);
        return NULL;
    }
    r->fd = fd;
    r->fsize = (uint64_t)sb.st_size;
    r->path = strdup(path);
    r->cap = READER_BUF;
    r->buf = malloc(r->cap);
    if (!r->path || !r->buf) {
        if (msg && msgsz)
            snprintf(msg, msgsz, "%s: %s", path, strerror(ENOMEM));
        reader_close(r);
        return NULL;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (!read_header(r, 0) && msg && msgsz)
        reader_describe(r, msg, msgsz);
    else if (r->st == READER_OK && r->hdr.major == VT_BLOCKS_MAJOR)
        open_blocks(r, NULL, 0, msg, msgsz);
    else if (r->st == READER_OK && first_is_slot(r)) {
        if (chunked_detect(fd, r->hdr.header_size))
            open_chunked(r, summary_only, msg, msgsz);
        else
            refuse_chunked_stream(r, msg, msgsz);
    }
    return r;
}

reader *reader_open_stream(FILE *fp, const char *path, const void *head, size_t nhead, char *msg,
                           size_t msgsz)
{
    reader *r = calloc(1, sizeof *r);
    if (r) {
        r->fd = -1;
        r->fp = fp;
        r->path = strdup(path);
        r->cap = READER_BUF > nhead ? READER_BUF : nhead;
        r->buf = malloc(r->cap);
    }
    if (!r || !r->path || !r->buf) {
        if (msg && msgsz)
            snprintf(msg, msgsz, "%s: %s", path, strerror(ENOMEM));
        reader_close(r);
        return NULL;
    }
    struct stat sb;
    if (fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode))
        r->fsize = (uint64_t)sb.st_size;
    if (nhead)
        memcpy(r->buf, head, nhead);
    if (!read_header(r, nhead) && msg && msgsz)
        reader_describe(r, msg, msgsz);
    else if (r->st == READER_OK && r->hdr.major == VT_BLOCKS_MAJOR)
        open_blocks(r, r->buf, r->len, msg, msgsz); /* (what the stream gave so far, again) */
    else if (r->st == READER_OK && first_is_slot(r))
        refuse_chunked_stream(r, msg, msgsz);
    return r;
}

void reader_any_stack_ids(reader *r)
{
    r->any_stack_ids = true;
    r->stack_bound = UINT32_MAX;
}

int reader_rewind(reader *r)
{
    if (r->ck)
        chunked_rewind(r->ck);
    else if (r->bl ? blocks_rewind(r->bl) < 0 : r->fp || lseek(r->fd, 0, SEEK_SET) != 0) {
        /* (the block layout rewinds a file only) */
        set_status(r, READER_IOERR, 0, "seek failed: %s",
                   strerror(r->fp || r->bl ? ESPIPE : errno));
        return -1;
    }
    read_header(r, 0);
    return r->st == READER_IOERR ? -1 : 0;
}

void reader_close(reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    chunked_close(r->ck);
    blocks_close(r->bl);
    free(r->buf);
    free(r->path);
    free(r);
}

reader_status reader_status_of(const reader *r)
{
    return r->st;
}
uint64_t reader_error_offset(const reader *r)
{
    return r->err_off;
}
const char *reader_error_message(const reader *r)
{
    return r->msg;
}
const vt_file_header *reader_header(const reader *r)
{
    return &r->hdr;
}
const char *reader_path(const reader *r)
{
    return r->path;
}
uint64_t reader_records(const reader *r)
{
    return r->nrec;
}
uint64_t reader_position(const reader *r)
{
    return r->pos;
}
uint64_t reader_file_size(const reader *r)
{
    return r->fsize;
}

void reader_describe(const reader *r, char *out, size_t len)
{
    if (!out || !len)
        return;
    if (r->st == READER_OK)
        snprintf(out, len, "%s: ok", r->path);
    else if (r->bad_header)
        snprintf(out, len, "%s: %s", r->path, r->msg);
    else if (r->st == READER_TRUNCATED)
        snprintf(out, len, "%s: truncated trace (%s)", r->path, r->msg);
    else
        snprintf(out, len, "%s: %s at byte %llu: %s", r->path,
                 r->st == READER_MALFORMED ? "malformed trace" : "read error",
                 (unsigned long long)r->err_off, r->msg);
}

const char *reader_trailer_key(unsigned flag)
{
#define VT_TRAILER_KEY(name, bit, key)                                                             \
    if (flag == (bit))                                                                             \
        return key;
    VT_TRAILER_FLAGS(VT_TRAILER_KEY)
#undef VT_TRAILER_KEY
    return NULL;
}

const char *reader_status_name(reader_status s)
{
    switch (s) {
    case READER_OK:
        return "ok";
    case READER_TRUNCATED:
        return "truncated";
    case READER_MALFORMED:
        return "malformed";
    default:
        return "io-error";
    }
}

_Static_assert(VT_FREE_REC_SIZE <= VT_ALLOC_REC_SIZE, "reader_next_event's window check");

/* set_rec: rec is the record of header h whose bytes b are at file offset pos */
static inline void set_rec(reader_record *rec, const vt_rec_header *h, const uint8_t *b,
                           uint64_t pos)
{
    rec->type = h->type;
    rec->flags = h->flags;
    rec->size = h->size;
    rec->offset = pos;
    rec->payload = b + 8;
    rec->payload_len = h->size - 8;
}

/* next: reader_next, an event decoded into *ev */
static inline __attribute__((always_inline)) bool next(reader *r, reader_record *rec,
                                                       reader_event *ev)
{
    if (r->done)
        return false;
    const uint8_t *b;
    ssize_t have;
    size_t start = (size_t)(r->pos - r->buf_off);
    if (r->len - start >= 8) {
        have = (ssize_t)(r->len - start); /* fast path: header already in the window */
    } else {
        have = fill(r, 8);
        if (have < 0)
            return false;
        if (have == 0)
            return set_status(r, READER_TRUNCATED, r->pos,
                              "no trailer: the trace ends at byte %llu",
                              (unsigned long long)r->pos);
        if (have < 8)
            return set_status(r, READER_TRUNCATED, r->pos,
                              "last record cut at byte %llu (%zd of 8 header bytes)",
                              (unsigned long long)r->pos, have);
    }
    b = r->buf + (r->pos - r->buf_off);
    vt_rec_header h;
    memcpy(&h, b, sizeof h);
    if (h.type == VT_REC_NONE) {
        if (h.flags || h.size)
            return set_status(r, READER_MALFORMED, r->pos, "record of type 0 with size %u",
                              (unsigned)h.size);
        return set_status(r, READER_TRUNCATED, r->pos, "zero-filled tail at byte %llu",
                          (unsigned long long)r->pos);
    }
    /* the common records in their common size are valid as they are: no table to look at */
    int plain = (h.type == VT_REC_ALLOC && h.size == VT_ALLOC_REC_SIZE) ||
                (h.type == VT_REC_FREE && h.size == VT_FREE_REC_SIZE);
    if (!plain && (h.size < 8 || h.size % VT_REC_ALIGN || h.size > VT_REC_MAX_SIZE))
        return set_status(r, READER_MALFORMED, r->pos, "bad record size %u (type %u)",
                          (unsigned)h.size, (unsigned)h.type);
    if (!plain && !reader_size_ok(h.type, h.size))
        return set_status(r, READER_MALFORMED, r->pos, "bad size %u for a %s record",
                          (unsigned)h.size, reader_type_name(h.type));
    if ((size_t)have < h.size) {
        have = fill(r, h.size);
        if (have < 0)
            return false;
        if ((size_t)have < h.size &&
            !reader_partial_ok(&h, r->buf + (r->pos - r->buf_off), (size_t)have))
            return set_status(r, READER_MALFORMED, r->pos,
                              "a %s record of %u bytes runs past the end of the file and does "
                              "not match its own contents",
                              reader_type_name(h.type), (unsigned)h.size);
        if ((size_t)have < h.size)
            return set_status(r, READER_TRUNCATED, r->pos,
                              "last record cut at byte %llu (%zd of %u bytes)",
                              (unsigned long long)r->pos, have, (unsigned)h.size);
        b = r->buf + (r->pos - r->buf_off);
    }
    set_rec(rec, &h, b, r->pos);
    const char *why = NULL;
    if (h.type == VT_REC_ALLOC || h.type == VT_REC_FREE) {
        reader_decode_event_to(rec, ev);
        if (__builtin_expect(ev->stack_id > r->stack_bound, 0))
            return set_status(r, READER_MALFORMED, r->pos,
                              "%s record: stack id %u, far past the %llu stacks defined before "
                              "it (ids are given in order)",
                              reader_type_name(h.type), (unsigned)ev->stack_id,
                              (unsigned long long)r->nstacks);
    } else {
        why = reader_decode(rec);
        /* a SNAPSHOT's live set is the n_allocs events right after it (replay.c takes them so):
         * any other record among them is a count that lies, which had made the program's events
         * after it part of the live set (its peaks, exit 0) */
        if (!why && r->nrec < r->snap_until)
            why = "it comes where a SNAPSHOT before it said its allocations are";
        else if (!why && h.type == VT_REC_SNAPSHOT)
            r->snap_until =
                r->nrec + 1 +
                (rec->u.snap.fixed.n_allocs < UINT64_MAX / 2 ? rec->u.snap.fixed.n_allocs
                                                             : UINT64_MAX / 2);
        for (uint32_t i = 0; !why && h.type == VT_REC_STEP && i < rec->u.step.fixed.n_stacks; i++)
            if (reader_step_stack(&rec->u.step, i).stack_id > r->stack_bound) /* (growth.c's) */
                why = "a stack id far past the stacks defined before it (ids are given in order)";
        if (!why && h.type == VT_REC_STACK) {
            if (rec->u.stack.stack_id > r->stack_bound)
                why = "its id is far past the stacks defined before it (ids are given in order)";
            r->nstacks++;
            if (!r->any_stack_ids)
                r->stack_bound = 2 * r->nstacks + VT_STACK_ID_SLACK;
        }
    }
    if (why)
        return set_status(r, READER_MALFORMED, r->pos, "%s record: %s", reader_type_name(h.type),
                          why);
    r->pos += h.size;
    r->nrec++;
    if (h.type == VT_REC_TRAILER) {
        r->done = true; /* status stays OK; records after a trailer are not read */
        r->msg[0] = 0;
    }
    return true;
}

bool reader_next(reader *r, reader_record *rec)
{
    return next(r, rec, &rec->u.ev);
}

static __attribute__((noinline)) bool next_call(reader *r, reader_record *rec, reader_event *ev)
{
    return next(r, rec, ev);
}

/* reader_next_event: next's work, the common records (ALLOC, FREE of their common sizes, whole in
 * the window, stack ids in bounds) first, each on its own: that path saves no register */
bool reader_next_event(reader *r, reader_record *rec, reader_event *ev)
{
    size_t start = (size_t)(r->pos - r->buf_off);
    if (__builtin_expect(!r->done && r->len - start >= VT_ALLOC_REC_SIZE, 1)) {
        const uint8_t *b = r->buf + start;
        vt_rec_header h;
        memcpy(&h, b, sizeof h);
        if (h.type == VT_REC_ALLOC && h.size == VT_ALLOC_REC_SIZE)
            reader_decode_alloc40(h.flags, b + 8, ev);
        else if (h.type == VT_REC_FREE && h.size == VT_FREE_REC_SIZE)
            reader_decode_free24(h.flags, b + 8, ev);
        else
            return next_call(r, rec, ev);
        if (__builtin_expect(ev->stack_id > r->stack_bound, 0)) /* (a FREE's: 0) */
            return next_call(r, rec, ev);
        rec->type = h.type, rec->flags = h.flags, rec->size = h.size, rec->offset = r->pos;
        r->pos += h.size, r->nrec++;
        return true;
    }
    return next_call(r, rec, ev); /* (a record next decodes again, from its start) */
}
