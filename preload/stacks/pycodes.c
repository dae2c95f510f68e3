/* pycodes.c — the code objects Python stacks name (pycodes.h): a code object seen for the
 * first time is interned under a lock and its CODE record written (file name and qualname as
 * UTF-8, first line, line table) before its id is published, so no STACK names it earlier. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../core/output.h"
#include "../core/quietio.h"
#include "pycodes.h"
#include "vramtrace/trace_format.h"

#define VT__CODE_FILL_MAX 12288 /* stop interning past 75 % fill */
#define VT__STR_MAX 2048        /* bytes of UTF-8 kept of a file name or qualname */
#define VT__LINETABLE_MAX (1u << 20)

code_slot vt__py_codes[VT__CODE_SLOTS];
uint64_t vt__py_code_digests[VT__CODE_SLOTS];
static uint32_t g_code_count;   /* under g_code_lock */
static uint32_t g_next_code_id; /* under g_code_lock */
static pthread_mutex_t g_code_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_strbuf[2][VT__STR_MAX]; /* UTF-8 conversion, under g_code_lock */

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
static const char *unicode_utf8(const vt__pyoffsets *o, uint64_t u, char *buf, uint32_t cap,
                                uint32_t *len)
{
    *len = 1;
    if (!plausible(u))
        return "?";
    uint32_t st = rd_u32(u, o->uni_state);
    int64_t n = (int64_t)rd_ptr(u, o->uni_length);
    unsigned kind = VT__UNI_KIND(st);
    if (!VT__UNI_COMPACT(st) || n < 0 || n > (1 << 24))
        return "?";
    if (VT__UNI_ASCII(st)) {
        *len = n > cap ? cap : (uint32_t)n;
        return (const char *)(uintptr_t)(u + o->uni_ascii_size);
    }
    uint64_t data = u + o->uni_compact_size;
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

/* write_code: the CODE record of a code object (under g_code_lock). */
static void write_code(const vt__pyoffsets *o, uint32_t id, const code_fp *f)
{
    const char *strs[3];
    uint32_t lens[3];
    strs[0] = unicode_utf8(o, f->filename, g_strbuf[0], VT__STR_MAX, &lens[0]);
    strs[1] = unicode_utf8(o, f->name, g_strbuf[1], VT__STR_MAX, &lens[1]);
    strs[2] = "";
    lens[2] = 0;
    if (plausible(f->linetable)) {
        int64_t n = (int64_t)rd_ptr(f->linetable, o->bytes_size);
        if (n > 0 && n <= (int64_t)VT__LINETABLE_MAX) {
            strs[2] = (const char *)(uintptr_t)(f->linetable + o->bytes_sval);
            lens[2] = (uint32_t)n;
        }
    }
    vt_rec_code r = {id, (uint32_t)f->first_line};
    vt__write_strings(VT_REC_CODE, 0, &r, sizeof r, strs, lens, 3);
}

uint32_t vt__py_code_insert(const vt__pyoffsets *o, uint64_t code, const code_fp *fp, uint64_t dg,
                            uint32_t h, uint64_t ep)
{
    code_fp f = *fp;
    uint32_t result = 0;
    pthread_mutex_lock(&g_code_lock);
    for (uint32_t i = 0; i < VT__CODE_SLOTS; i++) {
        code_slot *s = &vt__py_codes[(h + i) & (VT__CODE_SLOTS - 1)];
        uint32_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
        if (id != 0) {
            if (slot_matches(s, code, dg)) {
                slot_checked(s, ep);
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
        vt__py_code_digests[s - vt__py_codes] = dg;
        s->first_traceable = code_first_traceable(o, code);
        s->units = code_units(o, code);
        slot_checked(s, ep);
        result = ++g_next_code_id;
        g_code_count++;
        write_code(o, result, &f); /* before publishing: no STACK can name it earlier */
        atomic_store_explicit(&s->id, result, memory_order_release);
        break;
    }
    pthread_mutex_unlock(&g_code_lock);
    return result;
}

/* vt__py_code_probe: see pycodes.h */
uint32_t vt__py_code_probe(const vt__pyoffsets *o, uint64_t code, uint64_t ep)
{
    code_fp f;
    uint64_t dg = fp_read(o, code, &f);
    uint32_t h = code_hash(code);
    for (uint32_t i = 0; i < VT__CODE_SLOTS; i++) {
        code_slot *s = &vt__py_codes[(h + i) & (VT__CODE_SLOTS - 1)];
        uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
        if (id == 0)
            break;
        if (slot_matches(s, code, dg)) {
            slot_checked(s, ep);
            return id;
        }
    }
    return vt__py_code_insert(o, code, &f, dg, h, ep);
}

/* the epoch (pycodes.h), alone in its cache line: read by every walk, written by every free */
vt__py_epoch vt__py_code_epoch;
static void (*g_code_dealloc)(void *); /* PyCode_Type's own tp_dealloc */

/* count_free: one more free of a code object in the epoch */
static inline void count_free(void)
{
    atomic_fetch_add_explicit(&vt__py_code_epoch.n, 1, memory_order_release);
}

/* code_dealloc_counted: PyCode_Type's tp_dealloc once watched: counts the free before it, and
 * again after it (its weakref callbacks and co_extra free functions run Python code in between,
 * where a walk could mark the dying object's slot with the count already taken), before the
 * memory can be anyone else's (the GIL is held until it returns) */
static void code_dealloc_counted(void *op)
{
    count_free();
    void (*own)(void *);
    /* set before the slot pointed here; acquire: a weakly ordered CPU may show this thread the
     * slot's new value before it, and the interpreter reads the slot with a plain load */
    while (!(own = __atomic_load_n(&g_code_dealloc, __ATOMIC_ACQUIRE)))
        ;
    own(op);
    count_free();
}

/* is_code_type: code_type is what o says a type object is, named "code": its ob_type the type of
 * types, tp_name "code", tp_basicsize a code object's (a build whose objects have more header
 * than o says, Py_TRACE_REFS's, puts other fields there: nothing is written into it) */
static int is_code_type(const vt__pyoffsets *o, const char *code_type, const void *type_type)
{
    const void *head[4]; /* ob_type, ob_size, tp_name, tp_basicsize */
    memcpy(head, code_type + o->ob_type, sizeof head);
    uintptr_t basic = (uintptr_t)head[3];
    return type_type && head[0] == type_type && head[2] && strcmp(head[2], "code") == 0 &&
           basic >= 64 && basic <= 4096;
}

void vt__py_code_watch(const vt__pyoffsets *o, const void *code_type, const void *type_type)
{
    if (g_code_dealloc || !code_type || !is_code_type(o, code_type, type_type))
        return;
    /* tp_dealloc: after the type's PyObject_VAR_HEAD (ob_size follows ob_type), tp_name,
     * tp_basicsize and tp_itemsize */
    void **slot = (void **)((uintptr_t)code_type + o->ob_type + 5 * sizeof(void *));
    void *own = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!own)
        return;
    __atomic_store_n(&g_code_dealloc, (void (*)(void *))own, __ATOMIC_RELEASE);
    /* installed before the epoch says so: a slot is marked checked only in an epoch a walk read
     * after this store, so every free of a code object it names comes through the wrapper. From
     * 0 to 1 only: frees counted since the slot's store are kept */
    __atomic_store_n(slot, (void *)code_dealloc_counted, __ATOMIC_RELEASE);
    uint64_t zero = 0;
    atomic_compare_exchange_strong(&vt__py_code_epoch.n, &zero, 1);
}

void vt__py_codes_after_fork(void)
{
    pthread_mutex_init(&g_code_lock, NULL);
    if (g_code_count)
        memset(vt__py_codes, 0, sizeof vt__py_codes);
    g_code_count = 0;
    g_next_code_id = 0;
}
