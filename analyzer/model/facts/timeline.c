/* timeline.c — the replay's timeline for the visual views (timeline.h): bounded buckets,
 * slices, ticks and a ring of allocator actions; nothing here grows with the trace's length
 * past its caps. */
#include "timeline.h"

#include "phases.h"
#include "hashseed.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

int timeline_totals;
int timeline_segments;
int timeline_actions;

timeline *timeline_new(void)
{
    timeline *tl = calloc(1, sizeof *tl);
    if (!tl)
        return NULL;
    tl->b = calloc(TIMELINE_BUCKETS, sizeof *tl->b);
    if (!tl->b) {
        timeline_free(tl);
        return NULL;
    }
    return tl;
}

void timeline_free(timeline *tl)
{
    if (!tl)
        return;
    free(tl->b);
    free(tl->ring);
    free(tl->slices);
    free(tl->ticks);
    free(tl->totals);
    free(tl);
}

const char *timeline_action_name(int kind)
{
    static const char *const names[] = {
#define VT_TL_NAME(e, name) name,
        VT_TIMELINE_ACTIONS(VT_TL_NAME)
#undef VT_TL_NAME
    };
    return kind >= 0 && kind < TL_COUNT ? names[kind] : "?";
}

const timeline_action *timeline_ring_at(const timeline *tl, size_t i)
{
    size_t first = (tl->ring_head + TIMELINE_RING - tl->ring_n) % TIMELINE_RING;
    return &tl->ring[(first + i) % TIMELINE_RING];
}

/* ring_on: an action of event ev (kind, size) on device; ring_push: on the event's device */
static void ring_on(timeline *tl, const reader_event *ev, int kind, uint64_t size, uint8_t device)
{
    if (!timeline_actions)
        return;
    /* (made at the first action, whole: 4 MiB, a mapping of its own whose pages come as they
     * are written; grown by doubling, a copy's room of 64 MiB of address space had been asked
     * for, past a `ulimit -v` the export had fitted in. Out of memory, the action is lost and
     * mem.h has it: the export says so) */
    if (!tl->ring && !(tl->ring = calloc(TIMELINE_RING, sizeof *tl->ring)))
        return;
    tl->ring[tl->ring_head] = (timeline_action){ev->time_ns, ev->addr,      size,  ev->stack_id,
                                                ev->stream,  (uint8_t)kind, device};
    tl->ring_head = (tl->ring_head + 1) % TIMELINE_RING;
    if (tl->ring_n < TIMELINE_RING)
        tl->ring_n++;
    tl->ring_total++;
}

static void ring_push(timeline *tl, const reader_event *ev, int kind, uint64_t size)
{
    ring_on(tl, ev, kind, size, ev->device);
}

/* grow: room for one more of size sz in *p (n held, capacity *cap, at most max); 0 when full. */
static int grow(void **p, size_t *cap, size_t n, size_t sz, size_t max)
{
    return mem_grow(p, cap, n + 1, sz, 1024, max) == 0;
}

static void slice_note(timeline *tl, uint32_t thread, int ph, uint64_t t, int is_alloc)
{
    unsigned k = 0;
    while (k < tl->nopen && tl->open_thread[k] != thread)
        k++;
    if (k == tl->nopen) {
        if (tl->nopen == TIMELINE_THREADS)
            return; /* more threads than tracked: their phases are not drawn */
        tl->open_thread[tl->nopen] = thread;
        tl->open_slice[tl->nopen++] = 0;
    }
    timeline_slice *o = tl->open_slice[k] ? &tl->slices[tl->open_slice[k] - 1] : NULL;
    /* another thread's event outside the backward: the backward is over, and the slices of the
     * threads that ran it (the autograd engine's) end at their last event, not at their next
     * backward's first (they had spanned every forward and step between) */
    for (unsigned j = 0; ph != PHASE_BACKWARD && j < tl->nopen; j++)
        if (j != k && tl->open_slice[j] &&
            tl->slices[tl->open_slice[j] - 1].phase == PHASE_BACKWARD)
            tl->open_slice[j] = 0;
    if (is_alloc)
        tl->open_quiet[k] = 0;
    else if (o && !tl->open_quiet[k] && t - o->t1 >= TIMELINE_PAUSE_NS && t - o->t1 > o->t1 - o->t0)
        tl->open_quiet[k] = o->t1, tl->open_after[k] = t, tl->quiet_slice[k] = tl->open_slice[k];
    if (o && o->phase == ph) {
        o->t1 = t;
        return;
    }
    if (o)
        o->t1 = t;
    if (!grow((void **)&tl->slices, &tl->capslices, tl->nslices, sizeof *tl->slices,
              TIMELINE_SLICES_MAX)) {
        tl->slices_cut = 1;
        return;
    }
    tl->slices[tl->nslices] = (timeline_slice){t, t, thread, (uint8_t)ph};
    tl->open_slice[k] = ++tl->nslices;
}

void timeline_gap(timeline *tl)
{
    for (unsigned k = 0; tl && k < tl->nopen; k++)
        tl->open_slice[k] = 0, tl->open_quiet[k] = 0;
}

void timeline_end(timeline *tl)
{
    if (!tl)
        return;
    timeline_slice rest[TIMELINE_THREADS];
    unsigned nrest = 0;
    int dropped = 0;
    for (unsigned k = 0; k < tl->nopen; k++) {
        if (!tl->open_quiet[k] || tl->quiet_slice[k] > tl->nslices)
            continue;
        size_t q = tl->quiet_slice[k] - 1;
        uint32_t th = tl->open_thread[k];
        uint64_t t_last = tl->slices[q].t1;
        /* the thread's slices after the pause (its frees alone) give way to one "other" */
        for (size_t i = q + 1; i < tl->nslices; i++)
            if (tl->slices[i].thread == th) {
                t_last = tl->slices[i].t1 > t_last ? tl->slices[i].t1 : t_last;
                tl->slices[i].phase = PHASE_COUNT, dropped = 1;
            }
        tl->open_slice[k] = 0;
        if (tl->slices[q].phase == PHASE_OTHER) {
            tl->slices[q].t1 = t_last;
            continue;
        }
        tl->slices[q].t1 = tl->open_quiet[k];
        rest[nrest++] = (timeline_slice){tl->open_after[k], t_last, th, PHASE_OTHER};
    }
    size_t n = 0;
    for (size_t i = 0; dropped && i < tl->nslices; i++)
        if (tl->slices[i].phase != PHASE_COUNT)
            tl->slices[n++] = tl->slices[i];
    if (dropped)
        tl->nslices = n;
    for (unsigned i = 0; i < nrest; i++) {
        if (!grow((void **)&tl->slices, &tl->capslices, tl->nslices, sizeof *tl->slices,
                  TIMELINE_SLICES_MAX)) {
            tl->slices_cut = 1;
            break;
        }
        tl->slices[tl->nslices++] = rest[i];
    }
}

void timeline_event(timeline *tl, const reader_event *ev, int is_alloc, int ph, uint32_t iter)
{
    if (!tl)
        return;
    uint64_t t = ev->time_ns;
    if (!tl->seen || t < tl->t_begin)
        tl->t_begin = t;
    if (t > tl->t_end)
        tl->t_end = t;
    tl->seen = 1;
    /* (a segment given back is no allocation: a pause before it stays one) */
    slice_note(tl, ev->thread, ph, t, is_alloc && !reader_api_gives_back(ev->api));
    if (iter > tl->last_iter) {
        tl->last_iter = iter;
        if (grow((void **)&tl->ticks, &tl->capticks, tl->nticks, sizeof *tl->ticks,
                 TIMELINE_TICKS_MAX))
            tl->ticks[tl->nticks++] = t;
    }
    if (!is_alloc)
        return;
    if (ev->api == VT_API_torchOom || (ev->failed && ev->api == VT_API_torchAlloc))
        ring_push(tl, ev, TL_OOM, ev->size);
    else if (ev->failed)
        return;
    else if (ev->api == VT_API_torchAlloc)
        ring_push(tl, ev, TL_ALLOC, ev->size);
    else if (ev->api == VT_API_torchSegmentAlloc || ev->api == VT_API_torchSegmentMap)
        ring_push(tl, ev, TL_SEGMENT_ALLOC, ev->size);
    else if (reader_api_gives_back(ev->api))
        ring_push(tl, ev, TL_SEGMENT_FREE, ev->size);
}

void timeline_freed(timeline *tl, const reader_event *ev, uint64_t size, int stream_ordered,
                    uint8_t device)
{
    if (!tl || ev->failed)
        return;
    if (ev->api == VT_API_torchFree) {
        ring_push(tl, ev, TL_FREE, size);
    } else if (stream_ordered) { /* (cudaFreeAsync names no device: its allocation's) */
        ring_on(tl, ev, TL_FREE, size, device);
        ring_on(tl, ev, TL_SEGMENT_FREE, size, device);
    }
}

void timeline_stream_oom(timeline *tl, const reader_oom *o)
{
    if (!tl)
        return;
    reader_event ev = {.time_ns = o->time_ns,
                       .addr = o->capacity > o->process_used ? o->capacity - o->process_used : 0,
                       .stack_id = o->stack_id,
                       .device = o->device};
    ring_push(tl, &ev, TL_OOM, o->requested);
}

void timeline_stream_made(timeline *tl, const reader_event *ev)
{
    if (!tl)
        return;
    ring_push(tl, ev, TL_SEGMENT_ALLOC, ev->size);
    ring_push(tl, ev, TL_ALLOC, ev->size);
}

/* merge: bucket b (the later) into a, as if their moments had been swept into one. */
static void merge(timeline_bucket *a, const timeline_bucket *b)
{
    if (!b->used)
        return;
    if (!a->used) {
        *a = *b;
        return;
    }
    if (b->hi.total > a->hi.total)
        a->hi = b->hi;
    if (b->lo.total < a->lo.total)
        a->lo = b->lo;
    a->end = b->end;
    a->t_last = b->t_last;
}

void timeline_cats(timeline *tl, uint64_t event, uint64_t t, const int64_t cur[CAT_COUNT])
{
    if (!tl || !event)
        return;
    if (!tl->width)
        tl->width = 1;
    while ((event - 1) / tl->width >= TIMELINE_BUCKETS) { /* twice as wide: neighbours merged */
        for (size_t i = 0; i < TIMELINE_BUCKETS / 2; i++) {
            timeline_bucket m = tl->b[2 * i];
            merge(&m, &tl->b[2 * i + 1]);
            tl->b[i] = m;
        }
        memset(tl->b + TIMELINE_BUCKETS / 2, 0, TIMELINE_BUCKETS / 2 * sizeof *tl->b);
        tl->width *= 2;
    }
    timeline_bucket *b = &tl->b[(event - 1) / tl->width];
    timeline_moment m;
    m.seq = ++tl->nmoments;
    m.t = t;
    m.total = 0;
    for (int c = 0; c < CAT_COUNT; c++) {
        m.v[c] = cur[c] > 0 ? (uint64_t)cur[c] : 0;
        m.total += m.v[c];
    }
    tl->has_cats = 1;
    if (!b->used) {
        b->used = 1;
        b->t_first = t;
        b->hi = b->lo = m;
    } else if (m.total > b->hi.total)
        b->hi = m;
    else if (m.total < b->lo.total)
        b->lo = m;
    b->t_last = t;
    b->end = m;
    if (m.total > tl->top.total || !tl->top.seq)
        tl->top = m;
    if (tl->peak_event && event == *tl->peak_event)
        tl->at_peak = m;
    if (tl->tensors_event && event == *tl->tensors_event)
        tl->at_tensors = m;
    /* the last moment before the failure (a failed call changes no level) */
    if (tl->oom_event && event <= *tl->oom_event)
        tl->at_oom = m;
    tl->last = m;
    for (int p = 0; tl->phase_events && p < PHASE_COUNT; p++)
        if (event == tl->phase_events[p])
            tl->at_phase[p] = m;
    for (int c = 0; c < CAT_COUNT; c++)
        if (m.v[c] > tl->cat_top[c].v[c])
            tl->cat_top[c] = m;
}

static int cmp_seq(const void *a, const void *b)
{
    uint64_t x = (*(const timeline_moment *const *)a)->seq;
    uint64_t y = (*(const timeline_moment *const *)b)->seq;
    return x < y ? -1 : x > y;
}

const timeline_moment **timeline_moments(const timeline *tl, size_t max, size_t *n)
{
    /* the run's tallest, the two peaks', the OOM's, each category's, each phase's */
    enum { EXTRA = CAT_COUNT + 4 + PHASE_COUNT };
    size_t used = 0, k = 0;
    *n = 0;
    if (!tl || !tl->has_cats || max < 2 * EXTRA)
        return NULL;
    for (size_t i = 0; i < TIMELINE_BUCKETS; i++)
        used += tl->b[i].used;
    size_t groups = (max - EXTRA) / 3, per = used / groups + (used % groups != 0);
    const timeline_moment **m = malloc((3 * groups + EXTRA) * sizeof *m);
    if (!m)
        return NULL;
    const timeline_moment *hi = NULL, *lo = NULL;
    for (size_t i = 0, in = 0; i < TIMELINE_BUCKETS; i++) {
        const timeline_bucket *b = &tl->b[i];
        if (!b->used)
            continue;
        if (!hi || b->hi.total > hi->total)
            hi = &b->hi;
        if (!lo || b->lo.total < lo->total)
            lo = &b->lo;
        if (++in % per && in != used)
            continue;
        /* the group's lowest, tallest and last (in time order below; each moment once): the
         * last shows how the categories moved while the total stood still */
        m[k++] = lo;
        m[k++] = hi;
        m[k++] = &b->end;
        hi = lo = NULL;
    }
    if (tl->top.seq)
        m[k++] = &tl->top;
    if (tl->at_peak.seq)
        m[k++] = &tl->at_peak;
    if (tl->at_tensors.seq)
        m[k++] = &tl->at_tensors;
    if (tl->at_oom.seq)
        m[k++] = &tl->at_oom;
    for (int p = 0; p < PHASE_COUNT; p++)
        if (tl->at_phase[p].seq)
            m[k++] = &tl->at_phase[p];
    for (int c = 0; c < CAT_COUNT; c++)
        if (tl->cat_top[c].seq)
            m[k++] = &tl->cat_top[c];
    qsort(m, k, sizeof *m, cmp_seq);
    size_t j = 0;
    for (size_t i = 0; i < k; i++)
        if (!j || m[i]->seq != m[j - 1]->seq)
            m[j++] = m[i];
    *n = j;
    return m;
}

static size_t total_slot(const timeline_total *t, size_t cap, uint32_t stack_id, int cat)
{
    /* (stack ids are the trace's: seeded, hashseed.h; flame_all sorts what it reads out) */
    size_t j = (size_t)hashseed_mix((uint64_t)stack_id << 8 | (uint8_t)cat) & (cap - 1);
    while (t[j].bytes && (t[j].stack_id != stack_id || t[j].category != cat))
        j = (j + 1) & (cap - 1);
    return j;
}

void timeline_total_add(timeline *tl, uint32_t stack_id, int cat, uint64_t size)
{
    if (!timeline_totals || !tl || !size || tl->totals_lost)
        return;
    if ((tl->ntotals + 1) * 2 > tl->captotals) {
        size_t nc = tl->captotals ? tl->captotals * 2 : 4096;
        timeline_total *n = calloc(nc, sizeof *n);
        if (!n) {
            tl->totals_lost = 1;
            return;
        }
        for (size_t i = 0; i < tl->captotals; i++)
            if (tl->totals[i].bytes)
                n[total_slot(n, nc, tl->totals[i].stack_id, tl->totals[i].category)] =
                    tl->totals[i];
        free(tl->totals);
        tl->totals = n;
        tl->captotals = nc;
    }
    timeline_total *t = &tl->totals[total_slot(tl->totals, tl->captotals, stack_id, cat)];
    if (!t->bytes) {
        *t = (timeline_total){stack_id, (uint8_t)cat, 0, 0};
        tl->ntotals++;
    }
    t->bytes = size > UINT64_MAX - t->bytes ? UINT64_MAX : t->bytes + size;
    t->count++;
}
