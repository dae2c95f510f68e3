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

/* one stack: its bytes live now (what each event changes), the phase of its first allocation,
 * and its bytes at the step ends: its current run of steps without a decrease (brought up to
 * the step end that followed the step its bytes last changed in when they change next, or as
 * growth_sites reads it: growth_touch). 64 bytes a stack, dense by
 * stack id, on 64-byte boundaries: an event and a step's end touch one cache line of it (48
 * bytes had put every other one across two lines: two to fetch for half the events), and its
 * place is a shift of its id. */
typedef struct growth_stack {
    /* (in this order, no two of the words a step's end writes side by side: GCC wrote the
     * pair through a vector register, 3 instructions for 2) */
    uint64_t last;      /* at the last step end */
    uint64_t live[2];   /* live now: device bytes [GROWTH_D], tensors' [GROWTH_T] */
    uint64_t run_bytes; /* at the step its run began */
    uint32_t last_up;   /* the step of its last rise */
    uint8_t ph;         /* the phase of its first allocation (PHASE_COUNT: unknown) */
    uint8_t pad0[3];
    /* the step its run began (low 32 bits; 0: none yet) and the rises in it (high 32): one word,
     * as a restart sets both */
    uint64_t run;
    /* the number of the step end after the step its bytes last changed in (growth.steps + 1 then;
     * 0: none), its run not yet brought up to it */
    uint32_t touched;
    uint32_t pad1;
    uint64_t pad[1]; /* (to 64 bytes) */
} growth_stack;
_Static_assert(sizeof(growth_stack) == 64, "a stack is one cache line");

enum { GROWTH_D, GROWTH_T }; /* (live's index: tensors_seen) */

typedef struct growth_point {
    uint32_t step;
    uint64_t time_ns;
    uint64_t live; /* tensors when the run has them, else device bytes */
    uint64_t by_phase[PHASE_COUNT];
} growth_point;

typedef struct growth {
    growth_stack *st; /* by stack id, [0, nst), 64-byte aligned in st_mem */
    void *st_mem;
    uint32_t nst;
    uint32_t nfast; /* the ids growth_add's common case takes: nst, 0 from the STEP records on */
    int tensors_seen, state, opt_since, oom_since;
    int from_records; /* STEP records seen: they are the steps (the replay's are ignored) */
    /* (tensor and device not side by side: GCC added the pair through a vector register, 12
     * instructions for an event where 2 do) */
    uint64_t tensor, peak_device, device;
    uint64_t by_phase[PHASE_COUNT]; /* live now, by the phase of the stack's first allocation */
    uint32_t steps, opt_steps, oom_steps, first_oom_step;
    uint64_t first_ns, last_ns; /* the first and the last step end */
    /* the step ends seen before the trace's own end (not the end itself: the last step's end
     * there is the program's teardown), and the last of them */
    uint32_t timed_steps;
    uint64_t timed_last_ns;
    uint32_t sampled;        /* the last step whose end the runs took (not the teardown: sample) */
    uint64_t opt_first_ns;   /* the end of the first step that ended in an optimizer step */
    uint32_t opt_first_step; /* its number among the timed steps */
    uint64_t last_peak_device, max_peak_device, last_live;
    /* the highest device peak of the steps before the last (from the second: the first's holds
     * the model's creation); 0 until two such steps ended: a last step above it is memory still
     * rising at the trace's end (a Transformer-XL's memory of past segments filling up: fit) */
    uint64_t prev_max_peak_device;
    uint64_t last_by_phase[PHASE_COUNT]; /* by_phase at the last step end (sampled) */
    growth_point pts[GROWTH_POINTS];
    unsigned npts, every;
    /* a trace recorded without Python frames (--stacks none / native): the program's first
     * allocation after a backward is the next forward's or the optimizer's (a foreach step's
     * temporaries, a first step's state): which, its gradients' free by the program (zero_grad)
     * before the next backward says. Until then the step's end there is provisional (prov): the
     * levels as they were, kept to end it with; growth_optimizer_step takes it back (the step
     * goes on) */
    int no_python;
    struct growth_prov {
        int on, oom_since, opt_since;
        uint64_t time_ns, tensor, device, peak_device;
        uint64_t by_phase[PHASE_COUNT];
    } prov;
} growth;

/* growth_alloc / growth_free: an allocation the replay counted, with its stack and the phase of
 * the event: tensor (a tensor's bytes), device (bytes of device memory the process holds);
 * backward: the event came from the autograd engine. Inline: the replay calls them per event;
 * what is rare (a step's end, a new stack id, a first allocation of a stack) is growth.c's. */
void growth_sample_now(growth *g, uint64_t time_ns);
/* growth_prov_begin: an allocation after a backward in a run without Python frames: the step ends
 * here unless the program frees its gradients before the next backward; growth_prov_end: it ended
 * there (the step's end as it was then) */
void growth_prov_begin(growth *g, uint64_t time_ns);
void growth_prov_end(growth *g);
void growth_add_slow(growth *g, uint32_t stack, uint64_t delta, int tensor, int device,
                     int phase_now);

enum { GROWTH_FWD, GROWTH_BWD, GROWTH_OPT };

/* growth_tensors_begin: the first tensor: the bytes by phase are tensors' from now on (the device
 * bytes counted before, a CUDA context's, are not: a series whose live bytes are tensors had its
 * phases sum to 696.8 MB beside 380.1 MB live) */
void growth_tensors_begin(growth *g);

/* growth_close: the run of stack s brought up to step end number step, its bytes then v (the
 * bytes of its kind k now: none changed since): it continues or restarts there */
static inline __attribute__((always_inline)) void growth_close(growth_stack *s, int k,
                                                               uint32_t step)
{
    uint64_t v = s->live[k], last = s->last, from = s->run_bytes, run = s->run;
    s->last = v;
    /* a run ends where its bytes fall back, beyond a tenth of what it gained (a step's own
     * tensors at the moment it ended; a run that ended inside a step) */
    /* (masks, all ones or 0, not branches: whether a stack's bytes rose or fell is the data
     * itself, and a run with many stacks changing each step mispredicted them half the time;
     * GCC made the selects written as ?: two branches again. A restart sets the run's start
     * and zeroes its rises in one word; a rise at a restart sets last_up too, which
     * growth_sites reads only after GROWTH_MIN_RISES more) */
    uint64_t fell = 0 - (uint64_t)(v < last), rose = 0 - (uint64_t)(last < v);
    uint64_t far = 0 - (uint64_t)(last - from < (last - v) * 10);
    uint64_t r = (0 - (uint64_t)((uint32_t)run == 0)) | (fell & far); /* restarts here */
    uint64_t on = run + (rose & (1ull << 32));
    s->run = on ^ ((on ^ step) & r);
    s->run_bytes = from ^ ((from ^ v) & r);
    s->last_up ^= (s->last_up ^ step) & (uint32_t)rose;
}

/* growth_touch: the bytes of stack s are about to change in the step going on: the step end
 * that followed their last change, if one came and it was not the program's teardown (sampled),
 * is brought into its run first, with the bytes it ended with (unchanged since). The runs come
 * out as if each step end had looked at every stack changed in its step, as it did until
 * 2026-12-07: there, the stack's line was touched twice (each event, then its step's end) and
 * listed; vtgen's steps of ~10 events, each a stack of its own, had spent ~50 instructions an
 * event at step ends */
static inline __attribute__((always_inline)) void growth_touch(growth *g, growth_stack *s)
{
    /* (one comparison: t - 1 < sampled is t && t <= sampled, and never t == now, as sampled <=
     * steps; the store then is the same when t == now) */
    uint32_t t = s->touched;
    if (t - 1 < g->sampled)
        growth_close(s, g->tensors_seen, t);
    s->touched = g->steps + 1;
}

/* growth_prefetch: stack's entry (one line) on its way to the cache (a read ahead: the replay's
 * ring) */
static inline __attribute__((always_inline)) void growth_prefetch(const growth *g, uint32_t stack)
{
    if (stack && stack < g->nst) /* (0: a free's record, which names no stack) */
        __builtin_prefetch(&g->st[stack]);
}

/* growth_add: delta (size, or its negation as unsigned) to the levels, the stack's phase's and
 * the stack's; phase_now: the event's (-1 for a free). A stack seen before whose phase is known
 * is the common case; the rest is growth_add_slow's. The common case adds to the stack only the
 * kind of bytes the runs follow (tensors_seen: its index in live): before the first tensor no
 * tensor's bytes are anywhere, after it the device bytes of a stack are read by nothing (the
 * trace's STEP records change the kind: from the first on, every event is growth_add_slow's) */
static inline __attribute__((always_inline)) void
growth_add(growth *g, uint32_t stack, uint64_t delta, int tensor, int device, int phase_now)
{
    uint64_t dt = tensor ? delta : 0, dd = device ? delta : 0;
    g->tensor += dt;
    g->device += dd;
    int k = g->tensors_seen;               /* (0 or 1) */
    if (__builtin_expect(tensor && !k, 0)) /* the basis: tensors from now on */
        growth_tensors_begin(g), k = 1;
    if (phase_now >= 0 && g->device > g->peak_device) /* (a free's bytes never raise it) */
        g->peak_device = g->device;
    unsigned p;
    /* (stack 0's entry never has a phase: its events take growth_add_slow's way) */
    if (__builtin_expect(stack >= g->nfast || (p = g->st[stack].ph) >= PHASE_COUNT, 0)) {
        growth_add_slow(g, stack, delta, tensor, device, phase_now);
        return;
    }
    uint64_t d = k ? dt : dd; /* the bytes the phases and the runs follow */
    g->by_phase[p] += d;
    growth_touch(g, &g->st[stack]);
    g->st[stack].live[k] += d;
}

static inline __attribute__((always_inline)) void growth_alloc(growth *g, uint32_t stack,
                                                               uint64_t size, int tensor,
                                                               int device, int ph, int backward,
                                                               uint64_t time_ns)
{
    if (!tensor && !device)
        return;
    if (!g->from_records) { /* the packer's rule (trace_format.h, STEP) */
        if (backward || ph == PHASE_BACKWARD) {
            if (__builtin_expect(g->prov.on, 0)) /* no zero_grad came: a forward */
                growth_prov_end(g);
            g->state = GROWTH_BWD;
        } else if (ph == PHASE_OPTIMIZER) {
            g->state = GROWTH_OPT;
            g->opt_since = 1;
        } else if (g->state != GROWTH_FWD) {
            if (g->no_python && g->state == GROWTH_BWD)
                growth_prov_begin(g, time_ns);
            else
                growth_sample_now(g, time_ns);
            g->state = GROWTH_FWD;
        }
    }
    growth_add(g, stack, size, tensor, device, ph);
}

static inline __attribute__((always_inline)) void growth_free(growth *g, uint32_t stack,
                                                              uint64_t size, int tensor, int device)
{
    if (tensor || device)
        growth_add(g, stack, (uint64_t) - (int64_t)size, tensor, device, -1);
}

/* growth_optimizer_step: the replay counted an optimizer step that allocated nothing (its
 * gradients freed after a backward: fused optimizers after their first step), or one whose
 * allocations no stack told (prov: the step goes on through them) */
void growth_prov_keep(growth *g);
static inline void growth_optimizer_step(growth *g)
{
    if (!g->from_records) {
        if (g->prov.on)
            growth_prov_keep(g);
        g->state = GROWTH_OPT;
        g->opt_since = 1;
    }
}

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

/* The rule's least run: a stack grows when its live bytes at step ends rose on at least
 * GROWTH_MIN_RISES steps over a run of at least GROWTH_MIN_SPAN steps (growth_sites). A run
 * begins at a step end (the first is step 1's), so fewer step ends than GROWTH_MIN_STEP_ENDS
 * can show no growth at all: that is not that nothing grows. */
#define GROWTH_MIN_RISES 3
#define GROWTH_MIN_SPAN 4
#define GROWTH_MIN_STEP_ENDS (1 + GROWTH_MIN_SPAN)

/* growth_step_ends: the step ends seen before the trace's end, the ones the runs compare (the
 * trace's end is none of them: the program's teardown, or a step it cut; where no step ended
 * before it, the runs' one point is the trace's end and there is nothing to compare) */
uint32_t growth_step_ends(const growth *g);
/* growth_can_tell: enough step ends for growth_sites to find growth (GROWTH_MIN_STEP_ENDS): with
 * fewer it finds none whatever the program did, so a view says so, not that nothing grows */
int growth_can_tell(const growth *g);

/* growth_sites: the growing stacks, fastest first, at most max into out; their number (0 when
 * !growth_can_tell). A stack grows when its live bytes at step ends rose on at least
 * GROWTH_MIN_RISES steps and by at least 1 MiB over a run of at least GROWTH_MIN_SPAN steps
 * without a decrease, the last rise within the last quarter of that run (so a cache that filled
 * early and stayed is not growth). */
int growth_sites(const growth *g, growth_site *out, int max);
/* growth_time_per_step: seconds per step between the step ends seen before the trace's end (the
 * first step holds the model's creation, the last the program's teardown), from the end of the
 * first optimizer step on when a step ended after it (that step makes the optimizer's state, a
 * compiled run's first steps compile): 0 with fewer than 2. */
double growth_time_per_step(const growth *g);
/* growth_timed_steps: how many steps growth_time_per_step's time is over (0: none) */
uint32_t growth_timed_steps(const growth *g);

#endif
