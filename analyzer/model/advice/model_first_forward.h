/* model_first_forward.h — what a run's first forward says when it is all the trace has of the
 * training (model_first_forward.c); parts of model_build (model.c) and of the out-of-memory
 * analysis (model_oom.c). */
#ifndef VT_ANALYZER_MODEL_FIRST_FORWARD_H
#define VT_ANALYZER_MODEL_FIRST_FORWARD_H

#include "model.h"

/* model_frozen_forward: 1 when the transformer formula does not describe the run's training,
 * which trains few of its weights (why says so, for the formula's "not applied" line): under 10 %
 * of them train (not LoRA's adapters, not a frozen model beside the one trained), or its first
 * forward, which failed, had freed each weight's 16-bit copy after use (frozen weights). */
int model_frozen_forward(const model_result *m, const run_facts *f, const char *family, char *why,
                         size_t n);
/* model_nograd_forward: 1 when the run died in its first forward after all its blocks had run
 * (every weight's autocast copy made, or its logits) holding under a tenth of the activations the
 * formula's blocks keep for a backward: a forward under no_grad (an evaluation that ran out of
 * memory), no training to predict (why says so). Needs the shape's formula (formula_ok). */
int model_nograd_forward(const model_result *m, const run_facts *f, const char *family, char *why,
                         size_t n);
/* model_oom_forward_share: no formula, and the run died in its first forward: how far it had
 * got, and what the what-ifs make of it. */
void model_oom_forward_share(model_result *m, const run_facts *f);
/* model_trained_all_used: 1 when, beside a frozen model (its weights' copies freed after each
 * use), the model trained had used every weight it casts (their copies all kept) when the run died
 * in its first forward: its layers had all run, past its last one. */
int model_trained_all_used(const model_result *m, const run_facts *f);
/* model_forward_cut_words: what the activations alive at such a failure are, for the
 * explanation's activations row ("when the out-of-memory error cut the forward short: ..."). */
const char *model_forward_cut_words(const model_result *m, const run_facts *f);

/* model_kept_not_told: a first forward's kept copies, a few of the weights, had been read as those
 * that train (trainable.c) where the program freezes weights (freezesrc.h): a frozen layer a
 * gradient flows through to a trained part before it keeps its copy too, so which train is not
 * told (trainable 0), nor the EMA row's room measured against them */
void model_kept_not_told(model_result *m);

/* model_head_unknown: 1 when the run died in its first forward, before its end (no logits live),
 * and no class or tensor tells whether the model ends in an output layer over its vocabulary
 * (its family from the tensor sizes alone) */
int model_head_unknown(const run_recognition *r, const run_facts *f);

#endif
