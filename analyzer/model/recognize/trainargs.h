/* trainargs.h — the training arguments a Hugging Face Trainer script writes in its own source:
 * the keyword arguments of its TrainingArguments(...) calls (also transformers.TrainingArguments,
 * a subclass named *TrainingArguments, and a *Config of TRL's kind, SFTConfig, when it sets the
 * micro-batch or the accumulation), read from the script's source the trace recorded. Nothing
 * is executed: a keyword's value is used only when it is a literal (4, True, or arithmetic of
 * literals); a name, an attribute or a call is not, and neither is a value that the script's
 * calls disagree on or that it assigns again later (`args.per_device_train_batch_size = 8`). */
#ifndef VT_ANALYZER_TRAINARGS_H
#define VT_ANALYZER_TRAINARGS_H

#include <stddef.h>

#include "config.h"

#define TARGS_CALLS_MAX 16 /* training-arguments calls read from one script */
#define TARGS_KW_MAX 48    /* keywords kept per call (TrainingArguments has ~100) */

/* One keyword argument: its name, its value as written (comments dropped, line breaks and
 * continuations as blanks, trimmed), the line it is on. */
typedef struct targs_kw {
    char name[48];
    char value[64];
    int too_long; /* 1: the value did not fit value[] ("" then): not used */
    int line;     /* 1-based line of the keyword in the script */
} targs_kw;

/* One call: the callee as written ("transformers.TrainingArguments"), its line, its keywords
 * (the first TARGS_KW_MAX), its positional arguments (their count, the first TARGS_POS_MAX as
 * written, "" where one did not fit), and whether it unpacks any (*args, **kwargs). */
#define TARGS_POS_MAX 4
typedef struct targs_call {
    char name[48];
    int line;
    int nkw;
    targs_kw kw[TARGS_KW_MAX];
    int npos, starred;
    char pos[TARGS_POS_MAX][64];
} targs_call;

/* trainargs_parse: the training-arguments calls in src (len bytes, not NUL-terminated), at most
 * max into out; their number. Strings, comments and brackets are followed to each call's end;
 * a class or def of such a name is not a call; a *Config call counts only with a
 * per_device_train_batch_size or gradient_accumulation_steps keyword. */
int trainargs_parse(const char *src, size_t len, targs_call *out, int max);

/* trainargs_assigned: the line of the first statement of src's code that assigns an attribute
 * named name (`x.name = ...`, `x.name += ...`), 0 when there is none. */
int trainargs_assigned(const char *src, size_t len, const char *name);

/* trainargs_call: the arguments of the call whose '(' is src[open] into call (zeroed first; its
 * name and line left empty); 0 when the call does not close. */
int trainargs_call(const char *src, size_t len, size_t open, targs_call *call);

/* trainargs_find: keyword name of call (NULL when the call does not give it). */
const targs_kw *trainargs_find(const targs_call *call, const char *name);

/* config_apply_trainer_args: the traced script's training arguments (its recorded source: the
 * command line's first .py argument) for a program that is not nanoGPT: the micro-batch
 * (per_device_train_batch_size), the accumulation (gradient_accumulation_steps) and the
 * precision (bf16=True / fp16=True) of keys no argument set, CONFIG_SRC_FILE, where
 * "train.py:12 TrainingArguments(per_device_train_batch_size=4) (the script's own)"; the
 * keyword becomes the key's spelling for advice (config_value.flag, flag_sep '(', call). A
 * value that is not used is a note. c->targs_call: the first call's name. */
void config_apply_trainer_args(nano_config *c, int argc, const char *const *argv);

#endif
