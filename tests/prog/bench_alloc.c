/* bench_alloc.c — the capture-cost benchmark workload (make bench): N cudaMalloc+cudaFree
 * pairs on the fake runtime, on T threads, from a call chain of D extra native frames.
 * usage: bench_alloc PAIRS [THREADS [DEPTH]]; prints "pairs threads ns_per_event". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int cudaError_t;
extern cudaError_t cudaMalloc(void **p, size_t n);
extern cudaError_t cudaFree(void *p);

static long g_pairs;
static int g_depth;

/* alloc_loop: the measured loop; returns the number of failed calls. */
static __attribute__((noinline)) long alloc_loop(long pairs)
{
    long bad = 0;
    for (long i = 0; i < pairs; i++) {
        void *p = NULL;
        if (cudaMalloc(&p, 512 + (size_t)(i & 63) * 512) != 0)
            bad++;
        else if (cudaFree(p) != 0)
            bad++;
    }
    return bad;
}

/* nest: adds `d` real frames above the loop so native stacks have a realistic depth. */
static __attribute__((noinline)) long nest(int d, long pairs)
{
    if (d <= 0)
        return alloc_loop(pairs);
    long r = nest(d - 1, pairs);
    __asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
    return r;
}

static void *worker(void *arg)
{
    long bad = nest(g_depth, g_pairs);
    *(long *)arg = bad;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_alloc PAIRS [THREADS [DEPTH]]\n");
        return 2;
    }
    g_pairs = atol(argv[1]);
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    g_depth = argc > 3 ? atoi(argv[3]) : 0;
    if (g_pairs <= 0 || threads <= 0 || threads > 256 || g_depth < 0 || g_depth > 200) {
        fprintf(stderr, "bench_alloc: bad arguments\n");
        return 2;
    }
    void *warm = NULL; /* runtime init, context, trace file open: outside the timing */
    cudaMalloc(&warm, 512);
    cudaFree(warm);
    pthread_t tid[256];
    long bad[256] = {0};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int started = 0;
    for (int t = 0; t < threads; t++, started++) {
        int e = pthread_create(&tid[t], NULL, worker, &bad[t]);
        if (e) { /* (under ulimit -v: no room for its stack) */
            fprintf(stderr, "bench_alloc: thread %d of %d: %s\n", t + 1, threads, strerror(e));
            break;
        }
    }
    long badsum = 0;
    for (int t = 0; t < started; t++) {
        pthread_join(tid[t], NULL);
        badsum += bad[t];
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    if (started < threads)
        return 1;
    double events = 2.0 * (double)g_pairs * threads;
    printf("%ld %d %.1f\n", g_pairs, threads, ns / events);
    if (badsum) {
        fprintf(stderr, "bench_alloc: %ld failed calls\n", badsum);
        return 1;
    }
    return 0;
}
