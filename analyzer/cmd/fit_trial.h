/* fit_trial.h — one `vramtrace fit` trial as a process (fit_trial.c): run in a process group of
 * its own with a time limit, its output kept as a log of bounded size (head and tail), and the
 * limit a trial gets when none is given. cmd_fit.c decides what the trials mean. */
#ifndef VT_FIT_TRIAL_H
#define VT_FIT_TRIAL_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/* what the log of one trial keeps: its first and its last bytes, the middle cut (and said) */
#define FIT_LOG_HEAD (512u << 10)
#define FIT_LOG_TAIL (512u << 10)
#define FIT_FIRST_LIMIT_S 3600.0 /* a trial's limit until one trial has run to its end */
#define FIT_MIN_LIMIT_S 120.0    /* the least a derived limit gives */
#define FIT_LIMIT_FACTOR 10.0    /* ... else this many times the measured trial, scaled by B */
#define FIT_KILL_GRACE_S 5.0     /* SIGTERM to the group, then SIGKILL this much later */

typedef struct fit_proc {
    double seconds;   /* wall time from start to exit */
    int status;       /* exit status (128+N when killed by signal N) */
    int timed_out;    /* killed at the time limit */
    uint64_t out;     /* bytes the trial wrote to stdout + stderr */
    uint64_t out_cut; /* bytes of them left out of the log */
    int log_failed;   /* -1 returned because the log could not be created (errno why) */
} fit_proc;

/* fit_proc_run: runs argv (argv[0] a path, execv) with stdin /dev/null and stdout + stderr read
 * through a pipe into `log` (at most FIT_LOG_HEAD + FIT_LOG_TAIL bytes of it, then a line saying
 * how much was cut, then the tail). A trial still running after limit_s seconds (0: no limit)
 * gets SIGTERM, with all of its process group, and SIGKILL FIT_KILL_GRACE_S later. When *stop
 * becomes set (Ctrl-C; the caller's handler forwards the signal to *running), the group is
 * killed if it has not ended 10 s later. *running holds the trial's pid while it runs.
 * The log is made anew, 0600, never through a symbolic link (an old file or link of that name
 * removed first, then created O_EXCL | O_NOFOLLOW: an existing output.log linked elsewhere had
 * been followed and its target overwritten). Returns 0, or -1 with errno when the log could not
 * be created (out->log_failed), the trial could not be started or its end waited for (its status
 * unknown). */
int fit_proc_run(char *const argv[], const char *log, double limit_s, volatile sig_atomic_t *stop,
                 volatile pid_t *running, fit_proc *out);

/* fit_time_limit: a trial's limit in seconds: `given` when > 0 (--trial-timeout); else, until
 * a trial ran to its end (base_s 0), FIT_FIRST_LIMIT_S; then FIT_LIMIT_FACTOR times that
 * trial's seconds, times b / base_b when b is larger (bigger batches take longer), at least
 * FIT_MIN_LIMIT_S. */
double fit_time_limit(double given, double base_s, long base_b, long b);

/* fit_is_trace_name: "*.vt". fit_clear_traces: removes the traces an earlier `fit --dir DIR`
 * left in a trial's directory, so that only this trial's are read. */
int fit_is_trace_name(const char *name);
void fit_clear_traces(const char *dir);
/* fit_log_cannot_run: the reason `vramtrace run` gave in a trial's log for a command it could
 * not start ("cannot run CMD: REASON", its line without "vramtrace run: ", escaped for the
 * terminal) into out; 1 when the log has that line, else 0 (out ""). */
int fit_log_cannot_run(const char *log, char *out, size_t n);

#endif
