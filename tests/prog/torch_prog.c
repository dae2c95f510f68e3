/* torch_prog.c — a PyTorch-like workload on the fake libc10_cuda.so (tests/fakecuda/c10/):
 * loads it with dlopen (as Python loads torch), then "trains": parameters, three steps of
 * forward activations / backward gradients / optimizer state, frees, empty_cache. Prints the
 * fake allocator's own counters as one JSON line for tests/integration/torch_tracker.sh.
 * usage: torch_prog LIBC10_CUDA.SO [steps] [threads]: each thread trains its own model. */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void (*empty_fn)(void);
typedef void (*stats_fn)(uint64_t *);

static malloc_fn t_alloc;
static free_fn t_free;

static void *tensor(size_t n)
{
    void *p = t_alloc(n);
    if (!p) {
        fprintf(stderr, "torch_prog: allocation of %zu bytes failed\n", n);
        exit(1);
    }
    return p;
}

/* torch_prog_step: one training step; not static so stacks name it. */
void torch_prog_step(int np, void **state, int step)
{
    enum { NA = 24 };
    void *acts[NA];
    for (int i = 0; i < NA; i++) /* forward: small, medium and large activations */
        acts[i] = tensor(i % 3 == 0   ? 4096 + 100 * (size_t)i
                         : i % 3 == 1 ? (3u << 20) + 7
                                      : (12u << 20) + 512);
    void *tmp = tensor(700000); /* a forward temporary */
    t_free(tmp);
    void *grads[64];
    for (int i = NA - 1; i >= 0; i--) /* backward frees activations, makes gradients */
        t_free(acts[i]);
    for (int i = 0; i < np; i++)
        grads[i] = tensor(((size_t)i + 1) * 300000);
    if (step == 0) /* optimizer state at the first step, kept */
        for (int i = 0; i < np; i++)
            state[i] = tensor(((size_t)i + 1) * 600000);
    for (int i = 0; i < np; i++)
        t_free(grads[i]);
}

enum { NP = 16 };
static int g_steps;
static pthread_barrier_t g_start; /* threads begin together, so their tensors interleave */
static int g_threaded;

/* torch_prog_train: parameters, g_steps steps, everything freed; a thread's body. */
void *torch_prog_train(void *arg)
{
    (void)arg;
    void *params[NP], *state[NP];
    if (g_threaded)
        pthread_barrier_wait(&g_start);
    for (int i = 0; i < NP; i++)
        params[i] = tensor(((size_t)i + 1) * 123457);
    for (int s = 0; s < g_steps; s++)
        torch_prog_step(NP, state, s);
    for (int i = 0; i < NP; i++) {
        if (g_steps > 0)
            t_free(state[i]);
        t_free(params[i]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: torch_prog LIBC10_CUDA.SO [steps]\n");
        return 2;
    }
    g_steps = argc > 2 ? atoi(argv[2]) : 3;
    int nthreads = argc > 3 ? atoi(argv[3]) : 1;
    if (nthreads < 1 || nthreads > 16)
        return 2;
    /* TORCH_PROG_EARLY=N: N cudaMalloc / cudaFree pairs of the program's own before PyTorch is
     * loaded (a process that used CUDA before importing torch) */
    for (long n = getenv("TORCH_PROG_EARLY") ? atol(getenv("TORCH_PROG_EARLY")) : 0; n > 0; n--) {
        void *raw = NULL;
        if (cudaMalloc(&raw, (3u << 20) + 4096) != 0 || cudaFree(raw) != 0)
            return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "torch_prog: %s\n", dlerror());
        return 2;
    }
    t_alloc = (malloc_fn)dlsym(h, "fake_c10_malloc");
    t_free = (free_fn)dlsym(h, "fake_c10_free");
    empty_fn empty = (empty_fn)dlsym(h, "fake_c10_empty_cache");
    stats_fn stats = (stats_fn)dlsym(h, "fake_c10_stats");
    if (!t_alloc || !t_free || !empty || !stats)
        return 2;
    /* TORCH_PROG_RAW=1: a cudaMalloc of the program's own (3 MiB + 4 KiB) before the first
     * tensor, like a library's before PyTorch's allocator is initialised */
    if (getenv("TORCH_PROG_RAW")) {
        void *raw = NULL;
        if (cudaMalloc(&raw, (3u << 20) + 4096) != 0 || cudaFree(raw) != 0)
            return 2;
    }
    if (nthreads == 1) {
        torch_prog_train(NULL);
    } else {
        pthread_t th[16];
        g_threaded = 1;
        pthread_barrier_init(&g_start, NULL, (unsigned)nthreads);
        for (int i = 0; i < nthreads; i++)
            if (pthread_create(&th[i], NULL, torch_prog_train, NULL))
                return 2;
        for (int i = 0; i < nthreads; i++)
            pthread_join(th[i], NULL);
    }
    /* TORCH_PROG_OOM=BYTES: one request that the allocator is expected to refuse */
    const char *oom = getenv("TORCH_PROG_OOM");
    if (oom && t_alloc((size_t)strtoull(oom, NULL, 0)) == NULL)
        fprintf(stderr, "torch_prog: out of memory (as asked)\n");
    uint64_t st[6];
    stats(st);
    empty();
    uint64_t after[6];
    stats(after);
    printf("{\"allocated\":%" PRIu64 ",\"peak_allocated\":%" PRIu64 ",\"reserved\":%" PRIu64
           ",\"peak_reserved\":%" PRIu64 ",\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64
           ",\"reserved_after_empty\":%" PRIu64 "}\n",
           st[0], st[1], st[2], st[3], st[4], st[5], after[2]);
    return 0;
}
