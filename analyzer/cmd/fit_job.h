/* fit_job.h — the search `vramtrace fit` runs (cmd_fit.c) and what its table and JSON show
 * (fit_report.c): the trials, each a traced run of the command at one micro-batch. */
#ifndef VT_ANALYZER_FIT_JOB_H
#define VT_ANALYZER_FIT_JOB_H

#include <limits.h>
#include <stdint.h>

#include "categories.h"

enum {
    FIT_MAX_TRIALS = 64,
    FIT_MAX_CANDIDATES = 4096,
    FIT_HEADROOM_PCT = 5,  /* a fit needs its peak at most 95 % of the card */
    FIT_SETTLE_TIMES = 16, /* a peak still rising: iterations doubled up to this many times {I} */
};

/* One trial: CMD run at micro-batch b (accumulation a, 0 without {A}). */
typedef struct fit_trial {
    long b, a;
    long a_run;         /* the accumulation it ran with: a, or 2 where a is 1 but the program
                         * accumulates (its gradients then stay alive through a forward) */
    int accum;          /* backward passes per optimizer step its trace showed (0: not known) */
    int cache;          /* ... where they were a representation cache's (replay.h cache_passes) */
    int backward;       /* a backward pass ran in it (its traces showed one) */
    int steps;          /* optimizer steps its traces showed (the most of any) */
    long iters;         /* the iterations {I} gave it (0: no {I}) */
    int rising;         /* its last step's process peak was above every earlier step's (from the
                         * second): memory still rising when it ended (fit_read.c) */
    long rose_from;     /* a fit found so after the iterations the search then gave (rerun with
                         * more until its peak stopped rising: cmd_fit.c): those; 0: none */
    int steps_unsure;   /* 1: a trace's steps were gradient frees after a backward pass, each of
                         * which may end a pass and not a step (replay.h's free_steps_first, in
                         * tensor mode): how many optimizer steps ran is not known */
    int status;         /* `vramtrace run`'s exit status */
    int oom;            /* a trace ended in an out-of-memory error */
    int fits;           /* ran to the end, no OOM, peak within the headroom */
    uint64_t peak;      /* the process-level peak, largest over the trial's traces */
    uint64_t capacity;  /* the card (or device) the trial ran on, 0 if unknown */
    cat_breakdown live; /* by category at the OOM (oom) or at the peak */
    int broke;          /* category that grew most up to the OOM; CAT_COUNT: none */
    long broke_since;   /* the smaller fit it grew from (its micro-batch); 0: none fit, broke is
                         * then the largest category */
    uint64_t requested; /* the allocation the OOM refused (not in live) */
    double seconds;
    double limit;     /* the time limit it ran under */
    int timed_out;    /* killed at the limit: in the table, the search stops */
    uint64_t out_cut; /* bytes of its output left out of its log */
    int ntraces;
    long seq_seen;     /* the sequence length its trace's token batch shows at the moment its report
                        * explains (the token batch over its micro-batch; 0: not read) */
    long seq_flag;     /* the sequence length the command's flag allows (--max_seq_length 512; 0:
                        * no flag gives it), */
    char seq_name[48]; /* ... and that flag */
    long trace_b;      /* the micro-batch its inputs show at the moment its report explains (the
                        * token batch over T, or its images; else its first forward's; 0: not read):
                        * {B} is not it where the command's flag is another batch (the optimizer's,
                        * split by the program) */
} fit_trial;

typedef struct fit_job {
    int argc;
    char **argv;                  /* CMD with placeholders */
    long b0, a0;                  /* {B=..}, {A=..} defaults, 0 if none */
    int has_a, has_i;             /* {A}, {I} seen */
    long effective, iters, max_b; /* (iters: {I}'s, raised where a trial's peak still rose) */
    double timeout;               /* --trial-timeout, 0: derived (fit_time_limit) */
    double base_s;                /* the first trial that ran to its end: its seconds, */
    long base_b;                  /* and its micro-batch, */
    long base_i;                  /* and its iterations (0: no {I}) */
    const char *card;
    char dir[PATH_MAX];
    long cand[FIT_MAX_CANDIDATES];
    int ncand;
    fit_trial trials[FIT_MAX_TRIALS];
    int ntrials;
} fit_job;

/* fit_trace_b: of the trial that fit at best, the micro-batch its trace shows where that is not
 * best ({B} is then another batch than the micro-batch); 0 when it is, or is not known */
static inline long fit_trace_b(const fit_job *j, long best)
{
    for (int i = 0; best > 0 && i < j->ntrials; i++)
        if (j->trials[i].b == best)
            return j->trials[i].trace_b && j->trials[i].trace_b != best ? j->trials[i].trace_b : 0;
    return 0;
}

/* fit_at_limit: best, the largest micro-batch that fit, is the search's last candidate (--max-b,
 * else 1024; with {A} a divisor of the effective batch) and a larger one could be: a larger one
 * was never tried, so it is a lower bound. With {A} the effective batch itself is the command's
 * own limit (accumulating 1 step); below it, --max-b's (--max-b 3 of an effective 16 had said
 * 2, "accumulate 8", where 4 fits) */
static inline int fit_at_limit(const fit_job *j, long best)
{
    return j->ncand > 0 && best == j->cand[j->ncand - 1] && (!j->has_a || best < j->effective);
}

/* fit_print_table / fit_print_json: the trials, the largest micro-batch that fits (best, with
 * its accumulation best_a), what the trials measured of gradient accumulation; stopped: the
 * search stopped early, interrupted: by a signal. */
void fit_print_table(const fit_job *j, long best, long best_a, int stopped, int interrupted);
void fit_print_json(const fit_job *j, long best, long best_a, int stopped, int interrupted);

#endif
