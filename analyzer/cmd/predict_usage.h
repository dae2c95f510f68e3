/* predict_usage.h — `vramtrace predict --help` (predict_usage.c). */
#ifndef VT_CMD_PREDICT_USAGE_H
#define VT_CMD_PREDICT_USAGE_H

#include <stdio.h>

/* predict_usage: the usage text onto out */
void predict_usage(FILE *out);

#endif
