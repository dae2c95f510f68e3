/* predict_args.h — `vramtrace predict`'s command line (predict_args.c): the options, in order,
 * into the configuration and the prediction's own settings. */
#ifndef VT_CMD_PREDICT_ARGS_H
#define VT_CMD_PREDICT_ARGS_H

#include <stddef.h>

#include "cards.h"
#include "config.h"
#include "predict_model.h"
#include "predict_train.h"

typedef struct predict_args {
    int json;
    int unfused;       /* --no-flash: attention scores materialized */
    int checkpointing; /* --checkpointing: activation checkpointing of every block */
    const char *from;
    card_spec card;
    int have_card;
    predict_block block; /* a gated decoder's, or a Hugging Face config's (predict_block.h) */
    predict_train train; /* --optimizer, --lora-rank, --lora-targets (predict_train.h) */
} predict_args;

/* predict_parse: the command line, in order, into c and a (an option given twice with another
 * value refused). Returns 0, 1 (--help printed) or -1 with err. */
int predict_parse(int argc, char **argv, nano_config *c, predict_args *a, char *err, size_t errlen);

#endif
