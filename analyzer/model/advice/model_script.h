/* model_script.h — what the recorded script says of the run beyond its trace (model_script.c):
 * a state it carries across batches, which the accumulation what-ifs' wording needs, and an
 * evaluation pass the trace never reached, which the what-ifs and the largest micro-batch do not
 * count. Called by model.c only. */
#ifndef VT_ANALYZER_MODEL_SCRIPT_H
#define VT_ANALYZER_MODEL_SCRIPT_H

#include "model.h"

/* model_carried: m->rec.carried from the recorded scripts (scriptpass_carried), before the
 * what-ifs are worded (advice_speak). */
void model_carried(model_result *m, const run_facts *f);

/* model_unreached: a training run with advice whose recorded script has an evaluation pass
 * (scriptpass_eval) and none of whose allocations was an evaluation's (no eval phase): m's
 * unreached_* set and its note added (the pass's own batch named as the run had it: the command
 * line's flag, else the script's argparse default). Once the advice and its notes are made. */
void model_unreached(model_result *m, const run_facts *f);

#endif
