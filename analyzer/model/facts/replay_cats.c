/* replay_cats.c — each noted allocation's category for category_peaks, the timeline and flame's
 * totals (what the rules of classify.c see of an allocation: replay_input.c), in the replay's
 * one pass: classified once, as soon as every end it can still have gives
 * the same category (classify_settled), its records in the sweep's window (catpeaks.c) settled
 * then. Only the window's first record waiting is looked at: the sweep cannot pass it, and a
 * settled category stays what it is, so the records behind it are looked at when the sweep
 * comes to them (once each, not at every backward pass, step and gradient freed: 3 looks an
 * allocation before); at its free at the latest. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "replay_state.h"

/* an unmarked segment is not PyTorch's once this many records came after it (the tracker names
 * its segment right after the allocation that made it) */
#define KIND_RECORDS 256 /* replay_cats_sweep looks further only past as many */
/* the first look at a window's first record waiting comes when it has waited this many records,
 * or before at a change (replay_cats_changed), its settle, a record settled behind it: not after
 * the event that made it. A category settled by a look is the one its end gives
 * (classify_settled), whichever look it is, so when it is looked at changes no sum and no peak;
 * and an allocation certain at its making is as certain then. (Each look right after the event
 * had been a call of the sweep of its own: on vtgen's tensor-mode events, one for every record
 * that came to an empty window, a forward's allocation that the next backward pass settles, 9 %
 * of the events: 666.2 -> 638.4 instructions an event, default mode 869.2 -> 834.9.) */
#define FIRST_LOOK 64
#define NO_TENSORS_WHY "the run's first tensor came after its first 65,536 events"

/* ---- each allocation's category ----------------------------------------------------------------
 */

/* kind_of_flags: what an allocation of level and flags (EF_*) counts as (CATPEAKS_PLAIN ...) */
static int kind_of_flags(uint8_t level, uint8_t flags)
{
    return (flags & EF_TORCH_SEG) && !(flags & EF_KIND_SET) ? CATPEAKS_SEGMENT
           : level == L_INNER                               ? CATPEAKS_INNER
                                                            : CATPEAKS_PLAIN;
}

static int kind_of(const livemap_entry *e)
{
    return kind_of_flags(e->level, e->flags);
}

/* total: flame's bytes by (stack, category) of one lifetime (not a segment's: the cache). */
/* total: a lifetime of stack, made when iter steps had begun, counted in cat: flame's totals, and
 * a gradient or optimizer state in its step's set (gradsets.h) */
static void total(state *s, uint32_t stack, int kind, category cat, uint64_t size, uint32_t iter)
{
    if (kind != CATPEAKS_SEGMENT && s->r->tl) /* (no call when no view asked for them) */
        timeline_total_add(s->r->tl, stack, cat, size);
    if (kind != CATPEAKS_SEGMENT && (cat == CAT_GRADIENTS || cat == CAT_OPTIMIZER))
        gradsets_add(&s->gsets, iter, size, cat == CAT_OPTIMIZER);
}

static void stop(state *s)
{
    s->cats_on = 0;
    s->classify_on = timeline_totals;
    s->szm_ahead = NULL;
}

/* rec_of: the number of e's allocating record in the window, 0 when it has none (the window
 * holds fewer than 2^32 records: its low bits name it). */
static uint64_t rec_of(const state *s, const livemap_entry *e)
{
    if (!(e->flags & EF_HAS_REC))
        return 0;
    return s->peaks.tail - (uint32_t)((uint32_t)s->peaks.tail - e->rec);
}

/* settle_entry: e's category is cat for every end it can have (kind: kind_of(e)): its code, and
 * flame's totals. (A provisional one's count had waited for its free or the run's end, to be
 * taken back if it stayed alive: since bbdc8b2 counted every such tensor alive at the end too,
 * the wait changed no total.) */
static inline __attribute__((always_inline)) void settle_entry(state *s, livemap_entry *e, int kind,
                                                               category cat)
{
    e->code = CATPEAKS_CODE(kind, kind == CATPEAKS_SEGMENT ? CAT_CACHE : cat);
    total(s, e->stack_id, kind, cat, e->size, e->iter); /* (freed later, or at the end) */
}

/* settle: e's category cat, its record too (by its number) */
static void settle(state *s, livemap_entry *e, category cat)
{
    settle_entry(s, e, kind_of(e), cat);
    if (e->flags & EF_HAS_REC)
        catpeaks_settle(&s->peaks, rec_of(s, e), e->code);
    s->cats_wake = 0; /* (the window's first record waiting, it may be) */
}

/* the run now, as the sweep sees it (what classify_settled's now is made of, the same for every
 * allocation it looks at: taken once a sweep), and the last key asked with its answer */
struct sweep_now {
    uint64_t grad_free_event, keys_from;
    uint32_t iter, bwd;
    unsigned now;  /* CLS_GRAD_FREED, CLS_TM_SET */
    uint32_t full; /* the last settle key << 5 | now asked (UINT32_MAX: none), its answer */
    category cat;
};

/* try_settle: e (its record r, number m, waiting) settled, when every end it can still have
 * gives the same category (settle's work, the record in hand). */
static inline void try_settle(state *s, livemap_entry *e, catpeaks_rec *r, uint64_t m,
                              struct sweep_now *w)
{
    if (e->code)
        return;
    int kind = kind_of(e);
    category c = CAT_CACHE;
    if (kind != CATPEAKS_SEGMENT) {
        if (e->level == L_SEGMENT && !(e->flags & EF_KIND_SET))
            return; /* PyTorch's tracker may still name it its segment */
        unsigned now = w->now | (w->iter > e->iter ? CLS_ITER_PASSED : 0) |
                       (w->bwd > e->bwd ? CLS_BWD_PASSED : 0) |
                       (w->grad_free_event > e->alloc_event ? CLS_OUTLIVED : 0);
        if (m < w->keys_from) /* allocated before what its key says last changed */
            e->ckey = replay_cats_key(s, e);
        uint32_t full = e->ckey << 5 | now; /* (the key has 26 bits) */
        if (full != w->full) /* (the allocations the sweep settles together are much alike) */
            w->full = full, w->cat = classify_settled(e->ckey, now, &s->cmemo);
        c = w->cat;
        if (c == CAT_COUNT)
            return;
    }
    settle_entry(s, e, kind, c);
    r->code = e->code;
}

void replay_cats_begin(state *s)
{
    s->r->tl = timeline_segments || timeline_totals ? timeline_new() : NULL;
    if (s->r->tl) {
        s->r->tl->peak_event = &s->r->at_peak.event;
        s->r->tl->tensors_event = &s->r->at_tensors.event;
        s->r->tl->oom_event = &s->r->oom_seen_event;
        s->r->tl->phase_events = s->r->phase_peak_event;
    }
    catpeaks_init(&s->peaks, timeline_segments ? s->r->tl : NULL);
    s->key_run = replay_key_run(s);
    s->cats_on = !s->peaks.lost;
    s->classify_on = s->cats_on || timeline_totals;
    s->szm = s->szm_mem; /* (in the state, zeroed with it: no allocation to fail) */
    s->szm_ahead = s->cats_on ? s->szm : NULL;
    s->sizes_gen = 1;
    s->tried.now = UINT_MAX;
}

/* no_tensors: the run's first events showed no tensor: a segment-mode run (its category
 * peaks are not reported) unless a view draws its timeline, which then takes it for one. */
static void no_tensors(state *s)
{
    if (!timeline_segments) {
        catpeaks_lose(&s->peaks, NO_TENSORS_WHY);
        stop(s);
        return;
    }
    s->tm_assumed = 1;
    if (!s->peaks.alloc_mode_known)
        catpeaks_set_alloc_mode(&s->peaks, 0);
    replay_cats_keys_changed(s);
}

void replay_cats_tensors(state *s, int inner)
{
    if (!s->cats_on)
        return;
    if (s->tm_assumed) { /* taken for segment mode: the segments' categories were wrong */
        catpeaks_lose(&s->peaks, NO_TENSORS_WHY);
        stop(s);
        return;
    }
    if (inner)
        catpeaks_set_alloc_mode(&s->peaks, 1);
    replay_cats_keys_changed(s);
}

void replay_cats_alloc_lost(state *s)
{
    stop(s);
}

void replay_cats_alloc_late(state *s)
{
    no_tensors(s);
}

void replay_cats_marked(state *s, livemap_entry *e)
{
    e->flags |= EF_TORCH_SEG;
    if (s->cats_on && !e->code && !(e->flags & EF_KIND_SET))
        settle(s, e, CAT_CACHE);
}

void replay_cats_cut(state *s)
{
    /* a run killed between a cudaMalloc and the tracker's SEGMENT_ALLOC, the next event of its
     * thread (each of the 26,850 segments of the committed allocator-mode traces is named 1 or
     * 2 events after), had that segment taken for none of PyTorch's and counted as a tensor of
     * its phase: of the committed traces cut at 21 points from 5 to 99 %, 179 of 2,982 cuts
     * (flame --at all one segment more than the run made, up to 4.6 GiB; the peak's breakdown,
     * where it held it, its bytes in a tensor's category, activations in a forward, not the
     * allocator cache). The cut came 0 events after it, or another thread's 23 and 127
     * (llama_gqa300m_ckpt_b8 at 60 %, llama_gqa300m_b20_t256 at 65 %); past KIND_RECORDS it is
     * none of PyTorch's, as the sweep says. A trace the capture stopped early (a full disk, a
     * failed write: its trailer says so, the file whole) is cut so too: 5 of 62 runs of sim_hf.py
     * under `ulimit -f` 30 to 396 KiB ended on a cudaMalloc not named (2 to 32 MiB more) */
    if (!replay_stopped_early(s->r) || !s->r->allocator_mode)
        return;
    for (uint64_t i = 0; i < s->live.ne; i++) {
        livemap_entry *e = livemap_live_entry(&s->live, i);
        if (e && e->level == L_SEGMENT && !(e->flags & (EF_TORCH_SEG | EF_KIND_SET)) &&
            s->event - e->alloc_event < KIND_RECORDS)
            replay_cats_marked(s, e); /* (as its SEGMENT_ALLOC would have: cache, no tensor) */
    }
}

/* counted: a lifetime that ended (its stack, its bytes) counted in category cat: its code,
 * flame's totals, its records settled (inline: every free not settled before comes here) */
static inline __attribute__((always_inline)) void
counted(state *s, const live_item *it, int kind, category cat, uint64_t arec, uint64_t frec)
{
    uint64_t size = it->size;
    total(s, it->stack_id, kind, cat, size, it->iter_alloc);
    uint8_t code = CATPEAKS_CODE(kind, cat);
    if (arec == s->peaks.head || frec == s->peaks.head) /* the window's first waiting */
        s->cats_wake = 0;
    if (arec)
        catpeaks_settle(&s->peaks, arec, code);
    if (frec)
        catpeaks_settle(&s->peaks, frec, code);
}

/* replay_cats_state_left: optimizer state made in a step was freed before the next backward
 * began (free_rest): the program keeps its state off the device between steps, and what it brings
 * back for a step is that state (classify.c's state_back) from now on; what the rules see of
 * every allocation changed, the keys' memo too (its tags do not tell the bit: a test fewer at each
 * allocation). (A state kept on the device, Adam's beside an Opacus step's noise copied from the
 * host, is never freed before a backward: its noise is no state brought back.) Seen of state
 * settled before its free (a step's state settles once a gradient is freed after it); one freed
 * unsettled (the sweep's window lost) is not. */
void replay_cats_state_left(state *s)
{
    if (s->r->state_left)
        return;
    s->r->state_left = 1;
    memset(s->kmemo, 0, sizeof s->kmemo);
    replay_cats_keys_changed(s);
}

/* classified: a lifetime that ended (it) classified at its end and counted. */
static void classified(state *s, const live_item *it, uint8_t level, uint8_t flags, uint64_t arec,
                       uint64_t frec)
{
    int kind = kind_of_flags(level, flags);
    category cat = CAT_CACHE;
    if (kind != CATPEAKS_SEGMENT) {
        classify_input in = replay_input(s, s->r, it);
        cat = classify_cached(&in, &s->ccache);
    }
    counted(s, it, kind, cat, arec, frec);
}

/* end_category_miss: end_category's answer not in the cache (c: the entry for key, NULL: none) */
static __attribute__((noinline)) category end_category_miss(state *s, const livemap_entry *e,
                                                            const replay_end *x,
                                                            struct classify_cache_entry *c,
                                                            uint64_t key)
{
    live_item it = replay_item_ended(e, x);
    classify_input in = replay_input(s, s->r, &it);
    category cat = classify_cached(&in, &s->ccache);
    if (c)
        c->key = key, c->cat = (uint8_t)cat;
    return cat;
}

/* end_category: the category of e (not a segment's) ending now as x says, by its end_key when one
 * was seen (no item to make, no input to build, no classify); arec as end_key's */
static inline __attribute__((always_inline)) category
end_category(state *s, const livemap_entry *e, const replay_end *x, uint64_t arec)
{
    uint64_t key = x->phase > 15 ? 0 : replay_end_key(s, e, x, arec);
    struct classify_cache_entry *c = key ? classify_cache_at(&s->ecache, key) : NULL;
    if (__builtin_expect(c && c->key == key, 1))
        return (category)c->cat;
    return end_category_miss(s, e, x, c, key);
}

static __attribute__((noinline)) category end_category_call(state *s, const livemap_entry *e,
                                                            const replay_end *x, uint64_t arec)
{
    return end_category(s, e, x, arec);
}

/* ended: e, not settled, ends now as x says (at time t) and is not held back: its category, its
 * free's record added with it (no settle of it after), its allocation's settled */
static inline __attribute__((always_inline)) void ended(state *s, livemap_entry *e,
                                                        const replay_end *x, uint64_t t)
{
    int kind = kind_of(e);
    uint64_t arec = s->cats_on ? rec_of(s, e) : 0, frec = 0;
    category cat = kind == CATPEAKS_SEGMENT ? CAT_CACHE : end_category(s, e, x, arec);
    uint8_t code = CATPEAKS_CODE(kind, cat);
    if (s->cats_on) {
        frec = catpeaks_add(&s->peaks, s->event, t, e->size, s->joining,
                            livemap_number(&s->live, e), code);
        if (!frec) { /* the window lost: as without one (its key made anew) */
            stop(s);
            arec = 0;
            cat = kind == CATPEAKS_SEGMENT ? CAT_CACHE : end_category_call(s, e, x, 0);
            code = CATPEAKS_CODE(kind, cat);
        }
    }
    total(s, e->stack_id, kind, cat, e->size, e->iter);
    if (arec == s->peaks.head || frec == s->peaks.head) /* the window's first waiting */
        s->cats_wake = 0;
    if (arec)
        catpeaks_settle(&s->peaks, arec, code);
}

/* free_rest: replay_cats_free of one settled before, or held back (s->pend) */
static __attribute__((noinline)) void free_rest(state *s, livemap_entry *e, const replay_end *x,
                                                uint64_t t)
{
    uint64_t frec = 0;
    /* (settled optimizer state comes here: replay_cats_free_settled) */
    if ((e->code & 0x8f) == CATPEAKS_CODE(CATPEAKS_PLAIN, CAT_OPTIMIZER) &&
        e->phase == PHASE_OPTIMIZER && e->bwd == s->bwd)
        replay_cats_state_left(s);
    if (s->cats_on) {
        frec = catpeaks_add(&s->peaks, s->event, t, e->size, s->joining,
                            livemap_number(&s->live, e), e->code);
        if (!frec)
            stop(s);
    }
    if (e->code) /* (settled before its free: counted then) */
        return;
    uint64_t arec = s->cats_on ? rec_of(s, e) : 0;
    /* held back until it is known whether it was freed before the run's end (an optimizer
     * step's tensor kept to the end is its state; a weight freed at the program's exit, in a
     * run with no backward, a parameter: classify.c's freed_at_end) */
    if (s->npend == s->cappend) {
        size_t n = s->cappend ? s->cappend * 2 : 256;
        struct pending_free *p = realloc(s->pend, n * sizeof *p);
        if (p)
            s->pend = p, s->cappend = n;
    }
    if (s->npend < s->cappend) {
        s->pend[s->npend++] =
            (struct pending_free){replay_item_ended(e, x), arec, frec, e->level, e->flags};
        if (arec) /* its entry is gone: settled by replay_cats_flush */
            catpeaks_mark(&s->peaks, arec, CATPEAKS_F_ENDED);
        return;
    }
    live_item it = replay_item_ended(e, x); /* (out of memory: classified now) */
    classified(s, &it, e->level, e->flags, arec, frec);
}

void replay_cats_free(state *s, livemap_entry *e, const replay_end *x, uint64_t t)
{
    if (!s->classify_on)
        return;
    int tensor_api = e->level == L_TENSOR || e->level == L_INNER;
    if (!e->code && !replay_provisional(e->phase, tensor_api) &&
        !(e->phase == PHASE_INIT && tensor_api && !s->grad_free_event))
        ended(s, e, x, t); /* (the common free of one not settled) */
    else
        free_rest(s, e, x, t);
}

int replay_cats_free_swept(state *s, const livemap_entry *e, uint64_t t)
{
    /* (the empty window's wake, FIRST_LOOK records on, counts it too: a sweep of nothing once
     * in as many) */
    return catpeaks_add_swept(&s->peaks, t, e->size, s->joining, e->code) != 0;
}

void replay_cats_flush(state *s)
{
    for (size_t i = 0; i < s->npend; i++) {
        struct pending_free *p = &s->pend[i];
        classified(s, &p->it, p->level, p->flags, s->cats_on ? p->alloc_rec : 0,
                   s->cats_on ? p->free_rec : 0);
    }
    s->npend = 0;
}

/* wake: when the sweep looks next (s->cats_wake), as it leaves the window: after the next event
 * while its first record waiting is settled (or what it depends on changed); FIRST_LOOK records
 * after it while it was not looked at, or after an empty window's last; when KIND_RECORDS came
 * after a segment nobody named yet (once they came, the look at it named it its kind: looking
 * again changes nothing); else when something settles it or changes (replay_cats_changed) */
static void wake(state *s)
{
    const catpeaks *cp = &s->peaks;
    if (!s->cats_on)
        s->cats_wake = UINT64_MAX;
    else if (cp->head >= cp->tail)
        s->cats_wake = cp->tail + FIRST_LOOK;
    else if (catpeaks_code(cp, cp->head) || s->cats_dirty)
        s->cats_wake = 0;
    else if (cp->head != s->cats_tried)
        s->cats_wake = cp->head + FIRST_LOOK;
    else if ((catpeaks_flags(cp, cp->head) & CATPEAKS_F_LATER) &&
             cp->tail - cp->head < KIND_RECORDS) /* (past them the look named it: no more to do) */
        s->cats_wake = cp->head + KIND_RECORDS;
    else
        s->cats_wake = UINT64_MAX;
}

void replay_cats_sweep_more(state *s)
{
    catpeaks *cp = &s->peaks;
    if (!s->cats_on || cp->head >= cp->tail) { /* (nothing to look at: what changed waits) */
        wake(s);
        return;
    }
    int changed = s->cats_dirty;
    s->cats_dirty = 0;
    uint64_t head = catpeaks_advance(cp), m = head, swept = head;
    if (cp->lost) {
        stop(s);
        wake(s);
        return;
    }
    /* (the window stays where it is until the sweep's end: in locals, not loaded again after
     * each byte a settle stores) */
    catpeaks_rec *recs = cp->rec;
    const uint64_t tail = cp->tail, mask = cp->cap - 1;
    const int fast = catpeaks_fast(cp);
    struct sweep_now w = {.grad_free_event = s->grad_free_event,
                          .keys_from = s->keys_from,
                          .iter = s->iter,
                          .bwd = s->bwd,
                          .now = (s->grad_free_event ? CLS_GRAD_FREED : 0) |
                                 (s->r->tensor_mode || s->tm_assumed ? CLS_TM_SET : 0),
                          .full = UINT32_MAX};
    /* from the first record waiting on: the allocations are looked at in order, each as the
     * sweep comes to it (the first again only after a change), until one stays unsettled; each
     * settled one swept as it is passed while every one before it was (catpeaks_take), the
     * others after the look, in one go */
    for (; m < tail; m++) {
        catpeaks_rec *r = &recs[m & mask];
        if (!r->code) {
            int fresh = m != s->cats_tried; /* not looked at since it came first */
            s->cats_tried = m;
            /* a free, or an allocation freed and held back (s->pend): settled with its free */
            if ((r->flags & (CATPEAKS_F_ALLOC | CATPEAKS_F_ENDED)) != CATPEAKS_F_ALLOC)
                break;
            livemap_entry *e = livemap_at(&s->live, r->ref);
            if (m + 1 < tail) /* the next one's entry, while this one is looked at */
                __builtin_prefetch(livemap_at(&s->live, recs[(m + 1) & mask].ref));
            /* a segment nobody named this many records later is not PyTorch's */
            if (e->level == L_SEGMENT && !(e->flags & (EF_TORCH_SEG | EF_KIND_SET)) &&
                tail - m >= KIND_RECORDS)
                e->flags |= EF_KIND_SET, fresh = 1;
            if (!fresh && !changed)
                break;
            try_settle(s, e, r, m, &w);
            if (!e->code) { /* (what it was told by: replay_cats_changed) */
                s->tried.now = replay_cats_now(s, e->iter, e->bwd, e->alloc_event);
                s->tried.iter = e->iter, s->tried.bwd = e->bwd;
                s->tried.alloc_event = e->alloc_event;
                break;
            }
        } else if (m == head) { /* settled, applied once the allocator mode is known */
            break;
        }
        swept += swept == m && catpeaks_take(cp, r, fast);
    }
    cp->head = swept;
    if (m != head)
        catpeaks_advance(cp);
    if (cp->lost && s->cats_on)
        stop(s);
    wake(s);
}

void replay_cats_end(state *s)
{
    replay_result *r = s->r;
    if (s->classify_on) {
        /* what is alive at the end, classified as such, in the live set's order (flame's totals),
         * as the snapshots classify it: an optimizer step's tensor too (a run killed after its
         * steps, its exit's frees never made: its 948.9 MiB of AdamW state, alive at its peak,
         * had counted nowhere in its largest over the run, and in Perfetto's cache track; one
         * killed inside a step, the step's tensors the peak's breakdown counts as optimizer) */
        for (uint64_t i = 0; i < s->live.ne; i++) {
            livemap_entry *e = livemap_live_entry(&s->live, i);
            if (!e)
                continue;
            if (e->code) /* settled: counted then */
                continue;
            live_item it = replay_item(e);
            classified(s, &it, e->level, e->flags, s->cats_on ? rec_of(s, e) : 0, 0);
        }
    }
    r->cat_window = s->peaks.cap;
    if (s->cats_on && !r->tensor_mode && !s->peaks.tl) {
        /* not in tensor mode: no category peaks reported, no timeline to draw them in (what is
         * still waiting, a segment-mode run's every record, not swept: the window dropped) */
        catpeaks_lose(&s->peaks, NO_TENSORS_WHY);
        r->has_cat_peaks = 0;
    } else if (s->cats_on) {
        if (!s->peaks.alloc_mode_known)
            catpeaks_set_alloc_mode(&s->peaks, r->allocator_mode);
        r->has_cat_peaks = catpeaks_end(&s->peaks, r->cat_peak, r->cat_peak_ns) && r->tensor_mode;
    } else if (r->tl) {
        r->tl->has_cats = 0;
    }
    if (!r->has_cat_peaks)
        memset(r->cat_peak, 0, sizeof r->cat_peak),
            memset(r->cat_peak_ns, 0, sizeof r->cat_peak_ns);
    r->cat_peaks_lost = r->tensor_mode ? s->peaks.lost : NULL;
    /* (of the steps that read them: every one begun, less one the OOM came in) */
    uint32_t read = s->iter - (r->has_oom && s->iter && r->oom_iter == s->iter);
    r->grad_union =
        r->has_cat_peaks ? gradsets_union(&s->gsets, read, &r->grad_sets, &r->grad_union_lower) : 0;
}

void replay_cats_free_all(state *s)
{
    catpeaks_free(&s->peaks);
    gradsets_free(&s->gsets);
    classify_memo_free(&s->cmemo);
    classify_cache_free(&s->ccache);
    classify_cache_free(&s->ecache);
}
