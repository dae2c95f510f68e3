/* replay.c — one streaming pass over a trace: tables, the live set, the three levels, the
 * OOM, events applied in order. The phases and steps are replay_phase.c's; the peaks and the
 * snapshots with lifetimes (the allocations live at the peak and at the OOM, each learning when
 * it was freed) are replay_snap.c's; classify.c then sorts them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "replay_state.h"

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

/* mark_torch_segments: the allocator tracker reported a segment (SEGMENT_ALLOC: a cudaMalloc
 * at addr; SEGMENT_MAP: the cuMemMap chunks mapped into [addr, addr + size) since the last one):
 * flag the live segment entries as PyTorch's, so a snapshot counts them as its cache. */
static void mark_torch_segments(state *s, const reader_event *ev)
{
    if (ev->api == VT_API_torchSegmentAlloc) {
        livemap_entry *e = livemap_find(&s->live, ev->addr, VT_SPACE_DEVICE);
        if (e && e->level == L_SEGMENT) {
            e->flags |= EF_TORCH_SEG;
            replay_cats_marked(s, e);
        }
    } else if (ev->api == VT_API_torchSegmentMap) {
        for (unsigned i = 0; i < s->nmaps; i++) {
            if (s->maps[i].va < ev->addr || s->maps[i].va - ev->addr >= ev->size)
                continue;
            livemap_entry *e = livemap_find(&s->live, s->maps[i].handle, VT_SPACE_VMM_HANDLE);
            if (e && e->level == L_SEGMENT) {
                e->flags |= EF_TORCH_SEG;
                replay_cats_marked(s, e);
            }
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

/* track_blocks: the allocator tracker's tensors and segments, to PyTorch's block sizes (blocks.c),
 * under the rules of the run's allocator settings (read at its first event). */
static void track_blocks(state *s, const reader_event *ev)
{
    if (ev->failed || ev->api < VT_API_torchAlloc || ev->api > VT_API_torchSegmentUnmap)
        return;
    if (!s->blocks_on) {
        const char *conf = tables_env(s->r->t, "PYTORCH_ALLOC_CONF");
        blocks_rules rules =
            blocks_rules_parse(conf ? conf : tables_env(s->r->t, "PYTORCH_CUDA_ALLOC_CONF"));
        blocks_init(&s->blocks, &rules);
        s->blocks_on = 1;
    }
    switch (ev->api) {
    case VT_API_torchAlloc:
        blocks_alloc(&s->blocks, ev->addr, ev->size, ev->time_ns);
        break;
    case VT_API_torchFree:
        blocks_free(&s->blocks, ev->addr);
        break;
    case VT_API_torchSegmentAlloc:
        blocks_segment_add(&s->blocks, ev->addr, ev->size);
        break;
    case VT_API_torchSegmentMap:
        blocks_segment_map(&s->blocks, ev->addr, ev->size);
        break;
    default: /* torchSegmentFree, torchSegmentUnmap */
        blocks_segment_del(&s->blocks, ev->addr, ev->size);
        break;
    }
}

/* infer_note: one event for infer.c's pass (freed_event: the allocation a free frees, or 0). */
static void infer_note(state *s, int is_alloc, const reader_event *ev, uint64_t freed_event)
{
    infer_pass_event(s->infer, s->event, is_alloc, ev, freed_event);
    if (infer_pass_done(s->infer)) {
        s->r->has_inferred = infer_finish(s->infer, &s->r->inferred) == 0;
        infer_pass_free(s->infer);
        s->infer = NULL;
    }
}

static void apply_one(state *s, int is_alloc, const reader_event *ev, oom_track *ot)
{
    replay_result *r = s->r;
    uint8_t loss;
    uint32_t bwd0 = s->bwd, iter0 = s->iter;
    int sized0 = s->vocab_done;
    uint8_t ph = replay_phase_event(s, ev, is_alloc, &loss);
    /* what the waiting allocations' categories may depend on changed (replay_cats.c) */
    if (s->vocab_done != sized0) /* the parameters' sizes and the vocabulary are final */
        replay_cats_changed(s, CATS_ALL);
    if (s->bwd != bwd0)
        replay_cats_changed(s, CATS_BWD);
    if (s->iter != iter0)
        replay_cats_changed(s, CATS_ITER);
    timeline_event(r->tl, ev, is_alloc, ph, s->iter);
    unsigned space = (unsigned)reader_api_space(ev->api);
    track_blocks(s, ev);
    if (is_alloc && s->infer && (ev->failed || ev->api >= VT_API_torchAlloc))
        infer_note(s, 1, ev, 0); /* its tensors, an OOM */
    if (is_alloc) {
        int lvl = level_of(ev->api);
        if (ev->api == VT_API_torchTrackerNote && ev->size != VT_TRACKER_DROPPED)
            r->tracker_note = (int)ev->size, r->tracker_detail = ev->addr;
        if (!ev->failed && (ev->api == VT_API_torchSegmentAlloc ||
                            ev->api == VT_API_torchSegmentMap || ev->api == VT_API_cuMemMap))
            mark_torch_segments(s, ev);
        if (ev->api == VT_API_torchOom && !ot->pending) {
            /* PyTorch's allocator raised OutOfMemoryError with no failed CUDA call before it
             * (a memory-fraction limit): the tracker's OOM is the only sign (size = request) */
            *ot = (oom_track){1,        s->event,     ev->size, ev->time_ns, 0,
                              s->event, ev->stack_id, 1,        ph,          0};
            replay_snap_oom(s);
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
                        *ot = (oom_track){1,  s->event,    ev->size,     ev->time_ns,
                                          0,  s->event,    ev->stack_id, 1,
                                          ph, ev->emulated};
                        replay_snap_oom(s);
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
        livemap_entry *e = livemap_put_h(&s->live, ev->addr, space, s->hash, &replaced);
        if (!e)
            return;
        if (replaced) { /* its free was not seen: it ends here, the new one takes its place */
            replay_snap_retire(s, e, ph, ot->pending, ev->time_ns);
            e->code = 0, e->snap_oom = 0;
        }
        e->size = ev->size;
        e->time_ns = ev->time_ns;
        e->stack_id = ev->stack_id;
        e->iter = s->iter;
        e->api = ev->api;
        e->device = ev->device;
        e->layer = (uint8_t)reader_api_layer(ev->api);
        e->phase = ph;
        e->flags = loss;
        if (ph == PHASE_INIT && (lvl == L_TENSOR || lvl == L_INNER) && !(loss & EF_INPUT)) {
            replay_phase_half_add(s,
                                  ev->size / 2); /* a parameter: its 16-bit copy is half as big */
            replay_phase_note_init(s, ev->size);
        }
        e->bwd = s->bwd;
        e->level = (uint8_t)lvl;
        e->snap_oom = 0;
        e->alloc_event = s->event;
        s->last_alloc_event = s->event;
        if (s->npend) /* freed before this allocation: not kept to the run's end */
            replay_cats_flush(s);
        s->level[lvl] += ev->size;
        growth_alloc(&r->growth, ev->stack_id, ev->size, lvl == L_TENSOR || lvl == L_INNER,
                     lvl == L_TENSOR || lvl == L_SEGMENT || lvl == L_OTHER, ph, ev->backward,
                     ev->time_ns);
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
        replay_cats_alloc(s, e);
        replay_snap_bump_peaks(s, ph, ev->time_ns);
    } else {
        if (ev->failed) {
            if (s->infer && ev->api == VT_API_torchFree)
                infer_note(s, 0, ev, 0);
            return;
        }
        livemap_entry *e = livemap_find_h(&s->live, ev->addr, space, s->hash);
        if (s->infer && ev->api == VT_API_torchFree)
            infer_note(s, 0, ev, e ? e->alloc_event : 0);
        if (!e) {
            if (space != VT_SPACE_VMM_VA && space != VT_SPACE_VA_RANGE && space != VT_SPACE_NONE)
                r->unknown_frees++;
            return;
        }
        if (ot->pending && e->level == L_SEGMENT)
            ot->released += e->size;
        int grad_free = !ev->backward && e->phase == PHASE_BACKWARD &&
                        (e->level == L_INNER || e->level == L_TENSOR) &&
                        (replay_size_bits(s, e->size) & 1) && !ot->pending;
        if (grad_free) { /* a gradient freed: what an optimizer step made and keeps past this is
                          * its state */
            int first = !s->grad_free_event;
            s->grad_free_event = s->event;
            replay_cats_changed(s, first ? CATS_ALL : CATS_GRAD);
        }
        if (grad_free && !s->in_opt) {
            /* the main thread frees a gradient (zero_grad): an optimizer step, even one that
             * allocated nothing (fused / foreach optimizers after their first step); not the
             * frees of the out-of-memory error's unwinding */
            replay_phase_step(s);
            replay_cats_changed(s, CATS_ITER);
            ph = PHASE_OPTIMIZER;
        }
        timeline_freed(r->tl, ev, e->size);
        growth_free(&r->growth, e->stack_id, e->size, e->level == L_TENSOR || e->level == L_INNER,
                    e->level == L_TENSOR || e->level == L_SEGMENT || e->level == L_OTHER);
        replay_snap_on_free(s, e, ph, ot->pending, ev->time_ns);
    }
}

/* apply_event: one event; a physical handle counts from its first map (replay_vmm.c): its
 * creation is held, and applied (with its own stack) when the map comes, before the map. */
static void apply_event(state *s, int is_alloc, const reader_event *ev, oom_track *ot)
{
    if (!ev->failed && is_alloc && ev->api == VT_API_cuMemCreate && ev->addr &&
        !replay_vmm_hold(s, ev))
        return;
    if (!ev->failed && !is_alloc && ev->api == VT_API_cuMemRelease &&
        replay_vmm_release(s, ev->addr))
        return;
    reader_event c;
    if (!ev->failed && is_alloc && ev->api == VT_API_cuMemMap && ev->has_aux &&
        replay_vmm_take(s, ev->aux, &c)) {
        uint64_t hash = s->hash;
        c.time_ns = ev->time_ns;
        s->hash = livemap_mix(c.addr, (unsigned)reader_api_space(c.api));
        apply_one(s, 1, &c, ot);
        s->hash = hash;
    }
    apply_one(s, is_alloc, ev, ot);
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
        uint64_t event, hash; /* hash: livemap_mix of its key, computed once */
    } ring[RING];
    unsigned head = 0, count = 0;
#define VT_DRAIN_ONE()                                                                             \
    do {                                                                                           \
        struct pending *p_ = &ring[head];                                                          \
        s->event = p_->event;                                                                      \
        s->hash = p_->hash;                                                                        \
        apply_event(s, p_->is_alloc, &p_->ev, ot);                                                 \
        replay_cats_sweep(s);                                                                      \
        head = (head + 1) % RING;                                                                  \
        count--;                                                                                   \
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
            p->hash = livemap_mix(rec.u.ev.addr, (unsigned)reader_api_space(rec.u.ev.api));
            count++;
            livemap_prefetch_h(&s->live, p->hash);
            if (rec.u.ev.api == VT_API_torchAlloc || rec.u.ev.api == VT_API_torchFree)
                blocks_prefetch(&s->blocks, rec.u.ev.addr); /* PyTorch's blocks too */
            if (rec.u.ev.stack_id < s->nfacts)              /* and the facts of its stack */
                __builtin_prefetch(&s->facts[rec.u.ev.stack_id]);
            if (count > RING / 2) { /* its index slot is in cache by now: its entry next */
                const struct pending *h = &ring[(head + RING / 2) % RING];
                livemap_prefetch_entry_h(&s->live, h->ev.addr,
                                         (unsigned)reader_api_space(h->ev.api), h->hash);
            }
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
        if (tables_add(r->t, &rec) < 0) { /* out of memory: the tables would lack it */
            snprintf(err, errlen, "%s: out of memory", r->path);
            return VT_EXIT_USAGE;
        }
        switch (rec.type) {
        case VT_REC_OOM:
            if (ot->pending && !r->oom_capacity)
                r->oom_capacity = rec.u.oom.capacity;
            break;
        case VT_REC_TRAILER:
            if (rec.u.trailer.end_ns > r->end_ns)
                r->end_ns = rec.u.trailer.end_ns;
            r->ended = rec.flags;
            r->run_events = rec.u.trailer.n_events;
            r->run_dropped = rec.u.trailer.n_dropped;
            break;
        case VT_REC_STEP:
            growth_step_record(&r->growth, &rec.u.step, replay_phase_of_stack, s);
            break;
        case VT_REC_SNAPSHOT: /* a chunked trace's events before this are gone: how many, when */
        {
            /* the run's events read so far: all but the snapshots' allocations, plus those gone */
            uint64_t run = r->n_events - r->snapshot_events + r->dropped_events;
            if (rec.u.snap.fixed.events_before > run)
                r->dropped_events += rec.u.snap.fixed.events_before - run;
            if (!r->dropped_from_ns)
                r->dropped_from_ns = r->end_ns;
            r->dropped_to_ns = r->snapshot_ns = rec.u.snap.time_ns;
            r->snapshot_allocs = rec.u.snap.fixed.n_allocs;
            r->snapshot_events += rec.u.snap.fixed.n_allocs;
            break;
        }
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

static int replay_reader(const char *path, reader *rd, replay_result *out, char *err,
                         size_t errlen);

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
    state s;
    memset(&s, 0, sizeof s);
    s.r = out;
    replay_cats_begin(&s);
    s.infer = infer_pass_new();
    out->minor = reader_header(rd)->minor;
    oom_track ot;
    memset(&ot, 0, sizeof ot);
    int rc = run_pass(&s, rd, &ot, err, errlen);
    const char *why = reader_error_message(rd); /* "no trailer", "last record cut at byte N" */
    snprintf(out->status_msg, sizeof out->status_msg, "%s",
             out->status == READER_TRUNCATED && why && *why ? why
                                                            : reader_status_name(out->status));
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
    if (s.infer) /* the trace ended before the first backward did */
        out->has_inferred = infer_finish(s.infer, &out->inferred) == 0;
    infer_pass_free(s.infer);
    replay_vmm_end(&s);
    replay_cats_flush(&s); /* what was freed after the last allocation: kept to the end */
    replay_snap_finish_peak(&s);
    for (size_t i = 0; i < out->at_oom.n; i++) /* released but never confirmed: not cache */
        out->at_oom.items[i].oom_released = out->at_oom.items[i].oom_released == 2;
    if (!out->has_oom) {
        free(out->at_oom.items);
        out->at_oom.items = NULL;
        out->at_oom.n = 0;
    }
    replay_snap_classify(&s, out, &out->at_peak);
    if (out->at_tensors.n)
        replay_snap_classify(&s, out, &out->at_tensors);
    if (out->has_oom)
        replay_snap_classify(&s, out, &out->at_oom);
    replay_cats_end(&s);
    out->backward_passes = s.bwd;
    if (!s.accum_mixed && s.accum_steps) {
        out->accum = s.accum;
        out->accum_steps = s.accum_steps;
    }
    if (s.blocks_on && out->allocator_mode) {
        out->blocks_basis = s.blocks.rules.basis;
        out->peak_allocated_blocks = s.blocks.peak;
        out->t_allocated_blocks = s.blocks.t_peak;
        out->blocks_unplaced = s.blocks.unplaced;
    }
    blocks_free_all(&s.blocks);
    livemap_free(&s.live);
    free(s.facts);
    phases_memo_free(&s.memo);
    free(s.ret);
    free(s.ret2);
    free(s.pend);
    free(s.half);
    free(s.init_sizes);
    replay_cats_free_all(&s);
    reader_close(rd);
    return rc;
}

void replay_free(replay_result *r)
{
    free(r->at_peak.items);
    free(r->at_tensors.items);
    free(r->at_oom.items);
    tables_free(r->t);
    timeline_free(r->tl);
    growth_free_all(&r->growth);
    memset(r, 0, sizeof *r);
}
