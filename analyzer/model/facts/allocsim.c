/* allocsim.c — PyTorch's caching allocator under its default rules, simulated (allocsim.h).
 * Blocks are kept in one array, linked to their neighbours in their segment; each pool's free
 * blocks in a treap ordered by (size, address) whose links live in the blocks themselves (a
 * block is in at most one pool, only while free), its priorities a seeded hash of its slot:
 * a best fit, an insertion and a removal take O(log n) with no allocation, where a sorted
 * array's moves had been 38 % of a report's instructions (a Llama 400M's thousands of free
 * small blocks). */
#include "allocsim.h"
#include "hashseed.h"

#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define SMALL_MAX MIB            /* kSmallSize: requests up to this come from the small pool */
#define SMALL_SEGMENT (2 * MIB)  /* kSmallBuffer */
#define LARGE_SEGMENT (20 * MIB) /* kLargeBuffer, for requests under kMinLargeAlloc */
#define LARGE_MIN (10 * MIB)     /* kMinLargeAlloc */
#define ROUND_LARGE (2 * MIB)    /* kRoundLarge */

typedef struct blk {
    uint64_t addr, size, req;
    uint32_t prev, next;  /* neighbours in its segment (0: none) */
    uint32_t left, right; /* its children in its pool's treap (0: none), while in it */
    uint32_t prio;        /* its priority there: rank(its slot), worked out when it is made */
    uint8_t small, free, pooled;
} blk;

typedef struct pool {
    uint32_t root; /* (0: empty) */
    size_t n;
} pool;

struct allocsim {
    blk *b;
    uint32_t nb, capb;
    uint32_t *spare; /* slots of blocks merged away, to reuse */
    uint32_t nspare, capspare;
    pool pools[2]; /* [1]: small */
    uint64_t next_addr, reserved, requested;
    int failed;
};

allocsim *allocsim_new(void)
{
    allocsim *a = calloc(1, sizeof *a);
    if (a) {
        a->nb = 1; /* (slot 0: no block) */
        a->next_addr = 1ull << 40;
    }
    return a;
}

void allocsim_delete(allocsim *a)
{
    if (!a)
        return;
    free(a->b);
    free(a->spare);
    free(a);
}

uint64_t allocsim_reserved(const allocsim *a)
{
    return a->reserved;
}

uint64_t allocsim_requested(const allocsim *a)
{
    return a->requested;
}

int allocsim_failed(const allocsim *a)
{
    return a->failed;
}

/* before: block i's key (size, address) below block j's */
static int before(const blk *b, uint32_t i, uint32_t j)
{
    return b[i].size < b[j].size || (b[i].size == b[j].size && b[i].addr < b[j].addr);
}

/* rank: the priority of a block in slot i in its treap, the slot under the analyzer's hash seed
 * (a parent's is above its children's; kept in the block: blk.prio). Seeded: a trace's sizes
 * chosen against a known order of priorities would make the tree a list, each call a walk of
 * every free block; no answer depends on the tree's shape (a best fit is the keys' order). */
static uint32_t rank(uint32_t i)
{
    return (uint32_t)(hashseed_mix(i) >> 32);
}

/* split: the treap t cut into the blocks before block k (*lo) and the rest (*hi) */
static void split(blk *b, uint32_t t, uint32_t k, uint32_t *lo, uint32_t *hi)
{
    while (t) {
        if (before(b, t, k)) {
            *lo = t, lo = &b[t].right, t = b[t].right;
        } else {
            *hi = t, hi = &b[t].left, t = b[t].left;
        }
    }
    *lo = *hi = 0;
}

/* join: treaps lo and hi, every block of lo before every block of hi, made one */
static uint32_t join(blk *b, uint32_t lo, uint32_t hi)
{
    uint32_t root = 0, *at = &root;
    while (lo && hi) {
        if (b[lo].prio > b[hi].prio) {
            *at = lo, at = &b[lo].right, lo = b[lo].right;
        } else {
            *at = hi, at = &b[hi].left, hi = b[hi].left;
        }
    }
    *at = lo ? lo : hi;
    return root;
}

/* pool_add: block i, free, into its pool */
static void pool_add(allocsim *a, uint32_t i)
{
    pool *p = &a->pools[a->b[i].small];
    blk *b = a->b;
    uint32_t *at = &p->root, ri = b[i].prio;
    while (*at && b[*at].prio > ri) /* (down to where i's priority puts it) */
        at = before(b, i, *at) ? &b[*at].left : &b[*at].right;
    split(b, *at, i, &b[i].left, &b[i].right);
    *at = i;
    b[i].pooled = 1;
    p->n++;
}

/* pool_unlink: the block the link at points to (in pool p) out of its tree, its children joined in
 * its place; the block's index */
static uint32_t pool_unlink(allocsim *a, pool *p, uint32_t *at)
{
    blk *b = a->b;
    uint32_t i = *at;
    *at = join(b, b[i].left, b[i].right);
    b[i].left = b[i].right = 0;
    b[i].pooled = 0;
    p->n--;
    return i;
}

/* pool_take: block i, free, out of its pool */
static void pool_take(allocsim *a, uint32_t i)
{
    blk *b = a->b;
    if (!b[i].pooled)
        return;
    pool *p = &a->pools[b[i].small];
    uint32_t *at = &p->root;
    while (*at && *at != i)
        at = before(b, i, *at) ? &b[*at].left : &b[*at].right;
    if (*at)
        pool_unlink(a, p, at);
}

/* take_best: the free block of pool p that holds size bytes, the smallest then the lowest, out of
 * the pool (found and unlinked in one descent); 0: none */
static uint32_t take_best(allocsim *a, pool *p, uint64_t size)
{
    uint32_t *at = &p->root, *found = NULL;
    while (*at) {
        if (a->b[*at].size >= size) {
            found = at, at = &a->b[*at].left;
        } else {
            at = &a->b[*at].right;
        }
    }
    return found ? pool_unlink(a, p, found) : 0;
}

/* slot: a block's place (a spare one first); 0 when out of memory */
static uint32_t slot(allocsim *a)
{
    if (a->nspare)
        return a->spare[--a->nspare];
    if (a->nb >= a->capb) {
        uint32_t cap = a->capb ? 2 * a->capb : 1024;
        blk *b = cap > a->capb ? realloc(a->b, (size_t)cap * sizeof *b) : NULL;
        if (!b)
            return a->failed = 1, 0;
        a->b = b, a->capb = cap;
    }
    return a->nb++;
}

static void unslot(allocsim *a, uint32_t i)
{
    if (a->nspare == a->capspare) {
        uint32_t cap = a->capspare ? 2 * a->capspare : 256;
        uint32_t *s = realloc(a->spare, (size_t)cap * sizeof *s);
        if (!s)
            return; /* (the slot is not reused: no harm) */
        a->spare = s, a->capspare = cap;
    }
    a->spare[a->nspare++] = i;
}

/* (past these the simulation says nothing: no device holds 2^50 bytes, and a step's free blocks
 * are far fewer than 2^16: a hostile trace's are not simulated) */
#define SIM_BYTES_MAX ((uint64_t)1 << 50)
#define SIM_POOL_MAX ((size_t)1 << 16)

uint32_t allocsim_alloc(allocsim *a, uint64_t n)
{
    if (a->failed || n > SIM_BYTES_MAX || a->reserved > SIM_BYTES_MAX ||
        a->pools[0].n + a->pools[1].n > SIM_POOL_MAX)
        return a->failed = 1, 0;
    uint64_t size = n < 512 ? 512 : (n + 511) / 512 * 512;
    int small = size <= SMALL_MAX;
    uint32_t i = take_best(a, &a->pools[small], size);
    if (!i) { /* a new segment, as cudaMalloc gives it: one free block */
        uint64_t seg = small              ? SMALL_SEGMENT
                       : size < LARGE_MIN ? LARGE_SEGMENT
                                          : (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
        if (!(i = slot(a)))
            return 0;
        a->b[i] = (blk){a->next_addr, seg, 0, 0, 0, 0, 0, rank(i), (uint8_t)small, 1, 0};
        a->next_addr += seg + ROUND_LARGE; /* (segments never adjacent: never merged) */
        a->reserved += seg;
    }
    uint64_t rest = a->b[i].size - size;
    if (small ? rest >= 512 : rest > SMALL_MAX) { /* split: the rest stays free, after it */
        uint32_t r = slot(a);
        if (!r)
            return 0;
        blk *b = &a->b[i];
        a->b[r] = (blk){b->addr + size, rest, 0, i, b->next, 0, 0, rank(r), b->small, 1, 0};
        if (b->next)
            a->b[b->next].prev = r;
        b->next = r;
        b->size = size;
        pool_add(a, r);
    }
    a->b[i].free = 0;
    a->b[i].req = n;
    a->requested += n;
    return i;
}

void allocsim_free(allocsim *a, uint32_t h)
{
    if (!h || h >= a->nb || a->b[h].free || a->failed)
        return;
    blk *b = &a->b[h];
    a->requested -= b->req;
    b->free = 1;
    uint32_t nx = b->next;
    if (nx && a->b[nx].free) { /* merged with the free block after it */
        pool_take(a, nx);
        b->size += a->b[nx].size;
        b->next = a->b[nx].next;
        if (b->next)
            a->b[b->next].prev = h;
        unslot(a, nx);
    }
    uint32_t pv = b->prev;
    if (pv && a->b[pv].free) { /* ... and with the one before it, which takes its place */
        pool_take(a, pv);
        a->b[pv].size += b->size;
        a->b[pv].next = b->next;
        if (b->next)
            a->b[b->next].prev = pv;
        unslot(a, h);
        h = pv;
    }
    pool_add(a, h);
}
