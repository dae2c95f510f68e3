/* allocsim.c — PyTorch's caching allocator under its default rules, simulated (allocsim.h).
 * Blocks are kept in one array, linked to their neighbours in their segment. Each pool's free
 * blocks are kept ordered by (size, address) in runs of at most RUN keys, each run a sorted
 * array, the runs in order with each one's last key beside them: a best fit, an insertion and a
 * removal are two binary searches and a move of at most RUN keys, all in contiguous memory. (A
 * treap whose links lived in the blocks had been the first: its walks from block to block were
 * cache misses, a third of a one-step run's report time; a sorted array's moves before it had
 * been 38 % of a report's instructions with a Llama 400M's thousands of free small blocks.) */
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
    uint8_t small, free, pooled;
} blk;

/* a free block's place in its pool: its size, then its address, in 512 B units (every block's
 * are multiples of 512: requests round up to it, segments to 2 MiB), the size's above bit 31:
 * addresses are below SIM_BYTES_MAX, 2^40, the segments' laid out one after the other from 0 */
typedef uint64_t key;

#define RUN 64 /* the most keys in a run; two runs side by side hold more than RUN / 2 */

typedef struct run {
    struct ent {
        key k;
        uint64_t id; /* the block's index (a word: an entry is 16 bytes, one move for both) */
    } e[RUN];
    uint32_t n;
} run;

typedef struct pool {
    run **r;   /* the runs, in the keys' order (none empty) */
    key *last; /* each run's last key */
    uint32_t nr, capr;
    size_t n; /* free blocks in it */
} pool;

struct allocsim {
    blk *b;
    uint32_t nb, capb;
    uint32_t *spare; /* slots of blocks merged away, to reuse */
    uint32_t nspare, capspare;
    pool pools[2];                /* [1]: small */
    run *spare_runs;              /* one emptied run, kept for the next split */
    uint64_t reserved, requested; /* (reserved: where the next segment begins) */
    int failed;
};

allocsim *allocsim_new(void)
{
    allocsim *a = calloc(1, sizeof *a);
    if (a) {
        a->nb = 1; /* (slot 0: no block) */
    }
    return a;
}

void allocsim_delete(allocsim *a)
{
    if (!a)
        return;
    for (int p = 0; p < 2; p++) {
        for (uint32_t j = 0; j < a->pools[p].nr; j++)
            free(a->pools[p].r[j]);
        free(a->pools[p].r);
        free(a->pools[p].last);
    }
    free(a->spare_runs);
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

uint64_t allocsim_where(const allocsim *a, uint32_t h, uint64_t *size)
{
    int ok = h && h < a->nb;
    *size = ok ? a->b[h].size : 0;
    return ok ? a->b[h].addr : 0;
}

void allocsim_pools(const allocsim *a, size_t *blocks, size_t *runs)
{
    *blocks = a->pools[0].n + a->pools[1].n;
    *runs = (size_t)a->pools[0].nr + a->pools[1].nr;
}

int allocsim_failed(const allocsim *a)
{
    return a->failed;
}

static inline key key_make(uint64_t size, uint64_t addr)
{
    return (size >> 9) << 31 | addr >> 9;
}

static inline key key_of(const blk *b)
{
    return key_make(b->size, b->addr);
}

/* run_at: the first run of p whose last key is at least k; p->nr when none is */
static uint32_t run_at(const pool *p, key k)
{
    uint32_t lo = 0, hi = p->nr;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->last[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* lower: the place of the first key of r that is at least k (r->n when none is); without a
 * branch on the keys */
static uint32_t lower(const run *r, key k)
{
    uint32_t base = 0, n = r->n;
    while (n > 1) {
        uint32_t half = n / 2;
        base = r->e[base + half - 1].k < k ? base + half : base;
        n -= half;
    }
    return base + (n == 1 && r->e[base].k < k);
}

/* run_new: an empty run (the spare one first); NULL when out of memory (failed set) */
static run *run_new(allocsim *a)
{
    run *r = a->spare_runs;
    if (r)
        a->spare_runs = NULL;
    else if (!(r = malloc(sizeof *r)))
        a->failed = 1;
    if (r)
        r->n = 0;
    return r;
}

static void run_drop(allocsim *a, run *r)
{
    if (a->spare_runs)
        free(r);
    else
        a->spare_runs = r;
}

/* runs_open: room for a run at place j of p (the runs from j on moved up); -1 when out of
 * memory (failed set) */
static int runs_open(allocsim *a, pool *p, uint32_t j)
{
    if (p->nr == p->capr) {
        uint32_t cap = p->capr ? 2 * p->capr : 16;
        run **r = realloc(p->r, cap * sizeof *r);
        if (r)
            p->r = r;
        key *last = r ? realloc(p->last, cap * sizeof *last) : NULL;
        if (!last)
            return a->failed = 1, -1;
        p->last = last, p->capr = cap;
    }
    memmove(p->r + j + 1, p->r + j, (p->nr - j) * sizeof *p->r);
    memmove(p->last + j + 1, p->last + j, (p->nr - j) * sizeof *p->last);
    p->nr++;
    return 0;
}

/* runs_close: run j of p out of the list (not freed) */
static void runs_close(pool *p, uint32_t j)
{
    memmove(p->r + j, p->r + j + 1, (p->nr - j - 1) * sizeof *p->r);
    memmove(p->last + j, p->last + j + 1, (p->nr - j - 1) * sizeof *p->last);
    p->nr--;
}

/* pool_add: block i, free, into its pool */
static void pool_add(allocsim *a, uint32_t i)
{
    pool *p = &a->pools[a->b[i].small];
    key k = key_of(&a->b[i]);
    if (!p->nr) {
        run *r = run_new(a);
        if (!r || runs_open(a, p, 0) < 0) {
            free(r);
            return;
        }
        p->r[0] = r;
        p->last[0] = k;
    }
    uint32_t j = run_at(p, k);
    j -= j == p->nr; /* (past every key: the last run takes it) */
    run *r = p->r[j];
    if (r->n == RUN) { /* full: its upper half a run of its own, after it */
        run *q = run_new(a);
        if (!q || runs_open(a, p, j + 1) < 0) {
            free(q);
            return;
        }
        q->n = RUN / 2, r->n = RUN - RUN / 2;
        memcpy(q->e, r->e + r->n, q->n * sizeof *q->e);
        p->r[j + 1] = q;
        p->last[j + 1] = p->last[j];
        p->last[j] = r->e[r->n - 1].k;
        if (k > p->last[j])
            r = q, j++;
    }
    uint32_t at = lower(r, k);
    memmove(r->e + at + 1, r->e + at, (r->n - at) * sizeof *r->e);
    r->e[at] = (struct ent){k, i};
    if (at == r->n)
        p->last[j] = k;
    r->n++;
    a->b[i].pooled = 1;
    p->n++;
}

/* merge: run j + 1 of p appended to run j when both fit in half a run (so that two runs side
 * by side always hold more than RUN / 2 keys: a pool of n keys has fewer than 4n / RUN + 1
 * runs, n / 16 + 1, whatever order its blocks came and went in) */
static void merge_runs(allocsim *a, pool *p, uint32_t j);

static inline void merge(allocsim *a, pool *p, uint32_t j)
{
    if (j + 1 < p->nr && p->r[j]->n + p->r[j + 1]->n <= RUN / 2) /* (the test inline) */
        merge_runs(a, p, j);
}

static void merge_runs(allocsim *a, pool *p, uint32_t j)
{
    run *r = p->r[j], *q = p->r[j + 1];
    memcpy(r->e + r->n, q->e, q->n * sizeof *q->e);
    r->n += q->n;
    p->last[j] = p->last[j + 1];
    runs_close(p, j + 1);
    run_drop(a, q);
}

/* pool_remove: the key at place at of run j of p out of it; the block's index */
static uint32_t pool_remove(allocsim *a, pool *p, uint32_t j, uint32_t at)
{
    run *r = p->r[j];
    uint32_t i = (uint32_t)r->e[at].id;
    r->n--;
    memmove(r->e + at, r->e + at + 1, (r->n - at) * sizeof *r->e);
    if (!r->n) {
        runs_close(p, j);
        run_drop(a, r);
    } else {
        if (at == r->n)
            p->last[j] = r->e[at - 1].k; /* (its new last) */
        merge(a, p, j);
        if (j)
            merge(a, p, j - 1);
    }
    a->b[i].pooled = 0;
    p->n--;
    return i;
}

/* pool_take: block i, free, out of its pool */
static void pool_take(allocsim *a, uint32_t i)
{
    if (!a->b[i].pooled)
        return;
    pool *p = &a->pools[a->b[i].small];
    key k = key_of(&a->b[i]);
    uint32_t j = run_at(p, k);
    if (j == p->nr)
        return;
    uint32_t at = lower(p->r[j], k);
    if (at < p->r[j]->n && p->r[j]->e[at].k == k)
        pool_remove(a, p, j, at);
}

/* take_best: the free block of pool p that holds size bytes, the smallest then the lowest, out of
 * the pool; 0: none */
static uint32_t take_best(allocsim *a, pool *p, uint64_t size)
{
    key k = key_make(size, 0); /* (before every block of that size) */
    uint32_t j = run_at(p, k);
    return j < p->nr ? pool_remove(a, p, j, lower(p->r[j], k)) : 0;
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

/* (past these the simulation says nothing: no device holds 2^40 bytes in segments, and a step's
 * free blocks are far fewer than 2^16: a hostile trace's are not simulated) */
#define SIM_BYTES_MAX ((uint64_t)1 << 40)
#define SIM_POOL_MAX ((size_t)1 << 16)

uint64_t allocsim_block(uint64_t n)
{
    return n < 512 ? 512 : (n + 511) / 512 * 512;
}

uint64_t allocsim_segment(uint64_t block)
{
    return block <= SMALL_MAX  ? SMALL_SEGMENT
           : block < LARGE_MIN ? LARGE_SEGMENT
                               : (block + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

uint32_t allocsim_alloc(allocsim *a, uint64_t n)
{
    if (a->failed || n > SIM_BYTES_MAX || a->pools[0].n + a->pools[1].n > SIM_POOL_MAX)
        return a->failed = 1, 0;
    uint64_t size = allocsim_block(n);
    int small = size <= SMALL_MAX;
    uint32_t i = take_best(a, &a->pools[small], size);
    if (!i) { /* a new segment, as cudaMalloc gives it: one free block */
        uint64_t seg = allocsim_segment(size);
        if (seg > SIM_BYTES_MAX - a->reserved)
            return a->failed = 1, 0;
        if (!(i = slot(a)))
            return 0;
        /* (at the end of the last: blocks merge only with their neighbours in their segment) */
        a->b[i] = (blk){a->reserved, seg, 0, 0, 0, (uint8_t)small, 1, 0};
        a->reserved += seg;
    }
    uint64_t rest = a->b[i].size - size;
    if (small ? rest >= 512 : rest > SMALL_MAX) { /* split: the rest stays free, after it */
        uint32_t r = slot(a);
        if (!r)
            return 0;
        blk *b = &a->b[i];
        a->b[r] = (blk){b->addr + size, rest, 0, i, b->next, b->small, 1, 0};
        if (b->next)
            a->b[b->next].prev = r;
        b->next = r;
        b->size = size;
        pool_add(a, r);
        if (a->failed)
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
