/* config.h — a run's configuration: the keys the memory model uses, each with one source (the
 * program's arguments or config files, the trace, nanoGPT train.py's default for nanoGPT only, or
 * unknown). nanoGPT's configurator is read by nanogpt.c, other programs' flags by cmdline.c. */
#ifndef VT_ANALYZER_CONFIG_H
#define VT_ANALYZER_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "pyexpr.h"

typedef enum config_type { CONFIG_INT, CONFIG_FLOAT, CONFIG_BOOL, CONFIG_STR } config_type;

/* X(key, type, default as text, most, label, meaning) — the keys the memory model uses, with
 * nanoGPT train.py's defaults (dtype: 'bfloat16' where supported, as on any recent GPU), for an
 * integer the largest value taken (2^24 samples, tokens or micro-steps, 2^16 blocks or heads,
 * 2^20 widths: beyond any model trained; a value past it is refused, not predicted from) and the
 * words that name it for any program (the key is nanoGPT's config name: said only for nanoGPT,
 * config_key_said; JSON's config keeps the keys, each with its label). */
#define VT_CONFIG_KEYS(X)                                                                          \
    X(batch_size, CONFIG_INT, "12", 1ll << 24, "micro-batch B",                                    \
      "micro-batch: samples per forward/backward")                                                 \
    X(block_size, CONFIG_INT, "1024", 1ll << 24, "tokens per sample T",                            \
      "sequence length T (tokens, or a ViT's patches)")                                            \
    X(gradient_accumulation_steps, CONFIG_INT, "40", 1ll << 24, "accumulation steps A",            \
      "micro-steps per optimizer step A")                                                          \
    X(n_layer, CONFIG_INT, "12", 1ll << 16, "layers L", "transformer blocks L")                    \
    X(n_head, CONFIG_INT, "12", 1ll << 16, "attention heads H", "attention heads H")               \
    X(n_embd, CONFIG_INT, "768", 1ll << 20, "width d", "model width d")                            \
    X(vocab_size, CONFIG_INT, "50304", 1ll << 24, "vocabulary V", "vocabulary size V")             \
    X(dropout, CONFIG_FLOAT, "0.0", 0, "dropout", "dropout probability")                           \
    X(bias, CONFIG_BOOL, "False", 0, "bias", "biases in Linear and LayerNorm")                     \
    X(dtype, CONFIG_STR, "bfloat16", 0, "dtype",                                                   \
      "float32, bfloat16, float16 (16-bit: one of the two)")                                       \
    X(compile, CONFIG_BOOL, "True", 0, "torch.compile", "torch.compile the model")

typedef enum config_key {
#define VT_CFG_ENUM(k, t, d, most, label, doc) CFG_##k,
    VT_CONFIG_KEYS(VT_CFG_ENUM)
#undef VT_CFG_ENUM
        CFG_COUNT
} config_key;

typedef enum config_source {
    CONFIG_SRC_DEFAULT, /* nanoGPT's train.py default (nanoGPT's train.py and predict only) */
    CONFIG_SRC_FILE,    /* a config file on the command line */
    CONFIG_SRC_ARG,     /* --key=value on the traced / given command line */
    CONFIG_SRC_FLAG,    /* an override given to vramtrace itself */
    CONFIG_SRC_TRACE,   /* inferred from the trace (infer.h); `where` says from what */
    CONFIG_SRC_UNKNOWN  /* not given and not in the trace: the value is 0 / "" and never used as
                         * if it were the program's (config_known) */
} config_source;

/* config_program: what kind of program the traced command line is, which decides how its
 * arguments are read and how advice spells a change. */
typedef enum config_program {
    PROG_UNKNOWN,   /* nothing recognizable: values come from the trace or are unknown */
    PROG_NANOGPT,   /* nanoGPT's configurator: config files and --key=value */
    PROG_ARGPARSE,  /* a plain script with its own flags (--batch-size 8, --batch=8) */
    PROG_HF_TRAINER /* flags spelled as Hugging Face's TrainingArguments
                     * (--per_device_train_batch_size 8): the Trainer's scripts, and scripts of
                     * their own loop that spell them so (run_clm_no_trainer.py) */
} config_program;

#define CONFIG_NOTES_MAX 12 /* notes kept; the rest are counted and said to be cut */

typedef struct config_value {
    long long i; /* CONFIG_INT, CONFIG_BOOL (0/1) */
    double f;    /* CONFIG_FLOAT */
    char s[32];  /* CONFIG_STR */
    config_source src;
    char where[384]; /* the file, the argument or the inference that set it ("" for defaults) */
    char flag[48];   /* the flag that carried it on the traced command line ("--batch-size"), or
                      * the keyword of the script's call that set it (per_device_train_batch_size,
                      * with call), or "" */
    char
        flag_sep;  /* how that flag takes its value: '=' (--batch_size=8), ' ' (--batch-size 8)
                    * or '(' (a keyword of call: TrainingArguments(per_device_train_batch_size=8)) */
    char call[48]; /* flag_sep '(': the call as the script wrote it ("TrainingArguments") */
    /* the recorded script's flags whose names say this key but that no spelling places
     * ("--encoder-layers (default 12; not on the command line)"; config_apply_script): an
     * unknown value names them, never "no flag of the recorded script sets it"; or "" (200: the
     * reason that names them, with the script's name, within the views' sizeof where + 64) */
    char unplaced[200];
} config_value;

/* The config files a trace recorded (FILE records, trace format 1.2): for a trace, the only
 * files the analyzer reads. Borrowed from the trace's tables. */
typedef struct config_recfile {
    const char *name; /* as the command line gave it */
    const char *data; /* contents, len bytes (none unless flags == 0) */
    size_t len;
    unsigned flags; /* VT_FILEF_* */
    int kind;       /* VT_FILE_ARG, VT_FILE_DIR_CONFIG */
} config_recfile;
typedef struct config_files {
    int n;
    const config_recfile *f;
    int recorded; /* 1: the trace's writer records files (1.2 or later), even if n == 0 */
} config_files;

typedef struct nano_config {
    config_program program; /* PROG_NANOGPT unless the command line says otherwise */
    /* NULL: files are opened (predict --config FILE, given by the user); else a trace's
     * recorded files, and no file is ever opened (config_apply_file looks them up) */
    const config_files *files;
    config_value v[CFG_COUNT];
    char torch_version[32]; /* PyTorch's __version__ as recorded (torch/version.py), or "" */
    char cuda_version[16];  /* the CUDA version that PyTorch was built for, or "" */
    int nfiles;             /* config files read */
    int nfiles_missing;     /* config files named but not recorded: a key still at its default
                             * may have been set there, so its value is not known */
    int nwarnings;          /* notes: problems that did not stop the parse, values not used; all
                             * are counted, the first CONFIG_NOTES_MAX kept (config_notes_kept) */
    char warnings[CONFIG_NOTES_MAX][240];
    int nskipped;       /* config file lines that set a key and could not be evaluated */
    char skipped[400];  /* the first: "FILE:LINE: 'key = expr' cannot be evaluated: why" */
    int skipped_key;    /* its key */
    char ckpt_flag[48]; /* the script's own switch for activation checkpointing, or "" */
    char amp_flag[64]; /* the script's own flag and value for bf16 autocast ("--amp bf16"), or "" */
    char amp_value[16];    /* that flag's value in the run (its command line, else its argparse
                            * default: "bf16", "fp16", "none"), or "" */
    char amp_where[200];   /* where amp_value came from */
    char amp_off[80];      /* the command line's flag that turned autocast off ("--amp none"), or
                            * "": the precision is then the parameters' own, for the trace to tell */
    char nocache_flag[48]; /* the script's own switch for use_cache=False ("--no-cache"), or "" */
    char targs_call[48];   /* the script's own training-arguments call ("TrainingArguments",
                            * "SFTConfig"; trainargs.h), or "" */
    char script_read[64];  /* the recorded script whose argparse flags were read ("sim_gan.py":
                            * a key without a flag has none in it), or "" */
    /* a batch flag the trace showed is not the micro-batch (model_batch_seen: every forward read
     * took another batch): its name and value ("--batch", 256), or "" */
    char batch_other[48];
    long long batch_other_v;
    /* k > 1: the batch flag is the micro-batch, each of its samples k sequences in the forward
     * (SimCSE's sentence twice, two views of an image): B counts sequences, B / k the flag's
     * (model_batch_seen); 0: one each */
    int batch_per;
    /* 1: T was read from the blocks' own tensors where the flag named a length they never saw
     * (model_seq_encoder): shown for any model, as the flag's T would have been */
    int t_blocks;
    /* the first forward's T where the moment explained ran another with the same micro-batch (a
     * sequence-length warm-up: model_batch_seen), its token batch's tokens then (t_first_tokens),
     * and the moment's (t_now_tokens); 0: T did not change, or the trace does not tell */
    long long t_first, t_first_tokens, t_now_tokens;
    /* the batch flag that carries B·A, the optimizer's batch: the recorded script divides it by
     * the accumulation's flag (config_apply_script); advice spells a change of B through it, and
     * its value, batch_global_v, with it; or "" */
    char batch_global[48];
    long long batch_global_v;
    /* 1: batch_global is cut into chunks on the device by the program (torch.chunk(data,
     * args.batch_chunk): scriptaccum.c): its token batch is the whole batch's, B·A·T */
    int batch_chunked;
    /* 1: batch_global is a logical batch the program splits into physical batches of B (its
     * --max-physical-batch-size: config_script_physical), A = batch_global_v / B: no flag of A,
     * a change of it spelled through batch_global */
    int batch_split;
    /* the flag the recorded script requires the micro-batch be a multiple of
     * (config_script_multiple: "--num_generations"), its value, and where the script says so
     * ("grpo.py:96: assert B % G == 0"); "" and 0: none */
    char batch_multiple[48];
    long long batch_multiple_v;
    char batch_multiple_where[160];
    /* accum_nbs > 0: the recorded script sets its accumulation from its micro-batch itself, A =
     * max(round(accum_nbs / B), accum_nbs_floor) (YOLOv5's nominal batch, 64, and 1:
     * config_script_nominal): any B is run with the program's own count at it; 0: not so */
    long long accum_nbs, accum_nbs_floor;
    /* batch_split with A known, in a trace that counted one optimizer step per backward pass (a
     * gradient free after each: the DP optimizer's zero_grad of each physical batch, its skipped
     * steps): the optimizer steps are those over A, split_steps (model_split_steps); 0: not so */
    int split_on;
    unsigned split_steps;
    /* the command line's flags with "batch" in their names that no spelling places
     * ("--rollout_batch_size 16, --mini_batch_size 4"; config_apply_flags): an unknown micro-batch
     * names them, never "the command line does not give it"; or "" */
    char batch_unplaced[96];
    /* the command line's other flags of an integer value that no spelling places ("--N_rand
     * 2048": NeRF's rays per step, a batch by another name; config_apply_flags): an unknown
     * micro-batch names them, never "the command line does not give it"; or "" */
    char flags_unread[96];
} nano_config;

/* config_init: every key at nanoGPT's default, source CONFIG_SRC_DEFAULT. */
void config_init(nano_config *c);

/* config_apply_args: applies nanoGPT configurator arguments in order (args are what
 * train.py's sys.argv[1:] would be): a bare argument is a config file (relative to cwd when
 * cwd is non-NULL), `--key=value` sets a key (value is a Python literal; a bare word is a
 * string). src says how to tag what is set (CONFIG_SRC_ARG or CONFIG_SRC_FLAG; files are
 * CONFIG_SRC_FILE). Keys nanoGPT has but the model does not use (eval_iters, ...) are
 * accepted and ignored. strict=1: an unreadable file or unknown key is an error; strict=0:
 * a warning in c->warnings. A value of the wrong type or out of range is always an error.
 * Returns 0, or -1 with "what: why (what to do)" in err. */
int config_apply_args(nano_config *c, int argc, const char *const *argv, const char *cwd,
                      config_source src, int strict, char *err, size_t errlen);

/* config_apply_file: exec-like reading of one nanoGPT config file: `key = expr` lines,
 * expr a literal or simple arithmetic (+ - * / // % **, parentheses, earlier keys);
 * what is not evaluable is skipped. With c->files set (a trace) the file is the recorded one
 * of that name, never opened ("not recorded" when the trace lacks it). Returns 0, -1 (cannot
 * open / not recorded) or -2 (a bad value) with err. */
int config_apply_file(nano_config *c, const char *path, const char *cwd, char *err, size_t errlen);
/* config_apply_stream: the same over an open stream; path names it in "where" and messages.
 * config_apply_file opens only regular files up to 1 MiB, and only without c->files (a file
 * the user gave `predict`); a trace's files are its FILE records. */
int config_apply_stream(nano_config *c, FILE *fp, const char *path, char *err, size_t errlen);

/* config_from_trace: v's value i from the trace (src CONFIG_SRC_TRACE), where it says how; the
 * flag, its separator and call cleared (no flag carried it) */
void config_from_trace(config_value *v, long long i, const char *where);

/* config_set: sets key (a name such as "batch_size") from a Python literal text, checked
 * against the key's type. Unknown model keys: returns 1 (caller decides). 0 on success,
 * -1 with err on a bad value. */
int config_set(nano_config *c, const char *key, const char *value, config_source src,
               const char *where, char *err, size_t errlen);

/* config_find_key: the key named name ("batch_size"), or -1. */
int config_find_key(const char *name);
/* config_key_named: 1 when the n bytes at name name a key (a command's "--KEY VALUE") */
int config_key_named(const char *name, size_t n);
/* config_set_value: stores the evaluated value v (text: as written, for messages) into key k
 * after type and range checks, tagged src / where. 0, or -1 with err (the key unchanged). */
int config_set_value(nano_config *c, int k, pyval v, const char *text, config_source src,
                     const char *where, char *err, size_t errlen);

/* config_recorded_file: the recorded file of kind whose name is name, NULL if none. */
const config_recfile *config_recorded_file(const config_files *f, int kind, const char *name);

/* config_from_cmdline: finds the training script in a traced command line (the first
 * argument ending in ".py"; without one, everything after argv[0]) and applies what follows
 * it, non-strictly. Returns 0 or -1 with err (a bad value). */
int config_from_cmdline(nano_config *c, int argc, const char *const *argv, const char *cwd,
                        char *err, size_t errlen);

/* config_detect_program: the kind of program the arguments after the script are for: any
 * Hugging Face Trainer flag -> PROG_HF_TRAINER; a flag without '=' or an argparse spelling
 * (--batch-size=8, --batch=8) -> PROG_ARGPARSE; otherwise (only --key=value and config files)
 * PROG_NANOGPT. */
config_program config_detect_program(int argc, const char *const *argv);
/* config_apply_flags: applies the known flag spellings of argparse scripts and the Trainer
 * (--batch-size 4, --grad-accum=2, --per_device_train_batch_size 8, --bf16, --compile) as
 * CONFIG_SRC_ARG with config_value.flag / flag_sep; unknown flags and their values are
 * skipped, bare words are never read as files. */
void config_apply_flags(nano_config *c, int argc, const char *const *argv);

/* config_flag_name: "--Batch-Size=4" -> "batch_size": config_arg_key in lower case. */
void config_flag_name(const char *arg, char *out, size_t len);
/* config_script_index: the training script in a traced command line, the first argument ending
 * in ".py" (not a --key=value), or -1. */
int config_script_index(int argc, const char *const *argv);
/* config_recorded_script: the text of that script as the trace recorded it, whole (a file cut
 * or unreadable when recorded is not), for a program other than nanoGPT; NULL when none. */
const config_recfile *config_recorded_script(const nano_config *c, int argc,
                                             const char *const *argv);
/* config_side_pass_name: a flag's name (config_flag_name's) is a batch of a pass beside the
 * training (eval_batch_size, sample_batch): not one of the micro-batch's candidates */
int config_side_pass_name(const char *name);
/* config_flag_key: the key a flag spelling of argparse scripts and the Trainer sets
 * ("--grad-accum" -> CFG_gradient_accumulation_steps), or -1. */
int config_flag_key(const char *flag);

/* config_arg_key: the key of an argument such as "--batch-size=8" or "batch_size=8": leading
 * dashes dropped, '-' inside mapped to '_', copied into key (truncated to len-1). Returns the
 * value after '=' (inside arg), or NULL when there is no '='. */
const char *config_arg_key(const char *arg, char *key, size_t len);

/* config_overrides: `vramtrace report` flags (key=value, an optional leading --; n of them) over
 * the config, each CONFIG_SRC_FLAG with its text (said[i], how it was typed, where said is
 * not NULL: "--grad-accum 4", not nanoGPT's key); a value the program's own sources gave another
 * value is left unused, with a note saying so. -1 with err set for a bad one. */
int config_overrides(nano_config *c, int n, const char *const *given, const char *const *said,
                     char *err, size_t errlen);
/* config_notes_kept: how many of c->nwarnings notes are kept in c->warnings. */
int config_notes_kept(const nano_config *c);
/* config_note: adds a note (a value that was not used, and why) to the report's warnings.
 * config_reset: key k back to nanoGPT's default. */
void config_note(nano_config *c, const char *msg);
/* config_note_key: a note about key k, named as config_key_said names it, then rest. */
void config_note_key(nano_config *c, config_key k, const char *rest);
void config_reset(nano_config *c, config_key k);

/* config_forget_defaults: every key still at nanoGPT's default becomes unknown (a program that
 * is not nanoGPT's train.py: its own defaults are not nanoGPT's). */
void config_forget_defaults(nano_config *c);
/* config_unset: no argument, file or trace gave the value (nanoGPT's default, or unknown). */
int config_unset(const config_value *v);
/* config_known: 1 when key k has a value from the program, the trace or (nanoGPT) its default. */
int config_known(const nano_config *c, config_key k);

/* config_validate: n_embd divisible by n_head when both are known (a value the trace measured
 * is never the one discarded: callers drop the other, see model.c). Returns 0 or -1 with err. */
int config_validate(const nano_config *c, char *err, size_t errlen);

/* config_batch_flags: the program's flags that may set an unknown micro-batch, none of them read
 * as it: the command line's with "batch" in their names (batch_unplaced), else the recorded
 * script's whose names say a batch or a cap on its tokens (its unplaced list); "" when none */
const char *config_batch_flags(const nano_config *c);
/* config_unknown_text: why key k is unknown, as the views say it after "unknown": "neither the
 * command line nor the trace gives it", or, where the trace recorded the script whose flags were
 * read, that its flag was not given and has no number for a default (default=None), or that no
 * flag of it sets it (the script's own code may still set it); the dtype of a command line that
 * turned autocast off (amp_off), that the trace does not show the parameters' own; buf. */
const char *config_unknown_text(const nano_config *c, config_key k, char *buf, size_t n);
/* config_key_name / config_source_name: "batch_size"; "default" / "file" / "argument" /
 * "flag" / "inferred" / "unknown". */
const char *config_key_name(config_key k);
const char *config_source_name(config_source s);
/* config_key_doc: what key k means ("micro-batch: samples per forward/backward").
 * config_program_name: how a program kind is said ("nanoGPT", "an argparse script").
 * config_key_shown: whether a report lists key k: a transformer's keys (T, L, H, d, V, dropout,
 * bias) only for a transformer (transformer = CONFIG_SHOW_TRANSFORMER; the vocabulary V not for
 * one without tokens, CONFIG_SHOW_NO_VOCAB: a vision transformer), or where the program itself
 * gave them. */
enum { CONFIG_SHOW_OTHER, CONFIG_SHOW_TRANSFORMER, CONFIG_SHOW_NO_VOCAB };
const char *config_key_doc(config_key k);
/* config_key_example: a value of key k as it is written (nanoGPT's default: "12", "bfloat16") */
const char *config_key_example(config_key k);
/* config_key_label: key k's name in words that fit any program ("micro-batch B", "sequence
 * length T", "torch.compile"): the label column of VT_CONFIG_KEYS.
 * config_key_said: how text about program c names key k: nanoGPT's own key ("block_size") for
 * nanoGPT, whose config keys they are; for any other program its label, with the program's own
 * flag beside it where known ("micro-batch B (--batch-size)"; a keyword of the script's call,
 * "micro-batch B (per_device_train_batch_size=)"), into buf (n bytes) or a constant. The flag
 * is the trace's bytes: escape it for a terminal. */
const char *config_key_label(config_key k);
const char *config_key_said(const nano_config *c, config_key k, char *buf, size_t n);
/* config_key_word: as config_key_said without the flag (a constant: no trace bytes). */
const char *config_key_word(const nano_config *c, config_key k);
const char *config_program_name(config_program p);
int config_key_shown(const nano_config *c, config_key k, int transformer);
/* config_key_type: the CONFIG_* type of key k. */
config_type config_key_type(config_key k);
/* config_value_text: the value as Python would print it ("16", "0.1", "False",
 * "bfloat16"), or "unknown", into buf; returns buf. */
char *config_value_text(const nano_config *c, config_key k, char *buf, size_t len);
/* config_dtype_bytes: 4 for float32, 2 for bfloat16 / float16, 0 when unknown. */
int config_dtype_bytes(const nano_config *c);

#endif
