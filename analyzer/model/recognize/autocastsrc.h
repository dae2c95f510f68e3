/* autocastsrc.h — which 16 bits a program's autocast computes in, as its recorded source says
 * (autocastsrc.c): the dtype named literally in its autocast calls. */
#ifndef VT_ANALYZER_AUTOCASTSRC_H
#define VT_ANALYZER_AUTOCASTSRC_H

#include <stddef.h>

#include "config.h"

/* autocast_src_dtype: 2 where every autocast call of the recorded scripts (code, not strings or
 * comments) names bfloat16, 1 where every one names float16 (torch.float16, torch.half, "fp16"),
 * 0 where none does, they disagree, or one names it otherwise (dtype=ptdtype: a variable);
 * where: "train.py:87 autocast(..., dtype=torch.float16)" for the first call, into out (n) */
int autocast_src_dtype(const config_files *fs, char *out, size_t n);

#endif
