/* memviz.c — PyTorch's memory snapshot of a replay (memviz.h): the live set at the trace's end
 * (replay_keep_end) grouped into segments and blocks, the timeline's allocator actions as
 * device_traces: the state after the trace's last action, as PyTorch's snapshot is (its viewer
 * counts a block the snapshot holds and the trace does not leave live as made before it: the
 * peak's live set had shown every tensor freed after the peak twice, 1.9-2.0x the allocated
 * peak); the pickle opcodes are pickle.c's, frames as people read them come from stackview.c. */
#include "memviz.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "hashseed.h"
#include "pickle.h"
#include "stackview.h"

#define MEMVIZ_DEVICES 16
#define MEMVIZ_SMALL ((uint64_t)2 << 20) /* PyTorch's small-pool segments are 2 MiB */

/* sat_add: a + b, or UINT64_MAX when it would wrap (a crafted trace's addresses and sizes) */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* memo: what is already in the pickle's memo (a key -> its slot + 1, 0: not written yet): the
 * stacks' frame lists by stack id, and the tables' strings (a frame's name or file) by their
 * address (a crafted trace's 8 MiB qualname on the 320 frames each of its four stacks shows had
 * been written whole each time: 10 GiB) */
typedef struct memo {
    uint64_t *key;
    uint32_t *slot;
    size_t cap, n;
} memo;

typedef struct mv {
    FILE *out;
    replay_result *r;
    memo stacks, strs;
    uint32_t next; /* the pickle's next memo slot */
    stackview_frame view[STACKVIEW_MAX];
} mv;

/* a string shorter than this is written again (LONG_BINGET and its slot take 5 bytes) */
#define MEMVIZ_STR_MEMO 16

/* memo_room: m with room for one more key (false: no memory, mem.h says so: written whole) */
static bool memo_room(memo *m)
{
    if (2 * (m->n + 1) <= m->cap)
        return true;
    size_t cap = m->cap ? 2 * m->cap : 1024;
    uint64_t *key = calloc(cap, sizeof *key);
    uint32_t *slot = calloc(cap, sizeof *slot);
    if (!key || !slot) {
        free(key), free(slot);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i]) {
            size_t j = (size_t)hashseed_mix(m->key[i]) & (cap - 1);
            while (key[j])
                j = (j + 1) & (cap - 1);
            key[j] = m->key[i], slot[j] = m->slot[i];
        }
    free(m->key), free(m->slot);
    m->key = key, m->slot = slot, m->cap = cap;
    return true;
}

/* memo_find: key's slot + 1, 0 when it is not written yet (key, never 0, kept then: the caller
 * writes it and memo_put's it); memo_room first */
static uint32_t *memo_find(memo *m, uint64_t key)
{
    size_t j = (size_t)hashseed_mix(key) & (m->cap - 1); /* (the trace's ids: seeded) */
    while (m->key[j] && m->key[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->key[j])
        m->key[j] = key, m->n++;
    return &m->slot[j];
}

/* memo_put: the object just written into the pickle's next memo slot, kept in *slot */
static void memo_put(mv *v, uint32_t *slot)
{
    pickle_put(v->out, v->next);
    *slot = ++v->next;
}

static void memo_free(memo *m)
{
    free(m->key), free(m->slot);
}

/* str: s, a string the tables hold for the whole export (never a buffer of the caller's), as a
 * str the first time and by its memo slot after (its length not read again) */
static void str(mv *v, const char *s)
{
    uint32_t *slot = strnlen(s, MEMVIZ_STR_MEMO) == MEMVIZ_STR_MEMO && memo_room(&v->strs)
                         ? memo_find(&v->strs, (uintptr_t)s)
                         : NULL;
    if (slot && *slot) {
        pickle_get(v->out, *slot - 1);
        return;
    }
    pickle_cstr(v->out, s);
    if (slot)
        memo_put(v, slot);
}

static void frame(mv *v, const tables_frame *f)
{
    char name[64];
    pickle_dict(v->out);
    pickle_cstr(v->out, "filename");
    if (f->kind == TABLES_FRAME_NATIVE)
        str(v, f->src_file[0] ? f->src_file : f->module ? f->module->path.s : "??");
    else
        str(v, f->file[0] ? f->file : "??");
    pickle_cstr(v->out, "line");
    pickle_int(v->out, f->kind == TABLES_FRAME_NATIVE ? f->src_line : f->line > 0 ? f->line : 0);
    pickle_cstr(v->out, "name");
    if (!f->function[0] && f->module) /* nothing names it: where it is, as addr2line takes it */
        snprintf(name, sizeof name, "%.40s+0x%llx", f->module->basename,
                 (unsigned long long)f->module_offset);
    else if (!f->function[0])
        snprintf(name, sizeof name, "0x%llx", (unsigned long long)f->ip);
    if (f->function[0])
        str(v, f->function);
    else
        pickle_cstr(v->out, name); /* (this call's buffer: never memoized) */
    pickle_close_dict(v->out);
}

/* frames: the stack's frames as people read it (stackview.h: the Python spine, CPython's frames
 * folded away), innermost first as PyTorch's snapshots list them (memoized per stack). */
static void frames(mv *v, uint32_t stack_id)
{
    size_t n = stack_id ? stackview_build(v->r->t, stack_id,
                                          STACKVIEW_INNER_FIRST | STACKVIEW_EVERY_FRAME, v->view)
                        : 0;
    uint32_t *slot = n && memo_room(&v->stacks) ? memo_find(&v->stacks, stack_id) : NULL;
    if (slot && *slot) {
        pickle_get(v->out, *slot - 1);
        return;
    }
    pickle_list(v->out);
    for (size_t i = 0; i < n; i++)
        if (v->view[i].f)
            frame(v, v->view[i].f);
        else if (v->view[i].marker) { /* (STACKVIEW_M_PY_CUT: where the outer frames were) */
            pickle_dict(v->out);
            pickle_cstr(v->out, "filename");
            pickle_cstr(v->out, "??");
            pickle_cstr(v->out, "line");
            pickle_int(v->out, 0);
            pickle_cstr(v->out, "name");
            pickle_cstr(v->out, v->view[i].marker);
            pickle_close_dict(v->out);
        }
    pickle_close_list(v->out);
    if (slot)
        memo_put(v, slot);
}

static void key_uint(FILE *out, const char *k, uint64_t val)
{
    pickle_cstr(out, k);
    pickle_uint(out, val);
}

static void block(mv *v, uint64_t addr, uint64_t size, const live_item *it)
{
    pickle_dict(v->out);
    key_uint(v->out, "address", addr);
    key_uint(v->out, "size", size);
    key_uint(v->out, "requested_size", it ? it->size : 0);
    pickle_cstr(v->out, "state");
    pickle_cstr(v->out, it ? "active_allocated" : "inactive");
    pickle_cstr(v->out, "frames");
    frames(v, it ? it->stack_id : 0);
    pickle_close_dict(v->out);
}

/* segment: [addr, addr + total) holding the active items in[0..n) (sorted by address; gaps
 * become inactive blocks); seg is the segment's own item (for its stack), or NULL. */
static void segment(mv *v, const live_item *seg, uint64_t addr, uint64_t total,
                    const live_item *const *in, size_t n)
{
    uint64_t used = 0, at = addr, end = sat_add(addr, total);
    for (size_t i = 0; i < n; i++)
        used = sat_add(used, in[i]->size);
    pickle_dict(v->out);
    key_uint(v->out, "device", (seg ? seg : in[0])->device % MEMVIZ_DEVICES);
    key_uint(v->out, "address", addr);
    key_uint(v->out, "total_size", total);
    key_uint(v->out, "allocated_size", used);
    key_uint(v->out, "active_size", used);
    key_uint(v->out, "requested_size", used);
    key_uint(v->out, "stream", 0);
    pickle_cstr(v->out, "segment_type");
    pickle_cstr(v->out, total <= MEMVIZ_SMALL ? "small" : "large");
    pickle_cstr(v->out, "is_expandable");
    pickle_bool(v->out, 0);
    pickle_cstr(v->out, "frames");
    frames(v, seg ? seg->stack_id : 0);
    pickle_cstr(v->out, "blocks");
    pickle_list(v->out);
    for (size_t i = 0; i < n; i++) {
        if (in[i]->addr > at)
            block(v, at, in[i]->addr - at, NULL);
        block(v, in[i]->addr, in[i]->size, in[i]);
        at = sat_add(in[i]->addr, in[i]->size);
    }
    if (end > at)
        block(v, at, end - at, NULL);
    pickle_close_list(v->out);
    pickle_close_dict(v->out);
}

static int cmp_addr(const void *a, const void *b)
{
    const live_item *x = *(const live_item *const *)a, *y = *(const live_item *const *)b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* a segment to write: [addr, addr + total) on dev, its own item (or NULL), its active items
 * (in[0..n), or the one item `one` when in is NULL) */
typedef struct mv_seg {
    uint64_t addr, total;
    unsigned dev;
    const live_item *seg, *one;
    const live_item *const *in;
    size_t n, ord; /* ord: the order it was put (ties keep it) */
} mv_seg;

/* PyTorch's snapshot lists each device's segments by address, the devices in order */
static int cmp_seg(const void *a, const void *b)
{
    const mv_seg *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static void put_seg(mv_seg *out, size_t *k, const live_item *seg, uint64_t addr, uint64_t total,
                    const live_item *const *in, size_t n)
{
    unsigned dev = (seg ? seg : in[0])->device % MEMVIZ_DEVICES;
    out[*k] = (mv_seg){addr, total, dev, seg, in ? NULL : seg, in, n, *k};
    ++*k;
}

/* segments: PyTorch's segments (allocator mode) with the tensors inside them; every other
 * device allocation a segment of one active block where PyTorch's are not told apart (segment
 * mode: but what the report classifies as a library's own, its external row) or where it is a
 * tensor (cudaMallocAsync's), none beside the tensors PyTorch's tracker or that backend shows
 * (tensor modes): a library's own cudaMalloc (cuBLAS's and cuDNN's handles, 128.3 MiB on the H100
 * runs) is not PyTorch's memory, its snapshot has none, and device_traces hold no action of it,
 * so its viewer had drawn it live from the start, above the report's peaks (a segment-only trace's
 * segments had summed to its reserved bytes plus that, 134.5 MB on a_native_compile); all by
 * device, then address. */
static int segments(mv *v, const replay_snapshot *snap)
{
    const live_item **segs = calloc(snap->n + 1, sizeof *segs);
    const live_item **tens = calloc(snap->n + 1, sizeof *tens);
    mv_seg *out = calloc(snap->n + 1, sizeof *out);
    size_t ns = 0, nt = 0, k = 0;
    if (!segs || !tens || !out) {
        free(segs), free(tens), free(out);
        return -1;
    }
    for (size_t i = 0; i < snap->n; i++) {
        const live_item *it = &snap->items[i];
        if (v->r->allocator_mode && it->torch_segment && it->space == VT_SPACE_DEVICE)
            segs[ns++] = it;
        else if (it->space == VT_SPACE_TENSOR)
            tens[nt++] = it;
        else if (it->space == VT_SPACE_DEVICE && !it->torch_segment &&
                 (!v->r->tensor_mode || it->tensor_api) && /* (cudaMallocAsync's: the backend's) */
                 (v->r->tensor_mode || it->category != CAT_EXTERNAL)) /* (segment-only: as told) */
            put_seg(out, &k, it, it->addr, it->size, NULL, 1); /* a plain cudaMalloc / driver */
    }
    qsort(segs, ns, sizeof *segs, cmp_addr);
    qsort(tens, nt, sizeof *tens, cmp_addr);
    size_t t = 0;
    for (size_t s = 0; s < ns; s++) {
        uint64_t a = segs[s]->addr, used = 0;
        size_t first;
        for (; t < nt && tens[t]->addr < a; t++) /* below every segment: its own segment */
            put_seg(out, &k, NULL, tens[t]->addr, tens[t]->size, &tens[t], 1);
        /* the replay keeps a segment's unused bytes as its size (its cache), so a tensor
         * inside starts at most cache + the tensors before it past the segment's start */
        uint64_t next = s + 1 < ns ? segs[s + 1]->addr : UINT64_MAX, end = a;
        for (first = t; t < nt && tens[t]->addr < next &&
                        tens[t]->addr - a <= sat_add(segs[s]->size, used) && tens[t]->addr >= end;
             t++)
            used = sat_add(used, tens[t]->size), end = sat_add(tens[t]->addr, tens[t]->size);
        uint64_t size = sat_add(segs[s]->size, used);
        put_seg(out, &k, segs[s], a, size > end - a ? size : end - a, &tens[first], t - first);
    }
    for (; t < nt; t++)
        put_seg(out, &k, NULL, tens[t]->addr, tens[t]->size, &tens[t], 1);
    qsort(out, k, sizeof *out, cmp_seg);
    for (size_t i = 0; i < k; i++)
        segment(v, out[i].seg, out[i].addr, out[i].total, out[i].in ? out[i].in : &out[i].one,
                out[i].n);
    free(segs), free(tens), free(out);
    return 0;
}

static void traces(mv *v)
{
    const timeline *tl = v->r->tl;
    unsigned ndev = 1;
    for (size_t i = 0; i < tl->ring_n; i++) {
        unsigned d = timeline_ring_at(tl, i)->device % MEMVIZ_DEVICES;
        if (d + 1 > ndev)
            ndev = d + 1;
    }
    pickle_list(v->out);
    for (unsigned d = 0; d < ndev; d++) {
        pickle_list(v->out);
        for (size_t i = 0; i < tl->ring_n; i++) {
            const timeline_action *a = timeline_ring_at(tl, i);
            if (a->device % MEMVIZ_DEVICES != d)
                continue;
            pickle_dict(v->out);
            pickle_cstr(v->out, "action");
            pickle_cstr(v->out, timeline_action_name(a->kind));
            key_uint(v->out, "addr", a->addr);
            key_uint(v->out, "size", a->size);
            key_uint(v->out, "stream", a->stream);
            key_uint(v->out, "time_us", a->time_ns / 1000);
            if (a->kind == TL_OOM) /* PyTorch's OOM entry carries the device's free bytes as addr */
                key_uint(v->out, "device_free", a->addr);
            pickle_cstr(v->out, "frames");
            frames(v, a->stack_id);
            pickle_close_dict(v->out);
        }
        pickle_close_list(v->out);
    }
    pickle_close_list(v->out);
}

int memviz_write(FILE *out, replay_result *r)
{
    mv v = {.out = out, .r = r};
    if (!r->tl || !r->end_kept) /* (its snapshot is the end's: not kept, none to write) */
        return -1;
    pickle_begin(out);
    pickle_dict(out);
    pickle_cstr(out, "segments");
    pickle_list(out);
    int rc = segments(&v, &r->at_end);
    pickle_close_list(out);
    pickle_cstr(out, "device_traces");
    traces(&v);
    pickle_close_dict(out);
    pickle_end(out);
    memo_free(&v.stacks);
    memo_free(&v.strs);
    return rc || ferror(out) || mem_failed() ? -1 : 0; /* pickle strings need memory too */
}
