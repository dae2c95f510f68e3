/* model_script.h — what the recorded script says of the run beyond its trace (model_script.c):
 * a state it carries across batches, which the accumulation what-ifs' wording needs. Called by
 * model.c only. */
#ifndef VT_ANALYZER_MODEL_SCRIPT_H
#define VT_ANALYZER_MODEL_SCRIPT_H

#include "model.h"

/* model_carried: m->rec.carried from the recorded scripts (scriptpass_carried), before the
 * what-ifs are worded (advice_speak). */
void model_carried(model_result *m, const run_facts *f);

#endif
