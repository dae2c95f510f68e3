/* test_scriptflags.c — the traced script's own argparse flags (analyzer/model/recognize/
 * scriptflags.c): add_argument calls over several lines with help texts holding commas, brackets
 * and '#', integer defaults and switches, calls in strings and comments not read, a hostile
 * source (unterminated, names too long) bounded; and what they add to a configuration: a default
 * where nothing set the key, the flag advice spells, the checkpointing switch, nothing over an
 * argument's value or for nanoGPT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "scriptflags.h"
#include "vramtrace/trace_format.h"

static const char script[] =
    "\"\"\"train.py — a docstring that shows ap.add_argument('--n-layer', default=99)\"\"\"\n"
    "import argparse\n"
    "ap = argparse.ArgumentParser()\n"
    "# ap.add_argument('--n-head', default=7)\n"
    "ap.add_argument('--batch-size', type=int, default=8,\n"
    "                help='micro-batch (tokens, not samples), see [1] # not a comment')\n"
    "ap.add_argument(\"-a\", \"--grad-accum\", type=lambda s: int(s), default=1)\n"
    "ap.add_argument('--seq-len', type=int, default=None, help=\"default: 1024 (512 for BERT)\")\n"
    "ap.add_argument('--gradient-checkpointing', action=\"store_true\")\n"
    "ap.add_argument('--lr', type=float, default=3e-4)\n"
    "ap.add_argument( '--n-layer' , default = -3 )\n"
    "ap.add_argument(*names)\n"
    "ap.add_argument('--optimizer', choices=['adamw', \"sgd\"], default='adamw')\n"
    "ap.add_argument('--dtype', choices=['fp32', 'bf16'], default='fp32')\n"
    "ap.add_argument('--amp', choices=[\"bf16\", 'fp16', 'none'], default=None)\n"
    "ap.add_argument('--mode', choices=MODES, default=x)\n"
    "ap.add_argument('--dropout', type=float, default=.1)\n";

static int n16(script_flag *f)
{
    return scriptflags_parse(script, sizeof script - 1, f, 16);
}

static void test_parse(void **state)
{
    (void)state;
    script_flag f[16];
    int n = scriptflags_parse(script, sizeof script - 1, f, 16);
    assert_int_equal(n, 11); /* not the docstring's, the comment's or the one with no literal */
    assert_string_equal(f[0].names[0], "--batch-size");
    assert_int_equal(f[0].has_default, 1);
    assert_int_equal(f[0].def, 8);
    assert_int_equal(f[1].nnames, 2);
    assert_string_equal(f[1].names[1], "--grad-accum");
    assert_int_equal(f[1].def, 1);
    assert_int_equal(f[2].has_default, 0); /* None */
    assert_int_equal(f[3].store_true, 1);
    assert_int_equal(f[4].has_default, 0); /* 3e-4: not an integer, a number */
    assert_string_equal(f[4].ndef, "3e-4");
    assert_string_equal(f[0].ndef, "8");
    assert_string_equal(f[2].ndef, "");
    assert_string_equal(f[10].ndef, ".1");
    assert_string_equal(f[5].names[0], "--n-layer");
    assert_int_equal(f[5].def, -3);
    /* a string default, a list of string choices ('\0' after each), none from a name */
    assert_int_equal(n16(f), 11);
    assert_string_equal(f[6].sdef, "adamw");
    assert_memory_equal(f[6].choices, "adamw\0sgd\0", 11);
    assert_memory_equal(f[8].choices, "bf16\0fp16\0none\0", 16);
    assert_string_equal(f[8].sdef, "");
    assert_string_equal(f[9].choices, "");
    assert_string_equal(f[9].sdef, "");
    /* max bounds what is kept */
    assert_int_equal(scriptflags_parse(script, sizeof script - 1, f, 2), 2);
}

static void test_hostile(void **state)
{
    (void)state;
    script_flag f[4];
    /* an unterminated call and string: nothing read past the end (len, not a NUL) */
    static const char cut[] = "p.add_argument('--batch-size', default=4, help='no end";
    assert_int_equal(scriptflags_parse(cut, sizeof cut - 1, f, 4), 1);
    assert_int_equal(scriptflags_parse(cut, 20, f, 4), 0);
    /* a name too long for the table is not kept truncated */
    char big[200];
    snprintf(big, sizeof big, "p.add_argument('--%0100d', default=1)", 0);
    assert_int_equal(scriptflags_parse(big, strlen(big), f, 4), 0);
    assert_int_equal(scriptflags_parse(NULL, 10, f, 4), 0);
    /* -inf and nan are no default a key takes (strtod reads them) */
    static const char inf[] = "p.add_argument('--dropout', type=float, default=-inf)\n"
                              "p.add_argument('--lr', type=float, default=-nan)\n";
    assert_int_equal(scriptflags_parse(inf, sizeof inf - 1, f, 4), 2);
    assert_string_equal(f[0].ndef, "");
    assert_string_equal(f[1].ndef, "");
    assert_int_equal(scriptflags_parse("x.add_argument", 14, f, 4), 0);
}

static void configured(nano_config *c, config_files *files, config_recfile *rf,
                       config_program program)
{
    config_init(c);
    c->program = program;
    if (program != PROG_NANOGPT)
        config_forget_defaults(c);
    *rf = (config_recfile){"examples/train.py", script, sizeof script - 1, 0, VT_FILE_ARG};
    *files = (config_files){1, rf, 1};
    c->files = files;
}

static void test_apply(void **state)
{
    (void)state;
    nano_config c;
    config_files files;
    config_recfile rf;
    const char *const argv[] = {"python", "examples/train.py", "--batch-size", "4"};
    configured(&c, &files, &rf, PROG_ARGPARSE);
    config_apply_flags(&c, 2, argv + 2);
    config_apply_script(&c, 4, argv);
    /* the argument's value and flag stay */
    assert_int_equal(c.v[CFG_batch_size].i, 4);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_ARG);
    /* the script's default, said as such, and its flag for advice */
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 1);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_FILE);
    assert_non_null(
        strstr(c.v[CFG_gradient_accumulation_steps].where, "train.py: --grad-accum, default=1"));
    assert_string_equal(c.v[CFG_gradient_accumulation_steps].flag, "--grad-accum");
    /* default=None: no value, but the flag */
    assert_int_equal(c.v[CFG_block_size].src, CONFIG_SRC_UNKNOWN);
    assert_string_equal(c.v[CFG_block_size].flag, "--seq-len");
    assert_int_equal(c.v[CFG_block_size].flag_sep, ' ');
    /* -3 layers: not a value the model takes (config_set refuses it), no flag either */
    assert_int_equal(c.v[CFG_n_layer].src, CONFIG_SRC_UNKNOWN);
    /* a float key's default: dropout's (type=float) */
    assert_int_equal(c.v[CFG_dropout].src, CONFIG_SRC_FILE);
    assert_true(c.v[CFG_dropout].f > 0.099 && c.v[CFG_dropout].f < 0.101);
    assert_non_null(strstr(c.v[CFG_dropout].where, "train.py: --dropout, default=.1"));
    assert_string_equal(c.v[CFG_dropout].flag, "--dropout");
    /* why a key is unknown: its flag with no number for a default, or no flag at all */
    char why[256];
    assert_string_equal(config_unknown_text(&c, CFG_block_size, why, sizeof why),
                        "its flag --seq-len is not on the command line and has no number for a "
                        "default in the recorded train.py");
    assert_string_equal(config_unknown_text(&c, CFG_n_head, why, sizeof why),
                        "the command line does not give it, and no flag of the recorded train.py "
                        "sets it");
    assert_string_equal(c.ckpt_flag, "--gradient-checkpointing");
    /* the mixed-precision flag with a bf16 choice, not --dtype (the model's own precision) */
    assert_string_equal(c.amp_flag, "--amp bf16");

    /* nanoGPT's configurator: its script's flags are not read */
    configured(&c, &files, &rf, PROG_NANOGPT);
    config_apply_script(&c, 4, argv);
    assert_string_equal(c.ckpt_flag, "");
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_DEFAULT);

    /* a script the trace did not record: nothing */
    const char *const other[] = {"python", "other.py"};
    configured(&c, &files, &rf, PROG_ARGPARSE);
    config_apply_script(&c, 2, other);
    assert_string_equal(c.ckpt_flag, "");
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_UNKNOWN);
    assert_string_equal(config_unknown_text(&c, CFG_block_size, why, sizeof why),
                        "neither the command line nor the trace gives it");
}

/* a script whose --batch is the optimizer's batch: it divides it by --update_every (after a
 * division by a device count, no accumulation); the micro-batch is their quotient, the
 * accumulation --update_every's value, advice spells B through --batch (batch_global). Nothing
 * where the trace disagrees, or the division is no flag's value. */
static const char global[] =
    "ap.add_argument('--batch', type=int, default=256, help='images per optimizer step')\n"
    "ap.add_argument('--update_every', type=int, default=4)\n"
    "ap.add_argument('--world_size', type=int, default=2)\n"
    "ap.add_argument('--n_kv_heads', type=int, default=2)\n"
    "ap.add_argument('--attn_heads', type=int, default=8)\n"
    "a = ap.parse_args()\n"
    "s = 'a.batch // a.update_every'  # a.batch // a.update_every\n"
    "per_gpu = a.batch // a.world_size\n"
    "micro = a.batch // a.update_every\n";

static void global_script(nano_config *c, config_files *files, config_recfile *rf)
{
    config_init(c);
    c->program = PROG_ARGPARSE;
    config_forget_defaults(c);
    *rf = (config_recfile){"examples/gb.py", global, sizeof global - 1, 0, VT_FILE_ARG};
    *files = (config_files){1, rf, 1};
    c->files = files;
}

static void test_global(void **state)
{
    (void)state;
    nano_config c;
    config_files files;
    config_recfile rf;
    const char *const argv[] = {"python", "examples/gb.py", "--batch", "128"};
    global_script(&c, &files, &rf);
    config_apply_flags(&c, 2, argv + 2);
    config_script_global(&c, 4, argv, 0);
    const config_value *b = &c.v[CFG_batch_size], *a = &c.v[CFG_gradient_accumulation_steps];
    assert_int_equal(a->i, 4);
    assert_int_equal(a->src, CONFIG_SRC_FILE);
    assert_string_equal(a->flag, "--update_every");
    assert_non_null(
        strstr(a->where, "line 9 divides --batch by it (micro = a.batch // a.update_every)"));
    assert_int_equal(b->i, 32);
    assert_int_equal(b->src, CONFIG_SRC_ARG);
    assert_string_equal(b->flag, "");
    assert_string_equal(c.batch_global, "--batch");
    assert_int_equal(c.batch_global_v, 128);
    /* the flag is then no micro-batch's: not given to B by the script's flags */
    config_apply_script(&c, 4, argv);
    assert_string_equal(c.v[CFG_batch_size].flag, "");
    assert_int_equal(c.v[CFG_batch_size].i, 32);
    /* the heads' flag by its words (--attn_heads), not a grouped key / value count's */
    assert_int_equal(c.v[CFG_n_head].i, 8);
    assert_string_equal(c.v[CFG_n_head].flag, "--attn_heads");
    /* its default and the command line's value */
    const char *const given[] = {"python", "examples/gb.py", "--update_every=2"};
    global_script(&c, &files, &rf);
    config_script_global(&c, 3, given, 0);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 2);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_ARG);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].flag_sep, '=');
    assert_int_equal(c.v[CFG_batch_size].i, 128);
    assert_int_equal(c.v[CFG_batch_size].src, CONFIG_SRC_FILE);
    assert_non_null(strstr(c.v[CFG_batch_size].where, "--batch 256 (its default)"));
    /* the trace's micro-batch disagrees: nothing read */
    global_script(&c, &files, &rf);
    config_apply_flags(&c, 2, argv + 2);
    config_script_global(&c, 4, argv, 64);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_UNKNOWN);
    assert_string_equal(c.batch_global, "");
    /* ... and the trace's accumulation */
    global_script(&c, &files, &rf);
    config_apply_flags(&c, 2, argv + 2);
    c.v[CFG_gradient_accumulation_steps].i = 2;
    c.v[CFG_gradient_accumulation_steps].src = CONFIG_SRC_TRACE;
    config_script_global(&c, 4, argv, 0);
    assert_string_equal(c.batch_global, "");
    /* the trace's micro-batch, not --batch's default the run took: that flag is not B's */
    const char *const bare[] = {"python", "examples/gb.py"};
    global_script(&c, &files, &rf);
    c.v[CFG_batch_size].i = 16, c.v[CFG_batch_size].src = CONFIG_SRC_TRACE;
    config_apply_script(&c, 2, bare);
    assert_string_equal(c.v[CFG_batch_size].flag, "");
    assert_non_null(strstr(c.v[CFG_batch_size].where, "--batch (its default 256 here) is not the "
                                                      "micro-batch"));
    /* ... nor one the trace showed is another batch (model_batch_seen) */
    global_script(&c, &files, &rf);
    c.v[CFG_batch_size].i = 16, c.v[CFG_batch_size].src = CONFIG_SRC_TRACE;
    snprintf(c.batch_other, sizeof c.batch_other, "--batch");
    c.batch_other_v = 64;
    config_apply_script(&c, 4, argv);
    assert_string_equal(c.v[CFG_batch_size].flag, "");
    /* a division in place or by a call is no flag's value */
    static const char other[] = "ap.add_argument('--batch', type=int, default=256)\n"
                                "ap.add_argument('--update_every', type=int, default=4)\n"
                                "a.batch /= a.update_every\n"
                                "m = a.batch // a.update_every()\n";
    global_script(&c, &files, &rf);
    rf.data = other, rf.len = sizeof other - 1;
    config_script_global(&c, 2, argv, 0);
    assert_string_equal(c.batch_global, "");
}

/* a data-parallel split by a count of devices or processes is no accumulation, whatever the
 * count's name (its parts: ngpus, nprocs, num_processes; they had been "accumulation steps A
 * (--ngpus) 4" and "change: --ngpus 8"); a count of micro-batches is, by any other name */
static void test_global_devices(void **state)
{
    (void)state;
    static const char *const devices[] = {
        "ngpus",       "ngpu",      "gpus",           "num_gpus",      "numgpus",   "n_gpu",
        "nprocs",      "nproc",     "nproc_per_node", "num_processes", "processes", "world_size",
        "dp_size",     "ddp_world", "n_devices",      "devices",       "ndev",      "num_nodes",
        "gpuspernode", "gpu_count", "nworkers",       "fsdp_size",     "tp"};
    static const char *const counts[] = {"update_every", "accum",  "n_micro",      "chunks",
                                         "micro_steps",  "splits", "n_accumulate", "ga"};
    const char *const argv[] = {"python", "examples/gb.py", "--batch", "128"};
    for (size_t d = 0; d < sizeof devices / sizeof *devices + sizeof counts / sizeof *counts; d++) {
        int dev = d < sizeof devices / sizeof *devices;
        const char *name = dev ? devices[d] : counts[d - sizeof devices / sizeof *devices];
        char text[512];
        int n = snprintf(text, sizeof text,
                         "ap.add_argument('--batch', type=int, default=256)\n"
                         "ap.add_argument('--%s', type=int, default=4)\n"
                         "a = ap.parse_args()\n"
                         "micro = a.batch // a.%s\n",
                         name, name);
        nano_config c;
        config_files files;
        config_recfile rf;
        global_script(&c, &files, &rf);
        rf.data = text, rf.len = (size_t)n;
        config_apply_flags(&c, 2, argv + 2);
        config_script_global(&c, 4, argv, 0);
        const config_value *a = &c.v[CFG_gradient_accumulation_steps];
        if (dev != (a->src == CONFIG_SRC_UNKNOWN) || dev != !a->flag[0])
            fail_msg("--%s: accumulation %lld (%s), flag '%s'", name, a->i, a->where, a->flag);
    }
}

/* the script's flags no spelling places are named on the key their words say, with their value
 * on the command line or their default (fairseq's --max-tokens, --encoder-layers, DiT's --depth);
 * a key left unknown names them. Placed flags, switches and string flags are never named. */
static const char fairseq[] =
    "ap.add_argument('--max-tokens', type=int, default=40000)\n"
    "ap.add_argument('--update-freq', type=int, default=1)\n"
    "ap.add_argument('--encoder-layers', type=int, default=12)\n"
    "ap.add_argument('--depth', type=int)\n"
    "ap.add_argument('--encoder-embed-dim', type=int, default=512)\n"
    "ap.add_argument('--encoder-ffn-embed-dim', type=int, default=2048)\n"
    "ap.add_argument('--eval-batch-size', type=int, default=8)\n"
    "ap.add_argument('--blocks-grad', action='store_true')\n"
    "ap.add_argument('--accum_iter', type=int, default=2)\n"
    "ap.add_argument('--model', choices=['gpt2', 'gpt2-medium'], default='gpt2')\n"
    "ap.add_argument('--d_model', type=int, default=768)\n";

static void test_unplaced(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int key;
    } words[] = {{"encoder_layers", CFG_n_layer},
                 {"depth", CFG_n_layer},
                 {"num_blocks", CFG_n_layer},
                 {"layer_decay", -1},
                 {"freeze_layers", -1},
                 {"encoder_layerdrop", -1},
                 {"drop_path", CFG_dropout},
                 {"encoder_embed_dim", CFG_n_embd},
                 {"embedding_dim", CFG_n_embd},
                 {"encoder_ffn_embed_dim", -1},
                 {"lora_dim", -1},
                 {"head_dim", -1},
                 {"encoder_attention_heads", CFG_n_head},
                 {"n_kv_heads", -1},
                 {"max_tokens", CFG_batch_size},
                 {"max_tokens_per_batch", CFG_batch_size},
                 {"max_new_tokens", -1},
                 {"eval_batch_size", -1},
                 {"rollout_batch", CFG_batch_size},
                 {"update_freq", CFG_gradient_accumulation_steps},
                 {"accum_freq", CFG_gradient_accumulation_steps},
                 {"max_source_positions", CFG_block_size},
                 {"max_len", CFG_block_size},
                 {"resolution", CFG_block_size},
                 {"image_size", CFG_block_size},
                 {"input_size", CFG_block_size},
                 {"vocab", CFG_vocab_size},
                 {"lr", -1},
                 {"weight_decay", -1},
                 {"max_update", -1},
                 {"num_workers", -1}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (scriptflags_words_key(words[i].name) != words[i].key)
            fail_msg("--%s: key %d, not %d", words[i].name, scriptflags_words_key(words[i].name),
                     words[i].key);
    static const struct {
        const char *name;
        int model;
    } choice[] = {
        {"model", 1},      {"model_name_or_path", 1}, {"arch", 1},          {"backbone", 1},
        {"model_type", 1}, {"output_dir", 0},         {"teacher_model", 0}, {"ema_model", 0},
        {"model_dim", 0},  {"model_max_length", 0},   {"save_model", 0},    {"lr", 0}};
    for (size_t i = 0; i < sizeof choice / sizeof *choice; i++)
        if (scriptflags_model_choice(choice[i].name) != choice[i].model)
            fail_msg("--%s: a choice of model %d, not %d", choice[i].name,
                     scriptflags_model_choice(choice[i].name), choice[i].model);
    assert_true(scriptflags_token_cap("max_tokens"));
    assert_false(scriptflags_token_cap("max_new_tokens"));
    /* a cap of a pass beside the training, in any of the pass words' forms (namewords.h): a
     * validation's, an inference's, a sampling's cap is no training batch's (these three had
     * been read as the training's, their forms not in this list) */
    assert_false(scriptflags_token_cap("max_validation_tokens"));
    assert_false(scriptflags_token_cap("max_inference_tokens"));
    assert_false(scriptflags_token_cap("sampling_max_tokens"));
    /* a batch flag of a side pass is the pass's, by whole words: "interval" is no "val", a
     * batch sampler no sampling pass (these had been, as substrings) */
    assert_int_equal(config_side_pass_name("eval_batch_size"), 1);
    assert_int_equal(config_side_pass_name("valid_batch_size"), 1);
    assert_int_equal(config_side_pass_name("test_batch_size"), 1);
    assert_int_equal(config_side_pass_name("inference_batch_size"), 1);
    assert_int_equal(config_side_pass_name("batch_size_interval"), 0);
    assert_int_equal(config_side_pass_name("sampler_batch_size"), 0);

    nano_config c;
    config_files files;
    config_recfile rf;
    config_init(&c);
    c.program = PROG_ARGPARSE;
    config_forget_defaults(&c);
    rf = (config_recfile){"examples/fs.py", fairseq, sizeof fairseq - 1, 0, VT_FILE_ARG};
    files = (config_files){1, &rf, 1};
    c.files = &files;
    const char *const argv[] = {"python", "examples/fs.py", "--max-tokens", "8000", "--depth=6"};
    config_apply_flags(&c, 3, argv + 2);
    config_apply_script(&c, 5, argv);
    assert_string_equal(c.v[CFG_batch_size].unplaced,
                        "--max-tokens (8000 on the command line; a cap on tokens by its name)");
    assert_string_equal(c.v[CFG_n_layer].unplaced,
                        "--encoder-layers (default 12; not on the command line), --depth (6 on "
                        "the command line), --model (default gpt2; not on the command line; by "
                        "its name a choice of model)");
    assert_string_equal(c.v[CFG_n_embd].unplaced,
                        "--encoder-embed-dim (default 512; not on the command line), --model "
                        "(default gpt2; not on the command line; by its name a choice of model)");
    /* --accum_iter: a spelling, so placed (its default), --update-freq named beside it */
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].src, CONFIG_SRC_FILE);
    assert_int_equal(c.v[CFG_gradient_accumulation_steps].i, 2);
    assert_string_equal(c.v[CFG_gradient_accumulation_steps].flag, "--accum_iter");
    assert_string_equal(c.v[CFG_gradient_accumulation_steps].unplaced,
                        "--update-freq (default 1; not on the command line)");
    /* --model: by its name a choice of model, under each key of the model's shape (not --d_model,
     * the width's spelling: placed, its default the width) */
    assert_int_equal(c.v[CFG_n_embd].i, 768);
    const char *model = "--model (default gpt2; not on the command line; by its name a choice of "
                        "model)";
    assert_string_equal(c.v[CFG_n_head].unplaced, model);
    assert_string_equal(c.v[CFG_vocab_size].unplaced, model);
    assert_string_equal(c.v[CFG_block_size].unplaced, "");
    char why[512];
    assert_string_equal(config_unknown_text(&c, CFG_n_layer, why, sizeof why),
                        "the recorded fs.py defines --encoder-layers (default 12; not on the "
                        "command line), --depth (6 on the command line), --model (default gpt2; "
                        "not on the command line; by its name a choice of model), flags vramtrace "
                        "does not read as the layers L");
    assert_string_equal(config_unknown_text(&c, CFG_batch_size, why, sizeof why),
                        "the recorded fs.py defines --max-tokens (8000 on the command line; a cap "
                        "on tokens by its name), a flag vramtrace does not read as the micro-batch "
                        "B: under a cap on a batch's tokens, B is the cap over the samples' "
                        "length, and changes as the length does");
    assert_string_equal(config_unknown_text(&c, CFG_block_size, why, sizeof why),
                        "the command line does not give it, and no flag of the recorded fs.py "
                        "sets it");
}

/* a script that sets its accumulation from its batch itself (YOLOv5's train.py): A is its count
 * at the run's B (Python's round, half to even; its floor), the trace's where it agrees, and
 * nothing where it does not (scriptnbs.c) */
static const char yolo[] =
    "parser.add_argument('--batch-size', type=int, default=16, help='total batch size')\n"
    "opt = parser.parse_args()\n"
    "def train(hyp, opt):\n"
    "    epochs, batch_size = opt.epochs, opt.batch_size\n"
    "    nbs = 64  # nominal batch size\n"
    "    accumulate = max(round(nbs / batch_size), 1)  # accumulate loss before optimizing\n"
    "    warm = max(1, np.interp(ni, xi, [1, nbs / batch_size]).round())\n";

static void nominal_case(const char *const *argv, int argc, long long trace_a, long long want)
{
    nano_config c;
    config_files files;
    config_recfile rf;
    config_init(&c);
    c.program = PROG_ARGPARSE;
    config_forget_defaults(&c);
    rf = (config_recfile){"yolov5/train.py", yolo, sizeof yolo - 1, 0, VT_FILE_ARG};
    files = (config_files){1, &rf, 1};
    c.files = &files;
    config_apply_flags(&c, argc - 2, argv + 2);
    if (trace_a)
        c.v[CFG_gradient_accumulation_steps].i = trace_a,
        c.v[CFG_gradient_accumulation_steps].src = CONFIG_SRC_TRACE;
    config_apply_script(&c, argc, argv);
    config_script_nominal(&c, argc, argv);
    const config_value *a = &c.v[CFG_gradient_accumulation_steps];
    assert_int_equal(c.accum_nbs, want ? 64 : 0);
    if (!want)
        return;
    assert_int_equal(c.accum_nbs_floor, 1);
    assert_int_equal(a->i, want);
    assert_int_equal(a->src, trace_a ? CONFIG_SRC_TRACE : CONFIG_SRC_FILE);
    assert_non_null(strstr(a->where, "train.py:6 sets it from --batch-size itself: max(round(nbs / "
                                     "batch_size), 1) = "));
    assert_non_null(strstr(a->where, ", nbs 64"));
}

static void test_nominal(void **state)
{
    (void)state;
    const char *const b24[] = {"python", "yolov5/train.py", "--batch-size", "24"};
    const char *const b128[] = {"python", "yolov5/train.py", "--batch-size", "128"};
    const char *const b40[] = {"python", "yolov5/train.py", "--batch-size=40"};
    const char *const bare[] = {"python", "yolov5/train.py"};
    nominal_case(b24, 4, 0, 3);  /* round(2.67) */
    nominal_case(b128, 4, 0, 1); /* round(0.5) = 0, the floor 1 */
    nominal_case(b40, 3, 0, 2);  /* round(1.6) */
    nominal_case(bare, 2, 0, 4); /* its default 16 */
    nominal_case(b24, 4, 3, 3);  /* the trace agrees */
    nominal_case(b24, 4, 2, 0);  /* the trace shows another count: not this script's rule */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),          cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_apply),          cmocka_unit_test(test_global),
        cmocka_unit_test(test_global_devices), cmocka_unit_test(test_unplaced),
        cmocka_unit_test(test_nominal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
