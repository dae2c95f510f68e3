/* test_fit_trial.c — `vramtrace fit`'s trial process (analyzer/cmd/fit_trial.c): a command
 * that prints 8 MiB leaves a log of its first and last 512 KiB with one line saying how much
 * was cut; one that hangs (and ignores SIGTERM, and leaves a child behind) is killed with its
 * process group at its limit; the derived limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fit_trial.h"

static volatile sig_atomic_t g_stop;
static volatile pid_t g_running;
static char g_log[] = "/tmp/vt-fit-trial.XXXXXX";

static int make_log(void **state)
{
    (void)state;
    int fd = mkstemp(g_log);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int remove_log(void **state)
{
    (void)state;
    unlink(g_log);
    return 0;
}

static char *read_log(size_t *len)
{
    FILE *f = fopen(g_log, "rb");
    assert_non_null(f);
    static char buf[4 << 20];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void loud_trial_log_is_capped(void **state)
{
    (void)state;
    /* 8 MiB: "a" * 4 MiB then "z" * 4 MiB, then one last line */
    char *argv[] = {"/bin/sh", "-c",
                    "head -c 4194304 /dev/zero | tr '\\0' a; head -c 4194304 /dev/zero | "
                    "tr '\\0' z; echo; echo the-end >&2; exit 3",
                    NULL};
    fit_proc p;
    assert_int_equal(fit_proc_run(argv, g_log, 60, &g_stop, &g_running, &p), 0);
    assert_int_equal(p.status, 3);
    assert_false(p.timed_out);
    assert_int_equal(p.out, 8388608 + 1 + 8);
    assert_int_equal(p.out_cut, p.out - FIT_LOG_HEAD - FIT_LOG_TAIL);
    size_t len;
    char *b = read_log(&len);
    assert_true(len < FIT_LOG_HEAD + FIT_LOG_TAIL + 256);
    assert_true(b[0] == 'a' && b[FIT_LOG_HEAD - 1] == 'a');
    char want[128];
    snprintf(want, sizeof want, "[vramtrace fit: %llu bytes of output cut here",
             (unsigned long long)p.out_cut);
    assert_memory_equal(b + FIT_LOG_HEAD + 1, want, strlen(want));
    assert_memory_equal(b + len - 9, "\nthe-end\n", 9);
    assert_true(b[len - 10] == 'z');
    assert_int_equal(g_running, 0);
}

static void quiet_trial_log_whole(void **state)
{
    (void)state;
    char *argv[] = {"/bin/sh", "-c", "echo out; echo err >&2; read x; echo \"stdin:$x.\"", NULL};
    fit_proc p;
    assert_int_equal(fit_proc_run(argv, g_log, 0, &g_stop, &g_running, &p), 0);
    assert_int_equal(p.status, 0);
    assert_int_equal(p.out_cut, 0);
    size_t len;
    char *b = read_log(&len);
    assert_int_equal(len, p.out);
    assert_memory_equal(b, "out\nerr\nstdin:.\n", len); /* stdin is /dev/null: no wait */
}

static void hanging_trial_killed_with_its_group(void **state)
{
    (void)state;
    /* ignores SIGTERM, and a child of it would outlive it: the group is killed */
    /* a path of this process alone: other checkouts run this test at the same time */
    char pidfile[64], script[256];
    snprintf(pidfile, sizeof pidfile, "/tmp/vt-fit-trial-child.%d.pid", (int)getpid());
    snprintf(script, sizeof script,
             "trap '' TERM; (trap '' TERM; sleep 1000; echo leaked >&2) & "
             "echo $! >%s; echo started; sleep 1000",
             pidfile);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    fit_proc p;
    assert_int_equal(fit_proc_run(argv, g_log, 1, &g_stop, &g_running, &p), 0);
    assert_true(p.timed_out);
    assert_int_equal(p.status, 128 + 9); /* SIGKILL after the grace: SIGTERM was ignored */
    assert_true(p.seconds >= 1 && p.seconds < 1 + FIT_KILL_GRACE_S + 3);
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    int child = 0;
    assert_int_equal(fscanf(f, "%d", &child), 1);
    fclose(f);
    unlink(pidfile);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", child);
    struct stat st;
    /* gone, or a zombie waiting for init; a loaded machine may take a moment to reap it */
    for (int i = 0; i < 50 && !stat(path, &st); i++)
        usleep(100000);
    if (!stat(path, &st)) {
        f = fopen(path, "r");
        char line[512] = "";
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = '\0';
            fclose(f);
        }
        char *rp = strrchr(line, ')');
        assert_true(!rp || rp[2] == 'Z' || rp[2] == 'X');
    }
    size_t len;
    char *b = read_log(&len);
    assert_memory_equal(b, "started\n", 8);
}

static void limits(void **state)
{
    (void)state;
    assert_true(fit_time_limit(30, 0, 0, 8) == 30);               /* given: as is */
    assert_true(fit_time_limit(30, 500, 4, 64) == 30);            /* given wins over derived */
    assert_true(fit_time_limit(0, 0, 0, 8) == FIT_FIRST_LIMIT_S); /* nothing measured yet */
    assert_true(fit_time_limit(0, 2, 16, 16) == FIT_MIN_LIMIT_S); /* short trials: the floor */
    assert_true(fit_time_limit(0, 30, 16, 16) == 300);            /* 10x */
    assert_true(fit_time_limit(0, 30, 16, 64) == 1200);           /* ... times 64/16 */
    assert_true(fit_time_limit(0, 30, 16, 4) == 300);             /* smaller batches: not less */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loud_trial_log_is_capped),
        cmocka_unit_test(quiet_trial_log_whole),
        cmocka_unit_test(hanging_trial_killed_with_its_group),
        cmocka_unit_test(limits),
    };
    return cmocka_run_group_tests(tests, make_log, remove_log);
}
