/* predict_files.h — the files a user gives `vramtrace predict` (predict_files.c): config files
 * read strictly, traces and report JSON pointed to --from. */
#ifndef VT_ANALYZER_PREDICT_FILES_H
#define VT_ANALYZER_PREDICT_FILES_H

#include <stddef.h>

#include "config.h"

/* predict_apply_file: applies the nanoGPT config file path to c (config_apply_file, the file
 * opened: one the user gave). Refused, -1 with err: a trace ("X is a trace: use --from X") or
 * JSON (a report's: --from); a file that cannot be read or holds a bad value (the reader's
 * error); a line that sets a key but that the reader skipped because it cannot evaluate it
 * ("FILE:LINE: 'batch_size = 8x' cannot be evaluated: why; ..."), since predict would
 * otherwise go on with the default in its place. Returns 0 when every such line was used. */
int predict_apply_file(nano_config *c, const char *path, char *err, size_t errlen);

#endif
