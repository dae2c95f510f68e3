/* test_infer_forwards.c — what the inference pass (analyzer/model/facts/infer.c and
 * infer_tensors.c) reads of runs of forwards only (an evaluation script): the weights kept to
 * the end, a run cut in its first forward, and a copy of the pass keeping its own tensors. */
#include "infer_run.h"

#define FD 64   /* width d */
#define FV 1000 /* vocabulary */
#define FL 3    /* blocks */
#define FB 2    /* batch */
#define FT 32   /* sequence */

/* plain_weights: a decoder's fp32 weights (the embedding, FL blocks, a final norm; the head tied),
 * their addresses into w (*n of them), their element count returned */
static int64_t plain_weights(run *r, uint64_t *w, size_t *n)
{
    static const uint64_t block[] = {FD, 3 * FD * FD, FD * FD, FD, 4 * FD * FD, 4 * FD * FD};
    int64_t elems = FV * FD + FD;
    *n = 0;
    w[(*n)++] = t(r, FV * FD * 4, 0);
    for (int l = 0; l < FL; l++)
        for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
            w[(*n)++] = t(r, block[i] * 4, 0), elems += (int64_t)block[i];
    w[(*n)++] = t(r, FD * 4, 0);
    return elems;
}

/* forward: one forward of the batch under no_grad, every tensor dead at its end */
static void forward(run *r)
{
    uint64_t x = t(r, FB * FT * 8, 0), emb = t(r, FB * FT * FD * 4, 0);
    uint64_t lg = t(r, FB * FT * FV * 4ull, 0);
    die(r, emb), die(r, lg), die(r, x);
}

/* Two forwards, then the program's exit frees its weights: they are the weights (P, L, d, V, the
 * token batch's B·T), read from the prefix kept to the last allocation. Before: nothing, and
 * before that a guess from the forward's tensors. */
/* exit: the program's exit frees its weights w[0..n); the pass's values into out */
static void exit_run(run *r, const uint64_t *w, size_t n, infer_result *out)
{
    for (size_t i = 0; i < n; i++)
        die(r, w[i]);
    run_end(r, out);
}

static void test_forwards_only(void **state)
{
    (void)state;
    run r;
    infer_result out;
    uint64_t w[64];
    size_t n;
    run_begin(&r);
    int64_t P = plain_weights(&r, w, &n);
    forward(&r), forward(&r);
    exit_run(&r, w, n, &out);
    assert_int_equal(val(&out, INFER_params), P);
    assert_int_equal(val(&out, INFER_n_layer), FL);
    assert_int_equal(val(&out, INFER_n_embd), FD);
    assert_int_equal(val(&out, INFER_vocab_size), FV);
    assert_int_equal(val(&out, INFER_tokens), FB * FT);
}

/* A copy of the pass (the report's what-ifs replay from one) counts its own live tensors: the
 * copy's frees leave the run's alone. Here the copy sees the first forward's tensors die; the
 * run then frees them too, and must still find them (else they would be read as weights). A
 * freed address made again counts anew. */
static void test_copy_counts_its_own(void **state)
{
    (void)state;
    run r;
    infer_result out;
    uint64_t w[64];
    size_t n;
    run_begin(&r);
    int64_t P = plain_weights(&r, w, &n);
    uint64_t x = t(&r, FB * FT * 8, 0), emb = t(&r, FB * FT * FD * 4, 0);
    uint64_t lg = t(&r, FB * FT * FV * 4ull, 0);
    infer_pass *c = infer_pass_copy(r.ip);
    assert_non_null(c);
    reader_event ev;
    memset(&ev, 0, sizeof ev);
    ev.api = VT_API_torchFree;
    uint64_t dead[] = {emb, lg, x};
    for (size_t i = 0; i < 3; i++) {
        ev.addr = dead[i];
        infer_pass_event(c, r.event + 1 + i, 0, &ev, 0);
    }
    infer_pass_free(c);
    die(&r, emb), die(&r, lg), die(&r, x);
    /* the second forward's at the first one's addresses */
    uint64_t save = r.addr;
    r.addr = x - (FB * FT * 8 + 511) / 512 * 512 - 512;
    uint64_t x2 = t(&r, FB * FT * 8, 0);
    assert_int_equal(x2, x);
    r.addr = save;
    uint64_t emb2 = t(&r, FB * FT * FD * 4, 0), lg2 = t(&r, FB * FT * FV * 4ull, 0);
    die(&r, emb2), die(&r, lg2), die(&r, x2);
    exit_run(&r, w, n, &out);
    assert_int_equal(val(&out, INFER_params), P);
    assert_int_equal(val(&out, INFER_tokens), FB * FT);
}

/* A run cut in its first forward (killed: no backward, no failure, no tensor dead yet): nothing
 * tells its weights from its forward's tensors, so nothing is inferred (not a P of everything,
 * nor images from two of its tensors: "B = 576: the int64 labels beside an fp32 image batch"
 * was once read so from a GPT-2 evaluation's) */
static void test_cut_in_first_forward(void **state)
{
    (void)state;
    run r;
    infer_result out;
    uint64_t w[64];
    size_t n;
    run_begin(&r);
    plain_weights(&r, w, &n);
    t(&r, FB * FT * 8, 0), t(&r, FB * FT * FD * 4, 0);
    t(&r, 576 * 8, 0), t(&r, 576 * 3 * 64 * 64 * 4, 0);
    run_end(&r, &out);
    for (int k = 0; k < INFER_COUNT; k++)
        assert_false(out.v[k].known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forwards_only),
        cmocka_unit_test(test_copy_counts_its_own),
        cmocka_unit_test(test_cut_in_first_forward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
