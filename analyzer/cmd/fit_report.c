/* fit_report.c — what `vramtrace fit` shows (fit_job.h): the table of trials or one JSON
 * document, the largest micro-batch that fits, and what the trials measured of gradient
 * accumulation. The search itself is cmd_fit.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cards.h"
#include "fit_job.h"
#include "jsonw.h"

/* physical_b: the command's flag that carries {B} where its name says a physical batch
 * (Opacus's --max-physical-batch-size) into flag (len bytes); 0 when none */
static int physical_b(const fit_job *j, char *flag, size_t len)
{
    for (int i = 0; i < j->argc; i++) {
        const char *a = j->argv[i], *eq = strchr(a, '=');
        const char *f = !strncmp(a, "{B", 2) && i > 0     ? j->argv[i - 1]
                        : eq && !strncmp(eq + 1, "{B", 2) ? a
                                                          : NULL;
        if (!f || strncmp(f, "--", 2))
            continue;
        char name[64];
        size_t n = 0;
        for (const char *p = f + 2; *p && *p != '=' && n + 1 < sizeof name; p++)
            name[n++] = *p == '-' ? '_' : (char)tolower((unsigned char)*p);
        name[n] = '\0';
        if (strstr(name, "physical") && strstr(name, "batch")) {
            snprintf(flag, len, "%.*s",
                     (int)(strchr(f, '=') ? strchr(f, '=') - f : (long)strlen(f)), f);
            return 1;
        }
    }
    return 0;
}

/* accum_range: the fewest and most micro-steps per optimizer step the trials' traces showed
 * (of those that showed a count; 0, 0 when none did) */
static void accum_range(const fit_job *j, int *lo, int *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < j->ntrials; i++) {
        int a = j->trials[i].accum;
        if (a > 0 && (!*lo || a < *lo))
            *lo = a;
        if (a > *hi)
            *hi = a;
    }
}

/* accumulation_note: what the trials measured of gradient accumulation (the gradients of one
 * micro-step alive through the next micro-batch's forward), in one sentence; "" when nothing
 * needs saying. */
static void accumulation_note(const fit_job *j, char *out, size_t len)
{
    out[0] = '\0';
    char phys[64];
    if (!j->has_a && physical_b(j, phys, sizeof phys)) {
        /* (its optimizer steps counted per physical batch had said "each trial ran one backward
         * per optimizer step" of a split of 4) */
        snprintf(out, len,
                 "{B} is the command's physical batch (%s): the program splits its logical "
                 "batch into physical batches of {B} and sums their gradients itself, as each "
                 "trial ran and measured",
                 phys);
        return;
    }
    const fit_trial *first = NULL;
    for (int i = 0; i < j->ntrials && !first; i++)
        if (!j->trials[i].timed_out && j->trials[i].ntraces)
            first = &j->trials[i];
    if (!first)
        return;
    for (int i = 0; j->has_a && i < j->ntrials; i++)
        if (j->trials[i].a_run > j->trials[i].a) {
            snprintf(out, len,
                     "where the effective batch leaves one micro-step per optimizer step, the "
                     "trial ran two (the program accumulates: gradients stay alive through the "
                     "next micro-batch's forward), so its peak is an upper bound");
            return;
        }
    if (j->has_a)
        return;
    int backward = 0, lo, hi;
    accum_range(j, &lo, &hi);
    for (int i = 0; i < j->ntrials; i++)
        backward |= j->trials[i].backward;
    if (!backward) /* forwards only (an evaluation): no gradient to accumulate */
        return;
    if (first->cache) /* (repcache.h: its passes are no accumulation) */
        snprintf(out, len,
                 "the trials' steps ran several backward passes each (%d in the first "
                 "trial's), the first of which made no "
                 "gradient of a weight (a representation cache, as GradCache's): the others "
                 "encode chunks of one batch, not micro-batches of gradient accumulation, and "
                 "each forward's batch is a chunk's",
                 first->cache);
    else if (first->accum >= 2 && lo != hi) /* (YOLOv5's round(64 / B)) */
        snprintf(out, len,
                 "the trials accumulated %d to %d micro-steps per optimizer step, the count the "
                 "command sets itself at each micro-batch: their peaks include the gradients "
                 "kept through the next forward",
                 lo, hi);
    else if (first->accum >= 2)
        snprintf(out, len,
                 "the trials accumulated %d micro-steps per optimizer step, as the command "
                 "does: their peaks include the gradients kept through the next forward",
                 first->accum);
    else if (first->accum == 1)
        snprintf(out, len,
                 "each trial ran one backward per optimizer step: if the training accumulates "
                 "gradients over several micro-batches, mark its accumulation with {A} (its "
                 "gradients stay alive through the next micro-batch's forward, which these "
                 "trials did not measure)");
    else if (first->steps_unsure) /* (PGD's 8 passes a step, their gradients freed between
                                   * them: its trial's "4 optimizer steps" were 2) */
        snprintf(out, len,
                 "whether the command accumulates gradients is not known (the first trial's "
                 "trace showed backward passes whose gradients were freed between passes, "
                 "so not how many optimizer steps ran): if it does, mark its accumulation "
                 "with {A}");
    else if (first->steps) /* steps seen, but no one count of passes before each (CycleGAN's
                            * two-pass and one-pass steps had been "no optimizer step") */
        snprintf(out, len,
                 "whether the command accumulates gradients is not known (the first trial's "
                 "trace showed %d optimizer steps, but not one count of backward passes before "
                 "each of them): if it does, mark its accumulation with {A}",
                 first->steps);
    else
        snprintf(out, len,
                 "whether the command accumulates gradients is not known (no trial's trace "
                 "showed an optimizer step: one that allocates and frees nothing leaves none): "
                 "if it does, mark its accumulation with {A}");
}

/* steps_note: a trial that fit after one optimizer step alone made the optimizer's state after
 * its forward, so a second step's forward, which holds that state, was not measured (fit --iters
 * 1 had found a Llama 160M's B=9 to fit 12 GiB at 11.22 GiB: its two-step run peaked at 11.76,
 * over the headroom); "" when none did */
static void steps_note(const fit_job *j, char *out, size_t len)
{
    out[0] = '\0';
    for (int i = 0; i < j->ntrials; i++)
        if (j->trials[i].fits && j->trials[i].backward && j->trials[i].steps == 1) {
            snprintf(out, len,
                     "a trial that fits ran one optimizer step: the optimizer's state made in it "
                     "came after its forward, and a second step's forward holds it too, which "
                     "these trials did not measure (run at least 2 steps: %s)",
                     j->has_i ? "--iters 3, the default" /* (with no {I}, --iters sets nothing) */
                              : "the command's own iteration count");
            return;
        }
}

/* rising_note: the trials whose peak still rose at their last step (fit_job.h's rising), run
 * again with more iterations until it stopped; "" when none was */
static void rising_note(const fit_job *j, char *out, size_t len)
{
    out[0] = '\0';
    const fit_trial *r = NULL, *cap = NULL;
    for (int i = 0; i < j->ntrials; i++) {
        const fit_trial *t = &j->trials[i];
        if (t->rose_from && !t->rising && !r)
            r = t;
        if (t->rose_from && t->rising && !t->oom && !cap)
            cap = t;
    }
    if (!r && !cap)
        return;
    const fit_trial *t = r ? r : cap;
    int n = snprintf(out, len,
                     "at micro-batch %ld the peak still rose at the last of %ld iterations (memory "
                     "kept from step to step and growing, as a model's memory of past segments "
                     "or a cache does): ",
                     t->b, t->rose_from);
    if (n < 0 || (size_t)n >= len)
        return;
    if (r)
        snprintf(out + n, len - (size_t)n,
                 "it ran again with more until the peak stopped rising (%ld iterations), and the "
                 "trials after it ran as many",
                 r->iters);
    else
        snprintf(out + n, len - (size_t)n,
                 "still rising after %ld iterations, it is not counted as a fit (a run of more "
                 "steps needs more)",
                 cap->iters);
}

/* seq_short: trial t fit at sequences shorter than the command's flag allows (dynamic padding:
 * each step's T its longest sample's; a BERT's 2-step trials at T = 104 and 184 had said "24
 * fits, 6.50 GiB" and "largest 45" where its whole run at 24 ran out of memory at T = 512) */
static int seq_short(const fit_trial *t)
{
    return t->fits && t->seq_seen && t->seq_flag && t->seq_seen < t->seq_flag;
}

/* seq_note: the fitting trials' sequences shorter than the flag's, in one sentence; "" when
 * none was */
static void seq_note(const fit_job *j, char *out, size_t len)
{
    out[0] = '\0';
    long lo = 0, hi = 0;
    const fit_trial *any = NULL;
    for (int i = 0; i < j->ntrials; i++)
        if (seq_short(&j->trials[i])) {
            const fit_trial *t = &j->trials[i];
            lo = !any || t->seq_seen < lo ? t->seq_seen : lo;
            hi = t->seq_seen > hi ? t->seq_seen : hi;
            any = t;
        }
    if (!any)
        return;
    char seen[48];
    if (lo == hi)
        snprintf(seen, sizeof seen, "%ld", lo);
    else
        snprintf(seen, sizeof seen, "%ld to %ld", lo, hi);
    snprintf(out, len,
             "the trials that fit took sequences of %s tokens at their peaks, where %s allows "
             "%ld: a step whose batch pads to longer sequences needs more, which they did not "
             "measure, so \"fits\" and the largest hold only for the sequences they saw "
             "(%s)",
             seen, any->seq_name, any->seq_flag,
             j->has_i ? "more iterations with --iters N, or the whole program without {I}, "
                        "reach longer batches"
                      : "a run whose longest batch is its flag's measures it");
}

void fit_print_table(const fit_job *j, long best, long best_a, int interrupted, int by_signal)
{
    char buf[32];
    if (j->ntrials) /* no heading over an empty table */
        printf("%-12s%s%-12s  %-58s %8s\n", "micro-batch", j->has_a ? "  accumulate " : "", "peak",
               "verdict", "seconds");
    for (int i = 0; i < j->ntrials; i++) {
        const fit_trial *t = &j->trials[i];
        char verdict[120];
        if (t->timed_out)
            snprintf(verdict, sizeof verdict, "timed out (killed after %.0f s)", t->limit);
        else if (t->fits && t->rose_from)
            snprintf(verdict, sizeof verdict, "fits (%ld iterations: its peak rose after %ld)",
                     t->iters, t->rose_from);
        else if (t->fits)
            snprintf(verdict, sizeof verdict, "fits");
        else if (!t->oom && t->rising && t->iters)
            snprintf(verdict, sizeof verdict, "ran, its peak still rising after %ld iterations",
                     t->iters);
        else if (t->oom) /* (what grew is of the bytes live: the request refused is apart) */
            snprintf(verdict, sizeof verdict, "OOM asking %s (%s %s)",
                     card_format_bytes(t->requested, buf, sizeof buf),
                     t->broke < CAT_COUNT ? category_name((category)t->broke) : "?",
                     t->broke_since ? "grew most" : "the largest: no smaller fit");
        else
            snprintf(verdict, sizeof verdict, "ran, under %d %% headroom", FIT_HEADROOM_PCT);
        if (seq_short(t)) /* (the note says why) */
            snprintf(verdict, sizeof verdict, "fits at T = %ld (of %s %ld: see the note)",
                     t->seq_seen, t->seq_name, t->seq_flag);
        printf("%-12ld", t->b);
        if (j->has_a)
            printf("  %-11ld", t->a);
        printf("%-12s  %-58s %8.1f\n", card_format_bytes(t->peak, buf, sizeof buf), verdict,
               t->seconds);
    }
    uint64_t cap = j->ntrials ? j->trials[0].capacity : 0;
    if (interrupted && j->ntrials)
        printf("the search stopped early (%s): the table holds the trials so far\n",
               by_signal ? "interrupted" : "a trial failed");
    else if (interrupted) /* the first trial did not complete: nothing measured */
        printf("the search stopped early (%s): no trial completed, nothing was measured\n",
               by_signal ? "interrupted" : "the first trial failed");
    long tb = fit_trace_b(j, best);
    if (best > 0) {
        printf("largest %s that fits with %d %% headroom on %s%s: %s%ld",
               tb ? "{B}" : "micro-batch", FIT_HEADROOM_PCT,
               cap ? card_format_bytes(cap, buf, sizeof buf) : "the device",
               interrupted ? " (so far)" : "", fit_at_limit(j, best) ? "at least " : "", best);
        if (fit_at_limit(j, best))
            printf(" (the search's limit: nothing larger was tried; --max-b N searches further)");
        if (j->has_a)
            printf(", accumulate %ld steps (effective batch %ld)", best_a, j->effective);
        for (int i = 0; i < j->ntrials; i++)
            if (j->trials[i].b == best && seq_short(&j->trials[i]))
                printf(" at sequences of %ld tokens, not %s's %ld (see the note)",
                       j->trials[i].seq_seen, j->trials[i].seq_name, j->trials[i].seq_flag);
        if (tb) /* (a global batch flag had been told "largest micro-batch ... 367" for 91) */
            printf(" (not the micro-batch: at {B} = %ld its trace's forwards took a batch of "
                   "%ld, so the command's flag is another batch)",
                   best, tb);
        printf("\n");
    } else if (!interrupted) {
        printf("no micro-batch fits, not even %ld\n", j->cand[0]);
    }
    char note[400];
    accumulation_note(j, note, sizeof note);
    if (note[0])
        printf("note: %s\n", note);
    steps_note(j, note, sizeof note);
    if (note[0])
        printf("note: %s\n", note);
    rising_note(j, note, sizeof note);
    if (note[0])
        printf("note: %s\n", note);
    char sn[512];
    seq_note(j, sn, sizeof sn);
    if (sn[0])
        printf("note: %s\n", sn);
    printf("traces and output of every trial: %s\n", j->dir);
}

/* add_batch: "batch_size" and "gradient_accumulation_steps" (null without {A}) into o. */
static void add_batch(cJSON *o, long b, long a, int has_a)
{
    cJSON_AddNumberToObject(o, "batch_size", (double)b);
    if (has_a)
        cJSON_AddNumberToObject(o, "gradient_accumulation_steps", (double)a);
    else
        cJSON_AddNullToObject(o, "gradient_accumulation_steps");
}

void fit_print_json(const fit_job *j, long best, long best_a, int stopped, int by_signal)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *trials = cJSON_AddArrayToObject(root, "trials");
    for (int i = 0; i < j->ntrials; i++) {
        const fit_trial *t = &j->trials[i];
        cJSON *o = cJSON_CreateObject();
        add_batch(o, t->b, t->a, j->has_a);
        if (j->has_a)
            cJSON_AddNumberToObject(o, "trial_accumulation_steps", (double)t->a_run);
        if (t->accum)
            cJSON_AddNumberToObject(o, "micro_steps_per_optimizer_step", t->accum);
        else
            cJSON_AddNullToObject(o, "micro_steps_per_optimizer_step");
        if (t->steps_unsure)
            cJSON_AddNullToObject(o, "optimizer_steps");
        else
            cJSON_AddNumberToObject(o, "optimizer_steps", t->steps);
        if (t->trace_b)
            cJSON_AddNumberToObject(o, "trace_batch_size", (double)t->trace_b);
        else
            cJSON_AddNullToObject(o, "trace_batch_size");
        if (t->seq_seen) /* (the token batch at its peak over its micro-batch) */
            cJSON_AddNumberToObject(o, "sequence_length_seen", (double)t->seq_seen);
        else
            cJSON_AddNullToObject(o, "sequence_length_seen");
        if (t->iters)
            cJSON_AddNumberToObject(o, "iterations", (double)t->iters);
        else
            cJSON_AddNullToObject(o, "iterations");
        cJSON_AddBoolToObject(o, "peak_still_rising", t->rising);
        if (t->rose_from)
            cJSON_AddNumberToObject(o, "rerun_from_iterations", (double)t->rose_from);
        else
            cJSON_AddNullToObject(o, "rerun_from_iterations");
        cJSON_AddNumberToObject(o, "peak_bytes", (double)t->peak);
        cJSON_AddBoolToObject(o, "fits", t->fits);
        cJSON_AddBoolToObject(o, "oom", t->oom);
        if (t->broke < CAT_COUNT)
            cJSON_AddStringToObject(o, "grew_most", category_key((category)t->broke));
        else
            cJSON_AddNullToObject(o, "grew_most");
        if (t->oom) { /* the request refused; the smaller fit grew_most is counted from */
            cJSON_AddNumberToObject(o, "requested_bytes", (double)t->requested);
            if (t->broke_since)
                cJSON_AddNumberToObject(o, "grew_since_batch_size", (double)t->broke_since);
            else
                cJSON_AddNullToObject(o, "grew_since_batch_size");
        }
        cJSON_AddNumberToObject(o, "capacity_bytes", (double)t->capacity);
        cJSON_AddNumberToObject(o, "exit_status", t->status);
        cJSON_AddNumberToObject(o, "seconds", t->seconds);
        cJSON_AddNumberToObject(o, "time_limit_s", t->limit);
        cJSON_AddBoolToObject(o, "timed_out", t->timed_out);
        cJSON_AddNumberToObject(o, "log_cut_bytes", (double)t->out_cut);
        cJSON_AddItemToArray(trials, o);
    }
    if (best > 0) {
        cJSON *b = cJSON_AddObjectToObject(root, "best");
        add_batch(b, best, best_a, j->has_a);
        cJSON_AddBoolToObject(b, "at_search_limit", fit_at_limit(j, best));
        cJSON_AddBoolToObject(b, "is_micro_batch", fit_trace_b(j, best) == 0);
    } else
        cJSON_AddNullToObject(root, "best");
    cJSON_AddNumberToObject(root, "headroom", FIT_HEADROOM_PCT / 100.0);
    cJSON_AddBoolToObject(root, "interrupted", by_signal != 0);
    cJSON_AddBoolToObject(root, "failed", stopped && !by_signal); /* a trial could not run */
    cJSON_AddStringToObject(root, "trials_dir", j->dir);
    char note[400];
    accumulation_note(j, note, sizeof note);
    if (note[0])
        cJSON_AddStringToObject(root, "accumulation_note", note);
    else
        cJSON_AddNullToObject(root, "accumulation_note");
    steps_note(j, note, sizeof note);
    if (note[0])
        cJSON_AddStringToObject(root, "steps_note", note);
    else
        cJSON_AddNullToObject(root, "steps_note");
    rising_note(j, note, sizeof note);
    if (note[0])
        cJSON_AddStringToObject(root, "rising_note", note);
    else
        cJSON_AddNullToObject(root, "rising_note");
    char sn[512];
    seq_note(j, sn, sizeof sn);
    if (sn[0])
        cJSON_AddStringToObject(root, "sequence_note", sn);
    else
        cJSON_AddNullToObject(root, "sequence_note");
    char *s = cJSON_PrintUnformatted(root);
    if (s)
        jsonw_fputs(s, stdout), putchar('\n');
    free(s);
    cJSON_Delete(root);
}
