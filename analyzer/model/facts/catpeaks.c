/* catpeaks.c — category_peaks (catpeaks.h): a window of records in event order, each swept once
 * its allocation's category is settled: added at its allocation, taken back at its free, each
 * category's largest sum kept (and the timeline's moments, when asked). */
#include "catpeaks.h"

#include <stdlib.h>
#include <string.h>

/* set_common: the sweep's common record's kind as catpeaks_fast says it (catpeaks_add_swept) */
static void set_common(catpeaks *cp)
{
    int fast = catpeaks_fast(cp);
    cp->common = fast == CATPEAKS_FAST_NONE    ? 0
                 : fast == CATPEAKS_FAST_INNER ? CATPEAKS_CODE(CATPEAKS_INNER, 0)
                                               : CATPEAKS_CODE(CATPEAKS_PLAIN, 0);
}

static void drop_window(catpeaks *cp)
{
    cp->common = 0; /* (nothing swept at once: lost) */
    free(cp->rec), free(cp->event);
    cp->rec = NULL;
    cp->event = NULL;
    cp->cap = 0;
    cp->head = cp->tail = 1;
}

void catpeaks_init(catpeaks *cp, timeline *tl)
{
    memset(cp, 0, sizeof *cp);
    cp->tl = tl;
    cp->head = cp->tail = 1;
    set_common(cp);
}

void catpeaks_lose(catpeaks *cp, const char *why)
{
    if (!cp->lost)
        cp->lost = why;
    drop_window(cp);
}

void catpeaks_set_alloc_mode(catpeaks *cp, int alloc_mode)
{
    cp->alloc_mode = alloc_mode;
    cp->alloc_mode_known = 1;
    if (!cp->lost)
        set_common(cp);
}

/* catpeaks_grow: a ring of twice the slots, the records in the same order (catpeaks_add). Grown
 * in place (realloc): a record keeps its slot but for those whose number has the old size's bit
 * set, moved to the new half. (Copying the window into a new ring had touched twice its size in
 * fresh pages: a segment-mode run's window waits for its first million events, 24 MB, and
 * clearing those pages took 5 % of its replay.) */
int catpeaks_grow(catpeaks *cp)
{
    if (cp->lost) /* (its window dropped: catpeaks_add asks here, not per record) */
        return -1;
    uint64_t cap = cp->cap, ncap = cap ? cap * 2 : 4096;
    if (ncap > CATPEAKS_WINDOW_MAX) {
        catpeaks_lose(cp, "more allocations waited for their category at once than the "
                          "sweep's window holds");
        return -1;
    }
    catpeaks_rec *rec = realloc(cp->rec, ncap * sizeof *rec);
    if (rec)
        cp->rec = rec;
    uint64_t *event = cp->tl && rec ? realloc(cp->event, ncap * sizeof *event) : NULL;
    if (event)
        cp->event = event;
    if (!rec || (cp->tl && !event)) {
        catpeaks_lose(cp, "out of memory");
        return -1;
    }
    for (uint64_t n = cp->head; n < cp->tail; n++) {
        if (!(n & cap)) /* (its slot is the same in both) */
            continue;
        uint64_t o = n & (cap - 1), i = n & (ncap - 1);
        rec[i] = rec[o];
        if (event)
            event[i] = event[o];
    }
    cp->cap = ncap;
    return 0;
}

static int64_t cache_raw(const catpeaks *cp)
{
    return cp->alloc_mode ? cp->seg - cp->inner : 0;
}

/* note: the moment now (time t) in the largest sums: the category that moved and the cache. */
static void note(catpeaks *cp, int cat, uint64_t t)
{
    if (cat >= 0 && cp->cur[cat] > cp->top[cat])
        cp->top[cat] = cp->cur[cat], cp->top_t[cat] = t;
    if (cp->alloc_mode && cache_raw(cp) > cp->top[CAT_CACHE])
        cp->top[CAT_CACHE] = cache_raw(cp), cp->top_t[CAT_CACHE] = t;
}

/* sums: record i (kind, category cat, flags fl) adds its bytes to the sums or takes them back:
 * its category's (a segment's: the segments'), the tensors' inside segments, the cache. */
static inline void sums(catpeaks *cp, uint64_t i, int kind, int cat, uint8_t fl)
{
    int64_t size = (int64_t)cp->rec[i].size, delta = fl & CATPEAKS_F_ALLOC ? size : -size;
    if (kind == CATPEAKS_SEGMENT)
        cp->seg += delta;
    else
        cp->cur[cat] += delta;
    if (kind == CATPEAKS_INNER)
        cp->inner += delta;
    if (cp->alloc_mode)
        cp->cur[CAT_CACHE] = cp->seg > cp->inner ? cp->seg - cp->inner : 0;
}

/* common: record i (kind, code, flags fl, at time at) comes or goes: apply's work without a join
 * and without a timeline (allocator mode's common record, a tensor inside PyTorch's segments:
 * catpeaks_inner_add, the same work inline) */
static inline void common(catpeaks *cp, uint64_t i, int kind, uint8_t code, uint8_t fl, uint64_t at)
{
    int cat = CATPEAKS_CAT(code);
    if (kind == CATPEAKS_INNER && cp->alloc_mode) {
        catpeaks_inner_add(cp, (unsigned)cat, (int64_t)cp->rec[i].size, fl & CATPEAKS_F_ALLOC, at);
        return;
    }
    sums(cp, i, kind, cat, fl);
    note(cp, kind == CATPEAKS_SEGMENT ? -1 : cat, at);
}

/* apply: record i (settled, counted: not CATPEAKS_NONE) comes or goes (out of line: the sweep
 * calls it for the rare records, a join's or with a timeline) */
static __attribute__((noinline)) void apply(catpeaks *cp, uint64_t i)
{
    const catpeaks_rec r = cp->rec[i];
    uint8_t code = r.code, fl = r.flags;
    uint64_t t = r.time;
    int kind = CATPEAKS_KIND(code), cat = CATPEAKS_CAT(code);
    sums(cp, i, kind, cat, fl);
    if (fl & CATPEAKS_F_JOIN)
        return;
    if (cp->tl)
        timeline_cats(cp->tl, cp->event ? cp->event[i] : 0, t, cp->cur);
    note(cp, kind == CATPEAKS_SEGMENT ? -1 : cat, t);
    for (int c = 0; (fl & CATPEAKS_F_JOIN_END) && c < CAT_COUNT; c++)
        note(cp, c, t); /* (the join's records before it noted nothing) */
}

uint64_t catpeaks_advance_more(catpeaks *cp)
{
    /* the window in locals: the sums' stores (cp->cur, cp->top) would otherwise have every one
     * of them loaded again for each record */
    uint64_t head = cp->head;
    const uint64_t tail = cp->tail, mask = cp->cap - 1;
    const catpeaks_rec *recs = cp->rec;
    const int plain_only = !cp->alloc_mode, slow = cp->tl != NULL;
    while (head < tail) {
        uint64_t i = head & mask;
        const catpeaks_rec *r = &recs[i];
        uint8_t code = r->code;
        if (!code)
            break;
        if (code == CATPEAKS_NONE) { /* counted nowhere (a join's end: its state noted) */
            for (int c = 0; (r->flags & CATPEAKS_F_JOIN_END) && c < CAT_COUNT; c++)
                note(cp, c, r->time);
            head++;
            continue;
        }
        int kind = CATPEAKS_KIND(code);
        if (kind == CATPEAKS_SEGMENT && !cp->alloc_mode_known)
            break;
        uint8_t fl = r->flags;
        if (__builtin_expect((fl & CATPEAKS_F_APPLY) || slow, 0)) {
            apply(cp, i);
            head++;
            continue;
        }
        if (!plain_only || kind != CATPEAKS_PLAIN) {
            common(cp, i, kind, code, fl, r->time);
            head++;
            continue;
        }
        /* the common record: a plain allocation's bytes, nothing else to it */
        catpeaks_plain_add(cp, CATPEAKS_CAT(code), (int64_t)r->size, fl & CATPEAKS_F_ALLOC,
                           r->time);
        head++;
    }
    cp->head = head;
    return head;
}

int catpeaks_take_more(catpeaks *cp, const catpeaks_rec *r)
{
    uint8_t code = r->code, fl = r->flags;
    int kind = CATPEAKS_KIND(code);
    if (code == CATPEAKS_NONE || cp->tl || (fl & CATPEAKS_F_APPLY) ||
        (kind == CATPEAKS_SEGMENT && !cp->alloc_mode_known))
        return 0;
    common(cp, (uint64_t)(r - cp->rec), kind, code, fl, r->time);
    return 1;
}

int catpeaks_end(catpeaks *cp, uint64_t peak[CAT_COUNT], uint64_t peak_ns[CAT_COUNT])
{
    memset(peak, 0, CAT_COUNT * sizeof *peak);
    memset(peak_ns, 0, CAT_COUNT * sizeof *peak_ns);
    if (!cp->lost && !cp->alloc_mode_known)
        catpeaks_set_alloc_mode(cp, 0);
    if (!cp->lost && catpeaks_advance(cp) != cp->tail)
        catpeaks_lose(cp, "an allocation's category was never settled");
    int noted = cp->tail > 1; /* a record was added (numbered from 1: no store per record) */
    drop_window(cp);
    if (cp->lost && cp->tl) /* a timeline swept in part is not drawn */
        cp->tl->has_cats = 0;
    if (cp->lost || !noted) /* lost, or nothing was noted */
        return 0;
    for (int c = 0; c < CAT_COUNT; c++)
        if (cp->top[c] > 0)
            peak[c] = (uint64_t)cp->top[c], peak_ns[c] = cp->top_t[c];
    return 1;
}

void catpeaks_free(catpeaks *cp)
{
    drop_window(cp);
}
