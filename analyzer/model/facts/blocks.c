/* blocks.c — PyTorch's caching-allocator blocks emulated from a trace (blocks.h). The rules
 * follow c10/cuda/CUDACachingAllocator.cpp (2.4 to 2.11): round_size, the small / large pool,
 * should_split; a block is carved from the start of a free range, and free ranges run from a
 * block's start to the next live block or the end of its segment (free blocks merge).
 * A segment's live blocks are a list by start (nodes of one pool) through its sentinel, whose
 * start is the segment's end; a table by start finds a tensor's block at its free; a hint by the
 * address a block ends at finds the block a new tensor follows (the allocator carves it where a
 * free range begins: right after a live block, or at a segment's start), else its segment's list
 * is searched from an anchor. Where the old sorted arrays searched and moved each segment's blocks,
 * the blocks of the slowest real trace cost 15.2 M instructions, now 7.2 M (blocks_index.c: the
 * segments and the loose blocks; blocks_rules.c: the allocator's settings). */
#include "blocks.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "blocks_index.h"

/* ---- the emulation -------------------------------------------------------------------------- */

#define NONE BLOCKS_NONE
/* A slot's node when its block went (its start kept: the slot taken again by a block there, which
 * the caching allocator's reuse of addresses makes the usual, else by the next rebuild). */
#define GONE (NONE - 1)

/* The table of blocks by start before its first block: two empty slots, never written (counted
 * in use: a block going in rebuilds it first). */
static blocks_slot no_slots[2] = {{0, NONE, NONE}, {0, NONE, NONE}};

void blocks_init(blocks *b, const blocks_rules *rules)
{
    memset(b, 0, sizeof *b);
    b->rules = *rules;
    b->free_node = NONE;
    b->slot = no_slots, b->capslot = 2, b->nslot = 1, b->slot_shift = 63;
}

void blocks_free_all(blocks *b)
{
    for (size_t i = 0; i < b->nsegs; i++)
        free(b->segs[i].anc);
    free(b->segs);
    free(b->node);
    if (b->slot != no_slots)
        free(b->slot);
    free(b->loose);
    free(b->pos);
    free(b->free_ids);
    free(b->near);
    blocks_rules rules = b->rules;
    blocks_init(b, &rules); /* empty, and usable again (its table the shared empty one) */
}

/* ---- the nodes and the table of blocks by start ---------------------------------------------- */

/* A live block's size with BLOCK_REQUESTED set: its free was requested, its bytes already out of
 * `allocated` (sizes stay below 2^62: the replay's checked sums). */
#define BLOCK_REQUESTED (1ull << 63)

/* node_new: an unused node (NONE: out of memory); the pool grown, its new nodes unused (a free
 * list never empty but when the pool is full: blocks_alloc takes its node from it inline) */
static uint32_t node_new(blocks *b)
{
    uint32_t i = b->free_node;
    if (i == NONE) {
        size_t from = b->nnode;
        if (from >= GONE - 1 ||
            blocks_grow((void **)&b->node, &b->capnode, from + 1, sizeof *b->node, 256))
            return NONE;
        b->nnode = b->capnode < GONE - 1 ? b->capnode : GONE - 1;
        for (size_t k = b->nnode; k-- > from;)
            b->node[k] = (blocks_node){0, 0, NONE, i}, i = (uint32_t)k;
    }
    b->free_node = b->node[i].next;
    return i;
}

/* node_put: node i is unused again (prev NONE: no hint or anchor takes it for a block; a live
 * block's size can be 0, a request near 2^64 rounded past it) */
static inline void node_put(blocks *b, uint32_t i)
{
    b->node[i].size = 0;
    b->node[i].prev = NONE; /* unused (a live block's or a sentinel's prev is a node) */
    b->node[i].next = b->free_node;
    b->free_node = i;
}

/* slot_find: the slot of the block starting at addr (a gone one's: node GONE), or the empty one
 * where it would go */
static inline size_t slot_find(const blocks *b, uint64_t addr)
{
    size_t mask = b->capslot - 1, j = blocks_slot_of(b, addr);
    while (b->slot[j].node != NONE && b->slot[j].start != addr)
        j = (j + 1) & mask;
    return j;
}

/* note_end: node i's block now ends where its slot's hint says so */
static inline void note_end(blocks *b, uint32_t i)
{
    const blocks_node *e = &b->node[i];
    b->slot[blocks_slot_of(b, e->start + (e->size & ~BLOCK_REQUESTED))].ends = i;
}

/* slots_fit: the table rebuilt without its gone blocks, grown to hold 4 slots a block, and the
 * hints of its blocks written again; -1 out of memory */
static int slots_fit(blocks *b)
{
    size_t cap = b->slot == no_slots ? 1024 : b->capslot, oc = b->capslot;
    while ((b->nblk + 1) * 4 > cap)
        cap *= 2;
    blocks_slot *old = b->slot, *n = malloc(cap * sizeof *n);
    if (!n)
        return -1;
    memset(n, 0xff, cap * sizeof *n); /* no block, no hint */
    b->slot = n, b->capslot = cap, b->slot_shift = 64 - (unsigned)__builtin_ctzll(cap);
    b->nslot = b->nblk;
    for (size_t i = 0; i < oc; i++)
        if (old[i].node < GONE)
            n[slot_find(b, old[i].start)] = (blocks_slot){old[i].start, old[i].node, NONE};
    for (size_t i = 0; i < oc; i++)
        if (old[i].node < GONE)
            note_end(b, old[i].node);
    if (old != no_slots)
        free(old);
    return 0;
}

/* slot_room: a block can take an empty slot (half of them in use at most, gone ones counted:
 * searches stop soon) */
static inline int slot_room(const blocks *b)
{
    return (b->nslot + 1) * 2 <= b->capslot;
}

/* slot_take: the block of node i starting at addr in slot j (slot_find's; room for it) */
static inline void slot_take(blocks *b, size_t j, uint64_t addr, uint32_t i)
{
    b->nslot += b->slot[j].node == NONE;
    b->slot[j].start = addr, b->slot[j].node = i;
    b->nblk++;
}

/* slot_del: the block of slot i is gone */
static inline void slot_del(blocks *b, size_t i)
{
    b->slot[i].node = GONE;
    b->nblk--;
}

/* ---- anchors: where a search in a segment's list starts ----------------------------------- */

/* A search walks the list from the last anchor below its address; as it walks it makes every
 * ANCHOR_EVERY-th block it passes an anchor, so the next search there walks less. An anchor is
 * kept while its block lives: it names its node and start, checked before use (a node is reused;
 * nothing else is done when a block goes). */
#define ANCHOR_EVERY 16

/* anc_lower: the index of s's first anchor starting at a or above */
static size_t anc_lower(const blocks_segment *s, uint64_t a)
{
    size_t lo = 0, hi = s->nanc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->anc[mid].start < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* anc_live: s's anchor k names a live block (its start's: in s's list) */
static inline int anc_live(const blocks *b, const blocks_segment *s, size_t k)
{
    uint32_t i = s->anc[k].node;
    /* (a sentinel's start is its segment's end: one equal to an anchor's is the end of the
     * segment just below s, an anchor at s's start) */
    return i < b->nnode && b->node[i].prev != NONE && b->node[i].start == s->anc[k].start &&
           s->anc[k].start > s->addr;
}

/* anc_compact: s's anchors of blocks gone are dropped; returns how many of those before k were */
static size_t anc_compact(const blocks *b, blocks_segment *s, size_t k)
{
    size_t w = 0, gone = 0;
    for (size_t r = 0; r < s->nanc; r++)
        if (anc_live(b, s, r))
            s->anc[w++] = s->anc[r];
        else
            gone += r < k;
    s->nanc = w;
    return gone;
}

/* anc_put: node i (starting at a) among s's anchors at index k (where it sorts); returns the
 * index after it (compacted first when full; out of memory: not put, a search walks longer) */
static size_t anc_put(const blocks *b, blocks_segment *s, size_t k, uint64_t a, uint32_t i)
{
    if (s->nanc == s->capanc) {
        k -= anc_compact(b, s, k);
        if (s->nanc * 2 >= s->capanc && /* (still half full: twice the room) */
            blocks_grow((void **)&s->anc, &s->capanc, s->capanc + 1, sizeof *s->anc, 8))
            return k;
    }
    memmove(s->anc + k + 1, s->anc + k, (s->nanc - k) * sizeof *s->anc);
    s->anc[k] = (blocks_anchor){a, i};
    s->nanc++;
    return k + 1;
}

/* pred: the last node of s's list starting below a (its sentinel: none), a in s: a walk from the
 * last live anchor below a (the ones gone before it dropped) */
static __attribute__((noinline)) uint32_t pred(blocks *b, blocks_segment *s, uint64_t a)
{
    size_t k = anc_lower(s, a);
    while (k && !anc_live(b, s, k - 1)) {
        memmove(s->anc + k - 1, s->anc + k, (s->nanc - k) * sizeof *s->anc);
        s->nanc--, k--;
    }
    uint32_t p = k ? s->anc[k - 1].node : s->sent;
    const blocks_node *n = b->node;
    b->list_searches++;
    for (;;) {
#pragma GCC unroll 16
        for (int c = 0; c < ANCHOR_EVERY; c++) { /* (unrolled: no count to keep) */
            uint32_t q = n[p].next;
            if (n[q].start >= a) { /* (the sentinel's start, s's end, is above a) */
                b->list_walked += (unsigned)c;
                return p;
            }
            p = q;
        }
        b->list_walked += ANCHOR_EVERY;
        k = anc_put(b, s, k, n[p].start, p);
    }
}

/* drop: the blocks of a list from node q on (up to its sentinel sent) that start below end leave
 * it: loose, their frees still count them out (out of memory: lost, mem.h says so); returns the
 * first one left (sent: none), to be linked to what came before q */
static uint32_t drop(blocks *b, uint32_t sent, uint32_t q, uint64_t end)
{
    while (q != sent && b->node[q].start < end) {
        uint32_t next = b->node[q].next;
        uint64_t *e = blocks_loose_add(b, b->node[q].start);
        if (e)
            *e = b->node[q].size;
        slot_del(b, slot_find(b, b->node[q].start));
        node_put(b, q);
        q = next;
    }
    return q;
}

/* link: node q follows node p in their list */
static inline void link(blocks *b, uint32_t p, uint32_t q)
{
    b->node[p].next = q;
    b->node[q].prev = p;
}

/* ---- segments, added and released ------------------------------------------------------- */

/* split: segs[i] keeps its head below addr; its part from end on (when it ends past end) becomes a
 * segment of its own with its blocks where there is room for one; the blocks between go loose.
 * Returns the index of the segment after what is left of segs[i]. */
static size_t split(blocks *b, size_t i, uint64_t addr, uint64_t end)
{
    const size_t at = i;
    uint64_t s_end = b->segs[i].addr + b->segs[i].size;
    uint32_t p = pred(b, &b->segs[i], addr), sent = b->segs[i].sent, tid, tail = NONE;
    if (s_end > end && (tail = node_new(b)) != NONE &&
        (blocks_segs_reserve(b, b->nsegs + 1) || blocks_new_id(b, &tid))) {
        node_put(b, tail);
        tail = NONE;
    }
    /* the blocks in the hole go loose, and those past it when they have no segment of their own */
    uint32_t q = drop(b, sent, b->node[p].next, tail != NONE ? end : UINT64_MAX);
    blocks_segment *s = &b->segs[at];
    if (tail != NONE) {
        b->node[tail] = (blocks_node){s_end, 0, tail, tail};
        if (q != sent) {
            uint32_t last = b->node[sent].prev;
            link(b, tail, q), link(b, last, tail);
        }
        blocks_segment t = {end, s_end - end, NULL, 0, 0, tail, tid};
        size_t k = anc_lower(s, end); /* its anchors: s's past the hole */
        if (s->nanc > k &&
            !blocks_grow((void **)&t.anc, &t.capanc, s->nanc - k, sizeof *t.anc, 8)) {
            memcpy(t.anc, s->anc + k, (s->nanc - k) * sizeof *s->anc);
            t.nanc = s->nanc - k;
        }
        memmove(s + 2, s + 1, (b->nsegs - at - 1) * sizeof *s);
        b->segs[at + 1] = t;
        b->nsegs++;
        blocks_renumber(b, at + 1);
        i++;
    }
    link(b, p, sent);
    b->node[sent].start = addr;
    s->size = addr - s->addr;
    s->nanc = anc_lower(s, addr);
    return i + 1;
}

void blocks_segment_del(blocks *b, uint64_t addr, uint64_t size)
{
    uint64_t end = addr + size < addr ? UINT64_MAX : addr + size;
    /* segments are sorted and apart: the first that can overlap holds addr or starts after it */
    size_t i = blocks_seg_upper(b, addr);
    if (i && b->segs[i - 1].addr + b->segs[i - 1].size > addr)
        i--;
    while (i < b->nsegs && b->segs[i].addr < end) {
        blocks_segment *s = &b->segs[i];
        uint64_t s_end = s->addr + s->size;
        if (s_end <= addr) {
            i++;
        } else if (s->addr >= addr && s_end <= end) { /* all of it */
            drop(b, s->sent, b->node[s->sent].next, UINT64_MAX);
            node_put(b, s->sent);
            free(s->anc);
            blocks_drop_id(b, s->id);
            memmove(s, s + 1, (b->nsegs - i - 1) * sizeof *s);
            b->nsegs--;
            blocks_renumber(b, i);
        } else if (s->addr < addr) { /* keep the head; a tail past the hole is its own */
            i = split(b, i, addr, end);
        } else { /* keep the tail */
            link(b, s->sent, drop(b, s->sent, b->node[s->sent].next, end));
            size_t k = anc_lower(s, end);
            if (k) /* (none: the list may be NULL) */
                memmove(s->anc, s->anc + k, (s->nanc - k) * sizeof *s->anc);
            s->nanc -= k;
            s->size = s_end - end;
            s->addr = end;
            i++;
        }
    }
}

/* join: segment i absorbs segment i + 1, which starts where it ends (their lists one, and their
 * anchors where there is room for them). */
static void join(blocks *b, size_t i)
{
    blocks_segment *s = &b->segs[i], *t = &b->segs[i + 1];
    uint32_t first = b->node[t->sent].next;
    if (first != t->sent) {
        uint32_t last = b->node[t->sent].prev, s_last = b->node[s->sent].prev;
        link(b, s_last, first), link(b, last, s->sent);
    }
    b->node[s->sent].start = t->addr + t->size;
    s->size += t->size;
    if (t->nanc &&
        !blocks_grow((void **)&s->anc, &s->capanc, s->nanc + t->nanc, sizeof *s->anc, 8)) {
        memcpy(s->anc + s->nanc, t->anc, t->nanc * sizeof *t->anc);
        s->nanc += t->nanc;
    }
    node_put(b, t->sent);
    free(t->anc);
    blocks_drop_id(b, t->id);
    memmove(t, t + 1, (b->nsegs - i - 2) * sizeof *t);
    b->nsegs--;
    blocks_renumber(b, i + 1);
}

static int segment_add(blocks *b, uint64_t addr, uint64_t size, int joins)
{
    if (!size || addr + size < addr)
        return -1;
    blocks_segment_del(b, addr, size); /* a range reserved twice: the newer one holds */
    uint32_t id, sent;
    if (blocks_segs_reserve(b, b->nsegs + 1) || (sent = node_new(b)) == NONE)
        return -1;
    if (blocks_new_id(b, &id)) {
        node_put(b, sent);
        return -1;
    }
    b->node[sent] = (blocks_node){addr + size, 0, sent, sent};
    size_t i = blocks_seg_upper(b, addr);
    memmove(&b->segs[i + 1], &b->segs[i], (b->nsegs - i) * sizeof *b->segs);
    b->segs[i] = (blocks_segment){addr, size, NULL, 0, 0, sent, id};
    b->nsegs++;
    blocks_renumber(b, i);
    blocks_near_fit(b);
    if (joins && i + 1 < b->nsegs && b->segs[i + 1].addr == addr + size)
        join(b, i);
    if (joins && i > 0 && b->segs[i - 1].addr + b->segs[i - 1].size == addr)
        join(b, i - 1);
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

void blocks_prefetch_seg(const blocks *b, uint64_t addr)
{
    const blocks_slot *e = &b->slot[blocks_slot_of(b, addr)];
    if (e->node < GONE && e->start == addr) /* a free's block */
        __builtin_prefetch(&b->node[e->node]);
    if (e->ends < b->nnode) /* an alloc's: the one before it */
        __builtin_prefetch(&b->node[e->ends]);
}

size_t blocks_prefetch_starts(const blocks *b, uint64_t addr)
{
    const blocks_slot *e = &b->slot[blocks_slot_of(b, addr)];
    if (e->node < GONE && e->start == addr) { /* a free's block: its neighbours */
        __builtin_prefetch(&b->node[b->node[e->node].prev]);
        __builtin_prefetch(&b->node[b->node[e->node].next]);
    } else if (e->ends < b->nnode) { /* an alloc's: the block after the one before it */
        __builtin_prefetch(&b->node[b->node[e->ends].next]);
    }
    return blocks_near_at(b, addr);
}

/* counted_out: a live block of size (with its BLOCK_REQUESTED bit) is gone: out of `allocated`
 * unless its free was requested before */
static inline void counted_out(blocks *b, uint64_t size)
{
    if (!(size & BLOCK_REQUESTED))
        b->allocated -= size;
}

/* carve: blocks_size — the block a request rounded to r gets from the free bytes at its address
 * (r when they are fewer: counted unplaced) */
static inline uint64_t carve(blocks *b, uint64_t free_bytes, uint64_t r)
{
    if (free_bytes < r) {
        b->unplaced++;
        return r;
    }
    return free_bytes > r && !blocks_should_split(&b->rules, free_bytes, r) ? free_bytes : r;
}

/* hinted: node p (a hint) is the last block of addr's segment starting below addr: a block (size
 * 0: a sentinel or unused) below addr whose next one starts above it (addr is in its segment) */
static inline int hinted(const blocks *b, uint32_t p, uint64_t addr)
{
    const blocks_node *n = b->node;
    /* (a sentinel never passes: its start is its segment's end, its next starts at or below it) */
    return p < b->nnode && n[p].prev != NONE && n[p].start < addr && n[n[p].next].start > addr;
}

/* counted_in: a block of bsize is live from t */
static inline uint64_t counted_in(blocks *b, uint64_t bsize, uint64_t t)
{
    b->allocated += bsize;
    if (b->allocated > b->peak)
        b->peak = b->allocated, b->t_peak = t;
    return bsize;
}

/* place: a block of bsize at addr (slot j's) goes after node p in its list (addr's segment's);
 * -1 out of memory */
static int place(blocks *b, uint64_t addr, uint64_t bsize, uint32_t p, size_t j)
{
    uint32_t i = node_new(b);
    if (i == NONE)
        return -1;
    if (!slot_room(b)) {
        if (slots_fit(b)) {
            node_put(b, i);
            return -1;
        }
        j = slot_find(b, addr);
    }
    uint32_t q = b->node[p].next;
    b->node[i] = (blocks_node){addr, bsize, p, q};
    link(b, p, i), link(b, i, q);
    slot_take(b, j, addr, i);
    note_end(b, i);
    return 0;
}

/* before: the last block of addr's segment starting below addr (its sentinel: none; NONE: addr
 * in no segment), where no block starts at addr and the hint did not name it */
static inline uint32_t before(blocks *b, uint64_t addr)
{
    blocks_segment *s = blocks_seg_of(b, addr);
    return !s ? NONE : s->addr == addr ? s->sent : pred(b, s, addr);
}

/* alloc_any: blocks_alloc's work in every case (r: size rounded) */
static __attribute__((noinline)) uint64_t alloc_any(blocks *b, uint64_t addr, uint64_t size,
                                                    uint64_t r, uint64_t t)
{
    uint64_t bsize = r, old;
    size_t j = slot_find(b, addr);
    uint32_t x = b->slot[j].node, p = NONE;
    if (x < GONE) { /* a block there already: its free was not seen, the new one replaces it */
        counted_out(b, b->node[x].size);
        b->node[x].size = bsize = carve(b, b->node[b->node[x].next].start - addr, r);
        note_end(b, x);
        return counted_in(b, bsize, t);
    }
    if (blocks_loose_take(b, addr, &old))
        counted_out(b, old);
    if (b->rules.async) {
        bsize = size;
    } else if ((p = b->slot[blocks_slot_of(b, addr)].ends, !hinted(b, p, addr))) {
        p = before(b, addr);
    }
    if (p != NONE)
        bsize = carve(b, b->node[b->node[p].next].start - addr, r);
    else if (!b->rules.async)
        b->unplaced++;
    if (p == NONE || place(b, addr, bsize, p, j)) { /* in no segment (or no room): loose */
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
    size_t j = slot_find(b, addr);
    uint32_t p = b->slot[blocks_slot_of(b, addr)].ends, i = b->free_node;
    /* the usual: no block at addr and none loose, an unused node, room in the table, addr in a
     * segment; the block before it the hint's (every tensor of the real traces but a segment's
     * first), else searched; else all of alloc_any's work */
    if (__builtin_expect(b->slot[j].node < GONE || (b->nloose | (uint64_t)b->zero_loose) ||
                             b->rules.async || i == NONE || !slot_room(b) ||
                             (!hinted(b, p, addr) && (p = before(b, addr)) == NONE),
                         0))
        return alloc_any(b, addr, size, r, t);
    blocks_node *n = b->node;
    uint32_t q = n[p].next;
    uint64_t bsize = carve(b, n[q].start - addr, r);
    b->free_node = n[i].next;
    n[i] = (blocks_node){addr, bsize, p, q};
    n[p].next = i, n[q].prev = i;
    slot_take(b, j, addr, i);
    note_end(b, i);
    return counted_in(b, bsize, t);
}

/* size_at: where the size of the live block at addr is kept (its segment's list, else the loose
 * ones), NULL when none is there. */
static uint64_t *size_at(blocks *b, uint64_t addr)
{
    uint32_t x = b->slot[slot_find(b, addr)].node;
    return x < GONE ? &b->node[x].size : blocks_loose_find(b, addr);
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

/* free_loose: blocks_free's work for a loose block */
static __attribute__((noinline)) uint64_t free_loose(blocks *b, uint64_t addr)
{
    uint64_t size;
    if (!blocks_loose_take(b, addr, &size))
        return 0;
    counted_out(b, size);
    return size & ~BLOCK_REQUESTED;
}

uint64_t blocks_free(blocks *b, uint64_t addr)
{
    size_t j = slot_find(b, addr);
    uint32_t x = b->slot[j].node;
    if (x >= GONE)
        return free_loose(b, addr);
    blocks_node *e = &b->node[x];
    uint64_t size = e->size;
    link(b, e->prev, e->next);
    slot_del(b, j);
    node_put(b, x);
    counted_out(b, size);
    return size & ~BLOCK_REQUESTED;
}
