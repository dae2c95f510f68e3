/* test_trained_unsure.c — where the model the stacks show may not be the one that trains
 * (analyzer/views/model_text.c: model_trained_unsure): most weights take no gradient after a step,
 * or no backward told which train; not LoRA, not forwards only, and not a run whose first backward
 * ran out of memory before it reached every weight (those it had not reached are no frozen ones).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "model_views.h"

static model_result g_m;

/* few: a run whose gradients' elements are frac of its weights' */
static model_result *few(double frac, int iteration0)
{
    memset(&g_m, 0, sizeof g_m);
    g_m.rec.trainable = 37945344;
    g_m.shape.train_frac = frac;
    g_m.shape.iteration0 = iteration0;
    return &g_m;
}

static void test_unsure(void **state)
{
    (void)state;
    /* textual inversion: one embedding of 37.95 M beside a frozen UNet, steps run */
    const char *w = model_trained_unsure(few(0.063, 0));
    assert_non_null(w);
    assert_non_null(strstr(w, "which model's weights train is not known"));
    /* no backward yet, the program freezes weights */
    memset(&g_m, 0, sizeof g_m);
    g_m.shape.none_seen_trained = 1;
    assert_string_equal(model_trained_unsure(&g_m), "no backward ran to tell which weights train");
}

static void test_trained(void **state)
{
    (void)state;
    assert_null(model_trained_unsure(few(0.55, 0))); /* (an Opacus encoder: 55 % train) */
    assert_null(model_trained_unsure(few(0, 0)));    /* (all train: no share set) */
    /* out of memory in its first backward: the weights not reached had no gradient yet */
    assert_null(model_trained_unsure(few(0.38, 1)));
    few(0.01, 0)->rec.feat[FEATURE_LORA].state = FEAT_ON; /* LoRA's adapters are its blocks' */
    assert_null(model_trained_unsure(&g_m));
    few(0.01, 0)->shape.no_training = 1;
    assert_null(model_trained_unsure(&g_m));
    few(0.01, 0)->rec.trainable_lower = 1; /* (at least: the rest may train) */
    assert_null(model_trained_unsure(&g_m));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unsure),
        cmocka_unit_test(test_trained),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
