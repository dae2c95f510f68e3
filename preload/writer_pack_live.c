/* writer_pack_live.c — what the packer (writer_pack.c) knows of the run as it packs it, in its
 * own thread, never on a program's thread: the live set (every allocation made and not freed,
 * with its ALLOC record, paired by (space, addr) as readers pair them) for the snapshots, the
 * live bytes per stack, and the training steps it ends STEP records at (trace_format.h STEP).
 * Its input is the records themselves; it calls nothing but the C library. */
#include <string.h>

#include "vramtrace/trace_format.h"
#include "writer_internal.h"
#include "writer_mem.h"

/* ---- facts per API, from the format's one list ----------------------------------------- */
enum {
    PK_ALLOC,
    PK_FREE,
    PK_RETAIN,
    PK_MAP,
    PK_UNMAP,
    PK_RESERVE,
    PK_UNRESERVE,
    PK_LOAD,
    PK_UNLOAD,
    PK_CONTEXT,
    PK_UNCONTEXT,
    PK_INFO,
    PK_TRIM,
    PK_OTHER
};
static const struct {
    uint8_t kind, space, known;
} api_facts[256] = {
#define API_FACT(name, id, layer, kind, space) [id] = {PK_##kind, VT_SPACE_##space, 1},
    VT_APIS(API_FACT)
#undef API_FACT
};
#define SP_TORCH_SEG 100 /* torchSegmentAlloc .. torchSegmentFree, by address */
#define SP_TORCH_MAP 101 /* torchSegmentMap .. torchSegmentUnmap, by address */

/* ---- the live set: open addressing on (space, addr), deletions shift back ---------------- */
typedef struct ent {
    uint64_t addr, size, order;
    uint32_t stack;
    uint8_t space, used, tensor, device, len;
    uint8_t rec[48]; /* the ALLOC record as written (header included) */
} ent;

static struct live {
    ent *tab;
    size_t cap, n;
    uint64_t order, events;
    uint64_t tensor_bytes, device_bytes, peak_tensor, peak_device;
    /* per stack id: live bytes of tensors / of device allocations, what the last STEP said,
     * and the ids changed since (dirty) */
    struct per_stack {
        uint64_t tensor, device, said;
        uint8_t dirty;
    } * st;
    uint32_t nst;
    uint32_t *dirty;
    size_t ndirty, capdirty;
    char *sbuf; /* a STEP record being made (kept: no mapping made and unmade per step) */
    size_t sbufcap;
    int tensors_seen, phase, opt_since, oom_since;
    uint64_t oom_request;
    uint32_t step;
    uint64_t events_said; /* L.events at the last STEP record */
    /* a run recorded without Python frames (its CONFIG record; no stack, or native frames
     * alone, which name no optimizer): the program's first allocation after a backward is the
     * next forward's or its optimizer's (a foreach step's temporaries, a first step's state).
     * Which, the program's free of what the backward made (zero_grad) before the next backward
     * says: until then the STEP record there waits (prov: the levels as they were), and is
     * written as it was (a forward) or dropped (the step went on). The analyzer's rule too
     * (growth.c, growth_prov_begin). */
    struct prov {
        int on, opt_since, oom_since;
        uint64_t tt, events, tensor, device, peak_tensor, peak_device, oom_request;
    } prov;
} L;

enum { PH_FWD, PH_BWD, PH_OPT };

static uint64_t hash(uint64_t addr, unsigned space)
{
    uint64_t h = (addr ^ ((uint64_t)space << 56)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static ent *find(uint64_t addr, unsigned space)
{
    if (!L.cap)
        return NULL;
    for (size_t i = hash(addr, space) & (L.cap - 1);; i = (i + 1) & (L.cap - 1)) {
        ent *e = &L.tab[i];
        if (!e->used)
            return NULL;
        if (e->addr == addr && e->space == space)
            return e;
    }
}

static int grow(void)
{
    size_t ncap = L.cap ? L.cap * 2 : 4096;
    ent *nt = vt__wm_alloc_n(ncap, sizeof *nt);
    if (!nt)
        return -1;
    for (size_t i = 0; i < L.cap; i++) {
        if (!L.tab[i].used)
            continue;
        size_t j = hash(L.tab[i].addr, L.tab[i].space) & (ncap - 1);
        while (nt[j].used)
            j = (j + 1) & (ncap - 1);
        nt[j] = L.tab[i];
    }
    vt__wm_free(L.tab);
    L.tab = nt;
    L.cap = ncap;
    return 0;
}

static void erase(ent *e)
{
    size_t i = (size_t)(e - L.tab), j = i;
    L.tab[i].used = 0;
    L.n--;
    for (;;) { /* backward shift: every entry after the hole that may move into it does */
        j = (j + 1) & (L.cap - 1);
        if (!L.tab[j].used)
            return;
        size_t k = hash(L.tab[j].addr, L.tab[j].space) & (L.cap - 1);
        if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
            L.tab[i] = L.tab[j];
            L.tab[j].used = 0;
            i = j;
        }
    }
}

/* ---- per stack --------------------------------------------------------------------------- */
static struct per_stack *stack_of(uint32_t id)
{
    if (!id || id > 0xffffffu)
        return NULL;
    if (id >= L.nst) {
        uint32_t n = L.nst ? L.nst : 1024;
        while (n <= id)
            n *= 2;
        struct per_stack *ns = vt__wm_realloc(L.st, n * sizeof *ns);
        if (!ns)
            return NULL;
        memset(ns + L.nst, 0, (n - L.nst) * sizeof *ns);
        L.st = ns;
        L.nst = n;
    }
    return &L.st[id];
}

static void count(uint32_t stack, int tensor, int device, int64_t delta)
{
    struct per_stack *p = stack_of(stack);
    if (!p)
        return;
    if (tensor)
        p->tensor += (uint64_t)delta;
    if (device)
        p->device += (uint64_t)delta;
    if (!p->dirty) {
        if (L.ndirty == L.capdirty) {
            size_t n = L.capdirty ? L.capdirty * 2 : 1024;
            uint32_t *nd = vt__wm_realloc(L.dirty, n * sizeof *nd);
            if (!nd)
                return;
            L.dirty = nd;
            L.capdirty = n;
        }
        L.dirty[L.ndirty++] = stack;
        p->dirty = 1;
    }
}

/* ---- steps ------------------------------------------------------------------------------- */
static int by_change(const void *a, const void *b)
{
    const vt_step_stack *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* step_room: L.sbuf holds need bytes (grown); 0 when it cannot */
static int step_room(size_t need)
{
    if (need <= L.sbufcap)
        return 1;
    size_t c = L.sbufcap ? L.sbufcap : 4096;
    while (c < need)
        c *= 2;
    char *nb = vt__wm_realloc(L.sbuf, c);
    if (!nb)
        return 0;
    L.sbuf = nb;
    L.sbufcap = c;
    return 1;
}

/* emit_step: a STEP record of the stacks whose live bytes changed, through emit (end:
 * VT_STEPF_END, the record written as the trace ends). */
static void emit_step(uint64_t tt, void (*emit)(const void *, size_t), uint32_t end)
{
    size_t n = 0, at = 8 + sizeof(vt_rec_step); /* (a multiple of 8: the stacks' place) */
    _Static_assert(sizeof(vt_rec_step) % 8 == 0, "the stacks follow on 8 bytes");
    /* the stacks go where the record holds them (without room: a record without them) */
    int room = step_room(at + (L.ndirty ? L.ndirty : 1) * sizeof(vt_step_stack)),
        any = room || step_room(at);
    vt_step_stack *v = room ? (vt_step_stack *)(void *)(L.sbuf + at) : NULL;
    for (size_t i = 0; i < L.ndirty; i++) {
        struct per_stack *p = &L.st[L.dirty[i]];
        uint64_t now = L.tensors_seen ? p->tensor : p->device;
        p->dirty = 0;
        if (v && now != p->said)
            v[n++] = (vt_step_stack){L.dirty[i], 0, now};
        p->said = now;
    }
    L.ndirty = 0;
    vt_rec_step s = {tt,
                     L.events,
                     (end & VT_STEPF_TAIL) ? 0u : ++L.step,
                     (L.opt_since ? VT_STEPF_OPTIMIZER : 0u) |
                         (L.tensors_seen ? VT_STEPF_TENSORS : 0u) |
                         (L.oom_since ? VT_STEPF_OOM : 0u) | end,
                     L.tensor_bytes,
                     L.device_bytes,
                     L.peak_tensor,
                     L.peak_device,
                     L.oom_request,
                     0,
                     0};
    if (n > VT_STEP_MAX_STACKS) { /* the largest kept; the rest said at a later step */
        vt__wm_sort(v, n, sizeof *v, by_change);
        n = VT_STEP_MAX_STACKS;
        s.flags |= VT_STEPF_PARTIAL;
    }
    s.n_stacks = (uint32_t)n;
    size_t len = at + n * sizeof *v;
    if (any) {
        uint64_t h = (uint64_t)VT_REC_STEP | ((uint64_t)len << 32);
        memcpy(L.sbuf, &h, 8);
        memcpy(L.sbuf + 8, &s, sizeof s);
        emit(L.sbuf, len);
    }
    L.opt_since = L.oom_since = 0;
    L.oom_request = 0;
    L.events_said = L.events;
    L.peak_tensor = L.tensor_bytes;
    L.peak_device = L.device_bytes;
}

/* the levels a STEP record says (the current ones, or prov's) */
static struct prov levels_now(void)
{
    struct prov p = {0};
    p.opt_since = L.opt_since, p.oom_since = L.oom_since, p.events = L.events;
    p.tensor = L.tensor_bytes, p.device = L.device_bytes, p.oom_request = L.oom_request;
    p.peak_tensor = L.peak_tensor, p.peak_device = L.peak_device;
    return p;
}

static void levels_set(const struct prov *p)
{
    L.opt_since = p->opt_since, L.oom_since = p->oom_since, L.events = p->events;
    L.tensor_bytes = p->tensor, L.device_bytes = p->device;
    L.peak_tensor = p->peak_tensor, L.peak_device = p->peak_device;
    L.oom_request = p->oom_request;
}

/* prov_begin: an allocation after a backward at tt, no Python frame to say whose: the step may
 * end here */
static void prov_begin(uint64_t tt)
{
    L.prov = levels_now();
    L.prov.on = 1, L.prov.tt = tt;
    L.peak_tensor = L.tensor_bytes, L.peak_device = L.device_bytes; /* as emit_step leaves them */
    L.opt_since = L.oom_since = 0, L.oom_request = 0;
}

/* prov_keep: it did not end there (the optimizer's allocations): one step */
static void prov_keep(void)
{
    const struct prov *p = &L.prov;
    L.prov.on = 0;
    L.peak_tensor = p->peak_tensor > L.peak_tensor ? p->peak_tensor : L.peak_tensor;
    L.peak_device = p->peak_device > L.peak_device ? p->peak_device : L.peak_device;
    L.opt_since |= p->opt_since;
    L.oom_since |= p->oom_since;
    if (!L.oom_request)
        L.oom_request = p->oom_request;
}

/* prov_end: it ended there (a forward's): its STEP record as it was then */
static void prov_end(void (*emit)(const void *, size_t))
{
    struct prov now = levels_now();
    L.prov.on = 0;
    levels_set(&L.prov);
    emit_step(L.prov.tt, emit, 0); /* (events_said: its events) */
    levels_set(&now);
}

/* step_rule: a training step ends at the first allocation of the program's thread that is
 * neither backward nor the optimizer's after backward or optimizer allocations. */
static void step_rule(uint16_t flags, uint32_t stack, uint64_t tt,
                      void (*emit)(const void *, size_t))
{
    uint8_t k = (uint8_t)vt__pl_stack_kind(stack);
    if ((flags & VT_EVF_BACKWARD) || k == 2) {
        if (L.prov.on) /* no zero_grad came: a forward's */
            prov_end(emit);
        L.phase = PH_BWD;
    } else if (k == 1) {
        L.phase = PH_OPT;
        L.opt_since = 1;
    } else if (L.phase != PH_FWD) {
        if (vt__pl_no_python() && L.phase == PH_BWD)
            prov_begin(tt);
        else
            emit_step(tt, emit, 0);
        L.phase = PH_FWD;
    }
}

/* vt__pl_event: an event record (ALLOC, FREE, OOM) of the run, in the file's order: the live
 * set, the bytes per stack and the steps follow it; STEP records go out through emit. */
void vt__pl_event(const char *rec, uint32_t size, void (*emit)(const void *, size_t))
{
    uint16_t type, flags;
    memcpy(&type, rec, 2);
    memcpy(&flags, rec + 2, 2);
    unsigned api = VT_EVF_API(flags);
    if (type == VT_REC_OOM) {
        L.oom_since = 1;
        return;
    }
    if ((type != VT_REC_ALLOC && type != VT_REC_FREE) || size < 24)
        return;
    L.events++;
    uint64_t tt, addr;
    memcpy(&tt, rec + 8, 8);
    memcpy(&addr, rec + 16, 8);
    unsigned kind = api_facts[api].kind, space = api_facts[api].space;
    if (type == VT_REC_FREE) {
        if (flags & VT_EVF_FAILED)
            return;
        ent *e = find(addr, space);
        if (e) {
            /* the program's thread frees a tensor a backward made, right after the backward:
             * zero_grad after an optimizer step, also one that allocated nothing (a fused
             * AdamW's after its first): the replay's rule too (replay.c, apply_free) */
            uint16_t made;
            memcpy(&made, e->rec + 2, 2);
            if (e->tensor && (made & VT_EVF_BACKWARD) && !(flags & VT_EVF_BACKWARD) &&
                (L.phase == PH_BWD || L.prov.on)) {
                if (L.prov.on) /* what came after the backward was its optimizer's */
                    prov_keep();
                L.phase = PH_OPT, L.opt_since = 1;
            }
            count(e->stack, e->tensor, e->device, -(int64_t)e->size);
            L.tensor_bytes -= e->tensor ? e->size : 0;
            L.device_bytes -= e->device ? e->size : 0;
            erase(e);
        }
        return;
    }
    if (size < VT_ALLOC_REC_SIZE)
        return;
    vt_rec_alloc a;
    memcpy(&a, rec + 8, sizeof a);
    if (flags & VT_EVF_FAILED) {
        if (a.result == 2 || (flags & VT_EVF_EMULATED))
            L.oom_since = 1, L.oom_request = a.size;
        return;
    }
    if (api == VT_API_torchOom)
        L.oom_since = 1, L.oom_request = a.size;
    if (api == VT_API_torchSegmentFree || api == VT_API_torchSegmentUnmap) {
        ent *e = find(addr, api == VT_API_torchSegmentFree ? SP_TORCH_SEG : SP_TORCH_MAP);
        if (e)
            erase(e);
        return;
    }
    if (api == VT_API_torchSegmentAlloc)
        space = SP_TORCH_SEG;
    else if (api == VT_API_torchSegmentMap)
        space = SP_TORCH_MAP;
    else if (!api_facts[api].known || space == VT_SPACE_NONE || kind == PK_RETAIN ||
             kind == PK_INFO || kind == PK_TRIM || kind == PK_OTHER || !addr)
        return;
    int async = api == VT_API_cudaMallocAsync || api == VT_API_cuMemAllocAsync ||
                api == VT_API_cudaMallocFromPoolAsync || api == VT_API_cuMemAllocFromPoolAsync;
    int tensor = kind == PK_ALLOC && (space == VT_SPACE_TENSOR || async);
    int device = (kind == PK_ALLOC && (space == VT_SPACE_DEVICE || space == VT_SPACE_MANAGED ||
                                       space == VT_SPACE_VMM_HANDLE)) ||
                 kind == PK_CONTEXT || (kind == PK_LOAD && a.size);
    if (tensor || device) /* a step that ends here ends before this allocation */
        step_rule(flags, a.stack_id, tt, emit);
    if ((L.n + 1) * 4 > L.cap * 3 && grow())
        return;
    ent *e = find(addr, space);
    if (e) { /* a second allocation at a live address: readers replace it, so does this */
        count(e->stack, e->tensor, e->device, -(int64_t)e->size);
        L.tensor_bytes -= e->tensor ? e->size : 0;
        L.device_bytes -= e->device ? e->size : 0;
        erase(e);
    }
    size_t i = hash(addr, space) & (L.cap - 1);
    while (L.tab[i].used)
        i = (i + 1) & (L.cap - 1);
    e = &L.tab[i];
    e->used = 1;
    L.n++;
    e->addr = addr;
    e->space = (uint8_t)space;
    e->size = a.size;
    e->order = L.order++;
    e->stack = a.stack_id;
    e->tensor = (uint8_t)tensor;
    e->device = (uint8_t)device;
    e->len = (uint8_t)(size < sizeof e->rec ? size : sizeof e->rec);
    memcpy(e->rec, rec, e->len);
    if (size > sizeof e->rec) { /* longer forms than the writer makes: kept at 48 bytes */
        uint32_t s48 = sizeof e->rec;
        memcpy(e->rec + 4, &s48, 4);
    }
    if (e->tensor && !L.tensors_seen)
        L.tensors_seen = 1;
    L.tensor_bytes += e->tensor ? e->size : 0;
    L.device_bytes += e->device ? e->size : 0;
    if (L.tensor_bytes > L.peak_tensor)
        L.peak_tensor = L.tensor_bytes;
    if (L.device_bytes > L.peak_device)
        L.peak_device = L.device_bytes;
    count(e->stack, e->tensor, e->device, (int64_t)e->size);
}

uint64_t vt__pl_events(void)
{
    return L.events;
}

/* vt__pl_end: the run ended inside a step (backward or optimizer allocations last): one STEP
 * record for it at time tt; inside a forward with events since the last record, a TAIL one (no
 * step: what a reader of the summaries alone needs of that stretch, its peak, an OOM in it). */
void vt__pl_end(uint64_t tt, void (*emit)(const void *, size_t))
{
    if (L.prov.on) /* the run ended before a zero_grad or a backward said: a forward's */
        prov_end(emit);
    if (L.phase != PH_FWD)
        emit_step(tt, emit, VT_STEPF_END);
    else if (L.events != L.events_said)
        emit_step(tt, emit, VT_STEPF_END | VT_STEPF_TAIL);
    L.phase = PH_FWD;
}

static int by_order(const void *a, const void *b)
{
    const ent *x = *(const ent *const *)a, *y = *(const ent *const *)b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* vt__pl_snapshot: a SNAPSHOT record (fields from snap; n_allocs and live_bytes filled here)
 * followed by the ALLOC record of every live allocation in the order they were made, into
 * *buf (grown as needed). The bytes written, 0 when out of memory. */
size_t vt__pl_snapshot(char **buf, size_t *cap, vt_rec_snapshot *snap)
{
    const ent **v = vt__wm_alloc((L.n ? L.n : 1) * sizeof *v);
    if (!v)
        return 0;
    size_t n = 0, need = 8 + sizeof *snap;
    for (size_t i = 0; i < L.cap; i++)
        if (L.tab[i].used) {
            v[n++] = &L.tab[i];
            need += L.tab[i].len;
        }
    vt__wm_sort(v, n, sizeof *v, by_order);
    if (need > *cap) {
        char *nb = vt__wm_realloc(*buf, need);
        if (!nb) {
            vt__wm_free(v);
            return 0;
        }
        *buf = nb;
        *cap = need;
    }
    snap->n_allocs = n;
    snap->live_bytes = 0;
    size_t at = 8 + sizeof *snap;
    for (size_t i = 0; i < n; i++) {
        memcpy(*buf + at, v[i]->rec, v[i]->len);
        at += v[i]->len;
        snap->live_bytes += v[i]->size;
    }
    uint64_t h = (uint64_t)VT_REC_SNAPSHOT | ((uint64_t)(8 + sizeof *snap) << 32);
    memcpy(*buf, &h, 8);
    memcpy(*buf + 8, snap, sizeof *snap);
    vt__wm_free(v);
    return at;
}

/* vt__pl_reset: forgets everything (a new trace, a fork child). */
void vt__pl_reset(void)
{
    vt__wm_free(L.tab);
    vt__wm_free(L.st);
    vt__wm_free(L.dirty);
    vt__wm_free(L.sbuf);
    memset(&L, 0, sizeof L);
    vt__pl_codes_reset();
}

/* vt__pl_forget: a fork child: the parent's tables as the fork left them (perhaps mid-change
 * in the parent's packer thread) are never touched, only forgotten. */
void vt__pl_forget(void)
{
    memset(&L, 0, sizeof L);
    vt__pl_codes_forget();
}
