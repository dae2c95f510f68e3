/* model_facts.h — what the model's unit tests share (test_model.c, test_model_optim.c): the
 * traced command line, config file and script of an OOM in GPT-2 124M's first forward at B=16 on
 * a 12 GiB card, as the trace recorded them, and its run_facts (oom_facts). The including file
 * defines `dir` (the working directory the run names, which the model never opens). */
#ifndef VT_TEST_MODEL_FACTS_H
#define VT_TEST_MODEL_FACTS_H

#include <string.h>

#include "formula.h"
#include "model.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

static const char *const oom_argv[] = {"python3", "train.py", "gpt2_12gb.py", "--batch_size=16"};

/* the config file as the trace recorded it (FILE record): the model reads this, never dir/ */
static const char gpt2_12gb[] = "batch_size = 4\nblock_size = 1024\n"
                                "gradient_accumulation_steps = 32\nn_layer = 12\nn_head = 12\n"
                                "n_embd = 768\ndtype = 'float16'\ncompile = False\n";
/* the script as recorded: nanoGPT's spelling, its defaults assigned at top level (upstream
 * train.py's way; vocab_size is this one's own line) */
static const char train_py[] = "batch_size = 12\nblock_size = 1024\n"
                               "gradient_accumulation_steps = 5 * 8\nn_layer = 12\n"
                               "n_head = 12\nn_embd = 768\nvocab_size = 50304\n"
                               "dropout = 0.0\nbias = False\n"
                               "dtype = 'bfloat16' if torch.cuda.is_bf16_supported() else "
                               "'float16'\nexec(open('configurator.py').read())\n";
static const config_recfile recorded[] = {
    {"gpt2_12gb.py", gpt2_12gb, sizeof gpt2_12gb - 1, 0, VT_FILE_ARG},
    {"train.py", train_py, sizeof train_py - 1, 0, VT_FILE_ARG},
    {"examples/sim/sim_train.py", train_py, sizeof train_py - 1, 0, VT_FILE_ARG}};
static const config_files recorded_files = {3, recorded, 1};

/* An OOM in the forward of iteration 0 of GPT-2 124M, B=16, on a 12 GiB card: what was live
 * follows the refined formula, with the forward half done. */
static inline void oom_facts(run_facts *f)
{
    memset(f, 0, sizeof *f);
    f->argc = 4;
    f->argv = oom_argv;
    f->cwd = dir;
    f->files = &recorded_files;
    f->card_bytes = 12 * GiB;
    f->card_name = "12GiB";
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 16, s.T = 1024, s.A = 32, s.L = 12, s.H = 12, s.d = 768, s.V = 50304, s.dtype_bytes = 2;
    s.iteration0 = 1;
    cat_breakdown r;
    formula_refined(&s, &r);
    f->at_peak.bytes[CAT_PARAMETERS] = r.bytes[CAT_PARAMETERS];
    f->at_peak.bytes[CAT_AUTOCAST] = r.bytes[CAT_AUTOCAST];
    f->at_peak.bytes[CAT_ACTIVATIONS] = r.bytes[CAT_ACTIVATIONS];
    f->at_peak.bytes[CAT_LOGITS] = 4 * s.B * s.T * s.V;
    f->at_peak.bytes[CAT_INPUTS] = r.bytes[CAT_INPUTS];
    f->at_peak.bytes[CAT_CONTEXT] = 500 * MiB;
    f->at_peak.bytes[CAT_CACHE] = 300 * MiB;
    f->peak_process = cat_breakdown_total(&f->at_peak);
    f->has_oom = 1;
    f->oom_requested = 4 * s.B * s.T * s.V;
    f->oom_capacity = 12 * GiB;
    f->at_oom = f->at_peak;
    f->oom_cache = 300 * MiB;
    f->oom_outside = 500 * MiB;
    f->oom_phase = "forward";
    f->oom_site = "train.py:203 forward";
}

#endif
