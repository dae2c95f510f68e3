/* model_oom.h — the run's out-of-memory error in its model (model_oom.c): whether it cut the
 * moment measured short, what the what-ifs take from what was live at the failure, and the
 * optimizer's state a first step cut short would have made whole. */
#ifndef VT_ANALYZER_MODEL_OOM_H
#define VT_ANALYZER_MODEL_OOM_H

#include <stdint.h>

#include "model.h"

/* model_oom_act_why: m's evidence for an OOM of the activations (m->why, w bytes long): told again
 * where it came after the backward passes of one forward (run_facts oom_passes: what the step made
 * after them, apart from the forward's), else a sequence warm-up's note added (model_seq_cause) */
void model_oom_act_why(model_result *m, const run_facts *f, size_t w);

/* model_oom_cut: 1 when what the run measured (its tensors' peak) was cut short by its OOM: not
 * when an optimizer step began between that moment and the OOM (the OOM came in a later step;
 * steps after an OOM the program caught and trained on do not count), nor when the OOM came in
 * a forward after a backward that began after that moment (a later micro-batch's: the one
 * measured had made its logits). 0 without an OOM. */
int model_oom_cut(const run_facts *f);

/* model_oom_whole_state: the optimizer's state once made for the parameters whose gradients
 * were live at the out-of-memory error (the kind's bytes per trainable parameter): what the
 * what-ifs hold of a first step cut short and what the cause adds up. */
uint64_t model_oom_whole_state(const model_result *m, const run_facts *f);
/* model_oom_state_cause: advice_state_cause of the failure (capacity cap) into m->why, with the
 * whole state and what the backward makes of a weight's size (live, or the failed request: an
 * embedding table's dense gradient); 1 when it is the cause. */
int model_oom_state_cause(model_result *m, const run_facts *f, uint64_t cap);

/* model_oom_calibrate: m's calibration takes the state at f's failure (f->has_oom, at_oom not
 * empty): the step's whole state where the failure came after the forward (backward, optimizer,
 * gradients alive outside a forward) and the tensors did not peak in an earlier step that
 * ended; else a floor beside the formula's step. Its KV cache, a first forward's share, the
 * step a run that died before its first one never reached, a first step's state cut short. */
void model_oom_calibrate(model_result *m, const run_facts *f);

/* model_grads_cause: m's OOM, blamed on the micro-batch's tensors (OOM_ACTIVATIONS), came in a
 * backward where the weights and their gradients were most of the tensors live, and without
 * every tensor a micro-batch sizes (activations, logits, what the backward kept, inputs,
 * temporaries, unknown) what was live with the request still exceeds cap (the request a
 * weight's gradient, f->oom_weight, or the gradients an earlier backward made still to come):
 * m's cause is OOM_GRADIENTS, its evidence the bytes and what the parameters' gradients alone
 * still need, 1; else 0, m untouched (a DLRM out of memory making an embedding table's gradient
 * had been "the tensors of one micro-batch", 0 MiB of them). model_grads.c. */
int model_grads_cause(model_result *m, const run_facts *f, uint64_t cap);

/* model_kept_whole: m's calibration keeps whole (calib.frozen: the same at any batch, trained by
 * nothing) a frozen model's weights beside the one trained and the copies of the weights or of
 * their state the program made between steps and kept on the device (a checkpoint: f's
 * copies_at_*), its parameters' ratio fitted without them (with or without an OOM). */
void model_kept_whole(model_result *m, const run_facts *f);

/* model_data_oom: f's failing call made the program's own data (f->oom_data: a replay buffer
 * filled before training) and no forward had run: m's cause is OOM_DATA, with its evidence, and
 * there is no advice (nothing measured grows with a batch; advice_none says so, with what the
 * configuration needs at least), 1; else 0, m untouched (the micro-batch's tensors had been blamed,
 * 0 MiB of them). */
int model_data_oom(model_result *m, const run_facts *f);

/* model_data_flag: the flag whose integer value (2 or more) each nonzero b[0..nb) is a multiple
 * of and whose value the recorded script passes to what made the data (its dest among
 * f->oom_data_names), the largest such: the command line's ("--buffer-size 240000"), else a
 * default of the recorded script's that the command line does not give (*from_default 1); its
 * name into name (len bytes) and its value, 0 when none (name ""). What sizes a replay buffer: N
 * entries of a fixed size. */
long long model_data_flag(const nano_config *c, const run_facts *f, const uint64_t *b, int nb,
                          char *name, size_t len, int *from_default);

/* model_token_lever: a run out of memory whose micro-batch is not known, and whose recorded
 * script defines a flag that caps a batch's tokens by its name (--max-tokens: scriptflags.h
 * scriptflags_token_cap), given on the command line or with a default: the sentence that names it
 * as the lever, with its value and no predicted one (the trace does not show each batch's
 * tokens), into out (n bytes), 1; else 0, out "". */
int model_token_lever(const model_result *m, const run_facts *f, char *out, size_t n);
/* model_oom_line_flags: the integer flags of the recorded script (its add_argument calls) that
 * the line of f's failing call reads, where that line is the script's: ".dest" on the line's
 * value itself, or on the nearest earlier line that assigned a name it reads (two names back:
 * noise = torch.randn(half, n) reads --population_size through "half = a.population_size //
 * 2"); each with its value (the command line's, else the script's default) and the name it came
 * through, "--population_size (1280, on the command line; through half, line 67)", joined by
 * " and " into out (len bytes); their count, 0 (out "") when none, -1 when the line is not the
 * recorded script's (or none was recorded). model_oomflag.c. */
int model_oom_line_flags(const nano_config *c, const run_facts *f, char *out, size_t len);
/* model_line_flags: model_oom_line_flags of the line of site ("file.py:95 func"), any site,
 * following names back depth assignments; with depth 0 only the flags the line itself reads
 * whose value is 2 or more (a weight's line: `model.to(dev)` after `model = Lora(base,
 * a.lora_alpha)` reads no width of the weights) */
int model_line_flags(const nano_config *c, const run_facts *f, const char *site, int depth,
                     char *out, size_t len);
/* model_weights_lever: m's cause is the weights, gradients and state, whatever the micro-batch
 * (OOM_STATE, OOM_GRADIENTS): where the line that made the weights (f->params_site) is the
 * recorded script's and reads integer flags, m->why names them ("--hidden_dim (128, on the
 * command line)"): the lever that is left, since no micro-batch fits. Nothing said otherwise
 * (a model made from a config file or a pretrained name reads no flag there). */
void model_weights_lever(model_result *m, const run_facts *f);

#endif
