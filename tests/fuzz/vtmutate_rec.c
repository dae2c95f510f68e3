/* vtmutate_rec.c — the mutator's trace in memory (vtmutate_rec.h): parsing bytes into records,
 * writing them back with valid sizes and padding, fields, packed strings, the arena and the
 * random source. The mutations themselves are vtmutate.c's. */
#include "vtmutate_rec.h"

#include <string.h>

static uint8_t g_arena[VM_ARENA];
static size_t g_used;

void vm_arena_reset(void)
{
    g_used = 0;
}

uint64_t vm_rnd(vm *v)
{
    v->rng ^= v->rng << 13;
    v->rng ^= v->rng >> 7;
    v->rng ^= v->rng << 17;
    return v->rng;
}
size_t vm_below(vm *v, size_t n)
{
    return n ? (size_t)(vm_rnd(v) % n) : 0;
}
uint8_t *vm_arena(size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (g_used + n > VM_ARENA)
        return NULL;
    uint8_t *p = g_arena + g_used;
    g_used += n;
    memset(p, 0, n);
    return p;
}
uint64_t vm_rd(const vm_rec *r, size_t off, size_t w)
{
    uint64_t v = 0;
    if (off + w <= r->len)
        memcpy(&v, r->p + off, w);
    return v;
}
/* resize: r's payload made len bytes (new bytes zero) */
void vm_resize(vm_rec *r, uint32_t len)
{
    if (len > r->len) {
        uint8_t *p = vm_arena(len);
        if (!p)
            return;
        memcpy(p, r->p, r->len);
        r->p = p;
    }
    r->len = len;
}
void vm_wr(vm_rec *r, size_t off, size_t w, uint64_t v)
{
    if (off + w <= r->len)
        memcpy(r->p + off, &v, w);
}

/* clang-format off */
/* ---- parse and write ---------------------------------------------------------------------- */

/* parse: data as a trace into v (payloads copied into the arena); -1 when it is not one. */
int vm_parse(vm *v, const uint8_t *d, size_t n)
{
    v->n = 0;
    if (n < sizeof v->hdr || memcmp(d, VT_MAGIC, VT_MAGIC_LEN))
        return -1;
    memcpy(&v->hdr, d, sizeof v->hdr);
    size_t at = v->hdr.header_size >= 32 && v->hdr.header_size <= 4096 ? v->hdr.header_size : 32;
    while (at + 8 <= n && v->n < VM_RECS) {
        vt_rec_header h;
        memcpy(&h, d + at, 8);
        if (!h.type || h.size < 8 || h.size % 8 || h.size > n - at)
            break;
        vm_rec *r = &v->r[v->n];
        r->type = h.type;
        r->flags = h.flags;
        r->len = h.size - 8;
        if (!(r->p = vm_arena(r->len)))
            break;
        memcpy(r->p, d + at + 8, r->len);
        v->n++;
        at += h.size;
    }
    v->hdr.header_size = 32;
    return 0;
}

/* emit: the header and records of v into out; records that do not fit are left out. */
size_t vm_emit(const vm *v, uint8_t *out, size_t max)
{
    if (max < sizeof v->hdr)
        return 0;
    memcpy(out, &v->hdr, sizeof v->hdr);
    size_t at = sizeof v->hdr;
    for (size_t i = 0; i < v->n; i++) {
        const vm_rec *r = &v->r[i];
        size_t total = 8 + ((r->len + 7) & ~(size_t)7);
        if (total > VT_REC_MAX_SIZE || at + total > max)
            continue;
        vt_rec_header h = {r->type, r->flags, (uint32_t)total};
        memcpy(out + at, &h, 8);
        memcpy(out + at + 8, r->p, r->len);
        memset(out + at + 8 + r->len, 0, total - 8 - r->len);
        at += total;
    }
    return at;
}

/* ---- records ------------------------------------------------------------------------------ */

/* fixed: the fixed part's length of a string-carrying type, else 0. */
size_t vm_fixed(uint16_t type)
{
    switch (type) {
    case VT_REC_PROCESS:
        return sizeof(vt_rec_process);
    case VT_REC_CONFIG:
        return sizeof(vt_rec_config);
    case VT_REC_DEVICE:
        return sizeof(vt_rec_device);
    case VT_REC_THREAD:
        return sizeof(vt_rec_thread);
    case VT_REC_CODE:
        return sizeof(vt_rec_code);
    case VT_REC_SYMBOL:
        return sizeof(vt_rec_symbol);
    case VT_REC_MODULE:
        return sizeof(vt_rec_module);
    case VT_REC_FILE:
        return sizeof(vt_rec_file);
    default:
        return 0;
    }
}



void vm_get_strs(const vm_rec *r, strs *out)
{
    size_t at = vm_fixed(r->type);
    out->n = 0;
    while (at + 4 <= r->len && out->n < VM_STRS) {
        uint32_t n = (uint32_t)vm_rd(r, at, 4);
        if (n > r->len - at - 4)
            break;
        out->s[out->n] = (const char *)r->p + at + 4;
        out->len[out->n++] = n;
        at += 4 + (size_t)n;
    }
}

/* set_strs: r's payload rebuilt as its fixed part followed by s. */
void vm_set_strs(vm_rec *r, const strs *s)
{
    size_t f = vm_fixed(r->type), n = f;
    for (int i = 0; i < s->n; i++)
        n += 4 + (size_t)s->len[i];
    uint8_t *p = vm_arena(n);
    if (!p || n > VT_REC_MAX_SIZE - 16)
        return;
    memcpy(p, r->p, f < r->len ? f : r->len);
    size_t at = f;
    for (int i = 0; i < s->n; i++) {
        memcpy(p + at, &s->len[i], 4);
        memcpy(p + at + 4, s->s[i], s->len[i]);
        at += 4 + (size_t)s->len[i];
    }
    r->p = p;
    r->len = (uint32_t)n;
}

void vm_put_str(strs *s, int i, const char *text)
{
    if (i >= VM_STRS)
        return;
    while (s->n <= i) {
        s->s[s->n] = "";
        s->len[s->n++] = 0;
    }
    s->s[i] = text;
    s->len[i] = (uint32_t)strlen(text);
}

/* an id of a record of this type (STACK: stack_id, CODE: code_id, THREAD: index), or 0 */
int vm_insert_at(vm *v, size_t at, const vm_rec *r)
{
    if (v->n >= VM_RECS)
        return -1;
    if (at > v->n)
        at = v->n;
    memmove(&v->r[at + 1], &v->r[at], (v->n - at) * sizeof *v->r);
    v->r[at] = *r;
    v->n++;
    return 0;
}

vm_rec vm_new_rec(uint16_t type, uint16_t flags, uint32_t len)
{
    vm_rec r = {type, flags, len, vm_arena(len)};
    if (!r.p)
        r.len = 0;
    return r;
}

/* pair: an allocation of a fresh address and its release later on */