/* pycodes.h — the code objects Python stacks name, interned into ids (pycodes.c): the
 * lock-free lookup, inline in pyframes.c's walk (its offsets constants there), and the
 * insertion under a lock that writes each one's CODE record once. */
#ifndef VT_PRELOAD_PYCODES_H
#define VT_PRELOAD_PYCODES_H

#include <stdatomic.h>
#include <stdint.h>

#include "pyoffsets.h"
#include "pyread.h"

#define VT__CODE_SLOTS 16384 /* interned code objects (power of two) */

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
/* the table: open addressing, lock-free lookups, inserts under pycodes.c's lock */
extern code_slot vt__py_codes[VT__CODE_SLOTS];

/* vt__py_code_insert: a lookup's miss: the id of `code` (fingerprint fp, hash h, the offsets
 * o it was read with) looked up again under the lock, interned (its CODE record written) if it
 * is still not there; 0 when the table is full */
uint32_t vt__py_code_insert(const vt__pyoffsets *o, uint64_t code, const code_fp *fp, uint32_t h);
/* vt__py_codes_after_fork: a fork child's trace names none of them yet: the table emptied */
void vt__py_codes_after_fork(void);

/* fingerprint: see code_fp. */
static inline __attribute__((always_inline)) void fingerprint(const vt__pyoffsets *o, uint64_t code,
                                                              code_fp *f)
{
    f->filename = rd_ptr(code, o->co_filename);
    f->name = rd_ptr(code, o->co_name);
    f->linetable = rd_ptr(code, o->co_linetable);
    f->first_line = (uint64_t)(uint32_t)rd_i32(code, o->co_firstlineno);
    if (o->co_size != VT__PYOFF_NONE) {
        f->size = rd_ptr(code, o->co_size);
    } else {
        uint64_t b = rd_ptr(code, o->co_code); /* 3.10: co_code bytes */
        f->size = plausible(b) ? rd_ptr(b, o->bytes_size) : 0;
    }
    f->lens = f->name_head = f->table_head = f->table_tail = 0;
    if (plausible(f->name)) {
        uint32_t st = rd_u32(f->name, o->uni_state);
        uint64_t len = rd_ptr(f->name, o->uni_length);
        if (VT__UNI_COMPACT(st) && len < (1u << 24)) {
            uint32_t hdr = VT__UNI_ASCII(st) ? o->uni_ascii_size : o->uni_compact_size;
            f->name_head = word_at(f->name + hdr, len * VT__UNI_KIND(st));
            f->lens = len << 32;
        }
    }
    if (plausible(f->linetable)) {
        uint64_t len = rd_ptr(f->linetable, o->bytes_size);
        if (len < (1u << 30)) {
            uint64_t data = f->linetable + o->bytes_sval; /* 8-aligned */
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

/* slot_matches: s holds code with fingerprint f */
static inline int slot_matches(const code_slot *s, uint64_t code, const code_fp *f)
{
    const code_fp *g = &s->fp;
    return s->code == code && g->filename == f->filename && g->name == f->name &&
           g->linetable == f->linetable && g->size == f->size && g->first_line == f->first_line &&
           g->lens == f->lens && g->name_head == f->name_head && g->table_head == f->table_head &&
           g->table_tail == f->table_tail;
}

/* code_id: the interned id of `code` (a CODE record is written the first time). 0 when the
 * table is full. Lookups take no lock; a miss inserts under a lock (vt__py_code_insert). */
static inline __attribute__((always_inline)) uint32_t code_id(const vt__pyoffsets *o, uint64_t code)
{
    code_fp f;
    fingerprint(o, code, &f);
    uint32_t h = code_hash(code);
    for (uint32_t i = 0; i < VT__CODE_SLOTS; i++) {
        code_slot *s = &vt__py_codes[(h + i) & (VT__CODE_SLOTS - 1)];
        uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
        if (id == 0)
            break;
        if (slot_matches(s, code, &f))
            return id;
    }
    return vt__py_code_insert(o, code, &f, h);
}

#endif
