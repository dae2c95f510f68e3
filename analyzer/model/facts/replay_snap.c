/* replay_snap.c — the replay's peaks and snapshots: the three levels' peaks, the allocations
 * live at the peak and at the OOM with their lifetimes, and the classification of a snapshot
 * (classify.c's rules); the join after a bounded trace's gap (what ended in it, as what). Each
 * lifetime's category for category_peaks is replay_cats.c's. */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "replay_state.h"

void replay_snap_join(state *s, const reader_snapshot *snap)
{
    replay_result *r = s->r;
    /* the run's events read so far: all but the snapshots' allocations, plus those gone */
    uint64_t run = r->n_events - r->snapshot_events + r->dropped_events;
    uint64_t gap = snap->fixed.events_before > run ? snap->fixed.events_before - run : 0;
    r->dropped_events += gap;
    s->gap_stepped = s->step_events_max && gap > s->step_events_max;
    if (!r->dropped_from_ns)
        r->dropped_from_ns = r->end_ns;
    r->dropped_to_ns = r->snapshot_ns = snap->time_ns;
    r->snapshot_allocs = snap->fixed.n_allocs;
    r->snapshot_events += snap->fixed.n_allocs;
    s->join_left = snap->fixed.n_allocs; /* the join's records come next */
    s->step_cut = 1;                     /* the step it cut: its backward passes not all seen */
    replay_bwd_cut(s);                   /* the pass it cut, if one: not whole */
    timeline_gap(r->tl);                 /* (its join's records are drawn in no slice: apply_one) */
}

uint8_t replay_snap_join_free(const state *s, const livemap_entry *e)
{
    int grad = s->gap_stepped && e->bwd == s->bwd_at_step + 1 && replay_bwd_param_sized(s, e) &&
               !replay_bwd_was_temp(s, e);
    return grad ? PHASE_COUNT : s->last_alloc_phase;
}

void replay_snap_bump_peaks(state *s, uint8_t ph, uint64_t t)
{
    replay_result *r = s->r;
    uint64_t alloc = s->level[L_TENSOR] + s->level[L_INNER];
    uint64_t res = s->level[L_TENSOR] + s->level[L_SEGMENT];
    uint64_t proc = res + s->level[L_OTHER];
    if (alloc > r->peak_allocated) {
        r->peak_allocated = alloc, r->t_allocated = t;
        r->at_tensors.event = s->event;
        s->held_to = s->event;
        r->at_tensors.time_ns = t;
        r->tensors_phase = ph;
        r->tensors_bwd = s->bwd;
        r->tensors_iter = s->iter;
        s->kept_from[KEPT_TENSORS] = s->nkept; /* freed before this new peak: not live at it */
    }
    if (ph == PHASE_OPTIMIZER && alloc > r->peak_step) {
        r->peak_step = alloc;
        r->at_step.event = s->event;
        s->held_to = s->event;
        r->at_step.time_ns = t;
        s->kept_from[KEPT_STEP] = s->nkept;
    }
    if (ph != PHASE_EVAL && alloc > r->peak_train)
        r->peak_train = alloc;
    /* (after an error the program caught: what its steps held, replay_went_on.c) */
    if (s->won.open && ph != PHASE_EVAL) {
        s->won.res = res > s->won.res ? res : s->won.res;
        s->won.proc = proc > s->won.proc ? proc : s->won.proc;
    }
    if (res > r->peak_reserved)
        r->peak_reserved = res, r->t_reserved = t;
    /* the process peak; at the same level, the moment with the most tensor bytes: a segment
     * reserved for a tensor reaches the peak one event before the tensor is placed in it. The
     * peak's time is the moment its snapshot describes (the level was the same at both). */
    if (proc > r->peak_process || (proc == r->peak_process && alloc > s->alloc_at_peak)) {
        r->peak_process = proc, r->t_process = t;
        s->alloc_at_peak = alloc;
        r->peak_phase = ph;
        r->peak_bwd = s->bwd;
        r->peak_iter = s->iter;
        r->at_peak.event = s->event;
        s->held_to = s->event;
        r->at_peak.time_ns = t;
        s->kept_from[KEPT_PEAK] = s->nkept; /* whatever was freed before it was not live at it */
    }
    if (ph < PHASE_COUNT && proc > r->phase_peak[ph])
        r->phase_peak[ph] = proc, r->phase_peak_event[ph] = s->event;
}

/* take_live: snap (its items freed first) becomes the live set's allocations, in the live set's
 * order; mark: each entry remembers its item (e->snap_oom: index + 1, 0 for none), so its free
 * can be noted (the OOM's) */
static void take_live(state *s, replay_snapshot *snap, int mark)
{
    livemap *m = &s->live;
    free(snap->items);
    snap->items = calloc(m->n ? m->n : 1, sizeof *snap->items);
    snap->n = 0;
    for (uint64_t i = 0; i < m->ne; i++) {
        livemap_entry *e = livemap_live_entry(m, i);
        if (!e)
            continue;
        if (mark)
            e->snap_oom = 0;
        if (!snap->items || e->level == L_NONE)
            continue;
        snap->items[snap->n++] = replay_item(e);
        if (mark)
            e->snap_oom = (uint32_t)snap->n;
    }
}

/* replay_snap_oom: copies the live set at the first failure of an OOM (replacing an earlier,
 * recovered one); each entry remembers its item so its free can be noted. */
void replay_snap_oom(state *s)
{
    s->r->oom_seen_event = s->event;    /* (the timeline keeps this moment) */
    if (s->r->tl && s->r->tl->last.seq) /* (its sweep may be behind: then it moves up to it) */
        s->r->tl->at_oom = s->r->tl->last;
    take_live(s, &s->r->at_oom, 1);
}

void replay_snap_oom_aside(state *s)
{
    replay_result *r = s->r;
    oom_aside *a = &s->aside;
    free(a->snap.items); /* (none held: a failure after the caught one is resolved first) */
    *a = (oom_aside){1,
                     r->at_oom,
                     r->tl ? r->tl->at_oom : (timeline_moment){0},
                     r->oom_seen_event,
                     r->oom_iter,
                     r->oom_bwd,
                     s->bwd_oom};
    r->at_oom.items = NULL, r->at_oom.n = 0;
}

void replay_snap_oom_drop(state *s)
{
    free(s->aside.snap.items);
    memset(&s->aside, 0, sizeof s->aside);
}

static int by_alloc_event(const void *x, const void *y)
{
    uint64_t a = (*(const live_item *const *)x)->alloc_event;
    uint64_t b = (*(const live_item *const *)y)->alloc_event;
    return a < b ? -1 : a > b;
}

/* find: the item of allocation event ev in idx (n, sorted by it), or NULL */
static live_item *find(live_item **idx, size_t n, uint64_t ev)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (idx[mid]->alloc_event < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && idx[lo]->alloc_event == ev ? idx[lo] : NULL;
}

void replay_snap_oom_back(state *s)
{
    replay_result *r = s->r;
    oom_aside *a = &s->aside;
    if (!a->held)
        return;
    replay_snapshot later = r->at_oom; /* (the later failure's, its window's frees in it) */
    r->at_oom = a->snap;
    if (r->tl)
        r->tl->at_oom = a->tl_at_oom;
    r->oom_seen_event = a->seen_event;
    r->oom_iter = a->iter, r->oom_bwd = a->bwd, s->bwd_oom = a->bwd_oom;
    s->frozen_oom = 0; /* (a caught one's unwinding is over) */
    a->snap.items = NULL;
    a->held = 0;
    /* each allocation's end as the later snapshot saw it (its free while that one was pending:
     * the caught one's entries were marked for it); not its oom_released, the later failure's
     * retry. Then the live entries point at the caught one's items again. */
    size_t n = r->at_oom.n;
    live_item **idx = n ? malloc(n * sizeof *idx) : NULL;
    for (size_t i = 0; idx && i < n; i++)
        idx[i] = &r->at_oom.items[i];
    if (idx)
        qsort(idx, n, sizeof *idx, by_alloc_event);
    for (size_t i = 0; idx && i < later.n; i++) {
        const live_item *l = &later.items[i];
        live_item *it = l->free_event ? find(idx, n, l->alloc_event) : NULL;
        if (it)
            it->phase_free = l->phase_free, it->iter_free = l->iter_free,
            it->bwd_free = l->bwd_free, it->after_oom = l->after_oom,
            it->free_event = l->free_event, it->outlived_step = l->outlived_step;
    }
    livemap *m = &s->live;
    for (uint64_t k = 0; k < m->ne; k++) {
        livemap_entry *e = livemap_live_entry(m, k);
        if (!e)
            continue;
        live_item *it = idx ? find(idx, n, e->alloc_event) : NULL;
        e->snap_oom = it ? (uint32_t)(it - r->at_oom.items) + 1 : 0;
    }
    free(idx);
    free(later.items);
}

static void torch_cache(replay_snapshot *snap);

/* replay_snap_end: the live set at the trace's end as r->at_end (replay_keep_end) */
void replay_snap_end(state *s)
{
    replay_snapshot *snap = &s->r->at_end;
    take_live(s, snap, 0);
    s->r->end_kept = snap->items != NULL;
    snap->event = s->r->n_events, snap->time_ns = s->r->end_ns;
    if (s->r->allocator_mode) /* each segment's size its unused bytes, as at_peak's (memviz.c) */
        torch_cache(snap);
    else if (!s->r->tensor_mode && snap->items) /* segment-only: what a library's own cudaMalloc
                                                 * is, the report's external (memviz.c) */
        replay_snap_classify(s, s->r, snap);
}

/* holds: snapshot x (KEPT_*) as it stands holds an allocation made at alloc_event (tensor: a
 * tensor's) that is freed now: its moment came (event 0: not yet), no earlier than the allocation;
 * a tensor, but for the process peak's */
static uint64_t kept_at(const replay_result *r, int x) /* (its moment: holds') */
{
    return x == KEPT_PEAK      ? r->at_peak.event
           : x == KEPT_TENSORS ? r->at_tensors.event
                               : r->at_step.event;
}
static int holds(const replay_result *r, int x, uint64_t alloc_event, int tensor)
{
    uint64_t at = kept_at(r, x);
    return at && alloc_event <= at && (x == KEPT_PEAK || tensor);
}

/* held_by: kept[i] is in snapshot x: freed after its moment's last move (its part of kept), and
 * held by it */
static int held_by(const state *s, size_t i, int x)
{
    return i >= s->kept_from[x] && holds(s->r, x, s->kept[i].alloc_event, s->kept[i].tensor_api);
}

/* kept_room: room for one more in kept: first by dropping what no snapshot holds any more (each
 * snapshot's part shifted with it), then by growing it. 0 when out of memory. */
static int kept_room(state *s)
{
    size_t n = 0, from[3];
    for (size_t i = 0; i < s->nkept; i++) {
        for (int x = 0; x < 3; x++)
            if (s->kept_from[x] == i)
                from[x] = n;
        if (held_by(s, i, KEPT_PEAK) || held_by(s, i, KEPT_TENSORS) || held_by(s, i, KEPT_STEP))
            s->kept[n++] = s->kept[i];
    }
    for (int x = 0; x < 3; x++)
        s->kept_from[x] = s->kept_from[x] >= s->nkept ? n : from[x];
    s->nkept = n;
    if (n <= s->capkept / 2 && s->capkept)
        return 1;
    size_t nc = s->capkept ? s->capkept * 2 : 1024;
    live_item *p = realloc(s->kept, nc * sizeof *p);
    if (!p)
        return n < s->capkept;
    s->kept = p, s->capkept = nc;
    return 1;
}

/* keep_freed: e, freed after a snapshot's moment (x: how) and live at it: its item kept once
 * (built in its place; out of line: the common free keeps none) */
static __attribute__((noinline)) void keep_freed(state *s, const livemap_entry *e,
                                                 const replay_end *x)
{
    if (s->nkept == s->capkept && !kept_room(s))
        return; /* out of memory: the snapshots miss it (counted nowhere else) */
    replay_item_ended_at(&s->kept[s->nkept++], e, x);
}

void replay_snap_retire(state *s, livemap_entry *e, uint8_t ph, int oom_pending, uint64_t t)
{
    replay_result *r = s->r;
    int tensor = e->level == L_TENSOR || e->level == L_INNER;
    int kept = holds(r, KEPT_PEAK, e->alloc_event, tensor) ||
               holds(r, KEPT_TENSORS, e->alloc_event, tensor) ||
               holds(r, KEPT_STEP, e->alloc_event, tensor);
    const replay_end x = replay_end_now(s, e, ph, oom_pending);
    if (kept)
        keep_freed(s, e, &x);
    if (s->classify_on && !e->code)
        replay_cats_free(s, e, &x, t); /* (no item: replay_cats_free makes one if it must) */
    else
        replay_cats_free_settled(s, e, t, 1); /* settled already: no item to classify */
    if (e->snap_oom && e->snap_oom <= r->at_oom.n) {
        live_item *it = &r->at_oom.items[e->snap_oom - 1];
        replay_item_end(it, &x);
        /* released while PyTorch retries: its cache, confirmed if the request fails again */
        if (oom_pending && e->level == L_SEGMENT)
            it->oom_released = 1;
    }
    s->level[e->level] -= e->size;
}

/* held_items: snapshot x's (KEPT_*) kept items into a new array with room for live more after
 * them; NULL when out of memory. (One pass from its part of kept on, into room for all kept:
 * counting them first had been a second pass over kept, 80 bytes an item apart.) */
static live_item *held_items(const state *s, int x, size_t live, size_t *n)
{
    size_t from = s->kept_from[x] < s->nkept ? s->kept_from[x] : s->nkept;
    live_item *items = malloc((s->nkept - from + live + 1) * sizeof *items);
    *n = 0;
    if (!items)
        return NULL;
    uint64_t at = kept_at(s->r, x); /* (holds, its loads out of the loop) */
    int any = x == KEPT_PEAK;
    for (size_t i = from; at && i < s->nkept; i++)
        if (s->kept[i].alloc_event <= at && (any || s->kept[i].tensor_api))
            items[(*n)++] = s->kept[i];
    return items;
}

/* held_items_last: held_items for the last snapshot built (no other reads kept after it): its
 * items moved to the front of kept, which becomes its array (the process peak's, 16 MB at 10M
 * events: a copy had written as much in fresh pages); kept is then empty */
static live_item *held_items_last(state *s, int x, size_t live, size_t *n)
{
    size_t from = s->kept_from[x] < s->nkept ? s->kept_from[x] : s->nkept, k = 0;
    uint64_t at = kept_at(s->r, x); /* (holds, its loads out of the loop) */
    int any = x == KEPT_PEAK;
    for (size_t i = from; at && i < s->nkept; i++) /* (k <= i: each moves down, or stays) */
        if (s->kept[i].alloc_event <= at && (any || s->kept[i].tensor_api))
            s->kept[k++] = s->kept[i];
    live_item *items = realloc(s->kept, (k + live + 1) * sizeof *items);
    *n = 0;
    if (!items)
        return NULL;
    s->kept = NULL;
    s->nkept = s->capkept = 0;
    *n = k;
    return items;
}

/* replay_snap_finish_peak: the snapshots at the peaks = what was freed after one (kept) + what
 * is still live and was allocated no later than it. */
/* finish_tensors: a snapshot of tensors (not segments, context or kernel code: what a module's
 * forward or the optimizer makes) at its moment: those freed after it (kept) and those live at
 * the end. */
static void finish_tensors(state *s, replay_snapshot *snap, int x)
{
    snap->n = 0;
    if (!snap->event || !s->r->tensor_mode)
        return;
    snap->items = held_items(s, x, s->live.n, &snap->n);
    if (!snap->items)
        return;
    for (uint64_t i = 0; i < s->live.ne; i++) {
        livemap_entry *e = livemap_live_entry(&s->live, i);
        if (e && (e->level == L_TENSOR || e->level == L_INNER) && e->alloc_event <= snap->event)
            snap->items[snap->n++] = replay_item(e);
    }
}

void replay_snap_finish_peak(state *s)
{
    finish_tensors(s, &s->r->at_tensors, KEPT_TENSORS);
    finish_tensors(s, &s->r->at_step, KEPT_STEP);
    replay_result *r = s->r;
    replay_snapshot *snap = &r->at_peak;
    snap->items = held_items_last(s, KEPT_PEAK, s->live.n, &snap->n);
    if (!snap->items || !r->at_peak.event)
        return;
    for (uint64_t i = 0; i < s->live.ne; i++) {
        livemap_entry *e = livemap_live_entry(&s->live, i);
        if (e && e->level != L_NONE && e->alloc_event <= r->at_peak.event)
            snap->items[snap->n++] = replay_item(e);
    }
}

/* cmp_item_addr: order of item indices by address (torch_cache). */
static const live_item *g_sort_items;
static int cmp_item_addr(const void *a, const void *b)
{
    uint64_t x = g_sort_items[*(const size_t *)a].addr, y = g_sort_items[*(const size_t *)b].addr;
    return x < y ? -1 : x > y;
}

/* PIECE_MARK: a segment's first 2 MiB pieces the table of torch_cache names it in (any more are
 * found by a search); PIECE_SEGS: the segments a snapshot holds before the table pays (with
 * fewer, its zeroing and filling cost more than the searches it saves: the 37 H100 traces'
 * reports, 270 segments at most, 3.2M instructions more with it) */
#define PIECE_MARK 64
#define PIECE_SEGS 1024
static inline size_t piece_slot(uint64_t addr, size_t mask)
{
    return (size_t)(((addr >> 21) * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}
/* pieces: how many of segment sg's 2 MiB pieces the table names (its first, up to PIECE_MARK) */
static inline uint64_t pieces_of(const live_item *sg)
{
    uint64_t end = sg->addr + sg->size - 1 < sg->addr ? UINT64_MAX : sg->addr + sg->size - 1;
    uint64_t n = sg->size ? (end >> 21) - (sg->addr >> 21) + 1 : 0;
    return n < PIECE_MARK ? n : PIECE_MARK;
}

/* seg_before: the number of the segments (starts sorted, n of them) starting at or below a: the
 * one the table names for a's 2 MiB piece (its place + 1, checked: a later one may have taken
 * the slot), else a search. (A binary search over the segments' items for each tensor, a cache
 * miss a step, had been 20.7M of a 1M-event default-mode report's 1,196M instructions.) */
static size_t seg_before(const uint64_t *start, size_t n, const uint32_t *piece, size_t mask,
                         uint64_t a)
{
    size_t c = piece ? piece[piece_slot(a, mask)] : 0;
    if (c && start[c - 1] <= a && (c == n || start[c] > a))
        return c;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (start[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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
    uint64_t *start = malloc((nseg + 1) * sizeof *start);
    if (!used || !start) {
        free(used), free(start), free(seg);
        return;
    }
    size_t pieces = 0, mask = 0;
    for (size_t k = 0; k < nseg; k++) {
        const live_item *sg = &snap->items[seg[k]];
        start[k] = sg->addr;
        pieces += pieces_of(sg);
    }
    while (mask + 1 < 4 * pieces && mask < (1u << 24) - 1)
        mask = 2 * mask + 1;
    uint32_t *piece =
        nseg >= PIECE_SEGS && nseg < UINT32_MAX ? calloc(mask + 1, sizeof *piece) : NULL;
    for (size_t k = 0; piece && k < nseg; k++) { /* (the last of a slot's segments names it) */
        const live_item *sg = &snap->items[seg[k]];
        for (uint64_t j = 0, n = pieces_of(sg), p = sg->addr >> 21; j < n; j++)
            piece[piece_slot((p + j) << 21, mask)] = (uint32_t)(k + 1);
    }
    for (size_t i = 0; i < snap->n; i++) {
        const live_item *t = &snap->items[i];
        if (t->space != VT_SPACE_TENSOR)
            continue;
        /* the last segment starting at or below the tensor */
        size_t lo = seg_before(start, nseg, piece, mask, t->addr);
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
    free(piece);
    free(start);
    free(used);
    free(seg);
}

#define SNAP_MEMO_BITS 8
#define SNAP_MEMO (1 << SNAP_MEMO_BITS)
void replay_snap_classify(const state *s, replay_result *r, replay_snapshot *snap)
{
    memset(&snap->by_cat, 0, sizeof snap->by_cat);
    if (r->allocator_mode)
        torch_cache(snap);
    /* classify's answers by replay_item_key (a snapshot's items are of few kinds: 200k items of
     * a 1M-event trace, 184 instructions each to build the input and classify it) */
    struct snap_memo {
        replay_key2 key; /* b 0: empty */
        uint8_t cat, rule;
    } memo[SNAP_MEMO];
    memset(memo, 0, sizeof memo);
    for (size_t i = 0; i < snap->n; i++) {
        live_item *it = &snap->items[i];
        replay_key2 key = replay_item_key(s, it);
        uint64_t h = (key.a ^ key.b * 0x9e3779b97f4a7c15ull) * 0x9e3779b97f4a7c15ull;
        struct snap_memo *m = &memo[h >> (64 - SNAP_MEMO_BITS)];
        int rule;
        if (m->key.a == key.a && m->key.b == key.b) {
            it->category = m->cat;
            rule = m->rule;
        } else {
            classify_input in = replay_input(s, r, it);
            it->category = (uint8_t)classify(&in, &rule);
            *m = (struct snap_memo){key, it->category, (uint8_t)rule};
        }
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
