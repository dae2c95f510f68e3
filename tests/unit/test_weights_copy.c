/* test_weights_copy.c — a copy of the weights among them, told by their sizes (weights_copy.h):
 * a model and its copy made after it are found, with the copy's tensors and bytes; one model's
 * repeated blocks, or the model alone, are none; copy.deepcopy's copy in another order is found
 * where it made the run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "weights_copy.h"

/* model: a decoder's weights as made: embedding, position table, L blocks of six tensors, the
 * final norm, the head (V×d); n of them at out, returned */
static size_t model(uint64_t *out, int L, uint64_t d, uint64_t V)
{
    size_t n = 0;
    out[n++] = V * d * 4, out[n++] = 256 * d * 4;
    for (int l = 0; l < L; l++) {
        out[n++] = d * 4, out[n++] = d * 4;                 /* a norm */
        out[n++] = 3 * d * d * 4, out[n++] = d * d * 4;     /* attention */
        out[n++] = 4 * d * d * 4, out[n++] = 4 * d * d * 4; /* MLP */
    }
    out[n++] = d * 4, out[n++] = V * d * 4;
    return n;
}

static uint64_t sum(const uint64_t *s, size_t n)
{
    uint64_t b = 0;
    for (size_t i = 0; i < n; i++)
        b += s[i];
    return b;
}

static void test_copy_found(void **state)
{
    (void)state;
    uint64_t s[1024];
    weights_copy wc;
    size_t n = model(s, 4, 256, 8192);
    uint64_t bytes = sum(s, n);
    /* the model alone: its blocks repeat, but no run of them holds a copy */
    assert_int_equal(weights_copy_find(s, n, &wc), 0);
    assert_int_equal(wc.tensors, 0);
    /* the model, then its copy (an EMA made of its parameters), then a counter of 8 B */
    memcpy(s + n, s, n * sizeof *s);
    s[2 * n] = 8;
    assert_int_equal(weights_copy_find(s, 2 * n + 1, &wc), 1);
    assert_int_equal(wc.tensors, n);
    assert_int_equal(wc.bytes, bytes);
    /* another model made before it (a text encoder of another shape): still found */
    size_t e = model(s, 2, 128, 1000);
    n = model(s + e, 4, 256, 8192);
    memcpy(s + e + n, s + e, n * sizeof *s);
    assert_int_equal(weights_copy_find(s, e + 2 * n, &wc), 1);
    assert_int_equal(wc.tensors, n);
}

static void test_blocks_none(void **state)
{
    (void)state;
    uint64_t s[4096];
    weights_copy wc;
    /* a model of 24 blocks with a small embedding and head (a vision transformer's): halves of
     * its blocks are the same sizes in the same order, a repeat of one block, no copy */
    size_t n = model(s, 24, 768, 16);
    assert_int_equal(weights_copy_find(s, n, &wc), 0);
    /* a long model of blocks alone (the search's worst case) stays quick and finds none */
    n = 0;
    for (int l = 0; l < 680; l++)
        for (int t = 0; t < 6; t++)
            s[n++] = (uint64_t)(t + 1) * 4096;
    assert_int_equal(weights_copy_find(s, n, &wc), 0);
    /* two blocks (a run and the same run after it) that hold less than half of the weights'
     * bytes (a large vocabulary's embedding and head beside them) are none */
    n = model(s, 2, 64, 8192);
    assert_int_equal(weights_copy_find(s, n, &wc), 0);
}

/* copy.deepcopy of a model whose top module has a parameter of its own (a position table)
 * beside its children: .to() had moved the children's first, the copy takes its own first. The
 * sizes in another order are a copy where copy.deepcopy made the run, none where it did not (an
 * autoencoder's decoder holds its encoder's sizes in another order). Clones of parameters() (a
 * module's own parameter first, beside a model .to() made children first): found where no stack
 * that made the copy made the model; halves of one model's blocks made by the same stacks are
 * none */
static void test_reordered(void **state)
{
    (void)state;
    uint64_t s[1024];
    uint8_t deep[1024] = {0};
    weights_copy wc;
    size_t n = model(s, 4, 256, 8192);
    uint64_t bytes = sum(s, n), pos = s[1];
    memmove(s + 1, s + 2, (n - 2) * sizeof *s); /* the model as .to() moved it: its own last */
    s[n - 1] = pos;
    s[n] = pos; /* its deepcopy: its own parameter first, then its children in order */
    memcpy(s + n + 1, s, (n - 1) * sizeof *s);
    assert_int_equal(weights_copy_find(s, 2 * n, &wc), 0);
    assert_int_equal(weights_copy_reordered(s, NULL, deep, 2 * n, &wc), 0);
    memset(deep + n, 1, n);
    assert_int_equal(weights_copy_reordered(s, NULL, deep, 2 * n, &wc), 1);
    assert_int_equal(wc.tensors, n);
    assert_int_equal(wc.bytes, bytes);
    assert_int_equal(wc.reordered, WEIGHTS_COPY_DEEPCOPY);
    /* a deepcopy's run whose sizes are not the run before it's, or whose run before it holds a
     * deepcopy's tensor: none */
    s[n] += 4, s[n + 1] -= 4; /* (the same bytes) */
    assert_int_equal(weights_copy_reordered(s, NULL, deep, 2 * n, &wc), 0);
    s[n] -= 4, s[n + 1] += 4;
    deep[3] = 1;
    assert_int_equal(weights_copy_reordered(s, NULL, deep, 2 * n, &wc), 0);
    assert_int_equal(wc.tensors, 0);
    /* an autoencoder without biases: its decoder's sizes are its encoder's in another order */
    uint64_t ae[4] = {784 * 256 * 4, 256 * 32 * 4, 32 * 256 * 4, 256 * 784 * 4};
    uint8_t none[4] = {0};
    assert_int_equal(weights_copy_reordered(ae, NULL, none, 4, &wc), 0);
    /* other sizes of the same bytes and the same sum of squares (1 + 5 + 6, 2 + 3 + 7): none */
    uint64_t pt[6] = {4096, 5 * 4096, 6 * 4096, 2 * 4096, 3 * 4096, 7 * 4096};
    uint8_t dpt[6] = {0, 0, 0, 1, 1, 1};
    assert_int_equal(weights_copy_reordered(pt, NULL, dpt, 6, &wc), 0);
    /* clones of parameters(): its own position table first, beside the model .to() made */
    uint32_t st[1024];
    n = model(s, 4, 256, 8192);
    bytes = sum(s, n);
    s[n] = 512 * 256 * 4; /* (its own position table, moved last by .to()) */
    for (size_t i = 0; i <= n; i++)
        st[i] = 1 + (uint32_t)(i % 7); /* (its constructors' and .to()'s stacks) */
    s[n + 1] = s[n];                   /* the copy: that table first, then the rest in order */
    memcpy(s + n + 2, s, n * sizeof *s);
    for (size_t i = n + 1; i <= 2 * n + 1; i++)
        st[i] = 100;                                           /* (one clone loop) */
    assert_int_equal(weights_copy_find(s, 2 * n + 2, &wc), 0); /* (no stacks: same order only) */
    assert_int_equal(weights_copy_reordered(s, st, NULL, 2 * n + 2, &wc), 1);
    assert_int_equal(wc.tensors, n + 1);
    assert_int_equal(wc.bytes, bytes + s[n]);
    assert_int_equal(wc.reordered, WEIGHTS_COPY_APART);
    /* the copy made by a stack that made the model too: none */
    st[n + 1] = 3;
    assert_int_equal(weights_copy_reordered(s, st, NULL, 2 * n + 2, &wc), 0);
    /* (the same made by a later one of the copy's stacks: its first's alone is no answer) */
    st[n + 1] = 100, st[n + 5] = 3;
    assert_int_equal(weights_copy_reordered(s, st, NULL, 2 * n + 2, &wc), 0);
    /* a model of blocks whose order differs a little between halves, all made by the same
     * stacks (its .to()): no copy */
    n = 0;
    for (int l = 0; l < 12; l++)
        for (int t = 0; t < 6; t++)
            st[n] = 5, s[n++] = (uint64_t)(l == 7 ? 6 - t : t + 1) * 4096;
    assert_int_equal(weights_copy_reordered(s, st, NULL, n, &wc), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_found),
        cmocka_unit_test(test_blocks_none),
        cmocka_unit_test(test_reordered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
