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
 * aligned, a code object's type is PyCode_Type), depth is capped, cycles are cut. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/output.h"
#include "../core/quietio.h"
#include "../core/realsym.h"
#include "../core/thread.h"
#include "pyframes.h"
#include "pyoffsets.h"
#include "vramtrace/trace_format.h"

#define VT__PY_MAX_DEPTH 128    /* Python frames kept per stack */
#define VT__PY_WALK_LIMIT 1024  /* frames visited at most (skipped ones included) */
#define VT__CODE_SLOTS 16384    /* interned code objects (power of two) */
#define VT__CODE_FILL_MAX 12288 /* stop interning past 75 % fill */
#define VT__STR_MAX 2048        /* bytes of UTF-8 kept of a file name or qualname */
#define VT__LINETABLE_MAX (1u << 20)

enum { PY_UNPROBED, PY_NOT_PYTHON, PY_WAITING, PY_READY, PY_UNSUPPORTED };

/* ---- process-wide state ------------------------------------------------------------------ */
static _Atomic int g_state = PY_UNPROBED;
static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int (*g_is_initialized)(void);
static void *(*g_this_tstate)(void);
static const void *g_code_type; /* &PyCode_Type */
static vt__pyoffsets g_off;
static unsigned g_major, g_minor, g_micro;
static _Atomic int g_pyinfo_written; /* PYINFO in the current trace (reset in a fork child) */

/* ---- code interning: open addressing, lock-free lookups, inserts under g_code_lock ------ */
/* A code object's fingerprint: what tells it from a later one at the same address. Object
 * addresses alone are not enough (a dead code object's name and line table die with it and
 * their addresses are reused together), so words of the name's and the line table's
 * contents and their lengths are part of it. */
typedef struct code_fp {
    uint64_t filename, name, linetable, size, first_line;
    uint64_t lens;       /* name length << 32 | line table length */
    uint64_t name_head;  /* first (up to) 8 bytes of the name's characters */
    uint64_t table_head; /* first and last (up to) 8 bytes of the line table */
    uint64_t table_tail;
} code_fp;

typedef struct code_slot {
    _Atomic uint32_t id; /* 0 = empty; published last (release) */
    uint64_t code;       /* address */
    code_fp fp;
} code_slot;
static code_slot g_codes[VT__CODE_SLOTS];
static uint32_t g_code_count;   /* under g_code_lock */
static uint32_t g_next_code_id; /* under g_code_lock */
static pthread_mutex_t g_code_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_strbuf[2][VT__STR_MAX]; /* UTF-8 conversion, under g_code_lock */

/* ---- the last stack of a non-autograd thread: a seqlock, one writer at a time ----------- */
static struct {
    _Atomic uint32_t seq;
    _Atomic int n;
    _Atomic uint64_t frames[VT__PY_MAX_DEPTH];
} g_last;
static atomic_flag g_last_busy = ATOMIC_FLAG_INIT;

/* ---- raw reads (the memory is the calling thread's own, frozen while we run) ------------- */
static inline uint64_t rd_ptr(uint64_t base, uint32_t off)
{
    uint64_t v;
    memcpy(&v, (const void *)(uintptr_t)(base + off), sizeof v);
    return v;
}
static inline int32_t rd_i32(uint64_t base, uint32_t off)
{
    int32_t v;
    memcpy(&v, (const void *)(uintptr_t)(base + off), sizeof v);
    return v;
}
static inline uint32_t rd_u32(uint64_t base, uint32_t off)
{
    uint32_t v;
    memcpy(&v, (const void *)(uintptr_t)(base + off), sizeof v);
    return v;
}
static inline int plausible(uint64_t p)
{
    /* 4096 <= p < 2^56, 8-aligned: without branches (asked several times a frame) */
    return (p - 4096 < (1ull << 56) - 4096) & ((p & 7) == 0);
}

/* is_code: 1 if p looks like a live code object (aligned, type PyCode_Type). */
static inline int is_code(uint64_t p)
{
    return plausible(p) && rd_ptr(p, g_off.ob_type) == (uint64_t)(uintptr_t)g_code_type;
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

/* ---- strings ------------------------------------------------------------------------------ */
/* put_utf8: appends code point c to buf[*n..cap) if it fits. */
static void put_utf8(char *buf, uint32_t *n, uint32_t cap, uint32_t c)
{
    char t[4];
    uint32_t k;
    if (c >= 0xd800 && c <= 0xdfff)
        c = 0xfffd;
    if (c < 0x80)
        t[0] = (char)c, k = 1;
    else if (c < 0x800)
        t[0] = (char)(0xc0 | c >> 6), t[1] = (char)(0x80 | (c & 0x3f)), k = 2;
    else if (c < 0x10000)
        t[0] = (char)(0xe0 | c >> 12), t[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
        t[2] = (char)(0x80 | (c & 0x3f)), k = 3;
    else if (c < 0x110000)
        t[0] = (char)(0xf0 | c >> 18), t[1] = (char)(0x80 | ((c >> 12) & 0x3f)),
        t[2] = (char)(0x80 | ((c >> 6) & 0x3f)), t[3] = (char)(0x80 | (c & 0x3f)), k = 4;
    else
        t[0] = '?', k = 1;
    if (*n + k > cap)
        return;
    memcpy(buf + *n, t, k);
    *n += k;
}

/* unicode_utf8: the text of str object `u` as UTF-8: either a pointer into the object (pure
 * ASCII) or into buf (converted, at most cap bytes). Non-compact or odd objects give "?".
 * *len receives the length. */
static const char *unicode_utf8(uint64_t u, char *buf, uint32_t cap, uint32_t *len)
{
    *len = 1;
    if (!plausible(u))
        return "?";
    uint32_t st = rd_u32(u, g_off.uni_state);
    int64_t n = (int64_t)rd_ptr(u, g_off.uni_length);
    unsigned kind = VT__UNI_KIND(st);
    if (!VT__UNI_COMPACT(st) || n < 0 || n > (1 << 24))
        return "?";
    if (VT__UNI_ASCII(st)) {
        *len = n > cap ? cap : (uint32_t)n;
        return (const char *)(uintptr_t)(u + g_off.uni_ascii_size);
    }
    uint64_t data = u + g_off.uni_compact_size;
    uint32_t out = 0;
    for (int64_t i = 0; i < n && out + 4 <= cap; i++) {
        uint32_t c;
        if (kind == 1)
            c = ((const uint8_t *)(uintptr_t)data)[i];
        else if (kind == 2)
            c = ((const uint16_t *)(uintptr_t)data)[i];
        else if (kind == 4)
            c = ((const uint32_t *)(uintptr_t)data)[i];
        else
            return "?";
        put_utf8(buf, &out, cap, c);
    }
    *len = out;
    return buf;
}

/* ---- code objects --------------------------------------------------------------------------- */
/* word_at: the 8 bytes at p (8-aligned, so the load cannot cross a page) with only the first
 * n of them kept (n < 8: bytes past an object's contents are masked out). */
static inline uint64_t word_at(uint64_t p, uint64_t n)
{
    uint64_t w = rd_ptr(p, 0); /* (n == 0 too: the word holds the contents' terminator) */
    return n >= 8 ? w : w & ((1ull << (8 * n)) - 1); /* little-endian; n == 0: 0 */
}

/* fingerprint: see code_fp. */
static inline void fingerprint(uint64_t code, code_fp *f)
{
    f->filename = rd_ptr(code, g_off.co_filename);
    f->name = rd_ptr(code, g_off.co_name);
    f->linetable = rd_ptr(code, g_off.co_linetable);
    f->first_line = (uint64_t)(uint32_t)rd_i32(code, g_off.co_firstlineno);
    if (g_off.co_size != VT__PYOFF_NONE) {
        f->size = rd_ptr(code, g_off.co_size);
    } else {
        uint64_t b = rd_ptr(code, g_off.co_code); /* 3.10: co_code bytes */
        f->size = plausible(b) ? rd_ptr(b, g_off.bytes_size) : 0;
    }
    f->lens = f->name_head = f->table_head = f->table_tail = 0;
    if (plausible(f->name)) {
        uint32_t st = rd_u32(f->name, g_off.uni_state);
        uint64_t len = rd_ptr(f->name, g_off.uni_length);
        if (VT__UNI_COMPACT(st) && len < (1u << 24)) {
            uint32_t hdr = VT__UNI_ASCII(st) ? g_off.uni_ascii_size : g_off.uni_compact_size;
            f->name_head = word_at(f->name + hdr, len * VT__UNI_KIND(st));
            f->lens = len << 32;
        }
    }
    if (plausible(f->linetable)) {
        uint64_t len = rd_ptr(f->linetable, g_off.bytes_size);
        if (len < (1u << 30)) {
            uint64_t data = f->linetable + g_off.bytes_sval; /* 8-aligned */
            f->table_head = word_at(data, len);
            if (len > 8) { /* the aligned word holding the last byte, masked to it */
                uint64_t last = data + len - 1, w = last & ~7ull;
                f->table_tail = word_at(w, last - w + 1);
            }
            f->lens |= len;
        }
    }
}

static inline uint32_t code_hash(uint64_t code)
{
    uint64_t h = (code >> 3) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 40);
}

static inline int slot_matches(const code_slot *s, uint64_t code, const code_fp *f)
{
    const code_fp *g = &s->fp;
    return s->code == code && g->filename == f->filename && g->name == f->name &&
           g->linetable == f->linetable && g->size == f->size && g->first_line == f->first_line &&
           g->lens == f->lens && g->name_head == f->name_head && g->table_head == f->table_head &&
           g->table_tail == f->table_tail;
}

/* write_code: the CODE record of a code object (under g_code_lock). */
static void write_code(uint32_t id, uint64_t code, const code_fp *f)
{
    const char *strs[3];
    uint32_t lens[3];
    strs[0] = unicode_utf8(f->filename, g_strbuf[0], VT__STR_MAX, &lens[0]);
    strs[1] = unicode_utf8(f->name, g_strbuf[1], VT__STR_MAX, &lens[1]);
    strs[2] = "";
    lens[2] = 0;
    if (plausible(f->linetable)) {
        int64_t n = (int64_t)rd_ptr(f->linetable, g_off.bytes_size);
        if (n > 0 && n <= (int64_t)VT__LINETABLE_MAX) {
            strs[2] = (const char *)(uintptr_t)(f->linetable + g_off.bytes_sval);
            lens[2] = (uint32_t)n;
        }
    }
    (void)code;
    vt_rec_code r = {id, (uint32_t)f->first_line};
    vt__write_strings(VT_REC_CODE, 0, &r, sizeof r, strs, lens, 3);
}

/* code_id: the interned id of `code` (a CODE record is written the first time). 0 when the
 * table is full. Lookups take no lock; a miss inserts under g_code_lock. */
static uint32_t code_id(uint64_t code)
{
    code_fp f;
    fingerprint(code, &f);
    uint32_t h = code_hash(code);
    for (uint32_t i = 0; i < VT__CODE_SLOTS; i++) {
        code_slot *s = &g_codes[(h + i) & (VT__CODE_SLOTS - 1)];
        uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
        if (id == 0)
            break;
        if (slot_matches(s, code, &f))
            return id;
    }
    uint32_t result = 0;
    pthread_mutex_lock(&g_code_lock);
    for (uint32_t i = 0; i < VT__CODE_SLOTS; i++) {
        code_slot *s = &g_codes[(h + i) & (VT__CODE_SLOTS - 1)];
        uint32_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
        if (id != 0) {
            if (slot_matches(s, code, &f)) {
                result = id;
                break;
            }
            continue;
        }
        if (g_code_count >= VT__CODE_FILL_MAX) {
            static int warned; /* under g_code_lock */
            if (!warned++)
                vt__quiet_stderr("vramtrace: more than %d distinct Python code objects: frames of "
                                 "newer ones are left out of stacks from here on\n",
                                 VT__CODE_FILL_MAX);
            break;
        }
        s->code = code;
        s->fp = f;
        result = ++g_next_code_id;
        g_code_count++;
        write_code(result, code, &f); /* before publishing: no STACK can name it earlier */
        atomic_store_explicit(&s->id, result, memory_order_release);
        break;
    }
    pthread_mutex_unlock(&g_code_lock);
    return result;
}

/* ---- frame walk ------------------------------------------------------------------------------ */
/* first_frame: the innermost frame of thread state `ts`, 0 if none. */
static uint64_t first_frame(uint64_t ts)
{
    uint64_t f = rd_ptr(ts, g_off.ts_frame);
    if (g_off.cframe_current != VT__PYOFF_NONE) { /* 3.11/3.12: through the _PyCFrame */
        if (!plausible(f))
            return 0;
        f = rd_ptr(f, g_off.cframe_current);
    }
    return f;
}

/* frame_code_offset: for frame `fr`, its code object and byte offset (definition at the
 * top). Returns 0 when the frame is to be skipped (C-owned shim, incomplete, not code). */
static int frame_code_offset(uint64_t fr, uint64_t *code, uint32_t *offset)
{
    uint64_t co = rd_ptr(fr, g_off.fr_code);
    if (!is_code(co))
        return 0;
    if (g_off.fr_owner == VT__PYOFF_NONE) { /* 3.10 PyFrameObject */
        int32_t lasti = rd_i32(fr, g_off.fr_instr);
        *code = co;
        *offset = lasti < 0 ? 0u : (uint32_t)lasti * 2u;
        return 1;
    }
    int owner = *(const signed char *)(uintptr_t)(fr + g_off.fr_owner);
    if (owner == g_off.owner_cstack)
        return 0;
    uint64_t base = co + g_off.co_code;
    uint64_t units = rd_ptr(co, g_off.co_size);
    uint64_t ip = rd_ptr(fr, g_off.fr_instr);
    if (ip < base || units > (1u << 28) || ip >= base + units * 2)
        return 0; /* not started */
    uint64_t idx = (ip - base) / 2;
    if (g_off.co_firsttraceable != VT__PYOFF_NONE && owner != g_off.owner_generator &&
        idx < (uint64_t)(uint32_t)rd_i32(co, g_off.co_firsttraceable))
        return 0; /* incomplete: still in the frame's prologue */
    *code = co;
    *offset = (uint32_t)(idx * 2);
    return 1;
}

/* remember_main: stores frames[0..n) as the last non-autograd stack (skipped when another
 * thread is storing right now: its stack is as recent). */
static void remember_main(const uint64_t *frames, int n)
{
    if (atomic_flag_test_and_set_explicit(&g_last_busy, memory_order_acquire))
        return;
    uint32_t s = atomic_load_explicit(&g_last.seq, memory_order_relaxed);
    atomic_store_explicit(&g_last.seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (int i = 0; i < n; i++)
        atomic_store_explicit(&g_last.frames[i], frames[i], memory_order_relaxed);
    atomic_store_explicit(&g_last.n, n, memory_order_relaxed);
    atomic_store_explicit(&g_last.seq, s + 2, memory_order_release);
    atomic_flag_clear_explicit(&g_last_busy, memory_order_release);
}

/* walk_seen: one of the code ids a walk found (vt__py_capture), by code address. */
#define WALK_SEEN 16
typedef struct walk_seen {
    uint64_t code;
    uint32_t id;
} walk_seen;

/* vt__py_capture: see pyframes.h. Python frames of the calling thread, innermost first, as
 * VT_PYFRAME(code_id, byte offset); at most min(max, 128). 0 when this is not a Python
 * process, Python is not (or no longer) initialized, the version is unsupported, or the
 * thread has no Python thread state / no frames. */
int vt__py_capture(uint64_t *out, int max)
{
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
    /* the ids this walk found, by code address: a code object met again in the same stack (a
     * recursion; nn.Module's _wrapped_call_impl / _call_impl at every level of modules) is the
     * same object both times, since the walked frames are alive and each holds its code, so it
     * is fingerprinted and looked up once per walk */
    walk_seen seen[WALK_SEEN] = {{0, 0}};
    int n = 0;
    uint64_t fr = first_frame(ts), prev = 0;
    for (int guard = 0; fr && n < max && guard < VT__PY_WALK_LIMIT; guard++) {
        if (!plausible(fr) || fr == prev)
            break;
        uint64_t code;
        uint32_t off;
        if (frame_code_offset(fr, &code, &off)) {
            walk_seen *w = &seen[(code >> 4) & (WALK_SEEN - 1)];
            if (w->code != code) {
                w->code = code;
                w->id = code_id(code);
            }
            uint32_t id = w->id;
            if (id)
                out[n++] = VT_PYFRAME(id, off);
        }
        prev = fr;
        fr = rd_ptr(fr, g_off.fr_previous);
    }
    if (n > 0 && vt__thread_role() != VT_ROLE_AUTOGRAD)
        remember_main(out, n);
    return n;
}

/* vt__py_last_main_stack: see pyframes.h. Copies the last stack remember_main stored (at most
 * max frames); 0 if none yet or if a writer kept it busy for every retry. Lock-free. */
int vt__py_last_main_stack(uint64_t *out, int max)
{
    for (int tries = 0; tries < 16; tries++) {
        uint32_t s1 = atomic_load_explicit(&g_last.seq, memory_order_acquire);
        if (s1 & 1)
            continue;
        int n = atomic_load_explicit(&g_last.n, memory_order_relaxed);
        if (n > max)
            n = max;
        if (n > VT__PY_MAX_DEPTH)
            n = VT__PY_MAX_DEPTH;
        for (int i = 0; i < n; i++)
            out[i] = atomic_load_explicit(&g_last.frames[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&g_last.seq, memory_order_relaxed) == s1)
            return n < 0 ? 0 : n;
    }
    return 0;
}

/* vt__py_after_fork_child: a fork child writes its own trace: forget which CODE and PYINFO
 * records were written (the interned ids restart) and reset the locks. Called through
 * pthread_atfork (registered by the constructor below). */
static void vt__py_after_fork_child(void)
{
    pthread_mutex_init(&g_code_lock, NULL);
    pthread_mutex_init(&g_init_lock, NULL);
    if (g_code_count)
        memset(g_codes, 0, sizeof g_codes);
    g_code_count = 0;
    g_next_code_id = 0;
    atomic_store(&g_pyinfo_written, 0);
    atomic_store(&g_last.n, 0);
    atomic_flag_clear(&g_last_busy);
}

/* vt__py_atfork_init: registers the fork handler (cheap, no I/O, no Python). */
__attribute__((constructor)) static void vt__py_atfork_init(void)
{
    pthread_atfork(NULL, NULL, vt__py_after_fork_child);
}
