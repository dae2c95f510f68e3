/* baseline.h — what make bench's two baselines (floor.c, skeleton.c) share: the trace named on
 * the command line opened by the analyzer's reader once the CPU clock is read, and the line
 * both print at the end, "EVENTS CPU_SECONDS PEAK_BYTES", which bench.py reads. */
#ifndef VT_BENCH_BASELINE_H
#define VT_BENCH_BASELINE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "reader.h"

/* baseline_open: the trace of `name TRACE`, *t0 the CPU clock before it was opened; exits 2 with
 * the reason on a wrong command line or a trace that cannot be read. */
static inline reader *baseline_open(int argc, char **argv, const char *name, struct timespec *t0)
{
    char err[512];
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRACE\n", name);
        exit(2);
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, t0);
    reader *r = reader_open(argv[1], err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s: %s\n", name, err);
        exit(2);
    }
    return r;
}

/* baseline_done: r closed, the line printed with the CPU seconds since t0. */
static inline void baseline_done(reader *r, const struct timespec *t0, uint64_t events,
                                 uint64_t peak)
{
    struct timespec t1;
    reader_close(r);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    printf("%llu %.6f %llu\n", (unsigned long long)events,
           (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9,
           (unsigned long long)peak);
}

#endif
