/* model_trace.h — what the trace shows of a run beyond its configuration (model_trace.c); the
 * parts of model_build (model.c) that read the trace's facts into the model. */
#ifndef VT_ANALYZER_MODEL_TRACE_H
#define VT_ANALYZER_MODEL_TRACE_H

#include "model.h"

/* model_complete_tokens: B·T measured (the token batch) gives T from the program's B, or B
 * from T: where T (B) is unknown, or the trace read it otherwise and the program's B (T) times
 * it is not B·T. Not where T is the forward's position ids' and divides B·T: the first forward's
 * batch is not the program's B (a ramp-up, a split), the position ids' T stands and
 * model_batch_seen says which batch ran. An evaluation's
 * token batch (ir->tokens_eval) gives T over that evaluation's own batch, eval_b from its flag
 * eval_flag (model_eval_batch_flag; 0: none given), never over the training's micro-batch, and
 * gives no B. A token batch made by joining tensors along their first dimension
 * (f->tokens_joined: a DPO loop's chosen and rejected sequences) holds more sequences than the
 * batch flag counts: no T over it, said (the ir read is f->inferred). */
void model_complete_tokens(nano_config *c, const run_facts *f, uint64_t eval_b,
                           const char *eval_flag);
/* model_batch_seen: the program's micro-batch (its flag) against the batch the trace shows: its
 * first forward's (the token batch over the trace's T, or its images) and the one at the moment
 * explained (f->tokens_now, images_now). A batch that changed during the run (a ramp-up) is said,
 * the moment's batch used where the flag is not it; one the same in both that the flag is not
 * makes the trace's the micro-batch (the flag is another batch: c->batch_other). */
void model_batch_seen(nano_config *c, const run_facts *f);
/* model_batch_per: the sequences each sample of the batch flag is in the forward (c->batch_per,
 * else 1): the largest micro-batch a whole number of them */
static inline unsigned model_batch_per(const nano_config *c)
{
    return c->batch_per > 1 ? (unsigned)c->batch_per : 1;
}
/* model_trace_state_moved: where the optimizer's state sat in other rows (no Python frames), the
 * state the recognized optimizer keeps moved from meas's activations to its own row, for the
 * calibration (m->state_moved: how much) */
void model_trace_state_moved(model_result *m, const run_facts *f, cat_breakdown *meas);
/* model_trace_dtype: the precision the trace shows when nothing gave it; untyped: the weights'
 * bytes whose element size the trace does not give (model_weights_untyped), which leave the
 * precision of what they compute unknown. */
void model_trace_dtype(nano_config *c, const run_facts *f, uint64_t untyped);
/* model_fp32_compute: an eager run, every tensor seen, that made no 16-bit copy of a weight
 * (autocast makes them) nor used a GradScaler, whose forward's outputs (its logits, its first
 * token tensor, its attention before an out-of-memory error) or whole optimizer steps of fp32
 * trained weights say fp32 compute: the evidence in words, *by_weights 1 where it is the trained
 * weights alone (which say nothing of weights that take no gradient); else NULL
 * (model_weights.c) */
const char *model_fp32_compute(const run_facts *f, int *by_weights);
/* model_fp32_weights: what m's fp32 weights are, in the formula's reasons' words (model_weights.c):
 * master weights of an autocast run that trains them all, or "not all trained" / "not all with a
 * gradient" (recognize.h's rest_untold), or fp32 compute */
const char *model_fp32_weights(const model_result *m, const gpt_shape *s);
/* model_weights_untyped: of the weights made before training (their largest bytes over the run),
 * those that take no gradient (not the trained ones, by their gradients' size; not an EMA's copy
 * of them, nor copies the program keeps), where nothing in the trace gives the element size of
 * at least 1/16 of the weights (1/4 where autocast copied frozen weights: the rest, embeddings
 * and norms, theirs): not autocast's copies of them (fp32 weights), fp32 logits or
 * tokens made from them, the weights' sizes or fp32 master copies (16-bit). A frozen 4-bit base
 * (a packed uint8 tensor holds two weights), a frozen encoder cast to fp16 beside an fp32 model:
 * counting them at 4 B an element had made a QLoRA's 6.74 B weights "1201.80 M elements" and
 * called its bf16 compute fp32. 0: none, fewer (buffers' share: said with the rest), or nothing
 * trains that the trace counts. */
uint64_t model_weights_untyped(const model_result *m, const run_facts *f);
/* model_untyped_set: m->weights_untyped (model_weights_untyped) and, of them, m->untyped_packed,
 * the weights packed two 4-bit elements a byte; weights_untyped returned */
uint64_t model_untyped_set(model_result *m, const run_facts *f);
/* model_trace_compile: torch.compile on or off as the trace shows it when nothing gave it; a
 * compile=True that ran eager becomes a note. */
void model_trace_compile(model_result *m, const run_facts *f, int nanogpt);
/* model_gated_block: a gated-MLP decoder's block for the refined formula, or the note that the
 * formulas are GPT-2's. */
void model_gated_block(model_result *m, const run_facts *f, int nanogpt);
/* model_no_forward: every allocation of init, no forward, backward, step or OOM (m->no_forward,
 * 1): nothing measured grows with a batch, so no advice (it had been told "needs ~830.0 MiB",
 * "keep the current configuration" and "largest micro-batch 1048576", the search's limit, for a
 * GPT-2 whose training takes 7.75 GiB); no formula is compared, and what only a forward shows
 * (checkpointing, compile, a KV cache, ...) is unknown, not off. */
int model_no_forward(model_result *m, const run_facts *f);
/* model_kv_kept (model_kv.c): of kv (the KV cache's bytes, by category; in place) what
 * use_cache=False saves: less the share whose copies replaced their inputs (f->kv_replaced), which
 * the attention would keep without the cache (a Llama: its keys after the rotary embedding, its
 * values; GPT-2's stay views of a tensor kept either way). (The tensors' largest without the
 * cache, calib.no_kv_tensors, stays a floor: less the whole cache, it is at least that.) */
void model_kv_kept(const run_facts *f, cat_breakdown *kv);
/* model_kv_calib (model_kv.c): m's calibration's KV cache (the measured breakdown's: at the
 * tensors' peak or the process peak, less model_kv_kept's share), whether it is measured, and
 * the cache a later forward extended (a generation's: kv_read); a peak in a no-grad pass of such
 * a run keeps its cache whatever the training forward does: none then */
void model_kv_calib(model_result *m, const run_facts *f);

#endif
