/* trace_format.h — the vramtrace trace file format: THE contract between preload/ (writer)
 * and analyzer/ (reader). Nothing else is shared between the two halves.
 *
 * FILE
 *   +0   vt_file_header (32 bytes): magic "VRAMTRC\n", u16 major, u16 minor,
 *        u32 header_size, u64 start_realtime_ns, u64 start_mono_ns
 *   +32  records, back to back, each starting on an 8-byte boundary:
 *
 *        0       2       4               8
 *        +-------+-------+---------------+------------------------------+
 *        | type  | flags | size (u32)    | payload (size - 8 bytes)     |
 *        +-------+-------+---------------+------------------------------+
 *
 *        type  u16  VT_REC_* below; 0 never starts a record: it marks the end of what was
 *                   written (the writer pre-extends the file with zeros, so a process killed
 *                   by SIGKILL leaves a zero-filled tail).
 *        flags u16  meaning per type (for events: VT_EVF_*)
 *        size  u32  whole record in bytes, header included; a multiple of 8, >= 8.
 *
 *   The writer stores a record's payload first and its header last (one 8-byte release
 *   store), so a reader never sees a header whose payload is not complete.
 *   A clean stop ends with one VT_REC_TRAILER. A file without a trailer is "truncated":
 *   readers report it and keep every complete record before it. The trailer's header.flags
 *   (minor 1) say why the trace ended when it was not a plain exit: VT_TRAILER_DISK_FULL,
 *   VT_TRAILER_OUTPUT_ERROR, VT_TRAILER_EXEC (below); 0 in minor 0 files.
 *   Records of concurrent threads may appear in the file in a different order than their
 *   times; within one thread, file order is the order the records were made.
 *
 * VERSIONS (header major.minor; a minor only adds, so a reader of 1.N reads every 1.M, M <= N)
 *   1.0  the first format.
 *   1.1  API ids 64-71 (layer 3): PyTorch's caching allocator through its trace tracker
 *        (tensors, its segments, its out-of-memory, the tracker's note); TRAILER
 *        header.flags: why the trace ended (VT_TRAILER_FLAGS); MODULE: the GNU build-id
 *        after the path, and the program's real path (/proc/self/exe) instead of argv[0].
 *        Early 1.1 writers (real traces exist) had the allocator APIs only: trailer flags 0,
 *        MODULE records ending after the path; readers take each addition only when present.
 *   1.2  FILE records (type 15): the contents of the files the analysis needs (config files
 *        named on the command line, config.json of a model directory argument), written
 *        right after PROCESS, so a trace is analysed the same on any machine; PROCESS env
 *        also keeps every VRAMTRACE_* variable. A 1.2 trace whose command line names no such
 *        file has no FILE record. Later 1.2 writers also fill two fields that were reserved
 *        (0): TRAILER `error` (the errno that stopped the output: EFBIG = `ulimit -f`) and
 *        CONFIG `flags` (VT_CONFIG_NATIVE_OFF_FORK); readers that ignore them lose nothing.
 *   1.3  CHUNKED LAYOUT (trace_chunked.h), written with `run --max-size` / `--compress` only:
 * slots, compressed chunks, live-set snapshots and per-step summaries (SLOT, CHUNK, SNAPSHOT,
 *        STEP). A trace without them is laid out exactly as 1.2. Also API 72,
 *        torchFreeRequested (a FREE record, space NONE: it ends no allocation), written only
 *        when PyTorch's allocator requests a free it completes later (record_stream).
 *        Later 1.3 writers fill STACK header.flags (VT_STACKF_PY_CUT), 0 before: a reader that
 *        ignores them reads the stack as before; an older trace's stacks read as complete.
 *   2.0  BLOCK LAYOUT of a plain trace (trace_blocks.h): each thread's records in blocks of
 *        its own (BLOCK, type 20), read in time order. Bounded / compressed traces stay 1.3.
 *
 * RULES FOR READERS
 *   - refuse a bad magic or a major version they do not read (exit 3); accept a higher minor;
 *   - skip records of unknown type using size;
 *   - trust no length: size < 8, size % 8 != 0, or size past the end of file is malformed
 *     (at the very end of a truncated file: truncated); strings are bounded by their record;
 *   - all integers are little-endian, fixed width; strings are (u32 length, bytes) with no
 *     NUL, packed back to back after the fixed part; a record is zero-padded to 8 bytes.
 *
 * TIME AND THREADS IN EVENTS
 *   An event's first u64 "tt" packs the time and the thread:
 *     bits 0..47  nanoseconds since header.start_mono_ns (CLOCK_MONOTONIC), 78 hours of range
 *     bits 48..63 thread index (the `index` of a VT_REC_THREAD record of this file)
 *
 * CHUNKED LAYOUT (1.3: bounded and/or compressed traces): trace_chunked.h.
 * BLOCK LAYOUT (2.0: plain traces): trace_blocks.h.
 *
 * STACKS
 *   VT_REC_STACK interns one stack (native frames innermost first, then Python frames
 *   innermost first); an event carries its 32-bit id. Id 0 means "no stack".
 *   A Python frame is u64 (code_id << 32 | byte offset of the current instruction in the
 *   code object's bytecode); code_id is the `code_id` of a VT_REC_CODE record of this file.
 *   Native frames are return addresses (the first is the caller's call site), resolved by
 *   VT_REC_SYMBOL records (written once per distinct address) and VT_REC_MODULE records.
 *   A stack keeps the 128 innermost Python frames: a deeper one (a recursion) loses its outer
 *   ones, the program's <module> among them, and its STACK header.flags has VT_STACKF_PY_CUT
 *   (its outermost recorded frame is not the program's top); with the same frames, a cut stack
 *   and a complete one are two stacks.
 */
#ifndef VRAMTRACE_TRACE_FORMAT_H
#define VRAMTRACE_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define VT_MAGIC "VRAMTRC\n"
#define VT_MAGIC_LEN 8
#define VT_VERSION_MAJOR 1
#define VT_VERSION_MINOR 3 /* what each minor adds: VERSIONS above */

typedef struct vt_file_header {
    char magic[VT_MAGIC_LEN];
    uint16_t major;
    uint16_t minor;
    uint32_t header_size;       /* sizeof(vt_file_header) today; readers skip to it */
    uint64_t start_realtime_ns; /* CLOCK_REALTIME when the trace was opened */
    uint64_t start_mono_ns;     /* CLOCK_MONOTONIC at the same moment: events are relative */
} vt_file_header;
_Static_assert(sizeof(vt_file_header) == 32, "file header is 32 bytes");

typedef struct vt_rec_header {
    uint16_t type;
    uint16_t flags;
    uint32_t size;
} vt_rec_header;
_Static_assert(sizeof(vt_rec_header) == 8, "record header is 8 bytes");

#define VT_REC_ALIGN 8u
#define VT_REC_MAX_SIZE (16u << 20) /* no valid record is larger: readers refuse it */

/* ---- record types: X(NAME, value, payload struct or fixed part, doc) ------------------- */
#define VT_RECORD_TYPES(X)                                                                         \
    X(PROCESS, 1, vt_rec_process, "who: pid, ppid, argv, cwd, host, recorded env vars")            \
    X(CONFIG, 2, vt_rec_config, "how the trace was taken: stacks, emulated card")                  \
    X(DEVICE, 3, vt_rec_device, "a GPU: ordinal, name, total bytes, UUID, compute capability")     \
    X(THREAD, 4, vt_rec_thread, "a thread: index used by events, tid, role, name")                 \
    X(ALLOC, 5, vt_rec_alloc, "an allocation-like call (alloc, reserve, map, load, ctx)")          \
    X(FREE, 6, vt_rec_free, "a release-like call (free, release, unmap, unload)")                  \
    X(STACK, 7, vt_rec_stack, "an interned stack: native then Python frames")                      \
    X(CODE, 8, vt_rec_code, "a Python code object: file, qualname, first line, line table")        \
    X(SYMBOL, 9, vt_rec_symbol, "a native return address: module, offset, symbol")                 \
    X(MODULE, 10, vt_rec_module, "a loaded ELF object: id, base address, path")                    \
    X(MEMINFO, 11, vt_rec_meminfo, "free/total of a device (cuMemGetInfo or sampler)")             \
    X(OOM, 12, vt_rec_oom, "an allocation failed with out-of-memory")                              \
    X(PYINFO, 13, vt_rec_pyinfo, "the Python runtime version (line table format)")                 \
    X(TRAILER, 14, vt_rec_trailer, "clean stop: counts of events and of what was dropped")         \
    X(FILE, 15, vt_rec_file, "a file the analysis needs (a config file), recorded at start")       \
    X(SLOT, 16, vt_rec_slot, "1.3: the start of a slot of a chunked trace (what it holds)")        \
    X(CHUNK, 17, vt_rec_chunk, "1.3: records of one raw slot, stored or zstd-compressed")          \
    X(SNAPSHOT, 18, vt_rec_snapshot,                                                               \
      "1.3: the live set follows (ALLOC records); what was dropped")                               \
    X(STEP, 19, vt_rec_step, "1.3: after a training step: live bytes, by stack where changed")     \
    X(BLOCK, 20, vt_rec_block, "2.0: one writer's records, back to back (trace_blocks.h)")

/* Types are numbered 1..N in the list's order, so the highest known one is its length. */
#define VT_REC_ONE(name, value, st, doc) +1
enum vt_record_type {
    VT_REC_NONE = 0,
#define VT_REC_ENUM(name, value, st, doc) VT_REC_##name = value,
    VT_RECORD_TYPES(VT_REC_ENUM)
#undef VT_REC_ENUM
        VT_REC_MAX_KNOWN = 0 VT_RECORD_TYPES(VT_REC_ONE)
};
#define VT_REC_IN_RANGE(name, value, st, doc)                                                      \
    _Static_assert(value >= 1 && value <= VT_REC_MAX_KNOWN, "record types are 1..N");
VT_RECORD_TYPES(VT_REC_IN_RANGE)
#undef VT_REC_IN_RANGE
#undef VT_REC_ONE

/* ---- the API list: X(NAME, id, layer, kind, space) ---------------------------------------
 * layer: 1 runtime (libcudart), 2 driver (libcuda), 3 allocator (PyTorch's caching allocator,
 * its trace tracker: tensors inside the segments that layers 1/2 record; minor version 1).
 * kind: what the call does to memory (VT_KIND_*). space: which key space `addr` lives in,
 * so an analyzer pairs a free with its alloc by (space, addr). Ids are part of the format:
 * never renumber, only append. */
#define VT_APIS(X)                                                                                 \
    X(cudaMalloc, 1, 1, ALLOC, DEVICE)                                                             \
    X(cudaFree, 2, 1, FREE, DEVICE)                                                                \
    X(cudaMallocAsync, 3, 1, ALLOC, DEVICE)                                                        \
    X(cudaFreeAsync, 4, 1, FREE, DEVICE)                                                           \
    X(cudaMallocFromPoolAsync, 5, 1, ALLOC, DEVICE)                                                \
    X(cudaMallocManaged, 6, 1, ALLOC, MANAGED)                                                     \
    X(cudaMallocPitch, 7, 1, ALLOC, DEVICE)                                                        \
    X(cudaHostAlloc, 8, 1, ALLOC, HOST)                                                            \
    X(cudaMallocHost, 9, 1, ALLOC, HOST)                                                           \
    X(cudaFreeHost, 10, 1, FREE, HOST)                                                             \
    X(cudaHostRegister, 11, 1, ALLOC, HOSTREG)                                                     \
    X(cudaHostUnregister, 12, 1, FREE, HOSTREG)                                                    \
    X(cudaMemGetInfo, 13, 1, INFO, NONE)                                                           \
    X(cudaMemPoolTrimTo, 14, 1, TRIM, NONE)                                                        \
    X(cudaGetDriverEntryPoint, 15, 1, OTHER, NONE)                                                 \
    X(cudaGetDriverEntryPointByVersion, 16, 1, OTHER, NONE)                                        \
    X(cuMemAlloc, 32, 2, ALLOC, DEVICE)                                                            \
    X(cuMemFree, 33, 2, FREE, DEVICE)                                                              \
    X(cuMemAllocPitch, 34, 2, ALLOC, DEVICE)                                                       \
    X(cuMemAllocManaged, 35, 2, ALLOC, MANAGED)                                                    \
    X(cuMemAllocAsync, 36, 2, ALLOC, DEVICE)                                                       \
    X(cuMemFreeAsync, 37, 2, FREE, DEVICE)                                                         \
    X(cuMemAllocFromPoolAsync, 38, 2, ALLOC, DEVICE)                                               \
    X(cuMemCreate, 39, 2, ALLOC, VMM_HANDLE)                                                       \
    X(cuMemRelease, 40, 2, FREE, VMM_HANDLE)                                                       \
    X(cuMemRetainAllocationHandle, 41, 2, RETAIN, VMM_HANDLE)                                      \
    X(cuMemMap, 42, 2, MAP, VMM_VA)                                                                \
    X(cuMemUnmap, 43, 2, UNMAP, VMM_VA)                                                            \
    X(cuMemAddressReserve, 44, 2, RESERVE, VA_RANGE)                                               \
    X(cuMemAddressFree, 45, 2, UNRESERVE, VA_RANGE)                                                \
    X(cuMemImportFromShareableHandle, 46, 2, ALLOC, VMM_HANDLE)                                    \
    X(cuMemPoolTrimTo, 47, 2, TRIM, NONE)                                                          \
    X(cuModuleLoad, 48, 2, LOAD, MODULE)                                                           \
    X(cuModuleLoadData, 49, 2, LOAD, MODULE)                                                       \
    X(cuModuleLoadDataEx, 50, 2, LOAD, MODULE)                                                     \
    X(cuModuleLoadFatBinary, 51, 2, LOAD, MODULE)                                                  \
    X(cuModuleUnload, 52, 2, UNLOAD, MODULE)                                                       \
    X(cuLibraryLoadData, 53, 2, LOAD, LIBRARY)                                                     \
    X(cuLibraryLoadFromFile, 54, 2, LOAD, LIBRARY)                                                 \
    X(cuLibraryUnload, 55, 2, UNLOAD, LIBRARY)                                                     \
    X(cuDevicePrimaryCtxRetain, 56, 2, CONTEXT, CONTEXT)                                           \
    X(cuCtxCreate, 57, 2, CONTEXT, CONTEXT)                                                        \
    X(cuMemGetInfo, 58, 2, INFO, NONE)                                                             \
    X(cuMemHostAlloc, 59, 2, ALLOC, HOST)                                                          \
    X(cuMemAllocHost, 60, 2, ALLOC, HOST)                                                          \
    X(cuMemFreeHost, 61, 2, FREE, HOST)                                                            \
    X(torchAlloc, 64, 3, ALLOC, TENSOR)                                                            \
    X(torchFree, 65, 3, FREE, TENSOR)                                                              \
    X(torchSegmentAlloc, 66, 3, OTHER, NONE)                                                       \
    X(torchSegmentFree, 67, 3, OTHER, NONE)                                                        \
    X(torchSegmentMap, 68, 3, OTHER, NONE)                                                         \
    X(torchSegmentUnmap, 69, 3, OTHER, NONE)                                                       \
    X(torchOom, 70, 3, INFO, NONE)                                                                 \
    X(torchTrackerNote, 71, 3, INFO, NONE)                                                         \
    X(torchFreeRequested, 72, 3, OTHER, NONE)
/* 62 and 63 (cuDevicePrimaryCtxRelease, cuCtxDestroy) were listed but never hooked, so no
 * trace holds them: retired, not to be reused. Every runtime and driver API here is hooked
 * (preload/hooks/hook_table.h; test_hooks checks it); the allocator's (layer 3) are recorded
 * by preload/torch/ from PyTorch's trace tracker, never by a hook. */

enum vt_api {
    VT_API_NONE = 0,
#define VT_API_ENUM(name, id, layer, kind, space) VT_API_##name = id,
    VT_APIS(VT_API_ENUM)
#undef VT_API_ENUM
        VT_API_MAX = 255
};

/* torchTrackerNote (ALLOC, layer 3): what became of the allocator tracker; size = a code
 * below, addr = a detail (ATTACHED: the layout, 1 c10::CachingDeviceAllocator, 2
 * c10::cuda::CUDACachingAllocator). Anything but ATTACHED means: no tensor events follow from
 * the tracker (STOPPED: none after this record), the trace is in segment mode. */
#define VT_TRACKER_NOTES(X)                                                                        \
    X(ATTACHED, 1, "attached to PyTorch's caching allocator")                                      \
    X(NO_LIBRARY, 2, "libc10_cuda.so is not loaded")                                               \
    X(NO_SYMBOL, 3, "a symbol is missing from libc10_cuda.so's .symtab (stripped?)")               \
    X(UNKNOWN_LAYOUT, 4,                                                                           \
      "attachAllocatorTraceTracker takes a TraceEntry this build does not know")                   \
    X(OTHER_ALLOCATOR, 5, "the allocator is not the native caching allocator (another backend)")   \
    X(NO_ALLOCATOR, 6, "the allocator pointer is null")                                            \
    X(SEGMENT_MISMATCH, 7, "the tracker's first segment differs from the one the hook recorded")   \
    X(NO_SEGMENT, 8, "the tracker never reported the segments the hook recorded")                  \
    X(BAD_ENTRY, 9, "the tracker reported an action this build does not know")                     \
    X(OFF, 10, "VRAMTRACE_TORCH_TRACKER=0: not attached on request")                               \
    X(DROPPED, 11, "addr = events of other threads dropped while the first segment was checked")   \
    X(OUTSIDE, 12, "a symbol's address is outside the loaded library (file changed on disk?)")
enum vt_tracker_note {
#define VT_TRACKER_NOTE_ENUM(name, code, text) VT_TRACKER_##name = code,
    VT_TRACKER_NOTES(VT_TRACKER_NOTE_ENUM)
#undef VT_TRACKER_NOTE_ENUM
};

enum vt_layer { VT_LAYER_RUNTIME = 1, VT_LAYER_DRIVER = 2, VT_LAYER_ALLOCATOR = 3 };

/* What a call does. ALLOC/FREE change memory; RESERVE/UNRESERVE only address space;
 * MAP/UNMAP put physical handles into address space (not counted twice: VMM memory is
 * counted by handle, see docs/capture.md, "VMM"); LOAD/UNLOAD kernel images; CONTEXT
 * a context whose size is the cuMemGetInfo used-memory delta around its creation. */
/* clang-format off */
#define VT_KINDS(X)                                                                                \
    X(ALLOC)                                                                                       \
    X(FREE)                                                                                        \
    X(RETAIN)                                                                                      \
    X(MAP)                                                                                         \
    X(UNMAP)                                                                                       \
    X(RESERVE)                                                                                     \
    X(UNRESERVE)                                                                                   \
    X(LOAD)                                                                                        \
    X(UNLOAD)                                                                                      \
    X(CONTEXT)                                                                                     \
    X(UNCONTEXT)                                                                                   \
    X(INFO)                                                                                        \
    X(TRIM)                                                                                        \
    X(OTHER)
/* clang-format on */
enum vt_kind {
#define VT_KIND_ENUM(k) VT_KIND_##k,
    VT_KINDS(VT_KIND_ENUM)
#undef VT_KIND_ENUM
};

/* clang-format off */
#define VT_SPACES(X)                                                                               \
    X(NONE)                                                                                        \
    X(DEVICE)                                                                                      \
    X(MANAGED)                                                                                     \
    X(HOST)                                                                                        \
    X(HOSTREG)                                                                                     \
    X(VMM_HANDLE)                                                                                  \
    X(VMM_VA)                                                                                      \
    X(VA_RANGE)                                                                                    \
    X(MODULE)                                                                                      \
    X(LIBRARY)                                                                                     \
    X(CONTEXT)                                                                                     \
    X(TENSOR)
/* clang-format on */
enum vt_space {
#define VT_SPACE_ENUM(s) VT_SPACE_##s,
    VT_SPACES(VT_SPACE_ENUM)
#undef VT_SPACE_ENUM
};

/* ---- event flags (ALLOC / FREE / OOM header.flags) ---------------------------------------
 *   bits 0..7   api id (enum vt_api)
 *   bits 8..11  device ordinal 0..14; 15 = unknown or >= 15
 *   bit  12     VT_EVF_FAILED   the call returned an error (result holds it)
 *   bit  13     VT_EVF_BACKWARD made on an autograd thread (stack's Python part borrowed
 *               from the thread waiting in backward())
 *   bit  14     VT_EVF_EMULATED failed by card emulation (--card), not by the real call
 *   bit  15     reserved, 0 */
#define VT_EVF_API(f) ((unsigned)(f)&0xffu)
#define VT_EVF_DEVICE(f) (((unsigned)(f) >> 8) & 0xfu)
#define VT_EVF_MAKE(api, dev)                                                                      \
    ((uint16_t)(((unsigned)(api)&0xffu) | ((((unsigned)(dev) > 14u ? 15u : (unsigned)(dev))) << 8)))
#define VT_EVF_FAILED 0x1000u
#define VT_EVF_BACKWARD 0x2000u
#define VT_EVF_EMULATED 0x4000u
#define VT_DEVICE_UNKNOWN 15u

#define VT_TT_MAKE(ns, thread) (((uint64_t)(ns)&0xffffffffffffull) | ((uint64_t)(thread) << 48))
#define VT_TT_NS(tt) ((tt)&0xffffffffffffull)
#define VT_TT_THREAD(tt) ((uint32_t)((tt) >> 48))

/* ---- payloads ---------------------------------------------------------------------------- */

/* PROCESS: fixed part, then strings: exe, cwd, hostname, argv[argc], env[nenv] where each
 * env string is "NAME=value" for the recorded variables that are set (PYTORCH_CUDA_ALLOC_CONF,
 * PYTORCH_ALLOC_CONF, CUDA_VISIBLE_DEVICES, RANK, LOCAL_RANK, WORLD_SIZE, ...; since 1.2 also
 * every VRAMTRACE_* variable, at most 32 of them, each cut at 1023 bytes). */
typedef struct vt_rec_process {
    uint32_t pid;
    uint32_t ppid;
    uint32_t argc;
    uint32_t nenv;
    uint64_t start_realtime_ns;
} vt_rec_process;
_Static_assert(sizeof(vt_rec_process) == 24, "layout");

/* CONFIG: fixed part, then one string: the emulated card's name as given ("" if none).
 * stack_mode is what this process records: in a process where native frames are off
 * (VT_CONFIG_NATIVE_OFF_FORK) its NATIVE bit is clear, so every reader sees Python frames only. */
enum vt_stack_mode { VT_STACKS_NONE = 0, VT_STACKS_NATIVE = 1, VT_STACKS_PYTHON = 2 /* bit */ };
typedef struct vt_rec_config {
    uint64_t card_bytes;  /* emulated card capacity, 0 = no emulation */
    uint32_t stack_mode;  /* VT_STACKS_* bits */
    uint32_t stack_depth; /* native frame cap */
    uint32_t sample_ms;   /* background cuMemGetInfo sampler period, 0 = off */
    uint32_t flags;       /* VT_CONFIG_* (was `reserved`, always 0, before 1.2 writers set it) */
} vt_rec_config;
/* CONFIG flags. NATIVE_OFF_FORK: this process was forked from a multithreaded parent, where
 * native unwinding (and anything else that takes the dynamic loader's lock: walking the loaded
 * objects, reading build-ids, attaching to PyTorch's allocator) could wait forever on a lock
 * a thread of the parent held at the fork; the preload recorded no native frames in it
 * (stack_mode's NATIVE bit cleared) although they were asked for. An exec ends it. */
#define VT_CONFIG_NATIVE_OFF_FORK 0x1u
_Static_assert(sizeof(vt_rec_config) == 24, "layout");

/* DEVICE: fixed part, then one string: the device name. */
typedef struct vt_rec_device {
    uint32_t ordinal;
    uint32_t cc_major;
    uint32_t cc_minor;
    uint32_t reserved;
    uint64_t total_bytes; /* the real total (emulated capacity is in CONFIG) */
    uint8_t uuid[16];
} vt_rec_device;
_Static_assert(sizeof(vt_rec_device) == 40, "layout");

/* THREAD: fixed part, then one string: the thread's name (prctl PR_GET_NAME). */
enum vt_thread_role {
    VT_ROLE_OTHER = 0,
    VT_ROLE_MAIN = 1,
    VT_ROLE_AUTOGRAD = 2,
    VT_ROLE_WORKER = 3
};
typedef struct vt_rec_thread {
    uint32_t index; /* the value in events' tt bits 48..63; unique in this file */
    uint32_t tid;
    uint32_t role; /* vt_thread_role */
    uint32_t reserved;
} vt_rec_thread;
_Static_assert(sizeof(vt_rec_thread) == 16, "layout");

/* ALLOC (40 bytes, or 48 with aux): addr is the result (device pointer, handle, module,
 * context, reserved VA) or 0 on failure; size the bytes asked for (CONTEXT: the
 * cuMemGetInfo used-memory delta; LOAD: the image size when known, else 0).
 * aux (present when header.size >= 48): MAP: the physical handle; RESERVE: the requested
 * fixed address; CONTEXT: used bytes before creation; otherwise 0. */
typedef struct vt_rec_alloc {
    uint64_t tt;
    uint64_t addr;
    uint64_t size;
    uint32_t stack_id;
    uint16_t stream; /* small per-file index of the stream (0 = default / none) */
    int16_t result;  /* cudaError_t or CUresult, 0 = success */
} vt_rec_alloc;
_Static_assert(sizeof(vt_rec_alloc) == 32, "layout");
#define VT_ALLOC_REC_SIZE (8u + 32u)
#define VT_ALLOC_AUX_REC_SIZE (8u + 40u)

/* FREE (24 bytes): the short form, for a successful release with no stack.
 * FREE with header.size >= 32 adds vt_rec_free_ext (a failure, or a stack wanted). */
typedef struct vt_rec_free {
    uint64_t tt;
    uint64_t addr;
} vt_rec_free;
_Static_assert(sizeof(vt_rec_free) == 16, "layout");
typedef struct vt_rec_free_ext {
    uint32_t stack_id;
    uint16_t stream;
    int16_t result;
} vt_rec_free_ext;
_Static_assert(sizeof(vt_rec_free_ext) == 8, "layout");
#define VT_FREE_REC_SIZE (8u + 16u)
#define VT_FREE_EXT_REC_SIZE (8u + 24u)

/* STACK: fixed part, then u64 frames[n_native + n_python]. Ids are given in order (1, 2, ...
 * as stacks are first met; threads may write their STACK records a little out of that order):
 * a STACK record's id, and the stack id of an event (and of a STEP's stacks), is at most 2 x the
 * STACK records before it + VT_STACK_ID_SLACK. Readers refuse a trace that breaks this as
 * malformed, so what they keep per stack id stays proportional to the file. */
#define VT_STACK_ID_SLACK 65536u
typedef struct vt_rec_stack {
    uint32_t stack_id; /* >= 1, unique in this file */
    uint16_t n_native;
    uint16_t n_python;
} vt_rec_stack;
_Static_assert(sizeof(vt_rec_stack) == 8, "layout");
/* STACK header.flags (later 1.3 writers; 0 before): outer Python frames past the 128 kept
 * were dropped (STACKS above) */
#define VT_STACKF_PY_CUT 0x1u
#define VT_PYFRAME(code_id, off) (((uint64_t)(code_id) << 32) | (uint32_t)(off))
#define VT_PYFRAME_CODE(f) ((uint32_t)((f) >> 32))
#define VT_PYFRAME_OFFSET(f) ((uint32_t)(f))

/* CODE: fixed part, then strings: filename, qualname, then the raw line table bytes as a
 * string (co_linetable in the format of PYINFO's version; 3.10: the 3.10 co_linetable). */
typedef struct vt_rec_code {
    uint32_t code_id; /* >= 1, unique in this file; a reused code address gets a new id */
    uint32_t first_line;
} vt_rec_code;
_Static_assert(sizeof(vt_rec_code) == 8, "layout");

/* SYMBOL: fixed part, then one string: the (mangled) symbol name, "" if none. */
typedef struct vt_rec_symbol {
    uint64_t ip;
    uint64_t offset;     /* ip - module base */
    uint32_t module_id;  /* 0 = unknown module */
    uint32_t sym_offset; /* ip - symbol start, 0 if no symbol */
} vt_rec_symbol;
_Static_assert(sizeof(vt_rec_symbol) == 24, "layout");

/* MODULE: fixed part, then strings: the path, then (since 1.1) the object's GNU build-id as
 * raw bytes ("" when it has none). A 1.0 record, and one of an early 1.1 writer, ends after
 * the path: readers take the build-id only when the record holds it. For the program itself
 * the path is its real path (/proc/self/exe) when the build-id is there, argv[0] before. */
typedef struct vt_rec_module {
    uint32_t module_id; /* >= 1 */
    uint32_t reserved;
    uint64_t base;
} vt_rec_module;
_Static_assert(sizeof(vt_rec_module) == 16, "layout");

enum vt_meminfo_source { VT_MEMINFO_APP = 0, VT_MEMINFO_SAMPLER = 1, VT_MEMINFO_CONTEXT = 2 };
typedef struct vt_rec_meminfo {
    uint64_t tt;
    uint64_t free_bytes; /* as the program saw it (emulated when --card) */
    uint64_t total_bytes;
    uint32_t device;
    uint32_t source; /* vt_meminfo_source */
} vt_rec_meminfo;
_Static_assert(sizeof(vt_rec_meminfo) == 32, "layout");

/* OOM (header.flags as for events): written right after the failed ALLOC. */
typedef struct vt_rec_oom {
    uint64_t tt;
    uint64_t requested;
    uint64_t capacity;     /* emulated card or the device's total */
    uint64_t process_used; /* the tracer's own count of this process's device bytes then */
    uint32_t stack_id;
    int32_t result;
} vt_rec_oom;
_Static_assert(sizeof(vt_rec_oom) == 40, "layout");

typedef struct vt_rec_pyinfo {
    uint32_t major;
    uint32_t minor;
    uint32_t micro;
    uint32_t supported; /* 1 if frames are captured, 0 if this version is not supported */
} vt_rec_pyinfo;
_Static_assert(sizeof(vt_rec_pyinfo) == 16, "layout");

/* TRAILER header.flags: why the trace ended (0: the process exited normally).
 * X(NAME, bit, key): VT_TRAILER_NAME; key names it in JSON (`dump`: "ended").
 *   DISK_FULL     output stopped early: no room for the file (ENOSPC, quota, or EFBIG: the
 *                 file-size limit, `ulimit -f`; `error` says which); later events were not
 *                 recorded (n_dropped counts those seen before the trailer)
 *   OUTPUT_ERROR  output stopped early on another error (mmap, ...)
 *   EXEC          the process called exec: the program went on as a new image (traced, if at
 *                 all, in a file of its own) */
#define VT_TRAILER_FLAGS(X)                                                                        \
    X(DISK_FULL, 0x1u, "disk_full")                                                                \
    X(OUTPUT_ERROR, 0x2u, "output_error")                                                          \
    X(EXEC, 0x4u, "exec")
enum vt_trailer_flag {
#define VT_TRAILER_ENUM(name, bit, key) VT_TRAILER_##name = bit,
    VT_TRAILER_FLAGS(VT_TRAILER_ENUM)
#undef VT_TRAILER_ENUM
};
/* TRAILER header.flags bits 8..15: why the events counted in n_dropped were lost, beside why the
 * trace ended (later 1.3 writers; 0 before, and where the reason is none of these).
 * X(NAME, bit, key): VT_TRAILER_NAME; key names it in JSON (`dump`: "lost_why").
 *   LOST_IN_HOOK  made by a signal handler that interrupted the tracer's own work inside a hook
 *                 on the same thread (recording another call): it could not be written then
 *   NO_HELPER     a bounded trace's packing thread was not started (`ulimit -u` left no room
 *                 beside the program's threads) or could not start: the program's threads packed
 *                 the trace as they filled it (the sampler's absence is no loss: not said here) */
#define VT_TRAILER_LOSSES(X)                                                                       \
    X(LOST_IN_HOOK, 0x100u, "in_hook")                                                             \
    X(NO_HELPER, 0x200u, "no_helper")
enum vt_trailer_loss {
#define VT_TRAILER_LOSS_ENUM(name, bit, key) VT_TRAILER_##name = bit,
    VT_TRAILER_LOSSES(VT_TRAILER_LOSS_ENUM)
#undef VT_TRAILER_LOSS_ENUM
};
#define VT_TRAILER_END_MASK 0xffu /* header.flags bits that say why the trace ended */
typedef struct vt_rec_trailer {
    uint64_t end_ns;           /* since start_mono_ns */
    uint64_t n_events;         /* ALLOC + FREE records written */
    uint64_t n_dropped;        /* events lost (output failure, table full, made after the trailer
                                * at exit or exec: added in place since 2026-12-03); chunked: not
                                * a group the packer could not place (in n_events, readers find) */
    uint64_t n_records;        /* all records written, trailer excluded */
    uint32_t stacks_truncated; /* stacks cut at the depth cap */
    uint32_t error;            /* with DISK_FULL / OUTPUT_ERROR: the errno that stopped the
                                * output (ENOSPC 28, EDQUOT 122, EFBIG 27: the file reached the
                                * process's file-size limit, `ulimit -f`; ...); else 0. Was
                                * `reserved` (always 0) before 1.2 writers set it */
} vt_rec_trailer;
_Static_assert(sizeof(vt_rec_trailer) == 40, "layout");

/* FILE (1.2): one file the command line named, read once when the trace opens (right after
 * PROCESS), so the analyzer never opens a file that a trace names. Fixed part, then strings:
 *   name      the text as the command line gave it (the argument, or the value after '='
 *             of --key=value; for DIR_CONFIG the directory argument + "/config.json";
 *             for TORCH_VERSION "torch/version.py")
 *   path      the absolute path that was read (cwd joined when relative)
 *   contents  the file's bytes (empty unless flags == 0)
 * Which files (kind): an argument (or --key=VALUE) that is an existing regular file ending
 * .py .json .yaml .yml .toml (the script itself included), and config.json of an argument
 * that is a directory; TORCH_VERSION (argi 0): PyTorch's torch/version.py beside the loaded
 * torch/lib/libc10.so (its __version__ and the CUDA version it was built for), when PyTorch is
 * loaded when the trace opens. Bounds: contents <= VT_FILE_MAX_BYTES (a larger file is
 * recorded with VT_FILEF_TOO_LARGE and no contents); at most VT_FILE_MAX_COUNT records per
 * trace, one per distinct name; a FIFO, device or other non-regular file is never opened.
 * Readers: trust no length (strings are bounded by the record; contents longer than
 * VT_FILE_MAX_BYTES is malformed). */
#define VT_FILE_MAX_BYTES (256u << 10)
#define VT_FILE_MAX_COUNT 32u
#define VT_FILE_KINDS(X)                                                                           \
    X(ARG, 1, "arg", "a config file named by an argument (or --key=FILE)")                         \
    X(DIR_CONFIG, 2, "dir_config", "config.json of a directory argument (a model directory)")      \
    X(TORCH_VERSION, 3, "torch_version", "torch/version.py of the loaded PyTorch")
enum vt_file_kind {
#define VT_FILE_KIND_ENUM(name, v, key, doc) VT_FILE_##name = v,
    VT_FILE_KINDS(VT_FILE_KIND_ENUM)
#undef VT_FILE_KIND_ENUM
};
#define VT_FILEF_TOO_LARGE 0x1u  /* larger than VT_FILE_MAX_BYTES: contents not recorded */
#define VT_FILEF_READ_ERROR 0x2u /* open or read failed: contents not recorded */
typedef struct vt_rec_file {
    uint32_t kind;  /* vt_file_kind */
    uint32_t argi;  /* index of the argument in PROCESS argv */
    uint64_t size;  /* the file's size on disk when read */
    uint32_t flags; /* VT_FILEF_* */
    uint32_t reserved;
} vt_rec_file;
_Static_assert(sizeof(vt_rec_file) == 24, "layout");

/* Environment variables the PROCESS record keeps, one X-macro (1.2: and every VRAMTRACE_*). */
/* clang-format off */
#define VT_RECORDED_ENV(X)                                                                         \
    X(PYTORCH_CUDA_ALLOC_CONF)                                                                     \
    X(PYTORCH_ALLOC_CONF)                                                                          \
    X(CUDA_VISIBLE_DEVICES)                                                                        \
    X(RANK)                                                                                        \
    X(LOCAL_RANK)                                                                                  \
    X(WORLD_SIZE)                                                                                  \
    X(PYTORCH_NO_CUDA_MEMORY_CACHING)                                                              \
    X(CUDA_MODULE_LOADING)
/* clang-format on */

/* 1.3: the chunked layout's records (SLOT, CHUNK, SNAPSHOT, STEP); 2.0: the block layout's */
#include "trace_chunked.h"
#include "trace_blocks.h"

#endif /* VRAMTRACE_TRACE_FORMAT_H */
