/* allocsim.c — PyTorch's caching allocator under its default rules, simulated (allocsim.h).
 * Blocks are kept in one array, linked to their neighbours in their segment; each pool's free
 * blocks in an array sorted by (size, address), searched by bisection: a step's free blocks are
 * a few thousand at most, so an insertion's move is short. */
#include "allocsim.h"

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
    uint32_t prev, next; /* neighbours in its segment (0: none) */
    uint8_t small, free;
} blk;

typedef struct pent {
    uint64_t size, addr;
    uint32_t b;
} pent;

typedef struct pool {
    pent *v;
    size_t n, cap;
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
    free(a->pools[0].v);
    free(a->pools[1].v);
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

/* lower: the first entry of p not below (size, addr) */
static size_t lower(const pool *p, uint64_t size, uint64_t addr)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const pent *e = &p->v[mid];
        if (e->size < size || (e->size == size && e->addr < addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int pool_add(allocsim *a, uint32_t i)
{
    pool *p = &a->pools[a->b[i].small];
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        pent *v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return a->failed = 1, -1;
        p->v = v, p->cap = cap;
    }
    size_t k = lower(p, a->b[i].size, a->b[i].addr);
    memmove(p->v + k + 1, p->v + k, (p->n - k) * sizeof *p->v);
    p->v[k] = (pent){a->b[i].size, a->b[i].addr, i};
    p->n++;
    return 0;
}

/* pool_cut: p's entry k out of it */
static void pool_cut(pool *p, size_t k)
{
    memmove(p->v + k, p->v + k + 1, (p->n - k - 1) * sizeof *p->v);
    p->n--;
}

/* pool_take: block i, free, out of its pool */
static void pool_take(allocsim *a, uint32_t i)
{
    pool *p = &a->pools[a->b[i].small];
    size_t k = lower(p, a->b[i].size, a->b[i].addr);
    if (k < p->n && p->v[k].b == i)
        pool_cut(p, k);
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

/* (past these the simulation says nothing: no device holds 2^50 bytes, and a pool of more free
 * blocks than a step's would make each insertion's move quadratic) */
#define SIM_BYTES_MAX ((uint64_t)1 << 50)
#define SIM_POOL_MAX ((size_t)1 << 16)

uint32_t allocsim_alloc(allocsim *a, uint64_t n)
{
    if (a->failed || n > SIM_BYTES_MAX || a->reserved > SIM_BYTES_MAX ||
        a->pools[0].n + a->pools[1].n > SIM_POOL_MAX)
        return a->failed = 1, 0;
    uint64_t size = n < 512 ? 512 : (n + 511) / 512 * 512;
    int small = size <= SMALL_MAX;
    pool *p = &a->pools[small];
    size_t k = lower(p, size, 0);
    uint32_t i;
    if (k < p->n) { /* best fit: the smallest free block that holds it, the lowest first */
        i = p->v[k].b;
        pool_cut(p, k);
    } else { /* a new segment, as cudaMalloc gives it: one free block */
        uint64_t seg = small              ? SMALL_SEGMENT
                       : size < LARGE_MIN ? LARGE_SEGMENT
                                          : (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
        if (!(i = slot(a)))
            return 0;
        a->b[i] = (blk){a->next_addr, seg, 0, 0, 0, (uint8_t)small, 1};
        a->next_addr += seg + ROUND_LARGE; /* (segments never adjacent: never merged) */
        a->reserved += seg;
    }
    uint64_t rest = a->b[i].size - size;
    if (small ? rest >= 512 : rest > SMALL_MAX) { /* split: the rest stays free, after it */
        uint32_t r = slot(a);
        if (!r)
            return 0;
        blk *b = &a->b[i];
        a->b[r] = (blk){b->addr + size, rest, 0, i, b->next, b->small, 1};
        if (b->next)
            a->b[b->next].prev = r;
        b->next = r;
        b->size = size;
        if (pool_add(a, r) < 0)
            return 0;
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
