/* model_notes.h — model_notes.c's interface: the notes the advice rests on, and the
 * evaluation pass's own batch. Called by model.c only. */
#ifndef VT_ANALYZER_MODEL_NOTES_H
#define VT_ANALYZER_MODEL_NOTES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* model_peak_in_eval: a training run's tensors peaked in an evaluation pass (measured there). */
int model_peak_in_eval(const model_result *m, const run_facts *f);
/* model_names_evaluation: one of key's words (split at '_' and '-') names an evaluation or a
 * sampling pass (eval, val, valid, validation, sample, generate, ...). */
int model_names_evaluation(const char *key);
/* model_eval_batch_flag: the evaluation's own batch on the traced command line (--eval-batch-size
 * 16, --per_device_eval_batch_size=8: a flag naming both), its flag and value in flag; 0 when
 * none. */
uint64_t model_eval_batch_flag(const run_facts *f, char *flag, size_t len);
/* model_eval_calib: the calibration's evaluation (m->eval_batch, its flag, what the training
 * held beside it and what of it scales with its batch: advice_eval_calibrate), once calibrated. */
void model_eval_calib(model_result *m, const run_facts *f);
/* model_cause_cache: an out-of-memory failure blamed on the cache (fragmentation) with cache
 * bytes unused at it on a card of cap bytes: the step's tensors and what lies outside PyTorch
 * over the card even with no cache (then the activations are the cause), or a pass cut short
 * (its tensors a lower bound: said in m->why, a first forward's with their size, an evaluation
 * pass's without the training step's). */
void model_cause_cache(model_result *m, const run_facts *f, uint64_t cap, uint64_t cache);
/* model_second_step: the cache share of a later step (calib.later_cache_fraction) that makes
 * the prediction at the run's own shape (steady) reserve what the run's one step taken again
 * through the allocator's rules did (reserved); none (and m->second_step 0) when those tensors
 * alone are more. */
void model_second_step(model_result *m, const gpt_shape *steady, uint64_t reserved);
/* model_advice_notes: the sentences the advice rests on (m->notes), from the model built. */
void model_advice_notes(model_result *m, const run_facts *f);

/* model_caught: the peak the model explains came in a pass an out-of-memory error cut short,
 * which the program caught and went on from (f->caught_peak): what the pass would have made past
 * it is not measured, so the what-ifs are lower bounds (m->lower_bounds, calib.lower) */
void model_caught(model_result *m, const run_facts *f);
/* model_beside_unused: with the formula, beside a second model the first forward had not used
 * when it died (run_recognition.beside_unused), the what-ifs are lower bounds */
void model_beside_unused(model_result *m, const run_facts *f);

/* model_measured_at_oom: the run's OOM came at a later attempt's batch than the first forward's
 * (f->oom_first_batch): what was live at it is the measurement the model explains */
void model_measured_at_oom(model_result *m, const run_facts *f);
/* model_went_on: the program went on at a smaller micro-batch after the error it caught, and its
 * steps there are measured (f->went_on_*): the calibration's anchor (calib.went_on_*), so no
 * what-if says that configuration does not fit (advice_floors.c) */
void model_went_on(model_result *m, const run_facts *f);

/* model_cut_unstepped: a trace that ends before the run's first optimizer step with no OOM
 * (m->cut_unstepped): said in m->oom_forward, and where no formula tells how much of the step
 * was to come, the what-ifs are lower bounds (m->lower_bounds, calib.lower) */
void model_cut_unstepped(model_result *m, const run_facts *f);

/* model_frozen_beside: a second, frozen model beside the one trained (a teacher, a reference
 * model): m->frozen_params, the trained model's shape training all of it, and the EMA row's
 * unknown said off (those weights are that model's). */
void model_frozen_beside(model_result *m, const run_facts *f);

#endif
