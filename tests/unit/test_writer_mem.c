/* test_writer_mem.c — the packer's memory without malloc (preload/writer_mem.c): blocks from
 * mmap, zeroed, grown and shrunk with their contents kept; its sort in the order glibc's qsort
 * (a stable merge sort) gives, equal keys in their first order, also across merge runs of odd
 * lengths; the in-place heapsort it falls back on sorts too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../preload/writer_mem.h"

static void test_blocks(void **st)
{
    (void)st;
    unsigned char *p = vt__wm_alloc(100);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(p[i], 0);
        p[i] = (unsigned char)(i + 1);
    }
    p = vt__wm_realloc(p, 3u << 20); /* past a page, past many */
    assert_non_null(p);
    for (int i = 0; i < 100; i++)
        assert_int_equal(p[i], i + 1);
    assert_int_equal(p[(3u << 20) - 1], 0);
    p[(3u << 20) - 1] = 7;
    p = vt__wm_realloc(p, 7u << 20); /* (moved again: all of the last block comes along) */
    assert_non_null(p);
    assert_int_equal(p[(3u << 20) - 1], 7);
    assert_int_equal(p[99], 100);
    p = vt__wm_realloc(p, 50);
    assert_non_null(p);
    for (int i = 0; i < 50; i++)
        assert_int_equal(p[i], i + 1);
    vt__wm_free(p);
    vt__wm_free(NULL);
    assert_null(vt__wm_alloc_n(SIZE_MAX / 4, 8)); /* overflows */
    uint64_t *q = vt__wm_realloc(NULL, 8 * sizeof *q);
    assert_non_null(q);
    q[7] = 1;
    vt__wm_free(q);
}

/* an element: a key with many equal ones and where it stood first */
struct el {
    uint32_t key, at;
    char pad[12]; /* (an element size that is no power of two) */
};

static int by_key(const void *a, const void *b)
{
    const struct el *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

static int by_key_at(const void *a, const void *b)
{
    int c = by_key(a, b);
    if (c)
        return c;
    const struct el *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

static void fill(struct el *v, size_t n, uint32_t seed, uint32_t keys)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (struct el){.key = (seed >> 8) % keys, .at = (uint32_t)i};
        memset(v[i].pad, (int)(i & 0x7f), sizeof v[i].pad);
    }
}

static void test_sort_stable(void **st)
{
    (void)st;
    static const size_t ns[] = {0, 1, 2, 15, 16, 17, 33, 100, 1000, 4097, 100003};
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        size_t n = ns[t];
        struct el *v = malloc((n + 1) * sizeof *v), *want = malloc((n + 1) * sizeof *want);
        assert_non_null(v);
        assert_non_null(want);
        fill(v, n, (uint32_t)(t + 1), n > 50 ? (uint32_t)(n / 7) : 3u);
        memcpy(want, v, n * sizeof *v);
        qsort(want, n, sizeof *want, by_key_at); /* (at breaks ties: the stable order) */
        vt__wm_sort(v, n, sizeof *v, by_key);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(v[i].key, want[i].key);
            assert_int_equal(v[i].at, want[i].at); /* equal keys in their first order */
            assert_int_equal(v[i].pad[11], (char)(v[i].at & 0x7f)); /* moved whole */
        }
        free(v);
        free(want);
    }
}

static void test_heapsort(void **st)
{
    (void)st;
    static const size_t ns[] = {0, 1, 2, 3, 17, 1000, 65537};
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        size_t n = ns[t];
        struct el *v = malloc((n + 1) * sizeof *v);
        assert_non_null(v);
        fill(v, n, (uint32_t)(t + 7), n > 10 ? (uint32_t)(n / 3) : 2u);
        char seen[65537] = {0};
        vt__wm_heapsort(v, n, sizeof *v, by_key);
        for (size_t i = 0; i < n; i++) {
            if (i)
                assert_true(v[i - 1].key <= v[i].key);
            assert_false(seen[v[i].at]); /* every element once */
            seen[v[i].at] = 1;
            assert_int_equal(v[i].pad[11], (char)(v[i].at & 0x7f));
        }
        free(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_sort_stable),
        cmocka_unit_test(test_heapsort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
