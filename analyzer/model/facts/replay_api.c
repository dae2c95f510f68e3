/* replay_api.c — what the replay (replay.c) needs of each API id at once (state.apinfo), and the
 * events with more to them than a live-set entry (AP_SPECIAL): PyTorch's allocator tracker (its
 * notes, its segments named, its blocks, its OOM), failed allocations, contexts, the inference
 * pass's notes. Part of the one replay. */
#include <string.h>

#include "replay_state.h"

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

/* torch_segment: e is PyTorch's segment, its tracker said: its cache until a tensor comes into
 * it, and the run in allocator mode from now on, as its first tensor would say (that tensor's
 * ALLOC comes right after). A run cut before it had been read as segment mode: the segment
 * counted under its phase (parameters: 94 MiB of llama160m_b4_fit cut at 5 %, 20 to 198 MiB in
 * 5 of the 2,698 cuts of the committed traces at 5 to 95 %), where flame --at all left it out
 * as PyTorch's cache. */
static void torch_segment(state *s, livemap_entry *e)
{
    replay_cats_marked(s, e);
    if (!s->r->allocator_mode) {
        s->r->tensor_mode = s->r->allocator_mode = 1;
        replay_cats_tensors(s, 1);
    }
}

/* mark_torch_segments: the allocator tracker reported a segment (SEGMENT_ALLOC: a cudaMalloc
 * at addr; SEGMENT_MAP: the cuMemMap chunks mapped into [addr, addr + size) since the last one):
 * flag the live segment entries as PyTorch's, so a snapshot counts them as its cache. */
void replay_mark_torch_segments(state *s, const reader_event *ev)
{
    if (ev->api == VT_API_torchSegmentAlloc) {
        livemap_entry *e = livemap_find(&s->live, ev->addr, VT_SPACE_DEVICE);
        if (e && e->level == L_SEGMENT)
            torch_segment(s, e);
    } else if (ev->api == VT_API_torchSegmentMap) {
        for (unsigned i = 0; i < s->nmaps; i++) {
            if (s->maps[i].va < ev->addr || s->maps[i].va - ev->addr >= ev->size)
                continue;
            livemap_entry *e = livemap_find(&s->live, s->maps[i].handle, VT_SPACE_VMM_HANDLE);
            if (e && e->level == L_SEGMENT)
                torch_segment(s, e);
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

/* blocks_start: the emulation begins, under the rules of the run's allocator settings (apart:
 * the tensors' path saves no registers for it) */
static __attribute__((noinline)) void blocks_start(state *s)
{
    const char *conf = tables_env(s->r->t, "PYTORCH_ALLOC_CONF");
    blocks_rules rules =
        blocks_rules_parse(conf ? conf : tables_env(s->r->t, "PYTORCH_CUDA_ALLOC_CONF"));
    blocks_init(&s->blocks, &rules);
    s->blocks_on = 1;
}

/* track_blocks: the allocator tracker's tensors and segments, to PyTorch's block sizes (blocks.c),
 * under the rules of the run's allocator settings (read at its first event). */
void replay_track_blocks_more(state *s, const reader_event *ev)
{
    if (ev->failed || ev->api < VT_API_torchAlloc ||
        (ev->api > VT_API_torchSegmentUnmap && ev->api != VT_API_torchFreeRequested))
        return;
    if (__builtin_expect(!s->blocks_on, 0))
        blocks_start(s);
    switch (ev->api) {
    case VT_API_torchAlloc:
        blocks_alloc(&s->blocks, ev->addr, ev->size, ev->time_ns);
        break;
    case VT_API_torchFree:
        blocks_free(&s->blocks, ev->addr);
        break;
    case VT_API_torchFreeRequested: /* completed later (record_stream): out of the count now */
        blocks_free_request(&s->blocks, ev->addr);
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

/* ---- allocations of the APIs with more to them -------------------------------------------- */

/* fwd0_copies_live: the first forward's weight copies alive now (a walk, once an OOM begins) */
static uint32_t fwd0_copies_live(state *s)
{
    uint32_t n = 0;
    for (uint64_t k = 0; k < s->live.ne; k++) {
        const livemap_entry *e = livemap_live_entry(&s->live, k);
        n += e && (e->level == L_TENSOR || e->level == L_INNER) &&
             first_forward_copy(s, e->flags, e->phase, e->size);
    }
    return n;
}

/* oom_begins: an out-of-memory error in phase ph: in a frozen first forward? (frozen_oom): every
 * copy freed after use but the failing op's, made since the last free. Not where copies made
 * before that free are alive still: a frozen network a gradient flows through to its input (a
 * trained embedding before it: textual inversion) keeps its ops' copies and activations for the
 * backward, and only copies of 16-bit ops after it (its norms' fp32 casts) had been freed */
static void oom_begins(state *s, uint8_t ph)
{
    replay_result *r = s->r;
    s->frozen_oom = ph == PHASE_FORWARD && !s->bwd && !s->iter && r->fwd0_copies_freed > 0 &&
                    r->fwd0_copies_since_free <= 2 &&
                    fwd0_copies_live(s) <= r->fwd0_copies_since_free;
    r->oom_iter = s->iter;
    r->oom_bwd = s->bwd, r->oom_fwd_bwd = s->fwd_bwd;
    s->bwd_oom = ph == PHASE_BACKWARD ? s->bwd : 0;
    replay_snap_oom(s);
}

/* After an error the program caught (s->oom_rec, oom_of_record: not an evaluation's, whose batch
 * failed, not the training's configuration), every later failure is tentative: counted, but the
 * caught one stays the run's OOM (its configuration, the one the trace's first forward shows)
 * whether the later one is recovered (its allocator's retry), caught too (a smaller batch's retry
 * that failed again), or an evaluation's; only a trace that ends in it makes it the run's OOM. Its
 * own snapshot is taken as it begins, the caught one's set aside (replay_oom.h oom_aside). (Two
 * caught errors' OOM had been the second's beside the first's configuration.) */
static int oom_of_record(const oom_track *ot)
{
    return ot->caught && ot->phase != PHASE_EVAL;
}

void replay_oom_restore(state *s, oom_track *ot)
{
    if (!ot->caught) /* (recovered: a request as large succeeded) */
        replay_went_on_resolved(s, ot, 0);
    if (ot->tentative && s->oom_rec.caught) {
        *ot = s->oom_rec; /* the caught one is the run's OOM again (not pending) */
        replay_snap_oom_back(s);
    }
}

void replay_oom_caught(state *s, oom_track *ot)
{
    replay_result *r = s->r;
    ot->pending = s->frozen_oom = 0; /* (its unwinding over: the frees after are the program's) */
    if (!ot->caught) {
        ot->caught = 1;
        if (!r->oom_caught++)
            r->caught = (replay_oom_caught_first){ot->time_ns, ot->requested, ot->first_event,
                                                  ot->stack,   ot->iter,      ot->bwd,
                                                  ot->phase,   ot->emulated};
    }
    replay_went_on_resolved(s, ot, 1);
    replay_oom_restore(s, ot);
}

void replay_oom_news(state *s, oom_track *ot)
{
    /* what the waiting allocations' categories may depend on changed (replay_cats.c): the
     * parameters' sizes and the vocabulary are final, a backward pass or a step began */
    int moved = (s->news & (REPLAY_NEWS_BWD | REPLAY_NEWS_ITER)) != 0;
    if (!s->cats_on) /* (no sweep, for the rest of the run: nothing waits) */
        ;
    else if (s->news & REPLAY_NEWS_VOCAB)
        replay_cats_keys_changed(s);
    else if (moved)
        replay_cats_changed(s);
    if (!moved || !ot->pending)
        return;
    replay_oom_caught(s, ot); /* the program went on from it */
    /* (the passes before: the attempt it cut short, not this A) */
    if (!(s->news & REPLAY_NEWS_ITER))
        s->bwd_at_step = s->bwd - 1;
}

void replay_oom_end(state *s, oom_track *ot)
{
    if (ot->pending && ot->tentative) { /* (the run's OOM: its snapshot, taken when it began) */
        ot->tentative = 0;
        s->oom_rec.caught = 0;
        s->won.ended_in = ot->phase != PHASE_EVAL && s->won.event == ot->first_event;
    }
    replay_snap_oom_drop(s);
}

/* oom_track_new: an out-of-memory failure (a request of size) begins at this event, in phase ph;
 * one still pending before it was caught (the program went on to a request of another size);
 * after a caught one, tentative (above) */
static void oom_track_new(state *s, oom_track *ot, const reader_event *ev, uint8_t ph,
                          uint8_t emulated)
{
    if (ot->pending)
        replay_oom_caught(s, ot);
    if (oom_of_record(ot) && !ot->tentative)
        s->oom_rec = *ot;
    *ot = (oom_track){.pending = 1,
                      .first_event = s->event,
                      .requested = ev->size,
                      .time_ns = ev->time_ns,
                      .last_event = s->event,
                      .stack = ev->stack_id,
                      .fails = 1,
                      .phase = ph,
                      .emulated = emulated,
                      .tentative = s->oom_rec.caught,
                      .iter = s->iter,
                      .bwd = s->bwd};
    if (ph != PHASE_EVAL) /* (an evaluation's batch failed, not the training's) */
        replay_went_on_open(s, ot);
    if (ot->tentative) /* (its own snapshot too: the trace may end in it) */
        replay_snap_oom_aside(s);
    oom_begins(s, ph);
}

void replay_oom_result(state *s, const oom_track *ot)
{
    replay_result *r = s->r;
    /* (caught: the run's OOM still, one it went on from; not an evaluation's, whose batch failed,
     * not the training's configuration) */
    if (ot->pending || oom_of_record(ot)) {
        r->has_oom = 1;
        r->oom_requested = ot->requested;
        r->oom_time_ns = ot->time_ns;
        r->oom_went_on = ot->caught;
        r->oom_stack = ot->stack;
        r->oom_phase = ot->phase;
        r->oom_emulated = ot->emulated;
        r->oom_frozen_forward = s->frozen_oom;
        r->oom_cache_released = ot->released;
        r->oom_pytorch_pattern = ot->fails >= 2 && ot->released > 0;
        r->at_oom.event = ot->first_event;
        r->oom_last_event = ot->last_event;
        r->at_oom.time_ns = ot->time_ns;
    }
}

int replay_special_alloc(state *s, const reader_event *ev, oom_track *ot, uint8_t ph)
{
    replay_result *r = s->r;
    if (ev->api == VT_API_torchTrackerNote && ev->size != VT_TRACKER_DROPPED)
        r->tracker_note = (int)ev->size, r->tracker_detail = ev->addr;
    if (!ev->failed && (ev->api == VT_API_torchSegmentAlloc || ev->api == VT_API_torchSegmentMap ||
                        ev->api == VT_API_cuMemMap))
        replay_mark_torch_segments(s, ev);
    if (ev->api == VT_API_torchOom && ot->pending) {
        ot->raised = 1; /* the failed requests before it: PyTorch raised OutOfMemoryError */
        return 1;
    }
    if (ev->api == VT_API_torchOom) {
        /* PyTorch's allocator raised OutOfMemoryError with no failed CUDA call before it
         * (a memory-fraction limit): the tracker's OOM is the only sign (size = request) */
        oom_track_new(s, ot, ev, ph, 0);
        ot->raised = 1;
        return 1;
    }
    if (ev->failed) {
        r->n_failed++;
        if (ev->result == 2 && reader_api_kind(ev->api) == VT_KIND_ALLOC) {
            if (ot->pending && ot->requested == ev->size && !ot->raised) {
                ot->fails++;
                ot->last_event = s->event;
                for (size_t i = 0; i < r->at_oom.n; i++) /* confirm the released cache */
                    if (r->at_oom.items[i].oom_released == 1)
                        r->at_oom.items[i].oom_released = 2;
            } else {
                oom_track_new(s, ot, ev, ph, ev->emulated);
            }
        }
        return 1;
    }
    if (reader_api_kind(ev->api) == VT_KIND_CONTEXT)
        r->n_contexts++;
    return 0;
}

/* infer_note: one event for infer.c's pass (freed_event: the allocation a free frees, or 0). */
void replay_infer_note(state *s, int is_alloc, const reader_event *ev, uint64_t freed_event)
{
    int made = is_alloc ? replay_phase_made(s, ev->stack_id) : INFER_MADE_UNKNOWN;
    infer_pass_event_made(s->infer, s->event, is_alloc, ev, freed_event, made);
    if (infer_pass_done(s->infer))
        replay_infer_end(s);
}

void replay_infer_end(state *s)
{
    if (!s->infer)
        return;
    s->r->inferred_from = infer_pass_copy(s->infer);
    s->r->has_inferred = infer_finish(s->infer, &s->r->inferred) == 0;
    infer_pass_free(s->infer);
    s->infer = NULL;
}

/* apinfo: what the pass needs of each API id at once (replay_state.h's AP_*). */
void replay_apinfo_init(state *s)
{
    for (unsigned api = 0; api < 256; api++) {
        int kind = reader_api_kind(api);
        int special = api >= VT_API_torchAlloc || kind == VT_KIND_CONTEXT ||
                      api == VT_API_cuMemCreate || api == VT_API_cuMemRelease ||
                      api == VT_API_cuMemMap;
        s->apinfo[api] =
            (uint16_t)((unsigned)level_of(api) | (unsigned)reader_api_space(api) << 3 |
                       (unsigned)reader_api_layer(api) << 7 | (special ? AP_SPECIAL : 0) |
                       (api == VT_API_torchAlloc || api == VT_API_torchFree ? AP_TORCH : 0));
    }
}
