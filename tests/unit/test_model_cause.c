/* test_model_cause.c — the cause a model of a run gives its out-of-memory failure
 * (analyzer/model/advice/model_notes.c, model_cause_cache): fragmentation blamed for a pass cut
 * short is hedged for that pass. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fragmentation_eval_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
