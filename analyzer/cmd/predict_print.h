/* predict_print.h — `vramtrace predict`'s breakdown of one prediction (text), its rows adding up
 * to the totals it prints: the categories to the tensors, the tensors, cache and what lies outside
 * PyTorch to the peak, with the anchor to the run it is calibrated with shown as a row of its own
 * when the calibration moved a total the rows do not carry (advice_predict). */
#ifndef VT_CMD_PREDICT_PRINT_H
#define VT_CMD_PREDICT_PRINT_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "advice.h"
#include "config.h"
#include "formula.h"

/* predict_config_said: c as the JSON says it (a copy, valid until the next call): without a run
 * (from 0) and without --grad-accum (s->accum_unknown), the accumulation not given, as the step's
 * line says, not nanoGPT's 40 as a default (the JSON had said 40, "default") */
const nano_config *predict_config_said(const nano_config *c, const gpt_shape *s, int from);
/* predict_print_heading: the model's line (its block, parameters and shape) and the step's
 * (batch, accumulation, dtype, compile, dropout) on stdout; a value of nanoGPT's defaults that
 * nothing gave is said as not given unless the program is nanoGPT (from: the run a --from
 * prediction is calibrated with, its values the trace's; trace_model: the model it recognized,
 * "" none; frac_how: the trained share's kind (predict_train.h's PREDICT_FRAC_*: the gradients',
 * the rest frozen; assumed, not measured; the gradients', the rest frozen or not reached);
 * trainable: the run's count of its trainable parameters where s is its model (0: the formula's P
 * times its share); trained: lines to say under the model's, what was said of the optimizer and
 * what trains, NULL or
 * "" none)
 */
void predict_print_heading(const nano_config *c, const gpt_shape *s, const char *from,
                           const char *trace_model, int frac_how, uint64_t trainable,
                           const char *trained);

/* predict_anchors: what the calibration added to the tensors beyond their rows (*tensors: the
 * formula's rows scaled down to a run they over-predict, negative) and to the peak beyond the
 * tensors, cache and outside rows (*rest: the part of the run the formula under-predicts) */
void predict_anchors(const prediction *p, int64_t *tensors, int64_t *rest);

/* predict_largest_tensor: the largest single tensor of p's moment: at the evaluation's own batch
 * where p is that pass (a BERT trained at 16 had been told its 953.8 MiB logits where its
 * evaluation at 64 made 3.73 GiB ones); *eval_b: that batch, else 0 */
uint64_t predict_largest_tensor(const gpt_shape *s, const prediction *p, const model_calib *cal,
                                const char **what, uint64_t *eval_b);

/* predict_print_calibration: "calibrated with FROM (...)": what cal (--from's) fitted, by category
 * or as measured (generic: no formula), and why a partial run's ratios are read as they are;
 * nothing when cal is not calibrated */
void predict_print_calibration(const char *from, const model_calib *cal, int generic);
/* predict_print_breakdown: the rows of p (cal: its calibration; generic: no formula; kv: a KV
 * cache not counted, 0: none, its keys' and values' shape kv_shape; weights_doc: the weights'
 * row in the run's precision, NULL: the category's own words) on stdout, from the heading to the
 * line before the peak */
void predict_print_breakdown(const prediction *p, const model_calib *cal, int generic, int compile,
                             uint64_t kv, const char *kv_shape, const char *weights_doc);

/* predict_print_peak: the "peak:" line of p (lower: the what-ifs are lower bounds, "at least");
 * a run out of memory whose own cache share is below the floor's gets the range between them
 * (advice_own_cache). Returns the range's low end, 0 when none. */
uint64_t predict_print_peak(const prediction *p, const model_calib *cal, const gpt_shape *s,
                            int lower);

/* predict_batch_assumed: the micro-batch of a config file or preset none gave (nanoGPT's default
 * 12 stands in, not the user's): nothing is recommended of it, in text or JSON (from: --from) */
int predict_batch_assumed(const nano_config *c, const gpt_shape *s, int from);
/* predict_print_recommended: the recommendation's line (found: rb, ra from advice_recommend; s
 * the configuration predicted, base the traced run's with the what-if's micro-batch for the
 * program's flags, mb its word for the micro-batch, nano: nanoGPT's setting names, from: the
 * accumulation is the traced program's; unmeasured: nothing is said where nothing fits; lb: the
 * largest micro-batch that fits at s's accumulation, 0 none (where none keeping the effective
 * batch fits, that one still does: not "not even 1 fits"); floor: where nothing fits, what a
 * micro-batch of 1 needs with the shortest input and activation checkpointing when even that
 * does not fit, else 0; targs: the training-arguments call the run's switches go in, NULL
 * none: advice_batch_flags; cache1: where none fits, the most allocator cache with which a
 * micro-batch of 1 would (the cache decides it), else 0) */
void predict_print_recommended(const nano_config *c, const gpt_shape *s, const gpt_shape *base,
                               const char *mb, int nano, int from, int found, uint64_t rb,
                               uint64_t ra, int unmeasured, uint64_t lb, uint64_t floor,
                               const char *targs, uint64_t cache1);

/* predict_print_note: "  (note)", escaped (the report's words may name the trace's modules and
 * files); nothing for "" */
void predict_print_note(const char *note);
/* predict_json_formula_lines: the largest tensor and the documents' basic formula into root, as
 * the text's two lines (only where a formula applies) */
void predict_json_formula_lines(cJSON *root, const gpt_shape *s, const prediction *p,
                                const model_calib *cal);

#endif
