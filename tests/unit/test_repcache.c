/* test_repcache.c — a step's backward passes that are a representation cache's chunks, not
 * accumulation's micro-steps (analyzer/model/facts/repcache.c), on hand-made snapshots: GradCache's
 * shape (its first pass made no weight's gradient, a later one did, more passes after it) is told,
 * with a cached representation's gradient the size of a weight in its first pass; plain
 * accumulation (the weights' gradients made in the first pass), an expert reached in a later
 * micro-step only, an adversarial step (its attack passes make no weight's gradient, its last pass
 * all of them) and segment mode are not; before a first step, a run out of memory after its
 * passes is told the same way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "repcache.h"

/* grad: a live gradient of size bytes made in backward pass bwd of step iter */
static live_item grad(uint64_t size, uint32_t iter, uint32_t bwd)
{
    live_item it;
    memset(&it, 0, sizeof it);
    it.size = size, it.iter_alloc = iter, it.bwd_alloc = bwd, it.category = CAT_GRADIENTS;
    return it;
}

/* run: a tensor-mode replay whose largest optimizer step holds items[0..n) */
static replay_result *run(live_item *items, size_t n)
{
    replay_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->tensor_mode = 1;
    r->at_step.event = 100, r->at_step.items = items, r->at_step.n = n;
    return r;
}

static void test_gradcache_told(void **st)
{
    (void)st;
    /* 2 steps of 5 passes: the loss over the cache (no weight's gradient), then 2 query chunks
     * (the query encoder's gradients made in the first) and 2 passage chunks; the step seen is
     * the second (passes 6..10) */
    live_item v[] = {grad(400, 1, 7), grad(400, 1, 9)};
    replay_result *r = run(v, 2);
    assert_int_equal(repcache_detect(r, 5, 2), 5);
    /* its cached queries' gradient the size of a weight, 1 % of the step's: still told */
    live_item w[] = {grad(8, 0, 1), grad(400, 0, 2), grad(400, 0, 4)};
    r->at_step.items = w, r->at_step.n = 3;
    assert_int_equal(repcache_detect(r, 5, 2), 5);
    /* 5 %: a first pass that made weights' gradients, no cache */
    w[0].size = 50;
    assert_int_equal(repcache_detect(r, 5, 2), 0);
    /* segment mode: no tensors to tell */
    w[0].size = 8, r->tensor_mode = 0;
    assert_int_equal(repcache_detect(r, 5, 2), 0);
    free(r);
}

static void test_accumulation_not(void **st)
{
    (void)st;
    /* A = 4: the gradients made in the step's first micro-step, added into after */
    live_item v[] = {grad(400, 0, 1), grad(400, 0, 1)};
    replay_result *r = run(v, 2);
    assert_int_equal(repcache_detect(r, 4, 2), 0);
    /* an expert no token of the first micro-batch reached: its gradient in the third */
    live_item w[] = {grad(400, 0, 1), grad(40, 0, 3)};
    r->at_step.items = w;
    assert_int_equal(repcache_detect(r, 4, 2), 0);
    /* an adversarial step: 3 attack passes (the inputs' gradients alone), the weights' made in
     * its last pass */
    live_item a[] = {grad(400, 0, 4), grad(400, 0, 4)};
    r->at_step.items = a;
    assert_int_equal(repcache_detect(r, 4, 2), 0);
    /* one pass per step: nothing to tell */
    live_item o[] = {grad(400, 0, 1)};
    r->at_step.items = o, r->at_step.n = 1;
    assert_int_equal(repcache_detect(r, 1, 2), 0);
    free(r);
}

static void test_oom_before_first_step(void **st)
{
    (void)st;
    /* out of memory in a chunk's forward after the loss over the cache and 2 query chunks */
    live_item v[] = {grad(8, 0, 1), grad(400, 0, 2), grad(400, 0, 3)};
    replay_result *r = run(NULL, 0);
    r->at_step.event = 0;
    r->has_oom = 1, r->oom_bwd = 3, r->at_oom.items = v, r->at_oom.n = 3;
    assert_int_equal(repcache_detect(r, 0, 0), 3);
    /* the first chunk alone done: its gradients made in the last pass begun, not told */
    r->oom_bwd = 2, r->at_oom.n = 2;
    assert_int_equal(repcache_detect(r, 0, 0), 0);
    /* after a completed step: the step's first pass is not the run's, not told */
    r->oom_bwd = 3, r->at_oom.n = 3, r->iterations = 1, r->oom_iter = 1;
    assert_int_equal(repcache_detect(r, 0, 0), 0);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradcache_told),
        cmocka_unit_test(test_accumulation_not),
        cmocka_unit_test(test_oom_before_first_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
