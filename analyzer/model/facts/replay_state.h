/* replay_state.h — the replay's private state, shared by the files of the one replay: replay.c
 * (the pass), replay_phase.c (phases, iterations, parameter sizes), replay_snap.c (peaks,
 * snapshots, lifetimes, their classification, the join after a gap) and replay_cats.c (each
 * allocation's category for category_peaks and the timeline). Not an interface. */
#ifndef VT_ANALYZER_REPLAY_STATE_H
#define VT_ANALYZER_REPLAY_STATE_H

#include <stddef.h>
#include <string.h>

#include "blocks.h"
#include "catpeaks.h"
#include "classify.h"
#include "gradsets.h"
#include "livemap.h"
#include "replay.h"
#include "replay_oom.h"

/* L_INNER: a tensor of PyTorch's caching allocator (its tracker, layer 3), inside a segment
 * that L_SEGMENT already counts: allocated, never reserved a second time. */
enum level { L_NONE, L_TENSOR, L_SEGMENT, L_OTHER, L_INNER };
enum { REPLAY_NEWS_BWD = 1, REPLAY_NEWS_ITER = 2, REPLAY_NEWS_VOCAB = 4 }; /* state.news */
/* the snapshots whose allocations freed after their moment the replay keeps (state.kept) */
enum { KEPT_PEAK, KEPT_TENSORS, KEPT_STEP };

/* flags of a live entry (livemap_entry.flags), from its stack or the allocator tracker */
enum {
    EF_LOSS = 1,
    EF_TO_COPY = 2,
    EF_TORCH_SEG = 4,
    EF_WORKSPACE = 8,
    EF_ATTENTION = 16,
    EF_INPUT = 32,
    EF_KIND_SET = 64, /* a segment PyTorch's tracker did not name: not its segment */
    EF_HAS_REC = 128, /* it has an allocating record in the category window (livemap_entry.rec) */
    EF_CAST = EF_LOSS | EF_ATTENTION,     /* the program's own cast (stack_facts.cast): a pair, */
    EF_CAST_OUT = EF_CAST | EF_WORKSPACE, /* the byte full; its line first run after a forward, */
    EF_CAST_GRAD = EF_CAST_OUT | EF_INPUT /* after a backward, before a step (replay_facts_slow) */
};

/* what the pass needs of an API id at once (state.apinfo): its level, space and layer, and
 * AP_SPECIAL when an event of it does more than enter or leave the live set (PyTorch's
 * tracker, VMM handles, contexts) */
#define AP_LEVEL(i) ((i)&7)
#define AP_SPACE(i) ((i) >> 3 & 15)
#define AP_LAYER(i) ((i) >> 7 & 3)
#define AP_SPECIAL 0x200u
#define AP_TORCH 0x400u /* a tensor of PyTorch's tracker (torchAlloc, torchFree; special too) */

/* the replay state: one per replay_file */
typedef struct state {
    replay_result *r;
    livemap live;
    struct stack_fx {
        stack_facts f;     /* phase 255 = not computed */
        uint8_t ef, iter0; /* its EF_*; the steps begun when first met (255: more): oomstep.c */
    } * facts;             /* by stack id */
    uint32_t nfacts;
    uint64_t level[5];
    uint8_t thread_phase[1024];
    int seen_forward;
    int no_python;            /* the CONFIG record: no Python frames (--stacks native / none) */
    int pyless_fwd;           /* no_python: the main thread freed a tensor made in init shortly
                               * before (the first forward's first temporary): it began */
    uint8_t last_alloc_phase; /* the phase of the last allocation on any thread */
    uint64_t bwd_end_tensors; /* tensor bytes at the first allocation after a backward (its end) */
    int in_opt;               /* inside an optimizer stretch (one step) */
    int frozen_oom;     /* the pending OOM came in a first forward that kept nothing for a backward:
                         * every weight's 16-bit copy but the failing op's freed after use */
    uint32_t iter, bwd; /* optimizer steps / backward passes begun */
    uint32_t bwd_at_step;        /* bwd when the last optimizer step began */
    uint32_t accum, accum_steps; /* backward passes before each step, over how many steps */
    int accum_mixed;             /* 1: the steps did not all follow the same number of them */
    int step_cut; /* a bounded trace's gap came since the last step: the next one's backward
                   * passes are not all in the trace (not counted for A) */
    uint64_t step_event, step_events_max; /* the last step's first event; the most events from
                                           * one step to the next (none the gap cut) */
    int gap_stepped;      /* the gap being joined dropped more events than any step had: a step's
                           * zero_grad came in it (replay_snap_join_free) */
    uint64_t bwd_event;   /* the event that began backward pass bwd */
    struct bwd_temps {    /* a first backward since a step: the parameter-sized tensors it freed */
        struct bwd_temp { /* itself, by offset from bwd_event and size (replay_passes.c): */
            uint64_t off, size; /* bt[0] the pass going on, bt[1] the last one seen whole */
        } * v;
        size_t n, cap;
        int ok; /* it is that pass's, whole so far (no gap cut it, memory sufficed) */
    } bt[2];
    /* sizes of the tensors allocated before the first forward (parameters): the vocabulary */
    uint64_t *init_sizes;
    size_t ninit, capinit;
    uint64_t vocab;
    int vocab_done;
    catpeaks peaks;  /* category_peaks */
    int cats_on;     /* the sweep runs: each allocation's records go to its window */
    int classify_on; /* each allocation is classified once (the sweep, or flame's totals) */
    int tm_assumed;  /* tensor_mode taken to stay 0 (no tensor after the first events) */
    classify_memo cmemo;
    classify_cache ccache; /* the ended lifetimes' categories (classified) */
    classify_cache ecache; /* the same by an entry's settle key and its end (replay_cats.c) */
    /* the sweep's first record waiting (replay_cats.c): its number when last looked at, and
     * whether what its category depends on changed since */
    uint64_t cats_tried;
    int cats_dirty;
    struct { /* the run as that record's last look saw it (replay_cats_now: now), and its
              * allocation's counters it was told by (now UINT_MAX: no look yet) */
        unsigned now;
        uint32_t iter, bwd;
        uint64_t alloc_event;
    } tried;
    uint64_t cats_wake; /* the sweep looks again once the window's tail reaches it (0: after the
                         * next event), as replay_cats_sweep_more left the window */
    uint64_t keys_from; /* the allocations whose records come before it: their keys are stale */
    /* what a size says (a parameter's, half one's, the vocabulary's multiple) by size, valid for
     * sizes_gen (it changes with the parameters' sizes and the vocabulary) */
    struct size_memo {
        uint64_t size;
        uint32_t gen;
        uint8_t bits;
    } * szm; /* (szm_mem, at the state's end) */
    /* szm while the sweep runs (the read-ahead's: its category's key is what asks it the sizes
     * of most allocations), NULL once it stopped (a segment-mode run after its first events) */
    struct size_memo *szm_ahead;
    uint32_t sizes_gen;
    /* settle keys by what they are made of (replay_cats_key_memo): a run's few allocation kinds */
    struct key_memo {
        uint64_t tag; /* 0: empty */
        uint32_t key;
    } kmemo[64];
    uint64_t key_run; /* the run's part of a tag (replay_key_run), set where it changes */
    uint64_t event;
    unsigned news; /* REPLAY_NEWS_*: what an allocation's phase began (replay.c's apply_one) */
    uint64_t hash; /* livemap_mix of the event being applied (run_pass computed it) */
    uint16_t apinfo[256]; /* by API id: AP_* */
    unsigned levels_seen; /* 1 << level of each level an allocation had */
    /* allocations freed after one of the three snapshots' current moments (the process peak,
     * the tensor peak r->at_tensors, the tensors' largest in an optimizer step r->at_step) that
     * were live at it, in the order they were freed, one copy each: with the ones still live at
     * the end, they are the snapshots (one pass, no replay). A snapshot holds those after where
     * its moment last moved (kept_from) that were allocated no later than it (tensors only, but
     * for the process peak's); those that no snapshot holds any more go when the array is full
     * (a moment only moves later: they never come back). */
    live_item *kept;
    size_t nkept, capkept;
    size_t kept_from[3];    /* each snapshot's part of kept begins here (KEPT_PEAK, ...) */
    uint64_t alloc_at_peak; /* tensor bytes at the snapshot's moment (replay_snap_bump_peaks) */
    uint64_t held_to;       /* the latest of their moments (each only moves on to the event now) */
    /* half the sizes of the parameters (allocated at init): a 16-bit copy of a weight */
    uint64_t *half;
    size_t nhalf, caphalf;
    /* cuMemMap chunks (VA, handle) since the allocator tracker's last SEGMENT_MAP: which
     * physical handles that segment is made of */
    struct {
        uint64_t va, handle;
    } maps[4096];
    unsigned nmaps;
    /* optimizer-step tensors freed since the last allocation, classified once the next one
     * comes (or the trace ends: then they were kept to the end, e.g. a one-step run's state) */
    uint64_t last_alloc_event;
    /* a chunked trace's join after dropped events (reader_snapjoin.c): the records after its
     * SNAPSHOT still to come (frees of what ended in the gap, then what it made and kept), and
     * whether the event being applied is one of them (its free ended in the gap: when is not
     * known, so it ends as at the gap's start, the earliest it can have) */
    uint64_t join_left;
    int joining; /* the event is a join record, as its records' flag: CATPEAKS_F_JOIN (more
                  * follow), CATPEAKS_F_JOIN_END (the last); 0 for every other event */
    uint64_t grad_free_event; /* the last free of a gradient by the program (zero_grad), 0: none */
    struct {                  /* the run's first step, made by a gradient's free alone */
        uint64_t event;       /* the free (0: none) */
        uint64_t opt_peak, opt_peak_event; /* the optimizer phase's peak before it */
        int growth_state, accum_mixed;
        int allocated; /* something was allocated after the backward, before it (a state's) */
    } first_step;
    uint64_t wcopy; /* the last tensor allocation's size when it was a weight's 16-bit copy, 0 */
    struct pending_free {
        live_item it;
        uint64_t alloc_rec, free_rec; /* its records in the window (0: none) */
        uint8_t level, flags;
    } * pend;
    size_t npend, cappend;
    /* PyTorch's blocks (blocks.c), from the allocator tracker's events: max_memory_allocated */
    blocks blocks;
    int blocks_on;
    infer_pass *infer; /* what the tensors say of the model (infer.h); NULL once it is done */
    /* physical handles created and not mapped yet (replay_vmm.c): their creation events */
    reader_event *vmm;
    size_t nvmm, capvmm;
    int init_input;      /* a batch went onto the device before the first forward (EF_INPUT) */
    int kv_on;           /* a stack under transformers' KV cache was seen (stack_facts.kv) */
    uint64_t kv_live;    /* the tensors live under it (kv_on) */
    uint64_t kv_pend[4]; /* the sizes of the KV tensors made since the last other tensor */
    unsigned nkv_pend;
    struct again *again;     /* a one-step run's tensor events (replay_again.c); NULL: not logged */
    oom_track oom_rec;       /* a caught OOM a later failure may yet leave the run's (caught) */
    uint32_t bwd_oom;        /* the backward pass an OOM not recovered from came in (0: none) */
    went_on_window won;      /* what the program went on with after an error it caught */
    oom_aside aside;         /* the caught OOM's snapshot while a later failure's is taken */
    uint32_t last_free_iter; /* (last: per-event offsets kept) when the last free-made step began */
    int opt_stepped;         /* a step not made so came (replay_phase.c's free_steps_first) */
    uint32_t fwd_bwd;        /* bwd when a forward's own frames last allocated (replay_bwd_begin) */
    gradsets gsets;          /* the gradients each step read (replay_cats.c's total) */
    struct size_memo szm_mem[8192]; /* szm: two ways of 4096 */
} state;

/* replay_phase.c */
/* replay_phase_half_add / replay_phase_half_has: a set of sizes (half a parameter's size). */
void replay_phase_half_add(state *s, uint64_t v);
int replay_phase_half_has(const state *s, uint64_t v);
/* replay_phase_grad_step: the main thread frees a gradient outside an optimizer stretch
 * (zero_grad): an optimizer step, even one that allocated nothing (fused / foreach optimizers
 * after their first step). As the run's first step it waits for an allocation after it:
 * replay_phase_teardown, at the trace's end, takes back one that none followed (the gradients
 * freed as the program exited before its first step). */
void replay_phase_grad_step(state *s);
void replay_phase_teardown(state *s);
/* replay_phase_init_freed: the main thread frees e, made in init with no stack: in a run
 * recorded without stacks, the free of a tensor made shortly before is the sign that the first
 * forward began (not a weight's, freed by a cast of the weights on the device). */
void replay_phase_init_freed(state *s, const livemap_entry *e);
/* replay_phase_note_init: the size of a tensor made before the first forward (a parameter). */
void replay_phase_note_init(state *s, uint64_t size);
/* replay_phase_step: an optimizer stretch begins (in_opt); a step (iter) when a backward ran since
 * the last one, or the trace shows none: 1, and the backward passes since the last step were its
 * micro-steps (accum, accum_steps, accum_mixed); 0: the last step goes on. */
int replay_phase_step(state *s);
/* replay_phase_of_stack: the phase of a stack's frames (s: the state), for growth.c */
int replay_phase_of_stack(void *s, uint32_t id);
/* replay_phase_made: INFER_MADE_FORWARD when stack id's frames are a forward's (training,
 * evaluation or compiling), ELSEWHERE when its Python frames say another phase, UNKNOWN with
 * none (0, or native frames only) */
int replay_phase_made(state *s, uint32_t id);
/* replay_phase_event (replay_phase.h, inline): an event's phase; *loss its EF_* (allocations) */
/* replay_timeline_free: a free on the timeline (r->tl set), after it is applied (phase ph): a step
 * that allocated nothing (fused AdamW after its first) shows only at zero_grad's frees of the
 * gradients, the optimizer's stretch on the page, not the main thread's "other" */
void replay_timeline_free(state *s, const reader_event *ev, uint8_t ph);
/* replay_phase_free: the phase of a free (replay_phase_event's, which it is): frees carry no
 * stack: the autograd threads' are backward, the main thread's belong to the last allocation's
 * phase (after a backward: the backward is over). */
static inline uint8_t replay_phase_free(state *s, const reader_event *ev)
{
    if (ev->backward)
        return s->thread_phase[ev->thread & 1023] = PHASE_BACKWARD;
    if (s->last_alloc_phase == PHASE_BACKWARD)
        return PHASE_OTHER; /* the main thread runs again: the backward is over */
    return s->in_opt ? PHASE_OPTIMIZER : s->last_alloc_phase;
}

/* replay_snap.c */
/* replay_snap_bump_peaks: the levels changed: new peaks of the three levels (at time t). */
void replay_snap_bump_peaks(state *s, uint8_t ph, uint64_t t);
/* replay_snap_join: a chunked trace's SNAPSHOT (its events before it were dropped): how many and
 * when, and the join's records that follow it (state.join_left) */
void replay_snap_join(state *s, const reader_snapshot *snap);
/* replay_snap_join_free: the phase of e's end, freed by a snapshot's join (it ended in a
 * bounded trace's gap, when is not known: no program's free): as at the gap's start (a backward's
 * temporary stays one), but where a step ended in the gap (gap_stepped) a parameter-sized tensor
 * of the first backward since the last optimizer step was that step's gradient (AccumulateGrad
 * keeps it until zero_grad; a later micro-step's is the temporary added into it): PHASE_COUNT,
 * alive to the end of what is known */
uint8_t replay_snap_join_free(const state *s, const livemap_entry *e);
/* replay_snap_bump_peaks_q: the same, called only when a level passed its peak. */
static inline void replay_snap_bump_peaks_q(state *s, uint8_t ph, uint64_t t)
{
    const replay_result *r = s->r;
    uint64_t alloc = s->level[L_TENSOR] + s->level[L_INNER];
    uint64_t res = s->level[L_TENSOR] + s->level[L_SEGMENT];
    uint64_t proc = res + s->level[L_OTHER];
    /* (the process level at its peak, as a caching allocator's segments stay, comes here only
     * with more tensor bytes than that peak's: not at each tensor of a steady step) */
    if (alloc > r->peak_allocated || res > r->peak_reserved || proc > r->peak_process ||
        (proc == r->peak_process && alloc > s->alloc_at_peak) ||
        (ph < PHASE_COUNT && proc > r->phase_peak[ph]) ||
        (ph == PHASE_OPTIMIZER && alloc > r->peak_step) ||
        (ph != PHASE_EVAL && alloc > r->peak_train))
        replay_snap_bump_peaks(s, ph, t);
}
/* replay_snap_oom: copies the live set at the first failure of an OOM. */
void replay_snap_oom(state *s);
/* replay_snap_end: the live set at the trace's end as r->at_end (replay_keep_end). */
void replay_snap_end(state *s);
/* replay_snap_retire: e ends in phase ph at time t (freed, or replaced by a new allocation at its
 * address): its lifetime is noted, it leaves the levels. (A free whose lifetime no snapshot and
 * no category wants only leaves the levels: replay.c's apply_free.) */
void replay_snap_retire(state *s, livemap_entry *e, uint8_t ph, int oom_pending, uint64_t t);
/* replay_snap_finish_peak: builds the snapshot at the peak after the pass. */
void replay_snap_finish_peak(state *s);
/* replay_snap_classify: sorts a snapshot's items into categories (snap->by_cat). */
void replay_snap_classify(const state *s, replay_result *r, replay_snapshot *snap);
/* replay_passes.c. replay_bwd_begin: backward pass s->bwd begins (at s->event); replay_bwd_temp: e,
 * a parameter-sized tensor the pass going on made, freed in it (a first pass's temporaries);
 * replay_bwd_cut: a bounded trace's gap cut the pass going on, if one (not learnt from);
 * replay_bwd_was_temp: e, alive at the gap, was made by the pass the gap cut where the last
 * whole first pass since a step made a temporary of its size, not a gradient */
void replay_bwd_begin(state *s);
void replay_bwd_temp(state *s, const livemap_entry *e);
void replay_bwd_cut(state *s);
int replay_bwd_was_temp(const state *s, const livemap_entry *e);
/* replay_vmm.c */
/* replay_vmm_hold: a cuMemCreate (ev) waits for its first map (-1: out of memory, not held). */
int replay_vmm_hold(state *s, const reader_event *ev);
/* replay_vmm_take: handle h is mapped: 1 and its creation event in *out if it was held. */
int replay_vmm_take(state *s, uint64_t h, reader_event *out);
/* replay_vmm_release: handle h is released: 1 if it was held (never mapped: never counted). */
int replay_vmm_release(state *s, uint64_t h);
/* replay_vmm_end: the handles still held are counted as never mapped; the list freed. */
void replay_vmm_end(state *s);

/* replay_api.c */
/* replay_apinfo_init: s->apinfo of every API id. */
void replay_apinfo_init(state *s);
/* replay_mark_torch_segments: the allocator tracker named a segment (SEGMENT_ALLOC, SEGMENT_MAP)
 * or a cuMemMap came (its chunks): PyTorch's segments flagged, the run in allocator mode. */
void replay_mark_torch_segments(state *s, const reader_event *ev);
/* replay_track_blocks: an allocator-tracker event for PyTorch's blocks (blocks.c): a tensor
 * made once they are emulated inline (every tensor's), the rest and the first one
 * replay_track_blocks_more's; 1 for a tensor's free once they are (a FREE record: is_alloc 0):
 * apply_free's, with the place of its block its entry kept (no search in its segment's list) */
void replay_track_blocks_more(state *s, const reader_event *ev);
static inline int replay_track_blocks(state *s, int is_alloc, const reader_event *ev)
{
    if (__builtin_expect(s->blocks_on && !ev->failed, 1)) {
        if (ev->api == VT_API_torchAlloc) {
            blocks_alloc(&s->blocks, ev->addr, ev->size, ev->time_ns);
            return 0;
        }
        if (ev->api == VT_API_torchFree && !is_alloc)
            return 1;
    }
    replay_track_blocks_more(s, ev);
    return 0;
}
/* replay_infer_note: one event for infer.c's pass (freed_event: what a free frees, or 0). */
void replay_infer_note(state *s, int is_alloc, const reader_event *ev, uint64_t freed_event);
/* replay_infer_tensor: a tensor of the stream-ordered allocator (its cudaMallocAsync backend, no
 * tracker: level L_TENSOR) made or freed (e: its entry, at a free) is what the model is made of
 * too, while the inference watches */
static inline void replay_infer_tensor(state *s, int is_alloc, const reader_event *ev, int level,
                                       uint64_t alloc_event)
{
    /* (the level first: in a register, where the pass's pointer is a load; a segment-mode run
     * keeps its inference to the end, none of its events a tensor) */
    if (level == L_TENSOR && __builtin_expect(s->infer != NULL, 0) && !s->r->allocator_mode)
        replay_infer_note(s, is_alloc, ev, alloc_event);
}
/* replay_infer_end: infer.c's pass is over (its first backward ended, or the trace did): its
 * result and the tensors it came from into the replay's result; the pass freed (s->infer NULL) */
void replay_infer_end(state *s);

/* replay_cats.c */
/* replay_size_bits: what a size says now: 1 a parameter's size, 2 half a parameter's, 4 a
 * multiple of the vocabulary (logits), memoized (struct size_memo). */
/* replay_size_memo: the two ways of size's slot in the memo szm (never NULL: the state's own) */
static inline struct size_memo *replay_size_memo(struct size_memo *szm, uint64_t size)
{
    return &szm[2 * ((size * 0x9e3779b97f4a7c15ull) >> 52)];
}
unsigned replay_size_bits_slow(const state *s, uint64_t size);
static inline unsigned replay_size_bits(const state *s, uint64_t size)
{
    const struct size_memo *m = replay_size_memo(s->szm, size);
    if (m->size == size && m->gen == s->sizes_gen)
        return m->bits;
    if (m[1].size == size && m[1].gen == s->sizes_gen)
        return m[1].bits;
    return replay_size_bits_slow(s, size);
}
/* replay_bwd_param_sized: e is a tensor a backward pass made, of a parameter's size (a gradient,
 * or a temporary of one's size: what zero_grad frees, a gap's join may take for a gradient) */
static inline int replay_bwd_param_sized(const state *s, const livemap_entry *e)
{
    return e->phase == PHASE_BACKWARD && (e->level == L_INNER || e->level == L_TENSOR) &&
           (replay_size_bits(s, e->size) & 1);
}
/* first_forward_copy: an allocation of the run's first forward (phase ph, flags loss, size
 * bytes) that is autocast's 16-bit copy of a weight (classify.c's rule) */
static inline int first_forward_copy(const state *s, uint8_t loss, uint8_t ph, uint64_t size)
{
    return (loss & (EF_TO_COPY | EF_ATTENTION)) == EF_TO_COPY && ph == PHASE_FORWARD && !s->bwd &&
           !s->iter && (replay_size_bits(s, size) & 2);
}

/* replay_input.c */
/* replay_item: the snapshot item of a live entry (not freed). replay_input: what the rules of
 * classify.c see of one item, now. */
live_item replay_item(const livemap_entry *e);
/* the end of a lifetime (a live_item's fields of its free): the event that freed it, the
 * optimizer steps and backward passes begun by then, its phase, whether an OOM's unwinding freed
 * it, whether it outlived the step that made it (a gradient freed after it came) */
typedef struct replay_end {
    uint64_t event;
    uint32_t iter, bwd;
    uint8_t phase, after_oom, outlived_step;
} replay_end;
/* replay_end_now: the end of e freed by the event being applied (phase ph, an OOM pending) */
static inline replay_end replay_end_now(const state *s, const livemap_entry *e, uint8_t ph,
                                        int oom_pending)
{
    return (replay_end){s->event,
                        s->iter,
                        s->bwd,
                        ph,
                        (uint8_t)(oom_pending != 0),
                        (uint8_t)(s->grad_free_event > e->alloc_event)};
}
/* replay_item_end: it's end's fields as x says; replay_item_ended: the item of e ended so */
static inline void replay_item_end(live_item *it, const replay_end *x)
{
    it->phase_free = x->phase;
    it->iter_free = x->iter;
    it->bwd_free = x->bwd;
    it->after_oom = x->after_oom;
    it->free_event = x->event;
    it->outlived_step = x->outlived_step;
}
live_item replay_item_ended(const livemap_entry *e, const replay_end *x);
/* replay_item_ended_at: the same made in *it (a snapshot's kept items: not copied on the stack) */
void replay_item_ended_at(live_item *it, const livemap_entry *e, const replay_end *x);
classify_input replay_input(const state *s, const replay_result *r, const live_item *it);
/* replay_item_key: all replay_input(s, s->r, it) gives classify but what the run adds alike to
 * every item (tensor mode, a frozen forward's OOM), packed in two words (the item's fields as
 * they lie, its counters ordered by classify_order, what its size says; b never 0):
 * for a memo of classify's answers while s stays as it is */
typedef struct replay_key2 {
    uint64_t a, b;
} replay_key2;
replay_key2 replay_item_key(const state *s, const live_item *it);
/* replay_end_key: what classify sees of e ending now as x says (arec: its allocating record in
 * the category window, 0: none), as a key for the cache of its answers (replay_cats.c) */
uint64_t replay_end_key(const state *s, const livemap_entry *e, const replay_end *x, uint64_t arec);
#include "replay_cats.h" /* (replay_cats.c's inline parts: the pass's per-event calls) */

#endif
