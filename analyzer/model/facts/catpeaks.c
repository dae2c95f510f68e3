/* catpeaks.c — category_peaks (catpeaks.h): a category byte per allocating event from the replay,
 * then a second pass that adds size at a noted allocation, takes it back at its free, and keeps
 * each category's largest sum. */
#include "catpeaks.h"

#include <stdlib.h>
#include <string.h>

void catpeaks_lose(catpeaks *cp, const char *why)
{
    if (!cp->lost)
        cp->lost = why;
}

void catpeaks_note(catpeaks *cp, uint64_t ev_alloc, category cat, int kind, int tensors)
{
    if (cp->lost || (unsigned)cat >= CAT_COUNT || !ev_alloc)
        return;
    if (ev_alloc >= CATPEAKS_MAX_EVENTS) {
        catpeaks_lose(cp, "more events than the sweep's memory cap of one byte per event");
        return;
    }
    if (!tensors && ev_alloc >= CATPEAKS_MAX_BEFORE_TENSORS) {
        catpeaks_lose(cp, "the run's first tensor came after the sweep's first 16M events");
        free(cp->code);
        cp->code = NULL;
        cp->cap = 0;
        return;
    }
    if (ev_alloc >= cp->cap) {
        uint64_t n = cp->cap ? cp->cap : 1u << 16;
        while (n <= ev_alloc)
            n += n / 2; /* not doubling: at most a third more than the events need */
        if (n > CATPEAKS_MAX_EVENTS)
            n = CATPEAKS_MAX_EVENTS;
        uint8_t *p = realloc(cp->code, (size_t)n);
        if (!p) {
            catpeaks_lose(cp, "out of memory");
            return;
        }
        memset(p + cp->cap, 0, (size_t)(n - cp->cap));
        cp->code = p;
        cp->cap = n;
    }
    cp->code[ev_alloc] = (uint8_t)(0x80 | (kind & 3) << 4 | (unsigned)cat);
}

void catpeaks_sweep_begin(catpeaks *cp, uint64_t n_events, int allocator_mode)
{
    free(cp->live.e);
    memset(&cp->live, 0, sizeof cp->live);
    memset(cp->cur, 0, sizeof cp->cur);
    memset(cp->peak, 0, sizeof cp->peak);
    memset(cp->peak_ns, 0, sizeof cp->peak_ns);
    cp->seg = cp->inner = 0;
    cp->n_events = n_events;
    cp->allocator_mode = allocator_mode;
}

/* apply: one allocation of size bytes with code code comes (sign +1) or goes (-1) at event. */
static void apply(catpeaks *cp, uint64_t event, uint64_t t, uint8_t code, int64_t delta)
{
    int kind = code >> 4 & 3, cat = code & 15;
    if (kind == CATPEAKS_SEGMENT)
        cp->seg += delta;
    else
        cp->cur[cat] += delta;
    if (kind == CATPEAKS_INNER)
        cp->inner += delta;
    if (cp->allocator_mode)
        cp->cur[CAT_CACHE] = cp->seg > cp->inner ? cp->seg - cp->inner : 0;
    timeline_cats(cp->tl, event - 1, cp->n_events, t, cp->cur);
    for (int c = 0; c < CAT_COUNT; c++)
        if (cp->cur[c] > 0 && (uint64_t)cp->cur[c] > cp->peak[c])
            cp->peak[c] = (uint64_t)cp->cur[c], cp->peak_ns[c] = t;
}

void catpeaks_sweep_event(catpeaks *cp, uint64_t event, int is_alloc, const reader_event *ev)
{
    if (cp->lost || ev->failed || !event)
        return;
    unsigned space = (unsigned)reader_api_space(ev->api);
    if (is_alloc) {
        uint8_t code = event < cp->cap ? cp->code[event] : 0;
        if (!code || ev->size > (uint64_t)INT64_MAX)
            return;
        int replaced;
        livemap_entry *e = livemap_put(&cp->live, ev->addr, space, &replaced);
        if (!e) {
            catpeaks_lose(cp, "out of memory");
            return;
        }
        if (replaced) /* the first pass never notes an allocation that another replaced */
            apply(cp, event, ev->time_ns, e->level, -(int64_t)e->size);
        e->size = ev->size;
        e->level = code;
        apply(cp, event, ev->time_ns, code, (int64_t)ev->size);
        return;
    }
    livemap_entry *e = livemap_find(&cp->live, ev->addr, space);
    if (!e)
        return;
    uint64_t size = e->size;
    uint8_t code = e->level;
    livemap_del(&cp->live, e);
    apply(cp, event, ev->time_ns, code, -(int64_t)size);
}

int catpeaks_sweep_end(catpeaks *cp, uint64_t peak[CAT_COUNT], uint64_t peak_ns[CAT_COUNT])
{
    memset(peak, 0, CAT_COUNT * sizeof *peak);
    memset(peak_ns, 0, CAT_COUNT * sizeof *peak_ns);
    free(cp->live.e);
    memset(&cp->live, 0, sizeof cp->live);
    if (cp->lost || !cp->code) /* lost, or nothing was noted */
        return 0;
    memcpy(peak, cp->peak, sizeof cp->peak);
    memcpy(peak_ns, cp->peak_ns, sizeof cp->peak_ns);
    return 1;
}

void catpeaks_free(catpeaks *cp)
{
    free(cp->code);
    free(cp->live.e);
    memset(cp, 0, sizeof *cp);
}
