/* catpeaks.h — each category's largest live bytes over a whole run (category_peaks), in two
 * passes over the trace. The replay notes each allocation's category once its lifetime is
 * known (one byte per event, indexed by the event's number); a second pass re-reads the events,
 * keeps the noted allocations live by address and sweeps each category's sum in event order.
 * Memory: one byte per event plus the live set, never a record per allocation. */
#ifndef VT_ANALYZER_CATPEAKS_H
#define VT_ANALYZER_CATPEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "categories.h"
#include "livemap.h"
#include "reader.h"
#include "timeline.h"

/* What an allocation counts: a tensor or other allocation, a segment of PyTorch's allocator (its
 * cache is the segments less the tensors inside them), a tensor inside such a segment. */
enum { CATPEAKS_PLAIN, CATPEAKS_SEGMENT, CATPEAKS_INNER };
#define CATPEAKS_MAX_EVENTS ((uint64_t)1 << 30) /* one byte each: at most 1 GiB of notes */
/* Until the run shows a tensor (category peaks are a tensor-mode view), notes stop at this many
 * events: a segment-mode trace never pays more than 16 MiB for peaks it will not sweep. */
#define CATPEAKS_MAX_BEFORE_TENSORS ((uint64_t)1 << 24)

typedef struct catpeaks {
    uint8_t *code; /* by event number: 0 = nothing noted, else 0x80 | kind << 4 | category */
    uint64_t cap;
    const char *lost; /* why there are no peaks (a static string), NULL while there can be */
    timeline *tl;     /* when set, the sweep fills its category buckets */
    /* the sweep */
    livemap live; /* the noted allocations live at the current event (level = code) */
    uint64_t n_events;
    int allocator_mode;
    int64_t cur[CAT_COUNT], seg, inner;
    uint64_t peak[CAT_COUNT], peak_ns[CAT_COUNT];
} catpeaks;

/* catpeaks_note: the allocation made by event number ev_alloc (1 = the first ALLOC/FREE record)
 * is in category cat and counts as kind; tensors: the run has shown a tensor so far. */
void catpeaks_note(catpeaks *cp, uint64_t ev_alloc, category cat, int kind, int tensors);

/* The second pass: catpeaks_sweep_begin, then catpeaks_sweep_event for each ALLOC / FREE record
 * in the trace's order (event = its number, as in the first pass), then catpeaks_sweep_end, which
 * writes each category's largest live bytes and when into peak / peak_ns (zeroed first); the
 * cache from the segments when allocator_mode. It returns 1, or 0 when lost (cp->lost says why). */
void catpeaks_sweep_begin(catpeaks *cp, uint64_t n_events, int allocator_mode);
void catpeaks_sweep_event(catpeaks *cp, uint64_t event, int is_alloc, const reader_event *ev);
int catpeaks_sweep_end(catpeaks *cp, uint64_t peak[CAT_COUNT], uint64_t peak_ns[CAT_COUNT]);

/* catpeaks_lose: no peaks, for the reason why (a static string), unless one is already said. */
void catpeaks_lose(catpeaks *cp, const char *why);
void catpeaks_free(catpeaks *cp);

#endif
