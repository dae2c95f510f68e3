/* freezesrc.h — whether a program freezes weights, as its recorded source says (freezesrc.c):
 * before its first backward no gradient tells which weights train. */
#ifndef VT_ANALYZER_FREEZESRC_H
#define VT_ANALYZER_FREEZESRC_H

#include <stddef.h>

#include "config.h"

/* freeze_src: 1 where a recorded script (code, not strings or comments) turns a weight's gradient
 * off, no if, elif, else or while around it up to its def: X.requires_grad_(False) or
 * X.requires_grad = False; where: "train.py:183
 * requires_grad_(False)" for the first, into out (n). 0 where none does. */
int freeze_src(const config_files *fs, char *out, size_t n);

#endif
