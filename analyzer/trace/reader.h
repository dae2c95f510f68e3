/* reader.h — the streaming trace reader: opens one trace file, validates its header and
 * hands out its records one at a time, decoded into typed structs, through a fixed-size
 * buffer (memory does not grow with the file). Lookup tables built from the records are in
 * tables.h; several files at once are the caller's business (one reader per file). */
#ifndef VT_ANALYZER_READER_H
#define VT_ANALYZER_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vramtrace/trace_format.h"

/* ---- API facts from VT_APIS ------------------------------------------------------------ */

/* reader_api_name: "cudaMalloc", ... for a known api id; NULL for an unknown id. */
const char *reader_api_name(unsigned api);
/* reader_api_bits: layer | (kind ^ VT_KIND_OTHER) << 2 | space << 6 by id (reader_names.c). */
extern const uint16_t reader_api_bits[256];
/* reader_api_layer: VT_LAYER_RUNTIME / VT_LAYER_DRIVER, 0 for an unknown id. */
static inline int reader_api_layer(unsigned api)
{
    return api < 256 ? reader_api_bits[api] & 3 : 0;
}
/* reader_api_kind: enum vt_kind (VT_KIND_*) of a known id; VT_KIND_OTHER for unknown ids. */
static inline int reader_api_kind(unsigned api)
{
    return api < 256 ? (reader_api_bits[api] >> 2 & 15) ^ VT_KIND_OTHER : VT_KIND_OTHER;
}
/* reader_api_space: enum vt_space (VT_SPACE_*) of a known id; VT_SPACE_NONE for unknown. */
static inline int reader_api_space(unsigned api)
{
    return api < 256 ? reader_api_bits[api] >> 6 & 15 : VT_SPACE_NONE;
}
/* reader_api_gives_back: PyTorch's allocator giving a segment back (torchSegmentFree /
 * torchSegmentUnmap: its tracker's ALLOC records that release memory, not allocate it) */
static inline int reader_api_gives_back(unsigned api)
{
    return api == VT_API_torchSegmentFree || api == VT_API_torchSegmentUnmap;
}
/* reader_kind_name / reader_space_name: "ALLOC", "DEVICE", ...; "?" when out of range. */
const char *reader_kind_name(int kind);
const char *reader_space_name(int space);
/* reader_type_name: lower-case record type name as `vramtrace dump` prints it ("alloc",
 * "free", "stack", ..., "trailer"); "unknown" for any other type. */
const char *reader_type_name(unsigned type);

/* ---- decoded records -------------------------------------------------------------------- */

/* A string inside the current record: p points into the reader's buffer, len bytes, NOT
 * NUL-terminated, may contain any bytes (escape before printing: escape.h). Valid until the
 * next reader_next / reader_rewind / reader_close. */
typedef struct reader_str {
    const char *p;
    uint32_t len;
} reader_str;

/* A run of n packed strings (u32 length + bytes each), already validated to lie inside the
 * record: reader_strs_next never fails on it. Walk with a cursor starting at 0. */
typedef struct reader_strs {
    const uint8_t *p; /* first string's length field */
    uint32_t n;       /* how many strings */
    uint32_t bytes;   /* total bytes they occupy */
} reader_strs;

/* reader_strs_next: the string at *cursor (a byte offset in list, start at 0) into *out and
 * advances *cursor. Returns false when the list is exhausted. */
bool reader_strs_next(const reader_strs *list, uint32_t *cursor, reader_str *out);

/* ALLOC and FREE (and their shared fields). For FREE: size 0, aux 0; stack_id / stream /
 * result are 0 unless the record has the extended form (has_ext). For ALLOC: has_aux when
 * the record carries aux. api/device/failed/backward/emulated come from header.flags. */
typedef struct reader_event {
    uint64_t time_ns; /* VT_TT_NS(tt): since header.start_mono_ns */
    uint32_t thread;  /* VT_TT_THREAD(tt): a THREAD record's index */
    uint16_t flags;   /* header.flags as written */
    uint8_t api;      /* VT_EVF_API(flags) (enum vt_api) */
    uint8_t device;   /* VT_EVF_DEVICE(flags), VT_DEVICE_UNKNOWN (15) = unknown */
    bool failed;      /* VT_EVF_FAILED */
    bool backward;    /* VT_EVF_BACKWARD */
    bool emulated;    /* VT_EVF_EMULATED */
    bool has_aux;     /* ALLOC: the 48-byte form */
    bool has_ext;     /* FREE: the 32-byte form */
    uint64_t addr;
    uint64_t size;     /* ALLOC: bytes asked for; FREE: 0 */
    uint64_t aux;      /* ALLOC with aux: handle / fixed address / used-before; else 0 */
    uint32_t stack_id; /* 0 = no stack */
    uint16_t stream;
    int32_t result; /* 0 = success */
} reader_event;

typedef struct reader_oom {
    uint64_t time_ns;
    uint32_t thread;
    uint16_t flags;
    uint8_t api;
    uint8_t device;
    bool emulated;
    uint64_t requested;
    uint64_t capacity;
    uint64_t process_used;
    uint32_t stack_id;
    int32_t result;
} reader_oom;

typedef struct reader_meminfo {
    uint64_t time_ns;
    uint32_t thread;
    uint64_t free_bytes;
    uint64_t total_bytes;
    uint32_t device;
    uint32_t source; /* vt_meminfo_source */
} reader_meminfo;

typedef struct reader_process {
    vt_rec_process fixed;
    reader_str exe, cwd, host;
    reader_strs argv; /* fixed.argc strings */
    reader_strs env;  /* fixed.nenv strings, each "NAME=value" */
} reader_process;

typedef struct reader_config {
    vt_rec_config fixed;
    reader_str card; /* "" if none */
} reader_config;

typedef struct reader_device {
    vt_rec_device fixed;
    reader_str name;
} reader_device;

typedef struct reader_thread {
    vt_rec_thread fixed;
    reader_str name;
} reader_thread;

/* STACK: frames are n_native native return addresses (innermost first) then n_python
 * Python frames (VT_PYFRAME, innermost first). Read them with reader_stack_frame. */
typedef struct reader_stack {
    uint32_t stack_id;
    uint16_t n_native;
    uint16_t n_python;
    uint16_t flags;        /* the record's header.flags: VT_STACKF_* */
    const uint8_t *frames; /* (n_native + n_python) little-endian u64, maybe unaligned */
} reader_stack;

/* reader_stack_frame: frame i (0 <= i < n_native + n_python) of s. */
static inline uint64_t reader_stack_frame(const reader_stack *s, unsigned i)
{
    uint64_t v;
    __builtin_memcpy(&v, s->frames + 8u * i, 8);
    return v;
}

typedef struct reader_code {
    uint32_t code_id;
    uint32_t first_line;
    reader_str filename, qualname;
    reader_str linetable; /* raw co_linetable bytes (format per PYINFO version) */
} reader_code;

typedef struct reader_symbol {
    vt_rec_symbol fixed; /* ip, offset, module_id, sym_offset */
    reader_str name;     /* mangled, "" if none */
} reader_symbol;

typedef struct reader_module {
    vt_rec_module fixed; /* module_id, base */
    reader_str path;
    reader_str build_id; /* raw bytes; empty when none (or a 1.0 record, which has none) */
} reader_module;

/* FILE (1.2): a file the command line named, recorded at start (trace_format.h). contents
 * is empty unless fixed.flags == 0; its length is checked against VT_FILE_MAX_BYTES. */
typedef struct reader_file {
    vt_rec_file fixed; /* kind, argi, size on disk, flags */
    reader_str name;   /* as the command line gave it */
    reader_str path;   /* the absolute path read */
    reader_str contents;
} reader_file;

/* SNAPSHOT (1.3): the live set follows as n_allocs ALLOC records (what a reader of a chunked
 * trace hands out where the events before it are gone). */
typedef struct reader_snapshot {
    vt_rec_snapshot fixed;
    uint64_t time_ns; /* VT_TT_NS(fixed.tt) */
} reader_snapshot;

/* STEP (1.3): a training step's end; stacks is fixed.n_stacks vt_step_stack, maybe unaligned:
 * read them with reader_step_stack. */
typedef struct reader_step {
    vt_rec_step fixed;
    uint64_t time_ns;
    const uint8_t *stacks;
} reader_step;

static inline vt_step_stack reader_step_stack(const reader_step *s, unsigned i)
{
    vt_step_stack v;
    __builtin_memcpy(&v, s->stacks + 16u * i, 16);
    return v;
}

/* One record. type/flags/size are the record header; offset is the record's byte offset in
 * the file; payload/payload_len the bytes after the header (valid like reader_str). Exactly
 * the union member named by type is filled (nothing for unknown types: skip them). */
typedef struct reader_record {
    uint16_t type;
    uint16_t flags;
    uint32_t size;
    uint64_t offset;
    const uint8_t *payload;
    uint32_t payload_len;
    union {
        reader_process process; /* VT_REC_PROCESS */
        reader_config config;   /* VT_REC_CONFIG */
        reader_device device;   /* VT_REC_DEVICE */
        reader_thread thread;   /* VT_REC_THREAD */
        reader_event ev;        /* VT_REC_ALLOC, VT_REC_FREE */
        reader_stack stack;     /* VT_REC_STACK */
        reader_code code;       /* VT_REC_CODE */
        reader_symbol symbol;   /* VT_REC_SYMBOL */
        reader_module module;   /* VT_REC_MODULE */
        reader_meminfo meminfo; /* VT_REC_MEMINFO */
        reader_oom oom;         /* VT_REC_OOM */
        vt_rec_pyinfo pyinfo;   /* VT_REC_PYINFO */
        vt_rec_trailer trailer; /* VT_REC_TRAILER */
        reader_file file;       /* VT_REC_FILE */
        reader_snapshot snap;   /* VT_REC_SNAPSHOT */
        reader_step step;       /* VT_REC_STEP */
    } u;
} reader_record;

/* ---- the reader ------------------------------------------------------------------------- */

typedef enum reader_status {
    READER_OK = 0,        /* so far fine; at the end: a trailer was read */
    READER_TRUNCATED = 1, /* ended without trailer: EOF, zero tail, or a cut last record */
    READER_MALFORMED = 2, /* a record (or the header) no writer produces: stop there */
    READER_IOERR = 3,     /* read() failed mid-file (errno in the message) */
} reader_status;

typedef struct reader reader;

/* reader_open: opens path for streaming and validates the file header (magic, major
 * version, header_size). Returns a reader (free with reader_close) or NULL when the file
 * cannot be opened or stat'ed or memory is short: then msg (if non-NULL) gets
 * "PATH: strerror" (exit 2 material). A bad header does NOT return NULL: the reader is
 * returned with status READER_MALFORMED at offset 0/8, msg gets reader_describe's
 * "PATH: not a vramtrace trace (bad magic)" (exit 3 material) and reader_next returns false. */
reader *reader_open(const char *path, char *msg, size_t msgsz);

/* reader_open_stream: the same over a stream the caller opened and keeps (not closed here), whose
 * first nhead bytes it already read into head (a command that looked at the magic); a pipe or a
 * FIFO is read this once. reader_rewind fails on it. */
reader *reader_open_stream(FILE *fp, const char *path, const void *head, size_t nhead, char *msg,
                           size_t msgsz);

/* reader_next: decodes the next record into *rec. Returns true with *rec filled (pointers
 * valid until the next call); false at the end of the records: then reader_status says
 * why (OK: trailer read; TRUNCATED; MALFORMED / IOERR with reader_error_offset/message).
 * Records after a TRAILER are not read. Rules (trace_format.h): type 0 = end of written
 * data (zero tail); size < 8, size % 8 != 0, size > VT_REC_MAX_SIZE, or a size no record of
 * its known type can have = malformed; a size past EOF with a plausible size for its type
 * = truncated (the file was cut inside its last record) unless the bytes present contradict
 * the size (a STACK whose frame count gives another size, a string ending past it: then
 * malformed); a string or frame array that runs past its record, a STACK whose size is not
 * exactly 16 + 8 * frames, or a known record shorter than its fixed part = malformed.
 * Fixed-shape records (ALLOC 40/48+, FREE 24/32+, MEMINFO, OOM, PYINFO, TRAILER) may carry
 * appended fields up to 256 bytes; more is malformed.
 * Unknown types are returned with type set and no union member filled. */
bool reader_next(reader *r, reader_record *rec);
/* reader_next_event: reader_next, but an ALLOC or FREE record's event is decoded into *ev, not
 * rec->u.ev (a replay's read-ahead ring takes the event where it will stay: no copy); of an
 * ALLOC or FREE record of its common size, rec's type, flags, size and offset alone are set
 * (not its payload, nor its length). */
bool reader_next_event(reader *r, reader_record *rec, reader_event *ev);

/* reader_status: the status so far (final once reader_next returned false). */
reader_status reader_status_of(const reader *r);
/* reader_status_name: "ok", "truncated", "malformed", "io-error". */
const char *reader_status_name(reader_status s);
/* reader_trailer_key: a TRAILER's end flag (one bit of VT_TRAILER_FLAGS) by its key as `dump`
 * writes it ("disk_full"); NULL for 0 or another value */
const char *reader_trailer_key(unsigned flag);
/* reader_error_offset / reader_error_message: where and why for MALFORMED / IOERR (and a
 * short reason for TRUNCATED: "no trailer", "zero-filled tail at byte N", "last record cut
 * at byte N"); "" / 0 when OK. The message is owned by the reader. */
uint64_t reader_error_offset(const reader *r);
const char *reader_error_message(const reader *r);
/* reader_describe: the one user-facing sentence for the status, naming the file and the
 * problem, for every command: "PATH: not a vramtrace trace (bad magic)" (or another header
 * problem), "PATH: malformed trace at byte N: WHY", "PATH: read error at byte N: WHY",
 * "PATH: truncated trace (WHY)", "PATH: ok". Written into out (len bytes, always ended). */
void reader_describe(const reader *r, char *out, size_t len);

/* reader_header: the validated file header (zeroed if the header was unreadable). */
const vt_file_header *reader_header(const reader *r);
/* reader_path: the path given to reader_open (owned by the reader). */
const char *reader_path(const reader *r);
/* reader_records: records returned so far (since open or the last rewind). */
uint64_t reader_records(const reader *r);
/* reader_position / reader_file_size: bytes consumed so far and the file's size at open,
 * e.g. for a progress indicator. */
uint64_t reader_position(const reader *r);
uint64_t reader_file_size(const reader *r);

/* The chunked layout (1.3, run --max-size / --compress): what reader_open found. A chunked
 * trace is read as the plain trace it stands for (trace_format.h, CHUNKED LAYOUT): raw slots and
 * chunks in order, a snapshot's SNAPSHOT + ALLOC records only where the events before it were
 * dropped, the summary's STEP records and trailer last; error offsets are that trace's. */
typedef struct chunked_info {
    uint64_t slot_size, max_size; /* max_size 0: compressed, not bounded */
    uint64_t raw_slots, pack_slots, free_slots, chunks;
    uint64_t stored_bytes, raw_bytes; /* the chunks' bytes as stored / once decompressed */
    uint64_t snapshots_used;          /* snapshots handed out (1 where events were dropped) */
    uint64_t gaps; /* chunks of events skipped: events before them missing and no snapshot (a
                    * live set too large for a slot) */
} chunked_info;
/* reader_open_summary: reader_open, but a chunked trace is read as its first raw slot's records
 * (process, config, device), its definitions and its summaries (STEP records, the trailer):
 * what `watch` reads each time, without the events. A plain trace is read whole. */
reader *reader_open_summary(const char *path, char *msg, size_t msgsz);
/* reader_follow: a plain trace still being written: after reader_next returned false at the end
 * of what was written so far (status truncated: a zero tail, the end of the file, a record cut
 * by it), reader_next goes on from that record, reading what was written since. 0, or -1 when
 * the trace cannot be followed (malformed, read error, a trailer read, the chunked layout). */
int reader_follow(reader *r);
/* reader_watching: r is read while its writer runs, on the machine that writes it (`watch`),
 * called right after opening: a trace of the block layout (2.0) hands out the records of its
 * last 100 ms at the next look, when every thread's block before them is seen. on 0: its writer
 * is gone: the next look hands out everything (a run that died before a second look had been
 * shown with none of its records: "peak 0 B"). */
void reader_watching(reader *r, int on);
/* reader_chunked_info: NULL for a plain trace. */
const chunked_info *reader_chunked_info(const reader *r);

/* reader_any_stack_ids: stack ids out of order (trace_format.h, VT_STACK_ID_SLACK) are read, not
 * refused: for dump, which keeps nothing per stack id and shows every record as it is. */
void reader_any_stack_ids(reader *r);

/* reader_rewind: back to the first record for another pass, status reset (the header is
 * re-read and re-validated). Returns 0, or -1 when the seek/read failed (status IOERR). */
int reader_rewind(reader *r);

/* reader_close: closes the file and frees everything; NULL is fine. */
void reader_close(reader *r);

#endif
