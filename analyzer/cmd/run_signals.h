/* run_signals.h — `vramtrace run`'s signals: what the traced program would have received
 * untraced, exactly once (run_signals.c). */
#ifndef VT_ANALYZER_RUN_SIGNALS_H
#define VT_ANALYZER_RUN_SIGNALS_H

#include <signal.h>
#include <sys/types.h>

/* forwarded: every catchable signal whose default ends or stops a process, but the faults
 * (SEGV, BUS, FPE, ILL, TRAP, ABRT, SYS: the process's own), with SIGCONT; run_signals.c */
typedef struct run_signals {
    struct sigaction old[NSIG]; /* by signal number */
    struct sigaction old_chld;  /* SIGCHLD's: the default while run waits (see run_signals_begin) */
    sigset_t old_mask;
} run_signals;

/* run_signals_begin: before the fork: the signals are blocked (one that comes before the child
 * exists waits for it) and forwarded once unblocked; SIGCHLD is the default while run waits (an
 * ignored SIGCHLD, inherited, has the kernel reap the child: its exit status lost, run had
 * returned 0 for a program that exited 3) */
void run_signals_begin(run_signals *rs);
/* run_signals_child: in the child before its exec: the handlers (SIGCHLD's too) and the mask
 * as they were */
void run_signals_child(const run_signals *rs);
/* run_signals_forward_to: in the parent: forward to pid from now on (what waited, first) */
void run_signals_forward_to(pid_t pid);
/* run_signals_reap: waitpid(pid, status, options) (options: 0 or WNOHANG), but forwarding to pid
 * stops before it is reaped, while its pid cannot be another process's (a signal that came just
 * after the reap had been sent to whatever took the pid). pid when it was reaped, 0 when it
 * runs on (WNOHANG), -1 with errno. */
pid_t run_signals_reap(pid_t pid, int *status, int options);
/* run_signals_chld_default: SIGCHLD's default from now on, the one before into *old (an ignored
 * SIGCHLD, inherited, has the kernel reap children: their exit status lost); run's and fit's
 * while they wait, *old put back in the child before its exec and after the wait */
void run_signals_chld_default(struct sigaction *old);
/* run_signals_end: the child is gone: the handlers and the mask as they were */
void run_signals_end(const run_signals *rs);

#endif
