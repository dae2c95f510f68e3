/* core.h — the preload's tracking core: the small C interface between the exported hooks
 * (hook_*.c, thin shims) and everything that does work (core.c, writer.c, stacks.c,
 * pyframes.c, card.c). Unit tests call this interface directly, without LD_PRELOAD.
 * Names: vt__ for preload internals. Nothing here may take the GIL or call the runtime. */
#ifndef VT_PRELOAD_CORE_H
#define VT_PRELOAD_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "vramtrace/trace_format.h"

#define VT__EXPORT __attribute__((visibility("default")))
#define VT__LIKELY(x) __builtin_expect(!!(x), 1)
#define VT__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- configuration (read once from VRAMTRACE_* at first use; see README table) ---------- */
typedef struct vt__config {
    int disabled;           /* VRAMTRACE_DISABLE=1 */
    int stack_mode;         /* VT_STACKS_* bits, from VRAMTRACE_STACKS=none|native|python|all */
    int stack_depth;        /* VRAMTRACE_STACK_DEPTH, native frames, default 32, max 128 */
    uint64_t card_bytes;    /* VRAMTRACE_CARD_BYTES, 0 = no emulation */
    char card_name[64];     /* VRAMTRACE_CARD_NAME */
    unsigned sample_ms;     /* VRAMTRACE_SAMPLE_MS, 0 = off */
    int free_stacks;        /* VRAMTRACE_FREE_STACKS=1: stacks on frees too */
    char output[4096];      /* VRAMTRACE_OUTPUT template, default "vramtrace.%p.vt" */
    char manifest[4096];    /* VRAMTRACE_MANIFEST: file to append each trace path to, "" = none */
} vt__config;

/* vt__config_get: the process's configuration, parsed on first call (no allocation). */
const vt__config *vt__config_get(void);
/* vt__config_reload: re-reads the environment (a fork child, tests). Not thread-safe. */
void vt__config_reload(void);

/* ---- per-thread guard ---------------------------------------------------------------------
 * Every hook does:
 *     int rec = vt__enter();      // 1: record this call; 0: pass through (nested, disabled)
 *     ... real call ...
 *     if (rec) vt__record_*(...);
 *     vt__leave();                // always, pairs with vt__enter
 * vt__enter increments a thread-local depth (initial-exec TLS) and returns 1 only at depth 1
 * while tracing is enabled. Driver hooks reached from inside a runtime hook (depth > 1) do
 * not record: a cudaMalloc is one event, not two. errno is preserved by both. */
int vt__enter(void);
void vt__leave(void);
int vt__depth(void);

/* vt__active: tracing is enabled and has not been stopped by an output failure. */
int vt__active(void);

/* ---- events ---------------------------------------------------------------------------- */
typedef struct vt__event {
    uint16_t api;     /* enum vt_api */
    uint16_t flags;   /* extra VT_EVF_FAILED / VT_EVF_EMULATED bits; api/device are added */
    int32_t device;   /* ordinal, or -1: the core asks the driver for the current device */
    uint64_t addr;    /* result pointer / handle / address freed */
    uint64_t size;
    uint64_t stream;  /* raw cudaStream_t / CUstream value, 0 = default */
    int32_t result;   /* the real call's return code (0 = success) */
    int has_aux;
    uint64_t aux;
} vt__event;

/* vt__record_alloc / vt__record_free: stamp time + thread, capture the stack (per config),
 * write one ALLOC / FREE record (plus THREAD/STACK/CODE/SYMBOL/MODULE/DEVICE records the
 * first time each is needed). On an out-of-memory result an OOM record follows the ALLOC.
 * Cost target: < 150 ns without stacks. Never fails visibly: on output failure tracing
 * stops with one warning on stderr. */
void vt__record_alloc(const vt__event *ev);
void vt__record_free(const vt__event *ev);
/* vt__meminfo_seen: what a hooked cudaMemGetInfo / cuMemGetInfo returned: rewritten to the
 * emulated card when --card is set, then recorded (MEMINFO, source app). */
void vt__meminfo_seen(size_t *free_b, size_t *total_b);
/* vt__record_meminfo: one MEMINFO record. */
void vt__record_meminfo(int device, uint64_t free_b, uint64_t total_b, int source);

/* vt__current_device: the calling thread's current device via the driver's cuCtxGetDevice
 * (never the runtime); -1 if unknown. */
int vt__current_device(void);

/* ---- output (writer.c) ------------------------------------------------------------------
 * vt__write: appends one record (header + payload parts, padded to 8) to the trace, opening
 * the file on first use. Thread-safe; payload first, header last. Returns 0, or -1 when
 * tracing is off or output failed (the first failure prints one warning and disables). */
int vt__write(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2, size_t n2);
/* vt__write_strings: fixed part then a list of strings encoded as (u32 len, bytes). */
int vt__write_strings(uint16_t type, uint16_t flags, const void *fixed, size_t nfixed,
                      const char *const *strs, const uint32_t *lens, int nstrs);
/* vt__now_ns: nanoseconds since the trace's start_mono_ns. */
uint64_t vt__now_ns(void);
/* vt__writer_close: writes the trailer and truncates the file to its length (atexit). */
void vt__writer_close(void);

/* ---- threads (core.c) -------------------------------------------------------------------- */
/* vt__thread_index: this thread's small index (THREAD record written on first use). */
uint32_t vt__thread_index(void);
/* vt__thread_role: VT_ROLE_* of the calling thread (from its name, cached). */
int vt__thread_role(void);

/* ---- stacks (stacks.c, pyframes.c) --------------------------------------------------------
 * vt__stack_capture: the calling thread's stack, interned; writes the STACK (and SYMBOL /
 * MODULE / CODE) records the first time; returns the id (0 = none). skip = hook frames. */
uint32_t vt__stack_capture(int skip);

/* vt__py_capture: reads the calling thread's Python frame chain without the GIL; fills
 * out[] with VT_PYFRAME(code_id, offset), innermost first, writing CODE records for new code
 * objects; returns the count (0 = no Python frames / unsupported version). */
int vt__py_capture(uint64_t *out, int max);
/* vt__py_last_main_stack: the most recent Python frames seen on a thread that is not an
 * autograd thread (for events of backward threads); returns the count copied. */
int vt__py_last_main_stack(uint64_t *out, int max);

/* ---- card emulation (card.c) --------------------------------------------------------------
 * With VRAMTRACE_CARD_BYTES set, the process behaves as if each device had that capacity.
 * vt__card_admit: 1 if `size` more device bytes fit on `device`, else 0 (caller returns the
 * API's out-of-memory code without calling the real function).
 * vt__card_commit / vt__card_release: account a successful allocation / its release, keyed
 * by (space, key) so a release finds its size. vt__card_used: device bytes in use. */
int vt__card_enabled(void);
int vt__card_admit(int device, uint64_t size);
void vt__card_commit(int device, int space, uint64_t key, uint64_t size);
uint64_t vt__card_release(int space, uint64_t key);
uint64_t vt__card_used(int device);
/* vt__card_meminfo: rewrites (free, total) as the program should see them. */
void vt__card_meminfo(int device, uint64_t *free_b, uint64_t *total_b);

/* ---- sampler (sampler.c) -------------------------------------------------------------------
 * vt__sampler_note_context: a device's context exists (hook_driver.c); starts the
 * VRAMTRACE_SAMPLE_MS sampler thread the first time when the period is set. */
void vt__sampler_note_context(int device, void *ctx);

/* ---- real symbols (realsym.c, a core file so unit tests link it) --------------------------
 * vt__real_dlsym: the real dlsym (never our override). vt__next: dlsym(RTLD_NEXT, name)
 * through it, cached by the caller in a static pointer. */
void *vt__real_dlsym(void *handle, const char *name);
/* vt__real_dlsym_ptr: the real dlsym itself (for hook_dlsym.c's tail jump). */
void *vt__real_dlsym_ptr(void);
void *vt__next(const char *name);
/* vt__driver_sym: a function of the real libcuda (dlopen'ed RTLD_NOLOAD first, then
 * "libcuda.so.1"), bypassing our wrappers; NULL if absent. */
void *vt__driver_sym(const char *name);

#endif
