/* test_advice_speak.c — the advice in the words of a script whose batch flag is the optimizer's
 * batch (analyzer/model/advice/advice_speak.c with nano_config.batch_global). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"
#include "advice_speak.h"
#include "advice_shape.h"

#define MiB (1024ull * 1024ull)
#define RTX4070 (12282ull * MiB)

/* A script whose batch flag is the optimizer's batch (--batch 256 divided by --update_every 4,
 * config_script_global): a micro-batch change at the same effective batch is the accumulation
 * flag alone, one that halves the effective batch --batch at B'·A; never --batch as if it were
 * the micro-batch (`--batch 128` had been advised as "keeping the effective batch"). */
static void test_speak_global(void **state)
{
    (void)state;
    nano_config cfg;
    config_init(&cfg);
    cfg.program = PROG_ARGPARSE;
    snprintf(cfg.batch_global, sizeof cfg.batch_global, "--batch");
    cfg.batch_global_v = 256;
    cfg.v[CFG_batch_size].i = 64, cfg.v[CFG_batch_size].src = CONFIG_SRC_ARG;
    config_value *a = &cfg.v[CFG_gradient_accumulation_steps];
    a->i = 4, a->src = CONFIG_SRC_FILE, a->flag_sep = ' ';
    snprintf(a->flag, sizeof a->flag, "--update_every");
    model_calib c;
    gpt_shape cur = gpt2(64, 4);
    cur.A = 4;
    advice_calib_default(&c, &cur);
    advice_item items[ADVICE_MAX];
    int n = advice_candidates(&c, &cur, RTX4070, 0, 0, 0, items, ADVICE_MAX);
    advice_speak(items, n, &cfg, &cur, NULL);
    int same = 0, half = 0;
    for (int i = 0; i < n; i++) {
        const gpt_shape *s = &items[i].shape;
        if (s->B == cur.B || s->T != cur.T || s->L != cur.L || s->d != cur.d)
            continue;
        char want[64];
        if (s->B * s->A == 256) {
            snprintf(want, sizeof want, "--update_every %llu", (unsigned long long)s->A);
            same++;
        } else {
            assert_int_equal(s->A, 4);
            snprintf(want, sizeof want, "--batch %llu", (unsigned long long)(s->B * 4));
            half++;
        }
        assert_string_equal(items[i].cmdline, want);
    }
    assert_true(same >= 1 && half >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speak_global),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
