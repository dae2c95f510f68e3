/* predict_train.h — what `vramtrace predict` is told trains, without a trace (predict_train.c):
 * the optimizer (--optimizer: its state per trainable parameter) and LoRA's adapters
 * (--lora-rank, --lora-targets: they alone train, the model's weights frozen). Without them the
 * prediction assumes AdamW and every parameter trained; with --from they are the traced run's. */
#ifndef VT_CMD_PREDICT_TRAIN_H
#define VT_CMD_PREDICT_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "formula.h"

typedef enum predict_opt {
    PREDICT_OPT_NONE, /* not given: AdamW's two states assumed */
    PREDICT_OPT_ADAMW,
    PREDICT_OPT_ADAM,
    PREDICT_OPT_ADAMW8BIT, /* bitsandbytes' 8-bit AdamW: 2 B per trainable parameter */
    PREDICT_OPT_SGD,       /* no momentum: no state */
    PREDICT_OPT_MOMENTUM,  /* SGD with momentum: one buffer in the trained weights' dtype */
    PREDICT_OPT_ADAFACTOR  /* torch.optim.Adafactor: its factored second moment */
} predict_opt;

typedef struct predict_train {
    predict_opt opt;
    uint64_t lora_rank; /* --lora-rank; 0: no LoRA */
    char targets[160];  /* --lora-targets as given; "": peft's default for the block */
    unsigned mask;      /* the projections adapted (formula_train.h), set by predict_train_apply */
} predict_train;

/* predict_train_key: key (normalized: "lora_rank") is one of these options (each takes a value) */
int predict_train_key(const char *key);
/* predict_train_option: the option key with its value val (NULL: none given) into t; 0, or -1
 * with err: a value that is none of the optimizers, a rank that is not a whole number 1..65536,
 * an option given twice with two values */
int predict_train_option(predict_train *t, const char *key, const char *val, char *err,
                         size_t errlen);
/* predict_train_given: any of the options was given */
int predict_train_given(const predict_train *t);
/* predict_train_apply: t onto s (its block known): LoRA's rank and targets, the optimizer's state
 * as a trace's recognized optimizer sets it (opt_set and opt_bpp; Adafactor's from the shape).
 * -1 with err: --lora-targets without --lora-rank, a name the block has no projection of. */
int predict_train_apply(predict_train *t, gpt_shape *s, char *err, size_t errlen);
/* predict_train_text: the lines the prediction's heading says of them (the trained adapters,
 * the optimizer), into buf. None given: "" with a traced run (`traced`: its own optimizer) or
 * without an optimizer step to count; else that AdamW's state is assumed. */
const char *predict_train_text(const predict_train *t, const gpt_shape *s, int traced, char *buf,
                               size_t n);
/* predict_train_json: "optimizer" and "lora" (null without LoRA) into root, when any of the
 * options was given (absent otherwise: AdamW and every parameter, as without them before) */
void predict_train_json(cJSON *root, const predict_train *t, const gpt_shape *s);

/* the trained share's kind, as predict_train_share says it: the gradients' (the rest frozen: LoRA,
 * frozen layers); assumed (LoRA on, no gradient measured); the gradients' where the rest had none
 * but is not known to be frozen (an expert no token was routed to: recognize.h's rest_untold) */
enum { PREDICT_FRAC_FROZEN, PREDICT_FRAC_ASSUMED, PREDICT_FRAC_UNTOLD };
/* predict_train_share: the line under the model's for a run that trained a share of its weights
 * (s->train_frac under 0.99; nothing otherwise): tp of them, said as frac_how has it */
void predict_train_share(const gpt_shape *s, double tp, int frac_how);

#endif
