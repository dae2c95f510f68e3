/* growth.c — memory that grows step after step (growth.h): per stack id its live bytes, what
 * they were at the last step end and its run of steps without a decrease; the step rule of the
 * preload's packer (trace_format.h, STEP) on the replay's events, or the trace's STEP records.
 * What grows is decided at the end from the runs alone. */
#include "growth.h"

#include <stdlib.h>
#include <string.h>

#define GROW_MIN_BYTES (1ull << 20)

/* stack_at: 1 when stack id is in the arrays (grown to hold it), 0 when it cannot be */
static int stack_at(growth *g, uint32_t id)
{
    if (!id || id > 0xffffffu)
        return 0;
    if (id < g->nst)
        return 1;
    uint32_t n = g->nst ? g->nst : 1024;
    while (n <= id)
        n *= 2;
    void *mem = malloc((size_t)n * sizeof(growth_stack) + 63); /* (aligned by hand below) */
    if (!mem)
        return 0;
    growth_stack *ns = (growth_stack *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    if (g->nst)
        memcpy(ns, g->st, (size_t)g->nst * sizeof *ns);
    free(g->st_mem);
    g->st_mem = mem;
    g->st = ns;
    memset(ns + g->nst, 0, (size_t)(n - g->nst) * sizeof *ns);
    for (uint32_t i = g->nst; i < n; i++)
        ns[i].ph = PHASE_COUNT;
    g->nst = n;
    g->nfast = g->from_records ? 0 : n;
    return 1;
}

/* settle: every stack's run brought up to the last step end (growth_touch's, for all), with the
 * bytes of the kind they had then (before tensors_seen changes) */
static void settle(growth *g)
{
    for (uint32_t i = 0; i < g->nst; i++) {
        growth_stack *s = &g->st[i];
        if (s->touched && s->touched <= g->sampled) {
            growth_close(s, g->tensors_seen, s->touched);
            s->touched = 0;
        }
    }
}

void growth_tensors_begin(growth *g)
{
    settle(g); /* (the step ends before: with the device bytes they took) */
    g->tensors_seen = 1;
    memset(g->by_phase, 0, sizeof g->by_phase); /* (what was counted: device bytes) */
}

static uint64_t value(const growth *g, uint32_t id)
{
    return g->st[id].live[g->tensors_seen];
}

/* the levels a step ends with: the replay's now (growth itself), or as they were at a
 * provisional end (growth.prov) */
typedef struct levels {
    uint64_t tensor, device, peak_device;
    const uint64_t *by_phase;
    int oom_since, opt_since;
} levels;

static levels levels_now(const growth *g)
{
    return (levels){g->tensor, g->device, g->peak_device, g->by_phase, g->oom_since, g->opt_since};
}

/* sample: a step ended at t with the levels lv (at_end: the trace's end) */
static void sample(growth *g, uint64_t t, int at_end, const levels *lv)
{
    if (!at_end) {
        g->timed_steps++;
        g->timed_last_ns = t;
    }
    g->steps++;
    /* the trace's end after steps that ended before it: the last step ran into the program's
     * teardown (its tensors freed at exit), which is no step's end: counted as a step, its bytes
     * taken for no run, no point and not as the last step's live bytes */
    int teardown = at_end && g->timed_steps;
    for (uint32_t i = 0; teardown && i < g->nst; i++) /* (its step's changes: for no run) */
        if (g->st[i].touched == g->steps)
            g->st[i].touched = 0;
    if (!teardown)
        g->sampled = g->steps;
    if (!g->first_ns)
        g->first_ns = t;
    g->last_ns = t;
    if (!teardown) {
        g->last_live = g->tensors_seen ? lv->tensor : lv->device;
        memcpy(g->last_by_phase, lv->by_phase, sizeof g->last_by_phase);
    }
    if (g->steps > 1) { /* the first step's peak holds the model's creation, not a step's */
        g->prev_max_peak_device = g->max_peak_device;
        g->last_peak_device = lv->peak_device;
        if (lv->peak_device > g->max_peak_device)
            g->max_peak_device = lv->peak_device;
    }
    if (lv->oom_since && !g->oom_steps++)
        g->first_oom_step = g->steps;
    if (!at_end && lv->opt_since && !g->opt_first_ns) { /* the first optimizer step's end */
        g->opt_first_ns = t;
        g->opt_first_step = g->timed_steps;
    }
    g->opt_steps += lv->opt_since;
    if (!g->every)
        g->every = 1;
    if (g->npts == GROWTH_POINTS) { /* every other point goes; the step between points doubles */
        for (unsigned i = 0; i < GROWTH_POINTS / 2; i++)
            g->pts[i] = g->pts[2 * i + 1];
        g->npts = GROWTH_POINTS / 2;
        g->every *= 2;
    }
    if (!teardown && (g->steps & (g->every - 1)) == 0) { /* every: a power of two */
        growth_point *p = &g->pts[g->npts++];
        p->step = g->steps;
        p->time_ns = t;
        p->live = g->last_live;
        memcpy(p->by_phase, lv->by_phase, sizeof p->by_phase);
    }
}

/* sample_now: a step ends now: sampled, and the next one's peak and flags begin */
static void sample_now(growth *g, uint64_t t, int at_end)
{
    levels lv = levels_now(g);
    sample(g, t, at_end, &lv);
    g->opt_since = g->oom_since = 0;
    g->peak_device = g->device;
}

void growth_sample_now(growth *g, uint64_t time_ns)
{
    sample_now(g, time_ns, 0);
}

void growth_prov_begin(growth *g, uint64_t time_ns)
{
    struct growth_prov *p = &g->prov;
    p->on = 1;
    p->time_ns = time_ns;
    p->tensor = g->tensor, p->device = g->device, p->peak_device = g->peak_device;
    memcpy(p->by_phase, g->by_phase, sizeof p->by_phase);
    p->oom_since = g->oom_since, p->opt_since = g->opt_since;
    g->peak_device = g->device; /* from here: the next step's, should this one end here */
    g->oom_since = g->opt_since = 0;
}

/* growth_prov_keep: the step did not end at prov's allocation (an optimizer's): one stretch */
void growth_prov_keep(growth *g)
{
    struct growth_prov *p = &g->prov;
    p->on = 0;
    if (p->peak_device > g->peak_device)
        g->peak_device = p->peak_device;
    g->oom_since |= p->oom_since;
    g->opt_since |= p->opt_since;
}

void growth_prov_end(growth *g)
{
    struct growth_prov *p = &g->prov;
    p->on = 0;
    levels then = {p->tensor, p->device, p->peak_device, p->by_phase, p->oom_since, p->opt_since};
    sample(g, p->time_ns, 0, &then); /* the step as it ended then */
}

/* growth_add_slow: growth_add's stack part (the levels are counted) for a stack id not in the
 * arrays yet or whose phase is not known yet */
void growth_add_slow(growth *g, uint32_t stack, uint64_t delta, int tensor, int device,
                     int phase_now)
{
    int have = stack_at(g, stack);
    unsigned known = have ? g->st[stack].ph : PHASE_COUNT;
    int ph = known < PHASE_COUNT ? (int)known : phase_now;
    if (ph >= 0 && ph < PHASE_COUNT && (g->tensors_seen ? tensor : device))
        g->by_phase[ph] += delta;
    if (!have)
        return;
    if (known == PHASE_COUNT && phase_now >= 0 && phase_now < PHASE_COUNT)
        g->st[stack].ph = (uint8_t)phase_now;
    growth_touch(g, &g->st[stack]);
    if (tensor)
        g->st[stack].live[GROWTH_T] += delta;
    if (device)
        g->st[stack].live[GROWTH_D] += delta;
}

void growth_step_record(growth *g, const reader_step *st, int (*phase_of)(void *, uint32_t),
                        void *ctx)
{
    if (st->fixed.flags & VT_STEPF_TAIL) /* the end inside a forward: no step (watch's peak) */
        return;
    if (!g->from_records) { /* the trace's own steps from now on: the replay's are forgotten */
        g->from_records = 1;
        g->nfast = 0; /* both kinds of bytes per stack from now on (growth_add) */
        for (uint32_t i = 0; i < g->nst; i++) /* all but the phase of its first allocation */
            g->st[i] = (growth_stack){.ph = g->st[i].ph};
        g->steps = g->opt_steps = g->oom_steps = g->timed_steps = g->sampled = 0;
        g->first_ns = g->last_ns = g->timed_last_ns = g->opt_first_ns = 0;
        g->opt_first_step = 0;
        g->npts = 0;
        g->every = 1;
        g->max_peak_device = g->prev_max_peak_device = 0;
        memset(g->by_phase, 0, sizeof g->by_phase);
    }
    int k = (st->fixed.flags & VT_STEPF_TENSORS) != 0;
    if (k != g->tensors_seen) /* (the step ends before: with the kind of bytes they took) */
        settle(g);
    g->tensors_seen = k;
    g->tensor = st->fixed.live_tensor;
    g->device = st->fixed.live_device;
    for (uint32_t i = 0; i < st->fixed.n_stacks; i++) {
        vt_step_stack v = reader_step_stack(st, i);
        uint32_t id = v.stack_id;
        if (!stack_at(g, id))
            continue;
        unsigned ph = g->st[id].ph;
        if (ph == PHASE_COUNT && phase_of) {
            ph = (unsigned)phase_of(ctx, id) & 0xffu;
            if (ph & 0x80u) /* not a phase: stays unknown, as any other past the last (one value
                             * for these, as when that bit was growth_stack.dirty's) */
                ph = 0x7fu;
            g->st[id].ph = (uint8_t)ph;
        }
        uint64_t old = value(g, id);
        if (ph < PHASE_COUNT)
            g->by_phase[ph] += v.bytes - old;
        growth_touch(g, &g->st[id]);
        g->st[id].live[g->tensors_seen] = v.bytes;
    }
    g->peak_device = st->fixed.peak_device;
    g->opt_since = (st->fixed.flags & VT_STEPF_OPTIMIZER) != 0;
    g->oom_since = (st->fixed.flags & VT_STEPF_OOM) != 0;
    /* the record written as the trace ended: the run's teardown, as the trace's end is where
     * the replay's steps are (a bounded trace said "at the last step end seen (step 384) 0 B of
     * tensors live" where its plain twin said step 383, 2.30 GiB) */
    sample_now(g, st->time_ns, (st->fixed.flags & VT_STEPF_END) != 0);
}

void growth_end(growth *g, uint64_t end_ns)
{
    if (g->prov.on && !g->from_records) /* the run ended before a zero_grad or a backward
                                         * said: a forward */
        growth_prov_end(g);
    if (!g->from_records && g->state != GROWTH_FWD)
        sample_now(g, end_ns, 1);
    g->state = GROWTH_FWD;
}

void growth_free_all(growth *g)
{
    free(g->st_mem);
    g->st = NULL;
    g->st_mem = NULL;
    g->nst = g->nfast = 0;
}

static int by_rate(const void *a, const void *b)
{
    const growth_site *x = a, *y = b;
    return x->rate < y->rate   ? 1
           : x->rate > y->rate ? -1
                               : (x->stack > y->stack) - (x->stack < y->stack);
}

uint32_t growth_step_ends(const growth *g)
{
    /* sampled, once a step ended before the trace's end: the teardown after it is taken by no
     * run (sample) */
    return g->timed_steps;
}

int growth_can_tell(const growth *g)
{
    return growth_step_ends(g) >= GROWTH_MIN_STEP_ENDS;
}

int growth_sites(const growth *g, growth_site *out, int max)
{
    int n = 0;
    for (uint32_t id = 1; id < g->nst && growth_can_tell(g); id++) {
        growth_stack c = g->st[id]; /* (its run brought up to the last step end, if not yet) */
        if (c.touched && c.touched <= g->sampled)
            growth_close(&c, g->tensors_seen, c.touched);
        const growth_stack *s = &c;
        uint32_t run_start = (uint32_t)s->run, n_up = (uint32_t)(s->run >> 32);
        if (!run_start || n_up < GROWTH_MIN_RISES || s->last < s->run_bytes + GROW_MIN_BYTES)
            continue;
        uint32_t span = g->sampled - run_start;
        uint32_t recent = span / 4 > 3 ? span / 4 : 3;
        if (span < GROWTH_MIN_SPAN || s->last_up + recent < g->sampled)
            continue;
        growth_site site = {id,
                            s->ph,
                            run_start,
                            n_up,
                            s->run_bytes,
                            s->last,
                            (double)(s->last - s->run_bytes) / (double)span};
        if (n < max) {
            out[n++] = site;
        } else if (max > 0) { /* keep the fastest: replace the slowest kept */
            int lo = 0;
            for (int i = 1; i < n; i++)
                if (out[i].rate < out[lo].rate)
                    lo = i;
            if (site.rate > out[lo].rate)
                out[lo] = site;
        }
    }
    qsort(out, (size_t)n, sizeof *out, by_rate);
    return n;
}

/* from_first_optimizer: a step ended after the first optimizer step's end (the time per step
 * is taken from there: that step makes the optimizer's state, a compiled run's first compile) */
static int from_first_optimizer(const growth *g)
{
    return g->opt_first_ns && g->timed_steps > g->opt_first_step;
}

uint32_t growth_timed_steps(const growth *g)
{
    if (from_first_optimizer(g))
        return g->timed_steps - g->opt_first_step;
    return g->timed_steps >= 2 ? g->timed_steps - 1 : 0;
}

double growth_time_per_step(const growth *g)
{
    uint32_t n = growth_timed_steps(g);
    uint64_t from = from_first_optimizer(g) ? g->opt_first_ns : g->first_ns;
    return n ? (double)(g->timed_last_ns - from) / 1e9 / (double)n : 0;
}
