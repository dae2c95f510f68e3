/* run_signals.c — `vramtrace run` forwards the signals a program is stopped or told things with
 * (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM) to the traced program, so that it
 * gets what it would have untraced, exactly once:
 *  - none lost: they are blocked from before the fork until the child's pid is known (a SIGTERM
 *    that came in the first 2 ms, while run read the exec's result, had been dropped: the program
 *    slept on); the child restores the mask and handlers before its exec;
 *  - none twice: a signal the terminal sent (Ctrl-C, Ctrl-\, a hangup: SI_KERNEL, to the whole
 *    foreground process group) reached the program too when it is in run's process group, so it
 *    is not sent again;
 *  - none to a pid that is no longer the program's: forwarding stops before it is reaped
 *    (run_signals_reap);
 *  - run is not killed by one and the program left running alone (SIGHUP, SIGUSR1 had ended run
 *    with exit 129, 138 and no summary while the program went on).
 * A signal sent by a process to the whole group (kill -TERM -PGID) reaches both too, and cannot
 * be told from one sent to run alone: the program gets it twice (README and docs/run.md,
 * `vramtrace run`). */
#include "run_signals.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const int sigs[RUN_SIGNALS] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM};

static volatile pid_t g_child;

static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int e = errno; /* (what run was doing when the signal came keeps its errno) */
    pid_t c = g_child;
    /* a signal the terminal sent to the whole process group reached the program too */
    if (c > 0 && !(si && si->si_code == SI_KERNEL && getpgid(c) == getpgrp()))
        kill(c, sig);
    errno = e;
}

static void mask_of(sigset_t *s)
{
    sigemptyset(s);
    for (int i = 0; i < RUN_SIGNALS; i++)
        sigaddset(s, sigs[i]);
}

void run_signals_begin(run_signals *rs)
{
    sigset_t block;
    mask_of(&block);
    sigprocmask(SIG_BLOCK, &block, &rs->old_mask);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    g_child = 0;
    for (int i = 0; i < RUN_SIGNALS; i++)
        sigaction(sigs[i], &sa, &rs->old[i]);
    run_signals_chld_default(&rs->old_chld);
}

void run_signals_chld_default(struct sigaction *old)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, old);
}

void run_signals_child(const run_signals *rs)
{
    for (int i = 0; i < RUN_SIGNALS; i++)
        sigaction(sigs[i], &rs->old[i], NULL);
    sigaction(SIGCHLD, &rs->old_chld, NULL); /* (as inherited: an ignored one stays ignored) */
    sigprocmask(SIG_SETMASK, &rs->old_mask, NULL);
}

void run_signals_forward_to(pid_t pid)
{
    g_child = pid;
    sigset_t block;
    mask_of(&block);
    sigprocmask(SIG_UNBLOCK, &block, NULL);
}

pid_t run_signals_reap(pid_t pid, int *status, int options)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (options & WNOHANG)) < 0)
        return -1;
    if (si.si_pid != pid) /* (WNOHANG: it runs on) */
        return 0;
    g_child = 0; /* it is a zombie now: the pid is still its own */
    return waitpid(pid, status, 0);
}

void run_signals_end(const run_signals *rs)
{
    g_child = 0;
    for (int i = 0; i < RUN_SIGNALS; i++)
        sigaction(sigs[i], &rs->old[i], NULL);
    sigaction(SIGCHLD, &rs->old_chld, NULL);
    sigprocmask(SIG_SETMASK, &rs->old_mask, NULL);
}
