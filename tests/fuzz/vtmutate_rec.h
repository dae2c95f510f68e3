/* vtmutate_rec.h — a trace as the mutator (vtmutate.c) holds it: the header and a list of
 * records whose payloads live in one arena per call, parsed from and written back to bytes
 * (vtmutate_rec.c), with field access, packed strings and a small random source. Private to
 * the fuzz targets. */
#ifndef VT_FUZZ_VTMUTATE_REC_H
#define VT_FUZZ_VTMUTATE_REC_H

#include <stddef.h>
#include <stdint.h>

#include "vramtrace/trace_format.h"

#define VM_RECS 8192        /* records kept per input */
#define VM_ARENA (4u << 20) /* payload bytes (copies, new records) per call */
#define VM_STRS 64          /* strings handled per record */

typedef struct vm_rec {
    uint16_t type, flags;
    uint32_t len; /* payload bytes (header excluded, padding excluded) */
    uint8_t *p;
} vm_rec;

typedef struct vm {
    vt_file_header hdr;
    vm_rec r[VM_RECS];
    size_t n;
    uint64_t rng;
} vm;

/* A record's packed strings, pointing into its payload. */
typedef struct strs {
    const char *s[VM_STRS];
    uint32_t len[VM_STRS];
    int n;
} strs;

/* vm_rnd / vm_below: xorshift64 from v->rng; a number below n (0 when n is 0). */
uint64_t vm_rnd(vm *v);
size_t vm_below(vm *v, size_t n);
/* vm_arena: n zeroed bytes of the call's arena (NULL when full); vm_arena_reset: empty it. */
uint8_t *vm_arena(size_t n);
void vm_arena_reset(void);
/* vm_rd / vm_wr: a w-byte little-endian field at off of r's payload (0 / nothing past it). */
uint64_t vm_rd(const vm_rec *r, size_t off, size_t w);
void vm_wr(vm_rec *r, size_t off, size_t w, uint64_t v);
/* vm_resize: r's payload made len bytes (new bytes zero). */
void vm_resize(vm_rec *r, uint32_t len);
/* vm_parse: bytes as a trace into v (payloads copied); -1 when they are not one. */
int vm_parse(vm *v, const uint8_t *d, size_t n);
/* vm_emit: v as bytes into out (records that do not fit left out); the size written. */
size_t vm_emit(const vm *v, uint8_t *out, size_t max);
/* vm_fixed: the fixed part's length of a type that carries strings, else 0. */
size_t vm_fixed(uint16_t type);
/* vm_get_strs / vm_set_strs: r's strings; r's payload rebuilt as its fixed part and s.
 * vm_put_str: string i of s set to text (empty strings fill any gap). */
void vm_get_strs(const vm_rec *r, strs *out);
void vm_set_strs(vm_rec *r, const strs *s);
void vm_put_str(strs *s, int i, const char *text);
/* vm_insert_at: r inserted at index at (at most the end); -1 when v is full. vm_new_rec: a
 * record of len zero bytes. */
int vm_insert_at(vm *v, size_t at, const vm_rec *r);
vm_rec vm_new_rec(uint16_t type, uint16_t flags, uint32_t len);

#endif
