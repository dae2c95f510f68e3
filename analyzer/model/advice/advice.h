/* advice.h — calibrate the refined formula to a measured run, predict what-ifs, classify an
 * OOM's cause and list the documents' fixes best first with their predicted peaks
 * (formula.md §4). The formulas themselves are in formula.h. */
#ifndef VT_ANALYZER_ADVICE_H
#define VT_ANALYZER_ADVICE_H

#include <stddef.h>
#include <stdint.h>

#include "categories.h"
#include "config.h"
#include "formula.h"
#include "recognize.h"

#define ADVICE_HEADROOM_PCT 5 /* keep at least this % of the card free */
#define ADVICE_HEADROOM (ADVICE_HEADROOM_PCT / 100.0)
#define ADVICE_STR_(x) #x
#define ADVICE_STR(x) ADVICE_STR_(x)
#define ADVICE_HEADROOM_PCT_TEXT ADVICE_STR(ADVICE_HEADROOM_PCT) /* "5", for string literals */
/* ADVICE_RETRY_TEXT: what a run that went on from an out-of-memory failure did (the row "none"
 * and the notes say it alike) */
#define ADVICE_RETRY_TEXT                                                                          \
    "its allocator reached the card and released its cache to go on (a synchronizing retry)"
/* ADVICE_UNSTEPPED_TEXT: a trace cut before the run's first optimizer step, no OOM (model.h
 * cut_unstepped), as the report and predict say it alike */
#define ADVICE_UNSTEPPED_TEXT "the trace ends with no optimizer step seen"
/* ADVICE_NEW_STEP_TEXT: how model_oom.c's note of a run that died in a step of a kind no earlier
 * step ran begins (run_facts' oom_new_step; predict --from tells that note by it) */
#define ADVICE_NEW_STEP_TEXT "the run died in a step of a kind no earlier step ran"
/* advice_cut_why: why such a trace ends there, beside ADVICE_UNSTEPPED_TEXT: the file cut (the
 * process killed, or still running), or the capture stopped early (ADVICE_STOPPED_*: its
 * trailer says so; a `ulimit -f` run had been said killed) */
enum { ADVICE_STOPPED_NOT, ADVICE_STOPPED_DISK_FULL, ADVICE_STOPPED_OUTPUT_ERROR };
static inline const char *advice_cut_why(int stopped)
{
    /* (DISK_FULL: a report's JSON does not say which, so neither route names one) */
    return stopped == ADVICE_STOPPED_DISK_FULL      ? "its capture stopped early: no room for the "
                                                      "file (a full disk, a quota or the "
                                                      "file-size limit)"
           : stopped == ADVICE_STOPPED_OUTPUT_ERROR ? "its capture stopped early: writing the "
                                                      "trace failed"
                                                    : "its process killed, or still running";
}

/* A calibration: how the measured run differs from the refined formula. */
typedef struct model_calib {
    gpt_shape measured_shape;  /* the run's shape (what ratios were fitted at) */
    cat_breakdown measured;    /* the measured breakdown (0s when not calibrated) */
    cat_breakdown refined;     /* the refined formula at measured_shape */
    double ratio[CAT_COUNT];   /* measured / refined for formula categories (1 = formula) */
    uint64_t fixed[CAT_COUNT]; /* carried over unchanged: context, kernel code, external, ... */
    double cache_fraction;     /* allocator cache / tensor bytes; < 0: the floor (no data) */
    /* ... of a later step, where the run measured one step only and took it again through the
     * allocator's rules (model.c: replay_again.c's); < 0: none (cache_fraction for every step) */
    double later_cache_fraction;
    /* 1: a what-if up to twice the run's micro-batch counts the share cache_fraction measured,
     * with no room up to the fragmentation floor (advice_largest_own: the largest so, said beside
     * the one that counts the room) */
    int own_share_to_twice;
    int expandable;        /* 1: expandable_segments:True (smaller fragmentation floor) */
    int partial;           /* 1: fitted to a run that stopped at an OOM, or (unstepped) whose
                            * trace ended before its first optimizer step */
    int went_on;           /* 1: that OOM one the program caught and went on from (JSON:
                            * oom_caught.oom_is_caught) */
    int unstepped;         /* 1: the latter, no OOM (model.h cut_unstepped; not in the JSON:
                            * the report's run.status and iterations say it) */
    int oom_later;         /* 1: and that OOM came after the step measured had ended (not
                            * cut: advice_calibrate): its ratios are as measured */
    double temp_per_token; /* temporaries above 64 MiB, per token (scale with B*T) */
    int calibrated;        /* 1: fitted to a measurement */
    int global;            /* 1: categories unknown; one ratio for all tensor bytes */
    int weights_exact;     /* 1: measured parameters are the tensors themselves (tensor mode):
                            * gradients / AdamW state not created yet derive from them */
    /* OOM runs (advice_calibrate_oom): the state at the failure, a lower bound on the step */
    int has_oom;     /* 1: oom_live / oom_request are set */
    int oom_tight;   /* 1: a forward had completed before the failure */
    int oom_in_step; /* 1: it came in an optimizer step: autocast's copies, the forward's, freed */
    cat_breakdown oom_live; /* live by category at the failure */
    /* a forward cut short by the failure after an earlier forward of the run's shape completed:
     * its activations and autocast copies at their largest over the run (what that forward
     * would have held whole; 0s: none). predict_oom takes the larger of these and oom_live (a
     * Lightning Llama 400M cut 84 % into its second step's forward: 496 MiB of copies live of
     * the 650.5 every forward made) */
    cat_breakdown fwd_whole;
    uint64_t oom_request; /* bytes the failing call asked for */
    double act_whole;     /* > 1: the activations at the failure were this share of the whole
                           * forward's (a first forward cut short, weights used evenly) */
    double logits_whole;  /* > 0: the logits/loss bytes that forward would have made at its
                           * end (at the run's shape), when it died before them */
    int lower;            /* 1: predictions are lower bounds (a first forward cut short, no
                           * formula): no allocator cache is assumed in them, for the floor is
                           * room a run may need, not bytes it must hold (a GPT-2 evaluation at
                           * B=16 had been told "at least 11.10 GiB", 1.80 of them that floor;
                           * its run took 10.13) */
    /* transformers' KV cache in measured and in oom_live, by category: what a shape with
     * no_kv_cache does not make (the same share of each category, at any shape) */
    cat_breakdown kv, kv_oom;
    /* the tensors at their largest over the run without the KV cache's (0: none seen): the run
     * held that much at once at its own shape, so use_cache=False there is at least that */
    uint64_t no_kv_tensors;
    /* 1: what the attention keeps of kv in the cache's stead is not measured (run_facts's
     * kv_unmeasured): kv and kv_oom are the whole cache, use_cache=False's predictions the
     * least they can be */
    int kv_unmeasured;
    /* KV cache bytes a later forward extended (a generation: run_facts' kv_read_bytes): the run
     * reads a cache, so use_cache=False is the training forward's alone */
    uint64_t kv_read;
    /* an EMA's copy of the weights among the parameters measured / at the failure: not trained,
     * so no gradient or optimizer state derives from it (weights_of) */
    uint64_t ema;
    /* a second, frozen model's weights among the parameters (a teacher, a reference model; the
     * shape is the trained one's): kept whole at any shape, no gradient or state from them */
    uint64_t frozen;
    /* the weights packed two 4-bit elements a byte among the parameters (infer.h's
     * packed_bytes: a QLoRA's base): the trained share of the weights' elements (train_frac) is
     * of their bytes counted at the parameters' element size (advice_weights_at) */
    uint64_t packed;
    /* ... and their quantization state beside them (infer.h's qstate_bytes): no parameters,
     * left out of the bytes the trained share is of (advice_weights_at) */
    uint64_t qstate;
    /* what a step made after its backward passes of one forward, and the request it failed, at
     * the failure (run_facts.oom_passes): among oom_live's unknown bytes, kept at any shape */
    uint64_t passes_kept;
    /* the program's data among the inputs measured / at the failure (run_facts.data_at_*: a replay
     * buffer it filled before training): kept whole at any micro-batch */
    uint64_t data;
    /* the tensors at their largest in an optimizer step (all 0: no step measured): the
     * weights, their gradients, the optimizer's state and temporaries, which a smaller
     * micro-batch leaves as they are; a prediction is at least this step moved to its shape */
    cat_breakdown step;
    /* 1: step is not measured but the step a run that died before its first one would have
     * reached (advice_unreached_step) */
    int step_unreached;
    /* 1: that step's update makes no tensor (plain SGD, the script's calls say: run_recognition's
     * sgd_bare): no temporaries the size of the gradients */
    int step_in_place;
    /* 1: the program keeps no optimizer state between its steps: steps ran before the measured
     * moment, its step holds state (step), and none was live there (offloaded to the host, or
     * freed after each step): a what-if's forward and backward hold none either (model.c
     * model_state_not_kept); the step itself, with its state, is predict_step's */
    int state_not_kept;
    /* 1: the optimizer made its state at its construction, before any step (run_recognition's
     * optim_ctor: torch.optim.Adagrad's sums), not at its first step */
    int state_ctor;
    /* the backward's tensors of a weight's size at the measured moment and at the failure, and
     * whether the failed request had such a size (run_facts' bwd_weight*): a what-if keeps them
     * whole (an embedding table's dense gradient had been scaled with the micro-batch) */
    uint64_t bwd_weight, bwd_weight_oom;
    int request_weight;
    /* the evaluation pass's own batch (a command line's --eval-batch-size 16), where the run's
     * tensors peaked in that pass; 0: none. A micro-batch leaves that pass as it is: a
     * prediction is at least the run's own batch's, the other knobs the what-if's. */
    uint64_t eval_batch;
    /* ... and there: what the training held at once outside it (its tensors, measured; with the
     * optimizer's state added where no step after the first was measured), the evaluation's
     * tensors at its peak and those of them that
     * scale with its batch (activations, logits, attention, inputs, temporaries): an evaluation
     * batch's what-if (advice_eval.c); 0: none */
    uint64_t eval_train, eval_tensors, eval_scaled;
    char eval_flag[64]; /* the flag that sets that batch ("--eval-batch-size"), "" unknown */
    /* 1: that pass is a no-grad pass whose outputs the step uses (a rollout or a generation
     * under model.eval(), its updates after it: run_facts.peak_step_pass / oom_step_pass), no
     * evaluation: a smaller batch of it changes what the steps train on */
    int eval_feeds;
    /* 1: the run ran out of memory in that evaluation: what it needed past the request that
     * failed is not measured, so every what-if keeping it is a lower bound, none recommended */
    int eval_cut;
    /* a complete compiled run's 16-bit weight casts among its measured activations
     * (formula_compiled_casts at the measured shape; 0 when they exceed its activations, or a
     * partial run's): kept and moved with the weights, not scaled with the tokens; the ratio
     * of the activations is fitted to the rest */
    uint64_t compiled_casts;
    /* 1: measured is a moment after the forward's tensors were freed (the optimizer step, late
     * in a backward; advice_calib_after_forward): the forward's categories it held little of
     * are fitted to their largest over the run, its gradients are the step's (a forward holds
     * the formula's), and no forward is anchored on it (predict_step is that moment). 2: the
     * same for an evaluation's moment, every forward category of it the evaluation's
     * (advice_eval_training's copy; never in a report's calibration) */
    int after_forward;
    /* the run peaked in an evaluation at a batch of its own (eval_batch; one that completed):
     * the training forward's ratios of the forward's categories, which that moment does not
     * measure (its activations' largest over the run, the formula's for the rest; 0s: none). A
     * training what-if is predicted with them (advice_eval_training): a GPT-2 at B=2 evaluating
     * 16 had B=6 predicted at 26.6 GiB of tensors, its evaluation's logits scaled as a step's */
    double train_ratio[CAT_COUNT];
    /* 1: the training loop keeps every gradient through the next step's forward (Lightning's
     * automatic optimization zeroes them after it, in its closure): a forward holds them at
     * any accumulation (kept_grads; a Lightning Llama 400M out of memory at B=4 with 2
     * accumulation steps predicted B=1 at 7.03 GiB of tensors, its run took 8.09) */
    int grads_kept;
    /* the micro-batch the program went on with after an out-of-memory error it caught (a
     * smaller batch's retry; 0: none measured), its tensors' largest over its steps, and the
     * process and reserved levels it held then: its own configuration measured (advice_floors.c
     * went_on_anchor), and the cache reserved before the error that its steps never used (0: none
     * or not known) */
    uint64_t went_on_B, went_on_tensors, went_on_process, went_on_reserved, went_on_unused;
    int went_on_steps; /* its optimizer steps (one: its forwards ran before the state existed) */
} model_calib;

/* advice_backward_keeps: live's breakdown is such a backward's (advice_oom_cause says its bytes);
 * advice_backward_kept: an OOM in a backward (not in the step) whose own tensors (made by it, no
 * parameter's .grad) live at the failure are at least half the activations still live there and
 * an eighth of every tensor live: a backward that keeps what it makes (per-sample gradients, as
 * DP-SGD's grad samplers keep for the optimizer's clipping: B x every trained weight, growing
 * with each layer it reaches) had not finished, and what it would keep by its end is not
 * measured: the what-ifs scale a part of it, lower bounds (model_oom.c). A backward's scratch,
 * freed as it goes, is a few per cent of the activations (12 % at most in the committed traces),
 * or a few MiB beside the weights (a DLRM's 13.5 MiB beside its 8 GiB of embeddings, past its
 * last activations' 6.5). */
static inline int advice_backward_keeps(const cat_breakdown *b)
{
    uint64_t bw = b->bytes[CAT_BACKWARD], act = b->bytes[CAT_ACTIVATIONS];
    uint64_t live = 0;
    for (int k = 0; k < CAT_COUNT; k++)
        live += k == CAT_CACHE || k == CAT_CONTEXT || k == CAT_KERNEL_CODE || k == CAT_EXTERNAL
                    ? 0
                    : b->bytes[k];
    return bw && bw >= act / 2 && bw >= live / 8;
}
static inline int advice_backward_kept(const model_calib *c)
{
    return c->has_oom && !c->oom_in_step && advice_backward_keeps(&c->oom_live);
}

/* A prediction for one shape. */
typedef struct prediction {
    cat_breakdown by_cat;    /* bytes per category at the peak */
    uint64_t tensor_bytes;   /* everything the caching allocator hands out (allocated) */
    uint64_t reserved_bytes; /* tensor bytes + allocator cache */
    uint64_t peak_bytes;     /* process: reserved + context + kernel code + external */
    uint64_t required_bytes; /* peak_bytes, with the cache raised to the fragmentation floor
                              * (advice_cache_floor) when the calibration's is lower: what
                              * must fit the card */
    int oom_state; /* 1: the run's state at its out-of-memory failure, moved to the shape (what
                    * was live then: by_cat is that, not the formula's step peak) */
    int moment;    /* PREDICT_AT_*: the moment by_cat is of */
    int kv_floor;  /* 1: raised to the tensors the run held at once without its KV cache
                    * (calib.no_kv_tensors), by_cat left as predicted */
#define PREDICT_AT_STEP_PEAK 0 /* the step's peak as the formula or the run has it */
/* PREDICT_AT_OPTIMIZER_STEP: the run's optimizer step (calib.step: measured, or the one it did
 * not reach) moved to the shape, larger there than the forward's end; PREDICT_AT_BACKWARD_END: the
 * formula's end of the backward (formula_backward_end; from a run, its weights moved to the shape),
 * larger than its start */
#define PREDICT_AT_OPTIMIZER_STEP 1
#define PREDICT_AT_BACKWARD_END 2
/* PREDICT_AT_EVALUATION: the evaluation pass with a batch of its own (calib.eval_batch) the run
 * peaked in, as it ran, with the what-if's other knobs (advice_predict) */
#define PREDICT_AT_EVALUATION 3
/* PREDICT_AT_MEASURED: the run's own configuration where every moment above came below what it
 * measured (a moment the formula leaves rows out of: a GPT-2 at B=1, T=64, its position table's
 * gradient scratch, 192 KiB): its peak as the run measured it (advice_predict) */
#define PREDICT_AT_MEASURED 4
/* PREDICT_AT_WENT_ON: the micro-batch the program went on with after an error it caught (or a
 * smaller one, held to it): its tensors as its steps measured them, never more than the process
 * held then (calib.went_on_B; advice_floors.c) */
#define PREDICT_AT_WENT_ON 5
} prediction;

/* advice_calib_default: no measurement: formula ratios 1, CUDA context 500 MiB, cuBLAS
 * workspace 8 MiB, allocator cache at the fragmentation floor of each shape. */
void advice_calib_default(model_calib *c, const gpt_shape *s);

/* advice_calibrate: fits c to measured (bytes by category at the run's peak) for the run's
 * shape s: per formula category measured/refined; context, kernel code, external and unknown
 * carried over; temporaries up to 64 MiB carried, the rest per token; the allocator cache as
 * a fraction of tensor bytes. When unknown + temporaries outweigh the classified bytes, one
 * ratio for all tensor bytes (global). A partial run's cache (squeezed by the OOM) is not
 * trusted below the fragmentation floor. partial=1 when the run stopped at an OOM; cut=1 when
 * that came before the measured step's peak was reached (not where an optimizer step followed
 * the moment measured: its forward and backward had ended): a category measured below the
 * formula is then not trusted (ratio kept at 1). */
void advice_calibrate(model_calib *c, const gpt_shape *s, const cat_breakdown *measured,
                      int partial, int cut);

/* advice_calibrate_oom: adds the state at an OOM (live by category, the failed request, the
 * phase) to a partial calibration: what-ifs then scale that state (B-proportional parts with
 * the tokens, fixed parts kept, gradients / optimizer state that did not exist yet from the
 * formula), so the failed configuration is predicted at least at live + request. tight = 1
 * when the failure came after the forward (backward, optimizer): the state is then the
 * prediction; else the larger of it and the formula's. */
void advice_calibrate_oom(model_calib *c, const cat_breakdown *live, uint64_t request, int tight);

/* advice_calib_after_forward: c, calibrated on a complete run's moment after its forward's
 * tensors were freed (its activations there under a quarter of the formula's, some measured
 * over the run), refitted: each of the forward's categories (activations, logits/loss,
 * attention, autocast copies) held under a quarter of the formula's there takes its ratio from
 * largest, the category's largest live bytes over the run (the formula's where it held none);
 * the temporaries measured there are the step's or the backward's (none carried into a forward:
 * a Lightning Llama at B=1 had its optimizer step's 1.39 GiB scaled with the tokens).
 * c->after_forward set. 1 when done. (A one-step Llama 400M with checkpointing, peaking in its
 * optimizer step, had its activations fitted to a 4-byte scalar and every forward anchored down
 * to that moment: 5.69 GiB of tensors predicted for a later step that took 6.71.) */
int advice_calib_after_forward(model_calib *c, const uint64_t largest[CAT_COUNT]);
/* advice_calib_state_unkept: c, so calibrated on a step's moment that held the optimizer's
 * state, sets state_not_kept where the run says its forwards held none: at its own shape a
 * forward with the state would hold more tensors than the run's peak, a later moment, did, and
 * one without it no more (a program that moves AdamW's state to the host after each step, peak
 * 6.05 GiB in its step, had been told its configuration needs 8.61). Returns the flag. */
int advice_calib_state_unkept(model_calib *c);
/* advice_eval_train_ratios: c, calibrated on an evaluation at its own batch, gets the training
 * forward's ratios (c->train_ratio) from largest, each category's largest live bytes over the
 * run: the activations' (an evaluation saves none), the formula's for logits/loss, attention and
 * autocast copies (the evaluation's at its own batch are no step's) */
void advice_eval_train_ratios(model_calib *c, const uint64_t largest[CAT_COUNT]);
/* advice_eval_training: tr, c's training as a calibration: as measured after its forward (every
 * forward category of the formula with train_ratio, no gradients, scratch or temporaries of the
 * evaluation's moment, no anchor on it), no evaluation of its own. 0 where c has none. */
int advice_eval_training(const model_calib *c, model_calib *tr);
/* advice_after_forward_gone: c measured category k at such a moment where a forward holds
 * what it did not (the gradients, the backward's scratch, and the forward's categories refitted
 * there): predict the forward's k from the formula and its ratio, not from that moment */
int advice_after_forward_gone(const model_calib *c, category k);

/* advice_unreached_step: a run that died before its first optimizer step (c has its state at
 * the failure, no step measured), one that trains (s, the run's shape): c->step becomes that
 * step at s, unmeasured (c->step_unreached): the weights the run held, every trainable
 * parameter's gradient in the parameters' dtype, the optimizer's state as s has it (recognized,
 * or AdamW's assumed), one gradient-sized list of temporaries (PyTorch's default foreach update;
 * a fused one makes none), the inputs, workspaces and unknown bytes live at the failure. 1 when
 * set; 0 when c or s does not allow it (segments only, forwards only, no weight seen trained). */
/* advice_weights_at: p bytes of weights, those of them packed 4-bit (c->packed) counted at s's
 * parameter element size, their quantization state (c->qstate) left out, as the share of trained
 * elements (formula_train_frac) reads them (a
 * QLoRA out of memory before its first step had its 16.78 M bf16 adapters' gradients predicted
 * 9.2 MiB, their 32) */
double advice_weights_at(const model_calib *c, const gpt_shape *s, uint64_t p);
int advice_unreached_step(model_calib *c, const gpt_shape *s);

/* advice_moment_key: "step_peak", "optimizer_step", "backward_end", "evaluation" or "measured"
 * (JSON) for PREDICT_AT_* */
const char *advice_moment_key(int moment);
/* advice_own_floors: p (advice_predict's, at shape s) no lower than what the run measured at
 * its own configuration: its peak, for a complete run whose peak came after its forward and
 * every moment predicted came below it (PREDICT_AT_MEASURED); with use_cache=False, the tensors
 * it held at once without its KV cache (kv_floor); and where the program went on after an error
 * it caught, the micro-batch it trained with as measured, a smaller one no more than that, a
 * larger one no less (PREDICT_AT_WENT_ON). advice_floors.c. */
void advice_own_floors(const model_calib *c, const gpt_shape *s, prediction *p);
/* advice_raise_by: p's process, reserved and required bytes raised by add (a floor under them:
 * the run's own measurement; saturating). advice_floors.c. */
void advice_raise_by(prediction *p, uint64_t add);
/* advice_same_run: s is m's run as far as B, T, L, d, V, compile and checkpointing go (the other
 * knobs are each caller's) */
int advice_same_run(const gpt_shape *s, const gpt_shape *m);
/* advice_bytes: a predicted size as bytes, clamped to [0, 2^56] (64 PiB: far beyond any card) so
 * that a huge configuration neither overflows the conversion nor wraps the sums. */
#define ADVICE_BYTES_MAX ((uint64_t)1 << 56)
static inline uint64_t advice_bytes(double v)
{
    return !(v > 0) ? 0 : v >= (double)ADVICE_BYTES_MAX ? ADVICE_BYTES_MAX : (uint64_t)(v + 0.5);
}
/* advice_with_cache: out's totals from its tensor bytes (by_cat's tensor rows, summed) at shape
 * s2: the allocator cache in the share the run measured (room up to the fragmentation floor
 * where that share is no measure of s2's), the bytes outside PyTorch as the run had them, and
 * what must fit the card (advice_cache.c). */
void advice_with_cache(const model_calib *c, const gpt_shape *s2, prediction *out, uint64_t tensor);
/* ADVICE_LATER_STEP: what simulated programs measured over three steps peaked at beside the
 * prediction from their first step alone (tests/integration/sim_later_step.sh holds them to it) */
#define ADVICE_LATER_STEP                                                                          \
    "simulated programs measured over three steps peaked from 11 % below to 11 % above what "      \
    "their first step alone predicted"
/* advice_predict: the calibrated peak for shape s (steady state, iteration >= 1). */
void advice_predict(const model_calib *c, const gpt_shape *s, prediction *out);

/* advice_pass_word: what the pass whose batch flag is flag ("--sample_batch 256") does, as its
 * words say: "sampling", "generation", "rollout", "evaluation" (eval, val, valid, validation, or
 * no flag), else "no-grad" (a no-grad pass's whose outputs the step uses, its flag tied to it by
 * the recorded script: run_facts.step_pass_flag) */
const char *advice_pass_word(const char *flag);
/* advice_eval_calibrate: c's evaluation (c->eval_batch set; one that completed: one cut short by
 * an out-of-memory failure gives no bound) from the tensors live at its peak (at_eval), the
 * training's largest tensors outside it (train), the optimizer's state to add to them (0: a
 * later step measured). */
void advice_eval_calibrate(model_calib *c, const cat_breakdown *at_eval, uint64_t train,
                           uint64_t state);
/* advice_predict_eval: s with another evaluation batch (s->eval_B): the training as it ran, held
 * in its tensors and the fragmentation floor's cache, and the evaluation's batch-sized tensors at
 * eval_B added on top, none placed in that cache (an upper bound: the training's cached blocks
 * are the evaluation's only where they fit it) */
void advice_predict_eval(const model_calib *c, const gpt_shape *s, prediction *out);
/* advice_eval_largest: the largest evaluation batch below the run's whose prediction fits
 * capacity with headroom and peaks at most at most; 0 where none does, or where the run peaked
 * in no such pass. */
uint64_t advice_eval_largest(const model_calib *c, const gpt_shape *s, uint64_t capacity,
                             double headroom, uint64_t most);

/* advice_cache_floor: the allocator cache (fraction of tensor bytes) a run of shape s needs
 * room for: FORMULA_CACHE_* by compile and expandable. */
static inline double advice_cache_floor(const gpt_shape *s, int expandable)
{
    if (expandable)
        return s->compile ? FORMULA_CACHE_EXPANDABLE_COMPILED : FORMULA_CACHE_EXPANDABLE_EAGER;
    return s->compile ? FORMULA_CACHE_COMPILED : FORMULA_CACHE_EAGER;
}

/* advice_own_cache: p (at shape s) with the allocator cache at the share of the tensors that c's
 * run, cut short by an out-of-memory failure, held then (*share), where p counts the fragmentation
 * floor in its place (that run's cache, squeezed by the failure, is no measure of what it needs,
 * nor is the floor, an assumption: a DLRM's 8 GiB of embedding tables and their gradients, each
 * in a segment of its own, reserved 0.3 % over its tensors on a larger card, where the floor had
 * said 20 %): the low end of a range whose high end is p's peak, never below what was live at the
 * failure and the request; 0 where p assumes no such floor, or s is not the run's own
 * configuration (a what-if's verdict counts the floor) (advice_floors.c) */
uint64_t advice_own_cache(const model_calib *c, const gpt_shape *s, const prediction *p,
                          double *share);
/* advice_fits: 1 when peak <= capacity * (1 - headroom); -1 when capacity is 0 (unknown).
 * Callers pass prediction.required_bytes. */
int advice_fits(uint64_t peak, uint64_t capacity, double headroom);

/* advice_fit_cache: when p keeps the headroom on capacity by less than twice the cache it assumes
 * (*cache: the runs' caches moved 2-3x between shapes), the most cache with which it still
 * would; else 0 (nothing to say) */
uint64_t advice_fit_cache(const prediction *p, uint64_t capacity, double headroom, uint64_t *cache);
/* advice_largest_cache: the prediction at micro-batch B (s otherwise), which keeps the
 * headroom: when less than twice the cache it assumes (*cache) would not (the runs' caches moved
 * 2-3x between micro-batches), the most with which it still would; else 0 (nothing to say). */
uint64_t advice_largest_cache(const model_calib *c, const gpt_shape *s, uint64_t B,
                              uint64_t capacity, double headroom, uint64_t *cache);
/* advice_largest_own: the largest micro-batch that keeps the headroom where a what-if up to twice
 * the run's own counts the cache share the run measured (*share) with no room up to the
 * fragmentation floor, when above lb (the largest that counts the room); else 0. The share can
 * grow with the micro-batch (a VGG16-BN with SWA: 1.16x its tensors at 2048, 1.18x at 3816, where
 * that share's largest, 3816, kept 3.6 % free), or not (an LSTM at 160 kept 5.7 %, above the
 * room's 146): the two are said together. */
uint64_t advice_largest_own(const model_calib *c, const gpt_shape *s, uint64_t lb,
                            uint64_t capacity, double headroom, double *share);
/* advice_next_cache: the prediction at micro-batch B + 1 (s otherwise), which does not keep the
 * headroom only for the cache it assumes, not measured: a partial run's (out of memory, or no
 * step: the fragmentation floor whole), or the room for fragmentation it adds to the cache the
 * run measured (its peak alone would): the most cache (*cache: the cache assumed) with which it
 * would, where more than 2 % under the assumed; else 0 */
uint64_t advice_next_cache(const model_calib *c, const gpt_shape *s, uint64_t B, uint64_t capacity,
                           double headroom, uint64_t *cache);

/* advice_cache_limit: when p does not keep the headroom on capacity but its tensors, context,
 * kernel code and external bytes alone would, the most allocator cache with which it would
 * (the cache, not the model, decides the verdict); else 0. *cache: the cache p assumed. */
uint64_t advice_cache_limit(const prediction *p, uint64_t capacity, double headroom,
                            uint64_t *cache);

/* advice_largest_unpredicted: no largest micro-batch is said (lb, advice_largest_batch's) for a
 * run that does not measure how its step grows with the micro-batch (growth_unmeasured), but
 * where one out of memory (oom) would not fit at 1 either: that is measured, its moment needing
 * what it held at its failure whatever the micro-batch (the report's model.c and predict alike) */
static inline int advice_largest_unpredicted(int growth_unmeasured, int oom, uint64_t lb)
{
    return growth_unmeasured && (lb || !oom);
}
/* advice_largest_batch: the largest batch_size (1..2^20, other knobs of s kept) whose
 * required bytes fit capacity with headroom; 0 if not even 1 fits or capacity is 0. */
uint64_t advice_largest_batch(const model_calib *c, const gpt_shape *s, uint64_t capacity,
                              double headroom);
/* advice_recommend: the micro-batch b and accumulation a to run s with on a card of capacity
 * (required: s's predicted need): s itself where it fits (the report's "none"), else the largest
 * that fits keeping the effective batch (forwards only: the largest that fits), lb the largest
 * micro-batch that fits; unmeasured (how the step grows with the micro-batch is not measured):
 * s only, if it fits. 0 when none. */
int advice_recommend(const model_calib *c, const gpt_shape *s, uint64_t required, uint64_t lb,
                     uint64_t capacity, int unmeasured, uint64_t *b, uint64_t *a);
/* advice_keep_effective_fits: advice_keep_effective's micro-batch b <= lb and <= s->B (s
 * itself where it fits: a memory tool does not recommend a larger micro-batch, the report
 * neither) and accumulation a, the largest whose own shape fits capacity with headroom (more
 * micro-steps than one keep every gradient through the next forward: the largest micro-batch that
 * fits alone, lb, can fail with accumulation); 0 if none. */
int advice_keep_effective_fits(const model_calib *c, const gpt_shape *s, uint64_t lb,
                               uint64_t capacity, double headroom, uint64_t *b, uint64_t *a);

/* X(enum suffix, json key, text) — the OOM cause classes. */
#define VT_OOM_CAUSES(X)                                                                           \
    X(ACTIVATIONS, "activations_too_large",                                                        \
      "the tensors of one micro-batch (activations, logits, a forward's temporaries) too large "   \
      "for the card")                                                                              \
    X(GRADIENTS, "weights_and_gradients_too_large",                                                \
      "the weights and the gradients their backward was making, not a micro-batch's tensors: "     \
      "too large for the card")                                                                    \
    X(FRAGMENTATION, "fragmentation",                                                              \
      "allocator cache (fragmentation): free memory in pieces too small")                          \
    X(OUTSIDE, "outside_pytorch", "memory outside PyTorch (context, NCCL, other processes)")       \
    X(SPIKE, "spike", "a spike (evaluation, first optimizer step or torch.compile warm-up)")       \
    X(STATE, "weights_and_state_too_large",                                                        \
      "the weights, their gradients and the optimizer's state alone: too large for the card")      \
    X(COPIES, "kept_copies",                                                                       \
      "copies of the weights or the optimizer's state the program keeps on the device (a "         \
      "checkpoint), beside one micro-batch's tensors")                                             \
    X(DATA, "data_too_large",                                                                      \
      "the program's own data on the device (made before training and kept: a replay buffer, a "   \
      "dataset), not a micro-batch's tensors, too large for the card")                             \
    X(OWN, "own_request_too_large",                                                                \
      "one request of the program's own line before any forward (values it drew or copied onto "   \
      "the device, not a module's weight nor a micro-batch's tensors) too large for the card")

typedef enum oom_cause {
#define VT_OOM_ENUM(e, key, text) OOM_##e,
    VT_OOM_CAUSES(VT_OOM_ENUM)
#undef VT_OOM_ENUM
        OOM_COUNT
} oom_cause;

/* advice_state_cause: an OOM whose forward's tensors were gone (the optimizer step, the end of
 * a backward) where the weights, their gradients and the optimizer's whole state (state: its
 * bytes once made), with wsized bytes the backward makes of a weight's size (run_facts'
 * bwd_weight_oom and a request of such a size), and what lies outside PyTorch exceed the card
 * with the headroom: no micro-batch fits; why says so. 1 when it is that. */
/* advice_copies_cause: the copies of the weights or their state the program made between steps
 * and kept on the device (copies bytes of live's parameters: classify.c's kept_copy) held 5 % of
 * the card or more at a failure the micro-batch's tensors were blamed for, and without them the
 * failed request would have fit: the evidence into why, 1; else 0 (why untouched). */
int advice_copies_cause(const cat_breakdown *live, uint64_t copies, uint64_t requested,
                        uint64_t capacity, char *why, size_t whylen);
int advice_state_cause(const cat_breakdown *live, uint64_t state, uint64_t wsized,
                       uint64_t capacity, char *why, size_t whylen);
const char *advice_cause_key(oom_cause c);
const char *advice_cause_text(oom_cause c);
/* advice_cause_text_on: advice_cause_text, said of the device where device has bit 1 (the device
 * refused the allocation, the emulated card larger than it): never "too large for the card"; and
 * with ADVICE_CAUSE_NO_BATCH (the run's micro-batch is not known: a full-batch step, a graph's
 * every node) the activations' cause is one forward's tensors, not "one micro-batch" */
#define ADVICE_CAUSE_NO_BATCH 2
/* ... and with ADVICE_CAUSE_BACKWARD_KEPT (advice_backward_kept's run: a backward that keeps what
 * it makes) one micro-batch's tensors are its activations and what its backward kept, not a
 * forward's alone (Opacus's 4.98 GiB of per-sample gradients beside 5.91 of activations) */
#define ADVICE_CAUSE_BACKWARD_KEPT 4
/* ... and with ADVICE_CAUSE_WEIGHT_SIZED (advice_state_cause counted tensors the backward makes of
 * a weight's size: an embedding table's dense gradient) the state's cause names them beside the
 * weights, not "alone" */
#define ADVICE_CAUSE_WEIGHT_SIZED 8
/* ... and with ADVICE_CAUSE_PASSES (run_facts oom_passes: after the backward passes of one
 * forward, outside a forward) what the step made after its passes, beside one micro-batch's */
#define ADVICE_CAUSE_PASSES 16
const char *advice_cause_text_on(oom_cause c, int device);

/* advice_oom_cause: classifies an OOM from what was live (by category), the request, the
 * capacity, the allocator cache and the memory outside PyTorch at that moment, the phase
 * ("forward", "backward", "optimizer", "eval", "step_pass" (an eval-phase pass whose outputs the
 * step uses), "compile", or NULL) and the optimizer steps done. why gets one line of evidence,
 * in a transformer's terms when transformer (1: B*T tokens; 2: a vision transformer's B*T patch
 * tokens; 0: the micro-batch alone; 3: no micro-batch known, what one forward takes in); in a
 * backward that keeps what it makes (advice_backward_keeps), its bytes beside the activations. */
oom_cause advice_oom_cause(const cat_breakdown *live, uint64_t requested, uint64_t capacity,
                           uint64_t cache, uint64_t outside, const char *phase, int iterations,
                           char *why, size_t whylen, int transformer);

/* One candidate change. */
typedef struct advice_item {
    char change[128]; /* "batch_size=8, gradient_accumulation_steps=64" */
    /* "--batch_size=8 --gradient_accumulation_steps=64" (or an env var, or a flag and the code
     * change no flag carries: accum_code_change's ~270 bytes at most, a script name of 40 and a
     * micro-batch flag of 64: at 160 both the report and predict had left it out unsaid) */
    char cmdline[320];
    char note[448]; /* the trade-off in one line */
    gpt_shape shape;
    uint64_t predicted_peak;     /* process: what counts against the card */
    uint64_t predicted_reserved; /* caching allocator segments (max_memory_reserved) */
    uint64_t predicted_tensors;  /* allocated tensors (max_memory_allocated) */
    uint64_t required;           /* predicted_peak with the fragmentation floor: what must fit */
    int fits;                    /* 1, 0, or -1 when the capacity is unknown */
    uint64_t cache_assumed;      /* the allocator cache in required */
    uint64_t cache_limit;        /* > 0: fits is 0, but would be 1 with at most this much cache
                                  * (advice_cache_limit), or fits is 1 only with at most this
                                  * much, less than twice the cache assumed (advice_fit_cache):
                                  * the cache decides the verdict */
    int64_t headroom_bytes;      /* capacity - required (negative: over) */
    int moment;                  /* PREDICT_AT_*: the moment its prediction is of */
    int recommended;
} advice_item;

/* advice_cmdline_split: an item's cmdline as JSON's two keys: the arguments to give the program
 * (args, alen bytes: "--batch_size=8", "NAME=VALUE" for an environment setting, or "") and the
 * change to make in its code (code, clen bytes: "" when none) */
void advice_cmdline_split(const char *cl, char *args, size_t alen, char *code, size_t clen);

#define ADVICE_MAX 12

/* advice_candidates: the documents' options for cur, best first (formula.md §4), each
 * predicted with c against capacity (0 = unknown); expandable_segments only when
 * fragmentation=1 and expandable_set=0; a "no change" first item when current_fits is 1 (fits
 * with the headroom) or 2 (a run that completed on the card with less than the headroom free),
 * 3 and 4 the same after its allocator reached the card and released its cache to go on.
 * The recommended item (the current configuration when it fits with the headroom, else the
 * largest micro-batch that fits keeping the effective batch, else the largest that fits; never
 * one that lacks the headroom) is moved to the front. Returns the
 * number of items written (<= max). */
int advice_candidates(const model_calib *c, const gpt_shape *cur, uint64_t capacity,
                      int fragmentation, int expandable_set, int current_fits, advice_item *items,
                      int max);

#endif
