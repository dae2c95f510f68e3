/* replay.c — one streaming pass over a trace: tables, the live set, the three levels, the
 * OOM, events applied in order. The phases and steps are replay_phase.c's; the peaks and the
 * snapshots with lifetimes (the allocations live at the peak and at the OOM, each learning when
 * it was freed) are replay_snap.c's; classify.c then sorts them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casts.h"
#include "exit_codes.h"
#include "replay_again.h"
#include "replay_kv.h"
#include "repcache.h"
#include "replay_phase.h"
#include "replay_ring.h"
#include "replay_state.h"

int replay_progress;
int replay_read_ahead;
int replay_keep_end;

/* cast_flags: an allocation's EF_* flags (loss), less EF_TO_COPY when the forward's 16-bit
 * cast it is is the input of the op whose weight's copy came before it (casts.h) */
static inline uint8_t cast_flags(state *s, uint8_t loss, uint8_t ph, uint64_t size)
{
    int copy_sized = __builtin_expect((loss & EF_TO_COPY) != 0, 0) && ph == PHASE_FORWARD &&
                     !(loss & EF_ATTENTION) && (replay_size_bits(s, size) & 2);
    return casts_input(&s->wcopy, copy_sized, size) ? (uint8_t)(loss & ~EF_TO_COPY) : loss;
}

/* apply_alloc: the allocation ev (its phase ph, flags loss) enters the live set and the levels;
 * special: an API with more to it than that (apinfo's AP_SPECIAL) or a failed call. */
static inline __attribute__((always_inline)) void apply_alloc(state *s, const reader_event *ev,
                                                              oom_track *ot, unsigned info,
                                                              uint8_t ph, uint8_t loss,
                                                              const int tl_on)
{
    replay_result *r = s->r;
    int lvl = AP_LEVEL(info);
    if (__builtin_expect((info & AP_SPECIAL) || ev->failed, 0)) {
        if (s->infer && (ev->failed || ev->api >= VT_API_torchAlloc))
            replay_infer_note(s, 1, ev, 0); /* its tensors, an OOM */
        /* (a tensor of PyTorch's tracker, the common one, has no more to it) */
        if (__builtin_expect(ev->api != VT_API_torchAlloc || ev->failed, 0) &&
            replay_special_alloc(s, ev, ot, ph))
            return;
    }
    replay_infer_tensor(s, 1, ev, lvl, 0);
    if (__builtin_expect(ot->pending, 0) && lvl != L_NONE && ev->size >= ot->requested) {
        if (ot->raised) { /* PyTorch raised it: the program went on from it */
            replay_oom_caught(s, ot);
        } else {
            ot->pending = s->frozen_oom = 0, r->oom_recovered++; /* recovered: it later succeeded */
            s->bwd_oom = 0;                                      /* (its backward goes on) */
            replay_oom_restore(s, ot);
        }
    }
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
    if (lvl == L_TENSOR || lvl == L_INNER) {
        loss = cast_flags(s, loss, ph, ev->size);
        if (__builtin_expect(first_forward_copy(s, loss, ph, ev->size), 0))
            r->fwd0_copies_made += ev->size, r->fwd0_copies_since_free++;
    }
    int replaced;
    livemap_entry *e = livemap_put_raw(&s->live, ev->addr, AP_SPACE(info), s->hash, &replaced);
    if (!e)
        return;
    if (replaced) { /* its free was not seen: it ends here, the new one takes its place */
        if (__builtin_expect(s->kv_on, 0) && (e->level == L_TENSOR || e->level == L_INNER))
            replay_kv_free(s, e, 0);
        if (tl_on && e->level == L_TENSOR) /* (a join's too: the old one is gone) */
            timeline_freed(r->tl, ev, e->size, 1, e->device);
        replay_snap_retire(s, e, ph, ot->pending, ev->time_ns);
    }
    *e = (livemap_entry){.addr = ev->addr,
                         .size = ev->size,
                         .time_ns = ev->time_ns,
                         .alloc_event = s->event,
                         .stack_id = ev->stack_id,
                         .iter = s->iter,
                         .bwd = s->bwd,
                         .space = (uint8_t)AP_SPACE(info),
                         .api = ev->api,
                         .device = ev->device,
                         .blk = s->blocks.hint, /* (a tensor's of PyTorch's: where its block is) */
                         .phase = ph,
                         .flags = loss,
                         .level = (uint8_t)lvl};
    if (__builtin_expect(s->again != NULL, 0) && ev->api == VT_API_torchAlloc)
        replay_again_alloc(s, e); /* (a step's tensors, to take it again) */
    if (__builtin_expect(tl_on, 0) && lvl == L_TENSOR && !s->joining)
        timeline_stream_made(r->tl, ev);
    if (ph == PHASE_INIT && (lvl == L_TENSOR || lvl == L_INNER) && !(loss & EF_INPUT))
        replay_phase_init_made(s, e, ev->stack_id); /* (a parameter, or an optimizer's state) */
    s->last_alloc_event = s->event;
    if (s->npend) /* freed before this allocation: not kept to the run's end */
        replay_cats_flush(s);
    s->level[lvl] += ev->size;
    growth_alloc(&r->growth, ev->stack_id, ev->size, lvl == L_TENSOR || lvl == L_INNER,
                 lvl == L_TENSOR || lvl == L_SEGMENT || lvl == L_OTHER, ph, ev->backward,
                 ev->time_ns);
    if (__builtin_expect(s->kv_on, 0) && (lvl == L_TENSOR || lvl == L_INNER))
        replay_kv_alloc(s, e);
    if (__builtin_expect(!(s->levels_seen & 1u << lvl), 0)) { /* the first of its level */
        s->levels_seen |= 1u << lvl;
        int first_tensor = !r->tensor_mode && (lvl == L_INNER || lvl == L_TENSOR);
        int first_inner = !r->allocator_mode && lvl == L_INNER;
        if (lvl == L_INNER)
            r->tensor_mode = r->allocator_mode = 1;
        if (lvl == L_TENSOR)
            r->tensor_mode = 1;
        else if (lvl == L_SEGMENT)
            r->segment_mode = 1;
        if (first_tensor || first_inner)
            replay_cats_tensors(s, first_inner);
    }
    if (s->cats_on)
        replay_cats_alloc(s, e, tl_on);
    replay_snap_bump_peaks_q(s, ph, ev->time_ns);
}

#define RESULT_SHUT_DOWN 4 /* a call's result when the driver had shut down (both APIs') */

/* apply_free: the free ev (its phase ph) takes its allocation out of the live set; slot: where
 * run_pass last saw its index slot; blk: a tensor's block to free too (replay_track_blocks). */
static inline __attribute__((always_inline)) void apply_free(state *s, const reader_event *ev,
                                                             oom_track *ot, unsigned info,
                                                             uint8_t ph, uint64_t slot, int blk,
                                                             const int tl_on)
{
    replay_result *r = s->r;
    unsigned space = AP_SPACE(info);
    if (__builtin_expect(ev->failed, 0)) {
        r->n_failed_frees++;
        r->n_failed_frees_shutdown += ev->result == RESULT_SHUT_DOWN; /* unloads at the exit */
        if (s->infer && ev->api == VT_API_torchFree)
            replay_infer_note(s, 0, ev, 0);
        return;
    }
    livemap_entry *e = livemap_find_at(&s->live, ev->addr, space, s->hash, slot);
    if (blk)
        blocks_free_hinted(&s->blocks, ev->addr, e ? e->blk : BLOCKS_NO_HINT);
    if (__builtin_expect(info & AP_SPECIAL, 0) && s->infer && ev->api == VT_API_torchFree)
        replay_infer_note(s, 0, ev, e ? e->alloc_event : 0);
    else if (e)
        replay_infer_tensor(s, 0, ev, e->level, e->alloc_event);
    if (!e) {
        if (space != VT_SPACE_VMM_VA && space != VT_SPACE_VA_RANGE && space != VT_SPACE_NONE)
            r->unknown_frees++;
        return;
    }
    if (__builtin_expect(e->phase == PHASE_INIT, 0) && s->no_python && !ev->backward &&
        !s->pyless_fwd && !s->joining)
        replay_phase_init_freed(s, e);
    if (ot->pending && e->level == L_SEGMENT)
        ot->released += e->size;
    if (__builtin_expect(first_forward_copy(s, e->flags, e->phase, e->size), 0) &&
        ph == PHASE_FORWARD && !ot->pending && (e->level == L_TENSOR || e->level == L_INNER))
        r->fwd0_copies_freed += e->size, r->fwd0_copies_since_free = 0; /* freed in it */
    if (__builtin_expect(s->joining, 0))
        ph = replay_snap_join_free(s, e); /* ended in the gap (no program's free) */
    else if (ev->backward && e->bwd == s->bwd && s->bt[0].ok && replay_bwd_param_sized(s, e))
        replay_bwd_temp(s, e); /* a first backward pass's temporary */
    int grad_free = !s->joining && !ev->backward && replay_bwd_param_sized(s, e) && !ot->pending &&
                    !(e->flags & EF_LOSS); /* (the backward's starting gradient:
                                            * replay_phase.c) */
    if (grad_free) { /* a gradient freed: what an optimizer step made and keeps past this is
                      * its state */
        s->grad_free_event = s->event;
        replay_cats_changed(s);
    }
    if (grad_free && !s->in_opt) {
        /* the main thread frees a gradient (zero_grad): an optimizer step, even one that
         * allocated nothing (fused / foreach optimizers after their first step); not the
         * frees of the out-of-memory error's unwinding */
        replay_phase_grad_step(s);
        ph = PHASE_OPTIMIZER;
        /* the process level as the step found it (before this free), right after a backward:
         * the optimizer phase's, which a step that allocated nothing would otherwise never have
         * (fused AdamW's later steps: "optimizer 6.87 GiB" by phase where the process held 9.4
         * at such a step), or after what came since the backward was freed again (an EMA
         * update's temporaries: the fused step ran before it, at this level); not a closure's
         * zero_grad after its forward (Lightning's), with the forward's tensors alive. (The
         * step's tensors, at_step, come from its allocations.) */
        if (s->last_alloc_phase == PHASE_BACKWARD ||
            (s->bwd && s->level[L_TENSOR] + s->level[L_INNER] <= s->bwd_end_tensors)) {
            uint64_t proc = s->level[L_TENSOR] + s->level[L_SEGMENT] + s->level[L_OTHER];
            if (proc > r->phase_peak[PHASE_OPTIMIZER]) /* (no moment of the timeline is it) */
                r->phase_peak[PHASE_OPTIMIZER] = proc, r->phase_peak_event[PHASE_OPTIMIZER] = 0;
        }
    }
    if (tl_on)
        timeline_freed(r->tl, ev, e->size, e->level == L_TENSOR, e->device); /* (a join's too) */
    if (__builtin_expect(s->kv_on, 0) && (e->level == L_TENSOR || e->level == L_INNER))
        replay_kv_free(s, e, ev->backward);
    growth_free(&r->growth, e->stack_id, e->size, e->level == L_TENSOR || e->level == L_INNER,
                e->level == L_TENSOR || e->level == L_SEGMENT || e->level == L_OTHER);
    /* (made no later than one of the snapshots' moments: no later than the latest of them) */
    int held = e->snap_oom || e->alloc_event <= s->held_to;
    if (held) { /* a snapshot wants it */
        replay_snap_retire(s, e, ph, ot->pending, ev->time_ns);
    } else if (s->classify_on && !e->code) { /* (replay_snap_retire's work for it, inline: held
                                              * by no snapshot, its category not settled) */
        const replay_end x = replay_end_now(s, e, ph, ot->pending);
        replay_cats_free(s, e, &x, ev->time_ns);
        s->level[e->level] -= e->size;
    } else {                /* (the same, settled) */
        if (s->classify_on) /* settled already: its free's record */
            replay_cats_free_settled(s, e, ev->time_ns, tl_on);
        s->level[e->level] -= e->size;
    }
    if (__builtin_expect(s->again != NULL, 0) && e->api == VT_API_torchAlloc)
        replay_again_free(s, e, grad_free);
    livemap_del_found(&s->live, e); /* (found above: nothing since put or deleted) */
}

/* apply_one: one event (tl_on: the run draws a timeline, s->r->tl; a constant in run_pass) */
static inline __attribute__((always_inline)) void apply_one(state *s, int is_alloc,
                                                            const reader_event *ev, oom_track *ot,
                                                            unsigned info, uint64_t slot,
                                                            const int tl_on)
{
    uint8_t loss = 0, ph;
    if (is_alloc) {
        s->news = 0; /* (set where a counter changes: one test after, not six reads) */
        ph = replay_phase_event(s, ev, 1, &loss);
        if (__builtin_expect(s->news != 0, 0))
            replay_oom_news(s, ot);
    } else {
        ph = replay_phase_free(s, ev); /* a free changes no counter */
    }
    int blk = __builtin_expect(info & AP_SPECIAL, 0) && replay_track_blocks(s, is_alloc, ev);
    int tl = __builtin_expect(tl_on, 0) && !s->joining; /* (a join: no phase's) */
    if (is_alloc) {
        if (tl)
            timeline_event(s->r->tl, ev, 1, ph, s->iter);
        apply_alloc(s, ev, ot, info, ph, loss, tl_on);
    } else {
        apply_free(s, ev, ot, info, ph, slot, blk, tl_on);
        if (tl)
            replay_timeline_free(s, ev, ph);
    }
}

static __attribute__((noinline)) void apply_one_call(state *s, int is_alloc, const reader_event *ev,
                                                     oom_track *ot, unsigned info, uint64_t slot)
{
    apply_one(s, is_alloc, ev, ot, info, slot, s->r->tl != NULL);
}

/* apply_special: an event of an API with more to it (AP_SPECIAL; seg: its blocks_hint). A
 * physical handle counts from its first map (replay_vmm.c): its creation is held, and applied
 * (with its own stack) when the map comes, before the map. (Inline: every tensor of PyTorch's
 * tracker is one; its call saved and restored six registers: 1.6 % of an allocator-mode
 * replay's instructions, 1.4 % of a default-mode one's.) */
/* apply_vmm: apply_special's part for the VMM's handles (cuMemCreate, cuMemRelease, cuMemMap):
 * 0 when the event ends there (held, or released unmapped), 1 when it is applied after */
static __attribute__((noinline)) int apply_vmm(state *s, int is_alloc, const reader_event *ev,
                                               oom_track *ot)
{
    if (!ev->failed && is_alloc && ev->api == VT_API_cuMemCreate && ev->addr &&
        !replay_vmm_hold(s, ev))
        return 0;
    if (!ev->failed && !is_alloc && ev->api == VT_API_cuMemRelease &&
        replay_vmm_release(s, ev->addr))
        return 0;
    reader_event c;
    if (!ev->failed && is_alloc && ev->api == VT_API_cuMemMap && ev->has_aux &&
        replay_vmm_take(s, ev->aux, &c)) {
        uint64_t hash = s->hash;
        c.time_ns = ev->time_ns;
        s->hash = livemap_mix(c.addr, (unsigned)reader_api_space(c.api));
        apply_one_call(s, 1, &c, ot, s->apinfo[c.api], ~(uint64_t)0);
        s->hash = hash;
    }
    return 1;
}

static inline __attribute__((always_inline)) void
apply_special(state *s, int is_alloc, const reader_event *ev, oom_track *ot, unsigned info,
              uint64_t slot, size_t seg, const int tl_on)
{
    blocks_hint(&s->blocks, seg);
    _Static_assert(VT_API_cuMemRelease == VT_API_cuMemCreate + 1 &&
                       VT_API_cuMemMap == VT_API_cuMemCreate + 3,
                   "the VMM's handles' APIs lie in 39..42");
    /* (one comparison for a tensor of PyTorch's tracker, not three) */
    if (__builtin_expect((unsigned)ev->api - VT_API_cuMemCreate <= 3u, 0) &&
        !apply_vmm(s, is_alloc, ev, ot))
        return;
    apply_one(s, is_alloc, ev, ot, info, slot, tl_on);
}

/* apply_event: one event (its api's apinfo, the index slot run_pass saw it at, its segment). */
static inline __attribute__((always_inline)) void apply_event(state *s, int is_alloc,
                                                              const reader_event *ev, oom_track *ot,
                                                              unsigned info, uint64_t slot,
                                                              size_t seg, const int tl_on)
{
    if (__builtin_expect(!(info & AP_SPECIAL), 1))
        apply_one(s, is_alloc, ev, ot, info, slot, tl_on);
    else
        apply_special(s, is_alloc, ev, ot, info, slot, seg, tl_on);
}

/* drain: the oldest event of the ring applied, then the sweep (inline where the ring is full,
 * once an event: no call and its saved registers; drain_call where the ring empties) */
static inline __attribute__((always_inline)) void drain(state *s, const struct pending *p,
                                                        oom_track *ot, const int tl_on)
{
    s->event = p->event;
    s->hash = p->hash;
    s->joining = p->join;
    apply_event(s, p->is_alloc, &p->ev, ot, p->info, p->slot, p->seg, tl_on);
    replay_cats_sweep(s);
}

static __attribute__((noinline)) void drain_call(state *s, const struct pending *p, oom_track *ot)
{
    drain(s, p, ot, s->r->tl != NULL);
}

/* replay_small: the live set's index and PyTorch's segments so few that they stay in cache: an
 * event is applied as it is read, with nothing fetched ahead (the ring's read-ahead had cost
 * g_compile_b8_12gib, 79k events, a few thousand allocations live at most, 4.9 % of its
 * instructions, and its CPU time was no lower with it); once past it, the ring to the end */
#define REPLAY_SMALL_SLOTS (1u << 16)
static inline int replay_small(const state *s)
{
    return s->live.cap < REPLAY_SMALL_SLOTS && !blocks_many_segs(&s->blocks);
}

/* run_pass_tl: run_pass, tl_on whether the run draws a timeline (s->r->tl, set for the whole
 * pass): a constant, the pass compiled once with it and once without, a report's with none of
 * the timeline's tests at each event (5 instructions an event fewer) */
static inline __attribute__((always_inline)) int
run_pass_tl(state *s, reader *rd, oom_track *ot, char *err, size_t errlen, const int tl_on)
{
    replay_result *r = s->r;
    memset(s->level, 0, sizeof s->level);
    memset(s->thread_phase, PHASE_INIT, sizeof s->thread_phase);
    s->seen_forward = s->init_input = s->kv_on = s->pyless_fwd = 0;
    s->kv_live = 0, s->nkv_pend = 0;
    s->last_alloc_phase = PHASE_INIT;
    s->in_opt = 0;
    s->bwd = s->iter = s->bwd_oom = 0;
    s->event = 0;
    replay_apinfo_init(s);
    /* Events wait in a small ring while their hash slots are prefetched: with a live set of
     * 100k allocations nearly every lookup is a cache miss, and this hides most of them.
     * Each record is read into the ring's next place; any other record first drains the ring,
     * so the order of effects is unchanged. */
    struct pending ring[RING];
    unsigned head = 0, count = 0;
#define VT_DRAIN_ONE()                                                                             \
    do {                                                                                           \
        drain_call(s, &ring[head], ot);                                                            \
        head = (head + 1) % RING;                                                                  \
        count--;                                                                                   \
    } while (0)
    uint64_t seq = 0;
    int ahead = replay_read_ahead; /* the ring is in use (from the first event past replay_small) */
    for (;;) {
        reader_record got;
        struct pending *p = &ring[(head + count) % RING];
        if (!reader_next_event(rd, &got, &p->ev))
            break;
        if (got.type == VT_REC_ALLOC || got.type == VT_REC_FREE) {
            take(s, p, &got, ++seq);
            if (!ahead && replay_small(s)) { /* applied now: nothing to fetch ahead */
                drain(s, p, ot, tl_on);
                continue;
            }
            ahead = 1, count++;
            read_ahead(s, ring, head, count, p);
            if (count < RING)
                continue;
            /* the ring full: from here on, while the records are events, the oldest is applied
             * and its place takes the next one (the ring's bookkeeping constant: 24 to 33
             * instructions an event fewer than the loop's general way, on vtgen's three modes) */
            for (;;) {
                p = &ring[head];
                drain(s, p, ot, tl_on);
                head = (head + 1) % RING;
                if (!reader_next_event(rd, &got, &p->ev)) {
                    count--;
                    goto end;
                }
                if (got.type != VT_REC_ALLOC && got.type != VT_REC_FREE) {
                    count--;
                    break;
                }
                take(s, p, &got, ++seq);
                read_ahead(s, ring, head, RING, p);
            }
        }
        while (count)
            VT_DRAIN_ONE();
        r->n_events = seq; /* (the events so far: a snapshot's join reads them) */
        const reader_record *rec = &got;
        if (tables_add(r->t, rec) < 0) { /* out of memory: the tables would lack it */
            snprintf(err, errlen, "%s: out of memory", r->path);
            return VT_EXIT_USAGE;
        }
        switch (rec->type) {
        case VT_REC_OOM:
            if (ot->pending && !r->oom_capacity)
                r->oom_capacity = rec->u.oom.capacity;
            if (r->tl && AP_LEVEL(s->apinfo[rec->u.oom.api]) == L_TENSOR)
                timeline_stream_oom(r->tl, &rec->u.oom); /* (PyTorch's tracker: its own) */
            break;
        case VT_REC_TRAILER:
            if (rec->u.trailer.end_ns > r->end_ns)
                r->end_ns = rec->u.trailer.end_ns;
            r->ended = rec->flags & VT_TRAILER_END_MASK;
            r->end_error = rec->u.trailer.error;
            r->lost_why = rec->flags & ~VT_TRAILER_END_MASK;
            r->run_events = rec->u.trailer.n_events;
            r->run_dropped = rec->u.trailer.n_dropped;
            break;
        case VT_REC_CONFIG: /* (the phases'; infer's: no Python frame says who made a tensor) */
            s->no_python = !(rec->u.config.fixed.stack_mode & VT_STACKS_PYTHON);
            r->growth.no_python = s->no_python;
            infer_pass_unmade(s->infer, s->no_python);
            break;
        case VT_REC_STEP:
            growth_step_record(&r->growth, &rec->u.step, replay_phase_of_stack, s);
            break;
        case VT_REC_SNAPSHOT: /* a chunked trace's events before this are gone */
            replay_snap_join(s, &rec->u.snap);
            break;
        default:
            break;
        }
    }
end:
    r->n_events = seq; /* (not counted at each event: the ring's sequence number is the count) */
    while (count)
        VT_DRAIN_ONE();
#undef VT_DRAIN_ONE
    if (replay_progress && r->file_bytes >= PROGRESS_MIN_BYTES)
        fprintf(stderr, "\r%*s\r", 60 + (int)strlen(r->path), "");
    r->status = reader_status_of(rd);
    replay_phase_teardown(s);
    r->iterations = s->iter;
    growth_end(&r->growth, r->end_ns);
    if (reader_chunked_info(rd)) {
        r->chunked = 1, r->layout = *reader_chunked_info(rd);
        uint64_t have = r->n_events - r->snapshot_events + r->dropped_events;
        r->missing_events = r->run_events > have ? r->run_events - have : 0;
    }
    if (r->status == READER_MALFORMED || r->status == READER_IOERR) {
        snprintf(err, errlen, "%s: %s at byte %llu: %s", r->path,
                 r->status == READER_MALFORMED ? "malformed trace" : "read error",
                 (unsigned long long)reader_error_offset(rd), reader_error_message(rd));
        return VT_EXIT_MALFORMED;
    }
    return 0;
}

static int run_pass(state *s, reader *rd, oom_track *ot, char *err, size_t errlen)
{
    return s->r->tl ? run_pass_tl(s, rd, ot, err, errlen, 1)
                    : run_pass_tl(s, rd, ot, err, errlen, 0);
}

/* replay_reader: the replay of rd (NULL: it could not be opened, err says why), closed after. */
static int replay_reader(const char *path, reader *rd, replay_result *out, char *err, size_t errlen)
{
    snprintf(out->path, sizeof out->path, "%s", path);
    out->t = tables_new();
    if (!out->t) { /* out of memory (mem.h remembers it: main says so) */
        snprintf(err, errlen, "%s: out of memory", path);
        if (rd)
            reader_close(rd);
        return VT_EXIT_USAGE;
    }
    if (!rd)
        return VT_EXIT_USAGE;
    out->file_bytes = reader_file_size(rd);
    if (reader_status_of(rd) == READER_MALFORMED) {
        reader_close(rd);
        return VT_EXIT_MALFORMED;
    }
    /* (on the heap, on the pages mem_heap_huge asked for: 68 KiB on the stack had been 17
     * first touches of its pages, each a fault, ~1 ms of a small trace's report on a VM) */
    state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        reader_close(rd);
        return VT_EXIT_USAGE;
    }
    s->r = out;
    replay_cats_begin(s);
    s->infer = infer_pass_new();
    replay_again_begin(s);
    out->minor = reader_header(rd)->minor;
    oom_track ot;
    memset(&ot, 0, sizeof ot);
    int rc = run_pass(s, rd, &ot, err, errlen);
    replay_oom_end(s, &ot);
    const char *why = reader_error_message(rd); /* "no trailer", "last record cut at byte N" */
    snprintf(out->status_msg, sizeof out->status_msg, "%s",
             out->status == READER_TRUNCATED && why && *why ? why
                                                            : reader_status_name(out->status));
    replay_oom_result(s, &ot);
    replay_infer_end(s);   /* (when the trace ended before the first backward did) */
    replay_went_on_end(s); /* (its batch from the inference's token batch) */
    replay_vmm_end(s);
    replay_cats_cut(s);   /* (before the snapshots take the live set's items) */
    replay_cats_flush(s); /* what was freed after the last allocation: kept to the end */
    replay_snap_finish_peak(s);
    for (size_t i = 0; i < out->at_oom.n; i++) /* released but never confirmed: not cache */
        out->at_oom.items[i].oom_released = out->at_oom.items[i].oom_released == 2;
    if (!out->has_oom) {
        free(out->at_oom.items);
        out->at_oom.items = NULL;
        out->at_oom.n = 0;
    }
    replay_snap_classify(s, out, &out->at_peak);
    if (out->at_tensors.n)
        replay_snap_classify(s, out, &out->at_tensors);
    if (out->at_step.n)
        replay_snap_classify(s, out, &out->at_step);
    if (out->has_oom) /* (then what its step first ran: oomstep.c) */
        replay_snap_classify(s, out, &out->at_oom), out->oom_new_step = replay_oom_new_step(s, out);
    replay_cats_end(s);
    timeline_end(out->tl);
    out->backward_passes = s->bwd;
    /* (segment mode: only the passes and steps that grew the cache are seen, no count of A;
     * "A = 2" had been said of a run of A = 4, its later micro-steps reusing the cache) */
    if (!s->accum_mixed && s->accum_steps && out->tensor_mode) {
        out->accum = s->accum;
        out->accum_steps = s->accum_steps;
    }
    /* (its snapshots classified: a representation cache's passes are no count of A) */
    if ((out->cache_passes = repcache_detect(out, out->accum, out->accum_steps)) && out->accum)
        out->accum = out->accum_steps = 0;
    if (s->blocks_on && out->allocator_mode) {
        out->blocks_basis = s->blocks.rules.basis;
        out->peak_allocated_blocks = s->blocks.peak;
        out->t_allocated_blocks = s->blocks.t_peak;
        out->blocks_unplaced = s->blocks.unplaced;
    }
    replay_again_end(s);
    blocks_free_all(&s->blocks);
    if (replay_keep_end)
        replay_snap_end(s);
    livemap_free(&s->live);
    free(s->facts);
    free(s->kept);
    free(s->pend);
    free(s->half);
    free(s->init_sizes);
    free(s->bt[0].v);
    free(s->bt[1].v);
    replay_cats_free_all(s);
    free(s);
    reader_close(rd);
    return rc;
}

int replay_file(const char *path, replay_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    return replay_reader(path, reader_open(path, err, errlen), out, err, errlen);
}

int replay_stream(FILE *fp, const char *path, const void *head, size_t nhead, replay_result *out,
                  char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    return replay_reader(path, reader_open_stream(fp, path, head, nhead, err, errlen), out, err,
                         errlen);
}

void replay_free(replay_result *r)
{
    free(r->at_peak.items);
    free(r->at_tensors.items);
    free(r->at_step.items);
    free(r->at_oom.items);
    free(r->at_end.items);
    phases_memo_free(&r->site_memo); /* (keyed by the tables' records) */
    evalsrc_free(&r->eval_src);
    tables_free(r->t);
    timeline_free(r->tl);
    growth_free_all(&r->growth);
    infer_pass_free(r->inferred_from);
    memset(r, 0, sizeof *r);
}
