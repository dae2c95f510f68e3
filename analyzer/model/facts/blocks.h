/* blocks.h — PyTorch's caching-allocator blocks emulated from a trace (blocks.c): each tensor's
 * block size (its request rounded up, or the whole free range when the allocator does not split
 * it), so the allocated peak counts what torch.cuda.max_memory_allocated() counts. The rules are
 * c10/cuda/CUDACachingAllocator.cpp's (round_size, should_split); the replay feeds the events. */
#ifndef VT_ANALYZER_BLOCKS_H
#define VT_ANALYZER_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "livemap.h"

/* BLOCKS_MIN (kMinBlockSize): every block is a multiple of 512 B. BLOCKS_SMALL (kSmallSize):
 * rounded requests up to 1 MiB come from the small pool (2 MiB segments). */
#define BLOCKS_MIN ((uint64_t)512)
#define BLOCKS_SMALL ((uint64_t)1 << 20)

/* The basis of the emulated block sizes: which of the allocator's rules were applied. */
#define BLOCKS_BASES(X)                                                                            \
    X(NONE, "none", "no tensor events from PyTorch's allocator")                                   \
    X(DEFAULT, "default", "PyTorch's default allocator rules")                                     \
    X(EXPANDABLE, "expandable_segments", "expandable segments (split at 512 B in both pools)")     \
    X(ASYNC, "cudaMallocAsync", "the cudaMallocAsync backend (a block is the request)")            \
    X(CONFIGURED, "configured", "max_split_size_mb / roundup_power2_divisions of the run")         \
    X(APPROXIMATE, "approximate",                                                                  \
      "an allocator setting of the run is not emulated (per-size roundup_power2_divisions)")

typedef enum {
#define X(name, key, text) BLOCKS_BASIS_##name,
    BLOCKS_BASES(X)
#undef X
        BLOCKS_BASIS_COUNT
} blocks_basis;

/* blocks_basis_key: "default", ...; blocks_basis_text: a sentence's worth of what it means. */
const char *blocks_basis_key(blocks_basis b);
const char *blocks_basis_text(blocks_basis b);

/* The allocator's settings that change block sizes (PYTORCH_CUDA_ALLOC_CONF). */
typedef struct blocks_rules {
    int expandable;     /* expandable_segments:True */
    int async;          /* backend:cudaMallocAsync: it counts requested bytes, no blocks */
    uint64_t max_split; /* max_split_size_mb in bytes; UINT64_MAX = unlimited (the default) */
    unsigned divisions; /* roundup_power2_divisions (one value for all sizes); 0/1 = off */
    blocks_basis basis; /* any but NONE */
} blocks_rules;

/* blocks_rules_parse: the rules from a PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF value
 * (NULL or "" = the defaults), e.g. "expandable_segments:True,max_split_size_mb:128". Options
 * that do not change block sizes are ignored; a per-size roundup_power2_divisions list is
 * not emulated (basis APPROXIMATE). */
blocks_rules blocks_rules_parse(const char *conf);

/* blocks_next_division: roundup_power2_next_division, the next of `div` equal steps between two
 * powers of two. */
static inline uint64_t blocks_next_division(uint64_t size, unsigned div)
{
    if (!(size & (size - 1)))
        return size;
    uint64_t floor2 = (uint64_t)1 << (63 - __builtin_clzll(size));
    uint64_t step = floor2 >> (31 - __builtin_clz(div)); /* div rounded down to a power of 2 */
    if (!step)
        return floor2 << 1;
    uint64_t lo = size & ~(step - 1);
    return lo == size ? size : lo + step;
}

/* blocks_round: round_size — a request's size rounded up: at least 512 B, a multiple of 512 B,
 * or the next 1/divisions step between two powers of two when roundup_power2_divisions is set.
 * (These three are inline: every tensor's.) */
static inline uint64_t blocks_round(const blocks_rules *rl, uint64_t size)
{
    if (size < BLOCKS_MIN)
        return BLOCKS_MIN;
    if (rl->divisions > 1 && size > BLOCKS_MIN * rl->divisions)
        return blocks_next_division(size, rl->divisions);
    return (size + BLOCKS_MIN - 1) / BLOCKS_MIN * BLOCKS_MIN;
}

/* blocks_should_split: should_split — a free block of free_bytes serving a rounded request is
 * split (the rest stays free) rather than handed out whole. */
static inline int blocks_should_split(const blocks_rules *rl, uint64_t free_bytes, uint64_t rounded)
{
    if (free_bytes < rounded)
        return 0;
    uint64_t remaining = free_bytes - rounded;
    if (rounded <= BLOCKS_SMALL || rl->expandable) /* the small pool, or expandable segments */
        return remaining >= BLOCKS_MIN;
    return rounded < rl->max_split && remaining > BLOCKS_SMALL;
}

/* blocks_size: the size of the block a request of size bytes gets from a free range of
 * free_bytes starting at its address: rounded when split, else the whole range. */
/* blocks_size_rounded: the same, given the request rounded (r: blocks_round's) */
static inline uint64_t blocks_size_rounded(const blocks_rules *rl, uint64_t free_bytes, uint64_t r)
{
    return free_bytes > r && !blocks_should_split(rl, free_bytes, r) ? free_bytes : r;
}
static inline uint64_t blocks_size(const blocks_rules *rl, uint64_t free_bytes, uint64_t size)
{
    return blocks_size_rounded(rl, free_bytes, blocks_round(rl, size));
}

/* A live block: where it starts, its size (its top bit set: its free was requested, blocks.c). */
typedef struct blocks_block {
    uint64_t start, size;
} blocks_block;

/* One segment (a cudaMalloc, or a mapped range of an expandable segment) and the live blocks
 * inside it, sorted by start (a tensor's free finds its size where it finds its place), in one
 * allocation: a tensor's lookup goes from its hint to the segment's id and from there to the
 * segment, its range in the line of its first blocks (it had been a 48-byte entry of the sorted
 * array, found through its id's index there, and a list of blocks of its own: one load more, and
 * each segment added or released moved the entries after it and renumbered them). */
typedef struct blocks_segment {
    uint64_t addr, size;
    uint32_t n, cap;    /* blocks in blk (the dead among them), room for */
    uint32_t id;        /* its name while it lives (blocks.seg: where it is now) */
    uint32_t dead;      /* of the n, freed blocks kept in place (size 0, blocks.c) */
    uint32_t made;      /* the place in blk of the block made last (any value: checked first) */
    uint32_t made_in;   /* the epoch (blocks.epoch) it was reserved or last given a block in */
    uint32_t freed_gen; /* blocks.gen when a block of it was last freed */
    uint32_t spare;
    blocks_block blk[];
} blocks_segment;
_Static_assert(sizeof(blocks_segment) == 48, "a 48-byte header: no block crosses a line");

/* A segment's place in the order of addresses: where it starts, its id. */
typedef struct blocks_place {
    uint64_t addr;
    uint64_t id;
} blocks_place;

#define BLOCKS_NEAR_MIN 1024u    /* seg_of's hints: at first; from BLOCKS_MANY_SEGS segments on, */
#define BLOCKS_NEAR_PER_SEG 128u /* this many per segment (a direct-mapped table: room), */
#define BLOCKS_NEAR_MAX (1u << 20) /* at most (4 MiB) */

/* BLOCKS_FREED: the blocks freed last, by address (direct-mapped: a later one takes its slot):
 * their places in their segment's list, for the tensor that is made there next (blocks.c) */
#define BLOCKS_FREED 64
typedef struct blocks_freed {
    uint64_t addr; /* 0: none */
    uint64_t at;   /* its place in its segment's list then (any value: checked before use) */
} blocks_freed;

/* The emulation of one run: segments by id and sorted by address, live blocks by address. */
typedef struct blocks {
    blocks_rules rules;
    blocks_segment **seg; /* by id: the segment of that name (NULL: none now) */
    size_t nids, capids;
    blocks_place *at; /* sorted by address: an insert or a delete moves the ones after it */
    size_t nsegs, capsegs;
    size_t last;        /* the id of the segment seg_of found last (checked first; any is safe) */
    uint32_t *free_ids; /* ids of deleted segments, given out again */
    size_t nfree_ids, capfree_ids;
    uint32_t *near;   /* by addr's 2 MiB (hashed): the id + 1 of the segment found there last (0:
                       * none; any value is safe: checked before use) */
    uint32_t nearcap; /* a power of two, grown with the segments; 0: none yet */
    /* the live blocks in no segment's list (unplaced, cudaMallocAsync's, or their segment went
     * first): block start -> its size, open addressing, linear probing (addr 0: empty) */
    blocks_block *loose;
    size_t nloose, caploose;
    int zero_loose; /* such a block at address 0 (no slot can hold it): its size */
    uint64_t zero_size;
    uint64_t allocated;    /* bytes in live blocks: memory_allocated() */
    uint64_t peak, t_peak; /* their peak and when: max_memory_allocated() */
    uint64_t unplaced;     /* tensors in no known segment, or past its free range: rounded only */
    /* an epoch (blocks_epoch_begin): the blocks' peak since it began (UINT64_MAX: none begun),
     * gen counting its rises (a segment's freed_gen says whether its last free came after the
     * last), lost: a segment split since (its parts' marks not known) */
    uint64_t epoch_peak;
    uint32_t epoch, gen;
    int epoch_lost;
    uint64_t searches; /* segment lookups its hints did not answer (a binary search each) */
    blocks_freed freed[BLOCKS_FREED];
    uint8_t hint; /* the place in its segment's list of the block blocks_alloc made last, for its
                   * free (blocks_free_hinted; BLOCKS_NO_HINT: loose, or past the 255th) */
} blocks;

/* blocks_init: an empty emulation with rules (from blocks_rules_parse). */
void blocks_init(blocks *b, const blocks_rules *rules);
/* blocks_free_all: releases what b holds; b is empty afterwards. */
void blocks_free_all(blocks *b);

/* blocks_epoch_begin: an epoch begins (a program going on after an error it caught,
 * replay_went_on.c); blocks_epoch_unused: the bytes of the segments reserved before it that no
 * block of it was given since, nothing live in them now and nothing freed in them since the blocks'
 * peak of the epoch (free from that peak on, never used by what ran since: cache the epoch did not
 * need); 0 when not known (no epoch, no peak, a segment split since). */
void blocks_epoch_begin(blocks *b);
uint64_t blocks_epoch_unused(const blocks *b);

/* blocks_segment_add: PyTorch's allocator reserved the segment [addr, addr + size)
 * (SEGMENT_ALLOC). 0, or -1 when out of memory (its tensors then count as unplaced). */
int blocks_segment_add(blocks *b, uint64_t addr, uint64_t size);
/* blocks_segment_map: it mapped [addr, addr + size) into an expandable segment (SEGMENT_MAP):
 * joined to the mapped ranges it touches; the run uses expandable segments, whatever its
 * recorded settings said (they can be changed at run time), and the rules follow. */
int blocks_segment_map(blocks *b, uint64_t addr, uint64_t size);
/* blocks_segment_del: it released [addr, addr + size) (SEGMENT_FREE, SEGMENT_UNMAP). */
void blocks_segment_del(blocks *b, uint64_t addr, uint64_t size);

/* blocks_alloc: a tensor of size requested bytes at addr (ALLOC) at time t: its block is carved
 * from the start of the free range at addr, which runs to the next live block or the end of its
 * segment. Returns the block's size (0 when out of memory: not counted). */
uint64_t blocks_alloc(blocks *b, uint64_t addr, uint64_t size, uint64_t t);
/* blocks_free: the tensor at addr was freed (FREE_COMPLETED): its block is free again. Returns
 * the block's size, 0 when no live block starts at addr. */
uint64_t blocks_free(blocks *b, uint64_t addr);
/* blocks_free_hinted: blocks_free, where hint is the place its block had in its segment's list
 * when made (blocks.hint then, kept by the caller; blocks may have moved since: checked first).
 * BLOCKS_NO_HINT: none (a block made loose, or past the 255th place). */
#define BLOCKS_NO_HINT 255u
uint64_t blocks_free_hinted(blocks *b, uint64_t addr, unsigned hint);
/* blocks_free_request: PyTorch requested the free of the block at addr and completes it later
 * (a block used on another stream): its bytes leave `allocated` now, its place stays taken
 * until blocks_free. Returns its size, or 0 (no live block there, or already requested). */
uint64_t blocks_free_request(blocks *b, uint64_t addr);
/* blocks_prefetch: the hint of addr's segment on its way to the cache (a read ahead; below), its
 * slot returned (UINT32_MAX: none); blocks_prefetch_seg, some events later: the segment the hint
 * in that slot names, its range and first blocks, its id returned (SIZE_MAX: none) for
 * blocks_hint when the tensor comes (any id is safe: a segment removed since may have given its
 * id to another; any slot too: the hints grown since, it names another piece's). */
size_t blocks_prefetch_seg(const blocks *b, uint32_t slot);
/* blocks_hint: the next tensor's segment is the one of id k (blocks_prefetch_seg's, some events
 * ago; SIZE_MAX: not known): looked at first (any id is safe: checked before use). Where tensors
 * alternate between segments, the segment found last was the wrong one for half of them: a search
 * each, and a mispredicted branch. */
static inline void blocks_hint(blocks *b, size_t k)
{
    if (k != SIZE_MAX)
        b->last = k;
}
/* blocks_many_segs: so many segments that their hints, entries and lists of blocks miss the cache
 * (the replay then prefetches a tensor's in stages; with fewer, the stages cost more than they
 * save: 3 % more instructions on a real trace of 270 segments) */
#define BLOCKS_MANY_SEGS 1024
static inline int blocks_many_segs(const blocks *b)
{
    return b->nsegs >= BLOCKS_MANY_SEGS;
}

/* blocks_near_slot: the hint of addr's 2 MiB (nearcap > 0) */
static inline uint32_t *blocks_near_slot(const blocks *b, uint64_t addr)
{
    return &b->near[((addr >> 21) * 0x9e3779b97f4a7c15ull) >> 32 & (b->nearcap - 1)];
}

/* (always_inline: a call to it, its body a prefetch alone, is taken for one without effect and
 * dropped by GCC's dead-code pass before it would be inlined: the hints were never prefetched, and
 * a run of 6,000 segments spent a quarter of its time waiting for them) */
static inline __attribute__((always_inline)) uint32_t blocks_prefetch(const blocks *b,
                                                                      uint64_t addr)
{
    if (!blocks_many_segs(b)) /* (with fewer, the hints and lists stay in cache) */
        return UINT32_MAX;
    const uint32_t *h = blocks_near_slot(b, addr);
    __builtin_prefetch(h);
    return (uint32_t)(h - b->near);
}

#endif
