/* scriptflags.h — the flags the traced script itself defines: its argparse add_argument calls,
 * read from the script's source the trace recorded (a FILE record of the command line's .py).
 * A flag the command line did not use is still the program's: advice spells a change with it
 * (--gradient-checkpointing, --grad-accum 2), and a number default is the program's value
 * where neither the command line nor the trace gave one (an integer key's, dropout's). Nothing is
 * executed; a call the parser cannot read is skipped. */
#ifndef VT_ANALYZER_SCRIPTFLAGS_H
#define VT_ANALYZER_SCRIPTFLAGS_H

#include <stddef.h>

#include "config.h"
#include "infer.h"

#define SCRIPT_FLAGS_MAX 128 /* add_argument calls read from one script */
#define SCRIPT_FLAG_NAMES 4  /* option strings kept per call ("-b", "--batch-size") */

/* One add_argument call: its option strings as written, its default when it is an integer
 * or a short string literal, its choices when a list of string literals, whether it is a
 * switch (action="store_true"). */
typedef struct script_flag {
    char names[SCRIPT_FLAG_NAMES][48];
    int nnames;
    int has_default; /* 1: default= an integer literal (in def) */
    long long def;
    char ndef[24];    /* default= a number literal as written ("0.1", "3e-4", "8"), else "" */
    char sdef[32];    /* default= a string literal ("adamw"), else "" */
    char choices[96]; /* choices= a list of string literals, each followed by '\0' ("bf16\0none\0"),
                         else "" */
    int store_true;
    char dest[48]; /* dest= a string literal ("batch_size": the name the program reads), else "" */
} script_flag;

/* scriptflags_parse: the add_argument calls in src (len bytes, not NUL-terminated), at most max
 * into out; their number. Strings, brackets and comments are followed to each call's end. */
int scriptflags_parse(const char *src, size_t len, script_flag *out, int max);

/* scriptflags_given: the command line after the script names fl (any of its names, in any
 * case, '-' or '_'). scriptflags_given_value: the index in argv of the first such argument, its
 * value in *v (after its '=': *eq 1; else the next argument, else NULL); 0 where none names it */
int scriptflags_given(const script_flag *fl, int argc, const char *const *argv);
int scriptflags_given_value(const script_flag *fl, int argc, const char *const *argv,
                            const char **v, int *eq);
/* scriptflags_skip_noncode: the index past the Python string literal ('...', "...", tripled) or
 * the comment that starts at s[i], else i (len when it does not end; a one-line string ends at
 * its line's end). */
size_t scriptflags_skip_noncode(const char *s, size_t i, size_t len);

/* config_apply_script: the traced script's flags (its recorded source: the command line's first
 * .py argument) for a program that is not nanoGPT: a key's flag the command line did not use
 * becomes the one advice spells, a number default (an integer key's, dropout's float) the
 * key's value where nothing set it
 * (CONFIG_SRC_FILE, where "hf_train.py: --grad-accum, default=1 (argparse)"); a checkpointing
 * switch (--gradient-checkpointing) becomes c->ckpt_flag, a mixed-precision flag with a bf16
 * choice (--amp, choices bf16 / none) c->amp_flag ("--amp bf16"). The precision and compile keys
 * are left to the trace. A flag no spelling places whose name says a key (scriptflags_words_key)
 * goes in that key's unplaced list with its value on the command line or its default: a key
 * left unknown names it (config_unknown_text), a change no placed flag carries says it is not
 * read as one (advice). */
void config_apply_script(nano_config *c, int argc, const char *const *argv);

/* config_script_global: the script's own accumulation, from how its code (its recorded source)
 * uses a batch flag of its own: divided by another of its flags (micro = args.batch //
 * args.update_every; not a count of devices, --world_size), that flag is the accumulation's
 * (its value from the command line, else its default) and the batch flag the optimizer's batch
 * (c->batch_global, its value batch_global_v; B = that over A, or the trace's B where it
 * agrees). Only where the trace's B and A (what cfgsrc_apply_inferred set; trace_b, the first
 * forward's B the trace shows, 0: none) agree with it, and the program gave no accumulation
 * itself; scriptaccum.c. Before the trace's token batch is read over B (model_complete_tokens). */
void config_script_global(nano_config *c, int argc, const char *const *argv, long long trace_b);

/* config_script_physical: a recorded script with a flag whose name says a physical batch
 * (Opacus's --max-physical-batch-size) beside its batch flag, larger (the logical batch, a
 * privacy parameter under DP-SGD): the physical one is the micro-batch B each forward takes,
 * the batch flag the optimizer's batch (batch_global, c->batch_split), A their ratio (unknown
 * where it does not divide). Only where the program gave no accumulation and the trace's token
 * batch (ir's, a training pass's; ir NULL: none) divides by it; the logical batch had been read
 * as the micro-batch. Before the token batch is read over B (model_complete_tokens).
 * scriptaccum.c. */
void config_script_physical(nano_config *c, int argc, const char *const *argv,
                            const infer_result *ir);
/* config_script_multiple: a micro-batch the recorded script requires to be a multiple of another
 * of its flags (scriptmultiple.c): its batch flag's value taken modulo that flag's or divided by
 * it (assert B % G == 0, B // G: GRPO's prompts each completed --num_generations times), through
 * its namespace or names bound to them; that flag (c->batch_multiple), its value and the line
 * (batch_multiple_where, "grpo.py:96: assert B % G == 0"); "" where none (or the batch flag is
 * read as B·A: config_script_batches first) */
void config_script_multiple(nano_config *c, int argc, const char *const *argv);
/* scriptflags_names_device: a flag's name (lower case) says a count of devices or processes
 * (ngpus, world_size, num_processes): a division by it splits the batch across them */
int scriptflags_names_device(const char *name);
/* config_script_batches: config_script_global (trace_b: ir's first forward's B, a training
 * pass's) then config_script_physical, as a traced run's model reads them (model.c) */
void config_script_batches(nano_config *c, int argc, const char *const *argv,
                           const infer_result *ir);

/* config_script_nominal: a recorded script that computes its accumulation from its batch flag,
 * max(round(N / B), K) (YOLOv5's accumulate = max(round(nbs / batch_size), 1), nbs = 64; N a
 * literal, a name assigned one, or a flag; B the batch flag read as x.dest or a name of its
 * own): c->accum_nbs N, accum_nbs_floor K, and A that count at the run's B where the trace did
 * not give it (source FILE), its where said where it did and agrees; nothing where the trace's A
 * is another, a flag gives A, or the batch flag carries B·A (batch_global). After the script's
 * flags (config_apply_script). scriptnbs.c. */
void config_script_nominal(nano_config *c, int argc, const char *const *argv);

/* scriptflags_words_key: the key a flag's name (config_flag_name's: "encoder_layers") says in
 * words of its own, where no spelling places it: layers (--encoder-layers, --depth), width
 * (--encoder-embed-dim), heads, accumulation (--accum-freq, --update-freq), a batch or a cap on
 * a batch's tokens (--max-tokens), the vocabulary, a sequence's length or an image's side
 * (--resolution, --image-size: a vision transformer's patch tokens), dropout, bias; -1 for
 * none (a side pass's batch, a grouped key / value count, a FFN's or LoRA's width).
 * scriptflags_token_cap: the name says a cap on a batch's tokens (--max-tokens,
 * --max-tokens-per-batch), not a generation's (--max-new-tokens). scriptwords.c. */
int scriptflags_words_key(const char *name);
int scriptflags_token_cap(const char *name);
/* scriptflags_model_choice: the name says it picks the model (--model, --arch,
 * --model_name_or_path,
 * --backbone; not an output directory's, a teacher's, an EMA's), whose choice sets the model's
 * shape (layers, heads, width, vocabulary, dropout, bias) by a table vramtrace does not read */
int scriptflags_model_choice(const char *name);

/* scriptflags_amp16: an autocast flag's value: 2 bfloat16 ("bf16", "bfloat16", "bf16-mixed"),
 * 1 float16 ("fp16", "float16", "16-mixed"), 0 neither ("none", "", another) */
int scriptflags_amp16(const char *v);

/* config_nanogpt_script: a traced nanoGPT-style run's defaults as its own script states them:
 * every key still at upstream nanoGPT's default takes the value the recorded script assigns at
 * top level (upstream train.py assigns them all before exec'ing its configurator; source FILE,
 * "train.py:LINE (the script's own)"), else it becomes unknown: a script of nanoGPT's spelling
 * with defaults of its own, or one the trace did not record, never gets another program's
 * defaults (a note says why when the script was not recorded). */
void config_nanogpt_script(nano_config *c, int argc, const char *const *argv);

#endif
