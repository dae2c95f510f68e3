/* config_view.h — the run's configuration (model/recognize/config.h) rendered: text table and
 * JSON object (config_view.c); used by the report's model sections and `predict`. */
#ifndef VT_ANALYZER_CONFIG_VIEW_H
#define VT_ANALYZER_CONFIG_VIEW_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "config.h"

/* config_print: the configuration as a table (key, value, source, where), with warnings; a
 * model that is not a transformer (transformer = 0) gets no transformer keys, except those its
 * own command line gave. */
void config_print(FILE *out, const nano_config *c, int transformer);
/* config_add_json: adds "config" {key: {value (null when unknown), source, where, and flag /
 * flag_sep when a flag of the traced command line carried it ("--batch-size", " ")},
 * "config_program", "config_files_missing" (config files named, not recorded) to root, and
 * "config_warnings" [..] when there were any. A key config_print does not show (transformer as
 * there) has "shown": false, and where a value the trace gave it says it is the tensors read as
 * a transformer's, maybe one part's (an encoder-decoder's decoder blocks, its targets' length),
 * not the model's. */
void config_add_json(cJSON *root, const nano_config *c, int transformer);

#endif
