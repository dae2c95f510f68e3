/* pycodes.h — the code objects Python stacks name, interned into ids (pycodes.c): the
 * lock-free lookup's common case (inline in pyframes.c's lookup for each table of offsets, its
 * offsets constants there), the rest of the probe, and the insertion under a lock that writes
 * each one's CODE record once. */
#ifndef VT_PRELOAD_PYCODES_H
#define VT_PRELOAD_PYCODES_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "pyoffsets.h"
#include "pyread.h"

#define VT__CODE_SLOTS 16384 /* interned code objects (power of two) */

/* A code object's fingerprint: what tells it from a later one at the same address. Object
 * addresses alone are not enough (a dead code object's file name, name and line table die with
 * it and their addresses are reused together), so the contents of each (what its CODE record
 * says: the file, the qualname, the lines) are part of it, every byte of them: a recycled code
 * object whose line table differed from the dead one's only past its first and last 8 bytes (one
 * function generated again with a line moved), or whose file name differed only in its
 * characters ("<eval_with_key>.N"), had kept the dead one's id, so its frames the dead one's file
 * and lines (tests/python/shim_check.py's retabled and refiled code objects). The table keeps a
 * 64-bit digest of it (fp_read), not its fields: a slot in half a cache line (an 88-byte slot
 * spanned two or three lines, and a lookup read all of them). A recycled code object is then
 * mistaken for the dead one at the same address only when their digests collide: never where
 * one field differs, about 2^-64 where unrelated contents differ in several (what structured
 * differences can do: fp_mix). */
typedef struct code_fp {
    uint64_t filename, name, linetable, size, first_line;
    uint64_t file_text;  /* digest of the file name's characters (text_digest) */
    uint64_t name_text;  /* of the name's */
    uint64_t table_text; /* of the line table's bytes */
} code_fp;

/* a slot: what the walk reads of a code object found there in this epoch (its id, first traceable
 * unit and size: no line of the code object read); the digest of its fingerprint, which only a
 * lookup in another epoch or a probe compares, apart (vt__py_code_digests, same index) */
typedef struct code_slot {
    _Atomic uint32_t id;      /* 0 = empty; published last (release) */
    uint32_t first_traceable; /* code_first_traceable's */
    uint32_t units;           /* code_units' */
    uint32_t unused;
    uint64_t code;                        /* address */
    _Atomic uint64_t checked;             /* an epoch its fingerprint was found in (0: none) */
} __attribute__((aligned(32))) code_slot; /* two a line, none across two */
_Static_assert(sizeof(code_slot) == 32, "code_slot: half a cache line");
/* the table: open addressing, lock-free lookups, inserts under pycodes.c's lock */
extern code_slot vt__py_codes[VT__CODE_SLOTS];
extern uint64_t vt__py_code_digests[VT__CODE_SLOTS]; /* of each slot's fingerprint (fp_read) */

/* The code objects' epoch: how many have been freed, counted by a wrapper of PyCode_Type's
 * tp_dealloc (vt__py_code_watch; 0 while it is not installed). A slot whose fingerprint was
 * found equal in epoch e (`checked`) still names the code object at its address while the epoch
 * is e: the object then was alive (a frame of the walking thread held it), and a later object at
 * that address needs it freed first, which counts. The walking thread's load sees that count:
 * the free happened before the new object was made and put in a frame of that thread, each step
 * under the GIL, whose hand-overs order them. So a lookup in the same epoch compares the epoch
 * alone, where it read the code object's name and line table for the fingerprint (their cache
 * lines, 2-3 of the ~9 a frame's lookup missed), and the walk reads nothing of the code object
 * (its type, size and first traceable unit are the slot's). */
#define VT__EPOCH_NONE UINT64_MAX /* the epoch a lookup is given while none is counted */
typedef struct vt__py_epoch {
    _Atomic uint64_t n;
} __attribute__((aligned(64))) vt__py_epoch; /* a cache line of its own */
extern vt__py_epoch vt__py_code_epoch;
static inline uint64_t vt__py_code_epoch_now(void)
{
    uint64_t e = atomic_load_explicit(&vt__py_code_epoch.n, memory_order_acquire);
    return e ? e : VT__EPOCH_NONE;
}
/* vt__py_code_watch: counts frees of code objects from here on (PyCode_Type at code_type, its
 * offsets o, PyType_Type at type_type); once per process, under pyframes.c's init lock. Nothing
 * is written where code_type's header is not a type object's named "code" as o lays it out. */
void vt__py_code_watch(const vt__pyoffsets *o, const void *code_type, const void *type_type);
/* vt__py_code_insert: a lookup's miss: the id of `code` (fingerprint fp, its digest dg, hash h, the
 * offsets o it was read with) looked up again under the lock, interned (its CODE record written) if
 * it is still not there; 0 when the table is full */
uint32_t vt__py_code_insert(const vt__pyoffsets *o, uint64_t code, const code_fp *fp, uint64_t dg,
                            uint32_t h, uint64_t ep);
/* vt__py_code_probe: the lookup past the first slot (code_id's slow path): fingerprint, probe,
 * insert on a miss; the slot found is marked checked in epoch ep */
uint32_t vt__py_code_probe(const vt__pyoffsets *o, uint64_t code, uint64_t ep);
/* vt__py_codes_after_fork: a fork child's trace names none of them yet: the table emptied */
void vt__py_codes_after_fork(void);

/* fp_mix: digest h with one more field v folded in: xor, an xor-shift that brings the high bits
 * down, a multiplication by an odd constant (each invertible): for a fixed h a bijection of v,
 * so two fingerprints that differ in one field alone never share a digest. Two that differ in
 * more collide when a field's difference cancels what the ones before left in h: with the
 * xor-shift no difference of a field in one bit leaves a pattern the next field's can cancel
 * more than 1 time in 1,000, and those patterns are 11+ bits wide (a multiplication alone carries
 * no bit downwards: with a rotation after it, as first written, a name's or line table's byte
 * differing in bit 63 alone was cancelled every time by the next field's bit 28, bits 61-62 half
 * the time: a reviewer's measure). One instruction a field more than that rotation. */
static inline uint64_t fp_mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h ^= h >> 29;
    return h * 0x9e3779b97f4a7c15ull;
}

/* text_digest: the n bytes at p (8-aligned, an object's contents) folded in one word: their
 * length, then 8 bytes at a time, the last word masked to them (word_at); past VT__FP_TEXT_WORDS
 * words the last word alone (a line table over 32 KiB, a function of thousands of lines: its
 * bytes in between are not compared). Read only by a lookup in a new epoch (pycodes.h's epoch)
 * and a probe: a name, a path and a line table of a few hundred bytes, ~30-100 words a frame. */
#define VT__FP_TEXT_WORDS 4096
static inline uint64_t text_digest(uint64_t p, uint64_t n)
{
    uint64_t d = fp_mix(0, n), words = (n + 7) / 8;
    for (uint64_t i = 0; i < words; i++) {
        if (i == VT__FP_TEXT_WORDS - 1)
            i = words - 1;
        d = fp_mix(d, word_at(p + 8 * i, n - 8 * i));
    }
    return d;
}
/* str_text: the digest of the characters of str object u (text_digest), 0 for one that is not
 * read (not compact, or 2^24 characters or more) */
static inline uint64_t str_text(const vt__pyoffsets *o, uint64_t u)
{
    if (!plausible(u))
        return 0;
    uint32_t st = rd_u32(u, o->uni_state);
    uint64_t len = rd_ptr(u, o->uni_length);
    if (!VT__UNI_COMPACT(st) || len >= (1u << 24))
        return 0;
    uint32_t hdr = VT__UNI_ASCII(st) ? o->uni_ascii_size : o->uni_compact_size;
    return text_digest(u + hdr, len * VT__UNI_KIND(st));
}
/* fp_read: the digest of the fingerprint of `code` (see code_fp), each field folded in as it is
 * read (no fingerprint kept in registers through the walk's, nor stored to the stack and read
 * back) and stored into *put too (NULL: not; a constant where this is inlined, so the test
 * folds away): the lookup compares the digest alone, the insertion keeps the fields for the
 * CODE record. */
#define VT__FP_FIELD(field, value)                                                                 \
    do {                                                                                           \
        uint64_t v_ = (value);                                                                     \
        if (put)                                                                                   \
            put->field = v_;                                                                       \
        d = fp_mix(d, v_);                                                                         \
    } while (0)
static inline __attribute__((always_inline)) uint64_t fp_read(const vt__pyoffsets *o, uint64_t code,
                                                              code_fp *put)
{
    uint64_t d = 0;
    uint64_t file = rd_ptr(code, o->co_filename), name = rd_ptr(code, o->co_name);
    uint64_t table = rd_ptr(code, o->co_linetable);
    VT__FP_FIELD(filename, file);
    VT__FP_FIELD(name, name);
    VT__FP_FIELD(linetable, table);
    VT__FP_FIELD(first_line, (uint64_t)(uint32_t)rd_i32(code, o->co_firstlineno));
    if (o->co_size != VT__PYOFF_NONE) {
        VT__FP_FIELD(size, rd_ptr(code, o->co_size));
    } else {
        uint64_t b = rd_ptr(code, o->co_code); /* 3.10: co_code bytes */
        VT__FP_FIELD(size, plausible(b) ? rd_ptr(b, o->bytes_size) : 0);
    }
    VT__FP_FIELD(file_text, str_text(o, file));
    VT__FP_FIELD(name_text, str_text(o, name));
    uint64_t table_text = 0;
    if (plausible(table)) {
        uint64_t len = rd_ptr(table, o->bytes_size);
        if (len < (1u << 30))
            table_text = text_digest(table + o->bytes_sval, len); /* (8-aligned) */
    }
    VT__FP_FIELD(table_text, table_text);
    return d;
}
#undef VT__FP_FIELD

static inline uint32_t code_hash(uint64_t code)
{
    uint64_t h = (code >> 3) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 40);
}

/* code_first_traceable: the code unit of the first instruction past the prologue of `code`
 * (3.11+'s _co_firsttraceable; 0 on 3.10, which has none): a frame before it is incomplete */
static inline uint32_t code_first_traceable(const vt__pyoffsets *o, uint64_t code)
{
    if (o->co_firsttraceable == VT__PYOFF_NONE)
        return 0;
    return (uint32_t)rd_i32(code, o->co_firsttraceable);
}

/* code_units: the size of `code` in code units (3.11+; 0 on 3.10), 0 for one over 2^28 (not
 * believed: the walk's range check then refuses every frame of it) */
static inline uint32_t code_units(const vt__pyoffsets *o, uint64_t code)
{
    if (o->co_size == VT__PYOFF_NONE)
        return 0;
    uint64_t units = rd_ptr(code, o->co_size);
    return units > (1u << 28) ? 0 : (uint32_t)units;
}

/* slot_digest: the digest of the fingerprint of slot s's code object */
static inline uint64_t slot_digest(const code_slot *s)
{
    return vt__py_code_digests[s - vt__py_codes];
}

/* slot_matches: s holds code with fingerprint digest dg (the slow paths: a probe, an insertion) */
static inline int slot_matches(const code_slot *s, uint64_t code, uint64_t dg)
{
    return s->code == code && slot_digest(s) == dg;
}

/* slot_checked: slot s's fingerprint found equal in epoch ep (none: VT__EPOCH_NONE) */
static inline void slot_checked(code_slot *s, uint64_t ep)
{
    /* stored only when it changes: a line several threads' walks read stays unwritten */
    if (ep != VT__EPOCH_NONE && atomic_load_explicit(&s->checked, memory_order_relaxed) != ep)
        atomic_store_explicit(&s->checked, ep, memory_order_relaxed);
}

/* code_id_checked: the interned id of `code` (a CODE record is written the first time), ep the
 * epoch read before its frame was (vt__py_code_epoch_now). 0 when the table is full. Lookups take
 * no lock; a miss inserts under a lock (vt__py_code_insert). code_id_fast's other case, out of
 * line where it is used: the code object in its first slot with its fingerprint's digest equal
 * (inline here); anything else (another code object there, a recycled address, a miss) probes. */
static inline __attribute__((always_inline)) uint32_t code_id_checked(const vt__pyoffsets *o,
                                                                      uint64_t code, uint64_t ep)
{
    code_slot *s = &vt__py_codes[code_hash(code) & (VT__CODE_SLOTS - 1)];
    uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
    if (__builtin_expect(id != 0 && s->code == code, 1) &&
        fp_read(o, code, NULL) == slot_digest(s)) {
        slot_checked(s, ep);
        return id;
    }
    return vt__py_code_probe(o, code, ep);
}

/* code_facts: what the walk needs of a code object (code_id_fast; code_id_checked and the code
 * object itself otherwise) */
typedef struct code_facts {
    uint32_t id, first_traceable, units;
} code_facts;

/* code_id_fast: 1 with f filled when `code` is in its first slot, checked in epoch ep (pycodes.h's
 * epoch): then it is that slot's code object, alive (a frame holds it) and never freed since it
 * was checked, so no word of it needs reading, not even its type; 0: ask code_id_checked (code may
 * be no code object). Inline in the walk: the hash and one slot, no call. */
static inline __attribute__((always_inline)) int code_id_fast(uint64_t code, uint64_t ep,
                                                              code_facts *f)
{
    const code_slot *s = &vt__py_codes[code_hash(code) & (VT__CODE_SLOTS - 1)];
    f->id = atomic_load_explicit(&s->id, memory_order_acquire);
    f->first_traceable = s->first_traceable;
    f->units = s->units;
    return __builtin_expect(f->id != 0 && s->code == code &&
                                atomic_load_explicit(&s->checked, memory_order_relaxed) == ep,
                            1);
}

#endif
