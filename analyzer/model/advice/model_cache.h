/* model_cache.h — a run whose steps' backward passes are a representation cache's chunks, not
 * accumulation's micro-steps (replay.h cache_passes): neither B nor A is its flags' (model_cache.c)
 */
#ifndef VT_ANALYZER_MODEL_CACHE_H
#define VT_ANALYZER_MODEL_CACHE_H

#include "model.h"

/* model_cache_passes: where f->cache_passes, the micro-batch and the accumulation unknown, the
 * reason said in their rows (the batch flag sets the batch of a step, not a forward's); else
 * nothing. */
void model_cache_passes(nano_config *c, const run_facts *f);
/* model_step_passes: where f->free_steps_first (a gradient's free may have ended a pass of a
 * step, not a step), the accumulation unknown unless a flag gives it, the reason in its row. */
void model_step_passes(nano_config *c, const run_facts *f);

#endif
