/* run_signals.c — `vramtrace run` forwards to the traced program every catchable signal whose
 * default would end or stop it (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
 * SIGPROF, SIGVTALRM, SIGIO, SIGPWR, SIGXCPU, SIGXFSZ, SIGSTKFLT, the real-time signals, and the
 * stops SIGTSTP, SIGTTIN, SIGTTOU), so that it gets what it would have untraced, exactly once:
 *  - none lost: they are blocked from before the fork until the child's pid is known (a SIGTERM
 *    that came in the first 2 ms, while run read the exec's result, had been dropped: the program
 *    slept on); the child restores the mask and handlers before its exec;
 *  - none twice: a signal the terminal sent (Ctrl-C, Ctrl-\, Ctrl-Z, a hangup: SI_KERNEL, to the
 *    whole foreground process group) reached the program too when it is in run's process group,
 *    so it is not sent again;
 *  - none that is run's own: SIGXCPU, SIGXFSZ, SIGTTIN and SIGTTOU the kernel sent run (its own
 *    limits, its own terminal access) are not the program's;
 *  - none to a pid that is no longer the program's: forwarding stops before it is reaped
 *    (run_signals_reap);
 *  - run is not killed by one and the program left running alone (SIGHUP, SIGUSR1 had ended run
 *    with exit 129, 138 and no summary while the program went on; SIGPROF, SIGVTALRM, SIGIO,
 *    SIGPWR, SIGXCPU, SIGXFSZ and the real-time signals until 2026-12-06);
 *  - a stop stops both: run forwards it, then stops itself as the signal's default would (a
 *    SIGTSTP to run had stopped run alone, the program running on); a SIGCONT after a stop run
 *    forwarded is forwarded too (one to the whole group, as a shell's `fg`, is not sent again).
 * A signal sent by a process to the whole group (kill -TERM -PGID) reaches both too, and cannot
 * be told from one sent to run alone: the program gets it twice (README and docs/run.md,
 * `vramtrace run`). */
#include "run_signals.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t g_child;
static volatile sig_atomic_t g_stopped; /* run forwarded a stop: a SIGCONT to run goes on too */

/* forwarded: whether run forwards sig */
static int forwarded(int sig)
{
    static const int fixed[] = {
        SIGHUP,    SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGPROF, SIGVTALRM,
        SIGIO,     SIGPWR, SIGXCPU, SIGXFSZ, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT,
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i] == sig)
            return 1;
    return sig >= SIGRTMIN && sig <= SIGRTMAX;
}

static int is_stop(int sig)
{
    return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* stop_self: run stops as sig's default would have stopped it (async-signal-safe) */
static void stop_self(int sig, const struct sigaction *mine)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t one, old;
    sigemptyset(&one);
    sigaddset(&one, sig);
    kill(getpid(), sig);
    sigprocmask(SIG_UNBLOCK, &one, &old); /* stopped here until a SIGCONT */
    sigprocmask(SIG_SETMASK, &old, NULL);
    sigaction(sig, mine, NULL);
}

static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int e = errno; /* (what run was doing when the signal came keeps its errno) */
    pid_t c = g_child;
    /* a signal the terminal sent to the whole process group reached the program too */
    int group = si && si->si_code == SI_KERNEL && c > 0 && getpgid(c) == getpgrp();
    /* sent by a process (kill, sigqueue), not the kernel's for run itself */
    int by_process = si && si->si_code <= 0 && si->si_pid != getpid();
    int own = (sig == SIGXCPU || sig == SIGXFSZ || sig == SIGTTIN || sig == SIGTTOU) && !by_process;
    if (sig == SIGCONT) {
        if (g_stopped && c > 0)
            kill(c, SIGCONT);
        g_stopped = 0;
    } else if (c > 0 && !group && !own) {
        kill(c, sig);
        g_stopped |= is_stop(sig);
    }
    if (is_stop(sig)) {
        struct sigaction mine;
        sigaction(sig, NULL, &mine);
        stop_self(sig, &mine);
    }
    errno = e;
}

static void mask_of(sigset_t *s)
{
    sigemptyset(s);
    for (int i = 1; i < NSIG; i++)
        if (forwarded(i))
            sigaddset(s, i);
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
    g_stopped = 0;
    for (int i = 1; i < NSIG; i++)
        if (forwarded(i))
            sigaction(i, &sa, &rs->old[i]);
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
    for (int i = 1; i < NSIG; i++)
        if (forwarded(i))
            sigaction(i, &rs->old[i], NULL);
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
    for (int i = 1; i < NSIG; i++)
        if (forwarded(i))
            sigaction(i, &rs->old[i], NULL);
    sigaction(SIGCHLD, &rs->old_chld, NULL);
    sigprocmask(SIG_SETMASK, &rs->old_mask, NULL);
}
