/* model_views.h — the model's sections in the report views (model_text.c, model_json.c): they
 * only render a model_result built by model_build (model/model.c), never compute. */
#ifndef VT_ANALYZER_MODEL_VIEWS_H
#define VT_ANALYZER_MODEL_VIEWS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "model.h"

/* model_text: the configuration found, the formula table (measured / documents' / refined /
 * ratio, effective activation multiplier), the OOM diagnosis when f->has_oom, and the
 * advice list (bold when color). */
void model_text(FILE *out, const model_result *m, const run_facts *f, int color);

/* model_need_text: what the current configuration needs (model.h current), into out: "19.72 GiB",
 * or where its cache is a floor assumed, the range from the run's own cache (current_own) to it:
 * "16.58 GiB to 19.72 GiB" (the report's notes say which assumes what) */
const char *model_need_text(const model_result *m, char *out, size_t n);

/* model_text_verdict: "card NAME (SIZE): fits, X free" (or too tight / does not fit, X over) for
 * p on a card of capacity bytes, and when the allocator cache decides (advice_cache_limit) the
 * most cache with which it would keep the headroom; lower (p is a lower bound): "may fit, at most
 * X free", "does not fit, at least X over"; low (not 0: p's peak with the run's own cache share,
 * advice_own_cache): "does not fit, X to Y over". */
void model_text_verdict(FILE *out, const prediction *p, const char *card_name, uint64_t capacity,
                        int lower, uint64_t low);

/* model_largest_cache_text: what the largest micro-batch B's allocator cache decides, into out:
 * "the allocator cache decides: X of it assumed at B; with more than Y it keeps less than 5 %
 * free (measure it: vramtrace fit)" (model.h largest_cache, largest_cache_most), as the report's
 * text, its page and predict say it. */
const char *model_largest_cache_text(uint64_t cache, uint64_t B, uint64_t most, char *out,
                                     size_t n);
/* model_unpredicted_text: why the largest micro-batch (mb: its word) is not predicted, into out:
 * the run's tensors peaked after its forward's were freed, or (eval_batch: the run peaked in an
 * evaluation pass of that batch) in that pass, so the run does not measure how its training step
 * grows with the micro-batch; as the report's text, its page and predict say it. */
const char *model_unpredicted_text(const char *mb, uint64_t eval_batch, char *out, size_t n);
/* model_largest_none_text: the largest micro-batch's words where none keeps the headroom: "none,
 * not even 1", or, where the run's own ran on the card (model.h largest_ran), "none with that
 * room; B, this run's own, ran on the card with less free (its process peak X)". */
const char *model_largest_none_text(const model_result *m, const char *mb, char *out, size_t n);
/* model_own_share_text: "LB with the allocator cache at F % of its tensors, the room for
 * fragmentation a run can need; HI at the S % this run measured (a share that can grow with the
 * MB; measure it: vramtrace fit)", MB mb ("micro-batch", "batch"): the two ends of "largest ...:
 * LB to HI" (model.h largest_own) */
const char *model_own_share_text(uint64_t lb, uint64_t hi, double share, double floor,
                                 const char *mb, char *out, size_t n);
/* model_next_cache_text: the same of micro-batch B + 1, which does not keep the headroom with the
 * cache assumed: "at B+1 the allocator cache decides: X of it assumed; with at most Y it would
 * keep 5 % free (measure it: vramtrace fit)" (model.h next_cache, next_cache_most). */
const char *model_next_cache_text(uint64_t cache, uint64_t B, uint64_t most, char *out, size_t n);
/* model_item_verdict: what an advice item's prediction says on the card, into out: "fits (2.95
 * GiB left, 25 %)", "too tight for 5 % headroom (...)", "does not fit (2.98 GiB over)", "... with
 * the cache assumed" where that assumption decides; lower (the what-ifs are lower bounds: a
 * forward the OOM cut short): "may fit (at most 3.06 GiB left, ...)", "does not fit (at least ...
 * over)". The one writer of it (text and HTML). */
const char *model_item_verdict(const advice_item *it, uint64_t capacity, int lower, char *out,
                               size_t n);

/* model_json: adds "config", "formula", "oom" (diagnosis fields: requested_bytes,
 * capacity_bytes, cause, live_by_category, ...), "advice" and "prediction" to root. */
/* model_trained_unsure: where the model the stacks show may not be the one that trains (most
 * weights take no gradient, or no backward told which train: a textual inversion's frozen UNet
 * beside its one trained embedding), why, in words; NULL where it is what was trained */
const char *model_trained_unsure(const model_result *m);
void model_json(cJSON *root, const model_result *m, const run_facts *f);
/* model_config_shown: which of the configuration's keys the views list for m's run
 * (config_key_shown's transformer argument: a vision transformer's has no vocabulary). */
int model_config_shown(const model_result *m);

/* categories_json: {category key: bytes} for every category (calib_cats_json writes it). */
cJSON *categories_json(const cat_breakdown *b);

#endif
