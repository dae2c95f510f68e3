/* capture_threads.c — make bench's measure of the recording path under threads: EVENTS
 * allocation + free records written by the preload's own code (vt__record_alloc /
 * vt__record_free: thread index, clock, record reserved and copied into the trace file) from
 * THREADS threads at once, with no CUDA runtime in between. bench_alloc measures the whole
 * hook, but through the fake runtime's one mutex: with more threads than cores its convoy sets
 * the time (a build that writes nothing scores worse there than one that writes), so the
 * question "does the per-thread path share anything" is asked here, in CPU time per event
 * (user + sys of the process), which stays flat when nothing is shared.
 * Usage: capture_threads EVENTS THREADS, with VRAMTRACE_OUTPUT set.
 * Prints "EVENTS THREADS WALL_NS_PER_EVENT CPU_NS_PER_EVENT". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/record.h"
#include "vramtrace/trace_format.h"

static long g_pairs; /* per thread */

static uint64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* worker: a cudaMalloc-shaped allocation and its free, g_pairs times, at addresses of this
 * thread's own (the analyzer could read the trace: no address is live twice). */
static void *worker(void *arg)
{
    uint64_t base = 0x200000000000ull + ((uint64_t)(uintptr_t)arg << 32);
    for (long i = 0; i < g_pairs; i++) {
        vt__event e = {0};
        e.api = VT_API_cudaMalloc;
        e.device = 0;
        e.addr = base + (uint64_t)(i & 1023) * 65536;
        e.size = 512 + (uint64_t)(i & 63) * 512;
        vt__record_alloc(&e);
        vt__record_free(&e);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long events = argc == 3 ? atol(argv[1]) : 0;
    int threads = argc == 3 ? atoi(argv[2]) : 0;
    if (events < 2 || threads < 1 || threads > 64 || !getenv("VRAMTRACE_OUTPUT")) {
        fprintf(stderr, "usage: VRAMTRACE_OUTPUT=FILE capture_threads EVENTS THREADS (1-64)\n");
        return 2;
    }
    g_pairs = events / 2 / threads;
    if (g_pairs < 1) {
        fprintf(stderr, "capture_threads: fewer events than 2 per thread\n");
        return 2;
    }
    /* the trace file is opened by the first record: outside the timing */
    vt__event warm = {0};
    warm.api = VT_API_cudaMalloc;
    warm.addr = 0x100000000000ull;
    warm.size = 512;
    vt__record_alloc(&warm);
    vt__record_free(&warm);
    pthread_t tid[64];
    uint64_t w0 = ns_of(CLOCK_MONOTONIC), c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, worker, (void *)(uintptr_t)t)) {
            fprintf(stderr, "capture_threads: cannot start thread %d\n", t);
            return 1;
        }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    uint64_t w1 = ns_of(CLOCK_MONOTONIC), c1 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    double n = 2.0 * (double)g_pairs * threads;
    printf("%.0f %d %.1f %.1f\n", n, threads, (double)(w1 - w0) / n, (double)(c1 - c0) / n);
    return 0;
}
