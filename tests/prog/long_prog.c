/* long_prog.c — a long PyTorch-like training run in C on the fake libc10_cuda.so, fast enough
 * to make hundreds of millions of events (make bench's bounded-trace run, and the scaled-down
 * one of tests/integration/long_runs.sh): parameters, then per step a forward of activations
 * on the main thread, a backward on a thread named pt_autograd_0 (freeing them, making
 * gradients: the preload flags its events backward, as PyTorch's), an optimizer step; with
 * LEAK=K one activation of every K-th step is kept (a leak of known size); at the end an
 * evaluation tensor of EVAL bytes, which the emulated card refuses (an OOM at the end).
 * A probe of 3 MiB made with cudaMalloc before the first step is freed halfway through the
 * run (a bounded trace drops that part: its reader must free it where it starts again).
 * PAUSE_US: a pause of so many microseconds after each step (its computation: the rate of
 * events of a real run, not a loop's).
 * usage: long_prog LIBC10_CUDA.SO EVENTS [LEAK [EVAL [PAUSE_US]]]; prints one JSON line of its
 * truth. */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

static malloc_fn t_alloc;
static free_fn t_free;

enum { NP = 12, NA = 40 };
static void *g_params[NP], *g_grads[NP], *g_acts[NA];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_turn; /* 1: the autograd thread runs the backward; 0: the main thread goes on */
static int g_quit;

static void *tensor(size_t n)
{
    void *p = t_alloc(n);
    if (!p) {
        fprintf(stderr, "long_prog: allocation of %zu bytes failed\n", n);
        exit(1);
    }
    return p;
}

/* long_prog_backward: frees the activations, makes the gradients (on pt_autograd_0) */
void long_prog_backward(void)
{
    for (int i = NA - 1; i >= 0; i--)
        if (g_acts[i])
            t_free(g_acts[i]);
    for (int i = 0; i < NP; i++)
        g_grads[i] = tensor(((size_t)i + 1) * 65536);
}

static void *autograd_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "pt_autograd_0");
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (!g_turn && !g_quit)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_quit)
            break;
        long_prog_backward();
        g_turn = 0;
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* long_prog_forward: the step's activations (a leak keeps the first: it is never freed) */
void long_prog_forward(int keep)
{
    for (int i = 0; i < NA; i++)
        g_acts[i] = tensor(i % 4 == 0 ? 1u << 20 : 4096 + 512 * (size_t)(i % 7));
    if (keep)
        g_acts[0] = NULL; /* kept: the program holds it */
}

/* long_prog_optimizer: the optimizer's step (its state at the first), gradients freed */
void long_prog_optimizer(int step, void **state)
{
    if (step == 0)
        for (int i = 0; i < NP; i++)
            state[i] = tensor(((size_t)i + 1) * 131072);
    for (int i = 0; i < NP; i++)
        t_free(g_grads[i]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: long_prog LIBC10_CUDA.SO EVENTS [LEAK [EVAL]]\n");
        return 2;
    }
    uint64_t events = strtoull(argv[2], NULL, 10);
    long leak = argc > 3 ? atol(argv[3]) : 0;
    uint64_t eval = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
    long pause_us = argc > 5 ? atol(argv[5]) : 0;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "long_prog: %s\n", dlerror());
        return 2;
    }
    t_alloc = (malloc_fn)dlsym(h, "fake_c10_malloc");
    t_free = (free_fn)dlsym(h, "fake_c10_free");
    if (!t_alloc || !t_free)
        return 2;
    pthread_t ag;
    if (pthread_create(&ag, NULL, autograd_main, NULL))
        return 2;
    void *state[NP];
    for (int i = 0; i < NP; i++)
        g_params[i] = tensor(((size_t)i + 1) * 65536);
    uint64_t per_step = 2 * NA + 2 * NP, steps = events / per_step, kept = 0;
    void *probe = NULL;
    if (cudaMalloc(&probe, 3u << 20))
        return 2;
    for (uint64_t s = 0; s < steps; s++) {
        if (s == steps / 2)
            cudaFree(probe);
        int keep = leak > 0 && s % (uint64_t)leak == 0;
        long_prog_forward(keep);
        kept += keep;
        pthread_mutex_lock(&g_mu);
        g_turn = 1;
        pthread_cond_broadcast(&g_cv);
        while (g_turn)
            pthread_cond_wait(&g_cv, &g_mu);
        pthread_mutex_unlock(&g_mu);
        long_prog_optimizer((int)s, state);
        if (pause_us > 0) {
            struct timespec ts = {0, pause_us * 1000L};
            nanosleep(&ts, NULL);
        }
    }
    int oom = 0;
    if (eval) { /* the late evaluation: refused by the card */
        void *e = t_alloc((size_t)eval);
        oom = e == NULL;
        if (e)
            t_free(e);
    }
    pthread_mutex_lock(&g_mu);
    g_quit = 1;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    pthread_join(ag, NULL);
    printf("{\"steps\":%" PRIu64 ",\"events_per_step\":%" PRIu64 ",\"leak_bytes\":%" PRIu64
           ",\"leak_bytes_per_step\":%.1f,\"oom\":%s}\n",
           steps, per_step, kept << 20, leak > 0 ? (double)(1u << 20) / (double)leak : 0.0,
           oom ? "true" : "false");
    return oom ? 1 : 0;
}
