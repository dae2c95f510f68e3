/* skeleton.c — make bench's second baseline: a trace read by the analyzer's own reader into the
 * replay's own live set (livemap.h), as replay.c's pass does it — each event's hash computed once,
 * its index slot prefetched as it enters a 16-event ring, a freed entry's line half a ring later —
 * with the live bytes and their peak, and nothing else of the replay. What the analyzer would
 * cost if the report needed nothing but the live set; bench.py prints it beside the floor
 * (tests/bench/floor.c: the same reading with a bare table and no prefetching).
 * Usage: skeleton TRACE. Prints "EVENTS CPU_SECONDS PEAK_BYTES", as floor does. */
#include <stdio.h>
#include <stdlib.h>

#include "baseline.h"
#include "livemap.h"

enum { RING = 16, SPACE = 1 };

struct pending {
    reader_event ev; /* decoded in place (reader_next_event) */
    uint64_t hash, slot;
    int is_alloc;
};

static uint64_t live, peak;

static void apply(livemap *m, const struct pending *p)
{
    const reader_event *e = &p->ev;
    if (p->is_alloc) {
        int replaced;
        livemap_entry *x = livemap_put_raw(m, e->addr, SPACE, p->hash, &replaced);
        if (!x) {
            fprintf(stderr, "skeleton: out of memory\n");
            exit(2);
        }
        if (replaced)
            live -= x->size;
        x->size = e->size;
        x->stack_id = e->stack_id;
        x->time_ns = e->time_ns;
        live += e->size;
        peak = live > peak ? live : peak;
    } else {
        livemap_entry *x = livemap_find_at(m, e->addr, SPACE, p->hash, p->slot);
        if (x) {
            live -= x->size;
            livemap_del(m, x);
        }
    }
}

int main(int argc, char **argv)
{
    struct timespec t0;
    reader *r = baseline_open(argc, argv, "skeleton", &t0);
    livemap m = {0};
    if (livemap_grow_index(&m) < 0) {
        fprintf(stderr, "skeleton: out of memory\n");
        return 2;
    }
    struct pending ring[RING];
    unsigned head = 0, count = 0;
    uint64_t events = 0;
    for (;;) {
        if (count == RING) {
            apply(&m, &ring[head]);
            head = (head + 1) % RING;
            count--;
        }
        struct pending *p = &ring[(head + count) % RING];
        reader_record got;
        if (!reader_next_event(r, &got, &p->ev))
            break;
        if (got.type != VT_REC_ALLOC && got.type != VT_REC_FREE)
            continue;
        events++;
        p->is_alloc = got.type == VT_REC_ALLOC;
        const reader_event *e = &p->ev;
        if (e->failed || !e->addr)
            continue;
        p->hash = livemap_mix(e->addr, SPACE);
        p->slot = ~(uint64_t)0;
        count++;
        livemap_prefetch_h(&m, p->hash);
        if (count > RING / 2) { /* its index slot is in cache by now: a freed entry next */
            struct pending *h = &ring[(head + RING / 2) % RING];
            if (!h->is_alloc)
                h->slot = livemap_prefetch_entry_h(&m, h->ev.addr, SPACE, h->hash);
        }
    }
    while (count) {
        apply(&m, &ring[head]);
        head = (head + 1) % RING;
        count--;
    }
    livemap_free(&m);
    baseline_done(r, &t0, events, peak);
    return 0;
}
