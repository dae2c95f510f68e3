/* test_model_cause.c — the cause a model of a run gives its out-of-memory failure
 * (analyzer/model/advice/model_notes.c, model_cause_cache): fragmentation blamed for a pass cut
 * short is hedged for that pass; the weights and their gradients, where they were the tensors of
 * a backward and no micro-batch's tensor makes room (model_grads.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char dir[256] = "/nonexistent";

#include "model_facts.h"
#include "model_oom.h"

/* fragmentation blamed for an evaluation pass cut short: its need is a lower bound, said of the
 * evaluation (not "the forward stopped early" with the training step's tensors) */
static void test_fragmentation_eval_cut(void **state)
{
    (void)state;
    static const char *const argv[] = {"python3", "train.py", "gpt2_12gb.py", "--batch_size=16",
                                       "--eval_batch_size=32"};
    run_facts f;
    oom_facts(&f);
    f.argc = 5, f.argv = argv;
    f.oom_cache = 2 * GiB;
    f.oom_requested = 1 * GiB;
    f.oom_phase = "eval";
    f.backward_passes = 1, f.iterations = 1;
    model_opts o = {0};
    static model_result m;
    char err[256];
    assert_int_equal(model_build(&m, &f, &o, err, sizeof err), 0);
    assert_true(m.calib.eval_cut && m.lower_bounds);
    assert_int_equal(m.cause, OOM_FRAGMENTATION);
    assert_non_null(strstr(m.why, "; the evaluation pass stopped early, so its tensors are a "
                                  "lower bound: a whole pass may not fit even with no cache"));
    assert_null(strstr(m.why, "forward stopped"));
}

/* a DLRM-like first backward: 1000 MiB of weights (8 tables of 125), 375 of their gradients
 * made, the 125 MiB request one more, beside 300 MiB of context and 65 of cuBLAS workspace on a
 * 1800 MiB card; a micro-batch's tensors next to nothing */
static void grads_facts(run_facts *f, model_result *m)
{
    memset(f, 0, sizeof *f);
    memset(m, 0, sizeof *m);
    m->cause = OOM_ACTIVATIONS;
    f->has_oom = 1, f->oom_phase = "backward", f->backward_passes = 1;
    f->at_oom.bytes[CAT_PARAMETERS] = 1000 * MiB;
    f->at_oom.bytes[CAT_GRADIENTS] = 375 * MiB;
    f->at_oom.bytes[CAT_ACTIVATIONS] = 1 * MiB;
    f->at_oom.bytes[CAT_WORKSPACE] = 65 * MiB;
    f->at_oom.bytes[CAT_CONTEXT] = 300 * MiB;
    f->at_oom.bytes[CAT_CACHE] = 20 * MiB;
    f->oom_requested = 126 * MiB, f->oom_weight = 125 * MiB, f->oom_weight_n = 8;
}

static void test_grads_cause(void **state)
{
    (void)state;
    run_facts f;
    static model_result m;
    grads_facts(&f, &m);
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 1);
    assert_int_equal(m.cause, OOM_GRADIENTS);
    assert_non_null(strstr(m.why, "the weights (1000.0 MiB) and the gradients the backward had "
                                  "made (375.0 MiB) were 95 % of the 1.41 GiB"));
    assert_non_null(strstr(m.why, "is a weight's gradient (8 weights of 125.0 MiB"));
    assert_non_null(strstr(m.why, "need at least that 126.0 MiB more, 625.0 MiB if every"));
    /* 1000 + 375 + 65 + 300 + 126 MiB */
    assert_non_null(strstr(m.why, "with the request, is 1.82 GiB: over the card's 1.76 GiB"));
    assert_string_equal(advice_cause_key(m.cause), "weights_and_gradients_too_large");
    assert_non_null(strstr(advice_cause_text_on(m.cause, 0), "too large for the card"));
    assert_non_null(strstr(advice_cause_text_on(m.cause, 1), "tensors: too large for the device"));
    /* where it fits without the micro-batch's tensors (1 MiB more), or they are a quarter of
     * what was live, or the request is no weight's, or the phase not a backward: not this */
    grads_facts(&f, &m);
    assert_int_equal(model_grads_cause(&m, &f, 1866 * MiB), 0);
    assert_int_equal(model_grads_cause(&m, &f, 1865 * MiB), 1);
    m.cause = OOM_ACTIVATIONS;
    grads_facts(&f, &m);
    f.at_oom.bytes[CAT_ACTIVATIONS] = 400 * MiB; /* (1375 of 1840 MiB of tensors) */
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 0);
    m.cause = OOM_ACTIVATIONS;
    f.at_oom.bytes[CAT_ACTIVATIONS] = 390 * MiB;
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 1);
    grads_facts(&f, &m);
    f.oom_weight = 0;
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 0);
    grads_facts(&f, &m);
    f.oom_phase = "forward";
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 0);
    grads_facts(&f, &m);
    f.oom_step_pass = 1;
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 0);
    grads_facts(&f, &m);
    f.at_oom.bytes[CAT_GRADIENTS] = 0;
    assert_int_equal(model_grads_cause(&m, &f, 1400 * MiB), 0);
    grads_facts(&f, &m); /* (another cause stays) */
    m.cause = OOM_STATE;
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 0);
    assert_int_equal(m.cause, OOM_STATE);
}

/* a later backward, its gradients freed between steps: the earlier backward made them all, and
 * those not made again are still to come, whatever the request */
static void test_grads_cause_earlier(void **state)
{
    (void)state;
    run_facts f;
    static model_result m;
    grads_facts(&f, &m);
    f.backward_passes = 2, f.has_cat_peaks = 1, f.oom_weight = 0;
    f.cat_peak[CAT_GRADIENTS] = 1000 * MiB;
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 1);
    assert_non_null(strstr(m.why, "the backward's (no weight's size); the parameters' gradients "
                                  "alone need 625.0 MiB more (an earlier backward made 1000.0"));
    assert_non_null(strstr(m.why, "with the gradients still to come, is 2.31 GiB"));
    /* a step of a kind no earlier step ran: its backward's gradients are not known */
    grads_facts(&f, &m);
    f.backward_passes = 2, f.has_cat_peaks = 1, f.oom_weight = 0, f.oom_new_step = 1;
    f.cat_peak[CAT_GRADIENTS] = 1000 * MiB;
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 0);
    /* every gradient live (accumulated): the request, a weight's, decides */
    grads_facts(&f, &m);
    f.backward_passes = 2, f.has_cat_peaks = 1;
    f.cat_peak[CAT_GRADIENTS] = f.at_oom.bytes[CAT_GRADIENTS];
    assert_int_equal(model_grads_cause(&m, &f, 1800 * MiB), 1);
    assert_non_null(strstr(m.why, "every gradient an earlier backward made (375.0 MiB) was live"));
    assert_non_null(strstr(m.why, "with the request, is"));
    /* the optimizer's state (a later step's), named beside them: kept whatever the micro-batch */
    grads_facts(&f, &m);
    f.at_oom.bytes[CAT_OPTIMIZER] = 100 * MiB;
    assert_int_equal(model_grads_cause(&m, &f, 1900 * MiB), 1);
    assert_non_null(strstr(m.why, "tensors live, the optimizer's state 100.0 MiB, what a micro-"));
    assert_non_null(strstr(m.why, "with the request, is 1.92 GiB: over the card's 1.86 GiB"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fragmentation_eval_cut),
        cmocka_unit_test(test_grads_cause),
        cmocka_unit_test(test_grads_cause_earlier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
