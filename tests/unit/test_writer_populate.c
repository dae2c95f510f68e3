/* test_writer_populate.c — the helper thread that faults in the window mapped ahead
 * (writer_populate.c): none in a process that never had a second thread; it takes the large
 * windows' jobs and the records read back whole; an unmap of the spare waits for the piece in
 * progress and drops the rest of the job (the helper never touches a range that is no longer the
 * trace's); a fork while the helper works leaves the child a writer of its own that starts its
 * own helper (what the parent's was doing, its lock and its piece, not inherited); the helper as
 * the process's only other thread is told apart from the program's own. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "writer_files.h"
#include "../../preload/writer.h"
#include "../../preload/writer_internal.h"

static void sleep_ms(int ms)
{
    struct timespec t = {0, (long)ms * 1000000L};
    while (nanosleep(&t, &t) && errno == EINTR) {
    }
}

/* a slow piece (the hook runs on the helper before each piece): in_piece while it lasts */
static _Atomic int in_piece;
static void slow_piece(void)
{
    atomic_store(&in_piece, 1);
    sleep_ms(30);
    atomic_store(&in_piece, 0);
}

static uint64_t jobs_now(void)
{
    uint64_t j, p;
    vt__populate_stats(&j, &p);
    return j;
}

static uint64_t pieces_now(void)
{
    uint64_t j, p;
    vt__populate_stats(&j, &p);
    return p;
}

/* write: 24-byte ALLOC records until the helper has taken one more job than before (-1: none
 * after max records) */
static int write_until_job(int max)
{
    uint64_t payload[3] = {1, 2, 3}, jobs = jobs_now();
    for (int i = 0; i < max; i++) {
        if (vt__write(VT_REC_ALLOC, 5, payload, 24, NULL, 0))
            return -1;
        if (jobs_now() > jobs)
            return i + 1;
    }
    return -1;
}

/* a process that never had a thread besides its first: no helper (glibc's single-threaded ways
 * stay the program's), its windows faulted in as before and its records whole */
static void test_no_helper_while_single_threaded(void **st)
{
    (void)st;
    use_output("single.vt");
    uint64_t payload[3] = {1, 2, 3};
    enum { N = 400000 };
    for (int i = 0; i < N; i++)
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 24, NULL, 0), 0);
    assert_int_equal(jobs_now(), 0);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    assert_int_equal(pieces_now(), 0);
    uint16_t *t = malloc(sizeof *t * (N + 8));
    assert_int_equal(read_records(path, t, N + 7), 2 + N + 1);
    free(t);
}

static void *nothing(void *arg)
{
    return arg;
}

/* a run whose windows reach a huge page, in a process that has had a thread (joined: the helper
 * is then its only other one): the helper takes their jobs and faults pieces in; every
 * record reads back (the helper changes no byte) */
static void test_helper_takes_large_windows(void **st)
{
    (void)st;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, nothing, NULL), 0);
    pthread_join(th, NULL);
    use_output("large.vt");
    uint64_t jobs = jobs_now(), pieces = pieces_now();
    uint64_t payload[3] = {1, 2, 3};
    enum { N = 400000 }; /* 12.8 MB: windows of 64 KiB doubling past 4 MiB */
    for (int i = 0; i < N; i++)
        assert_int_equal(vt__write(VT_REC_ALLOC, 5, payload, 24, NULL, 0), 0);
    assert_true(jobs_now() >= jobs + 2);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    for (int i = 0; i < 200 && pieces_now() == pieces; i++)
        sleep_ms(5);
    assert_true(pieces_now() > pieces);
    uint16_t *t = malloc(sizeof *t * (N + 8));
    assert_int_equal(read_records(path, t, N + 7), 2 + N + 1);
    free(t);
}

/* a thread that waits (the program's own) */
static void *waits(void *arg)
{
    char c;
    while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR) {
    }
    return NULL;
}

/* alone: the helper is the only thread besides this one (a fork child may walk the loaded
 * objects), not once the program has a thread of its own */
static void test_alone_with_the_helper_only(void **st)
{
    (void)st;
    assert_true(jobs_now() > 0); /* (the helper runs: the test before started it) */
    assert_true(vt__populate_alone());
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, waits, &fds[0]), 0);
    assert_false(vt__populate_alone());
    assert_int_equal(write(fds[1], "x", 1), 1);
    pthread_join(t, NULL);
    close(fds[0]), close(fds[1]);
    assert_true(vt__populate_alone());
}

/* the close unmaps the spare while the helper is in one of its pieces: the unmap waits for that
 * piece alone, and the job's other pieces are never done */
static void test_unmap_waits_for_the_piece(void **st)
{
    (void)st;
    use_output("unmap.vt");
    vt__populate_test_piece = slow_piece;
    int n = write_until_job(400000);
    assert_true(n > 0);
    for (int i = 0; i < 400 && !atomic_load(&in_piece); i++)
        sleep_ms(1);
    assert_true(atomic_load(&in_piece)); /* (a spare of 2 MiB or more: 8 pieces of 30 ms) */
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    uint64_t before = pieces_now();
    vt__writer_close(); /* (unmaps the spare, which the job is on) */
    assert_false(atomic_load(&in_piece));
    uint64_t pieces = pieces_now();
    assert_true(pieces <= before + 1); /* (that piece: the rest were dropped, not waited for) */
    sleep_ms(100);
    assert_int_equal(pieces_now(), pieces);
    assert_false(atomic_load(&in_piece));
    vt__populate_test_piece = NULL;
    uint16_t *t = malloc(sizeof *t * (size_t)(n + 8));
    assert_int_equal(read_records(path, t, n + 7), 2 + n + 1);
    free(t);
}

/* a fork while the helper is in a piece: the child writes a trace of its own, large enough for a
 * helper of its own, and exits (a child that had inherited the helper's lock held, or waited for
 * the parent's helper, would hang: killed after 30 s). The writer's fork handlers are the
 * preload's record.c's, not linked here: registered as it does. */
static void test_fork_while_the_helper_works(void **st)
{
    (void)st;
    use_output("fork.%p.vt");
    pthread_atfork(vt__writer_fork_prepare, vt__writer_fork_parent, vt__writer_fork_child);
    vt__populate_test_piece = slow_piece;
    assert_true(write_until_job(400000) > 0);
    for (int i = 0; i < 400 && !atomic_load(&in_piece); i++)
        sleep_ms(1);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (!pid) {
        vt__populate_test_piece = NULL;
        uint64_t pieces = pieces_now();
        uint64_t payload[3] = {1, 2, 3};
        for (int i = 0; i < 400000; i++)
            if (vt__write(VT_REC_ALLOC, 5, payload, 24, NULL, 0))
                _exit(3);
        char path[256];
        snprintf(path, sizeof path, "%s", vt__writer_path());
        vt__writer_close();
        for (int i = 0; i < 400 && pieces_now() == pieces; i++)
            sleep_ms(5);
        if (pieces_now() == pieces) /* no helper of its own ran */
            _exit(4);
        uint16_t *t = malloc(sizeof *t * 400008);
        _exit(t && read_records(path, t, 400007) == 2 + 400000 + 1 ? 0 : 5);
    }
    int status = 0; /* (a hung child is killed: its own alarm may be held off in a wait) */
    pid_t r = 0;
    for (int i = 0; i < 3000 && (r = waitpid(pid, &status, WNOHANG)) == 0; i++)
        sleep_ms(10);
    if (r == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("the child hung");
    }
    assert_int_equal(r, pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    vt__writer_close();
    vt__populate_test_piece = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_helper_while_single_threaded), /* (first: no thread yet) */
        cmocka_unit_test(test_helper_takes_large_windows),
        cmocka_unit_test(test_alone_with_the_helper_only),
        cmocka_unit_test(test_unmap_waits_for_the_piece),
        cmocka_unit_test(test_fork_while_the_helper_works),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
