/* replay_ring.h — run_pass's ring (replay.c): the events read ahead of the one applied, each
 * noted as it is read and its cache lines (its index slot, entry, stack, size, PyTorch's
 * segment) fetched while the events before it are applied. Not an interface: replay.c alone
 * includes it. */
#ifndef VT_ANALYZER_REPLAY_RING_H
#define VT_ANALYZER_REPLAY_RING_H

#include <stdio.h>

#include "replay_state.h"

#define PROGRESS_MIN_BYTES (64u << 20) /* smaller files finish before it would help */

/* an event read ahead (run_pass's ring): the event alone, decoded in place, not its whole
 * record (twice its size: copying it cost 6 % of a segment-mode pass, 20 % of the live set's).
 * 128 bytes, aligned: a place's offset in the ring is a shift, where its 112 bytes had taken
 * three instructions at each of the pass's many uses of it (8 to 12 an event fewer) */
struct pending {
    reader_event ev;
    uint64_t event, hash; /* hash: livemap_mix of its key, computed once */
    uint64_t slot, seg;   /* its index slot when last looked at (~0: not yet), its blocks_hint */
    unsigned info;        /* s->apinfo[its api] */
    uint32_t near;        /* a tensor's: its segment's hint's slot, fetched (blocks_prefetch) */
    int is_alloc;         /* an ALLOC record (else a FREE) */
    int join; /* a snapshot's join record (state.join_left): CATPEAKS_F_JOIN, _JOIN_END the last */
} __attribute__((aligned(128)));
_Static_assert(sizeof(struct pending) == 128, "a place of the ring is 128 bytes");

/* torch_tensor: p is a tensor of PyTorch's allocator (its block is emulated: blocks.c) */
static inline int torch_tensor(const struct pending *p)
{
    return __builtin_expect(p->info & AP_TORCH, 0);
}

/* take: the event just read into p (its record got, its number seq) noted: what the pass needs of
 * it at once, the trace's events and end */
static inline __attribute__((always_inline)) void take(state *s, struct pending *p,
                                                       const reader_record *got, uint64_t seq)
{
    replay_result *r = s->r;
    p->is_alloc = got->type == VT_REC_ALLOC;
    const reader_event *ev = &p->ev;
    p->event = seq;
    p->info = s->apinfo[ev->api];
    p->hash = livemap_mix(ev->addr, AP_SPACE(p->info));
    p->slot = ~(uint64_t)0, p->seg = SIZE_MAX;
    p->join = 0;
    if (__builtin_expect(s->join_left != 0, 0)) /* (a join: rare) */
        p->join = --s->join_left ? CATPEAKS_F_JOIN : CATPEAKS_F_JOIN_END;
    if (!(seq & ((1u << 22) - 1)) && replay_progress && r->file_bytes >= PROGRESS_MIN_BYTES)
        fprintf(stderr, "\rvramtrace: %s: %3d %%", r->path,
                (int)(100.0 * (double)got->offset / (double)r->file_bytes));
    if (ev->time_ns > r->end_ns)
        r->end_ns = ev->time_ns;
}

/* replay_prefetch_stack: stack id's facts and its bytes across steps (growth.h) on their way to
 * the cache (run_pass's read ahead of an allocation; a free's record names no stack): the load of
 * its growth entry, at every allocation, had been a cache miss, 5 % of a default-mode replay's
 * samples (2.6 % after) */
static inline __attribute__((always_inline)) void replay_prefetch_stack(const state *s, uint32_t id)
{
    if (id && id < s->nfacts)
        __builtin_prefetch(&s->facts[id]);
    growth_prefetch(&s->r->growth, id);
}

enum { RING = 16 }; /* run_pass's ring: the events read ahead */

/* read_ahead: p, just taken into the ring (count events in it, the oldest at head, p's among
 * them), on its way to the cache, and a freed entry half a ring older */
static inline __attribute__((always_inline)) void
read_ahead(state *s, struct pending *ring, unsigned head, unsigned count, struct pending *p)
{
    const reader_event *ev = &p->ev;
    livemap_prefetch_h(&s->live, p->hash);
    if (torch_tensor(p))
        p->near = blocks_prefetch(&s->blocks, ev->addr); /* PyTorch's blocks too */
    replay_prefetch_stack(s, ev->stack_id);              /* and what its stack says, and holds */
    if (p->is_alloc && s->szm_ahead) /* and what its size says (its category's key) */
        __builtin_prefetch(replay_size_memo(s->szm_ahead, ev->size));
    if (count > RING / 2) { /* its index slot is in cache by now: a freed entry next */
        struct pending *h = &ring[(head + RING / 2) % RING];
        if (!h->is_alloc)
            h->slot = livemap_prefetch_entry_h(&s->live, h->ev.addr, AP_SPACE(h->info), h->hash);
    }
    if (__builtin_expect(blocks_many_segs(&s->blocks), 0) && count > RING / 2) {
        /* so many of PyTorch's segments that they miss the cache: half a ring before a
         * tensor is applied its segment and the first of its blocks */
        struct pending *h = &ring[(head + RING / 2) % RING];
        if (torch_tensor(h))
            h->seg = blocks_prefetch_seg(&s->blocks, h->near);
    }
}

#endif
