/* model_nanogpt.h — whether nanoGPT's defaults apply to a run (model_nanogpt.c) */
#ifndef VT_ANALYZER_MODEL_NANOGPT_H
#define VT_ANALYZER_MODEL_NANOGPT_H

#include <stddef.h>

#include "model.h"

/* model_nanogpt_run: 1 where nanoGPT's defaults apply: its configurator's command line (config
 * files and --key=value only) and nanoGPT's model classes on the Python stacks; with no Python
 * frames the script's name train.py stands for them. why (len bytes): the reason a look-alike
 * command line is not taken for nanoGPT's, or that train.py is assumed from the name ("" else). */
int model_nanogpt_run(const nano_config *c, const run_facts *f, char *why, size_t len);

#endif
