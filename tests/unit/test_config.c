/* test_config.c — nanoGPT configuration parsing (analyzer/config.c): defaults, config files
 * with arithmetic and non-literals, --key=value overrides in order, bad values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "vramtrace/trace_format.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/vt-test-config.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_defaults(void **state)
{
    (void)state;
    nano_config c;
    config_init(&c);
    assert_int_equal(c.v[CFG_batch_size].i, 12);
    assert_int_equal(c.v[CFG_block_size].i, 1024);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 40);
    assert_int_equal(c.v[CFG_n_layer].i, 12);
    assert_int_equal(c.v[CFG_n_embd].i, 768);
    assert_int_equal(c.v[CFG_vocab_size].i, 50304);
    assert_int_equal(c.v[CFG_bias].i, 0);
    assert_int_equal(c.v[CFG_compile].i, 1);
    assert_string_equal(c.v[CFG_dtype].s, "bfloat16");
    assert_true(c.v[CFG_dropout].f == 0.0);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_DEFAULT);
    assert_int_equal(config_dtype_bytes(&c), 2);
}

/* A config file like nanoGPT's config/train_gpt2.py, then overrides on the command line. */
static void test_file_and_overrides(void **state)
{
    (void)state;
    write_file("train_gpt2.py", "# config for training GPT-2 (124M)\n"
                                "wandb_log = True\n"
                                "wandb_run_name = 'gpt2-124M' + str(time.time())\n"
                                "import time\n"
                                "batch_size = 12\n"
                                "block_size = 1024\n"
                                "gradient_accumulation_steps = 5 * 8   # 40\n"
                                "max_iters = 600000\n"
                                "n_embd = 1024*12//16   # 768\n"
                                "dropout = 0.1\n"
                                "dtype = 'float16'\n"
                                "if True:\n"
                                "    batch_size = 99\n"
                                "compile = False\n"
                                "lr_decay_iters = max_iters\n");
    nano_config c;
    config_init(&c);
    char err[512] = "";
    const char *argv[] = {"train_gpt2.py", "--batch_size=16", "--gradient_accumulation_steps=32",
                          "--compile=True", "--eval_iters=20"};
    assert_int_equal(config_apply_args(&c, 5, argv, dir, CONFIG_SRC_ARG, 1, err, sizeof err), 0);
    assert_int_equal(c.v[CFG_batch_size].i, 16);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_ARG);
    assert_string_equal(c.v[CFG_batch_size].where, "--batch_size=16");
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 32);
    assert_int_equal(c.v[CFG_n_embd].i, 768);
    assert_int_equal(c.v[CFG_n_embd].src, CONFIG_SRC_FILE);
    assert_string_equal(c.v[CFG_n_embd].where, "train_gpt2.py:9");
    assert_true(c.v[CFG_dropout].f > 0.099 && c.v[CFG_dropout].f < 0.101);
    assert_string_equal(c.v[CFG_dtype].s, "float16");
    assert_int_equal(c.v[CFG_compile].i, 1);
    assert_int_equal(c.v[CFG_n_layer].src, CONFIG_SRC_DEFAULT);
    assert_int_equal(c.nfiles, 1);
    char buf[32];
    assert_string_equal(config_value_text(&c, CFG_dropout, buf, sizeof buf), "0.1");
    assert_string_equal(config_value_text(&c, CFG_compile, buf, sizeof buf), "True");

    /* order matters: an override before the file is overridden by the file */
    config_init(&c);
    const char *argv2[] = {"--batch_size=4", "train_gpt2.py"};
    assert_int_equal(config_apply_args(&c, 2, argv2, dir, CONFIG_SRC_ARG, 1, err, sizeof err), 0);
    assert_int_equal(c.v[CFG_batch_size].i, 12);
}

static void test_arithmetic(void **state)
{
    (void)state;
    write_file("arith.py", "n_layer = 2 ** 3\n"
                           "n_head = (3 + 1) * 2\n"
                           "n_embd = n_head * 64\n"
                           "block_size = 1_024 // 4\n"
                           "dropout = 1 / 5\n"
                           "batch_size = -(-7) % 5\n"
                           "bias = True # comment\n"
                           "vocab_size = 65\n"
                           "\"\"\"a docstring\n"
                           "batch_size = 999\n"
                           "\"\"\"\n"
                           "'''one-line''' \n");
    nano_config c;
    config_init(&c);
    char err[512] = "";
    assert_int_equal(config_apply_file(&c, "arith.py", dir, err, sizeof err), 0);
    assert_int_equal(c.v[CFG_n_layer].i, 8);
    assert_int_equal(c.v[CFG_n_head].i, 8);
    assert_int_equal(c.v[CFG_n_embd].i, 512);
    assert_int_equal(c.v[CFG_block_size].i, 256);
    assert_true(c.v[CFG_dropout].f > 0.199 && c.v[CFG_dropout].f < 0.201);
    assert_int_equal(c.v[CFG_batch_size].i, 2);
    assert_int_equal(c.v[CFG_bias].i, 1);
    assert_int_equal(c.v[CFG_vocab_size].i, 65);
    assert_int_equal(config_validate(&c, err, sizeof err), 0);

    /* an over-long line (a comment here) is skipped whole, not read on as a second line */
    char longline[1100];
    memset(longline, ' ', sizeof longline);
    longline[0] = '#';
    snprintf(longline + 1023, sizeof longline - 1023, "batch_size = 3\nn_layer = 5\n");
    write_file("long.py", longline);
    config_init(&c);
    assert_int_equal(config_apply_file(&c, "long.py", dir, err, sizeof err), 0);
    assert_int_equal(c.v[CFG_n_layer].i, 5);
    assert_int_equal(c.v[CFG_batch_size].i, 12);
}

static void test_bad_values(void **state)
{
    (void)state;
    nano_config c;
    config_init(&c);
    char err[512] = "";
    assert_int_equal(
        config_set(&c, "batch_size", "8.5", CONFIG_SRC_FLAG, "--batch_size=8.5", err, sizeof err),
        -1);
    assert_non_null(strstr(err, "batch_size"));
    assert_non_null(strstr(err, "integer"));
    assert_int_equal(c.v[CFG_batch_size].i, 12); /* unchanged after failure */
    assert_int_equal(config_set(&c, "batch_size", "0", CONFIG_SRC_FLAG, "x", err, sizeof err), -1);
    /* each integer's largest (config.h): 2^24 samples, tokens, micro-steps or vocabulary
     * entries, 2^16 blocks or heads, 2^20 widths; one past it is refused and says the bound */
    static const struct {
        const char *key, *most, *past;
    } bound[] = {{"batch_size", "16777216", "16777217"},
                 {"block_size", "16777216", "16777217"},
                 {"gradient_accumulation_steps", "16777216", "16777217"},
                 {"vocab_size", "16777216", "16777217"},
                 {"n_layer", "65536", "65537"},
                 {"n_head", "65536", "65537"},
                 {"n_embd", "1048576", "1048577"}};
    for (size_t i = 0; i < sizeof bound / sizeof bound[0]; i++) {
        err[0] = '\0';
        assert_int_equal(
            config_set(&c, bound[i].key, bound[i].past, CONFIG_SRC_FLAG, "x", err, sizeof err), -1);
        assert_non_null(strstr(err, "out of range"));
        assert_non_null(strstr(err, bound[i].most));
        assert_int_equal(
            config_set(&c, bound[i].key, bound[i].most, CONFIG_SRC_FLAG, "x", err, sizeof err), 0);
        assert_int_equal(c.v[config_find_key(bound[i].key)].i, strtoll(bound[i].most, NULL, 10));
    }
    config_init(&c);
    assert_int_equal(config_set(&c, "dropout", "1.5", CONFIG_SRC_FLAG, "x", err, sizeof err), -1);
    assert_int_equal(config_set(&c, "dtype", "int8", CONFIG_SRC_FLAG, "x", err, sizeof err), -1);
    assert_non_null(strstr(err, "float32"));
    assert_int_equal(config_set(&c, "compile", "maybe", CONFIG_SRC_FLAG, "x", err, sizeof err), -1);
    assert_int_equal(config_set(&c, "dtype", "fp16", CONFIG_SRC_FLAG, "x", err, sizeof err), 0);
    assert_string_equal(c.v[CFG_dtype].s, "float16");
    assert_int_equal(config_set(&c, "dropout", "0", CONFIG_SRC_FLAG, "x", err, sizeof err), 0);
    assert_int_equal(config_set(&c, "no_such_key", "1", CONFIG_SRC_FLAG, "x", err, sizeof err), 1);

    /* strict: unknown keys and missing files are errors; lenient: warnings */
    const char *argv[] = {"--learning_rat=3", "missing.py"};
    assert_int_equal(config_apply_args(&c, 1, argv, dir, CONFIG_SRC_ARG, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "learning_rat"));
    assert_int_equal(config_apply_args(&c, 1, argv + 1, dir, CONFIG_SRC_ARG, 1, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "missing.py"));
    config_init(&c);
    assert_int_equal(config_apply_args(&c, 2, argv, dir, CONFIG_SRC_ARG, 0, err, sizeof err), 0);
    assert_int_equal(c.nwarnings, 2);

    /* a bad value inside a file is an error when strict, naming file and line; lenient (a
     * traced command line): a note naming them, the file's other lines still apply */
    write_file("bad.py", "batch_size = 16\nn_layer = 'twelve'\nn_head = 6\n");
    config_init(&c);
    const char *argv2[] = {"bad.py"};
    assert_int_equal(config_apply_args(&c, 1, argv2, dir, CONFIG_SRC_ARG, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad.py:2"));
    config_init(&c);
    assert_int_equal(config_apply_args(&c, 1, argv2, dir, CONFIG_SRC_ARG, 0, err, sizeof err), 0);
    assert_int_equal(c.nwarnings, 1);
    assert_non_null(strstr(c.warnings[0], "bad.py:2"));
    assert_int_equal(c.v[CFG_batch_size].i, 16);
    assert_int_equal(c.v[CFG_n_head].i, 6);
    assert_int_equal(c.v[CFG_n_layer].i, 12);

    /* a traced --key=value the model cannot use is a note; the value before it stays */
    const char *argv3[] = {"--dtype=fp8", "--batch_size=auto", "--block_size=256"};
    config_init(&c);
    assert_int_equal(config_apply_args(&c, 3, argv3, dir, CONFIG_SRC_ARG, 0, err, sizeof err), 0);
    assert_int_equal(c.nwarnings, 2);
    assert_non_null(strstr(c.warnings[0], "fp8"));
    assert_non_null(strstr(c.warnings[1], "auto"));
    assert_string_equal(c.v[CFG_dtype].s, "bfloat16");
    assert_int_equal(c.v[CFG_batch_size].i, 12);
    assert_int_equal(c.v[CFG_block_size].i, 256);
    assert_int_equal(config_apply_args(&c, 3, argv3, dir, CONFIG_SRC_ARG, 1, err, sizeof err), -1);

    /* files an untrusted trace names: only regular files are read (a FIFO, /dev/zero: not) */
    char fifo[400];
    snprintf(fifo, sizeof fifo, "%s/fifo.py", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    config_init(&c);
    assert_int_equal(config_apply_file(&c, "fifo.py", dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));
    assert_int_equal(config_apply_file(&c, "/dev/zero", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));

    config_init(&c);
    assert_int_equal(config_set(&c, "n_head", "7", CONFIG_SRC_FLAG, "x", err, sizeof err), 0);
    assert_int_equal(config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "divisible"));
}

static void test_cmdline(void **state)
{
    (void)state;
    write_file("small.py", "n_layer = 6\nn_head = 6\nn_embd = 384\nblock_size = 512\n");
    nano_config c;
    config_init(&c);
    char err[512] = "";
    const char *argv[] = {"python3",         "-u",           "train.py", "small.py",
                          "--batch_size=16", "--device=cuda"};
    assert_int_equal(config_from_cmdline(&c, 6, argv, dir, err, sizeof err), 0);
    assert_int_equal(c.v[CFG_n_layer].i, 6);
    assert_int_equal(c.v[CFG_block_size].i, 512);
    assert_int_equal(c.v[CFG_batch_size].i, 16);
    assert_int_equal(c.nwarnings, 0);
    /* no .py script (a simulation binary): everything after argv[0] */
    config_init(&c);
    const char *argv2[] = {"./gpt_sim", "--batch_size=8", "--gradient_accumulation_steps=64"};
    assert_int_equal(config_from_cmdline(&c, 3, argv2, dir, err, sizeof err), 0);
    assert_int_equal(c.v[CFG_batch_size].i, 8);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 64);
}

static void test_program_kinds(void **state)
{
    (void)state;
    nano_config c;
    char err[512] = "";
    /* argparse, values as separate words: "4" is never a config file */
    config_init(&c);
    const char *a1[] = {"python3",        "hf_train.py", "--model",   "gpt2",
                        "--batch-size",   "4",           "--seq-len", "512",
                        "--grad-accum=2", "--amp",       "fp16",      "--compile"};
    assert_int_equal(config_from_cmdline(&c, 12, a1, dir, err, sizeof err), 0);
    assert_int_equal(c.program, PROG_ARGPARSE);
    assert_int_equal(c.v[CFG_batch_size].i, 4);
    assert_string_equal(c.v[CFG_batch_size].flag, "--batch-size");
    assert_int_equal(c.v[CFG_batch_size].flag_sep, ' ');
    assert_int_equal(c.v[CFG_block_size].i, 512);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 2);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].flag_sep, '=');
    assert_string_equal(c.v[CFG_dtype].s, "float16");
    assert_int_equal(c.v[CFG_compile].i, 1);
    assert_int_equal(c.v[CFG_compile].src, CONFIG_SRC_ARG);
    assert_int_equal(c.v[CFG_n_layer].src, CONFIG_SRC_DEFAULT);
    assert_int_equal(c.nfiles, 0);
    assert_int_equal(c.nwarnings, 0);
    /* a precision switch turned off is no dtype, and no bad one: the trace tells */
    config_init(&c);
    const char *aoff[] = {"python3", "t.py", "--amp", "none", "--batch-size", "2"};
    assert_int_equal(config_from_cmdline(&c, 6, aoff, dir, err, sizeof err), 0);
    assert_int_not_equal(c.v[CFG_dtype].src, CONFIG_SRC_ARG);
    assert_int_equal(c.v[CFG_batch_size].i, 2); /* "none" is its value, not a positional */
    assert_int_equal(c.nwarnings, 1);
    assert_non_null(strstr(c.warnings[0], "no autocast"));
    assert_null(strstr(c.warnings[0], "unknown"));
    /* Accelerate's spelling: --mixed_precision bf16 | no */
    config_init(&c);
    const char *acc[] = {"python3", "t.py", "--mixed_precision", "bf16"};
    assert_int_equal(config_from_cmdline(&c, 4, acc, dir, err, sizeof err), 0);
    assert_string_equal(c.v[CFG_dtype].s, "bfloat16");
    config_init(&c);
    acc[3] = "no";
    assert_int_equal(config_from_cmdline(&c, 4, acc, dir, err, sizeof err), 0);
    assert_int_not_equal(c.v[CFG_dtype].src, CONFIG_SRC_ARG);
    /* Lightning's precision words: the compute dtype they mean */
    static const char *const lit[][2] = {{"bf16-mixed", "bfloat16"},
                                         {"16-mixed", "float16"},
                                         {"32-true", "float32"},
                                         {"32", "float32"},
                                         {"bf16-true", "bfloat16"}};
    for (size_t i = 0; i < sizeof lit / sizeof lit[0]; i++) {
        config_init(&c);
        const char *a5[] = {"python3", "t.py", "--precision", lit[i][0]};
        assert_int_equal(config_from_cmdline(&c, 4, a5, dir, err, sizeof err), 0);
        assert_string_equal(c.v[CFG_dtype].s, lit[i][1]);
        assert_int_equal(c.nwarnings, 0);
    }
    /* --batch=8: argparse spelling even with '=' */
    config_init(&c);
    const char *a2[] = {"python3", "t.py", "--batch=8"};
    assert_int_equal(config_from_cmdline(&c, 3, a2, dir, err, sizeof err), 0);
    assert_int_equal(c.program, PROG_ARGPARSE);
    assert_int_equal(c.v[CFG_batch_size].i, 8);
    /* Hugging Face Trainer */
    config_init(&c);
    const char *a3[] = {"python3",
                        "run_clm.py",
                        "--model_name_or_path",
                        "gpt2",
                        "--per_device_train_batch_size",
                        "6",
                        "--gradient_accumulation_steps",
                        "3",
                        "--block_size",
                        "256",
                        "--bf16",
                        "--torch_compile",
                        "True",
                        "--output_dir",
                        "out"};
    assert_int_equal(config_from_cmdline(&c, 15, a3, dir, err, sizeof err), 0);
    assert_int_equal(c.program, PROG_HF_TRAINER);
    assert_int_equal(c.v[CFG_batch_size].i, 6);
    assert_string_equal(c.v[CFG_batch_size].flag, "--per_device_train_batch_size");
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 3);
    assert_int_equal(c.v[CFG_block_size].i, 256);
    assert_string_equal(c.v[CFG_dtype].s, "bfloat16");
    assert_int_equal(c.v[CFG_compile].i, 1);
    /* nanoGPT: --key=value, flag recorded with '=' */
    config_init(&c);
    const char *a4[] = {"python3", "train.py", "--batch_size=16", "--compile=False"};
    assert_int_equal(config_from_cmdline(&c, 4, a4, dir, err, sizeof err), 0);
    assert_int_equal(c.program, PROG_NANOGPT);
    assert_int_equal(c.v[CFG_batch_size].i, 16);
    assert_string_equal(c.v[CFG_batch_size].flag, "--batch_size");
    assert_int_equal(c.v[CFG_batch_size].flag_sep, '=');
    assert_int_equal(c.v[CFG_compile].i, 0);
}

/* the recorded script decides an empty command line's kind: a configurator it runs (upstream's
 * exec, an import) is nanoGPT's; the word in a docstring or a comment is not */
static void test_program_source(void **state)
{
    (void)state;
    static const struct {
        const char *src;
        config_program want;
    } cases[] = {
        {"exec(open('configurator.py').read()) # overrides\nbatch_size = 12\n", PROG_NANOGPT},
        {"from configurator import parse_config\n", PROG_NANOGPT},
        {"\"\"\"minGPT's layout: no configurator here.\"\"\"\nimport argparse\n"
         "ap.add_argument('--steps', type=int)\n",
         PROG_ARGPARSE},
        {"\"\"\"A loop\nthat needs no configurator\n\"\"\"\n# exec(open('configurator.py'))\n"
         "ap.add_argument('--steps')\n",
         PROG_ARGPARSE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        config_recfile f = {
            .name = "t.py", .data = cases[i].src, .len = strlen(cases[i].src), .kind = VT_FILE_ARG};
        config_files fs = {1, &f, 1};
        nano_config c;
        config_init(&c);
        c.files = &fs;
        char err[256] = "";
        const char *argv[] = {"python3", "t.py"};
        assert_int_equal(config_from_cmdline(&c, 2, argv, dir, err, sizeof err), 0);
        assert_int_equal(c.program, cases[i].want);
    }
}

/* Nothing said is lost: a line too long to read is a note, and notes past what is kept are
 * counted; unknown values are unknown, never nanoGPT's defaults (config_forget_defaults). */
static void test_notes_and_unknown(void **state)
{
    (void)state;
    nano_config c;
    config_init(&c);
    char longline[3000];
    memset(longline, 'a', sizeof longline - 1);
    longline[sizeof longline - 1] = '\0';
    char text[3200];
    snprintf(text, sizeof text, "batch_size = 4\nx = '%s'\nblock_size = 256\n", longline);
    write_file("long.py", text);
    char err[512], path[512];
    snprintf(path, sizeof path, "%s/long.py", dir);
    assert_int_equal(config_apply_file(&c, path, NULL, err, sizeof err), 0);
    assert_int_equal(c.v[CFG_block_size].i, 256); /* the line after it is read */
    assert_int_equal(c.nwarnings, 1);
    assert_non_null(strstr(c.warnings[0], ":2: a line of more than 1023 characters"));
    for (int i = 0; i < CONFIG_NOTES_MAX + 5; i++)
        config_note(&c, "n");
    assert_int_equal(c.nwarnings, CONFIG_NOTES_MAX + 6);
    assert_int_equal(config_notes_kept(&c), CONFIG_NOTES_MAX);

    config_init(&c);
    config_set(&c, "n_embd", "1024", CONFIG_SRC_ARG, "--n_embd=1024", err, sizeof err);
    config_forget_defaults(&c);
    assert_int_equal(c.v[CFG_n_embd].i, 1024);
    assert_false(config_known(&c, CFG_n_head));
    assert_int_equal(c.v[CFG_n_head].i, 0);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_UNKNOWN);
    char buf[32];
    assert_string_equal(config_value_text(&c, CFG_batch_size, buf, sizeof buf), "unknown");
    assert_int_equal(config_dtype_bytes(&c), 0);
    /* width 1024 and unknown heads: nothing to contradict */
    assert_int_equal(config_validate(&c, err, sizeof err), 0);
}

/* how text names a key: nanoGPT's config key for nanoGPT alone; for another program the
 * label, with its own flag (or its call's keyword) beside it where known; refusals alike */
static void test_key_names(void **state)
{
    (void)state;
    nano_config c;
    char err[512] = "", buf[160];
    config_init(&c); /* nanoGPT: its keys, flags or not */
    const char *n[] = {"python3", "train.py", "--batch_size=8"};
    assert_int_equal(config_from_cmdline(&c, 3, n, dir, err, sizeof err), 0);
    assert_int_equal(c.program, PROG_NANOGPT);
    assert_string_equal(config_key_said(&c, CFG_batch_size, buf, sizeof buf), "batch_size");
    assert_string_equal(config_key_said(&c, CFG_n_embd, buf, sizeof buf), "n_embd");
    assert_string_equal(config_key_word(&c, CFG_block_size), "block_size");
    config_init(&c); /* an argparse script: the label, its flag where one carried the value */
    const char *a[] = {"python3", "hf_train.py", "--batch-size", "4", "--grad_accum=2"};
    assert_int_equal(config_from_cmdline(&c, 5, a, dir, err, sizeof err), 0);
    assert_int_equal(c.program, PROG_ARGPARSE);
    assert_string_equal(config_key_said(&c, CFG_batch_size, buf, sizeof buf),
                        "micro-batch B (--batch-size)");
    assert_string_equal(config_key_said(&c, CFG_gradient_accumulation_steps, buf, sizeof buf),
                        "accumulation steps A (--grad_accum)");
    assert_string_equal(config_key_said(&c, CFG_block_size, buf, sizeof buf),
                        "tokens per sample T");
    assert_string_equal(config_key_said(&c, CFG_compile, buf, sizeof buf), "torch.compile");
    assert_string_equal(config_key_word(&c, CFG_batch_size), "micro-batch B");
    /* a keyword of the script's call */
    snprintf(c.v[CFG_batch_size].flag, sizeof c.v[CFG_batch_size].flag,
             "per_device_train_batch_size");
    c.v[CFG_batch_size].flag_sep = '(';
    snprintf(c.v[CFG_batch_size].call, sizeof c.v[CFG_batch_size].call, "TrainingArguments");
    assert_string_equal(config_key_said(&c, CFG_batch_size, buf, sizeof buf),
                        "micro-batch B (per_device_train_batch_size=)");
    /* every key has its label; the notes and refusals of another program name it so */
    static const char *const labels[CFG_COUNT] = {"micro-batch B",
                                                  "tokens per sample T",
                                                  "accumulation steps A",
                                                  "layers L",
                                                  "attention heads H",
                                                  "width d",
                                                  "vocabulary V",
                                                  "dropout",
                                                  "bias",
                                                  "dtype",
                                                  "torch.compile"};
    for (int k = 0; k < CFG_COUNT; k++)
        assert_string_equal(config_key_label((config_key)k), labels[k]);
    config_note_key(&c, CFG_n_head, " unknown");
    assert_string_equal(c.warnings[c.nwarnings - 1], "attention heads H unknown");
    config_set(&c, "n_embd", "768", CONFIG_SRC_ARG, "--hidden 768", err, sizeof err);
    config_set(&c, "n_head", "7", CONFIG_SRC_ARG, "--heads 7", err, sizeof err);
    assert_int_equal(config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "width d = 768 is not divisible by attention heads H = 7"));
    assert_null(strstr(err, "nanoGPT"));
    assert_int_equal(
        config_set(&c, "batch_size", "x8", CONFIG_SRC_ARG, "--batch-size x8", err, sizeof err), -1);
    assert_string_equal(err, "--batch-size x8: micro-batch B = x8 is not an integer (give a whole "
                             "number)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_file_and_overrides),
        cmocka_unit_test(test_arithmetic),     cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_cmdline),        cmocka_unit_test(test_program_kinds),
        cmocka_unit_test(test_program_source), cmocka_unit_test(test_notes_and_unknown),
        cmocka_unit_test(test_key_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
