/* fit_read.c — what `vramtrace fit` reads of one trial: its traces replayed (the peak, the
 * out-of-memory error, the steps and passes, the batch and the sequences its token batch shows)
 * and the sequence length its command line gives (fit_read.h). */
#include "fit_read.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fit_trial.h"
#include "notes.h"
#include "replay.h"
#include "report.h"

/* batch_now: the micro-batch a training trace shows at the moment its report explains (the
 * tensors' peak, else the process peak: report_batch_now), else its first forward's; 0 where
 * neither is read. (The first forward's alone had told a micro-batch ramp, 4 -> 16 at
 * --batch_size 16, that {B} was not the micro-batch, where its report says it is.) */
static long batch_now(const replay_result *r, long b)
{
    const infer_result *ir = &r->inferred;
    const infer_value *ib = &ir->v[INFER_batch_size], *iT = &ir->v[INFER_block_size];
    uint64_t tokens = 0, images = 0;
    report_batch_now(r, r->tensor_mode && r->at_tensors.n ? &r->at_tensors : &r->at_peak, ir,
                     &tokens, &images);
    /* the first forward's batch {B}, the moment's tokens a multiple of it: its sequences grew,
     * not its batch (a sequence-length warm-up, 64 then 256 tokens, at --batch_size 6 had been
     * "not the micro-batch: ... its trace's forwards took a batch of 24": 6·256 over 64) */
    if (!images && b > 0 && ib->known && ib->value == b && tokens && tokens % (uint64_t)b == 0)
        return b;
    uint64_t T = iT->known && iT->value > 0 ? (uint64_t)iT->value : 0;
    if (images)
        return (long)images;
    if (tokens && T && tokens % T == 0)
        return (long)(tokens / T);
    return ib->known && ib->value > 0 ? (long)ib->value : 0;
}

/* seq_now: the sequence length a training trace's token batch shows at the moment its report
 * explains, over its first forward's micro-batch (dynamic padding: T changes from step to step,
 * B does not); 0 where not read */
static long seq_now(const replay_result *r)
{
    const infer_value *ib = &r->inferred.v[INFER_batch_size];
    uint64_t tokens = 0, images = 0;
    report_batch_now(r, r->tensor_mode && r->at_tensors.n ? &r->at_tensors : &r->at_peak,
                     &r->inferred, &tokens, &images);
    if (images || !tokens || !ib->known || ib->value <= 0 || r->inferred.tokens_eval ||
        tokens % (uint64_t)ib->value)
        return 0;
    return (long)(tokens / (uint64_t)ib->value);
}

/* fit_seq_flag (fit_read.h): the sequence length the trial's command line gives (its script and
 * flags) by a flag vramtrace reads as T (--max_seq_length 512), into t; none: 0 */
void fit_seq_flag(int argc, char *const *argv, fit_trial *t)
{
    nano_config *c = malloc(sizeof *c);
    t->seq_flag = 0, t->seq_name[0] = '\0';
    if (!c)
        return;
    config_init(c);
    config_apply_flags(c, argc, (const char *const *)argv);
    const config_value *v = &c->v[CFG_block_size];
    if (v->src == CONFIG_SRC_ARG && v->flag[0] && v->i > 0) {
        t->seq_flag = (long)v->i;
        snprintf(t->seq_name, sizeof t->seq_name, "%s", v->flag);
    }
    free(c);
}

int fit_read_traces(const char *dir, fit_trial *t)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    replay_result *r = calloc(1, sizeof *r);
    while (r && (e = readdir(d))) {
        if (!fit_is_trace_name(e->d_name))
            continue;
        char path[PATH_MAX + 256], err[512] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (replay_file(path, r, err, sizeof err)) {
            char said[sizeof err + 16];
            snprintf(said, sizeof said, "%s (skipped)", err);
            notes_error("fit", said);
        } else {
            t->ntraces++;
            if ((int)r->accum > t->accum)
                t->accum = (int)r->accum;
            if ((int)r->cache_passes > t->cache)
                t->cache = (int)r->cache_passes;
            t->backward |= r->backward_passes > 0;
            if (!t->trace_b && r->has_inferred && !r->inferred.tokens_eval)
                t->trace_b = batch_now(r, t->b);
            long seq = r->has_inferred ? seq_now(r) : 0;
            if (seq > t->seq_seen && !r->has_oom) /* (the longest any of its traces reached) */
                t->seq_seen = seq;
            if ((int)r->iterations > t->steps)
                t->steps = (int)r->iterations;
            t->steps_unsure |= replay_steps_unsure(r); /* (as report_json's) */
            const growth *g = &r->growth;              /* (two steps past the first: growth.h) */
            t->rising |=
                !r->has_oom && g->steps >= 3 && g->last_peak_device > g->prev_max_peak_device;
            if (r->peak_process >= t->peak && !t->oom) {
                t->peak = r->peak_process;
                t->live = r->at_peak.by_cat;
            }
            if (r->has_oom && !t->oom) {
                t->oom = 1;
                t->requested = r->oom_requested;
                t->live = r->at_oom.by_cat;
                t->capacity = r->oom_capacity;
            }
            const tables_config *c = tables_config_get(r->t);
            const tables_device *dev = tables_device_get(r->t, 0);
            if (!t->capacity)
                t->capacity = c && c->card_bytes ? c->card_bytes : dev ? dev->total_bytes : 0;
        }
        replay_free(r);
        memset(r, 0, sizeof *r);
    }
    free(r);
    closedir(d);
    return t->ntraces;
}
