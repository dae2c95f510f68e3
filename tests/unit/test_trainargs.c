/* test_trainargs.c — a Trainer script's own training arguments (analyzer/model/recognize/
 * trainargs.c): TrainingArguments(...) calls over several lines with nested calls, comments and
 * strings that hold "TrainingArguments(" or commas, dotted and subclass names, a class of that
 * name (not a call), TRL's SFTConfig, a model's *Config (not training arguments), several calls;
 * values that are names or expressions not used, calls that disagree or a later assignment not
 * trusted; what they add to a configuration (a command-line flag wins) and how advice spells a
 * change through them (advice_flags, advice_speak, advice_batch_flags). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advice.h"
#include "advice_speak.h"
#include "trainargs.h"
#include "vramtrace/trace_format.h"

static const char script[] =
    "\"\"\"train.py: TrainingArguments(per_device_train_batch_size=99) in a docstring\"\"\"\n"
    "from transformers import TrainingArguments, Trainer\n"
    "# args = TrainingArguments(per_device_train_batch_size=98)\n"
    "print('TrainingArguments(gradient_accumulation_steps=97)')\n"
    "class MyTrainingArguments(TrainingArguments):\n"
    "    pass\n"
    "def make():\n"
    "    return TrainingArguments(\n"
    "        output_dir=os.path.join('out', \"a, b)\"),  # a comment, with ) and (\n"
    "        per_device_train_batch_size=(2 *\n"
    "                                     2),  # four\n"
    "        gradient_accumulation_steps = 4,\n"
    "        learning_rate=3e-4, warmup_ratio=len([1, 2]) / 10,\n"
    "        bf16=True,\n"
    "        report_to=[\"none\"],\n"
    "        seed=args.seed,\n"
    "        **extra,\n"
    "    )\n"
    "cfg = GPT2Config(n_layer=12, gradient_checkpointing=True)\n"
    "sft = trl.SFTConfig(per_device_train_batch_size=BATCH, max_seq_length=1024)\n"
    "t = transformers.TrainingArguments ('o', gradient_accumulation_steps=4)\n"
    "open = TrainingArguments(per_device_train_batch_size=1\n";

static void test_parse(void **state)
{
    (void)state;
    targs_call c[8];
    int n = trainargs_parse(script, sizeof script - 1, c, 8);
    assert_int_equal(n, 3); /* not the docstring's, comment's, string's, class's, GPT2Config's
                             * nor the one that does not close */
    assert_string_equal(c[0].name, "TrainingArguments");
    assert_int_equal(c[0].line, 8);
    const targs_kw *b = trainargs_find(&c[0], "per_device_train_batch_size");
    assert_non_null(b);
    assert_string_equal(b->value, "(2 * 2)"); /* the line break a blank, the comment dropped */
    assert_int_equal(b->line, 10);
    assert_string_equal(trainargs_find(&c[0], "gradient_accumulation_steps")->value, "4");
    assert_string_equal(trainargs_find(&c[0], "output_dir")->value,
                        "os.path.join('out', \"a, b)\")");
    assert_string_equal(trainargs_find(&c[0], "warmup_ratio")->value, "len([1, 2]) / 10");
    assert_string_equal(trainargs_find(&c[0], "seed")->value, "args.seed");
    assert_null(trainargs_find(&c[0], "extra"));
    assert_int_equal(c[0].nkw, 8);
    assert_string_equal(c[1].name, "trl.SFTConfig");
    assert_string_equal(trainargs_find(&c[1], "per_device_train_batch_size")->value, "BATCH");
    assert_string_equal(c[2].name, "transformers.TrainingArguments");
    assert_int_equal(c[2].nkw, 1); /* the positional output_dir is not a keyword */
    assert_int_equal(trainargs_parse(script, sizeof script - 1, c, 1), 1);
    /* bounded by len, not a NUL; nothing from NULL */
    assert_int_equal(trainargs_parse(script, 60, c, 8), 0);
    assert_int_equal(trainargs_parse(NULL, 10, c, 8), 0);
    /* a value too long for the table is marked, not kept truncated */
    char big[300];
    snprintf(big, sizeof big, "TrainingArguments(per_device_train_batch_size=%0100d)", 4);
    assert_int_equal(trainargs_parse(big, strlen(big), c, 8), 1);
    assert_int_equal(c[0].kw[0].too_long, 1);
}

static void test_assigned(void **state)
{
    (void)state;
    static const char a[] =
        "x = args.gradient_accumulation_steps * 2\n"
        "if args.gradient_accumulation_steps == 4: pass\n"
        "s = '.gradient_accumulation_steps = 3'  # .gradient_accumulation_steps = 2\n"
        "y.gradient_accumulation_steps_x = 1\n"
        "args.gradient_accumulation_steps <= 3\n"
        "args.gradient_accumulation_steps //= 2\n";
    assert_int_equal(trainargs_assigned(a, sizeof a - 1, "gradient_accumulation_steps"), 6);
    assert_int_equal(trainargs_assigned(a, sizeof a - 1, "per_device_train_batch_size"), 0);
    static const char b[] = "args.per_device_train_batch_size = 8\n";
    assert_int_equal(trainargs_assigned(b, sizeof b - 1, "per_device_train_batch_size"), 1);
}

/* a configuration of a non-nanoGPT program whose recorded script is src */
static void configured(nano_config *c, config_files *files, config_recfile *rf, const char *src)
{
    config_init(c);
    c->program = PROG_ARGPARSE;
    config_forget_defaults(c);
    *rf = (config_recfile){"examples/train.py", src, strlen(src), 0, VT_FILE_ARG};
    *files = (config_files){1, rf, 1};
    c->files = files;
}

static int noted(const nano_config *c, const char *what)
{
    for (int i = 0; i < config_notes_kept(c); i++)
        if (strstr(c->warnings[i], what))
            return 1;
    return 0;
}

static void test_apply(void **state)
{
    (void)state;
    nano_config c;
    config_files files;
    config_recfile rf;
    const char *const argv[] = {"python", "examples/train.py", "--per_device_train_batch_size",
                                "16"};
    configured(&c, &files, &rf, script);
    config_apply_trainer_args(&c, 2, argv);
    assert_string_equal(c.targs_call, "TrainingArguments");
    /* two calls give 4: agreed, from the first, its keyword for advice */
    const config_value *a = &c.v[CFG_gradient_accumulation_steps];
    assert_int_equal(a->i, 4);
    assert_int_equal(a->src, CONFIG_SRC_FILE);
    assert_string_equal(a->where, "train.py:12 TrainingArguments(gradient_accumulation_steps=4) "
                                  "(the script's own; its 2 calls agree)");
    assert_string_equal(a->flag, "gradient_accumulation_steps");
    assert_int_equal(a->flag_sep, '(');
    assert_string_equal(a->call, "TrainingArguments");
    /* 2 * 2 in one call, BATCH (a name) in another: not read, said */
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_UNKNOWN);
    assert_true(noted(&c, "trl.SFTConfig(per_device_train_batch_size=BATCH): not a literal"));
    assert_string_equal(c.v[CFG_dtype].s, "bfloat16");
    assert_non_null(strstr(c.v[CFG_dtype].where, "train.py:14 TrainingArguments(bf16=True)"));

    /* the command line wins; the script's value is not its source */
    configured(&c, &files, &rf, "a = TrainingArguments(per_device_train_batch_size=2 * 2)\n");
    config_apply_flags(&c, 2, argv + 2);
    config_apply_trainer_args(&c, 4, argv);
    assert_int_equal(c.v[CFG_batch_size].i, 16);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_ARG);
    assert_string_equal(c.v[CFG_batch_size].flag, "--per_device_train_batch_size");
    /* a name the command line gave the value of: no note about the script's call */
    configured(&c, &files, &rf, "a = TrainingArguments(per_device_train_batch_size=args.bs)\n");
    config_apply_flags(&c, 2, argv + 2);
    config_apply_trainer_args(&c, 4, argv);
    assert_int_equal(c.v[CFG_batch_size].i, 16);
    assert_int_equal(c.nwarnings, 0);
    /* without the flag: the expression's value */
    configured(&c, &files, &rf, "a = TrainingArguments(per_device_train_batch_size=2 * 2)\n");
    config_apply_trainer_args(&c, 2, argv);
    assert_int_equal(c.v[CFG_batch_size].i, 4);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_FILE);

    /* calls that disagree, a later assignment, 0 (out of range): not read, said */
    configured(
        &c, &files, &rf,
        "a = TrainingArguments(per_device_train_batch_size=4, fp16=True)\n"
        "b = TrainingArguments(per_device_train_batch_size=8, gradient_accumulation_steps=0)\n");
    config_apply_trainer_args(&c, 2, argv);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_UNKNOWN);
    assert_true(noted(&c, "per_device_train_batch_size is 4 at line 1 and 8 at line 2"));
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_UNKNOWN);
    assert_true(noted(&c, "out of range"));
    assert_string_equal(c.v[CFG_dtype].s, "float16");
    configured(&c, &files, &rf,
               "a = TrainingArguments(gradient_accumulation_steps=4)\n"
               "a.gradient_accumulation_steps = 8\n");
    config_apply_trainer_args(&c, 2, argv);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_UNKNOWN);
    assert_true(noted(&c, "train.py:2 assigns .gradient_accumulation_steps"));

    /* nanoGPT, or a script the trace did not record: nothing */
    configured(&c, &files, &rf, "a = TrainingArguments(per_device_train_batch_size=4)\n");
    c.program = PROG_NANOGPT;
    config_apply_trainer_args(&c, 2, argv);
    assert_string_equal(c.targs_call, "");
    const char *const other[] = {"python", "other.py"};
    configured(&c, &files, &rf, "a = TrainingArguments(per_device_train_batch_size=4)\n");
    config_apply_trainer_args(&c, 2, other);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_UNKNOWN);
}

static void keyword_of(nano_config *c, config_key k, const char *kw)
{
    snprintf(c->v[k].flag, sizeof c->v[k].flag, "%s", kw);
    c->v[k].flag_sep = '(';
    snprintf(c->v[k].call, sizeof c->v[k].call, "TrainingArguments");
    c->v[k].src = CONFIG_SRC_FILE;
}

/* advice through the script's call: one call with both keywords, never a flag it lacks;
 * checkpointing through the Trainer's own argument */
static void test_speak(void **state)
{
    (void)state;
    nano_config cfg;
    configured(&cfg, &(config_files){0}, &(config_recfile){0}, "");
    keyword_of(&cfg, CFG_batch_size, "per_device_train_batch_size");
    keyword_of(&cfg, CFG_gradient_accumulation_steps, "gradient_accumulation_steps");
    char out[160];
    int keys[2] = {CFG_batch_size, CFG_gradient_accumulation_steps};
    uint64_t vals[2] = {2, 8};
    assert_int_equal(advice_flags(&cfg, 2, keys, vals, out, sizeof out), 1);
    assert_string_equal(out, "TrainingArguments(per_device_train_batch_size=2, "
                             "gradient_accumulation_steps=8)");
    assert_int_equal(advice_flags(&cfg, 2, keys, vals, out, 40), 0); /* never cut short */
    assert_string_equal(out, "");
    /* a flag on the command line and a keyword of the script: both said */
    snprintf(cfg.v[CFG_batch_size].flag, sizeof cfg.v[CFG_batch_size].flag, "--bs");
    cfg.v[CFG_batch_size].flag_sep = ' ';
    assert_int_equal(advice_flags(&cfg, 2, keys, vals, out, sizeof out), 1);
    assert_string_equal(out, "--bs 2; TrainingArguments(gradient_accumulation_steps=8)");
    /* a knob nothing carried: no command line */
    int nl = CFG_n_layer;
    assert_int_equal(advice_flags(&cfg, 1, &nl, vals, out, sizeof out), 0);
    keyword_of(&cfg, CFG_batch_size, "per_device_train_batch_size");

    gpt_shape cur = {.B = 4, .T = 1024, .L = 12, .d = 768, .H = 12, .V = 50257, .A = 4};
    advice_batch_flags(&cfg, &cur, 2, 8, "TrainingArguments", out, sizeof out);
    assert_string_equal(out, "TrainingArguments(per_device_train_batch_size=2, "
                             "gradient_accumulation_steps=8)");
    advice_batch_flags(&cfg, &cur, 2, 4, "TrainingArguments", out, sizeof out);
    assert_string_equal(out, "TrainingArguments(per_device_train_batch_size=2)");

    advice_item it[3];
    memset(it, 0, sizeof it);
    it[0].shape = cur, it[0].shape.B = 2, it[0].shape.A = 8;
    it[1].shape = cur, it[1].shape.checkpointing = 1;
    it[2].shape = cur, it[2].shape.L = 9;
    for (int i = 0; i < 3; i++)
        snprintf(it[i].cmdline, sizeof it[i].cmdline, "--x");
    run_recognition rec;
    memset(&rec, 0, sizeof rec);
    rec.huggingface = 1;
    snprintf(rec.loop, sizeof rec.loop, "hf_trainer");
    advice_speak(it, 3, &cfg, &cur, &rec);
    assert_string_equal(it[0].cmdline, "TrainingArguments(per_device_train_batch_size=2, "
                                       "gradient_accumulation_steps=8)");
    assert_string_equal(it[1].cmdline, "TrainingArguments(gradient_checkpointing=True)");
    assert_string_equal(it[2].cmdline, ""); /* no flag for the blocks */
    /* the script's own call name, and its own switch first */
    snprintf(cfg.targs_call, sizeof cfg.targs_call, "SFTConfig");
    snprintf(it[1].cmdline, sizeof it[1].cmdline, "--x");
    rec.loop[0] = '\0';
    advice_speak(&it[1], 1, &cfg, &cur, &rec);
    assert_string_equal(it[1].cmdline, "SFTConfig(gradient_checkpointing=True)");
    snprintf(cfg.ckpt_flag, sizeof cfg.ckpt_flag, "--gc");
    advice_speak(&it[1], 1, &cfg, &cur, &rec);
    assert_string_equal(it[1].cmdline, "--gc");
}

/* predict's recommendation in an argparse script with no flag for the accumulation: its
 * micro-batch flag and the code change, as the report's what-ifs word it (advice_speak) */
static void test_batch_code_change(void **state)
{
    (void)state;
    nano_config cfg;
    configured(&cfg, &(config_files){0}, &(config_recfile){0}, "");
    cfg.program = PROG_UNKNOWN;
    snprintf(cfg.v[CFG_batch_size].flag, sizeof cfg.v[CFG_batch_size].flag, "--batch-size");
    cfg.v[CFG_batch_size].flag_sep = ' ';
    snprintf(cfg.script_read, sizeof cfg.script_read, "sim_gan.py");
    gpt_shape cur = {.B = 2560, .A = 1};
    char out[160];
    advice_batch_flags(&cfg, &cur, 1280, 2, NULL, out, sizeof out);
    const char *said = "--batch-size 1280 (code change besides: gradients accumulated over 2 "
                       "micro-batches before each optimizer step; sim_gan.py defines no flag for "
                       "it)";
    assert_string_equal(out, said);
    /* the report's what-if for the same change: the same words */
    advice_item it;
    memset(&it, 0, sizeof it);
    it.shape = cur, it.shape.B = 1280, it.shape.A = 2;
    snprintf(it.cmdline, sizeof it.cmdline, "--x");
    advice_speak(&it, 1, &cfg, &cur, NULL);
    assert_string_equal(it.cmdline, said);
    /* the accumulation unchanged: the flag alone */
    advice_batch_flags(&cfg, &cur, 1280, 1, NULL, out, sizeof out);
    assert_string_equal(out, "--batch-size 1280");
    /* a training-arguments call carries it, or no script was read: nothing said */
    advice_batch_flags(&cfg, &cur, 1280, 2, "TrainingArguments", out, sizeof out);
    assert_string_equal(out, "");
    cfg.script_read[0] = '\0';
    advice_batch_flags(&cfg, &cur, 1280, 2, NULL, out, sizeof out);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_assigned),
        cmocka_unit_test(test_apply),
        cmocka_unit_test(test_speak),
        cmocka_unit_test(test_batch_code_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
