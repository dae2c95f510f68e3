/* growth_view.c — the report's growth across steps and what a bounded trace kept (report.h:
 * report_growth, replay.h: the chunked layout), as text and as JSON (`growth`, `bounded`); the
 * HTML page has its own section (html_growth.c). Render only: report_growth.c decides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cards.h"
#include "growth_view.h"
#include "jsonw.h"

static char *human(uint64_t b, char *buf, size_t len)
{
    return card_format_bytes(b, buf, len);
}

/* duration: "41 s", "12 min", "3.2 h", "2.1 days" */
static char *duration(double s, char *buf, size_t len)
{
    if (s < 120)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.0f min", s / 60);
    else if (s < 172800)
        snprintf(buf, len, "%.1f h", s / 3600);
    else
        snprintf(buf, len, "%.1f days", s / 86400);
    return buf;
}

void growth_heading(const report_growth *g, char *out, size_t len)
{
    /* where the replay saw every tensor, the run's own counts (its backward passes and
     * optimizer steps) beside the steps below when they differ: those split the run at
     * allocations, and optimizer allocations in its setup can begin one
     * more; segment mode sees only the steps that grew the cache, a bounded trace not every
     * event */
    int n;
    if (g->passes && !g->from_records && g->tensors && g->steps_passes) {
        /* (SAM's 2 steps of 2 passes each had been "4 optimizer steps") */
        n = snprintf(out, len,
                     "%u step%s as its allocations split the run (its own: %u backward pass%s, "
                     "%u gradient free%s or optimizer step%s after one: how many optimizer steps "
                     "ran is not known, see events)",
                     g->steps, g->steps == 1 ? "" : "s", g->passes, g->passes == 1 ? "" : "es",
                     g->iterations, g->iterations == 1 ? "" : "s", g->iterations == 1 ? "" : "s");
    } else if (g->passes && !g->from_records && g->tensors &&
               (g->passes != g->steps || g->iterations != g->opt_steps)) {
        n = snprintf(out, len,
                     "%u step%s as its allocations split the run (its own: %u backward pass%s, "
                     "%u optimizer step%s)",
                     g->steps, g->steps == 1 ? "" : "s", g->passes, g->passes == 1 ? "" : "es",
                     g->iterations, g->iterations == 1 ? "" : "s");
    } else {
        n = snprintf(out, len, "%u step%s", g->steps, g->steps == 1 ? "" : "s");
        if (n >= 0 && (size_t)n < len && g->opt_steps && g->opt_steps < g->steps)
            /* accumulation: a step is a micro-step */
            n += snprintf(out + n, len - (size_t)n,
                          " of forward and backward, %u ending in an optimizer step", g->opt_steps);
        else if (n >= 0 && (size_t)n < len && g->steps_unseen)
            /* ... or where its optimizer's steps leave no trace (plain SGD's, the gradients
             * zeroed in place: 8 steps "none ending in an optimizer step" of a run of 2) */
            n += snprintf(out + n, len - (size_t)n,
                          " of forward and backward, none seen ending in an optimizer step "
                          "(whether any did is not known)");
        else if (n >= 0 && (size_t)n < len && g->no_opt_step)
            /* a forward and backward that took no optimizer step (an OOM in it): not a "step"
             * of training as the program counts them */
            n += snprintf(out + n, len - (size_t)n,
                          " of forward and backward, none ending in an optimizer step");
    }
    if (n >= 0 && (size_t)n < len && g->secs_per_step > 0)
        /* few steps timed: said (one may not be the others' kind) */
        snprintf(out + n, len - (size_t)n, ", %.3g s per step%s", g->secs_per_step,
                 g->secs_steps == 1 ? " (one step timed)" : "");
}

void growth_text(FILE *out, const report_ctx *c, const char *bold, const char *normal)
{
    const report_growth *g = &c->growth;
    const replay_result *r = &c->runs[0];
    char a[32], b[32], d[32], t[32];
    if (r->chunked) {
        fprintf(out, "\n%sBounded trace%s: ", bold, normal);
        if (r->layout.max_size)
            fprintf(out, "kept under %s", human(r->layout.max_size, a, sizeof a));
        else
            fprintf(out, "compressed, not bounded");
        fprintf(out, " (chunks %s stored for %s of records)\n",
                human(r->layout.stored_bytes, a, sizeof a),
                human(r->layout.raw_bytes, b, sizeof b));
        if (r->dropped_events)
            fprintf(
                out,
                "  dropped  %llu events of %llu, from %.3f s to %.3f s (the run's beginning "
                "is kept in full; the replay starts again at %.3f s from a snapshot of the %llu "
                "allocations then alive, exact from there to the end)\n",
                (unsigned long long)r->dropped_events, (unsigned long long)r->run_events,
                (double)r->dropped_from_ns / 1e9, (double)r->dropped_to_ns / 1e9,
                (double)r->snapshot_ns / 1e9, (unsigned long long)r->snapshot_allocs);
        else if (!r->missing_events)
            fprintf(out, "  dropped  nothing: every event of the run is in the file\n");
        if (r->missing_events)
            fprintf(out,
                    "  missing  %llu events of the run are not in the file (the disk, the "
                    "file-size limit, or a live set too large for the bound kept them out)\n",
                    (unsigned long long)r->missing_events);
        if (r->layout.gaps)
            fprintf(out, "  gaps     %llu: events missing with no snapshot before what follows\n",
                    (unsigned long long)r->layout.gaps);
        if (r->run_dropped)
            fprintf(out, "  lost     %llu events the capture could not keep (no room then)\n",
                    (unsigned long long)r->run_dropped);
    }
    if (!g->steps)
        return; /* no training step: nothing to say about steps */
    char head[200];
    growth_heading(g, head, sizeof head);
    /* segment mode: a step is seen only where it allocated a segment (the cache grew), as the
     * header's "optimizer steps that grew the cache" */
    int seg = !r->tensor_mode && !g->from_records;
    /* summaries that end before the run's events do: a run killed while the packer was behind
     * (its last raw slots never packed) had been said "every step of the run" for 82 steps where
     * its events, and the report's header, counted 99 optimizer steps */
    char src[160];
    if (g->from_records && r->iterations > g->opt_steps)
        snprintf(src, sizeof src,
                 "from the trace's per-step summaries, which end %u optimizer step%s before its "
                 "events do: the run stopped before they were summarized",
                 r->iterations - g->opt_steps, r->iterations - g->opt_steps == 1 ? "" : "s");
    else
        snprintf(src, sizeof src, "%s",
                 g->from_records ? "every step of the run, from the trace's per-step summaries"
                                 : "the live bytes at the end of each step");
    fprintf(out, "\n%sGrowth across steps%s (%s; %s%s)\n", bold, normal, head, src,
            seg ? "; segment mode: steps seen only where the cache grew" : "");
    const char *of = g->tensors ? "of tensors" : "of device memory";
    if (g->quiet == REPORT_GROWTH_NO_END) { /* it ran into the trace's end */
        fprintf(out,
                "  no step end seen before the trace's end (a step is seen to end at the first "
                "allocation after its backward or optimizer allocations): nothing to compare "
                "step to step (%s %s live at the trace's end)\n",
                human(g->last_live, a, sizeof a), of);
        return;
    }
    if (g->quiet == REPORT_GROWTH_TOO_FEW) { /* the rule cannot find growth in so few */
        fprintf(out,
                "  too few step ends to tell growth (%u seen before the trace's end, %u needed: "
                "growth is a rise over at least %d steps): at the last step end seen (step %u) "
                "%s %s live\n",
                g->step_ends, g->ends_needed, GROWTH_MIN_SPAN, g->last_live_step,
                human(g->last_live, a, sizeof a), of);
        return;
    }
    if (g->quiet == REPORT_GROWTH_NONE) {
        fprintf(out,
                "  nothing grows step after step (%u step ends compared; growth is a rise over "
                "at least %d steps): at the last step end seen (step %u) %s %s live\n",
                g->step_ends, GROWTH_MIN_SPAN, g->last_live_step, human(g->last_live, a, sizeof a),
                of);
        return;
    }
    for (int i = 0; i < g->nsites; i++) {
        const report_growth_site *s = &g->sites[i];
        fprintf(out,
                "  +%s per step since step %u (%s then, %s at the last step; made in phase %s) ",
                human((uint64_t)s->rate, a, sizeof a), s->since_step,
                human(s->bytes_since, b, sizeof b), human(s->bytes_last, d, sizeof d), s->phase);
        fprintf(out, "%s\n", s->text);
        if (s->native[0] && strncmp(s->native, s->text, strlen(s->native))) /* (not the site) */
            fprintf(out, "        via %s\n", s->native);
        if (s->caller[0])
            fprintf(out, "        from %s\n", s->caller);
    }
    if (g->nmore)
        fprintf(out, "  and %d more stack%s growing (%s per step in all)\n", g->nmore,
                g->nmore == 1 ? "" : "s", human((uint64_t)g->rate, a, sizeof a));
    if (g->passes_split)
        fprintf(out, "  these steps may be backward passes of one forward, within one optimizer "
                     "step (see events): what grows across them may be the step's own tensors of "
                     "each pass, freed when the step ends; whether it stays alive past an "
                     "optimizer step is not known\n");
    else if (g->sites[0].in_forward)
        fprintf(out, "  what a module's forward made (activations, saved for a backward that never "
                     "came) stays alive past its step: something keeps its output or loss, and "
                     "so its graph (a list of losses, `total += loss` without .item())\n");
    else
        fprintf(out, "  what it made stays alive past its step: the program keeps a reference "
                     "to it (a cache or a list that is never emptied)\n");
    if (g->reaches && g->steps_to_card == 0)
        fprintf(out, "  the process already reached the card (%s) during the last step\n",
                human(g->capacity, a, sizeof a));
    else if (g->reaches)
        fprintf(out,
                "  at %s per step the process reaches the card (%s, %s at its highest in the "
                "last step) in about %.0f steps%s%s%s: at step %u\n",
                human((uint64_t)g->rate, a, sizeof a), human(g->capacity, b, sizeof b),
                human(g->last_peak, d, sizeof d), g->steps_to_card, g->secs_to_card > 0 ? " (" : "",
                g->secs_to_card > 0 ? duration(g->secs_to_card, t, sizeof t) : "",
                g->secs_to_card > 0 ? ")" : "", g->at_step);
}

void growth_json(cJSON *root, const report_ctx *c)
{
    const report_growth *g = &c->growth;
    const replay_result *r = &c->runs[0];
    if (r->chunked) {
        cJSON *b = cJSON_AddObjectToObject(root, "bounded");
        cJSON_AddNumberToObject(b, "max_size_bytes", (double)r->layout.max_size);
        cJSON_AddNumberToObject(b, "stored_bytes", (double)r->layout.stored_bytes);
        cJSON_AddNumberToObject(b, "raw_bytes", (double)r->layout.raw_bytes);
        cJSON_AddNumberToObject(b, "run_events", (double)r->run_events);
        cJSON_AddNumberToObject(b, "dropped_events", (double)r->dropped_events);
        cJSON_AddNumberToObject(b, "dropped_from_ns", (double)r->dropped_from_ns);
        cJSON_AddNumberToObject(b, "dropped_to_ns", (double)r->dropped_to_ns);
        cJSON_AddNumberToObject(b, "snapshot_time_ns", (double)r->snapshot_ns);
        cJSON_AddNumberToObject(b, "snapshot_allocations", (double)r->snapshot_allocs);
        cJSON_AddNumberToObject(b, "gaps", (double)r->layout.gaps);
        cJSON_AddNumberToObject(b, "missing_events", (double)r->missing_events);
        cJSON_AddNumberToObject(b, "lost_events", (double)r->run_dropped);
    } else {
        cJSON_AddNullToObject(root, "bounded");
    }
    cJSON *o = cJSON_AddObjectToObject(root, "growth");
    cJSON_AddNumberToObject(o, "steps", g->steps);
    if (g->steps_passes || g->split) /* (not known: see iterations_known, report_opt_steps) */
        cJSON_AddNullToObject(o, "optimizer_steps");
    else
        cJSON_AddNumberToObject(o, "optimizer_steps", g->opt_steps);
    cJSON_AddStringToObject(o, "source", g->from_records ? "summaries" : "replay");
    cJSON_AddStringToObject(o, "basis", g->tensors ? "tensors" : "device");
    cJSON_AddNumberToObject(o, "seconds_per_step", g->secs_per_step);
    cJSON_AddNumberToObject(o, "steps_timed", g->secs_steps);
    cJSON_AddNumberToObject(o, "live_at_last_step_bytes", (double)g->last_live);
    cJSON_AddNumberToObject(o, "live_at_step", g->last_live_step);
    cJSON_AddNumberToObject(o, "last_step_peak_bytes", (double)g->last_peak);
    /* the step ends compared, and whether the rule can find growth in so few (false: an empty
     * "growing" says nothing of the program) */
    cJSON_AddNumberToObject(o, "step_ends", g->step_ends);
    cJSON_AddNumberToObject(o, "step_ends_needed", g->ends_needed);
    cJSON_AddBoolToObject(o, "enough_steps", g->can_tell);
    cJSON *arr = cJSON_AddArrayToObject(o, "growing");
    for (int i = 0; i < g->nsites; i++) {
        const report_growth_site *s = &g->sites[i];
        cJSON *e = cJSON_CreateObject();
        jsonw_add_c(e, "site", s->text);
        jsonw_add_c(e, "native", s->native);
        jsonw_add_c(e, "caller", s->caller);
        cJSON_AddNumberToObject(e, "stack_id", s->stack);
        cJSON_AddStringToObject(e, "phase", s->phase);
        cJSON_AddBoolToObject(e, "in_module_forward", s->in_forward);
        cJSON_AddNumberToObject(e, "since_step", s->since_step);
        cJSON_AddNumberToObject(e, "steps_that_grew", s->n_up);
        cJSON_AddNumberToObject(e, "bytes_since", (double)s->bytes_since);
        cJSON_AddNumberToObject(e, "bytes_last", (double)s->bytes_last);
        cJSON_AddNumberToObject(e, "bytes_per_step", s->rate);
        cJSON_AddItemToArray(arr, e);
    }
    cJSON_AddNumberToObject(o, "more_growing", g->nmore);
    cJSON_AddNumberToObject(o, "bytes_per_step", g->rate);
    if (g->reaches) {
        cJSON *k = cJSON_AddObjectToObject(o, "reaches_card");
        cJSON_AddNumberToObject(k, "capacity_bytes", (double)g->capacity);
        jsonw_add_c(k, "card", g->capacity_name);
        cJSON_AddNumberToObject(k, "steps", g->steps_to_card);
        cJSON_AddNumberToObject(k, "at_step", g->at_step);
        cJSON_AddNumberToObject(k, "seconds", g->secs_to_card);
    } else {
        cJSON_AddNullToObject(o, "reaches_card");
    }
    cJSON_AddNumberToObject(o, "steps_with_oom", g->oom_steps);
    cJSON *pts = cJSON_AddArrayToObject(o, "series");
    const growth *gr = &r->growth;
    for (unsigned i = 0; i < gr->npts; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "step", gr->pts[i].step);
        cJSON_AddNumberToObject(p, "time_ns", (double)gr->pts[i].time_ns);
        cJSON_AddNumberToObject(p, "live_bytes", (double)gr->pts[i].live);
        cJSON *bp = cJSON_AddObjectToObject(p, "by_phase");
        for (int ph = 0; ph < PHASE_COUNT; ph++)
            if (gr->pts[i].by_phase[ph])
                cJSON_AddNumberToObject(bp, phase_name(ph), (double)gr->pts[i].by_phase[ph]);
        cJSON_AddItemToArray(pts, p);
    }
}
