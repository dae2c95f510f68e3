/* blocks.c — PyTorch's caching-allocator blocks emulated from a trace (blocks.h). The rules
 * follow c10/cuda/CUDACachingAllocator.cpp (2.4 to 2.11): round_size, the small / large pool,
 * should_split; a block is carved from the start of a free range, and free ranges run from a
 * block's start to the next live block or the end of its segment (free blocks merge). */
#include "blocks.h"
#include "blocks_loose.h"

#include "mem.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- segments -------------------------------------------------------------------------------- */

void blocks_init(blocks *b, const blocks_rules *rules)
{
    memset(b, 0, sizeof *b);
    b->rules = *rules;
    b->epoch_peak = UINT64_MAX; /* (no epoch: no rise) */
}

void blocks_epoch_begin(blocks *b)
{
    b->epoch++;
    b->epoch_peak = 0;
    b->epoch_lost = 0;
}

uint64_t blocks_epoch_unused(const blocks *b)
{
    if (!b->epoch || b->epoch_lost || !b->epoch_peak || b->epoch_peak == UINT64_MAX)
        return 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < b->nsegs; i++) {
        const blocks_segment *s = b->seg[b->at[i].id];
        if (s->made_in == b->epoch || s->freed_gen >= b->gen || s->n != s->dead)
            continue;
        sum += s->size;
    }
    return sum;
}

void blocks_free_all(blocks *b)
{
    for (size_t i = 0; i < b->nsegs; i++)
        free(b->seg[b->at[i].id]);
    free(b->seg);
    free(b->at);
    free(b->loose);
    free(b->free_ids);
    free(b->near);
    memset(b, 0, sizeof *b);
}

/* seg_by_id: the segment of id k, NULL when none has it now (any k) */
static inline blocks_segment *seg_by_id(const blocks *b, size_t k)
{
    return k < b->nids ? b->seg[k] : NULL;
}

/* near_at: the id of the segment addr's hint names, or SIZE_MAX (none) */
static inline size_t near_at(const blocks *b, uint64_t addr)
{
    return b->nearcap ? (size_t)*blocks_near_slot(b, addr) - 1 : SIZE_MAX;
}

/* upper: the index of the first of a[0..n) starting above x (sorted). Without a branch on the
 * values: a search in a segment's blocks goes either way as often (answer in [base, base + n];
 * what is before base starts at most at x). */
static size_t upper(const blocks_block *a, size_t n, uint64_t x)
{
    if (!n)
        return 0;
    const blocks_block *base = a;
    while (n > 1) {
        size_t half = n / 2;
        base = base[half].start <= x ? base + half : base;
        n -= half;
    }
    return (size_t)(base - a) + (base->start <= x);
}

/* freed_slot: where the place of a block at x freed lately is kept */
static inline blocks_freed *freed_slot(blocks *b, uint64_t x)
{
    return &b->freed[(x >> 9) * 0x9e3779b97f4a7c15ull >> (64 - 6) & (BLOCKS_FREED - 1)];
}

/* made_at: upper(s->blk, s->n, x) for a tensor made at x: the place of a block freed lately at x
 * (the allocator gives a block it was just given back out first: 73 % of the tensors of vtgen's
 * default mode, where the search it saves, in a list of ~24, had cost ~45 instructions and a
 * chain of dependent loads), then the place after the block made last and the one after that (a
 * tensor is made where the one before it was, freed since, or right after it), else a search */
static inline size_t made_at(blocks *b, blocks_segment *s, uint64_t x)
{
    size_t n = s->n;
    const blocks_freed *f = freed_slot(b, x);
    if (f->addr == x && f->at < n && s->blk[f->at].start == x)
        return (size_t)f->at + 1;
    for (size_t h = s->made; h < n && h <= (size_t)s->made + 1; h++)
        if (s->blk[h].start <= x && (h + 1 == n || s->blk[h + 1].start > x))
            return h + 1;
    return upper(s->blk, n, x);
}

/* seg_upper: the place of the first segment starting above addr. */
static size_t seg_upper(const blocks *b, uint64_t addr)
{
    size_t lo = 0, hi = b->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->at[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* seg_search: seg_of's answer where the hints gave none: a binary search (its hint set). */
static __attribute__((noinline)) blocks_segment *seg_search(blocks *b, uint64_t addr)
{
    size_t i = seg_upper(b, addr);
    b->searches++;
    blocks_segment *s = i ? b->seg[b->at[i - 1].id] : NULL;
    if (!s || addr - s->addr >= s->size)
        return NULL;
    b->last = s->id;
    if (b->nearcap)
        *blocks_near_slot(b, addr) = s->id + 1;
    return s;
}

/* seg_of: the segment holding addr, or NULL: the one found last (a step's tensors keep to a few
 * segments), else the one found last in addr's 2 MiB, by its id (segments are apart: a hit is
 * the one), else a search. (Both hints inline: a third of g_compile_b8_12gib's tensors, whose
 * small and large ones alternate between segments, had called out for the second.) */
static inline blocks_segment *seg_of(blocks *b, uint64_t addr)
{
    blocks_segment *s = seg_by_id(b, b->last);
    if (s && addr - s->addr < s->size)
        return s;
    size_t k = near_at(b, addr);
    s = seg_by_id(b, k);
    if (s && addr - s->addr < s->size)
        return b->last = k, s;
    return seg_search(b, addr);
}

/* BLK_FIRST: a new segment's room for blocks */
#define BLK_FIRST 8u
#define BLK_COMPACT 16u /* a list this long whose blocks are more than half dead is compacted */

/* blk_reserve: segment *sp has room for n blocks (it may move: *sp and its id's pointer follow);
 * -1 when out of memory (blk_grow: past its room, out of line) */
static __attribute__((noinline)) int blk_grow(blocks *b, blocks_segment **sp, size_t n)
{
    blocks_segment *s = *sp;
    size_t c = s->cap ? s->cap : BLK_FIRST;
    while (c < n)
        c *= 2;
    if (c > UINT32_MAX)
        return -1;
    s = realloc(s, sizeof *s + c * sizeof *s->blk);
    if (!s)
        return -1;
    s->cap = (uint32_t)c;
    *sp = b->seg[s->id] = s;
    return 0;
}
static inline int blk_reserve(blocks *b, blocks_segment **sp, size_t n)
{
    return n <= (*sp)->cap ? 0 : blk_grow(b, sp, n);
}

static int segs_reserve(blocks *b, size_t n)
{
    return mem_grow((void **)&b->at, &b->capsegs, n, sizeof *b->at, 64, 0);
}

/* new_seg: a segment of [addr, addr + size) with room for cap blocks, under a new id (a deleted
 * one's first), in no place yet; NULL out of memory */
static blocks_segment *new_seg(blocks *b, uint64_t addr, uint64_t size, size_t cap)
{
    blocks_segment *s = malloc(sizeof *s + cap * sizeof *s->blk);
    if (!s)
        return NULL;
    uint32_t id;
    if (b->nfree_ids) {
        id = b->free_ids[--b->nfree_ids];
    } else if (b->nids >= UINT32_MAX - 1 ||
               mem_grow((void **)&b->seg, &b->capids, b->nids + 1, sizeof *b->seg, 64, 0)) {
        free(s);
        return NULL;
    } else {
        id = (uint32_t)b->nids++;
    }
    *s = (blocks_segment){addr, size, 0, (uint32_t)cap, id, 0, 0, b->epoch, 0, 0};
    return b->seg[id] = s;
}

/* A freed block stays in its segment's list as a dead one (size 0: a live block's is never 0),
 * its place kept: the allocator gives the same address out again (a training step's tensors
 * come back to the blocks the step before had), and the block is live again there without a
 * move of the blocks after it; a free moves none either. A search still finds addresses in
 * order; the free range after a block runs to the next live one. (In a simulated GPT-2 run,
 * 52 blocks a segment, the moves had been 25M of a report's 502M instructions.) */

/* compact: s's dead blocks out of its list */
static void compact(blocks_segment *s)
{
    if (!s->dead)
        return;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->blk[i].size)
            s->blk[k++] = s->blk[i];
    s->n = k;
    s->dead = 0;
}

/* next_live: the index of the first live block of s at or after i (s->n: none) */
static inline size_t next_live(const blocks_segment *s, size_t i)
{
    while (i < s->n && !s->blk[i].size)
        i++;
    return i;
}

/* drop_seg: segment s is deleted (out of every place first): its id names none (given out again;
 * kept unused when the list of free ids cannot grow) */
static void drop_seg(blocks *b, blocks_segment *s)
{
    uint32_t id = s->id;
    b->seg[id] = NULL;
    free(s);
    if (!mem_grow((void **)&b->free_ids, &b->capfree_ids, b->nfree_ids + 1, sizeof *b->free_ids, 64,
                  0))
        b->free_ids[b->nfree_ids++] = id;
}

/* place_insert / place_remove: segment s takes place i of the order (room made by segs_reserve),
 * the one at place i leaves it; the ones after move */
static void place_insert(blocks *b, size_t i, const blocks_segment *s)
{
    memmove(&b->at[i + 1], &b->at[i], (b->nsegs - i) * sizeof *b->at);
    b->at[i] = (blocks_place){s->addr, s->id};
    b->nsegs++;
}

static void place_remove(blocks *b, size_t i)
{
    memmove(&b->at[i], &b->at[i + 1], (b->nsegs - i - 1) * sizeof *b->at);
    b->nsegs--;
}

/* near_mark: the hints of s's 2 MiB pieces (its first NEAR_MARK) name it: a tensor's first
 * lookup there finds it without a search (a fifth of vtgen --allocator's frees had searched) */
#define NEAR_MARK 64
static void near_mark(blocks *b, const blocks_segment *s)
{
    if (!b->nearcap)
        return;
    uint64_t a = s->addr >> 21, last = (s->addr + s->size - 1) >> 21;
    for (last = last - a < NEAR_MARK ? last : a + NEAR_MARK - 1; a <= last; a++)
        *blocks_near_slot(b, a << 21) = s->id + 1;
}

/* near_fit: the hints sized to the segments (a new table's name every segment's first pieces:
 * every hint is checked before use, a lost one is found again; zeroed by calloc: no id); out of
 * memory, the old one stays (mem.h has it) */
static void near_fit(blocks *b)
{
    uint64_t want = blocks_many_segs(b) ? (uint64_t)b->nsegs * BLOCKS_NEAR_PER_SEG : 0;
    if (b->nearcap >= BLOCKS_NEAR_MAX || (b->nearcap && want <= b->nearcap))
        return;
    uint32_t cap = b->nearcap ? b->nearcap : BLOCKS_NEAR_MIN;
    while (cap < want && cap < BLOCKS_NEAR_MAX)
        cap *= 2;
    uint32_t *n = calloc(cap, sizeof *n);
    if (!n)
        return;
    free(b->near);
    b->near = n;
    b->nearcap = cap;
    for (size_t i = 0; i < b->nsegs; i++)
        near_mark(b, b->seg[b->at[i].id]);
}

/* ---- segments, added and released ------------------------------------------------------- */

void blocks_segment_del(blocks *b, uint64_t addr, uint64_t size)
{
    uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
    /* segments are sorted and apart: the first that can overlap holds addr or starts after it */
    size_t i = seg_upper(b, addr);
    if (i && b->at[i - 1].addr + b->seg[b->at[i - 1].id]->size > addr)
        i--;
    while (i < b->nsegs && b->at[i].addr < end) {
        blocks_segment *s = b->seg[b->at[i].id];
        compact(s); /* (its live blocks alone are dropped, moved or kept below) */
        uint64_t s_end = s->addr + s->size;
        if (s_end <= addr) {
            i++;
        } else if (s->addr >= addr && s_end <= end) { /* all of it */
            blocks_loose_drop(b, s->blk, s->n);
            place_remove(b, i);
            drop_seg(b, s);
        } else if (s->addr < addr) { /* keep the head; a tail past the hole is its own */
            b->epoch_lost = 1;       /* (its parts' marks: not known) */
            size_t h = upper(s->blk, s->n, addr - 1), to = s->n; /* [h, to): in the hole */
            blocks_segment *tail;
            if (s_end > end && !segs_reserve(b, b->nsegs + 1)) {
                size_t k = upper(s->blk, s->n, end - 1);
                if ((tail = new_seg(b, end, s_end - end, s->n - k)) != NULL) {
                    memcpy(tail->blk, s->blk + k, (s->n - k) * sizeof *s->blk);
                    tail->n = (uint32_t)(s->n - k);
                    to = k;
                    place_insert(b, i + 1, tail);
                    i++;
                }
            }
            blocks_loose_drop(b, s->blk + h, to - h);
            s->size = addr - s->addr;
            s->n = (uint32_t)h;
            i++;
        } else {               /* keep the tail */
            b->epoch_lost = 1; /* (as above) */
            size_t k = upper(s->blk, s->n, end - 1);
            blocks_loose_drop(b, s->blk, k);
            memmove(s->blk, s->blk + k, (s->n - k) * sizeof *s->blk);
            s->n -= (uint32_t)k;
            s->size = s_end - end;
            b->at[i].addr = s->addr = end;
            i++;
        }
    }
}

/* join: the segment at place i absorbs the one after it, which starts where it ends; -1 out of
 * memory. */
static int join(blocks *b, size_t i)
{
    blocks_segment *s = b->seg[b->at[i].id], *t = b->seg[b->at[i + 1].id];
    compact(s);
    compact(t);
    if (blk_reserve(b, &s, (size_t)s->n + t->n))
        return -1;
    memcpy(s->blk + s->n, t->blk, t->n * sizeof *t->blk);
    s->n += t->n;
    s->size += t->size;
    s->made_in = b->epoch; /* (joined: taken as given a block now) */
    s->freed_gen = s->freed_gen > t->freed_gen ? s->freed_gen : t->freed_gen;
    place_remove(b, i + 1);
    drop_seg(b, t);
    return 0;
}

static int segment_add(blocks *b, uint64_t addr, uint64_t size, int joins)
{
    if (!size || addr + size < addr)
        return -1;
    blocks_segment_del(b, addr, size); /* a range reserved twice: the newer one holds */
    blocks_segment *s;
    if (segs_reserve(b, b->nsegs + 1) || !(s = new_seg(b, addr, size, BLK_FIRST)))
        return -1;
    size_t i = seg_upper(b, addr);
    place_insert(b, i, s);
    near_fit(b);
    if (joins && i + 1 < b->nsegs && b->at[i + 1].addr == addr + size && join(b, i))
        return -1;
    if (joins && i > 0 && b->at[i - 1].addr + b->seg[b->at[i - 1].id]->size == addr) {
        if (join(b, i - 1))
            return -1;
        i--;
    }
    near_mark(b, b->seg[b->at[i].id]); /* (the segment that holds it now) */
    return 0;
}

int blocks_segment_add(blocks *b, uint64_t addr, uint64_t size)
{
    /* cudaMalloc segments that happen to touch stay apart: PyTorch never merges across them */
    return segment_add(b, addr, size, 0);
}

int blocks_segment_map(blocks *b, uint64_t addr, uint64_t size)
{
    if (!b->rules.expandable) { /* set at run time, or the settings were not recorded */
        b->rules.expandable = 1;
        if (b->rules.basis == BLOCKS_BASIS_DEFAULT)
            b->rules.basis = BLOCKS_BASIS_EXPANDABLE;
    }
    return segment_add(b, addr, size, 1);
}

/* ---- blocks ---------------------------------------------------------------------------------- */

size_t blocks_prefetch_seg(const blocks *b, uint32_t slot)
{
    /* (the slot blocks_prefetch computed: its hash not done twice) */
    size_t k = slot < b->nearcap ? (size_t)b->near[slot] - 1 : SIZE_MAX;
    const blocks_segment *s = seg_by_id(b, k);
    if (!s)
        return k;
    /* its range and the lines of its first blocks (a search touches several: four blocks to a
     * line): five lines, seventeen blocks or more, whatever its length (a prefetch does not fault;
     * a second stage, a quarter ring later, had read its length for as many lines as its list
     * has, up to eight: 55 instructions a tensor, 4 % of the report on vtgen's default mode) */
    for (uintptr_t i = 0; i < 5; i++) /* (as integers: past its end is no object's) */
        __builtin_prefetch((const void *)((uintptr_t)s + 64 * i));
    return k;
}

/* A live block's size with BLOCK_REQUESTED set: its free was requested, its bytes already out of
 * `allocated` (sizes stay below 2^62: the replay's checked sums). */
#define BLOCK_REQUESTED (1ull << 63)

/* counted_out: a live block of size (with its BLOCK_REQUESTED bit) is gone: out of `allocated`
 * unless its free was requested before */
static inline void counted_out(blocks *b, uint64_t size)
{
    if (!(size & BLOCK_REQUESTED))
        b->allocated -= size;
}

/* carved: the size of the block a tensor at addr (r: its request rounded) gets in segment s,
 * whose list's first block past addr is its k-th (the free range runs to the next live one or
 * the segment's end); r counted unplaced when it does not fit (or s is NULL) */
static inline uint64_t carved(blocks *b, const blocks_segment *s, size_t k, uint64_t addr,
                              uint64_t r)
{
    size_t j = s ? next_live(s, k) : 0;
    uint64_t end = !s ? 0 : j < s->n ? s->blk[j].start : s->addr + s->size;
    if (!s || end - addr < r) {
        b->unplaced++;
        return r;
    }
    return blocks_size_rounded(&b->rules, end - addr, r); /* (r: rounded once) */
}

/* made: the block made last is at place i of s (its place a hint for its free: blocks.hint) */
static inline void made(blocks *b, blocks_segment *s, size_t i)
{
    s->made = (uint32_t)i;
    s->made_in = b->epoch; /* (a block of this epoch in it) */
    b->hint = (uint8_t)(i < BLOCKS_NO_HINT ? i : BLOCKS_NO_HINT);
}
/* counted_in: a live block of bsize bytes is made: into `allocated`, its peak (t: its time) */
static inline uint64_t counted_in(blocks *b, uint64_t bsize, uint64_t t)
{
    b->allocated += bsize;
    if (b->allocated > b->peak)
        b->peak = b->allocated, b->t_peak = t;
    if (__builtin_expect(b->allocated > b->epoch_peak, 0))
        b->epoch_peak = b->allocated, b->gen++;
    return bsize;
}

/* alloc_any: blocks_alloc's work for any tensor (r: its size rounded; s, k: its segment and the
 * place past it in the list, as made_at gives them) */
static __attribute__((noinline)) uint64_t alloc_any(blocks *b, uint64_t addr, uint64_t size,
                                                    uint64_t t, uint64_t r, blocks_segment *s,
                                                    size_t k)
{
    uint64_t bsize = r, old;
    /* the block at addr in the list: a live one (its free was not seen, the new one replaces
     * it, in its place), or a dead one (live again, in its place) */
    blocks_block *at = k && s->blk[k - 1].start == addr ? &s->blk[k - 1] : NULL;
    int here = at && at->size;
    if (here)
        counted_out(b, at->size);
    else if (blocks_loose_take(b, addr, &old))
        counted_out(b, old);
    bsize = b->rules.async ? size : carved(b, s, k, addr, r); /* (k: the first block past addr) */
    if (at) {
        s->dead -= !here;
        at->size = bsize;
        made(b, s, k - 1);
    } else if (s && !blk_reserve(b, &s, (size_t)s->n + 1)) {
        memmove(s->blk + k + 1, s->blk + k, (s->n - k) * sizeof *s->blk);
        s->blk[k] = (blocks_block){addr, bsize};
        s->n++;
        made(b, s, k);
    } else { /* in no segment (or its list cannot grow): loose */
        b->hint = BLOCKS_NO_HINT;
        uint64_t *e = blocks_loose_add(b, addr);
        if (!e)
            return 0;
        *e = bsize;
    }
    return counted_in(b, bsize, t);
}

uint64_t blocks_alloc(blocks *b, uint64_t addr, uint64_t size, uint64_t t)
{
    uint64_t r = blocks_round(&b->rules, size);
    blocks_segment *s = b->rules.async ? NULL : seg_of(b, addr);
    size_t k = s ? made_at(b, s, addr) : 0;
    blocks_block *at = k ? &s->blk[k - 1] : NULL;
    if (!at || at->start != addr || at->size || b->nloose || b->zero_loose)
        return alloc_any(b, addr, size, t, r, s, k);
    /* the common tensor: a dead block at addr live again, in its place, no loose block to take
     * (alloc_any's way for it, with fewer registers saved and tests made: 133 instructions a
     * tensor of vtgen's default mode had gone to blocks_alloc, 102 now) */
    uint64_t bsize = carved(b, s, k, addr, r);
    s->dead--;
    at->size = bsize;
    made(b, s, k - 1);
    return counted_in(b, bsize, t);
}

/* size_at: where the size of the live block at addr is kept (its segment's list, else the loose
 * ones), NULL when none is there. */
static uint64_t *size_at(blocks *b, uint64_t addr)
{
    blocks_segment *s = seg_of(b, addr);
    size_t k = s ? upper(s->blk, s->n, addr) : 0;
    return k && s->blk[k - 1].start == addr && s->blk[k - 1].size ? &s->blk[k - 1].size
                                                                  : blocks_loose_find(b, addr);
}

uint64_t blocks_free_request(blocks *b, uint64_t addr)
{
    uint64_t *e = size_at(b, addr);
    if (!e || (*e & BLOCK_REQUESTED))
        return 0;
    b->allocated -= *e;
    *e |= BLOCK_REQUESTED;
    return *e & ~BLOCK_REQUESTED;
}

uint64_t blocks_free(blocks *b, uint64_t addr)
{
    return blocks_free_hinted(b, addr, BLOCKS_NO_HINT);
}

uint64_t blocks_free_hinted(blocks *b, uint64_t addr, unsigned hint)
{
    blocks_segment *s = seg_of(b, addr);
    /* (its place when made first; then the block made last: a temporary is freed before the next
     * tensor is made; else a search) */
    size_t k = !s                                                ? 0
               : hint < s->n && s->blk[hint].start == addr       ? hint + (size_t)1
               : s->made < s->n && s->blk[s->made].start == addr ? s->made + (size_t)1
                                                                 : upper(s->blk, s->n, addr);
    uint64_t size;
    if (k && s->blk[k - 1].start == addr && s->blk[k - 1].size) {
        size = s->blk[k - 1].size;
        s->blk[k - 1].size = 0; /* dead, in its place */
        s->freed_gen = b->gen;
        *freed_slot(b, addr) = (blocks_freed){addr, k - 1};
        if (++s->dead > s->n / 2 && s->n >= BLK_COMPACT)
            compact(s);
    } else if (!blocks_loose_take(b, addr, &size)) {
        return 0;
    }
    counted_out(b, size);
    return size & ~BLOCK_REQUESTED;
}
