/* calib_json.h — the model predict calibrates with, as JSON and back (calib_json.c): `report
 * --json` writes the run's shape and the report's calibration ("prediction.run_shape",
 * "prediction.calibration"), `predict --from REPORT.json` reads them, so that the JSON route
 * predicts with the very model the trace route does. One list of fields serves both ways. */
#ifndef VT_ANALYZER_CALIB_JSON_H
#define VT_ANALYZER_CALIB_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "advice.h"

/* calib_shape_json: a gpt_shape as {"batch_size": B, "block_size": T, ...} (every field). */
cJSON *calib_shape_json(const gpt_shape *s);
/* calib_cats_json: {category key: bytes} for every category (the one writer of it) */
cJSON *calib_cats_json(const uint64_t v[CAT_COUNT]);
/* calib_json: a model_calib, its measured shape and breakdowns included (every field but
 * `lower`, which is the report's own flag: prediction.largest_batch_size_at_most, cmd_predict.c;
 * and `after_forward`'s 2, never a report's). */
cJSON *calib_json(const model_calib *c);

/* calib_shape_from_json / calib_from_json: the reverse, every field required. Return 0, or -1
 * with "FIELD: missing or not a number / boolean" (the path under o: "measured_shape.n_embd")
 * in err. */
int calib_shape_from_json(const cJSON *o, gpt_shape *s, char *err, size_t errlen);
int calib_from_json(const cJSON *o, model_calib *c, char *err, size_t errlen);

#endif
