/* catpeaks.h — each category's largest live bytes over a run (category_peaks) and the timeline's
 * moments, from the replay's one pass over the trace. Each event that allocates or frees a noted
 * allocation is a record in a window, in event order, that waits there until the allocation's
 * category is settled (at its allocation, when a backward pass begins, at its free at the latest:
 * classify_settled); the sweep adds or takes back each settled record in order and keeps every
 * category's largest sum. Memory: the records from the oldest one still waiting (about one
 * training step), never the trace's length; no second reading of the trace, no lookup by address.
 *
 * A tensor an optimizer step made counts from its allocation like any other, alive at the end too,
 * as the snapshots count it. Until 2026-12-06 one settled before its free opened an epoch whose
 * largest sums the sweep kept apart, to take the tensor back from every moment after it if it was
 * alive at the end; once every such tensor alive at the end was kept (0445f86) none was taken back
 * (none of the 142 committed traces, whole or cut at 70/85/95 %), and each one's records had taken
 * the sweep's rare path: without the epochs unet_b16_fit's report takes 2.1 % fewer instructions
 * (900 such tensors), vtgen's 1M tensor / default-mode events 0.4 / 0.5 % (none: a leaner sweep) */
#ifndef VT_ANALYZER_CATPEAKS_H
#define VT_ANALYZER_CATPEAKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "categories.h"
#include "timeline.h"

/* What an allocation counts: a tensor or other allocation, a segment of PyTorch's allocator (its
 * cache is the segments less the tensors inside them), a tensor inside such a segment. */
enum { CATPEAKS_PLAIN, CATPEAKS_SEGMENT, CATPEAKS_INNER };
/* a record's code: 0 while the allocation is not settled, CATPEAKS_NONE when it counts nowhere,
 * else CATPEAKS_CODE(kind, category) */
#define CATPEAKS_CODE(kind, cat) ((uint8_t)(0x80u | (unsigned)(kind) << 4 | (unsigned)(cat)))
#define CATPEAKS_NONE ((uint8_t)0x40)
#define CATPEAKS_KIND(code) ((code) >> 4 & 3)
#define CATPEAKS_CAT(code) ((code)&15)
/* records waiting at most (24 B each, 32 with a timeline); past it the peaks are not computed */
#define CATPEAKS_WINDOW_MAX ((uint64_t)1 << 21)

/* a record of the window: one slot's fields together (an add, a settle and the sweep's look at it
 * touch one cache line, not five arrays' lines) */
typedef struct catpeaks_rec {
    uint64_t size, time;
    uint32_t ref;  /* the caller's name for the allocation (its live entry's number) */
    uint8_t code;  /* 0: not settled, else CATPEAKS_NONE or CATPEAKS_CODE */
    uint8_t flags; /* CATPEAKS_F_* */
} catpeaks_rec;

typedef struct catpeaks {
    /* the window: records head..tail-1 (numbered from 1) in a ring of cap slots */
    catpeaks_rec *rec;
    uint64_t *event; /* the records' event numbers: only with a timeline */
    uint64_t head, tail, cap;
    const char *lost; /* why there are no peaks (a static string), NULL while there can be */
    timeline *tl;     /* when set, the sweep fills its category buckets */
    int alloc_mode;   /* 1: the cache is the segments less their tensors (allocator mode) */
    int alloc_mode_known;
    uint8_t common; /* CATPEAKS_CODE(kind, 0) of the sweep's common record (catpeaks_fast's
                     * kind), 0: none (a timeline's moments to draw, or lost) */
    /* the sweep */
    int64_t cur[CAT_COUNT], seg, inner;
    int64_t top[CAT_COUNT];    /* each category's largest sum so far (the cache, in allocator mode:
                                * segments less tensors, not clamped at 0) */
    uint64_t top_t[CAT_COUNT]; /* when it came (the first of equals) */
} catpeaks;

/* a record's flags: an allocating one, one whose allocation ended before it was settled (the
 * caller settles it later, by its number), one the caller may settle when enough records came
 * after it (CATPEAKS_F_LATER) */
enum {
    CATPEAKS_F_ALLOC = 1,
    CATPEAKS_F_ENDED = 2,
    CATPEAKS_F_LATER = 4,
    /* a bounded trace's join record before its last (the frees first, then the snapshot's
     * allocations): its moment is no state of the run, neither drawn nor noted (a segment made
     * in the gap counted as cache before the tensors in it came: Perfetto's tracks 8.23 GiB at
     * the join, above the run's 7.75) */
    CATPEAKS_F_JOIN = 8,
    CATPEAKS_F_JOIN_END = 16 /* the join's last record: the state after it, every category noted */
};
/* the flags of a record only the sweep's full apply takes: a join's */
#define CATPEAKS_F_APPLY (CATPEAKS_F_JOIN | CATPEAKS_F_JOIN_END)
/* a code's settled bit and kind (CATPEAKS_CODE): a plain allocation's category has
 * CATPEAKS_CODE(CATPEAKS_PLAIN, 0) there */
#define CATPEAKS_KIND_BITS 0xf0u

/* catpeaks_init: an empty window (tl: the timeline whose moments the sweep fills, or NULL). */
void catpeaks_init(catpeaks *cp, timeline *tl);
/* catpeaks_grow: room for more records (catpeaks_add's rare part); -1 when lost (or already). */
int catpeaks_grow(catpeaks *cp);
/* catpeaks_add: the record of event number event (1 = the trace's first ALLOC / FREE) at time t:
 * size bytes allocated or freed (flags), code as far as known (0: not settled), ref the caller's
 * name for the allocation. Returns the record's number, 0 when lost. catpeaks_add_tl: the same,
 * where tl = 0 says the window has no timeline (its records' events are not kept: no test) */
static inline __attribute__((always_inline)) uint64_t catpeaks_add_tl(catpeaks *cp, uint64_t event,
                                                                      uint64_t t, uint64_t size,
                                                                      int flags, uint32_t ref,
                                                                      uint8_t code, const int tl)
{
    if (cp->tail - cp->head == cp->cap && catpeaks_grow(cp) < 0)
        return 0; /* (lost: the window dropped is full, and catpeaks_grow says lost) */
    uint64_t n = cp->tail++, i = n & (cp->cap - 1);
    cp->rec[i] = (catpeaks_rec){size, t, ref, code, (uint8_t)flags};
    if (tl && cp->event)
        cp->event[i] = event;
    return n;
}
static inline uint64_t catpeaks_add(catpeaks *cp, uint64_t event, uint64_t t, uint64_t size,
                                    int flags, uint32_t ref, uint8_t code)
{
    return catpeaks_add_tl(cp, event, t, size, flags, ref, code, 1);
}
/* catpeaks_settle: record n's code (a record already swept or not in the window is left). */
static inline void catpeaks_settle(catpeaks *cp, uint64_t n, uint8_t code)
{
    if (n >= cp->head && n < cp->tail)
        cp->rec[n & (cp->cap - 1)].code = code;
}
/* catpeaks_mark: record n gains flags (when in the window). */
static inline void catpeaks_mark(catpeaks *cp, uint64_t n, int flags)
{
    if (n >= cp->head && n < cp->tail)
        cp->rec[n & (cp->cap - 1)].flags |= (uint8_t)flags;
}
/* catpeaks_set_alloc_mode: whether the run is in allocator mode, once known (a segment's record
 * waits until then: the cache counts segments only in that mode). */
void catpeaks_set_alloc_mode(catpeaks *cp, int alloc_mode);
/* catpeaks_advance_more: catpeaks_advance's loop, from a settled head (below). */
uint64_t catpeaks_advance_more(catpeaks *cp);
/* A record in the window (head <= n < tail): its code, ref and flags. */
static inline uint8_t catpeaks_code(const catpeaks *cp, uint64_t n)
{
    return cp->rec[n & (cp->cap - 1)].code;
}
/* catpeaks_advance: sweeps the settled records at the head of the window. Returns the number of
 * the first record still waiting (cp->tail when none waits). (Inline: the sweep calls it far
 * more often than the head is settled.) */
static inline uint64_t catpeaks_advance(catpeaks *cp)
{
    if (cp->head < cp->tail && catpeaks_code(cp, cp->head))
        return catpeaks_advance_more(cp);
    return cp->head;
}
static inline uint32_t catpeaks_ref(const catpeaks *cp, uint64_t n)
{
    return cp->rec[n & (cp->cap - 1)].ref;
}
static inline int catpeaks_flags(const catpeaks *cp, uint64_t n)
{
    return cp->rec[n & (cp->cap - 1)].flags;
}
/* catpeaks_plain_add: a plain record's bytes (allocated, else freed) at time t in its category's
 * sum and its largest: the sweep's common record, with no cache, no timeline. A free lowers its
 * category below its largest (never below the sums now): the same test leaves it, with no branch
 * on whether the record allocates or frees (in a run whose allocations and frees interleave at
 * random, half of such branches were mispredicted) */
static inline void catpeaks_plain_add(catpeaks *cp, unsigned cat, int64_t size, int alloc,
                                      uint64_t t)
{
    int64_t v = cp->cur[cat] += alloc ? size : -size;
    if (v > cp->top[cat])
        cp->top[cat] = v, cp->top_t[cat] = t;
}
/* catpeaks_inner_add: a tensor's bytes inside PyTorch's segments (allocator mode: the cache is the
 * segments less them), allocated else freed, at time t: its category's sum, the tensors' inside
 * segments and the cache, then the largest of its category and of the cache (the sweep's common
 * record in allocator mode: catpeaks.c's sums and note, for it alone) */
static inline void catpeaks_inner_add(catpeaks *cp, unsigned cat, int64_t size, int alloc,
                                      uint64_t t)
{
    int64_t delta = alloc ? size : -size;
    cp->cur[cat] += delta;
    cp->inner += delta;
    cp->cur[CAT_CACHE] = cp->seg > cp->inner ? cp->seg - cp->inner : 0;
    if (cp->cur[cat] > cp->top[cat])
        cp->top[cat] = cp->cur[cat], cp->top_t[cat] = t;
    if (cp->seg - cp->inner > cp->top[CAT_CACHE])
        cp->top[CAT_CACHE] = cp->seg - cp->inner, cp->top_t[CAT_CACHE] = t;
}
/* the sweep's common record (catpeaks_fast): none without a timeline's moments to draw; a plain
 * allocation's bytes alone (tensor mode); a tensor's inside PyTorch's segments (allocator mode) */
enum { CATPEAKS_FAST_NONE, CATPEAKS_FAST_PLAIN, CATPEAKS_FAST_INNER };
static inline int catpeaks_fast(const catpeaks *cp)
{
    return cp->tl ? CATPEAKS_FAST_NONE : cp->alloc_mode ? CATPEAKS_FAST_INNER : CATPEAKS_FAST_PLAIN;
}
/* catpeaks_take_more: catpeaks_take's records that are not a plain one's bytes alone */
int catpeaks_take_more(catpeaks *cp, const catpeaks_rec *r);
/* catpeaks_take: record r (settled, the next to sweep: every one before it is), swept now when
 * it is a common one (no join, no timeline to draw, no segment waiting for the allocator mode):
 * the sweep of replay_cats.c looks at each record once, not once to settle and again to sweep.
 * fast: catpeaks_fast(cp), taken once for many records. Returns 1 when it was swept: the caller
 * moves cp->head past it; 0: catpeaks_advance sweeps it. */
static inline int catpeaks_take(catpeaks *cp, const catpeaks_rec *r, int fast)
{
    uint16_t cf; /* the code and the flags in one load: the common kind's code, none of the flags */
    memcpy(&cf, &r->code, sizeof cf);
    _Static_assert(offsetof(catpeaks_rec, flags) == offsetof(catpeaks_rec, code) + 1,
                   "the flags follow the code");
    const unsigned rare = CATPEAKS_F_APPLY << 8;
    unsigned kind = fast == CATPEAKS_FAST_INNER ? CATPEAKS_INNER : CATPEAKS_PLAIN;
    if (__builtin_expect(!fast || (cf & (rare | CATPEAKS_KIND_BITS)) != CATPEAKS_CODE(kind, 0), 0))
        return catpeaks_take_more(cp, r);
    if (fast == CATPEAKS_FAST_INNER)
        catpeaks_inner_add(cp, cf & 15, (int64_t)r->size, cf & CATPEAKS_F_ALLOC << 8, r->time);
    else
        catpeaks_plain_add(cp, cf & 15, (int64_t)r->size, cf & CATPEAKS_F_ALLOC << 8, r->time);
    return 1;
}
/* catpeaks_add_swept: catpeaks_add of a settled record to an empty window, swept at once when it
 * is a common one (catpeaks_take's: a plain allocation's in tensor mode, a tensor's inside
 * PyTorch's segments in allocator mode; the window's ring not written). Returns its number, 0
 * when it is not such a record (then catpeaks_add adds it). */
static inline uint64_t catpeaks_add_swept(catpeaks *cp, uint64_t t, uint64_t size, int flags,
                                          uint8_t code)
{
    if (cp->head != cp->tail || (code & CATPEAKS_KIND_BITS) != cp->common ||
        (flags & CATPEAKS_F_APPLY))
        return 0;
    if (cp->common == CATPEAKS_CODE(CATPEAKS_INNER, 0))
        catpeaks_inner_add(cp, code & 15, (int64_t)size, flags & CATPEAKS_F_ALLOC, t);
    else
        catpeaks_plain_add(cp, code & 15, (int64_t)size, flags & CATPEAKS_F_ALLOC, t);
    cp->head = ++cp->tail;
    return cp->head - 1;
}
/* catpeaks_end: every record settled, writes each category's largest live bytes and when into
 * peak / peak_ns (zeroed first); the cache from the segments when in allocator mode. Returns 1,
 * or 0 when lost (cp->lost says why) or nothing was noted. */
int catpeaks_end(catpeaks *cp, uint64_t peak[CAT_COUNT], uint64_t peak_ns[CAT_COUNT]);

/* catpeaks_lose: no peaks, for the reason why (a static string), unless one is already said;
 * the window is dropped. */
void catpeaks_lose(catpeaks *cp, const char *why);
void catpeaks_free(catpeaks *cp);

#endif
