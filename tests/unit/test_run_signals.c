/* test_run_signals.c — `vramtrace run`'s forwarding of signals (analyzer/cmd/run_signals.c):
 * a signal run gets reaches the child while it lives, and none is sent once run_signals_reap has
 * seen it exit (its pid may be another process's after the reap). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../analyzer/cmd/run_signals.h"

static volatile sig_atomic_t g_got;
static void on_usr1(int sig)
{
    (void)sig;
    g_got = 1;
}

/* child_waiting: a child that exits 3 once it has had SIGUSR1 (run's forward), 4 without it
 * after 5 s; p[1] gets one byte once its handler is in place */
static pid_t child_waiting(int p[2])
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGUSR1, on_usr1);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (write(p[1], "r", 1) != 1)
            _exit(5);
        for (int i = 0; i < 500 && !g_got; i++)
            usleep(10000);
        _exit(g_got ? 3 : 4);
    }
    return pid;
}

static void forwarded_then_reaped(void **st)
{
    (void)st;
    int p[2];
    assert_int_equal(pipe(p), 0);
    run_signals rs;
    run_signals_begin(&rs);
    pid_t pid = child_waiting(p);
    assert_true(pid > 0);
    run_signals_forward_to(pid);
    char c;
    assert_int_equal(read(p[0], &c, 1), 1);
    int status = -1;
    assert_int_equal(run_signals_reap(pid, &status, WNOHANG), 0); /* it runs on */
    kill(getpid(), SIGUSR1);                                      /* forwarded: it exits 3 */
    pid_t got;
    while ((got = run_signals_reap(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    assert_int_equal(got, pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
    run_signals_end(&rs);
    close(p[0]);
    close(p[1]);
}

/* a signal that comes once the child was reaped is sent to no one, even to a process that took
 * its pid: the pid is given out again through /proc/sys/kernel/ns_last_pid (root; skipped when
 * it cannot be written or another process took the pid first) */
static void none_after_reap(void **st)
{
    (void)st;
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "r+");
    if (!f)
        skip();
    run_signals rs;
    run_signals_begin(&rs);
    pid_t pid = fork();
    if (pid == 0)
        _exit(9);
    run_signals_forward_to(pid);
    int status = -1;
    pid_t got;
    while ((got = run_signals_reap(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    assert_int_equal(got, pid);
    assert_int_equal(WEXITSTATUS(status), 9);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t other = -1;
    for (int tries = 0; tries < 20 && other != pid; tries++) {
        if (other > 0) { /* another pid: not the test's case */
            kill(other, SIGKILL);
            waitpid(other, NULL, 0);
        }
        rewind(f);
        if (fprintf(f, "%d", (int)pid - 1) < 0 || fflush(f)) {
            fclose(f);
            run_signals_end(&rs);
            skip();
        }
        other = child_waiting(p);
        char c;
        assert_int_equal(read(p[0], &c, 1), 1);
    }
    fclose(f);
    if (other != pid) {
        kill(other, SIGKILL);
        waitpid(other, NULL, 0);
        run_signals_end(&rs);
        skip();
    }
    kill(getpid(), SIGUSR1); /* before run_signals_end: the forwarding is still in place */
    usleep(50000);
    kill(other, SIGTERM); /* it would have exited 3 on its own had it got the USR1 */
    waitpid(other, &status, 0);
    assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    run_signals_end(&rs);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forwarded_then_reaped),
        cmocka_unit_test(none_after_reap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
