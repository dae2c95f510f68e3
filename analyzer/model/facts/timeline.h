/* timeline.h — what the visual views draw over time, collected while a trace is replayed
 * (model/replay.c) and its category lifetimes swept (catpeaks.c): live bytes per category in
 * at most TIMELINE_BUCKETS buckets (each keeps every category's maximum exactly, when, and the
 * value at its end), phase slices per thread, optimizer-step ticks, and the last TIMELINE_RING
 * actions of PyTorch's allocator (memory_viz's device trace). Views: perfetto.c, memviz.c, html.c.
 */
#ifndef VT_ANALYZER_TIMELINE_H
#define VT_ANALYZER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "categories.h"
#include "reader.h"

#define TIMELINE_BUCKETS 8192
#define TIMELINE_SLICES_MAX 200000
#define TIMELINE_TICKS_MAX 100000
#define TIMELINE_RING 20000
#define TIMELINE_THREADS 64

typedef struct timeline_bucket {
    int used;
    uint64_t t_first, t_last; /* first and last event swept into it */
    uint64_t max[CAT_COUNT], t_max[CAT_COUNT], last[CAT_COUNT];
} timeline_bucket;

typedef struct timeline_slice {
    uint64_t t0, t1;
    uint32_t thread; /* the events' thread index (tables_thread_get) */
    uint8_t phase;   /* enum phase */
} timeline_slice;

/* X(ENUM, "memory_viz action name") */
#define VT_TIMELINE_ACTIONS(X)                                                                     \
    X(ALLOC, "alloc")                                                                              \
    X(FREE, "free_completed")                                                                      \
    X(SEGMENT_ALLOC, "segment_alloc")                                                              \
    X(SEGMENT_FREE, "segment_free")                                                                \
    X(OOM, "oom")

typedef enum timeline_action_kind {
#define VT_TL_ENUM(e, name) TL_##e,
    VT_TIMELINE_ACTIONS(VT_TL_ENUM)
#undef VT_TL_ENUM
        TL_COUNT
} timeline_action_kind;

typedef struct timeline_action {
    uint64_t time_ns, addr, size;
    uint32_t stack_id;
    uint16_t stream;
    uint8_t kind, device;
} timeline_action;

/* Bytes allocated over the whole run by (stack, category): `flame --at all`. */
typedef struct timeline_total {
    uint32_t stack_id; /* the slot is empty when bytes == 0 */
    uint8_t category;
    uint64_t bytes, count;
} timeline_total;

typedef struct timeline {
    timeline_bucket *b; /* TIMELINE_BUCKETS of them; has_cats when the sweep filled them */
    int has_cats;
    timeline_slice *slices;
    size_t nslices, capslices;
    int slices_cut; /* more than TIMELINE_SLICES_MAX: the later ones are missing */
    uint32_t open_thread[TIMELINE_THREADS];
    size_t open_slice[TIMELINE_THREADS]; /* index + 1 of the thread's open slice */
    unsigned nopen;
    uint64_t *ticks; /* time of each optimizer step's first event */
    size_t nticks, capticks;
    uint32_t last_iter;
    timeline_action *ring; /* TIMELINE_RING, the newest at (ring_head - 1) */
    size_t ring_head, ring_n;
    uint64_t ring_total; /* actions seen (ring_total - ring_n dropped, the oldest) */
    uint64_t t_begin, t_end;
    int seen;
    timeline_total *totals; /* open addressing, captotals slots (a power of two) */
    size_t ntotals, captotals;
    int totals_lost; /* out of memory: `flame --at all` says so */
} timeline;

/* timeline_new: an empty timeline (malloc'ed); NULL when out of memory (the views then say
 * so). timeline_free: frees it (NULL is fine). */
timeline *timeline_new(void);
void timeline_free(timeline *tl);
/* timeline_event: one event of the replay, its phase and the optimizer steps so far: the
 * thread's phase slice, a tick when a step begins, an allocator action (allocations of
 * PyTorch's tensors and segments, its OOM). tl may be NULL. */
void timeline_event(timeline *tl, const reader_event *ev, int is_alloc, int phase, uint32_t iter);
/* timeline_freed: a free of a live allocation of size bytes (a tensor's: an allocator action). */
void timeline_freed(timeline *tl, const reader_event *ev, uint64_t size);
/* timeline_cats: the sweep of category lifetimes: the live bytes per category after the
 * event at time t, the index-th of n deltas. */
void timeline_cats(timeline *tl, size_t index, size_t n, uint64_t t, const int64_t cur[CAT_COUNT]);
/* timeline_totals: set it (before the replay) for the totals by stack: `flame --at all` does;
 * a hash lookup per allocation that the other commands do not pay. */
extern int timeline_totals;
/* timeline_total_add: one allocation of the run (size bytes, category cat, made at stack_id),
 * classified once its lifetime is known. */
void timeline_total_add(timeline *tl, uint32_t stack_id, int cat, uint64_t size);
/* timeline_action_name: "alloc", ...; "?" out of range. */
const char *timeline_action_name(int kind);
/* timeline_ring_at: the i-th kept action, oldest first (i < ring_n). */
const timeline_action *timeline_ring_at(const timeline *tl, size_t i);

#endif
