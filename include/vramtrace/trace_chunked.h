/* trace_chunked.h — part of the trace format (trace_format.h includes it): the CHUNKED LAYOUT
 * of a bounded or compressed trace (run --max-size / --compress) and the payloads of its 1.3
 * records: SLOT, CHUNK, SNAPSHOT and STEP, and their kinds and flags.
 *
 * CHUNKED LAYOUT (1.3: bounded and/or compressed traces)
 *   The first record after the header is a SLOT record: the file is then a grid of slots of
 *   slot_size bytes (a power of two, a multiple of the page): slot 0 is [32, S), slot i is
 *   [i*S, (i+1)*S). Each slot starts with a SLOT record (a slot whose first 8 bytes are zero is
 *   free: skip it) saying what it holds:
 *     RAW   records exactly as in a plain trace (header last, zero tail), written by the
 *           program's threads; `seq` numbers raw slots 1, 2, ... in the order they were
 *           written: the run's records are raw slot 1's, then 2's, ...
 *     PACK  CHUNK records back to back (zero tail), written by the preload's packer thread:
 *           each CHUNK holds records of one raw slot (`raw_seq`), stored or zstd-compressed,
 *           for one stream: HEAD (every record of a raw slot of the run's beginning, kept in
 *           full), META (the definitions of a later raw slot: everything but ALLOC, FREE,
 *           MEMINFO, OOM; never dropped), EVENTS (that raw slot's events, in order) or SNAP
 *           (the live set before raw slot `raw_seq`'s events: a SNAPSHOT record, then the
 *           ALLOC record of every allocation alive then, in the order they were made). A PACK
 *           slot's `stream` says which streams it holds: HEAD, META, or EVENTS (a SNAP chunk
 *           first, then EVENTS chunks: such a slot is replayable on its own).
 *     SUMMARY  what holds for the whole run: CHUNK records of the SUMMARY stream (STEP
 *           records, one chunk per raw slot packed), then the TRAILER, raw, at a clean stop.
 *   A raw slot's records move into chunks once the slot is full; the raw slot is freed (its
 *   SLOT header zeroed) only after its chunks are complete, so a record is always in one of
 *   the two. At --max-size, the oldest EVENTS PACK slot is dropped (zeroed) to make room: its
 *   events are gone, the SNAP chunk of the next one holds what was alive. The logical trace a
 *   reader makes of it: for raw_seq 1, 2, ...: the raw slot if present, else its HEAD chunk,
 *   else its META chunk, then (only where the events before it are missing) the SNAP chunk
 *   of raw_seq, then its EVENTS chunk; then the SUMMARY slots' records in seq order. Every
 *   SIGKILL leaves such a file readable: a slot is zeroed before it is reused and each record
 *   stores its header last. Byte offsets in readers' messages are the logical trace's.
 */
#ifndef VRAMTRACE_TRACE_CHUNKED_H
#define VRAMTRACE_TRACE_CHUNKED_H

#include <stdint.h>

/* SLOT: the first record of every slot of a chunked trace. */
#define VT_SLOT_KINDS(X)                                                                           \
    X(RAW, 1, "raw", "records as the program's threads wrote them")                                \
    X(PACK, 2, "pack", "CHUNK records of one stream")                                              \
    X(SUMMARY, 3, "summary", "STEP records and the trailer, for the whole run")
enum vt_slot_kind {
#define VT_SLOT_KIND_ENUM(name, v, key, doc) VT_SLOT_##name = v,
    VT_SLOT_KINDS(VT_SLOT_KIND_ENUM)
#undef VT_SLOT_KIND_ENUM
};
#define VT_STREAMS(X)                                                                              \
    X(HEAD, 1, "head", "every record of a raw slot of the run's beginning, kept in full")          \
    X(META, 2, "meta", "a later raw slot's definitions (stacks, code, threads...): never dropped") \
    X(EVENTS, 3, "events", "a later raw slot's events: the rolling window, oldest dropped first")  \
    X(SNAP, 4, "snap", "the live set before a raw slot's events (SNAPSHOT + ALLOC records)")       \
    X(SUMMARY, 5, "summary", "STEP records, in a SUMMARY slot (the trailer follows them, raw)")
enum vt_stream {
#define VT_STREAM_ENUM(name, v, key, doc) VT_STREAM_##name = v,
    VT_STREAMS(VT_STREAM_ENUM)
#undef VT_STREAM_ENUM
};
typedef struct vt_rec_slot {
    uint64_t seq;       /* RAW: 1, 2, ... in writing order; PACK / SUMMARY: 1, 2, ... per kind */
    uint64_t slot_size; /* the grid's S, the same in every slot */
    uint64_t max_size;  /* the bound the file was written under (--max-size), 0: none */
    uint32_t kind;      /* vt_slot_kind */
    uint32_t stream;    /* PACK: vt_stream (EVENTS for a slot of SNAP + EVENTS chunks); else 0 */
    uint64_t dropped;   /* RAW: events the program made that no slot could take before this one */
} vt_rec_slot;
_Static_assert(sizeof(vt_rec_slot) == 40, "layout");
#define VT_SLOT_REC_SIZE (8u + 40u)

/* CHUNK: fixed part, then `stored` bytes: the records (method NONE) or one zstd frame of them
 * (ZSTD) whose content is exactly raw_len bytes of whole records. Readers: raw_len is at most
 * the slot size (a SNAP chunk: VT_CHUNK_MAX_RAW, its further pieces with the same first_event
 * follow it); a frame that says or gives another size is malformed. */
enum vt_chunk_method { VT_CHUNK_NONE = 0, VT_CHUNK_ZSTD = 1 };
#define VT_CHUNK_MAX_RAW (16u << 20)
typedef struct vt_rec_chunk {
    uint64_t raw_seq;  /* the raw slot the records came from */
    uint32_t stream;   /* vt_stream */
    uint32_t method;   /* vt_chunk_method */
    uint32_t raw_len;  /* bytes of records once decompressed */
    uint32_t stored;   /* bytes that follow */
    uint64_t events;   /* ALLOC + FREE records in it */
    uint64_t first_ns; /* the time span of its events (0, 0: none) */
    uint64_t last_ns;
    uint64_t first_event; /* ALLOC + FREE events of the run before its first (SNAP: before the
                           * moment it shows) */
} vt_rec_chunk;
_Static_assert(sizeof(vt_rec_chunk) == 56, "layout");

/* SNAPSHOT: the live set at a moment, as n_allocs ALLOC records that follow it (in a SNAP
 * chunk): every allocation made before and not yet freed then, by (space, addr) as readers pair
 * them, plus PyTorch's live segments (torchSegmentAlloc, torchSegmentMap). A reader that
 * replays them, then the events after, has the run's state exactly from that moment. */
typedef struct vt_rec_snapshot {
    uint64_t tt;              /* VT_TT_MAKE(time of the moment, 0) */
    uint64_t events_before;   /* ALLOC + FREE events the run made before it */
    uint64_t dropped_events;  /* of those, the ones no longer in the file (dropped windows) */
    uint64_t dropped_from_ns; /* the span of the dropped events (0, 0: none) */
    uint64_t dropped_to_ns;
    uint64_t n_allocs;   /* ALLOC records that follow */
    uint64_t live_bytes; /* their sizes summed (a check) */
} vt_rec_snapshot;
_Static_assert(sizeof(vt_rec_snapshot) == 56, "layout");

/* STEP: written by the packer at the end of each training step it sees, for the whole run:
 * the end of an optimizer stretch (allocations whose stack has a Python frame in
 * torch/optim/ or of GradScaler.step/unscale_, or the program's thread freeing a tensor a
 * backward made (zero_grad), followed by an allocation that is neither), or the end of a
 * backward pass (VT_EVF_BACKWARD allocations followed by one without). In a run recorded with
 * no stacks (CONFIG stack_mode VT_STACKS_NONE), the end at the first allocation after a backward
 * waits: a zero_grad before the next backward makes what came the optimizer's (no record
 * there: the step goes on); else the record is written at that next backward (or the trace's
 * end) with the time, events and levels of that allocation, after events that came later.
 * Fixed part, then n_stacks vt_step_stack: the live bytes of each
 * stack (per-tensor allocations once the run has shown one, VT_STEPF_TENSORS; else device
 * allocations) whose value changed since the previous STEP record (absolute, 0: none left). */
#define VT_STEPF_OPTIMIZER 0x1u /* the step ended an optimizer stretch (else a backward) */
#define VT_STEPF_TENSORS 0x2u   /* per-stack bytes are tensors' (else device allocations') */
#define VT_STEPF_OOM 0x4u       /* an out-of-memory failure came during this step */
#define VT_STEPF_PARTIAL 0x8u   /* more stacks changed than the record holds (largest kept) */
#define VT_STEPF_END                                                                               \
    0x10u /* written as the trace ended, the run inside this step: what its                        \
           * teardown left (exit frees everything), no step's end (since                           \
           * 2026-12-01; a trace without it says it of no record) */
#define VT_STEPF_TAIL                                                                              \
    0x20u /* with END: the trace ended inside a forward (the run's last                            \
           * allocations neither backward nor optimizer ones): no step's end and                   \
           * step 0, only the live and peak bytes since the previous record and an                 \
           * OOM in them; readers that count steps skip it (since 2026-12-01) */
#define VT_STEP_MAX_STACKS 4096u
typedef struct vt_rec_step {
    uint64_t tt;          /* when the step ended: the first allocation after it */
    uint64_t events;      /* ALLOC + FREE events of the run before this point */
    uint32_t step;        /* 1, 2, ... */
    uint32_t flags;       /* VT_STEPF_* */
    uint64_t live_tensor; /* bytes of per-tensor allocations alive then */
    uint64_t live_device; /* bytes of device memory alive then (segments, other allocations) */
    uint64_t peak_tensor; /* the highest of each since the previous STEP record */
    uint64_t peak_device;
    uint64_t oom_request; /* VT_STEPF_OOM: the failed request's bytes */
    uint32_t n_stacks;
    uint32_t reserved;
} vt_rec_step;
_Static_assert(sizeof(vt_rec_step) == 72, "layout");
typedef struct vt_step_stack {
    uint32_t stack_id;
    uint32_t reserved;
    uint64_t bytes;
} vt_step_stack;
_Static_assert(sizeof(vt_step_stack) == 16, "layout");

#endif /* VRAMTRACE_TRACE_CHUNKED_H */
