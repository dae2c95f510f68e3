/* replay.c — one streaming pass over a trace: tables, the live set, the three levels and
 * their peaks, phases, iterations, the OOM, and the snapshots with lifetimes: the allocations
 * live at the peak (those still live at the end that were allocated by then, plus those freed
 * after it, kept since the last new peak) and at the OOM (copied at its first failure), each
 * learning when (phase, iteration) it was freed; classify.c then sorts them. */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catpeaks.h"
#include "classify.h"
#include "exit_codes.h"
#include "livemap.h"
#include "escape.h"

/* L_INNER: a tensor of PyTorch's caching allocator (its tracker, layer 3), inside a segment
 * that L_SEGMENT already counts: allocated, never reserved a second time. */
enum level { L_NONE, L_TENSOR, L_SEGMENT, L_OTHER, L_INNER };

int replay_progress;
#define PROGRESS_MIN_BYTES (64u << 20) /* smaller files finish before it would help */

/* ---- per-API facts --------------------------------------------------------------------------- */
static int level_of(unsigned api)
{
    int kind = reader_api_kind(api), space = reader_api_space(api);
    if (kind == VT_KIND_CONTEXT || space == VT_SPACE_MODULE || space == VT_SPACE_LIBRARY)
        return kind == VT_KIND_CONTEXT || kind == VT_KIND_LOAD ? L_OTHER : L_NONE;
    if (kind != VT_KIND_ALLOC)
        return L_NONE;
    if (space == VT_SPACE_TENSOR)
        return L_INNER;
    switch (api) {
    case VT_API_cudaMallocAsync:
    case VT_API_cudaMallocFromPoolAsync:
    case VT_API_cuMemAllocAsync:
    case VT_API_cuMemAllocFromPoolAsync:
        return L_TENSOR;
    case VT_API_cudaMalloc:
    case VT_API_cudaMallocPitch:
    case VT_API_cuMemCreate:
    case VT_API_cuMemImportFromShareableHandle:
        return L_SEGMENT;
    default:
        return space == VT_SPACE_DEVICE || space == VT_SPACE_MANAGED ? L_OTHER : L_NONE;
    }
}

/* ---- the replay state ------------------------------------------------------------------ */
typedef struct state {
    replay_result *r;
    livemap live;
    stack_facts *facts; /* by stack id; phase 255 = not computed */
    uint32_t nfacts;
    uint64_t level[5];
    uint8_t thread_phase[1024];
    int seen_forward;
    uint8_t last_alloc_phase; /* the phase of the last allocation on any thread */
    int in_opt;               /* inside an optimizer stretch (one step) */
    uint32_t iter, bwd;       /* optimizer steps / backward passes begun */
    /* sizes of the tensors allocated before the first forward (parameters): the vocabulary */
    uint64_t *init_sizes;
    size_t ninit, capinit;
    uint64_t vocab;
    int vocab_done;
    catpeaks peaks; /* category_peaks */
    uint64_t event;
    /* allocations freed after the current peak candidate that were live at it: with the ones
     * still live at the end, they are the snapshot at the peak (one pass, no replay) */
    live_item *ret;
    size_t nret, capret;
    /* half the sizes of the parameters (allocated at init): a 16-bit copy of a weight */
    uint64_t *half;
    size_t nhalf, caphalf;
    /* cuMemMap chunks (VA, handle) since the allocator tracker's last SEGMENT_MAP: which
     * physical handles that segment is made of */
    struct { uint64_t va, handle; } maps[4096];
    unsigned nmaps;
} state;

/* halfset_add / halfset_has: a small open-addressing set of sizes (0 = empty). */
static void halfset_add(state *s, uint64_t v)
{
    if (!v)
        return;
    if ((s->nhalf + 1) * 2 >= s->caphalf) {
        size_t ncap = s->caphalf ? s->caphalf * 2 : 256;
        uint64_t *n = calloc(ncap, sizeof *n);
        if (!n)
            return;
        for (size_t i = 0; i < s->caphalf; i++) {
            if (!s->half[i])
                continue;
            size_t j = (size_t)(livemap_mix(s->half[i], 0) & (ncap - 1));
            while (n[j])
                j = (j + 1) & (ncap - 1);
            n[j] = s->half[i];
        }
        free(s->half);
        s->half = n;
        s->caphalf = ncap;
    }
    size_t j = (size_t)(livemap_mix(v, 0) & (s->caphalf - 1));
    while (s->half[j] && s->half[j] != v)
        j = (j + 1) & (s->caphalf - 1);
    if (!s->half[j]) {
        s->half[j] = v;
        s->nhalf++;
    }
}

static int halfset_has(const state *s, uint64_t v)
{
    if (!s->caphalf || !v)
        return 0;
    for (size_t j = (size_t)(livemap_mix(v, 0) & (s->caphalf - 1)); s->half[j]; j = (j + 1) & (s->caphalf - 1))
        if (s->half[j] == v)
            return 1;
    return 0;
}

static stack_facts facts_of(state *s, uint32_t id)
{
    stack_facts none = {PHASE_OTHER, 0, 0};
    if (!id)
        return none;
    if (id >= s->nfacts) {
        /* ids come from the trace: a corrupt one must not size the cache (nor loop on it) */
        if (id >= (1u << 24) || !tables_stack_get(s->r->t, id))
            return none;
        uint32_t n = s->nfacts ? s->nfacts : 1024;
        while (n <= id)
            n *= 2;
        stack_facts *f = realloc(s->facts, n * sizeof *f);
        if (!f)
            return none;
        for (uint32_t i = s->nfacts; i < n; i++)
            f[i].phase = 255;
        s->facts = f;
        s->nfacts = n;
    }
    if (s->facts[id].phase == 255) {
        size_t n = 0;
        const tables_frame *fr = tables_resolve_stack(s->r->t, id, &n);
        s->facts[id] = fr ? phases_of_stack(fr, n) : none;
    }
    return s->facts[id];
}

/* event_phase: the phase of an allocation (from its stack) and the thread's current phase. */
enum { EF_LOSS = 1, EF_TO_COPY = 2, EF_TORCH_SEG = 4, EF_WORKSPACE = 8, EF_ATTENTION = 16, EF_INPUT = 32 };

/* infer_vocab: at the first forward, from the tensors made before it (the parameters). */
static void infer_vocab(state *s)
{
    s->vocab_done = 1;
    s->vocab = classify_vocab(s->init_sizes, s->ninit);
    s->r->vocab = s->vocab;
}

static void note_init_size(state *s, uint64_t size)
{
    if (s->ninit == s->capinit) {
        size_t n = s->capinit ? s->capinit * 2 : 256;
        if (n > (1u << 20))
            return;
        uint64_t *p = realloc(s->init_sizes, n * sizeof *p);
        if (!p)
            return;
        s->init_sizes = p;
        s->capinit = n;
    }
    s->init_sizes[s->ninit++] = size;
}

/* event_phase: the phase of an event. Allocations: the autograd engine's threads (the event's
 * backward flag) are the backward; on the main thread the stack says optimizer (torch/optim,
 * GradScaler.step), backward (Tensor.backward), eval, data or compile; anything else is the
 * forward (eager or compiled), or init before the first forward. Frees carry no stack: the
 * autograd threads' are backward, the main thread's belong to the last allocation's phase
 * (after a backward: the backward is over). A step is one contiguous optimizer stretch: an
 * allocation under the optimizer, or the main thread freeing a parameter-sized tensor made by
 * backward (zero_grad) — fused optimizers allocate nothing after their first step. */
static uint8_t event_phase(state *s, const reader_event *ev, int is_alloc, uint8_t *loss)
{
    uint8_t *tp = &s->thread_phase[ev->thread & 1023];
    *loss = 0;
    if (ev->backward) {
        if (is_alloc) {
            if (s->last_alloc_phase != PHASE_BACKWARD)
                s->bwd++, s->in_opt = 0;
            s->last_alloc_phase = PHASE_BACKWARD;
            if (ev->stack_id) {
                stack_facts f = facts_of(s, ev->stack_id);
                *loss = (uint8_t)((f.loss ? EF_LOSS : 0) | (f.to_copy ? EF_TO_COPY : 0) |
                                  (f.workspace ? EF_WORKSPACE : 0) | (f.attention ? EF_ATTENTION : 0));
            }
        }
        return *tp = PHASE_BACKWARD;
    }
    if (!is_alloc) {
        if (s->last_alloc_phase == PHASE_BACKWARD)
            return PHASE_OTHER; /* the main thread runs again: the backward is over */
        return s->in_opt ? PHASE_OPTIMIZER : s->last_alloc_phase;
    }
    if (!ev->stack_id)
        return *tp;
    stack_facts f = facts_of(s, ev->stack_id);
    *loss = (uint8_t)((f.loss ? EF_LOSS : 0) | (f.to_copy ? EF_TO_COPY : 0) |
                      (f.workspace ? EF_WORKSPACE : 0) | (f.attention ? EF_ATTENTION : 0) |
                      (f.input ? EF_INPUT : 0));
    uint8_t p = f.phase;
    if (p == PHASE_OTHER || p == PHASE_INIT)
        p = !s->seen_forward && s->iter == 0 ? PHASE_INIT : PHASE_FORWARD;
    if (p == PHASE_FORWARD && !s->seen_forward) {
        s->seen_forward = 1;
        infer_vocab(s);
    }
    if (p == PHASE_OPTIMIZER && !s->in_opt)
        s->iter++, s->in_opt = 1;
    else if (p != PHASE_OPTIMIZER)
        s->in_opt = 0;
    if (p == PHASE_BACKWARD && s->last_alloc_phase != PHASE_BACKWARD)
        s->bwd++;
    s->last_alloc_phase = p;
    return *tp = p;
}

static void bump_peaks(state *s, uint8_t ph, uint64_t t)
{
    replay_result *r = s->r;
    uint64_t alloc = s->level[L_TENSOR] + s->level[L_INNER];
    uint64_t res = s->level[L_TENSOR] + s->level[L_SEGMENT];
    uint64_t proc = res + s->level[L_OTHER];
    if (alloc > r->peak_allocated)
        r->peak_allocated = alloc, r->t_allocated = t;
    if (res > r->peak_reserved)
        r->peak_reserved = res, r->t_reserved = t;
    if (proc > r->peak_process) {
        r->peak_process = proc, r->t_process = t;
        r->at_peak.event = s->event;
        r->at_peak.time_ns = t;
        s->nret = 0; /* whatever was freed before this new peak was not live at it */
    }
    if (ph < PHASE_COUNT && proc > r->phase_peak[ph])
        r->phase_peak[ph] = proc;
}

static live_item item_of(const livemap_entry *e)
{
    return (live_item){.addr = e->addr,
                       .size = e->size,
                       .time_ns = e->time_ns,
                       .stack_id = e->stack_id,
                       .iter_alloc = e->iter,
                       .api = e->api,
                       .space = e->space,
                       .device = e->device,
                       .layer = e->layer,
                       .phase_alloc = e->phase,
                       .phase_free = PHASE_COUNT,
                       .bwd_alloc = e->bwd,
                       .loss_site = (uint8_t)((e->flags & EF_LOSS) != 0),
                       .workspace = (uint8_t)((e->flags & EF_WORKSPACE) != 0),
                       .attention = (uint8_t)((e->flags & EF_ATTENTION) != 0),
                       .input = (uint8_t)((e->flags & EF_INPUT) != 0),
                       .tensor_api = e->level == L_TENSOR || e->level == L_INNER,
                       .to_copy = (uint8_t)((e->flags & EF_TO_COPY) != 0),
                       .torch_segment = (uint8_t)((e->flags & EF_TORCH_SEG) != 0)};
}

/* snapshot_oom: copies the live set at the first failure of an OOM (replacing an earlier,
 * recovered one); each entry remembers its item so its free can be noted. */
static void snapshot_oom(state *s)
{
    livemap *m = &s->live;
    replay_snapshot *snap = &s->r->at_oom;
    free(snap->items);
    snap->items = calloc(m->n ? m->n : 1, sizeof *snap->items);
    snap->n = 0;
    for (uint64_t i = 0; i < m->cap; i++) {
        livemap_entry *e = &m->e[i];
        if (!e->used)
            continue;
        e->snap_oom = 0;
        if (!snap->items || e->level == L_NONE)
            continue;
        snap->items[snap->n] = item_of(e);
        e->snap_oom = (uint32_t)++snap->n;
    }
}

/* input_of: what the rules of classify.c see of one item. */
static classify_input input_of(const state *s, const replay_result *r, const live_item *it)
{
    int half = !(it->size & 1) && halfset_has(s, it->size / 2);        /* a parameter's size */
    int copy = halfset_has(s, it->size);                               /* half a parameter's */
    int vocab = s->vocab && it->size % s->vocab == 0 && it->size / s->vocab >= 128 && !half && !copy;
    classify_input in = {it->space, it->layer, it->tensor_api, r->tensor_mode, it->phase_alloc,
                         it->phase_free, it->iter_alloc, it->iter_free, it->loss_site,
                         it->to_copy && it->tensor_api && copy};
    in.freed = it->phase_free != PHASE_COUNT;
    in.bwd_alloc = it->bwd_alloc;
    in.bwd_free = it->bwd_free;
    in.param_sized = half;
    in.vocab_sized = vocab;
    in.workspace = it->workspace;
    in.attention = it->attention;
    in.cut_by_oom = it->after_oom;
    in.input = it->input;
    return in;
}

/* note_interval: one allocation's lifetime, classified, for category_peaks. */
static void note_interval(state *s, const livemap_entry *e, const live_item *it, int freed, uint64_t t_free)
{
    if (e->level == L_NONE)
        return;
    int kind = (e->flags & EF_TORCH_SEG) ? CATPEAKS_SEGMENT : e->level == L_INNER ? CATPEAKS_INNER : CATPEAKS_PLAIN;
    category cat = CAT_CACHE;
    if (kind != CATPEAKS_SEGMENT) {
        classify_input in = input_of(s, s->r, it);
        cat = classify(&in, NULL);
        timeline_total_add(s->r->tl, e->stack_id, cat, e->size);
    }
    catpeaks_add(&s->peaks, e->alloc_event, e->time_ns, freed, s->event, t_free, e->size, cat, kind);
}

static void on_free(state *s, livemap_entry *e, uint8_t ph, int oom_pending, uint64_t t)
{
    replay_result *r = s->r;
    {
        live_item it = item_of(e);
        it.phase_free = ph;
        it.iter_free = s->iter;
        it.bwd_free = s->bwd;
        it.after_oom = (uint8_t)(oom_pending != 0);
        note_interval(s, e, &it, 1, t);
    }
    if (r->at_peak.event && e->alloc_event <= r->at_peak.event) {
        if (s->nret == s->capret) {
            size_t n = s->capret ? s->capret * 2 : 1024;
            live_item *p = realloc(s->ret, n * sizeof *p);
            if (p)
                s->ret = p, s->capret = n;
        }
        if (s->nret < s->capret) {
            live_item *it = &s->ret[s->nret++];
            *it = item_of(e);
            it->phase_free = ph;
            it->iter_free = s->iter;
            it->bwd_free = s->bwd;
            it->after_oom = (uint8_t)(oom_pending != 0);
        }
    }
    if (e->snap_oom && e->snap_oom <= r->at_oom.n) {
        live_item *it = &r->at_oom.items[e->snap_oom - 1];
        it->phase_free = ph;
        it->iter_free = s->iter;
        it->bwd_free = s->bwd;
        it->after_oom = (uint8_t)(oom_pending != 0);
        /* released while PyTorch retries: its cache, confirmed if the request fails again */
        if (oom_pending && e->level == L_SEGMENT)
            it->oom_released = 1;
    }
    s->level[e->level] -= e->size;
    livemap_del(&s->live, e);
}

/* finish_peak: the snapshot at the peak = what was freed after it (kept) + what is still live
 * and was allocated no later than it. */
static void finish_peak(state *s)
{
    replay_result *r = s->r;
    replay_snapshot *snap = &r->at_peak;
    size_t cap = s->nret + s->live.n + 1;
    snap->items = malloc(cap * sizeof *snap->items);
    snap->n = 0;
    if (!snap->items || !r->at_peak.event)
        return;
    if (s->nret)
        memcpy(snap->items, s->ret, s->nret * sizeof *s->ret);
    snap->n = s->nret;
    for (uint64_t i = 0; i < s->live.cap; i++) {
        livemap_entry *e = &s->live.e[i];
        if (e->used && e->level != L_NONE && e->alloc_event <= r->at_peak.event)
            snap->items[snap->n++] = item_of(e);
    }
}

/* OOM bookkeeping */
typedef struct oom_track {
    int pending;
    uint64_t first_event, requested, time_ns, released, last_event;
    uint32_t stack, fails;
    uint8_t phase, emulated;
} oom_track;

/* mark_torch_segments: the allocator tracker reported a segment (SEGMENT_ALLOC: a cudaMalloc
 * at addr; SEGMENT_MAP: the cuMemMap chunks mapped into [addr, addr + size) since the last one):
 * flag the live segment entries as PyTorch's, so a snapshot counts them as its cache. */
static void mark_torch_segments(state *s, const reader_event *ev)
{
    if (ev->api == VT_API_torchSegmentAlloc) {
        livemap_entry *e = livemap_find(&s->live, ev->addr, VT_SPACE_DEVICE);
        if (e && e->level == L_SEGMENT)
            e->flags |= EF_TORCH_SEG;
    } else if (ev->api == VT_API_torchSegmentMap) {
        for (unsigned i = 0; i < s->nmaps; i++) {
            if (s->maps[i].va < ev->addr || s->maps[i].va - ev->addr >= ev->size)
                continue;
            livemap_entry *e = livemap_find(&s->live, s->maps[i].handle, VT_SPACE_VMM_HANDLE);
            if (e && e->level == L_SEGMENT)
                e->flags |= EF_TORCH_SEG;
        }
        s->nmaps = 0;
    } else if (ev->api == VT_API_cuMemMap && ev->has_aux) {
        if (s->nmaps == sizeof s->maps / sizeof s->maps[0]) /* full: keep the newer half */
            memmove(s->maps, s->maps + s->nmaps / 2, (s->nmaps - s->nmaps / 2) * sizeof s->maps[0]),
                s->nmaps -= s->nmaps / 2;
        s->maps[s->nmaps].va = ev->addr;
        s->maps[s->nmaps++].handle = ev->aux;
    }
}

static void apply_event(state *s, int is_alloc, const reader_event *ev, oom_track *ot)
{
    replay_result *r = s->r;
    uint8_t loss;
    uint8_t ph = event_phase(s, ev, is_alloc, &loss);
    timeline_event(r->tl, ev, is_alloc, ph, s->iter);
    unsigned space = (unsigned)reader_api_space(ev->api);
    if (is_alloc) {
        int lvl = level_of(ev->api);
        if (ev->api == VT_API_torchTrackerNote && ev->size != VT_TRACKER_DROPPED)
            r->tracker_note = (int)ev->size, r->tracker_detail = ev->addr;
        if (!ev->failed && (ev->api == VT_API_torchSegmentAlloc || ev->api == VT_API_torchSegmentMap ||
                            ev->api == VT_API_cuMemMap))
            mark_torch_segments(s, ev);
        if (ev->api == VT_API_torchOom && !ot->pending) {
            /* PyTorch's allocator raised OutOfMemoryError with no failed CUDA call before it
             * (a memory-fraction limit): the tracker's OOM is the only sign (size = request) */
            *ot = (oom_track){1, s->event, ev->size, ev->time_ns, 0, s->event, ev->stack_id, 1, ph, 0};
            snapshot_oom(s);
            return;
        }
        if (ev->failed) {
            {
                r->n_failed++;
                if (ev->result == 2 && reader_api_kind(ev->api) == VT_KIND_ALLOC) {
                    if (ot->pending && ot->requested == ev->size) {
                        ot->fails++;
                        ot->last_event = s->event;
                        for (size_t i = 0; i < r->at_oom.n; i++) /* confirm the released cache */
                            if (r->at_oom.items[i].oom_released == 1)
                                r->at_oom.items[i].oom_released = 2;
                    } else {
                        *ot = (oom_track){1, s->event, ev->size, ev->time_ns, 0, s->event, ev->stack_id, 1, ph, ev->emulated};
                        snapshot_oom(s);
                    }
                }
            }
            return;
        }
        if (reader_api_kind(ev->api) == VT_KIND_CONTEXT)
            r->n_contexts++;
        if (ot->pending && lvl != L_NONE && ev->size >= ot->requested)
            ot->pending = 0; /* recovered: the same request later succeeded */
        if (lvl == L_NONE || !ev->addr)
            return;
        /* checked sums: an allocation that would take the live total past 2^62 bytes (4 EiB;
         * no device holds that) is not counted, so no level, peak or category sum can wrap */
        uint64_t total =
            s->level[L_TENSOR] + s->level[L_SEGMENT] + s->level[L_OTHER] + s->level[L_INNER];
        if (ev->size > REPLAY_LIVE_MAX - total) {
            r->n_implausible++;
            return;
        }
        int replaced;
        livemap_entry *e = livemap_put(&s->live, ev->addr, space, &replaced);
        if (!e)
            return;
        if (replaced)
            s->level[e->level] -= e->size;
        e->size = ev->size;
        e->time_ns = ev->time_ns;
        e->stack_id = ev->stack_id;
        e->iter = s->iter;
        e->api = ev->api;
        e->device = ev->device;
        e->layer = (uint8_t)reader_api_layer(ev->api);
        e->phase = ph;
        e->flags = loss;
        if (ph == PHASE_INIT && (lvl == L_TENSOR || lvl == L_INNER)) {
            halfset_add(s, ev->size / 2); /* a parameter: its 16-bit copy is half as big */
            note_init_size(s, ev->size);
        }
        e->bwd = s->bwd;
        e->level = (uint8_t)lvl;
        e->snap_peak = e->snap_oom = 0;
        e->alloc_event = s->event;
        s->level[lvl] += ev->size;
        if (lvl == L_INNER)
            r->tensor_mode = r->allocator_mode = 1;
        if (lvl == L_TENSOR)
            r->tensor_mode = 1;
        else if (lvl == L_SEGMENT)
            r->segment_mode = 1;
        bump_peaks(s, ph, ev->time_ns);
    } else {
        if (ev->failed)
            return;
        livemap_entry *e = livemap_find(&s->live, ev->addr, space);
        if (!e) {
            if (space != VT_SPACE_VMM_VA && space != VT_SPACE_VA_RANGE && space != VT_SPACE_NONE)
                r->unknown_frees++;
            return;
        }
        if (ot->pending && e->level == L_SEGMENT)
            ot->released += e->size;
        if (!ev->backward && e->phase == PHASE_BACKWARD && (e->level == L_INNER || e->level == L_TENSOR) &&
            !(e->size & 1) && halfset_has(s, e->size / 2) && !s->in_opt) {
            /* the main thread frees a gradient (zero_grad): an optimizer step, even one that
             * allocated nothing (fused / foreach optimizers after their first step) */
            s->iter++;
            s->in_opt = 1;
            ph = PHASE_OPTIMIZER;
        }
        timeline_freed(r->tl, ev, e->size);
        on_free(s, e, ph, ot->pending, ev->time_ns);
    }
}

static int run_pass(state *s, reader *rd, oom_track *ot, char *err, size_t errlen)
{
    replay_result *r = s->r;
    reader_record rec;
    memset(s->level, 0, sizeof s->level);
    memset(s->thread_phase, PHASE_INIT, sizeof s->thread_phase);
    s->seen_forward = 0;
    s->last_alloc_phase = PHASE_INIT;
    s->in_opt = 0;
    s->bwd = 0;
    s->iter = 0;
    s->event = 0;
    /* Events wait in a small ring while their hash slots are prefetched: with a live set of
     * 100k allocations nearly every lookup is a cache miss, and this hides most of them.
     * Any other record first drains the ring, so the order of effects is unchanged. */
    enum { RING = 16 };
    struct pending {
        reader_event ev;
        int is_alloc;
        uint64_t event;
    } ring[RING];
    unsigned head = 0, count = 0;
#define VT_DRAIN_ONE()                                                                   \
    do {                                                                                 \
        struct pending *p_ = &ring[head];                                                \
        s->event = p_->event;                                                            \
        apply_event(s, p_->is_alloc, &p_->ev, ot);                                 \
        head = (head + 1) % RING;                                                        \
        count--;                                                                         \
    } while (0)
    uint64_t seq = 0;
    while (reader_next(rd, &rec)) {
        if (rec.type == VT_REC_ALLOC || rec.type == VT_REC_FREE) {
            if (count == RING)
                VT_DRAIN_ONE();
            struct pending *p = &ring[(head + count) % RING];
            p->ev = rec.u.ev;
            p->is_alloc = rec.type == VT_REC_ALLOC;
            p->event = ++seq;
            count++;
            if (s->live.cap)
                __builtin_prefetch(&s->live.e[livemap_mix(rec.u.ev.addr, (unsigned)reader_api_space(rec.u.ev.api)) &
                                              (s->live.cap - 1)]);
            if (replay_progress && r->file_bytes >= PROGRESS_MIN_BYTES && !(seq & ((1u << 22) - 1)))
                fprintf(stderr, "\rvramtrace: %s: %3d %%", r->path,
                        (int)(100.0 * (double)rec.offset / (double)r->file_bytes));
            r->n_events++;
            if (rec.u.ev.time_ns > r->end_ns)
                r->end_ns = rec.u.ev.time_ns;
            continue;
        }
        while (count)
            VT_DRAIN_ONE();
        tables_add(r->t, &rec);
        switch (rec.type) {
        case VT_REC_OOM:
            if (ot->pending && !r->oom_capacity)
                r->oom_capacity = rec.u.oom.capacity;
            break;
        case VT_REC_TRAILER:
            if (rec.u.trailer.end_ns > r->end_ns)
                r->end_ns = rec.u.trailer.end_ns;
            r->ended = rec.flags;
            break;
        default:
            break;
        }
    }
    while (count)
        VT_DRAIN_ONE();
#undef VT_DRAIN_ONE
    if (replay_progress && r->file_bytes >= PROGRESS_MIN_BYTES)
        fprintf(stderr, "\r%*s\r", 60 + (int)strlen(r->path), "");
    r->status = reader_status_of(rd);
    r->iterations = s->iter;
    if (r->status == READER_MALFORMED || r->status == READER_IOERR) {
        snprintf(err, errlen, "%s: %s at byte %llu: %s", r->path,
                 r->status == READER_MALFORMED ? "malformed trace" : "read error",
                 (unsigned long long)reader_error_offset(rd), reader_error_message(rd));
        return VT_EXIT_MALFORMED;
    }
    return 0;
}

/* cmp_item_addr: order of item indices by address (torch_cache). */
static const live_item *g_sort_items;
static int cmp_item_addr(const void *a, const void *b)
{
    uint64_t x = g_sort_items[*(const size_t *)a].addr, y = g_sort_items[*(const size_t *)b].addr;
    return x < y ? -1 : x > y;
}

/* torch_cache (tensor+segment): each of PyTorch's segments in the snapshot keeps as its size
 * only what the tensors inside it leave unused — the allocator's cache. Tensors are found in
 * their cudaMalloc segment by address; the rest (expandable segments: the snapshot holds
 * physical handles, not addresses) are taken from the handles in order. */
static void torch_cache(replay_snapshot *snap)
{
    size_t *seg = malloc((snap->n + 1) * sizeof *seg), nseg = 0;
    if (!seg)
        return;
    for (size_t i = 0; i < snap->n; i++)
        if (snap->items[i].torch_segment && snap->items[i].space == VT_SPACE_DEVICE)
            seg[nseg++] = i;
    g_sort_items = snap->items;
    qsort(seg, nseg, sizeof *seg, cmp_item_addr);
    uint64_t *used = calloc(nseg + 1, sizeof *used), rest = 0;
    if (!used) {
        free(seg);
        return;
    }
    for (size_t i = 0; i < snap->n; i++) {
        const live_item *t = &snap->items[i];
        if (t->space != VT_SPACE_TENSOR)
            continue;
        size_t lo = 0, hi = nseg; /* the last segment starting at or below the tensor */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (snap->items[seg[mid]].addr <= t->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        const live_item *sg = lo ? &snap->items[seg[lo - 1]] : NULL;
        if (sg && t->addr - sg->addr < sg->size)
            used[lo - 1] += t->size;
        else
            rest += t->size;
    }
    for (size_t k = 0; k < nseg; k++) {
        live_item *sg = &snap->items[seg[k]];
        sg->size = used[k] < sg->size ? sg->size - used[k] : 0;
    }
    for (size_t i = 0; i < snap->n && rest; i++) {
        live_item *h = &snap->items[i];
        if (!h->torch_segment || h->space == VT_SPACE_DEVICE)
            continue;
        uint64_t take = rest < h->size ? rest : h->size;
        h->size -= take;
        rest -= take;
    }
    free(used);
    free(seg);
}

/* cat_peaks: the allocations still live at the end join the intervals; then the sweep. */
static void cat_peaks(state *s, replay_result *r)
{
    for (uint64_t i = 0; i < s->live.cap; i++) {
        livemap_entry *e = &s->live.e[i];
        if (e->used) {
            live_item it = item_of(e);
            note_interval(s, e, &it, 0, 0);
        }
    }
    if (r->tensor_mode)
        r->has_cat_peaks = catpeaks_sweep(&s->peaks, r->allocator_mode, r->cat_peak, r->cat_peak_ns);
}

static void classify_snapshot(const state *s, replay_result *r, replay_snapshot *snap)
{
    memset(&snap->by_cat, 0, sizeof snap->by_cat);
    if (r->allocator_mode)
        torch_cache(snap);
    for (size_t i = 0; i < snap->n; i++) {
        live_item *it = &snap->items[i];
        classify_input in = input_of(s, r, it);
        int rule;
        it->category = (uint8_t)classify(&in, &rule);
        if (it->oom_released || (r->allocator_mode && it->torch_segment)) {
            /* measured: the allocator gave it back to retry; or (tensor+segment) the part of
             * one of PyTorch's segments that holds no tensor */
            it->category = CAT_CACHE;
            rule = classify_rule_count();
        }
        it->rule = (uint8_t)rule;
        snap->by_cat.bytes[it->category] += it->size;
    }
}

int replay_file(const char *path, replay_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    out->t = tables_new();
    struct stat sb;
    if (stat(path, &sb) == 0)
        out->file_bytes = (uint64_t)sb.st_size;
    reader *rd = reader_open(path, err, errlen);
    if (!rd)
        return VT_EXIT_USAGE;
    if (reader_status_of(rd) == READER_MALFORMED) {
        reader_close(rd);
        return VT_EXIT_MALFORMED;
    }
    state s;
    memset(&s, 0, sizeof s);
    s.r = out;
    s.peaks.tl = out->tl = timeline_new();
    oom_track ot;
    memset(&ot, 0, sizeof ot);
    int rc = run_pass(&s, rd, &ot, err, errlen);
    const char *why = reader_error_message(rd); /* "no trailer", "last record cut at byte N" */
    snprintf(out->status_msg, sizeof out->status_msg, "%s",
             out->status == READER_TRUNCATED && why && *why ? why : reader_status_name(out->status));
    if (ot.pending) {
        out->has_oom = 1;
        out->oom_requested = ot.requested;
        out->oom_time_ns = ot.time_ns;
        out->oom_stack = ot.stack;
        out->oom_phase = ot.phase;
        out->oom_emulated = ot.emulated;
        out->oom_cache_released = ot.released;
        out->oom_pytorch_pattern = ot.fails >= 2 && ot.released > 0;
        out->at_oom.event = ot.first_event;
        out->oom_last_event = ot.last_event;
        out->at_oom.time_ns = ot.time_ns;
    }
    finish_peak(&s);
    for (size_t i = 0; i < out->at_oom.n; i++) /* released but never confirmed: not cache */
        out->at_oom.items[i].oom_released = out->at_oom.items[i].oom_released == 2;
    if (!out->has_oom) {
        free(out->at_oom.items);
        out->at_oom.items = NULL;
        out->at_oom.n = 0;
    }
    classify_snapshot(&s, out, &out->at_peak);
    if (out->has_oom)
        classify_snapshot(&s, out, &out->at_oom);
    cat_peaks(&s, out);
    out->backward_passes = s.bwd;
    free(s.live.e);
    free(s.facts);
    free(s.ret);
    free(s.half);
    free(s.init_sizes);
    catpeaks_free(&s.peaks);
    reader_close(rd);
    return rc;
}

void replay_free(replay_result *r)
{
    free(r->at_peak.items);
    free(r->at_oom.items);
    tables_free(r->t);
    timeline_free(r->tl);
    memset(r, 0, sizeof *r);
}

const char *replay_site_text(replay_result *r, uint32_t stack_id, char *buf, size_t len)
{
    size_t n = 0;
    const tables_frame *f = stack_id ? tables_resolve_stack(r->t, stack_id, &n) : NULL;
    long i = f ? phases_site(f, n) : -1;
    if (i < 0) {
        snprintf(buf, len, "%s", stack_id ? "(no named frame)" : "(no stack)");
        return buf;
    }
    char raw[1024];
    size_t m = tables_frame_text(&f[i], raw, sizeof raw);
    escape_term(raw, m < sizeof raw ? m : sizeof raw - 1, buf, len);
    return buf;
}

const char *replay_native_text(replay_result *r, uint32_t stack_id, char *buf, size_t len)
{
    size_t n = 0;
    const tables_frame *f = stack_id ? tables_resolve_stack(r->t, stack_id, &n) : NULL;
    long op = -1, native = -1, any = -1;
    for (size_t i = 0; f && i < n; i++) {
        const char *fn = f[i].function;
        if (f[i].kind != TABLES_FRAME_NATIVE || !fn || !fn[0])
            continue;
        if (any < 0)
            any = (long)i;
        if (strstr(fn, "empty")) /* the allocation primitive itself names no operation */
            continue;
        if (op < 0 && strstr(fn, "at::_ops::"))
            op = (long)i;
        if (native < 0 && strstr(fn, "at::native::"))
            native = (long)i;
    }
    long pick = op >= 0 ? op : native >= 0 ? native : any;
    buf[0] = '\0';
    if (pick < 0)
        return buf;
    const char *fn = f[pick].function;
    size_t fl = strcspn(fn, "("); /* the name without its argument list */
    char raw[512];
    snprintf(raw, sizeof raw, "%.*s (%s)", (int)(fl < 400 ? fl : 400), fn,
             f[pick].module ? f[pick].module->basename : "?");
    escape_term(raw, strlen(raw), buf, len);
    return buf;
}
