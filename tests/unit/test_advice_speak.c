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

/* JSON's two keys from each form the "change:" line takes (advice_cmdline_split) */
static void split_is(const char *cl, const char *want_args, const char *want_code)
{
    char args[320], code[320];
    advice_cmdline_split(cl, args, sizeof args, code, sizeof code);
    assert_string_equal(args, want_args);
    assert_string_equal(code, want_code);
}

static void test_cmdline_split(void **state)
{
    (void)state;
    split_is("", "", "");
    split_is("--batch-size 8 --grad-accum 4", "--batch-size 8 --grad-accum 4", "");
    split_is("--batch_size=8", "--batch_size=8", "");
    split_is("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "");
    split_is("(code change: model.config.use_cache = False before training)", "",
             "model.config.use_cache = False before training");
    split_is("TrainingArguments(per_device_train_batch_size=2, gradient_accumulation_steps=8)", "",
             "TrainingArguments(per_device_train_batch_size=2, gradient_accumulation_steps=8)");
    split_is("Trainer(precision=\"bf16-mixed\")", "", "Trainer(precision=\"bf16-mixed\")");
    /* flags, then a call (advice_flags) */
    split_is("--lr 3; TrainingArguments(per_device_train_batch_size=2)", "--lr 3",
             "TrainingArguments(per_device_train_batch_size=2)");
    /* a flag and the code change beside it, whose words hold "; " (accum_code_change) */
    split_is("--batch-size 32 (code change besides: gradients accumulated over 2 micro-batches "
             "before each optimizer step; a.py defines no flag for it)",
             "--batch-size 32",
             "gradients accumulated over 2 micro-batches before each optimizer step; a.py "
             "defines no flag for it");
    split_is("--b 8 (besides: gradients accumulated over 2 micro-batches, by a code change)",
             "--b 8", "gradients accumulated over 2 micro-batches, by a code change");
    split_is("(gradients accumulated over 2 micro-batches, by a code change)", "",
             "gradients accumulated over 2 micro-batches, by a code change");
    /* a note that nothing else changes (own_accum): no code change */
    split_is("--batch-size 8 (train.py sets its accumulation from the batch itself: "
             "max(round(64 / 8), 1) = 8 micro-batches per optimizer step, nothing else to change)",
             "--batch-size 8", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speak_global),
        cmocka_unit_test(test_cmdline_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
