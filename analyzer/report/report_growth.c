/* report_growth.c — the report's growth across steps (report.h, report_growth): the stacks whose
 * live bytes rose step after step to the run's end (growth.h decides), named as the report names
 * sites, their rate, since which step, the phase that made them, and when that rate reaches the
 * card the advice is for. Says nothing the replay did not measure: no steps, no growth; too few
 * step ends for the rule (growth.h, growth_can_tell), no word that nothing grows. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "report.h"

/* script_name: the traced script's file name (the first argument ending ".py"), or NULL */
static const char *script_name(const replay_result *r, char *buf, size_t len)
{
    const tables_process *p = tables_process_get(r->t);
    for (uint32_t i = 0; p && i < p->argc; i++) {
        const tables_str *a = &p->argv[i];
        if (a->len > 3 && a->len < len && !memcmp(a->s + a->len - 3, ".py", 3)) {
            size_t k = a->len;
            while (k && a->s[k - 1] != '/')
                k--;
            memcpy(buf, a->s + k, a->len - k);
            buf[a->len - k] = 0;
            return buf;
        }
    }
    return NULL;
}

/* in_forward: whether a Python frame of the stack is a module's forward (what a forward made:
 * activations, and the graph that saves them) */
static int in_forward(replay_result *r, uint32_t stack)
{
    size_t n = 0;
    const tables_frame *f = tables_resolve_stack(r->t, stack, &n);
    for (size_t i = 0; f && i < n; i++) {
        const char *fn = f[i].function ? f[i].function : "";
        size_t l = strlen(fn);
        if (f[i].kind == TABLES_FRAME_PYTHON && l >= 7 && !strcmp(fn + l - 7, "forward"))
            return 1;
    }
    return 0;
}

/* caller_text: the innermost frame of the traced script on the stack ("sim_long.py:65
 * LongTrainer.validation_loss"): where the program made what stays alive; "" if none */
static void caller_text(replay_result *r, uint32_t stack, const char *script, char *out, size_t len)
{
    out[0] = 0;
    size_t n = 0, sl = script ? strlen(script) : 0;
    const tables_frame *f = script ? tables_resolve_stack(r->t, stack, &n) : NULL;
    for (size_t i = 0; f && i < n; i++) {
        if (f[i].kind != TABLES_FRAME_PYTHON || !f[i].file)
            continue;
        size_t fl = strlen(f[i].file);
        if (fl < sl || strcmp(f[i].file + fl - sl, script) ||
            (fl > sl && f[i].file[fl - sl - 1] != '/'))
            continue;
        char raw[1024];
        size_t m = tables_frame_label(r->t, &f[i], raw, sizeof raw);
        escape_term(raw, m < sizeof raw ? m : sizeof raw - 1, out, len);
        return;
    }
}

void report_growth_fill(report_ctx *c)
{
    replay_result *r = &c->runs[0];
    const growth *g = &r->growth;
    report_growth *o = &c->growth;
    memset(o, 0, sizeof *o);
    o->steps = g->steps;
    o->opt_steps = g->opt_steps;
    o->passes = (uint32_t)r->backward_passes;
    o->iterations = report_opt_steps(c);
    o->split = c->model && c->model->cfg.split_on;
    o->steps_passes = replay_steps_unsure(r);
    o->passes_split = o->steps_passes && r->free_steps_shared;
    o->from_records = g->from_records;
    o->tensors = g->tensors_seen;
    o->secs_per_step = growth_time_per_step(g);
    o->secs_steps = growth_timed_steps(g);
    o->last_peak = g->last_peak_device;
    o->last_live = g->last_live;
    o->last_live_step = g->timed_steps ? g->timed_steps : g->steps;
    o->timed_steps = g->timed_steps;
    o->step_ends = growth_step_ends(g);
    o->ends_needed = GROWTH_MIN_STEP_ENDS;
    o->can_tell = growth_can_tell(g);
    /* the replay's steps, none with an optimizer step in it or anywhere in the run (a trace's
     * STEP records count only the optimizer's allocations: they cannot say none) */
    o->no_opt_step = !g->from_records && !g->opt_steps && !r->iterations;
    o->steps_unseen = o->no_opt_step && c->model && optim_steps_unseen(&c->model->rec);
    o->oom_steps = g->oom_steps;
    o->first_oom_step = g->first_oom_step;
    if (c->model && c->model->capacity) {
        o->capacity = c->model->capacity;
        snprintf(o->capacity_name, sizeof o->capacity_name, "%s", c->model->capacity_name);
    }
    growth_site s[64];
    int all = growth_sites(g, s, 64), n = all < REPORT_GROWTH_SITES ? all : REPORT_GROWTH_SITES;
    for (int i = 0; i < all; i++)
        o->rate += s[i].rate; /* every growing stack (the 64 fastest) counts toward the card */
    o->nmore = all - n;
    o->quiet = n                                     ? REPORT_GROWTH_SHOWN
               : !o->timed_steps && !o->from_records ? REPORT_GROWTH_NO_END
               : !o->can_tell                        ? REPORT_GROWTH_TOO_FEW
                                                     : REPORT_GROWTH_NONE;
    char script[256];
    const char *sn = script_name(r, script, sizeof script);
    for (int i = 0; i < n; i++) {
        report_growth_site *d = &o->sites[i];
        d->stack = s[i].stack;
        d->phase = s[i].phase < PHASE_COUNT ? phase_name(s[i].phase) : "unknown";
        d->since_step = s[i].since_step;
        d->n_up = s[i].n_up;
        d->bytes_since = s[i].bytes_since;
        d->bytes_last = s[i].bytes_last;
        d->rate = s[i].rate;
        replay_site_text(r, s[i].stack, d->text, sizeof d->text);
        replay_native_text(r, s[i].stack, d->native, sizeof d->native);
        caller_text(r, s[i].stack, sn, d->caller, sizeof d->caller);
        d->in_forward = in_forward(r, s[i].stack);
        if (!strcmp(d->caller, d->text))
            d->caller[0] = 0;
    }
    o->nsites = n;
    /* the ETA: the last step's highest bytes grow by the rate each step until the card */
    /* (not where the steps may be passes of one step: PCGrad's per-task copies, freed at its
     * step's end, had been "+78.3 MiB per step ... reaches the card at step 108") */
    if (n && o->capacity && o->last_peak && o->rate >= 1 && !o->passes_split) {
        o->reaches = 1;
        o->steps_to_card =
            o->last_peak >= o->capacity ? 0 : ceil((double)(o->capacity - o->last_peak) / o->rate);
        o->secs_to_card = o->steps_to_card * o->secs_per_step;
        double at = (double)g->steps + o->steps_to_card;
        o->at_step = at > 4e9 ? UINT32_MAX : (uint32_t)at;
    }
}

unsigned report_opt_steps(const report_ctx *c)
{
    return c->model && c->model->cfg.split_on ? c->model->cfg.split_steps : c->runs[0].iterations;
}
