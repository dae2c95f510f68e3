/* libsimtorch.c — SIMULATION helper for examples/sim/sim_train.py (no GPU, no PyTorch): an
 * emulation of PyTorch's CUDA caching allocator (or its cudaMallocAsync backend) on whatever
 * libcudart.so.13 is loaded (the project's fake one), and a backward thread named pt_autograd_0.
 * Python calls it through ctypes (GIL released, like PyTorch's bindings). Not PyTorch code. */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few runtime calls used, declared here (the project's own declarations; no CUDA headers). */
typedef int sim_cuda_err;
extern sim_cuda_err cudaMalloc(void **p, size_t size);
extern sim_cuda_err cudaFree(void *p);
extern sim_cuda_err cudaMallocAsync(void **p, size_t size, void *stream);
extern sim_cuda_err cudaFreeAsync(void *p, void *stream);
extern sim_cuda_err cudaHostAlloc(void **p, size_t size, unsigned int flags);
extern sim_cuda_err cudaMemGetInfo(size_t *free_b, size_t *total_b);
extern sim_cuda_err cudaGetLastError(void);
extern sim_cuda_err cudaDeviceSynchronize(void);

#define SIM_EXPORT __attribute__((visibility("default")))
#define MiB (1ull << 20)
#define SMALL_REQ MiB /* requests up to this share 2 MiB segments */
#define SMALL_SEG (2 * MiB)
#define MID_REQ (10 * MiB) /* requests below this share 20 MiB segments */
#define MID_SEG (20 * MiB)
#define ROUND 512ull

enum { MODE_CACHING = 0, MODE_ASYNC = 1 };
enum { OP_ALLOC = 0, OP_FREE_SLOT = 1, OP_FREE_PTR = 2 };

/* A block of a segment (caching mode): address-ordered list per segment. */
typedef struct block {
    uint64_t ptr, size;
    int allocated, small;
    struct block *prev, *next; /* neighbours in the same segment */
    struct block *seg_head;    /* first block of the segment (holds the segment's size) */
    uint64_t seg_size;         /* valid in the segment's first block */
    struct block *all_next;    /* list of all blocks, for the searches */
} block;

static struct {
    pthread_mutex_t lock;
    int mode;
    block *all;
    uint64_t stats[8]; /* allocated, peak allocated, reserved, peak reserved, device allocs,
                        * device frees, retries, ooms */
    char err[512];
    /* async mode: live sizes by pointer (small open-addressing table) */
    uint64_t *akeys, *avals;
    size_t acap, alive;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

enum { ST_ALLOC, ST_PEAK_ALLOC, ST_RESV, ST_PEAK_RESV, ST_NDEV, ST_NFREE, ST_RETRY, ST_OOM };

static void stat_add(int cur, int peak, int64_t d)
{
    S.stats[cur] += (uint64_t)d;
    if (S.stats[cur] > S.stats[peak])
        S.stats[peak] = S.stats[cur];
}

/* sim_init: selects the allocator (0 caching, 1 cudaMallocAsync per tensor) and creates the
 * CUDA context (cudaFree(NULL), as PyTorch's lazy init does). Returns the CUDA error (0 ok). */
SIM_EXPORT int sim_init(int mode)
{
    S.mode = mode;
    return cudaFree(NULL);
}

/* ---- async mode pointer table ---------------------------------------------------------- */
static size_t ahash(uint64_t k)
{
    return (size_t)((k >> 9) * 0x9E3779B97F4A7C15ull);
}

/* atab_put: remembers size v of pointer k (k != 0); grows the table. 0 ok, -1 no memory. */
static int atab_put(uint64_t k, uint64_t v)
{
    if ((S.alive + 1) * 2 > S.acap) {
        size_t ncap = S.acap ? S.acap * 2 : 4096;
        uint64_t *nk = calloc(ncap, sizeof *nk), *nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        for (size_t i = 0; i < S.acap; i++)
            if (S.akeys[i] && S.akeys[i] != UINT64_MAX) {
                size_t j = ahash(S.akeys[i]) & (ncap - 1);
                while (nk[j])
                    j = (j + 1) & (ncap - 1);
                nk[j] = S.akeys[i];
                nv[j] = S.avals[i];
            }
        free(S.akeys);
        free(S.avals);
        S.akeys = nk, S.avals = nv, S.acap = ncap;
    }
    size_t j = ahash(k) & (S.acap - 1);
    while (S.akeys[j] && S.akeys[j] != UINT64_MAX)
        j = (j + 1) & (S.acap - 1);
    S.akeys[j] = k;
    S.avals[j] = v;
    S.alive++;
    return 0;
}

/* atab_take: removes pointer k; returns its size (0 if unknown). */
static uint64_t atab_take(uint64_t k)
{
    if (!S.acap)
        return 0;
    size_t j = ahash(k) & (S.acap - 1);
    while (S.akeys[j]) {
        if (S.akeys[j] == k) {
            S.akeys[j] = UINT64_MAX; /* tombstone */
            S.alive--;
            return S.avals[j];
        }
        j = (j + 1) & (S.acap - 1);
    }
    return 0;
}

/* ---- caching mode ------------------------------------------------------------------------ */
static uint64_t segment_size(uint64_t rounded)
{
    if (rounded <= SMALL_REQ)
        return SMALL_SEG;
    if (rounded < MID_REQ)
        return MID_SEG;
    return (rounded + 2 * MiB - 1) / (2 * MiB) * (2 * MiB);
}

/* best_fit: the smallest free block of the right pool that holds size (lowest address on ties). */
static block *best_fit(uint64_t size, int small)
{
    block *best = NULL;
    for (block *b = S.all; b; b = b->all_next)
        if (!b->allocated && b->small == small && b->size >= size &&
            (!best || b->size < best->size || (b->size == best->size && b->ptr < best->ptr)))
            best = b;
    return best;
}

/* new_segment: cudaMalloc one segment; NULL when it fails (error cleared, as PyTorch does). */
static block *new_segment(uint64_t seg, int small)
{
    void *p = NULL;
    if (cudaMalloc(&p, seg) != 0) {
        cudaGetLastError();
        return NULL;
    }
    block *b = calloc(1, sizeof *b);
    if (!b) {
        cudaFree(p);
        return NULL;
    }
    b->ptr = (uint64_t)(uintptr_t)p;
    b->size = b->seg_size = seg;
    b->small = small;
    b->seg_head = b;
    b->all_next = S.all;
    S.all = b;
    S.stats[ST_NDEV]++;
    stat_add(ST_RESV, ST_PEAK_RESV, (int64_t)seg);
    return b;
}

static void unlink_all(block *x)
{
    for (block **pp = &S.all; *pp; pp = &(*pp)->all_next)
        if (*pp == x) {
            *pp = x->all_next;
            return;
        }
}

/* release_cached: cudaFree every segment that is one whole free block (PyTorch's
 * release_cached_blocks on the OOM path); returns how many were freed. */
static int release_cached(void)
{
    int n = 0;
    block **pp = &S.all;
    while (*pp) {
        block *b = *pp;
        if (!b->allocated && b->seg_head == b && b->size == b->seg_size) {
            *pp = b->all_next;
            cudaFree((void *)(uintptr_t)b->ptr);
            S.stats[ST_NFREE]++;
            stat_add(ST_RESV, ST_PEAK_RESV, -(int64_t)b->seg_size);
            free(b);
            n++;
            continue;
        }
        pp = &b->all_next;
    }
    return n;
}

static void format_oom(uint64_t tried)
{
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    cudaGetLastError();
    snprintf(
        S.err, sizeof S.err,
        "CUDA out of memory (SIMULATED). Tried to allocate %.2f MiB. GPU 0 has a total capacity "
        "of %.2f GiB of which %.2f MiB is free. Of the allocated memory %.2f GiB is allocated "
        "by the simulated PyTorch, and %.2f MiB is reserved but unallocated.",
        tried / 1048576.0, tot / 1073741824.0, fr / 1048576.0, S.stats[ST_ALLOC] / 1073741824.0,
        (S.stats[ST_RESV] - S.stats[ST_ALLOC]) / 1048576.0);
}

static uint64_t caching_alloc(uint64_t n)
{
    uint64_t size = n < ROUND ? ROUND : (n + ROUND - 1) / ROUND * ROUND;
    int small = size <= SMALL_REQ;
    block *b = best_fit(size, small);
    if (!b) {
        uint64_t seg = segment_size(size);
        b = new_segment(seg, small);
        if (!b) {
            release_cached();
            S.stats[ST_RETRY]++;
            b = new_segment(seg, small);
        }
        if (!b) {
            S.stats[ST_OOM]++;
            format_oom(seg);
            return 0;
        }
    }
    uint64_t rest = b->size - size;
    if ((small && rest >= ROUND) || (!small && rest > SMALL_REQ)) {
        block *r = calloc(1, sizeof *r);
        if (r) {
            *r = *b;
            r->ptr = b->ptr + size;
            r->size = rest;
            r->prev = b;
            r->seg_size = 0;
            if (b->next)
                b->next->prev = r;
            b->next = r;
            b->size = size;
            r->all_next = S.all;
            S.all = r;
        }
    }
    b->allocated = 1;
    stat_add(ST_ALLOC, ST_PEAK_ALLOC, (int64_t)b->size);
    return b->ptr;
}

static void caching_free(uint64_t p)
{
    block *b = S.all;
    while (b && !(b->allocated && b->ptr == p))
        b = b->all_next;
    if (!b)
        return;
    b->allocated = 0;
    stat_add(ST_ALLOC, ST_PEAK_ALLOC, -(int64_t)b->size);
    block *n = b->next;
    if (n && !n->allocated) { /* merge the next block into b */
        b->size += n->size;
        b->next = n->next;
        if (n->next)
            n->next->prev = b;
        unlink_all(n);
        free(n);
    }
    block *pv = b->prev;
    if (pv && !pv->allocated) { /* merge b into the previous block */
        pv->size += b->size;
        pv->next = b->next;
        if (b->next)
            b->next->prev = pv;
        unlink_all(b);
        free(b);
    }
}

/* sim_alloc: one tensor of n bytes; returns its device address, or 0 after an OOM (the
 * message like PyTorch's is in sim_error()). Thread-safe (one lock, like PyTorch's). */
SIM_EXPORT uint64_t sim_alloc(uint64_t n)
{
    uint64_t r = 0;
    pthread_mutex_lock(&S.lock);
    if (S.mode == MODE_CACHING) {
        r = caching_alloc(n);
    } else {
        void *p = NULL;
        if (cudaMallocAsync(&p, n, NULL) != 0) {
            cudaGetLastError();
            cudaDeviceSynchronize();
            S.stats[ST_RETRY]++;
            if (cudaMallocAsync(&p, n, NULL) != 0) {
                cudaGetLastError();
                p = NULL;
            }
        }
        if (p && atab_put((uint64_t)(uintptr_t)p, n) == 0) {
            r = (uint64_t)(uintptr_t)p;
            stat_add(ST_ALLOC, ST_PEAK_ALLOC, (int64_t)n);
            stat_add(ST_RESV, ST_PEAK_RESV, (int64_t)n);
        } else {
            S.stats[ST_OOM]++;
            format_oom(n);
        }
    }
    pthread_mutex_unlock(&S.lock);
    return r;
}

/* sim_free: releases a tensor from sim_alloc (0 and unknown addresses are ignored). */
SIM_EXPORT void sim_free(uint64_t p)
{
    if (!p)
        return;
    pthread_mutex_lock(&S.lock);
    if (S.mode == MODE_CACHING) {
        caching_free(p);
    } else {
        uint64_t n = atab_take(p);
        cudaFreeAsync((void *)(uintptr_t)p, NULL);
        stat_add(ST_ALLOC, ST_PEAK_ALLOC, -(int64_t)n);
        stat_add(ST_RESV, ST_PEAK_RESV, -(int64_t)n);
    }
    pthread_mutex_unlock(&S.lock);
}

/* sim_host_alloc: pinned host memory (cudaHostAlloc); 0 on failure. */
SIM_EXPORT uint64_t sim_host_alloc(uint64_t n)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, n, 0) != 0) {
        cudaGetLastError();
        return 0;
    }
    return (uint64_t)(uintptr_t)p;
}

/* sim_mem_get_info: cudaMemGetInfo into out[0] free, out[1] total; returns the CUDA error. */
SIM_EXPORT int sim_mem_get_info(uint64_t out[2])
{
    size_t f = 0, t = 0;
    int e = cudaMemGetInfo(&f, &t);
    out[0] = f, out[1] = t;
    return e;
}

/* sim_stats: out[8] = allocated, peak allocated, reserved, peak reserved, device allocs,
 * device frees, alloc retries, OOMs (PyTorch's memory_stats() names, own accounting). */
SIM_EXPORT void sim_stats(uint64_t out[8])
{
    pthread_mutex_lock(&S.lock);
    memcpy(out, S.stats, sizeof S.stats);
    pthread_mutex_unlock(&S.lock);
}

SIM_EXPORT const char *sim_error(void)
{
    return S.err;
}

/* ---- the backward thread ------------------------------------------------------------------ */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t th;
    int started;
    const int64_t *ops;
    int64_t nops;
    uint64_t *slots;
    int pending, done, result;
} A = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* run_plan: executes ops (triples op, a, b); after an OOM only the frees still run. */
static int run_plan(const int64_t *ops, int64_t n, uint64_t *slots)
{
    int failed = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t op = ops[3 * i], a = ops[3 * i + 1], b = ops[3 * i + 2];
        if (op == OP_ALLOC && !failed) {
            slots[b] = sim_alloc((uint64_t)a);
            failed = slots[b] == 0;
        } else if (op == OP_FREE_SLOT) {
            sim_free(slots[a]);
            slots[a] = 0;
        } else if (op == OP_FREE_PTR) {
            sim_free((uint64_t)a);
        }
    }
    return failed ? -1 : 0;
}

static void *autograd_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&A.lock);
    for (;;) {
        while (!A.pending)
            pthread_cond_wait(&A.cv, &A.lock);
        A.pending = 0;
        pthread_mutex_unlock(&A.lock);
        int r = run_plan(A.ops, A.nops, A.slots);
        pthread_mutex_lock(&A.lock);
        A.result = r;
        A.done = 1;
        pthread_cond_broadcast(&A.cv);
    }
    return NULL;
}

/* sim_backward: runs the plan (nops triples: ALLOC size slot / FREE_SLOT slot / FREE_PTR addr)
 * on the autograd thread "pt_autograd_0" (created once, kept, like PyTorch's device thread)
 * while the caller waits. slots receives the addresses allocated. Returns 0, -1 after an OOM
 * (message in sim_error()), -2 if the thread cannot be created. */
SIM_EXPORT int sim_backward(const int64_t *ops, int64_t nops, uint64_t *slots)
{
    pthread_mutex_lock(&A.lock);
    if (!A.started) {
        if (pthread_create(&A.th, NULL, autograd_main, NULL) != 0) {
            pthread_mutex_unlock(&A.lock);
            return -2;
        }
        pthread_setname_np(A.th, "pt_autograd_0");
        pthread_detach(A.th);
        A.started = 1;
    }
    A.ops = ops, A.nops = nops, A.slots = slots;
    A.done = 0;
    A.pending = 1;
    pthread_cond_broadcast(&A.cv);
    while (!A.done)
        pthread_cond_wait(&A.cv, &A.lock);
    int r = A.result;
    pthread_mutex_unlock(&A.lock);
    return r;
}
