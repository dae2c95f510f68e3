/* test_livemap.c — the replay's live set (analyzer/model/facts/livemap.c): random puts, replaces,
 * finds and deletes against a plain array of the same keys, through the index's growth (a quarter
 * full at most) and its backward-shift deletions; entry numbers stay put while they live, a freed
 * entry is given out again first, and the index walk sees every live entry once; running out of
 * address space is said (mem_failed), never silent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "livemap.h"
#include "mem.h"

#define KEYS 20000u /* the key universe: KEYS addresses in each of two spaces */

/* the reference: for each key, live or not, its value and the entry number it had when put */
typedef struct ref {
    int live;
    uint64_t value;
    uint32_t number;
} ref;

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* key k: an address (never 0; neighbours 512 B apart, as a caching allocator's blocks are) and a
 * space (two spaces share every address) */
static uint64_t addr_of(uint32_t k)
{
    return 0x7f0000000000ull + (uint64_t)(k / 2) * 512;
}
static unsigned space_of(uint32_t k)
{
    return 1 + (k & 1);
}

/* check_all: every key found exactly when the reference has it live, with its value and number;
 * the index walk sees the live entries and nothing else */
static void check_all(livemap *m, const ref *r)
{
    uint64_t live = 0;
    for (uint32_t k = 0; k < KEYS; k++) {
        livemap_entry *e = livemap_find(m, addr_of(k), space_of(k));
        if (!r[k].live) {
            assert_null(e);
            continue;
        }
        live++;
        assert_non_null(e);
        assert_int_equal(e->addr, addr_of(k));
        assert_int_equal(e->space, space_of(k));
        assert_int_equal(e->size, r[k].value);
        assert_int_equal(livemap_number(m, e), r[k].number);
    }
    assert_int_equal(m->n, live);
    uint64_t walked = 0;
    for (uint64_t i = 0; i < m->cap; i++) {
        livemap_entry *e = livemap_slot_entry(m, i);
        if (e) {
            walked++;
            assert_true(e->addr != 0);
        }
    }
    assert_int_equal(walked, live);
    assert_true(!m->n || m->n * LIVEMAP_FILL < m->cap); /* at most a quarter full */
}

static void test_random_against_array(void **st)
{
    (void)st;
    livemap m = {0};
    ref *r = calloc(KEYS, sizeof *r);
    assert_non_null(r);
    for (int round = 0; round < 300000; round++) {
        uint32_t k = (uint32_t)(rnd() % KEYS);
        uint64_t a = addr_of(k);
        unsigned sp = space_of(k);
        unsigned op = (unsigned)(rnd() % 8);
        /* grow to about 15k live, then as many deletes as puts */
        int put = round < 40000 ? op < 6 : op < 4;
        if (put) {
            int replaced;
            livemap_entry *e = livemap_put(&m, a, sp, &replaced);
            assert_non_null(e);
            assert_int_equal(replaced, r[k].live);
            if (replaced) /* the same entry, as it was */
                assert_int_equal(livemap_number(&m, e), r[k].number);
            else
                assert_int_equal(e->size, 0); /* a new one is zeroed but for its key */
            e->size = rnd() | 1;
            r[k] = (ref){1, e->size, livemap_number(&m, e)};
        } else {
            livemap_entry *e = livemap_find(&m, a, sp);
            assert_int_equal(e != NULL, r[k].live);
            if (e) {
                uint32_t freed = livemap_number(&m, e);
                livemap_del(&m, e);
                r[k].live = 0;
                /* the entry freed last is the next one given out */
                uint32_t other = k ^ 1u;
                if (!r[other].live) {
                    int replaced;
                    livemap_entry *n = livemap_put(&m, addr_of(other), space_of(other), &replaced);
                    assert_non_null(n);
                    assert_false(replaced);
                    assert_int_equal(livemap_number(&m, n), freed);
                    n->size = rnd() | 1;
                    r[other] = (ref){1, n->size, freed};
                }
            }
        }
        if (round % 20000 == 0)
            check_all(&m, r);
    }
    check_all(&m, r);
    /* everything deleted: an empty set, every slot empty */
    for (uint32_t k = 0; k < KEYS; k++)
        if (r[k].live) {
            livemap_del(&m, livemap_find(&m, addr_of(k), space_of(k)));
            r[k].live = 0;
        }
    check_all(&m, r);
    assert_int_equal(m.n, 0);
    livemap_free(&m);
    free(r);
}

/* a delete whose find was not the last lookup (livemap_del's hint is stale) still removes the
 * right slot, and the backward shift keeps a cluster's later keys findable */
static void test_stale_hint_and_cluster(void **st)
{
    (void)st;
    livemap m = {0};
    enum { N = 5000 };
    livemap_entry *keep[N];
    for (uint32_t i = 0; i < N; i++) {
        int replaced;
        keep[i] = NULL;
        livemap_entry *e = livemap_put(&m, 0x1000 + (uint64_t)i * 8, 3, &replaced);
        assert_non_null(e);
        e->size = i + 1;
    }
    for (uint32_t i = 0; i < N; i++) /* numbers stay put: pointers taken after the last put */
        keep[i] = livemap_find(&m, 0x1000 + (uint64_t)i * 8, 3);
    for (uint32_t i = 0; i < N; i += 2) {
        livemap_find(&m, 0x1000 + (uint64_t)(N - 1 - i) * 8, 3); /* another lookup between */
        livemap_del(&m, keep[i]);
    }
    for (uint32_t i = 0; i < N; i++) {
        livemap_entry *e = livemap_find(&m, 0x1000 + (uint64_t)i * 8, 3);
        if (i % 2)
            assert_true(e && e->size == i + 1);
        else
            assert_null(e);
    }
    assert_int_equal(m.n, N / 2);
    livemap_free(&m);
}

/* out of address space (ulimit -v) while the index or the entries grow past 2 MiB (mmap, which
 * mem.h's wrappers do not see): the put fails and mem_failed() says so, for the command to exit
 * 2 "out of memory" rather than report without the allocation (in a child: the limit stays
 * there) */
static void test_out_of_memory_said(void **st)
{
    (void)st;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* the sanitizer's shadow memory and allocator do not run under an address limit */
#endif
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%ld", &pages) != 1)
            _exit(3);
        fclose(f);
        rlim_t now = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
        struct rlimit rl = {now + (16u << 20), now + (16u << 20)};
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(3);
        mem_reset();
        livemap m = {0};
        for (uint64_t i = 1; i < (1u << 24); i++) {
            int replaced;
            if (!livemap_put(&m, i * 512, 1, &replaced))
                _exit(mem_failed() ? 0 : 1); /* refused, and said */
        }
        _exit(2); /* never ran out: the limit did not hold */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_array),
        cmocka_unit_test(test_stale_hint_and_cluster),
        cmocka_unit_test(test_out_of_memory_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
