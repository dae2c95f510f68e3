/* growth.c — memory that grows step after step (growth.h): per stack id its live bytes, what
 * they were at the last step end and its run of steps without a decrease; the step rule of the
 * preload's packer (trace_format.h, STEP) on the replay's events, or the trace's STEP records.
 * What grows is decided at the end from the runs alone. */
#include "growth.h"

#include <stdlib.h>
#include <string.h>

enum { G_FWD, G_BWD, G_OPT };

#define GROW_MIN_BYTES (1ull << 20)

static growth_stack *stack_at(growth *g, uint32_t id)
{
    if (!id || id > 0xffffffu)
        return NULL;
    if (id >= g->nst) {
        uint32_t n = g->nst ? g->nst : 1024;
        while (n <= id)
            n *= 2;
        growth_stack *ns = realloc(g->st, (size_t)n * sizeof *ns);
        if (!ns)
            return NULL;
        memset(ns + g->nst, 0, (size_t)(n - g->nst) * sizeof *ns);
        for (uint32_t i = g->nst; i < n; i++)
            ns[i].phase = PHASE_COUNT;
        g->st = ns;
        g->nst = n;
    }
    return &g->st[id];
}

static void mark(growth *g, uint32_t id, growth_stack *s)
{
    if (s->dirty)
        return;
    if (g->ndirty == g->capdirty) {
        size_t n = g->capdirty ? g->capdirty * 2 : 1024;
        uint32_t *nd = realloc(g->dirty, n * sizeof *nd);
        if (!nd)
            return;
        g->dirty = nd;
        g->capdirty = n;
    }
    g->dirty[g->ndirty++] = id;
    s->dirty = 1;
}

static uint64_t value(const growth *g, const growth_stack *s)
{
    return g->tensors_seen ? s->tensor : s->device;
}

/* sample: a step ended at t: every stack whose bytes changed continues or restarts its run */
static void sample(growth *g, uint64_t t)
{
    g->steps++;
    for (size_t i = 0; i < g->ndirty; i++) {
        growth_stack *s = &g->st[g->dirty[i]];
        uint64_t v = value(g, s);
        s->dirty = 0;
        /* a run ends where its bytes fall back, beyond a tenth of what it gained (a step's own
         * tensors at the moment it ended; a run that ended inside a step) */
        if (s->run_start == 0 || (v < s->last && (s->last - v) * 10 > s->last - s->run_bytes)) {
            s->run_start = g->steps;
            s->run_bytes = v;
            s->n_up = 0;
        } else if (v > s->last) {
            s->n_up++;
            s->last_up = g->steps;
        }
        s->last = v;
    }
    g->ndirty = 0;
    if (!g->first_ns)
        g->first_ns = t;
    g->last_ns = t;
    g->last_live = g->tensors_seen ? g->tensor : g->device;
    if (g->steps > 1) { /* the first step's peak holds the model's creation, not a step's */
        g->last_peak_device = g->peak_device;
        if (g->peak_device > g->max_peak_device)
            g->max_peak_device = g->peak_device;
    }
    if (g->oom_since && !g->oom_steps++)
        g->first_oom_step = g->steps;
    g->opt_steps += g->opt_since;
    g->opt_since = g->oom_since = 0;
    g->peak_device = g->device;
    g->peak_tensor = g->tensor;
    if (!g->every)
        g->every = 1;
    if (g->npts == GROWTH_POINTS) { /* every other point goes; the step between points doubles */
        for (unsigned i = 0; i < GROWTH_POINTS / 2; i++)
            g->pts[i] = g->pts[2 * i + 1];
        g->npts = GROWTH_POINTS / 2;
        g->every *= 2;
    }
    if (g->steps % g->every == 0) {
        growth_point *p = &g->pts[g->npts++];
        p->step = g->steps;
        p->time_ns = t;
        p->live = g->last_live;
        memcpy(p->by_phase, g->by_phase, sizeof p->by_phase);
    }
}

static void add(growth *g, uint32_t stack, uint64_t size, int tensor, int device, int sign,
                int phase_now)
{
    if (tensor) {
        g->tensor += sign > 0 ? size : (uint64_t) - (int64_t)size;
        g->tensors_seen = 1;
    }
    if (device)
        g->device += sign > 0 ? size : (uint64_t) - (int64_t)size;
    if (g->tensor > g->peak_tensor)
        g->peak_tensor = g->tensor;
    if (g->device > g->peak_device)
        g->peak_device = g->device;
    growth_stack *s = stack_at(g, stack);
    int ph = s && s->phase < PHASE_COUNT ? s->phase : phase_now;
    if (ph >= 0 && ph < PHASE_COUNT && (g->tensors_seen ? tensor : device))
        g->by_phase[ph] += sign > 0 ? size : (uint64_t) - (int64_t)size;
    if (!s)
        return;
    if (s->phase == PHASE_COUNT && phase_now >= 0 && phase_now < PHASE_COUNT)
        s->phase = (uint8_t)phase_now;
    if (tensor)
        s->tensor += sign > 0 ? size : (uint64_t) - (int64_t)size;
    if (device)
        s->device += sign > 0 ? size : (uint64_t) - (int64_t)size;
    mark(g, stack, s);
}

void growth_alloc(growth *g, uint32_t stack, uint64_t size, int tensor, int device, int ph,
                  int backward, uint64_t time_ns)
{
    if (!tensor && !device)
        return;
    if (!g->from_records) { /* the packer's rule (trace_format.h, STEP) */
        if (backward || ph == PHASE_BACKWARD) {
            g->state = G_BWD;
        } else if (ph == PHASE_OPTIMIZER) {
            g->state = G_OPT;
            g->opt_since = 1;
        } else if (g->state != G_FWD) {
            sample(g, time_ns);
            g->state = G_FWD;
        }
    }
    add(g, stack, size, tensor, device, 1, ph);
}

void growth_free(growth *g, uint32_t stack, uint64_t size, int tensor, int device)
{
    if (tensor || device)
        add(g, stack, size, tensor, device, -1, -1);
}

void growth_step_record(growth *g, const reader_step *st, int (*phase_of)(void *, uint32_t),
                        void *ctx)
{
    if (!g->from_records) { /* the trace's own steps from now on: the replay's are forgotten */
        g->from_records = 1;
        for (uint32_t i = 0; i < g->nst; i++) {
            uint8_t ph = g->st[i].phase;
            memset(&g->st[i], 0, sizeof g->st[i]);
            g->st[i].phase = ph;
        }
        g->ndirty = 0;
        g->steps = g->opt_steps = g->oom_steps = 0;
        g->first_ns = g->last_ns = 0;
        g->npts = 0;
        g->every = 1;
        g->max_peak_device = 0;
        memset(g->by_phase, 0, sizeof g->by_phase);
    }
    g->tensors_seen = (st->fixed.flags & VT_STEPF_TENSORS) != 0;
    g->tensor = st->fixed.live_tensor;
    g->device = st->fixed.live_device;
    for (uint32_t i = 0; i < st->fixed.n_stacks; i++) {
        vt_step_stack v = reader_step_stack(st, i);
        growth_stack *s = stack_at(g, v.stack_id);
        if (!s)
            continue;
        if (s->phase == PHASE_COUNT && phase_of)
            s->phase = (uint8_t)phase_of(ctx, v.stack_id);
        uint64_t old = value(g, s);
        if (s->phase < PHASE_COUNT)
            g->by_phase[s->phase] += v.bytes - old;
        if (g->tensors_seen)
            s->tensor = v.bytes;
        else
            s->device = v.bytes;
        mark(g, v.stack_id, s);
    }
    g->peak_device = st->fixed.peak_device;
    g->opt_since = (st->fixed.flags & VT_STEPF_OPTIMIZER) != 0;
    g->oom_since = (st->fixed.flags & VT_STEPF_OOM) != 0;
    sample(g, st->time_ns);
}

void growth_end(growth *g, uint64_t end_ns)
{
    if (!g->from_records && g->state != G_FWD)
        sample(g, end_ns);
    g->state = G_FWD;
}

void growth_free_all(growth *g)
{
    free(g->st);
    free(g->dirty);
    g->st = NULL;
    g->dirty = NULL;
    g->nst = 0;
    g->ndirty = g->capdirty = 0;
}

static int by_rate(const void *a, const void *b)
{
    const growth_site *x = a, *y = b;
    return x->rate < y->rate   ? 1
           : x->rate > y->rate ? -1
                               : (x->stack > y->stack) - (x->stack < y->stack);
}

int growth_sites(const growth *g, growth_site *out, int max)
{
    int n = 0;
    for (uint32_t id = 1; id < g->nst && g->steps >= 4; id++) {
        const growth_stack *s = &g->st[id];
        if (!s->run_start || s->n_up < 3 || s->last < s->run_bytes + GROW_MIN_BYTES)
            continue;
        uint32_t span = g->steps - s->run_start;
        uint32_t recent = span / 4 > 3 ? span / 4 : 3;
        if (span < 4 || s->last_up + recent < g->steps)
            continue;
        growth_site site = {id,
                            s->phase,
                            s->run_start,
                            s->n_up,
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

double growth_time_per_step(const growth *g)
{
    return g->steps >= 2 ? (double)(g->last_ns - g->first_ns) / 1e9 / (double)(g->steps - 1) : 0;
}
