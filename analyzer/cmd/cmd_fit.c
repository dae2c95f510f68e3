/* cmd_fit.c — `vramtrace fit [options] -- CMD ... {B} ... [{A}]`: the largest micro-batch that
 * fits, measured: each trial is `vramtrace run` (this program, executed again) of CMD with {B}
 * (and {A}, {I}) filled in (fit_subst.c), run with a time limit and a bounded log (fit_trial.c),
 * its traces replayed (replay.c); doubling, then bisecting; a table. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cards.h"
#include "cli.h"
#include "commands.h"
#include "fit_job.h"
#include "fit_read.h"
#include "fit_subst.h"
#include "fit_trial.h"
#include "notes.h"
#include "replay.h"
#include "report.h"

enum {
    OPT_CARD = CLI_LONG_ONLY,
    OPT_ITERS,
    OPT_MAX_B,
    OPT_JSON,
    OPT_DIR,
    OPT_EFFECTIVE,
    OPT_TIMEOUT
};
static const cli_opt fit_opts[] = {
    {OPT_CARD, "card", "SPEC",
     "emulate a card for every trial (12GiB, 12288MiB, a preset; see\n"
     "below); default: the traced device's memory"},
    {OPT_ITERS, "iters", "N", "value of {I} in CMD (e.g. --max_iters={I}; default 3)"},
    {OPT_MAX_B, "max-b", "N", "largest micro-batch tried (default 1024, or B*A with {A})"},
    {OPT_EFFECTIVE, "effective", "N",
     "effective batch B*A kept with {A} (default: the defaults'\n"
     "product, {B=16} ... {A=32} -> 512)"},
    {OPT_DIR, "dir", "DIR",
     "where the trials' traces and logs go (default: a new directory\n"
     "in $TMPDIR, kept; each log keeps its first and last 512 KiB)"},
    {OPT_TIMEOUT, "trial-timeout", "SECONDS",
     "kill a trial (its whole process group) that runs longer (default:\n"
     "1 hour until a trial ran to its end, then 10x that trial's time,\n"
     "scaled by the micro-batch, at least 120 s)"},
    {OPT_JSON, "json", NULL, "one JSON document on stdout instead of the table"},
    {'h', "help", NULL, "this text"},
    {0}};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: vramtrace fit [options] -- CMD ARGS... {B} ... [{A}] [{I}]\n\n"
            "The largest micro-batch that fits, measured: runs CMD under `vramtrace run` with {B}\n"
            "replaced by candidate micro-batches (a short traced run each; start at {B}'s default\n"
            "as in {B=16}, else 1; double while one fits, halve while one does not, then\n"
            "bisect) and prints each trial (micro-batch, measured peak, fits or the category\n"
            "that grew most when it did not, seconds) and the largest that fits with %d %%\n"
            "headroom. With {A} (or {A=32}) the accumulation steps keep the effective batch:\n"
            "candidates divide B*A. {I}: --iters.\n"
            "Progress on stderr; Ctrl-C stops the search and prints the table so far.\n\n",
            FIT_HEADROOM_PCT);
    cli_print_options(out, fit_opts);
    fprintf(out,
            "card presets: %s\n"
            "example: vramtrace fit --card 12GiB -- python train.py --batch_size={B=16} \\\n"
            "           --gradient_accumulation_steps={A=32} --max_iters={I}\n"
            "exit: 0 a micro-batch fits, 1 none fits, 2 usage error, command failed or "
            "interrupted\n",
            card_presets_help());
}

static volatile sig_atomic_t g_stop;
static volatile pid_t g_trial;
static void on_signal(int sig)
{
    g_stop = 1;
    if (g_trial > 0)
        kill(g_trial, sig);
}

/* read_traces: replays every *.vt in dir into t (peak, OOM, capacity, categories). Returns
 * the number of traces read; an unreadable one is reported and skipped. */
/* run_trial: one traced run of the command at micro-batch b; fills t. Returns 0, or -1 when
 * it could not run or failed without running out of memory (reported on stderr). */
static int run_trial(fit_job *j, long b, fit_trial *t)
{
    memset(t, 0, sizeof *t);
    t->b = b;
    t->iters = j->has_i ? j->iters : 0;
    t->a = j->has_a ? j->effective / b : 0;
    /* the program accumulates (its {A} default is more than 1): a trial keeps at least two
     * micro-steps per optimizer step, so that it measures the gradients alive through the next
     * micro-batch's forward, as the real run holds them */
    t->a_run = t->a == 1 && j->a0 > 1 ? 2 : t->a;
    t->broke = CAT_COUNT;
    char tdir[PATH_MAX], out[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(tdir, sizeof tdir, "%.*s/b%ld", PATH_MAX - 32, j->dir, b);
    snprintf(out, sizeof out, "%s/trace.%%p.vt", tdir);
    snprintf(log, sizeof log, "%s/output.log", tdir);
    if (mkdir(tdir, 0755) && errno != EEXIST) {
        fprintf(stderr, "vramtrace fit: cannot create %s: %s\n", tdir, strerror(errno));
        return -1;
    }
    struct stat ds; /* (a link to another directory: its traces had been deleted through it) */
    if (lstat(tdir, &ds) || !S_ISDIR(ds.st_mode) || ds.st_uid != geteuid()) {
        fprintf(stderr,
                "vramtrace fit: %s is not a directory of yours (a symbolic link, or another "
                "user's): refused; remove it or give another --dir\n",
                tdir);
        return -1;
    }
    fit_clear_traces(tdir);
    char **args = calloc((size_t)j->argc + 10, sizeof *args);
    if (!args)
        return -1;
    int n = 0, bad = 0;
    args[n++] = "/proc/self/exe"; /* this vramtrace's own `run` */
    args[n++] = "run";
    args[n++] = "-q";
    args[n++] = "-o";
    args[n++] = out;
    if (j->card) {
        args[n++] = "--card";
        args[n++] = (char *)j->card;
    }
    args[n++] = "--";
    int first = n;
    for (int i = 0; i < j->argc; i++)
        bad |= !(args[n++] = fit_subst(j->argv[i], b, t->a_run, j->iters));
    if (!bad)
        fit_seq_flag(n - first, args + first, t);
    t->limit = fit_time_limit(j->timeout, j->base_s, j->base_b, b);
    if (!j->timeout && j->base_s && j->base_i && j->iters > j->base_i) /* (more steps: longer) */
        t->limit *= (double)j->iters / (double)j->base_i;
    fprintf(stderr, "vramtrace fit: trying micro-batch %ld", b);
    if (j->has_a)
        fprintf(stderr, " x %ld accumulation steps", t->a_run);
    fprintf(stderr, " (time limit %.0f s) ...\n", t->limit);
    fit_proc pr;
    int rc = bad ? (errno = ENOMEM, -1) : fit_proc_run(args, log, t->limit, &g_stop, &g_trial, &pr);
    int err = errno;
    for (int i = first; i < n; i++)
        free(args[i]);
    free(args);
    if (rc < 0 && pr.log_failed) {
        fprintf(stderr, "vramtrace fit: cannot create %s: %s\n", log, strerror(err));
        return -1;
    }
    if (rc < 0) {
        fprintf(stderr, "vramtrace fit: cannot start the trial or wait for its end: %s\n",
                strerror(err));
        return -1;
    }
    t->seconds = pr.seconds;
    t->status = pr.status;
    t->timed_out = pr.timed_out;
    t->out_cut = pr.out_cut;
    if (pr.out_cut)
        fprintf(stderr,
                "vramtrace fit: micro-batch %ld printed %.1f MiB: its log keeps the first and "
                "last 512 KiB (%.1f MiB cut)\n",
                b, (double)pr.out / 1048576.0, (double)pr.out_cut / 1048576.0);
    if (t->timed_out) {
        fprintf(stderr,
                "vramtrace fit: micro-batch %ld did not finish within %.0f s: stopped (its "
                "process group killed); its output: %s; --trial-timeout SECONDS gives more\n",
                b, t->limit, log);
        return -1;
    }
    if (g_stop)
        return -1;
    fit_read_traces(tdir, t);
    char why[2048];
    if (!t->oom && !t->ntraces && (t->status == 126 || t->status == 127) &&
        fit_log_cannot_run(log, why, sizeof why)) { /* (run could not start it: its reason) */
        fprintf(stderr,
                "vramtrace fit: the command could not be run at micro-batch %ld (exit %d): %s; "
                "its output: %s\n",
                b, t->status, why, log);
        return -1;
    }
    if (!t->oom && t->status) {
        fprintf(stderr,
                "vramtrace fit: the command failed at micro-batch %ld (exit %d) without "
                "running out of GPU memory; its output: %s\n",
                b, t->status, log);
        return -1;
    }
    if (!t->ntraces) {
        fprintf(stderr,
                "vramtrace fit: the command wrote no trace at micro-batch %ld (no CUDA "
                "allocation?); its output: %s\n",
                b, log);
        return -1;
    }
    uint64_t limit = t->capacity / 100 * (100 - FIT_HEADROOM_PCT);
    t->fits = !t->oom && (!t->capacity || t->peak <= limit);
    if (!t->oom && !j->base_s) { /* ran to its end: later trials' limits come from it */
        j->base_s = t->seconds > 0.001 ? t->seconds : 0.001;
        j->base_b = b;
        j->base_i = j->iters;
    }
    return 0;
}

/* trial_at: the trial of candidate k (run once, then remembered). Returns it, or NULL. */
static fit_trial *trial_at(fit_job *j, int k)
{
    for (int i = 0; i < j->ntrials; i++)
        if (j->trials[i].b == j->cand[k])
            return &j->trials[i];
    if (j->ntrials >= FIT_MAX_TRIALS || g_stop)
        return NULL;
    fit_trial *t = &j->trials[j->ntrials];
    int rc = run_trial(j, j->cand[k], t);
    if (rc < 0 && !t->timed_out)
        return NULL;
    /* a fit whose peak still rose at its last step (memory carried from step to step: a
     * Transformer-XL's memory of past segments fills up over its first steps, and its 2-step
     * trials had found 32 to fit 8 GiB where 32 ran out of memory in its third step): run again
     * with twice the iterations until its peak stops rising; the trials after it keep them.
     * Still rising at FIT_SETTLE_TIMES times the iterations asked: not a fit. */
    long from = j->iters;
    while (rc == 0 && t->fits && t->rising && j->has_i && j->iters < from * FIT_SETTLE_TIMES &&
           j->iters <= 500000 && !g_stop) {
        fprintf(stderr,
                "vramtrace fit: micro-batch %ld: its peak still rose at its last step (%ld "
                "iterations): again with %ld\n",
                t->b, j->iters, 2 * j->iters);
        j->iters *= 2;
        rc = run_trial(j, j->cand[k], t);
        t->rose_from = from;
    }
    if (rc == 0 && t->fits && t->rising && j->has_i)
        t->fits = 0; /* (its verdict says why) */
    j->ntrials++;    /* a trial that timed out is in the table; the search stops there */
    if (rc < 0)
        return NULL;
    char peak[32];
    fprintf(stderr, "vramtrace fit: micro-batch %ld: %s, peak %s (%.1f s)\n", t->b,
            t->fits  ? "fits"
            : t->oom ? "out of memory"
                     : "no headroom",
            card_format_bytes(t->peak, peak, sizeof peak), t->seconds);
    return t;
}

/* what_broke: the category of t's live bytes that grew most since the largest smaller fit among
 * every trial of the search (one tried later too: the first trial, 16, had been told "no smaller
 * fit" beside 8, 10 and 11 that fit) */
static void what_broke(const fit_job *j, fit_trial *t)
{
    const fit_trial *base = NULL;
    for (int i = 0; i < j->ntrials; i++)
        if (j->trials[i].fits && j->trials[i].b < t->b && (!base || j->trials[i].b > base->b))
            base = &j->trials[i];
    uint64_t best = 0;
    t->broke_since = base ? base->b : 0;
    for (int c = 0; c < CAT_COUNT && !t->fits; c++) {
        uint64_t was = base ? base->live.bytes[c] : 0;
        uint64_t grew = t->live.bytes[c] > was ? t->live.bytes[c] - was : 0;
        if (c != CAT_CACHE && grew > best)
            best = grew, t->broke = c;
    }
}

/* search: start at b0 (else 1), double while it fits, halve while it does not, bisect
 * between. Returns the index of the largest candidate that fits, -1 if none; *failed = 1
 * when a trial could not run (or Ctrl-C). */
static int search(fit_job *j, int *failed)
{
    int lo = -1, hi = j->ncand, k = 0;
    for (int i = 0; i < j->ncand; i++)
        if (j->cand[i] <= (j->b0 ? j->b0 : 1))
            k = i;
    fit_trial *t = trial_at(j, k);
    if (!t)
        return *failed = 1, -1;
    if (t->fits) {
        lo = k;
        while (lo < j->ncand - 1) {
            int next = lo + 1;
            while (next < j->ncand - 1 && j->cand[next] < 2 * j->cand[lo])
                next++;
            if (!(t = trial_at(j, next)))
                return *failed = 1, lo;
            if (!t->fits) {
                hi = next;
                break;
            }
            lo = next;
        }
    } else {
        hi = k;
        while (hi > 0) {
            int next = hi - 1;
            while (next > 0 && j->cand[next] > j->cand[hi] / 2)
                next--;
            if (!(t = trial_at(j, next)))
                return *failed = 1, -1;
            if (t->fits) {
                lo = next;
                break;
            }
            hi = next;
        }
    }
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (!(t = trial_at(j, mid)))
            return *failed = 1, lo;
        if (t->fits)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int by_batch(const void *x, const void *y)
{
    const fit_trial *a = x, *b = y;
    return (a->b > b->b) - (a->b < b->b);
}

/* parse_long: a whole number in [min, max] for option opt, or -1 after an error message. */
static long parse_long(const char *opt, const char *s, long min, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || end == s || v < min || v > max) {
        fprintf(stderr,
                "vramtrace fit: %s %s: expected a number from %ld to %ld (see vramtrace fit "
                "--help)\n",
                opt, s, min, max);
        return -1;
    }
    return v;
}

/* no_iters_said: no {I} in the command: every trial runs it in full, said with the command's
 * own iteration flag where it has one of the usual spellings (a ResNet script's --steps 1 had
 * been told "e.g. --max_iters={I}", nanoGPT's) */
static void no_iters_said(const fit_job *j)
{
    static const char *const flags[] = {
        "--steps", "--max_iters", "--max-iters", "--max_steps",       "--max-steps",
        "--iters", "--num_steps", "--num-steps", "--num_train_steps", NULL};
    const char *flag = NULL;
    for (int i = 0; i < j->argc && !flag; i++)
        for (int k = 0; flags[k] && !flag; k++) {
            size_t n = strlen(flags[k]);
            if (!strncmp(j->argv[i], flags[k], n) && (!j->argv[i][n] || j->argv[i][n] == '='))
                flag = flags[k];
        }
    if (flag)
        fprintf(stderr,
                "vramtrace fit: no {I} in the command: every trial runs it in full "
                "(mark its iteration count, %s {I}, to keep trials short)\n",
                flag);
    else
        fprintf(stderr, "vramtrace fit: no {I} in the command: every trial runs it in full "
                        "(mark the program's iteration count with {I} to keep trials short)\n");
}

int cmd_fit(int argc, char **argv)
{
    static fit_job job;
    fit_job *j = &job;
    memset(j, 0, sizeof *j);
    const char *dir = NULL;
    int json = 0, k;
    j->iters = 3; /* (the third step's peak against the second's: memory still rising) */
    cli p;
    cli_init(&p, "fit", fit_opts, CLI_STOP_AT_OPERAND);
    while ((k = cli_next(&p, argc, argv)) != CLI_END) {
        switch (k) {
        case 'h':
            usage(stdout);
            return VT_EXIT_OK;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_DIR:
            dir = p.arg;
            break;
        case OPT_CARD:
            j->card = p.arg;
            break;
        case OPT_ITERS:
            if ((j->iters = parse_long("--iters", p.arg, 1, 1000000)) < 0)
                return VT_EXIT_USAGE;
            break;
        case OPT_MAX_B:
            if ((j->max_b = parse_long("--max-b", p.arg, 1, FIT_MAX_CANDIDATES * 64L)) < 0)
                return VT_EXIT_USAGE;
            break;
        case OPT_EFFECTIVE:
            if ((j->effective = parse_long("--effective", p.arg, 1, FIT_DEFAULT_MAX)) < 0)
                return VT_EXIT_USAGE;
            break;
        case OPT_TIMEOUT: {
            long v = parse_long("--trial-timeout", p.arg, 1, 7L * 24 * 3600);
            if (v < 0)
                return VT_EXIT_USAGE;
            j->timeout = (double)v;
            break;
        }
        default:
            return VT_EXIT_USAGE;
        }
    }
    j->argc = argc - p.optind;
    j->argv = argv + p.optind;
    fit_marks m = {0};
    for (int i = 0; i < j->argc; i++) {
        char err[512];
        if (fit_subst_scan(j->argv[i], &m, err, sizeof err) < 0) {
            notes_error("fit", err);
            return VT_EXIT_USAGE;
        }
    }
    j->b0 = m.b0, j->a0 = m.a0, j->has_a = m.has_a, j->has_i = m.has_i;
    if (!j->argc || !m.has_b) {
        fprintf(stderr,
                "vramtrace fit: %s (usage: vramtrace fit [options] -- CMD ... {B} ...; "
                "e.g. -- python train.py --batch_size={B})\n",
                j->argc ? "no {B} in the command: it marks where the micro-batch goes"
                        : "no command given");
        return VT_EXIT_USAGE;
    }
    if (j->card) {
        card_spec spec;
        char err[256];
        if (card_parse(j->card, &spec, err, sizeof err) < 0) {
            fprintf(stderr, "vramtrace fit: --card: %s\n", err);
            return VT_EXIT_USAGE;
        }
    }
    if (j->has_a && !j->effective && j->b0 && j->a0) {
        j->effective = j->b0 * j->a0; /* each at most 2^30: no overflow */
        if (j->effective > FIT_DEFAULT_MAX) {
            fprintf(stderr,
                    "vramtrace fit: {B=%ld} x {A=%ld}: an effective batch of %ld, over %ld (give "
                    "--effective N)\n",
                    j->b0, j->a0, j->effective, FIT_DEFAULT_MAX);
            return VT_EXIT_USAGE;
        }
    }
    if (j->has_a && !j->effective) {
        fprintf(stderr, "vramtrace fit: {A} needs the effective batch to keep: give --effective N, "
                        "or the defaults as {B=16} and {A=32}\n");
        return VT_EXIT_USAGE;
    }
    if (!j->has_a && j->effective)
        fprintf(stderr, "vramtrace fit: --effective ignored: no {A} in the command\n");
    if (!j->has_i)
        no_iters_said(j);
    long max_b = j->max_b ? j->max_b : j->has_a ? j->effective : 1024;
    for (long b = 1; b <= max_b && j->ncand < FIT_MAX_CANDIDATES; b++)
        if (!j->has_a || j->effective % b == 0)
            j->cand[j->ncand++] = b;
    const char *tmp = getenv("TMPDIR");
    if (dir) {
        snprintf(j->dir, sizeof j->dir, "%s", dir);
        struct stat st;
        if (mkdir(j->dir, 0755) && errno != EEXIST) {
            fprintf(stderr, "vramtrace fit: cannot create %s: %s\n", j->dir, strerror(errno));
            return VT_EXIT_USAGE;
        }
        if (stat(j->dir, &st) || !S_ISDIR(st.st_mode)) { /* a file there: no trial in it */
            fprintf(stderr, "vramtrace fit: --dir %s: %s\n", j->dir, strerror(ENOTDIR));
            return VT_EXIT_USAGE;
        }
    } else {
        snprintf(j->dir, sizeof j->dir, "%s/vramtrace-fit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(j->dir)) {
            fprintf(stderr, "vramtrace fit: cannot create %s: %s (set TMPDIR or give --dir)\n",
                    j->dir, strerror(errno));
            return VT_EXIT_USAGE;
        }
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_stop = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int failed = 0;
    int lo = search(j, &failed);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    int interrupted = g_stop != 0;
    long best = lo >= 0 ? j->cand[lo] : 0;
    long best_a = best && j->has_a ? j->effective / best : 0;
    qsort(j->trials, (size_t)j->ntrials, sizeof j->trials[0], by_batch);
    for (int i = 0; i < j->ntrials; i++) /* (against every trial, the later ones too) */
        what_broke(j, &j->trials[i]);
    if (json)
        fit_print_json(j, best, best_a, interrupted || failed, g_stop != 0);
    else
        fit_print_table(j, best, best_a, interrupted || failed, g_stop != 0);
    if (failed || interrupted)
        return VT_EXIT_USAGE;
    return best ? VT_EXIT_OK : VT_EXIT_FINDINGS;
}
