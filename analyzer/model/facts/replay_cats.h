/* replay_cats.h — replay_cats.c's part of the replay's private state (replay_state.h): each
 * allocation's settle key, its records in the category window and the sweep, inline where the
 * pass calls them at every event. Not an interface: replay_state.h includes it at its end, after
 * all it uses. */
#ifndef VT_ANALYZER_REPLAY_CATS_H
#define VT_ANALYZER_REPLAY_CATS_H

#include "replay_state.h"

/* replay_cats_begin: the sweep (and the classification) as the views and the run need them. */
void replay_cats_begin(state *s);
/* replay_cats_alloc's rare parts: the window lost (the sweep stops), the run's first events past
 * (no tensor among them: segment mode) */
void replay_cats_alloc_lost(state *s);
void replay_cats_alloc_late(state *s);
/* replay_cats_free: e ends at time t (x: how; NULL when e is settled): its category and its
 * freeing record (a tensor an optimizer step made, not settled, waits for the next allocation:
 * s->pend). Its item is made only where a rule must see it (a common end's category is the
 * cached one of its end_key). */
void replay_cats_free(state *s, livemap_entry *e, const replay_end *x, uint64_t t);
/* replay_provisional: a tensor an optimizer step made: its free, when its category was not
 * settled before, is held back until it is known whether it was the run's last (free_rest) */
static inline int replay_provisional(int phase_alloc, int tensor_api)
{
    return (phase_alloc == PHASE_OPTIMIZER) & (tensor_api != 0);
}
/* replay_cats_key: e's settle key, from its features and the run's sizes now: the bits of
 * classify_settle_bits, packed here with fields that lie side by side taken together (the flags
 * loss_site, workspace, attention and input, less EF_CAST's pair; param_sized and vocab_sized;
 * the cast's kind with state_left above it): about 15 instructions fewer than its arguments took */
static inline __attribute__((always_inline)) uint32_t replay_cats_key(const state *s,
                                                                      const livemap_entry *e)
{
    unsigned f = e->flags, ph = e->phase, lv = e->level, tm = s->r->tensor_mode != 0;
    unsigned cast = (f & EF_CAST) == EF_CAST, ws = cast & (f / EF_WORKSPACE & 1); /* _OUT, _GRAD */
    unsigned gr = ws & (f / EF_INPUT & 1), kind = cast + ws + gr + 4 * (s->r->state_left != 0);
    f ^= cast * EF_CAST | ws * EF_WORKSPACE | gr * EF_INPUT;
    unsigned tensor_api = (lv == L_TENSOR) | (lv == L_INNER), unsized = !s->vocab_done;
    unsigned bits = replay_size_bits(s, e->size), half = bits & 1, copy = bits >> 1 & 1;
    unsigned to_copy = (f / EF_TO_COPY & 1) & tensor_api; /* (the EF_ are powers of two) */
    _Static_assert(EF_LOSS == 1 && EF_WORKSPACE == 8 && EF_ATTENTION == 16 && EF_INPUT == 32,
                   "the flags' bits move to the key's 12 and 16-18 by two shifts");
    unsigned layer = (unsigned)reader_api_layer(e->api) & 3u; /* (an entry's is its API's) */
    return (e->space & 15u) | layer << 4 | tensor_api << 6 | tm << 7 | (ph & 15) << 8 |
           (f & EF_LOSS) << 12 | (f & (EF_WORKSPACE | EF_ATTENTION | EF_INPUT)) << 13 |
           (to_copy & copy) << 13 | (bits & 1) << 14 | (bits & 4) << 13 | (e->bwd != 0) << 19 |
           unsized * ((!half) << 20 | (to_copy & !copy) << 21 | (!half & !copy) << 22) |
           (unsigned)!replay_provisional((int)ph, (int)tensor_api) << 23 | kind << 24;
}
/* the memos' keys (replay_cats_key_memo, replay_item_key) take fields out of words by byte masks */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the memo keys' masks are little-endian");
/* replay_cats_key_memo: replay_cats_key(s, e) from a memo by all it is made of: e's space,
 * api (its layer), phase, flags and level (read in one load), whether a backward came before it,
 * tensor mode, whether the sizes are final, what its size says (about 40 instructions an allocation
 * fewer than the key's own bit work) */
uint32_t replay_cats_key_miss(const state *s, const livemap_entry *e, struct key_memo *k,
                              uint64_t tag);
static inline __attribute__((always_inline)) uint32_t replay_cats_key_memo(state *s,
                                                                           const livemap_entry *e)
{
    uint64_t w; /* space, api, device, blk, phase, flags, level, code */
    memcpy(&w, &e->space, sizeof w);
    _Static_assert(offsetof(livemap_entry, code) == offsetof(livemap_entry, space) + 7 &&
                       offsetof(livemap_entry, level) == offsetof(livemap_entry, space) + 6 &&
                       offsetof(livemap_entry, flags) == offsetof(livemap_entry, space) + 5 &&
                       offsetof(livemap_entry, phase) == offsetof(livemap_entry, space) + 4 &&
                       offsetof(livemap_entry, api) == offsetof(livemap_entry, space) + 1,
                   "the key's fields of an entry lie in one word");
    const uint64_t fields = 0x00ff3bff0000ffffull; /* the flags: EF_LOSS, _TO_COPY, _WORKSPACE,
                                                    * _ATTENTION, _INPUT; the api: its layer */
    uint64_t tag = (w & fields) | (uint64_t)(e->bwd != 0) << 56 | s->key_run |
                   (uint64_t)replay_size_bits(s, e->size) << 59;
    struct key_memo *k = &s->kmemo[(tag * 0x9e3779b97f4a7c15ull) >> 58];
    if (k->tag == tag)
        return k->key;
    return replay_cats_key_miss(s, e, k, tag);
}
/* a run that showed no tensor in its first events is taken for segment mode from then on: each
 * of the 127 committed real traces had its first tensor at its 3rd event; the records waiting
 * for it (24 bytes each) had made 1M events a 24 MiB window, half a segment-mode report's peak
 * memory, and its fresh pages 9 % of the report's CPU (vtgen, 10M events: 62 -> 33 MiB) */
#define REPLAY_BEFORE_TENSORS ((uint64_t)1 << 16)
/* replay_cats_alloc: e was just allocated (its fields set): its record, its category if settled
 * (inline: the pass calls it for every allocation; its call saved and restored 8 registers; tl:
 * 0 when the run draws no timeline, catpeaks_add_tl's) */
static inline __attribute__((always_inline)) void replay_cats_alloc(state *s, livemap_entry *e,
                                                                    const int tl)
{
    if (!s->cats_on)
        return;
    int later = e->level == L_SEGMENT && !(e->flags & EF_TORCH_SEG); /* KIND_RECORDS after */
    uint64_t n = catpeaks_add_tl(&s->peaks, s->event, e->time_ns, e->size,
                                 CATPEAKS_F_ALLOC | (later ? CATPEAKS_F_LATER : 0) | s->joining,
                                 livemap_number(&s->live, e), 0, tl);
    if (__builtin_expect(!n, 0)) {
        replay_cats_alloc_lost(s);
        return;
    }
    e->rec = (uint32_t)n;
    e->flags |= EF_HAS_REC; /* its category: when the sweep comes to it (replay_cats_sweep) */
    e->ckey = replay_cats_key_memo(s, e); /* (here, where its size memo's miss overlaps the
                                           * event's others) */
    if (!s->r->tensor_mode && !s->tm_assumed && s->event >= REPLAY_BEFORE_TENSORS)
        replay_cats_alloc_late(s);
}
/* replay_cats_free_swept: the free record of e (settled) to an empty window swept at once when
 * it is a common one (catpeaks_add_swept): 1, else 0 (not added) */
int replay_cats_free_swept(state *s, const livemap_entry *e, uint64_t t);
void replay_cats_state_left(state *s); /* (replay_cats.c: r->state_left set, the keys redone) */
/* replay_cats_free_settled: replay_cats_free(s, e, NULL, t) with its common case inline: a
 * settled allocation, its free record (room for it: no growing; tl as replay_cats_alloc's) */
static inline __attribute__((always_inline)) void
replay_cats_free_settled(state *s, livemap_entry *e, uint64_t t, const int tl)
{
    catpeaks *cp = &s->peaks;
    if (s->cats_on && e->code && !cp->lost && cp->tail - cp->head < cp->cap &&
        (e->code & 0x8f) != CATPEAKS_CODE(CATPEAKS_PLAIN, CAT_OPTIMIZER)) { /* (state: rare) */
        if (cp->head == cp->tail && replay_cats_free_swept(s, e, t))
            return;
        catpeaks_add_tl(cp, s->event, t, e->size, s->joining, livemap_number(&s->live, e), e->code,
                        tl);
        return;
    }
    replay_cats_free(s, e, NULL, t);
}
/* replay_cats_flush: classifies the lifetimes held back (s->pend): after an allocation (they
 * were not the run's last frees) or at the end of the pass (they were). */
void replay_cats_flush(state *s);
/* replay_cats_marked: e is PyTorch's segment (its tracker named it): flagged so, its category its
 * cache; replay_cats_cut: the same of a segment a cut hid the name of */
void replay_cats_marked(state *s, livemap_entry *e);
void replay_cats_cut(state *s);
/* replay_cats_now: what has happened since an allocation (its counters iter, bwd and its event),
 * as classify_settled takes it (CLS_*) */
static inline unsigned replay_cats_now(const state *s, uint32_t iter, uint32_t bwd,
                                       uint64_t alloc_event)
{
    return (s->grad_free_event ? CLS_GRAD_FREED : 0) |
           (s->r->tensor_mode || s->tm_assumed ? CLS_TM_SET : 0) |
           (s->iter > iter ? CLS_ITER_PASSED : 0) | (s->bwd > bwd ? CLS_BWD_PASSED : 0) |
           (s->grad_free_event > alloc_event ? CLS_OUTLIVED : 0);
}
/* replay_cats_changed: what a waiting allocation's category depends on changed (a backward pass
 * or an optimizer step began, a gradient was freed): the window's first record waiting is looked
 * at again, unless it was looked at and the run as it would see it is what that look saw (once a
 * gradient was freed after it, the next ones' frees change nothing for it: t1t.vtr's 107k sweeps
 * to look again, each finding it still waiting); one not looked at yet is (FIRST_LOOK) */
static inline void replay_cats_changed(state *s)
{
    if (!s->cats_dirty && s->cats_tried == s->peaks.head &&
        replay_cats_now(s, s->tried.iter, s->tried.bwd, s->tried.alloc_event) == s->tried.now)
        return;
    s->cats_dirty = 1;
    s->cats_wake = 0;
}
/* replay_cats_keys_changed: what the rules see of every allocation changed (the parameters'
 * sizes, the vocabulary, tensor mode): the waiting ones' settle keys are redone (those of the
 * allocations whose records came before now), the first waiting looked at again. */
static inline uint64_t replay_key_run(const state *s) /* (tensor mode, the sizes final) */
{
    return (uint64_t)(s->r->tensor_mode != 0) << 57 | (uint64_t)!s->vocab_done << 58 | 1ull << 63;
}
static inline void replay_cats_keys_changed(state *s)
{
    s->key_run = replay_key_run(s); /* (both change only before it is called) */
    s->cats_dirty = 1;
    s->cats_wake = 0;
    s->keys_from = s->peaks.tail;
}
/* replay_cats_tensors: the run showed its first tensor (tensor_mode) / allocator-tracker tensor. */
void replay_cats_tensors(state *s, int inner);
/* replay_cats_sweep: sweeps what is settled (after each event; one comparison when nothing is:
 * the sweep's next look is due when the window's first record waiting was settled or what its
 * category depends on changed (cats_wake 0), it or an empty window's last waited FIRST_LOOK
 * records, a segment waited KIND_RECORDS records). */
void replay_cats_sweep_more(state *s);
static inline void replay_cats_sweep(state *s)
{
    if (s->peaks.tail >= s->cats_wake)
        replay_cats_sweep_more(s);
}
/* replay_cats_end: the allocations alive at the end are classified and the sweep finished:
 * r->has_cat_peaks, cat_peak, cat_peak_ns, cat_peaks_lost. */
void replay_cats_end(state *s);
void replay_cats_free_all(state *s);
#endif
