/* test_model_optim.c — the optimizer a model of a run counts when no step ran to measure it
 * (analyzer/model/advice/model.c, recognize/optim.c): the kinds a script constructs, the most
 * state of them counted and said, and so where its steps made none a GradScaler may have skipped;
 * an --optimizer flag's argparse default; a Trainer script's TrainingArguments(optim=...); a run
 * of forwards only, whatever names one. */
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

/* No step ran and the script constructs optimizers of several kinds: without AdamW among them,
 * the most state of those is counted (SGD's momentum: the trained bytes per element), never
 * AdamW's assumed, and the kinds are said with their lines; with AdamW among them, AdamW's, said
 * the same way. */
static void script_kinds(const char *src, model_result *m)
{
    static config_recfile files[2];
    static config_files fs;
    static const char *const argv[] = {"python3", "fit.py", "--batch_size=16"};
    files[0] = (config_recfile){"fit.py", src, strlen(src), 0, VT_FILE_ARG};
    fs = (config_files){1, files, 1};
    run_facts f;
    oom_facts(&f); /* a script of its own: not nanoGPT's train.py (whose AdamW is known) */
    f.argc = 3, f.argv = argv;
    f.files = &fs;
    static run_recognition rec; /* Python frames recorded, none of nanoGPT's model class */
    memset(&rec, 0, sizeof rec);
    rec.python_frames = 1, rec.optim_bpp = -1;
    f.recog = &rec;
    model_opts o = {0};
    char err[512];
    assert_int_equal(model_build(m, &f, &o, err, sizeof err), 0);
}

static int has_note(const model_result *m, const char *text)
{
    for (int i = 0; i < m->nnotes; i++)
        if (strstr(m->notes[i], text))
            return 1;
    return 0;
}

static void test_script_optimizer_kinds(void **state)
{
    (void)state;
    static model_result m;
    script_kinds("import torch\nif a.fast:\n    opt = torch.optim.Adafactor(p)\nelse:\n"
                 "    opt = torch.optim.SGD(p, momentum=0.9)\n",
                 &m);
    assert_int_equal(m.rec.optim, OPT_UNKNOWN);
    assert_true(m.opt_choice && !m.opt_assumed);
    assert_true(m.shape.opt_set);
    assert_int_equal((int)m.shape.opt_bpp, model_trained_bytes(&m)); /* SGD's momentum */
    assert_true(has_note(&m, "the script constructs several kinds (Adafactor( line 3, SGD( line 5 "
                             "of fit.py): predictions count the most state of them"));
    assert_false(has_note(&m, "AdamW"));
    script_kinds("import torch\nopt = torch.optim.AdamW(p) if a.adam else torch.optim.SGD(p)\n",
                 &m);
    assert_true(m.opt_assumed && !m.opt_choice);
    assert_true(has_note(&m, "the script constructs several kinds (AdamW( line 2, SGD( line 2 of "
                             "fit.py): predictions count the most state of them, AdamW's"));
}

/* Steps that made no state, with a GradScaler on that may have skipped them all (the row and its
 * none measured kept): what the script's optimizers make at the first step not skipped, as where
 * no step ran: the most of several kinds, one kind's own (SGD's momentum, said as none when off);
 * none where the script constructs none, or where no GradScaler leaves the none in doubt. */
static void skipped_steps(const char *src, int skipped, model_family fam, model_result *m)
{
    static config_recfile files[1];
    static config_files fs;
    static const char *const argv[] = {"python3", "fit.py", "--batch_size=16"};
    files[0] = (config_recfile){"fit.py", src, strlen(src), 0, VT_FILE_ARG};
    fs = (config_files){1, files, 1};
    run_facts f;
    oom_facts(&f);
    f.argc = 3, f.argv = argv, f.iterations = 2;
    f.files = &fs;
    static run_recognition rec;
    memset(&rec, 0, sizeof rec);
    rec.python_frames = 1, rec.optim_bpp = 0, rec.steps_maybe_skipped = skipped, rec.family = fam;
    snprintf(rec.optim_where, sizeof rec.optim_where, "no state was made");
    f.recog = &rec;
    model_opts o = {0};
    char err[512];
    assert_int_equal(model_build(m, &f, &o, err, sizeof err), 0);
}

static int optim_noted(const model_result *m)
{
    for (int i = 0; i < m->nnotes; i++)
        if (!strncmp(m->notes[i], OPTIM_NOTE_PREFIX, strlen(OPTIM_NOTE_PREFIX)))
            return 1;
    return 0;
}

static void test_skipped_steps_script(void **state)
{
    (void)state;
    static model_result m;
    skipped_steps("import torch\nopt = torch.optim.SGD(p, momentum=0.9, nesterov=True)\n", 1,
                  FAM_UNKNOWN, &m);
    assert_int_equal(m.rec.optim, OPT_UNKNOWN);
    assert_string_equal(m.rec.optim_where, "no state was made");
    assert_true(m.opt_choice && !m.opt_assumed && m.shape.opt_set);
    assert_int_equal((int)m.shape.opt_bpp, model_trained_bytes(&m)); /* SGD's momentum */
    assert_true(has_note(&m, OPTIM_NOTE_PREFIX
                         ": its 2 optimizer steps made none, with a "
                         "GradScaler on that may have skipped them all, and the script "
                         "constructs one kind (SGD( line 2 of fit.py): predictions count its "
                         "state, "));
    assert_true(has_note(&m, "made by the first step not skipped (SGD's momentum buffer: none "
                             "when momentum is off)"));
    static const char adam_sgd[] = "opt = torch.optim.AdamW(p) if a.adam else torch.optim.SGD(p)\n";
    skipped_steps(adam_sgd, 1, FAM_UNKNOWN, &m);
    assert_true(m.opt_assumed && !m.opt_choice && !m.shape.opt_set);
    assert_true(has_note(&m, "the script constructs several kinds (AdamW( line 1, SGD( line 1 of "
                             "fit.py): predictions count the most state of them, AdamW's"));
    /* no constructor seen (a Trainer's AdamW, built in transformers): AdamW's, said (it had
     * counted none: a GPT-2's 2 skipped fp16 steps would have left 1 GB of state out) */
    skipped_steps("print('no optimizer here')\n", 1, FAM_UNKNOWN, &m);
    assert_true(m.opt_assumed && !m.opt_choice && !m.shape.opt_set);
    assert_true(has_note(&m, "the optimizer's state was not measured: its 2 optimizer steps made "
                             "none, with a GradScaler on that may have skipped them all: "
                             "predictions assume AdamW's 8 B per trainable parameter, made by the "
                             "first step not skipped; an optimizer with less state needs less"));
    skipped_steps("import torch\nopt = torch.optim.AdamW(p)\n", 0, FAM_UNKNOWN, &m); /* measured */
    assert_true(m.shape.opt_set && m.shape.opt_bpp == 0 && !m.opt_choice && !m.opt_assumed);
    assert_int_equal(m.rec.optim_kinds, 0);
    assert_false(optim_noted(&m));
    /* a convolutional network's Adafactor: its kernels' bound (2 states per weight at 1×1), more
     * than SGD's momentum beside it, as a named Adafactor's where no step ran */
    static const char sgd_fac[] = "opt = SGD(p) if a.sgd else Adafactor(p)\n";
    skipped_steps(sgd_fac, 1, FAM_CONVNET, &m);
    assert_true(m.opt_choice && m.shape.opt_bpp == 2.0 * model_trained_bytes(&m));
    skipped_steps(strstr(sgd_fac, "Adafactor"), 1, FAM_CONVNET, &m); /* (alone) */
    assert_true(m.opt_choice && m.shape.opt_bpp == 2.0 * model_trained_bytes(&m));
    assert_true(has_note(&m, "the script constructs one kind (Adafactor( line 1 of fit.py)"));
}

/* No step ran, no --optimizer on the command line: the script's argparse default names it
 * (hf_train.py: default="adamw"), said as the default; SGD's name is not taken (momentum or
 * none), and a value on the command line is the command line's. */
static void test_optimizer_flag_default(void **state)
{
    (void)state;
    static model_result m;
    script_kinds("import argparse\nap = argparse.ArgumentParser()\n"
                 "ap.add_argument('--optimizer', choices=['adamw', 'adafactor'], "
                 "default='adafactor')\nopt = make(ap.parse_args().optimizer)\n",
                 &m);
    assert_int_equal(m.rec.optim, OPT_FACTORED);
    assert_non_null(strstr(m.rec.optim_where, "fit.py: --optimizer, default=\"adafactor\" (its "
                                              "argparse; not on the command line"));
    assert_false(m.opt_assumed);
    script_kinds("import argparse\nap = argparse.ArgumentParser()\n"
                 "ap.add_argument('--optimizer', default='sgd')\n",
                 &m);
    assert_int_equal(m.rec.optim, OPT_UNKNOWN);
}

/* No step ran under the Hugging Face Trainer: the script's own TrainingArguments(optim=...)
 * names it, with its line; optim="sgd" no state (the Trainer's SGD has the learning rate alone);
 * not when two calls disagree, the script assigns args.optim later, the value is no literal,
 * SGD has optim_args (a momentum, in some versions), or the call is no training-arguments
 * call. */
static void test_optimizer_trainargs(void **state)
{
    (void)state;
    static model_result m;
    script_kinds("from transformers import TrainingArguments\nargs = TrainingArguments(\n"
                 "    per_device_train_batch_size=4,\n    optim=\"adafactor\",\n)\n",
                 &m);
    assert_int_equal(m.rec.optim, OPT_FACTORED);
    assert_non_null(strstr(m.rec.optim_where, "fit.py:4 TrainingArguments(optim=\"adafactor\") "
                                              "(the script's own; "));
    script_kinds("args = TrainingArguments(optim='adamw_torch_fused')\n", &m);
    assert_int_equal(m.rec.optim, OPT_ADAM);
    script_kinds("args = TrainingArguments(\n    optim='sgd',\n)\n", &m);
    assert_int_equal(m.rec.optim, OPT_NONE);
    assert_non_null(strstr(m.rec.optim_where, "fit.py:2 TrainingArguments(optim='sgd') (the "
                                              "script's own; the Trainer makes torch.optim.SGD "
                                              "with the learning rate alone: no momentum, no "
                                              "state; "));
    static const char *const unread[] = {
        "a = TrainingArguments(optim='adafactor')\nb = TrainingArguments(optim='adamw_torch')\n",
        "a = TrainingArguments(optim='adafactor')\na.optim = 'adamw_torch'\n",
        "a = TrainingArguments(optim=OPTIM)\n",
        "a = TrainingArguments(optim='sgd', optim_args='momentum=0.9')\n",
        "a = Something(optim='adafactor')\n"};
    for (size_t i = 0; i < sizeof unread / sizeof unread[0]; i++) {
        script_kinds(unread[i], &m);
        assert_int_equal(m.rec.optim, OPT_UNKNOWN);
    }
}

/* No step ran under the Hugging Face Trainer and its command line says --optim sgd
 * (HfArgumentParser's TrainingArguments): no state, as the Trainer's SGD keeps none; not with
 * --optim_args (a momentum), and not in a script of its own loop (its SGD: momentum or none). */
static void cmdline_optim(const char *loop, const char *const *argv, int argc, model_result *m)
{
    run_facts f;
    oom_facts(&f);
    f.argc = argc, f.argv = argv;
    static run_recognition rec;
    memset(&rec, 0, sizeof rec);
    rec.python_frames = 1, rec.optim_bpp = -1;
    snprintf(rec.loop, sizeof rec.loop, "%s", loop);
    f.recog = &rec;
    model_opts o = {0};
    char err[512];
    assert_int_equal(model_build(m, &f, &o, err, sizeof err), 0);
}

static void test_optimizer_trainer_cmdline(void **state)
{
    (void)state;
    static model_result m;
    static const char *const plain[] = {
        "python3", "run_clm.py", "--optim", "sgd", "--per_device_train_batch_size", "4"};
    cmdline_optim("hf_trainer", plain, 6, &m);
    assert_int_equal(m.rec.optim, OPT_NONE);
    assert_non_null(strstr(m.rec.optim_where, "--optim sgd on the command line (the Trainer makes "
                                              "torch.optim.SGD with the learning rate alone: no "
                                              "momentum, no state; "));
    static const char *const args[] = {"python3", "run_clm.py", "--optim=sgd",
                                       "--optim_args=momentum=0.9"};
    cmdline_optim("hf_trainer", args, 4, &m);
    assert_int_equal(m.rec.optim, OPT_SGD);
    cmdline_optim("own", plain, 6, &m);
    assert_int_equal(m.rec.optim, OPT_SGD);
}

/* A run of forwards only (an evaluation) whose command line names an optimizer: the row says
 * the flag and that none ran, not "no step ran: its state not measured" as if one were to come;
 * with no flag, the same words alone, whatever the script constructs. */
static void test_forwards_only_named(void **state)
{
    (void)state;
    static model_result m;
    static config_recfile files[1];
    static config_files fs;
    static const char src[] = "import torch\nopt = torch.optim.Adafactor(p)\n";
    static const char *const named[] = {"python3", "fit.py", "--optimizer", "adafactor"};
    static const char *const bare[] = {"python3", "fit.py"};
    files[0] = (config_recfile){"fit.py", src, strlen(src), 0, VT_FILE_ARG};
    fs = (config_files){1, files, 1};
    for (int with = 1; with >= 0; with--) {
        run_facts f;
        oom_facts(&f);
        f.has_oom = 0, f.no_training = 1, f.oom_phase = f.oom_site = NULL;
        f.argc = with ? 4 : 2, f.argv = with ? named : bare;
        f.files = &fs;
        static run_recognition rec;
        memset(&rec, 0, sizeof rec);
        rec.python_frames = 1, rec.optim_bpp = -1;
        f.recog = &rec;
        model_opts o = {0};
        char err[512];
        assert_int_equal(model_build(&m, &f, &o, err, sizeof err), 0);
        assert_string_equal(m.rec.optim_where,
                            with ? "--optimizer adafactor on the command line (" OPTIM_FORWARDS_ONLY
                                   ")"
                                 : OPTIM_FORWARDS_ONLY);
        assert_true(m.shape.no_training);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_optimizer_kinds),
        cmocka_unit_test(test_skipped_steps_script),
        cmocka_unit_test(test_optimizer_flag_default),
        cmocka_unit_test(test_optimizer_trainargs),
        cmocka_unit_test(test_optimizer_trainer_cmdline),
        cmocka_unit_test(test_forwards_only_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
