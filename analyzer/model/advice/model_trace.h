/* model_trace.h — what the trace shows of a run beyond its configuration (model_trace.c); the
 * parts of model_build (model.c) that read the trace's facts into the model. */
#ifndef VT_ANALYZER_MODEL_TRACE_H
#define VT_ANALYZER_MODEL_TRACE_H

#include "model.h"

/* model_complete_tokens: B·T measured (the token batch) gives T from the program's B, or B
 * from T: where T (B) is unknown, or the trace read it otherwise (position ids) and the
 * program's B (T) times it is not B·T. */
void model_complete_tokens(nano_config *c, const infer_result *ir);
/* model_trace_dtype: the precision the trace shows when nothing gave it. */
void model_trace_dtype(nano_config *c, const run_facts *f);
/* model_trace_compile: torch.compile on or off as the trace shows it when nothing gave it; a
 * compile=True that ran eager becomes a note. */
void model_trace_compile(model_result *m, const run_facts *f, int nanogpt);
/* model_gated_block: a gated-MLP decoder's block for the refined formula, or the note that the
 * formulas are GPT-2's. */
void model_gated_block(model_result *m, const run_facts *f, int nanogpt);
/* model_oom_forward_share: no formula, and the run died in its first forward: how far it had
 * got, and what the what-ifs make of it. */
void model_oom_forward_share(model_result *m, const run_facts *f);

#endif
