/* growth.h — memory that grows step after step (growth.c): the live bytes at the end of each
 * training step, by allocation stack and by the phase that made them, from the replay's events
 * (a step ends at the first allocation of the program's thread after backward or optimizer
 * allocations, the rule the preload's packer writes STEP records by: trace_format.h) or from
 * the trace's STEP records where it has them (a chunked trace: every step of the run, also where
 * its events were dropped). Then what grows: the stacks whose live bytes rose step after step to
 * the end, their rate, since which step, and when that rate reaches a card. Memory: one entry
 * per stack id and a bounded series of points, never per step. */
#ifndef VT_ANALYZER_GROWTH_H
#define VT_ANALYZER_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#include "phases.h"
#include "reader.h"

#define GROWTH_POINTS 256 /* the series kept for views: every k-th step, k doubling */

/* one stack's bytes over the steps: its current run of steps without a decrease */
typedef struct growth_stack {
    uint64_t tensor, device; /* live now */
    uint64_t last;           /* at the last step end */
    uint64_t run_bytes;      /* at the step its run began */
    uint32_t run_start, last_up, n_up;
    uint8_t dirty, phase; /* phase: the phase of its first allocation (PHASE_COUNT: unknown) */
} growth_stack;

typedef struct growth_point {
    uint32_t step;
    uint64_t time_ns;
    uint64_t live; /* tensors when the run has them, else device bytes */
    uint64_t by_phase[PHASE_COUNT];
} growth_point;

typedef struct growth {
    growth_stack *st;
    uint32_t nst;
    uint32_t *dirty;
    size_t ndirty, capdirty;
    int tensors_seen, state, opt_since, oom_since;
    int from_records; /* STEP records seen: they are the steps (the replay's are ignored) */
    uint64_t tensor, device, peak_tensor, peak_device;
    uint64_t by_phase[PHASE_COUNT]; /* live now, by the phase of the stack's first allocation */
    uint32_t steps, opt_steps, oom_steps, first_oom_step;
    uint64_t first_ns, last_ns; /* the first and the last step end */
    uint64_t last_peak_device, max_peak_device, last_live;
    growth_point pts[GROWTH_POINTS];
    unsigned npts, every;
} growth;

/* growth_alloc / growth_free: an allocation the replay counted, with its stack and the phase of
 * the event: tensor (a tensor's bytes), device (bytes of device memory the process holds);
 * backward: the event came from the autograd engine. */
void growth_alloc(growth *g, uint32_t stack, uint64_t size, int tensor, int device, int ph,
                  int backward, uint64_t time_ns);
void growth_free(growth *g, uint32_t stack, uint64_t size, int tensor, int device);
/* growth_step_record: a STEP record (the trace's own steps; phase_of gives a stack's phase) */
void growth_step_record(growth *g, const reader_step *st, int (*phase_of)(void *, uint32_t),
                        void *ctx);
/* growth_end: the trace ended at end_ns (a run that ended inside a step ends it there) */
void growth_end(growth *g, uint64_t end_ns);
void growth_free_all(growth *g);

/* A stack that grew step after step until the run's end. */
typedef struct growth_site {
    uint32_t stack;
    uint8_t phase;
    uint32_t since_step, n_up;
    uint64_t bytes_since, bytes_last;
    double rate; /* bytes per step */
} growth_site;

/* growth_sites: the growing stacks, fastest first, at most max into out; their number. A stack
 * grows when its live bytes at step ends rose on at least 3 steps and by at least 1 MiB over a
 * run of at least 4 steps without a decrease, the last rise within the last quarter of that run
 * (so a cache that filled early and stayed is not growth). */
int growth_sites(const growth *g, growth_site *out, int max);
/* growth_time_per_step: seconds per step over the steps seen (0 when fewer than 2). */
double growth_time_per_step(const growth *g);

#endif
