/* floor.c — make bench's floor: a trace read and decoded by the analyzer's own reader, and each
 * allocation's address kept in a bare hash table (address -> size: open addressing, linear probing,
 * backward-shift deletion; no prefetching) — nothing else. The fastest a one-pass analysis of the
 * same file could go on this machine; bench.py reports the analyzer as a share of it.
 * Usage: floor TRACE. Prints "EVENTS CPU_SECONDS PEAK_BYTES". */
#include <stdio.h>
#include <stdlib.h>

#include "baseline.h"

typedef struct slot {
    uint64_t addr, size;
} slot;

static uint64_t mix(uint64_t h)
{
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static slot *t;
static uint64_t cap = 1024, n;

static slot *find(uint64_t addr)
{
    uint64_t j = mix(addr) & (cap - 1);
    while (t[j].addr && t[j].addr != addr)
        j = (j + 1) & (cap - 1);
    return &t[j];
}

static void grow(void)
{
    slot *old = t;
    uint64_t oc = cap;
    cap *= 2;
    t = calloc(cap, sizeof *t);
    if (!t) {
        perror("floor");
        exit(2);
    }
    for (uint64_t i = 0; i < oc; i++)
        if (old[i].addr)
            *find(old[i].addr) = old[i];
    free(old);
}

static void del(slot *s)
{
    uint64_t i = (uint64_t)(s - t), mask = cap - 1;
    t[i].addr = 0;
    for (uint64_t j = (i + 1) & mask; t[j].addr; j = (j + 1) & mask) {
        uint64_t home = mix(t[j].addr) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            t[i] = t[j];
            t[j].addr = 0;
            i = j;
        }
    }
}

int main(int argc, char **argv)
{
    struct timespec t0;
    reader *r = baseline_open(argc, argv, "floor", &t0);
    t = calloc(cap, sizeof *t);
    uint64_t events = 0, live = 0, peak = 0;
    reader_record rec;
    while (t && reader_next(r, &rec)) {
        if (rec.type != VT_REC_ALLOC && rec.type != VT_REC_FREE)
            continue;
        events++;
        const reader_event *e = &rec.u.ev;
        if (e->failed || !e->addr)
            continue;
        slot *s = find(e->addr);
        if (rec.type == VT_REC_ALLOC) {
            if (s->addr)
                live -= s->size;
            else if (++n * 2 > cap)
                grow(), s = find(e->addr);
            s->addr = e->addr;
            s->size = e->size;
            live += e->size;
            peak = live > peak ? live : peak;
        } else if (s->addr) {
            live -= s->size;
            n--;
            del(s);
        }
    }
    baseline_done(r, &t0, events, peak);
    return 0;
}
