/* pyframes.c — the calling thread's Python stack, read straight from CPython's memory with
 * no GIL and no Python API call that could take it (CPython 3.10-3.12 through the tables in
 * pyoffsets.h, 3.13 through the interpreter's own _Py_DebugOffsets). Code objects are
 * interned into CODE records; stacks.c merges the frames after the native ones.
 *
 * OFFSET DEFINITION (what VT_PYFRAME's low 32 bits hold, what analyzer/pylines.c expects):
 * the byte offset of the instruction the frame is executing, counted from the start of the
 * code object's bytecode (co_code / co_code_adaptive) — i.e. 2 * (code-unit index), the
 * same value CPython itself passes to PyCode_Addr2Line for f_lineno and that co_lines()
 * ranges are expressed in:
 *   3.10      2 * f_lasti            (f_lasti counts code units)
 *   3.11/3.12 2 * (prev_instr - _PyCode_CODE(co))   (prev_instr = the instruction started)
 *   3.13      2 * (instr_ptr  - _PyCode_CODE(co))   (instr_ptr = the instruction running)
 * A caller frame in 3.12 may point at the last inline-cache unit of its CALL; the line table
 * gives cache units the CALL's line, and PyFrame_GetLineNumber() reads the same value, so
 * the line is always the one the interpreter reports (f_lineno / tracebacks).
 *
 * Safety: only the calling thread's own chain is read; that thread is inside our hook, so
 * its frames are frozen and its code objects alive. Pointers are checked (non-NULL,
 * aligned, a code object's type is PyCode_Type, or the code table has it checked in this epoch
 * of frees: pycodes.h), depth is capped, cycles are cut. Code objects
 * are interned by pycodes.c. The one write into the interpreter: PyCode_Type's tp_dealloc
 * wrapped once (vt__py_code_watch) to count the frees of code objects, which lets a lookup trust
 * a fingerprint it found equal earlier in the same count (pycodes.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/output.h"
#include "../core/quietio.h"
#include "../core/realsym.h"
#include "../core/thread.h"
#include "pycodes.h"
#include "pyframes.h"
#include "pyoffsets.h"
#include "pyread.h"
#include "vramtrace/trace_format.h"

#define VT__PY_MAX_DEPTH 128   /* Python frames kept per stack */
#define VT__PY_WALK_LIMIT 1024 /* frames visited at most (skipped ones included) */

enum { PY_UNPROBED, PY_NOT_PYTHON, PY_WAITING, PY_READY, PY_UNSUPPORTED };

/* ---- process-wide state ------------------------------------------------------------------ */
static _Atomic int g_state = PY_UNPROBED;
static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int (*g_is_initialized)(void);
static void *(*g_this_tstate)(void);
static const void *g_code_type; /* &PyCode_Type */
static vt__pyoffsets g_off;
typedef int (*walk_fn)(uint64_t ts, uint64_t *out, int max, int *cut);
static walk_fn g_walk; /* walk_for's, set before g_state becomes PY_READY */
static walk_fn walk_for(void);
static unsigned g_major, g_minor, g_micro;
static _Atomic int g_pyinfo_written; /* PYINFO in the current trace (reset in a fork child) */

/* ---- the main thread's last stack (the one autograd threads borrow): a seqlock, one writer
 * at a time. Another thread's (not an autograd thread's) stands in until the main thread has
 * stored one: every other thread's had, so a backward's allocations borrowed the stack of
 * whichever thread allocated last (a prefetching thread's, a DataLoader's pinning thread's)
 * where docs/capture.md says the main thread's (tests/python/frames_prog.py's prefetcher) ------ */
static struct {
    _Atomic uint32_t seq;
    _Atomic int n, cut; /* cut: its outer frames past the kept ones were left out */
    _Atomic uint64_t frames[VT__PY_MAX_DEPTH];
} g_last;
static atomic_flag g_last_busy = ATOMIC_FLAG_INIT;
static _Atomic int g_last_of_main; /* the main thread stored g_last: no other thread does now */

/* is_code: 1 if p looks like a live code object (aligned, type PyCode_Type). o: the offsets
 * (g_off, or a table of pyoffsets.h known at compile time: walk() below). */
static inline __attribute__((always_inline)) int is_code(const vt__pyoffsets *o, uint64_t p)
{
    return plausible(p) && rd_ptr(p, o->ob_type) == (uint64_t)(uintptr_t)g_code_type;
}

/* parse_version: "3.10.13 (main, ..." -> v[] = {3, 10, 13}; returns 0, or -1 when there is
 * no "major.minor". No allocation. */
static int parse_version(const char *s, unsigned v[3])
{
    for (int i = 0; i < 3; i++) {
        unsigned x = 0;
        int digits = 0;
        while (*s >= '0' && *s <= '9' && digits < 6)
            x = x * 10 + (unsigned)(*s++ - '0'), digits++;
        if (!digits)
            return i >= 2 ? 0 : -1;
        v[i] = x;
        if (i < 2) {
            if (*s != '.')
                return i == 1 ? 0 : -1;
            s++;
        }
    }
    return 0;
}

/* write_pyinfo: the PYINFO record of this trace, once (per trace: a fork child re-writes). */
static void write_pyinfo(int supported)
{
    if (atomic_exchange(&g_pyinfo_written, 1))
        return;
    vt_rec_pyinfo r = {g_major, g_minor, g_micro, (uint32_t)supported};
    vt__write(VT_REC_PYINFO, 0, &r, sizeof r, NULL, 0);
}

/* resolve_version: with Python initialized, reads its version and picks the offsets.
 * Result: PY_READY or PY_UNSUPPORTED (one warning on stderr for the latter). */
static int resolve_version(void)
{
    unsigned v[3] = {0, 0, 0};
    const unsigned long *hexv = vt__real_dlsym(RTLD_DEFAULT, "Py_Version");
    if (hexv) {
        v[0] = (unsigned)(*hexv >> 24) & 0xff;
        v[1] = (unsigned)(*hexv >> 16) & 0xff;
        v[2] = (unsigned)(*hexv >> 8) & 0xff;
    } else {
        const char *(*getv)(void) =
            (const char *(*)(void))vt__real_dlsym(RTLD_DEFAULT, "Py_GetVersion");
        if (!getv || parse_version(getv(), v) != 0)
            v[0] = 0;
    }
    g_major = v[0], g_minor = v[1], g_micro = v[2];
    g_code_type = vt__real_dlsym(RTLD_DEFAULT, "PyCode_Type");
    int ok = 0;
    if (g_major == 3 && g_code_type) {
        if (g_minor == 10)
            g_off = vt__pyoff_310, ok = 1;
        else if (g_minor == 11)
            g_off = vt__pyoff_311, ok = 1;
        else if (g_minor == 12)
            g_off = vt__pyoff_312, ok = 1;
        else if (g_minor == 13) {
            const vt__py313_debug_offsets *d = vt__real_dlsym(RTLD_DEFAULT, "_PyRuntime");
            ok = d && vt__pyoff_from_debug313(d, &g_off) == 0;
        }
    }
    if (!ok)
        vt__quiet_stderr(
            "vramtrace: Python %u.%u.%u is not supported for Python stacks (3.10-3.13 are); "
            "recording native stacks only\n",
            g_major, g_minor, g_micro);
    if (ok) {
        vt__py_code_watch(&g_off, g_code_type, vt__real_dlsym(RTLD_DEFAULT, "PyType_Type"));
        g_walk = walk_for();
    }
    write_pyinfo(ok);
    return ok ? PY_READY : PY_UNSUPPORTED;
}

/* probe_python: first call in the process: is this a Python process? Sets g_state. */
static void probe_python(void)
{
    pthread_mutex_lock(&g_init_lock);
    if (atomic_load(&g_state) == PY_UNPROBED) {
        g_is_initialized = (int (*)(void))vt__real_dlsym(RTLD_DEFAULT, "Py_IsInitialized");
        g_this_tstate =
            (void *(*)(void))vt__real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
        atomic_store(&g_state, g_is_initialized && g_this_tstate ? PY_WAITING : PY_NOT_PYTHON);
    }
    if (atomic_load(&g_state) == PY_WAITING && g_is_initialized())
        atomic_store(&g_state, resolve_version());
    pthread_mutex_unlock(&g_init_lock);
}

/* ---- frame walk ------------------------------------------------------------------------------ */
/* first_frame: the innermost frame of thread state `ts`, 0 if none. */
static inline __attribute__((always_inline)) uint64_t first_frame(const vt__pyoffsets *o,
                                                                  uint64_t ts)
{
    uint64_t f = rd_ptr(ts, o->ts_frame);
    if (o->cframe_current != VT__PYOFF_NONE) { /* 3.11/3.12: through the _PyCFrame */
        if (!plausible(f))
            return 0;
        f = rd_ptr(f, o->cframe_current);
    }
    return f;
}

/* frame_skipped_owner: frame fr is C-owned (3.12+'s shim frames of C calls): skipped, before its
 * code is looked at. The owner is read where it is needed alone (3.11 has no C-stack owner: only a
 * frame in its prologue asks whether it is a generator's): a line of the frame fewer, at times */
static inline __attribute__((always_inline)) int frame_skipped_owner(const vt__pyoffsets *o,
                                                                     uint64_t fr)
{
    const signed char *owner = (const signed char *)(uintptr_t)(fr + o->fr_owner);
    return o->fr_owner != VT__PYOFF_NONE && o->owner_cstack != -1 && *owner == o->owner_cstack;
}

/* frame_offset: the byte offset (definition at the top) of frame fr, running code object co
 * (what f tells of it); 0 when the frame is to be skipped: not started, or still in its prologue
 * (before its code object's first traceable instruction and not a generator's: incomplete,
 * CPython's _PyFrame_IsIncomplete) */
static inline __attribute__((always_inline)) int frame_offset(const vt__pyoffsets *o, uint64_t fr,
                                                              uint64_t co, const code_facts *f,
                                                              uint32_t *offset)
{
    if (o->fr_owner == VT__PYOFF_NONE) { /* 3.10 PyFrameObject */
        int32_t lasti = rd_i32(fr, o->fr_instr);
        *offset = lasti < 0 ? 0u : (uint32_t)lasti * 2u;
        return 1;
    }
    uint64_t base = co + o->co_code;
    uint64_t ip = rd_ptr(fr, o->fr_instr);
    if (ip < base || ip >= base + (uint64_t)f->units * 2)
        return 0; /* not started (or a size not believed: code_units) */
    uint64_t idx = (ip - base) / 2;
    const signed char *owner = (const signed char *)(uintptr_t)(fr + o->fr_owner);
    if (o->co_firsttraceable != VT__PYOFF_NONE && idx < f->first_traceable &&
        *owner != o->owner_generator)
        return 0; /* incomplete: still in the frame's prologue */
    *offset = (uint32_t)(idx * 2);
    return 1;
}

/* remember_main: stores frames[0..n), captured on a thread of role `role`, as the main thread's
 * last stack: the main thread's always, another's (not an autograd thread's) while the main
 * thread has stored none (skipped when another thread is storing right now) */
static void remember_main(const uint64_t *frames, int n, int cut, int role)
{
    int main = role == VT_ROLE_MAIN;
    if (role == VT_ROLE_AUTOGRAD ||
        (!main && atomic_load_explicit(&g_last_of_main, memory_order_relaxed)))
        return;
    if (atomic_flag_test_and_set_explicit(&g_last_busy, memory_order_acquire))
        return;
    uint32_t s = atomic_load_explicit(&g_last.seq, memory_order_relaxed);
    atomic_store_explicit(&g_last.seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (int i = 0; i < n; i++)
        atomic_store_explicit(&g_last.frames[i], frames[i], memory_order_relaxed);
    atomic_store_explicit(&g_last.n, n, memory_order_relaxed);
    atomic_store_explicit(&g_last.cut, cut, memory_order_relaxed);
    atomic_store_explicit(&g_last.seq, s + 2, memory_order_release);
    if (main && !atomic_load_explicit(&g_last_of_main, memory_order_relaxed))
        atomic_store_explicit(&g_last_of_main, 1, memory_order_relaxed);
    atomic_flag_clear_explicit(&g_last_busy, memory_order_release);
}

/* more_frames: whether the chain from frame fr on (guard frames visited before it) holds a frame
 * walk() would record: its outer frames that a full out[] leaves out (*cut). Read as walk reads
 * them, no code object interned; a chain that goes on past the walk's limit counts as more. Runs
 * only once out[] is full: a stack of at most max frames costs what it did. */
static inline __attribute__((always_inline)) int more_frames(const vt__pyoffsets *o, uint64_t fr,
                                                             uint64_t prev, int guard)
{
    for (; plausible(fr) && fr != prev; guard++) {
        if (guard >= VT__PY_WALK_LIMIT)
            return 1;
        uint64_t co = rd_ptr(fr, o->fr_code);
        uint32_t off;
        if (!frame_skipped_owner(o, fr) && is_code(o, co)) {
            code_facts f = {0, code_first_traceable(o, co), code_units(o, co)};
            if (frame_offset(o, fr, co, &f, &off))
                return 1;
        }
        prev = fr;
        fr = rd_ptr(fr, o->fr_previous);
    }
    return 0;
}

/* walk: the frames of thread state ts into out[0, max) (vt__py_capture's walk), through the
 * offsets o: instantiated once per table of pyoffsets.h, whose offsets are then constants and
 * whose version tests fold away (a frame's walk: ~10 % fewer instructions than through g_off's
 * loads), and once through g_off for a 3.13 whose offsets are not the table's. A code object
 * checked in this epoch is found inline (code_id_fast: no call, no register saved); id_of:
 * code_id_checked for the same table, out of line: the loop keeps its values in registers
 * around the call, where the fingerprint inline spilled them. With the loop's end tests merged
 * (below) and code_id's compare-as-read fingerprint (pycodes.h), a capture under 30 distinct Python
 * functions took 6,504 -> 6,150 instructions, under one function recursing 30 times 3,040 -> 2,976
 * (callgrind, tests/pyprobe/shim.c's loop on 3.11). */
static inline __attribute__((always_inline)) int walk(const vt__pyoffsets *o, uint64_t ts,
                                                      uint64_t *out, int max, int *cut,
                                                      uint32_t (*id_of)(uint64_t code, uint64_t ep))
{
    /* a code object met again in the same stack (a recursion; nn.Module's _wrapped_call_impl /
     * _call_impl at every level of modules) is fingerprinted once: its slot is then marked
     * checked in this epoch (a per-walk memo of ids by address, which that had needed, cost a
     * distinct function's frame more than the slot's look) */
    uint64_t ep = vt__py_code_epoch_now(); /* before any frame is read (pycodes.h) */
    int n = 0, guard = 0;
    uint64_t fr = first_frame(o, ts), prev = 0;
    *cut = 0;
    if (max <= 0)
        return 0;
    /* (plausible(0) is false: a null frame ends the walk too) */
    for (; guard < VT__PY_WALK_LIMIT && plausible(fr) && fr != prev; guard++) {
        uint64_t co = rd_ptr(fr, o->fr_code);
        code_facts f;
        uint32_t off;
        if (frame_skipped_owner(o, fr))
            goto next;
        if (VT__UNLIKELY(!code_id_fast(co, ep, &f))) {
            if (!is_code(o, co))
                goto next;
            f.id = id_of(co, ep);
            f.first_traceable = code_first_traceable(o, co);
            f.units = code_units(o, co);
        }
        if (f.id && frame_offset(o, fr, co, &f, &off)) {
            out[n++] = VT_PYFRAME(f.id, off);
            if (VT__UNLIKELY(n == max)) { /* the frames past it, if any, are left out */
                *cut = more_frames(o, rd_ptr(fr, o->fr_previous), fr, guard + 1);
                return n;
            }
        }
    next:
        prev = fr;
        fr = rd_ptr(fr, o->fr_previous);
    }
    *cut = n && guard == VT__PY_WALK_LIMIT && plausible(fr) && fr != prev; /* (stopped early) */
    return n;
}

#define VT__WALK_OF(table)                                                                         \
    static __attribute__((noinline)) uint32_t code_id_##table(uint64_t code, uint64_t ep)          \
    {                                                                                              \
        return code_id_checked(&table, code, ep);                                                  \
    }                                                                                              \
    static int walk_##table(uint64_t ts, uint64_t *out, int max, int *cut)                         \
    {                                                                                              \
        return walk(&table, ts, out, max, cut, code_id_##table);                                   \
    }
/* the tables of pyoffsets.h a walk of its own is made for (the walks below, walk_for's list) */
#define VT__PY_TABLES(X) X(vt__pyoff_310) X(vt__pyoff_311) X(vt__pyoff_312) X(vt__pyoff_313)
VT__WALK_OF(g_off)
VT__PY_TABLES(VT__WALK_OF)
#undef VT__WALK_OF

/* walk_for: the walk of the interpreter g_off was read from (resolve_version): its table's own,
 * or g_off's where none is the same (or where the build asks for g_off's alone:
 * VT__PY_WALK_GENERIC, which tests/integration/py_shim.sh checks on every version too) */
static walk_fn walk_for(void)
{
    static const struct {
        const vt__pyoffsets *table;
        walk_fn fn;
    } known[] = {
#define VT__KNOWN(table) {&table, walk_##table},
        VT__PY_TABLES(VT__KNOWN)
#undef VT__KNOWN
    };
#ifndef VT__PY_WALK_GENERIC
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!memcmp(known[i].table, &g_off, sizeof g_off))
            return known[i].fn;
#else
    (void)known;
#endif
    return walk_g_off;
}

/* vt__py_capture: see pyframes.h. Python frames of the calling thread, innermost first, as
 * VT_PYFRAME(code_id, byte offset); at most min(max, 128). 0 when this is not a Python
 * process, Python is not (or no longer) initialized, the version is unsupported, or the
 * thread has no Python thread state / no frames. *cut (unless NULL): 1 when the chain held more
 * frames past those (outer ones: VT_STACKF_PY_CUT), else 0. */
int vt__py_capture(uint64_t *out, int max, int *cut)
{
    if (cut)
        *cut = 0;
    int st = atomic_load_explicit(&g_state, memory_order_acquire);
    if (VT__UNLIKELY(st != PY_READY)) {
        if (st == PY_NOT_PYTHON || st == PY_UNSUPPORTED)
            return 0;
        probe_python();
        if (atomic_load(&g_state) != PY_READY)
            return 0;
    }
    if (!atomic_load_explicit(&g_pyinfo_written, memory_order_relaxed))
        write_pyinfo(1);
    if (!g_is_initialized())
        return 0; /* finalizing: code objects may be gone */
    uint64_t ts = (uint64_t)(uintptr_t)g_this_tstate();
    if (!plausible(ts))
        return 0;
    if (max > VT__PY_MAX_DEPTH)
        max = VT__PY_MAX_DEPTH;
    int c, n = g_walk(ts, out, max, &c);
    if (n > 0)
        remember_main(out, n, c, vt__thread_role());
    if (cut)
        *cut = n > 0 && c;
    return n;
}

/* vt__py_last_main_stack: see pyframes.h. Copies the last stack remember_main stored (at most
 * max frames; *cut as its capture's, or 1 when max left frames out); 0 if none yet or if a
 * writer kept it busy for every retry. Lock-free. */
int vt__py_last_main_stack(uint64_t *out, int max, int *cut)
{
    if (cut)
        *cut = 0;
    for (int tries = 0; tries < 16; tries++) {
        uint32_t s1 = atomic_load_explicit(&g_last.seq, memory_order_acquire);
        if (s1 & 1)
            continue;
        int n = atomic_load_explicit(&g_last.n, memory_order_relaxed);
        int c = atomic_load_explicit(&g_last.cut, memory_order_relaxed) || n > max ||
                n > VT__PY_MAX_DEPTH;
        if (n > max)
            n = max;
        if (n > VT__PY_MAX_DEPTH)
            n = VT__PY_MAX_DEPTH;
        for (int i = 0; i < n; i++)
            out[i] = atomic_load_explicit(&g_last.frames[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&g_last.seq, memory_order_relaxed) == s1) {
            if (cut)
                *cut = n > 0 && c;
            return n < 0 ? 0 : n;
        }
    }
    return 0;
}

/* vt__py_after_fork_child: a fork child writes its own trace: forget which CODE and PYINFO
 * records were written (the interned ids restart) and reset the locks. Called through
 * pthread_atfork (registered by the constructor below). */
static void vt__py_after_fork_child(void)
{
    vt__py_codes_after_fork();
    pthread_mutex_init(&g_init_lock, NULL);
    atomic_store(&g_pyinfo_written, 0);
    atomic_store(&g_last.n, 0);
    atomic_store(&g_last_of_main, 0);
    atomic_flag_clear(&g_last_busy);
}

/* vt__py_atfork_init: registers the fork handler (cheap, no I/O, no Python). */
__attribute__((constructor)) static void vt__py_atfork_init(void)
{
    pthread_atfork(NULL, NULL, vt__py_after_fork_child);
}
