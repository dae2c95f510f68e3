/* timeline.h — what the visual views draw over time, collected while a trace is replayed
 * (model/replay.c) and its category lifetimes swept (catpeaks.c): whole moments of live bytes
 * per category (each bucket's tallest, lowest and last — a bucket spans a power of two of events,
 * pairs merged as the run grows; the run's tallest; the moment each category was largest), phase
 * slices per thread, optimizer-step ticks, and the last TIMELINE_RING actions of PyTorch's
 * allocator, or of a stream-ordered one's tensors (memory_viz's device trace). A moment is never a
 * mix of instants, so a stacked drawing of moments never passes the process's peak. Views:
 * perfetto.c, memviz.c, html.c. */
#ifndef VT_ANALYZER_TIMELINE_H
#define VT_ANALYZER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "categories.h"
#include "phases.h"
#include "reader.h"

#define TIMELINE_BUCKETS 8192
#define TIMELINE_SLICES_MAX 200000
#define TIMELINE_TICKS_MAX 100000
/* the allocator actions kept (memory_viz's device trace, 32 bytes each: 4 MiB); a stream-ordered
 * allocator's tensor takes four (its segment's and its own, made and freed): 20,000 had held
 * the last 0.9 s of a 6.9 s tensor-mode run, not its peak */
#define TIMELINE_RING 131072
#define TIMELINE_THREADS 64
/* a pause in a thread's events of at least this, longer than its slice had run, with only
 * frees after it to the end: the program had left that phase (timeline_end) */
#define TIMELINE_PAUSE_NS 100000000ull

/* One instant of the sweep: every category's live bytes after one change; total is their
 * sum, the process's live bytes then. seq orders moments that share a time (0: none). */
typedef struct timeline_moment {
    uint64_t seq, t, total;
    uint64_t v[CAT_COUNT];
} timeline_moment;

typedef struct timeline_bucket {
    int used;
    uint64_t t_first, t_last;    /* first and last event swept into it */
    timeline_moment hi, lo, end; /* its tallest (the first of equals), lowest and last */
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
    uint64_t
        width; /* events per bucket: 1, doubled (neighbours merged) when the run outgrows them */
    timeline_moment top;                /* the run's tallest moment (the first of equals) */
    timeline_moment cat_top[CAT_COUNT]; /* when each category first held its most bytes */
    /* the moment of the process peak's snapshot (replay_result.at_peak): *peak_event is that
     * event; it only moves forward and is final once the sweep reaches it (the replay is ahead) */
    timeline_moment at_peak;
    const uint64_t *peak_event;
    /* the same for the tensors' (allocated) peak (replay_result.at_tensors) */
    timeline_moment at_tensors;
    const uint64_t *tensors_event;
    /* the last moment before an out-of-memory failure's first event (replay_result.
     * oom_seen_event, set when the replay, ahead, meets it): the drawing's categories at the OOM
     * line are the report's OOM column */
    timeline_moment at_oom;
    const uint64_t *oom_event;
    timeline_moment last; /* the latest moment swept (at_oom's when the sweep is not behind) */
    /* the same for each phase's peak (replay_result.phase_peak_event; 0: none): a drawing's
     * phase reaches the report's figure for it (an init phase's had been 1 MiB under) */
    timeline_moment at_phase[PHASE_COUNT];
    const uint64_t *phase_events;
    uint64_t nmoments; /* moments swept (the last seq) */
    timeline_slice *slices;
    size_t nslices, capslices;
    int slices_cut; /* more than TIMELINE_SLICES_MAX: the later ones are missing */
    uint32_t open_thread[TIMELINE_THREADS];
    size_t open_slice[TIMELINE_THREADS]; /* index + 1 of the thread's open slice */
    /* the thread's last event before a pause (TIMELINE_PAUSE_NS, and longer than the slice it
     * was in had run) after which only frees came, that slice (index + 1), and the first event
     * after the pause; 0: none (timeline_end) */
    uint64_t open_quiet[TIMELINE_THREADS], open_after[TIMELINE_THREADS];
    size_t quiet_slice[TIMELINE_THREADS];
    unsigned nopen;
    uint64_t *ticks; /* time of each optimizer step's first event */
    size_t nticks, capticks;
    uint32_t last_iter;
    timeline_action *ring; /* TIMELINE_RING, the newest at (ring_head - 1); NULL: none yet */
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
/* timeline_gap: a bounded trace's gap (events dropped): every thread's slice ends at its last
 * event before it (one had spanned the gap: "backward" for 1.2 s of dropped steps) */
void timeline_gap(timeline *tl);
/* timeline_end: after the replay's last event: a thread's last slice ends at its last event
 * before a pause that only frees followed (the program's end: its tensors released as it
 * finished or exited, after a wait with nothing allocated), and those frees are drawn as an
 * "other" slice: a run's last optimizer step or its failed forward had run to the exit. */
void timeline_end(timeline *tl);
/* timeline_freed: a free of a live allocation of size bytes, made on device (a tensor's: an
 * allocator action); stream_ordered: a tensor of a stream-ordered allocator (cudaMallocAsync,
 * tensor mode), whose pool's segments no trace sees: its free, then its segment's
 * (timeline_stream_made). */
void timeline_freed(timeline *tl, const reader_event *ev, uint64_t size, int stream_ordered,
                    uint8_t device);
/* timeline_stream_made: a stream-ordered allocator's tensor made (cudaMallocAsync: tensor mode)
 * at ev: a segment of its own, then the tensor in it (memory_viz's view of the allocator's state
 * places every block in a segment) */
void timeline_stream_made(timeline *tl, const reader_event *ev);
/* timeline_stream_oom: a stream-ordered allocator's request failed (the trace's OOM record o): an
 * oom action of its size, the device's free bytes taken as the card's capacity less what the
 * process held (what other processes held is not known; 0 when no capacity was recorded) */
void timeline_stream_oom(timeline *tl, const reader_oom *o);
/* timeline_cats: the sweep of category lifetimes: the live bytes per category after event number
 * event (1 = the trace's first ALLOC / FREE; in order) at time t: one moment (a sum below 0 is
 * 0 in it). */
void timeline_cats(timeline *tl, uint64_t event, uint64_t t, const int64_t cur[CAT_COUNT]);
/* timeline_moments: at most max (>= 2 * (CAT_COUNT + 4 + PHASE_COUNT)) moments to draw, in the
 * order they happened: each group of buckets' lowest, tallest and last, the run's tallest, the
 * process peak's (the moment its breakdown describes), the tensors' peak's, the OOM's, each
 * phase's peak and each category's largest.
 * Returns a malloc'ed array of *n pointers into tl (free it); NULL with *n = 0 when the sweep
 * filled nothing or memory is short. */
const timeline_moment **timeline_moments(const timeline *tl, size_t max, size_t *n);
/* timeline_totals: set it (before the replay) for the totals by stack: `flame --at all` does;
 * a hash lookup per allocation that the other commands do not pay. */
extern int timeline_totals;
/* timeline_segments: set it (before the replay) when a view will draw the timeline (export,
 * report --html), of a segment-mode trace too: the replay keeps a timeline (slices, ticks, the
 * allocator's actions, the category moments) only then, or for timeline_totals. */
extern int timeline_segments;
/* timeline_actions: set it (before the replay) when the allocator's actions are wanted (export
 * --memory-viz): only then are they kept (TIMELINE_RING of them, 4 MiB) */
extern int timeline_actions;
/* timeline_total_add: one allocation of the run (size bytes, category cat, made at stack_id),
 * classified once its lifetime is known. */
void timeline_total_add(timeline *tl, uint32_t stack_id, int cat, uint64_t size);
/* timeline_action_name: "alloc", ...; "?" out of range. */
const char *timeline_action_name(int kind);
/* timeline_ring_at: the i-th kept action, oldest first (i < ring_n). */
const timeline_action *timeline_ring_at(const timeline *tl, size_t i);

#endif
