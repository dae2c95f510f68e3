/* catpeaks.h — each category's largest live bytes over a whole run (category_peaks): every
 * allocation's lifetime, classified once its free is known, swept in event order afterwards.
 * Memory grows with the run's allocations (two 32-byte deltas each), capped at CATPEAKS_MAX. */
#ifndef VT_ANALYZER_CATPEAKS_H
#define VT_ANALYZER_CATPEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "categories.h"
#include "timeline.h"

/* What a delta counts: a tensor or other allocation, a segment of PyTorch's allocator (its
 * cache is the segments less the tensors inside them), a tensor inside such a segment. */
enum { CATPEAKS_PLAIN, CATPEAKS_SEGMENT, CATPEAKS_INNER };
#define CATPEAKS_MAX ((size_t)1 << 24) /* 8M allocations, 512 MiB */

typedef struct catpeaks_delta {
    uint64_t event, time_ns;
    int64_t delta;
    uint8_t cat, kind;
} catpeaks_delta;

typedef struct catpeaks {
    catpeaks_delta *d;
    size_t n, cap;
    int lost;     /* out of memory or past CATPEAKS_MAX: no peaks */
    timeline *tl; /* when set, the sweep fills its category buckets */
} catpeaks;

/* catpeaks_add: one allocation of size bytes in category cat, alive from event ev_alloc
 * (time t_alloc) to ev_free (t_free) when freed, else to the end. */
void catpeaks_add(catpeaks *cp, uint64_t ev_alloc, uint64_t t_alloc, int freed, uint64_t ev_free,
                  uint64_t t_free, uint64_t size, category cat, int kind);
/* catpeaks_sweep: each category's largest live bytes and when into peak / peak_ns (zeroed
 * first); the cache from the segments when allocator_mode. Returns 1, or 0 when lost. */
int catpeaks_sweep(catpeaks *cp, int allocator_mode, uint64_t peak[CAT_COUNT],
                   uint64_t peak_ns[CAT_COUNT]);
void catpeaks_free(catpeaks *cp);

#endif
