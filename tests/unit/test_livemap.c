/* test_livemap.c — the replay's live set (analyzer/model/facts/livemap.c): random puts, replaces,
 * finds and deletes against a plain array of the same keys, through the index's growth (a quarter
 * full at most) and its backward-shift deletions; entry numbers stay put while they live, a freed
 * entry is given out again first, and the walk over entries sees every live entry once; running
 * out of address space is said (mem_failed), never silent; addresses chosen to collide under an
 * unseeded hash do not under the seed (hashseed.h). */
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

#include "hashseed.h"
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
    for (uint64_t i = 0; i < m->ne; i++) {
        livemap_entry *e = livemap_live_entry(m, i);
        if (e) {
            walked++;
            assert_non_null(livemap_find(m, e->addr, e->space)); /* live, and itself */
            assert_ptr_equal(livemap_find(m, e->addr, e->space), e);
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
                if (round & 1) /* (the find was the last lookup: its slot is known) */
                    livemap_del_found(&m, e);
                else
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

/* unfold: the inverse of hashseed_fold under seed 0 (its bytes reversed back, times the inverse of
 * its multiplier): what a hostile trace would compute to make its addresses collide in the live
 * set (livemap_mix) */
static uint64_t inverse(uint64_t a) /* a odd: a * inverse(a) == 1 mod 2^64 (Newton) */
{
    uint64_t x = a;
    for (int i = 0; i < 6; i++)
        x *= 2 - a * x;
    return x;
}
static uint64_t unfold(uint64_t h)
{
    return __builtin_bswap64(h) * inverse(0x9e3779b97f4a7c15ull);
}

/* the longest distance of a live key from its home slot */
static uint64_t longest_probe(const livemap *m)
{
    uint64_t worst = 0, mask = m->cap - 1;
    for (uint64_t j = 0; j < m->cap; j++)
        if (m->slot[j].addr && ((j - (m->slot[j].hash & mask)) & mask) > worst)
            worst = (j - (m->slot[j].hash & mask)) & mask;
    return worst;
}

/* COLLIDE addresses whose unseeded hashes share their low 40 bits: unseeded, every one has the
 * same home slot (each put walks past all before it); under the seed drawn by hashseed_init
 * they spread as any addresses do. The seed from VRAMTRACE_HASH_SEED is taken as given. */
enum { COLLIDE = 4000 };
static void fill_collide(livemap *m)
{
    for (uint64_t k = 1; k <= COLLIDE; k++) {
        int replaced;
        uint64_t a = unfold(k << 40) ^ (1ull << 58);
        assert_non_null(livemap_put(m, a, 1, &replaced));
        assert_int_equal(replaced, 0);
    }
}
static void test_collisions_seeded(void **st)
{
    (void)st;
    uint64_t keep = hashseed_value;
    hashseed_value = 0; /* unseeded: the crafted addresses do collide (the test's own check) */
    livemap m = {0};
    fill_collide(&m);
    assert_true(longest_probe(&m) >= COLLIDE - 1);
    livemap_free(&m);
    unsetenv("VRAMTRACE_HASH_SEED");
    hashseed_init();
    livemap s = {0};
    fill_collide(&s);
    assert_true(longest_probe(&s) < 64);
    for (uint64_t k = 1; k <= COLLIDE; k += 97) /* and found again */
        assert_non_null(livemap_find(&s, unfold(k << 40) ^ (1ull << 58), 1));
    livemap_free(&s);
    setenv("VRAMTRACE_HASH_SEED", "0x5eed", 1);
    hashseed_init();
    assert_int_equal(hashseed_value, 0x5eed);
    setenv("VRAMTRACE_HASH_SEED", "7x", 1); /* not a number: drawn */
    hashseed_value = 0x5eed;
    hashseed_init();
    assert_true(hashseed_value != 0x5eed);
    unsetenv("VRAMTRACE_HASH_SEED");
    hashseed_value = keep;
}

/* seed_taken: hashseed_init's seed from VRAMTRACE_HASH_SEED=text, or 0x5eed when it drew one */
static uint64_t seed_taken(const char *text)
{
    setenv("VRAMTRACE_HASH_SEED", text, 1);
    hashseed_value = 0x5eed;
    hashseed_init();
    uint64_t v = hashseed_value;
    if (v != 0x5eed && strcmp(text, "0x5eed") != 0) {
        /* drawn or taken: drawn twice differs (2^-64 that it does not) */
        hashseed_init();
        if (hashseed_value != v)
            v = 0x5eed;
    }
    return v;
}

/* VRAMTRACE_HASH_SEED: plain decimal or 0x hex, to 2^64-1; no sign, space or octal */
static void test_seed_parsed(void **st)
{
    (void)st;
    uint64_t keep = hashseed_value;
    assert_int_equal(seed_taken("010"), 10); /* decimal, not octal */
    assert_int_equal(seed_taken("18446744073709551615"), UINT64_MAX);
    assert_int_equal(seed_taken("0xFFFFffffFFFFffff"), UINT64_MAX);
    assert_int_equal(seed_taken("0X2a"), 42);
    assert_int_equal(seed_taken("0"), 0);
    const char *bad[] = {
        " -1", "-1", "+5", " 5", "5 ", "0x", "18446744073709551616", "0x10000000000000000",
        "1e3", "0b1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(seed_taken(bad[i]), 0x5eed);
    unsetenv("VRAMTRACE_HASH_SEED");
    hashseed_value = keep;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_array), cmocka_unit_test(test_stale_hint_and_cluster),
        cmocka_unit_test(test_out_of_memory_said),   cmocka_unit_test(test_collisions_seeded),
        cmocka_unit_test(test_seed_parsed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
