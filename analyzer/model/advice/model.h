/* model.h — the bridge between what a trace measured (replay/classify, the report), what was
 * recognized (recognize.h, config.h) and the memory model (formula.c, advice.c): the formula
 * comparison where one applies, OOM diagnosis, advice. The report fills run_facts and builds
 * one model_result (model.c; its sentences: model_explain.c); views/ print it. */
#ifndef VT_ANALYZER_MODEL_H
#define VT_ANALYZER_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "advice.h"
#include "ahead.h"
#include "categories.h"
#include "config.h"
#include "formula.h"
#include "infer.h"
#include "recognize.h"

/* run_facts.compile_frames: whether torch.compile ran, as the trace's Python frames show. */
enum {
    MODEL_COMPILE_UNKNOWN = 0, /* no forward seen in the Python frames */
    MODEL_COMPILE_SEEN,        /* frames under torch/_dynamo or torch/_inductor (compile phase) */
    MODEL_COMPILE_NOT_SEEN,    /* forwards, but never under torch.compile: it ran eager */
};

/* What one traced run measured, as the report knows it. Strings are borrowed. */
typedef struct run_facts {
    const tables *t; /* the trace's code objects (Python frames); NULL: none (a JSON report) */
    int argc;        /* the traced command line (PROCESS record) */
    const char *const *argv;
    const char *cwd;              /* the traced process's working directory (names only) */
    const config_files *files;    /* the config files the trace recorded; never NULL for a trace */
    const infer_result *inferred; /* what the trace's tensors say (NULL: nothing) */
    const char *alloc_conf;       /* PYTORCH_CUDA_ALLOC_CONF or PYTORCH_ALLOC_CONF, NULL if unset */
    int tensor_mode;              /* 1: per-tensor events (cudaMallocAsync backend) */
    uint64_t card_bytes;          /* emulated card (0 = none) */
    const char *card_name;        /* "" if none */
    uint64_t device_total;        /* the traced device's total bytes (0 if unknown) */
    uint64_t peak_allocated;      /* tensor level (0 if unknown in segment mode) */
    uint64_t peak_reserved;       /* caching-allocator segments */
    /* a run of one step, its step taken again through the allocator's rules (replay.h's
     * again_*: the simulated run's reserved peak as traced, and of two steps) */
    uint64_t again_first, again_reserved;
    uint64_t peak_process;    /* reserved + context + kernel code + other driver memory */
    cat_breakdown at_peak;    /* every byte of peak_process, by category */
    int has_at_tensors;       /* at_tensors is measured (tensor modes) */
    cat_breakdown at_tensors; /* the tensors live at the allocated (tensor) peak, by category:
                               * where the step's tensors peaked, whatever the cache did */
    int has_at_step;          /* at_step is measured (tensor modes, a step allocated) */
    cat_breakdown at_step;    /* the tensors live at their largest in an optimizer step */
    /* the backward's tensors of a weight's size (a parameter of that size live beside them: an
     * embedding table's dense gradient) at the tensors' peak (at_peak without it); at the OOM;
     * oom_request_weight: the failed request had such a size. None grows with the micro-batch. */
    uint64_t bwd_weight, bwd_weight_oom;
    int oom_request_weight;
    uint64_t peak_train; /* the tensors' largest outside evaluation passes (tensor modes) */
    int iterations;      /* optimizer steps seen */
    const run_recognition *recog; /* what was trained and what was on (NULL: not recognized) */
    int backward_passes;          /* backward passes begun */
    /* a step's backward passes, the first of which made no gradient of a weight: a
     * representation cache's chunks, not accumulation (replay.h cache_passes); 0: not so */
    int cache_passes;
    /* steps counted by a gradient's free before the first that allocated under an optimizer's
     * frames (replay.h free_steps_first): which passes made a step is not known; 0: not so */
    int free_steps_first;
    const char *steps_why; /* why the optimizer steps are not known (replay_steps_why); NULL */
    /* autocast's 16-bit weight copies of the first forward: bytes made (replay.h) */
    uint64_t fwd0_copies_made;
    unsigned phase_seen; /* 1 << phase for each phase the run was seen in (a process level) */
    int no_training; /* 1: the program exited normally (its trace complete) after forwards with no
                      * backward pass and no optimizer step: an evaluation or inference run */
    int truncated;   /* 1: the trace has no end (the process killed, or still running) or the
                      * capture stopped early (replay_stopped_early): what came after its last
                      * event is not measured */
    int stopped;     /* ADVICE_STOPPED_*: the capture stopped early, why (advice_cut_why) */
    const char *peak_phase;    /* the phase of the event that made the peak the model explains
                                * (the tensors' peak in tensor modes, else the process peak) */
    const char *process_phase; /* ... of the process peak's (NULL: none) */
    int peak_step_pass; /* 1: peak_phase "eval", the tensors' peak made in a no-grad pass whose
                         * outputs the step uses (a rollout: evalsrc.h's 2), not an evaluation */
    uint64_t step_pass_batch;     /* such a pass's own batch flag on the command line (evalsrc_pass_
                                   * flag: the recorded script reads it on the pass's lines), 0 none */
    char step_pass_flag[64];      /* ... its flag and value ("--rollout_batch_size 16") */
    int peak_bwd, peak_iter;      /* backward passes / optimizer steps begun before it */
    int oom_iter;                 /* optimizer steps begun when the OOM began (replay.h) */
    int oom_bwd;                  /* backward passes begun when the OOM began */
    int oom_bwd_no_ws;            /* 1: in a backward, no workspace of its own yet (a trace) */
    int oom_new_step;             /* it came in a step of a kind no earlier one ran (replay.h) */
    int has_cat_peaks;            /* cat_peak is measured (tensor mode) */
    uint64_t cat_peak[CAT_COUNT]; /* each category's largest live bytes over the run */
    int compile_frames;           /* MODEL_COMPILE_*: what the Python frames say of torch.compile */
    /* transformers' KV cache (tensors made under its cache_utils.py) by category in at_peak,
     * at_tensors and at_oom: what use_cache=False would not make */
    cat_breakdown kv_at_peak, kv_at_tensors, kv_at_oom;
    /* the tensors at their largest over the run without the KV cache's (0: no KV cache seen) */
    uint64_t tensors_no_kv;
    /* the share of the KV cache's bytes whose copies replaced their inputs, which the attention
     * keeps for its backward in their stead (replay_kv_replaced): not saved without the cache */
    double kv_replaced;
    int kv_unmeasured;      /* 1: that share is not measured, taken as 0 (replay_kv_unmeasured) */
    uint64_t kv_read_bytes; /* the KV cache a later forward extended (replay.h kv_read_bytes) */
    /* an EMA's copy of the weights (VT_EMA_CODE) among the parameters in at_peak, at_tensors and
     * at_oom: not the model's own (no gradient, no optimizer state), and what made it */
    uint64_t ema_at_peak, ema_at_tensors, ema_at_oom;
    /* the parameters made after the first forward (classify.c's kept_copy: a checkpoint's copies
     * of the weights or the optimizer's state the program keeps on the device) at the same
     * moments: the batch does not change them, no optimizer trains them */
    uint64_t copies_at_peak, copies_at_tensors, copies_at_oom;
    /* the program's data among the inputs (stack_facts.data: storage it filled before training on
     * a line where no weight is made: a replay buffer on the device) at the peak, the tensors'
     * peak and the OOM: no micro-batch sizes it; oom_data: the failing call was making such data */
    uint64_t data_at_peak, data_at_tensors, data_at_oom;
    int oom_data;
    /* oom_own: the failing call, in init (no forward seen before it), made an input of the
     * program's own line (stack_facts.input: random values drawn onto the device, a copy onto
     * it) outside a module's construction, and not such data: no weight, no forward's tensor */
    int oom_own;
    /* the names whose values reach the data the failing call made, in the recorded script
     * (evalsrc_data_reaching: " args buffer_size size "), "" none known: a flag sizes it only
     * where its name is among them */
    char oom_data_names[256];
    const char *ema_words;  /* "EMAModel (diffusers)", "" for none */
    int grad_scaler;        /* 1: an enabled GradScaler allocated (scale / unscale): fp16 */
    int casts_visible;      /* 1: autocast's copies of weights could be seen: a stack reached an
                             * ATen operator and Python frames told the forward (no copy seen then
                             * says something; without, nothing) */
    uint64_t oom_recovered; /* out-of-memory failures the run went on from (cache released) */
    /* the peak the model explains came in a pass an out-of-memory error cut short, which the
     * program caught and went on from (replay_in_caught): its moment and the request */
    int caught_peak;
    uint64_t caught_ns, caught_request;
    int oom_went_on; /* has_oom's error is one the program caught and went on from */
    /* what the program went on with after the last error of its training it caught (replay.h
     * went_on_*; went_on_batch 0: not read): its micro-batch, optimizer steps, its tensors'
     * largest over them, the reserved and process levels it held then, the cache reserved before
     * the error its steps never used (0: none or not known) */
    uint64_t went_on_batch, went_on_tensors, went_on_reserved, went_on_process, went_on_unused;
    int went_on_steps;
    /* the run's OOM came at a later attempt's micro-batch than the first forward's (this one,
     * replay.h oom_first_batch; the configuration is the attempt's): the peaks are the first's */
    uint64_t oom_first_batch;
    /* the batch of the moment the model explains (the tensors' peak, else the process peak), as
     * the program's inputs live then show it: the token batch's B·T and an image batch's B that
     * the first forward's batch line made again (report_batch_now; 0: none live then) */
    uint64_t tokens_now, images_now;
    /* the token batch's line in the recorded script joins this many tensors along their first
     * dimension (joinsrc.h: a DPO loop's torch.cat([chosen, rejected], dim=0)), 0 none: it holds
     * the sequences of each, which the batch flag need not count; the line, in words */
    int tokens_joined;
    char tokens_joined_at[128];
    /* OOM (has_oom = 0: the rest is unused) */
    int has_oom;
    uint64_t oom_requested; /* bytes the failing call asked for */
    uint64_t oom_capacity;  /* card / device capacity at the OOM */
    int oom_device_decided; /* 1: the device refused it, the emulated card (card_bytes) larger
                             * than the device (device_total): oom_capacity is the device's */
    cat_breakdown at_oom;   /* live by category at the OOM */
    uint64_t oom_cache;     /* the cache PyTorch released to retry (JSON oom.allocator_cache_bytes,
                             * = cache_released_bytes; the cache live then is at_oom's) */
    uint64_t oom_outside;   /* context + kernel code + external then */
    const char *oom_phase;  /* "forward", "backward", "optimizer", "eval", "compile", ... */
    int oom_step_pass;      /* 1: "eval" in a no-grad pass whose outputs the step uses (a rollout
                             * under model.eval(), evalsrc.h's 2), not an evaluation */
    const char *oom_site;   /* "file.py:123 func" of the failing call, or "" */
    /* "file.py:95 func" of the allocation site that held the most parameter bytes at the peak
     * (the line that made or moved the weights), or NULL */
    const char *params_site;
    /* the OOM came after oom_passes backward passes of one forward (replay.h free_steps_shared),
     * in code outside a forward, with oom_passes_bytes live that it made after its first pass
     * (activations, temporaries, logits by category: per-pass copies of the gradients, as
     * PCGrad keeps); 0: not so (report_passes.c) */
    int oom_passes;
    uint64_t oom_passes_bytes;
    int oom_pytorch_pattern; /* 1: fail, cache released, fail again (PyTorch's retry) */
    int oom_frozen_forward;  /* 1: in a first forward that kept nothing for a backward: each
                              * weight's copy freed after use (replay.h) */
    int has_oom_ahead;       /* 1: oom_ahead measured (a first forward cut short, ahead.h) */
    fwd_ahead oom_ahead;     /* the weights it had still to use, its last block's activations */
    /* oom_weight: the size of the weights (parameter tensors live at the failure, oom_weight_n
     * of them) the failed request is the size of, as the allocator rounds a block or a segment
     * (a weight's gradient: report_grads.c); 0 where none is */
    uint64_t oom_weight;
    uint32_t oom_weight_n;
} run_facts;

/* Options from `vramtrace report` flags: config overrides (nanoGPT spelling, key=value),
 * and the target card for advice. */
typedef struct model_opts {
    int noverrides;
    const char *const *overrides; /* "batch_size=8", ... */
    uint64_t target_card_bytes;   /* 0: emulated card, else the device total */
    const char *target_card_name;
    int color; /* 1: ANSI colour allowed */
    /* how each override was given, said in the configuration's rows ("--grad-accum 4"; NULL:
     * as in overrides) */
    const char *const *overrides_said;
} model_opts;

/* NO_PASS_STEPS: why a model_no_forward run's optimizer steps are not known, in words */
#define NO_PASS_STEPS                                                                              \
    "no forward of a module, backward or torch.optim step on any stack, and an update the "        \
    "program writes in its own code is not told apart: whether one ran is not known"

/* The model of one run, computed once by model_build; views/model_*.c print it. */
typedef struct model_result {
    nano_config cfg;
    char note[320];  /* how the run's shape was adjusted, "" if not */
    gpt_shape shape; /* the run (iteration0 when no optimizer step was seen) */
    doc_formula docf;
    cat_breakdown measured, doc, refined;
    char reason_doc[CAT_COUNT][320];
    char reason_ref[CAT_COUNT][320];
    double mult_act, mult_all; /* effective activation multipliers */
    /* P from the trace's own parameter tensors (infer.h) for a program that is not nanoGPT, whose
     * shape the GPT formula only approximates (a Llama's MLP); 0 = nanoGPT or not inferred */
    uint64_t params_trace;
    /* of them, a second, frozen model's (a teacher, a reference model: no gradient), beside the
     * one trained whose shape the formula has; added to its parameters (model_frozen_beside) */
    uint64_t frozen_params;
    run_recognition rec;   /* what was trained (from f->recog; zero = nothing recognized) */
    uint64_t ema_measured; /* the EMA copy of the weights among measured's parameters */
    /* the weights' bytes that take no gradient and whose element size the trace does not give
     * (model_trace.h model_weights_untyped; 0: none, or too few to count) */
    uint64_t weights_untyped;
    /* of them, the bytes packed two 4-bit elements a byte (infer.h's packed_bytes, told by the
     * forward's dequantized temporaries): their element count is known, 2 a byte; 0: none */
    uint64_t untyped_packed;
    /* ... and their quantization state among the rest (infer.h's qstate_bytes: the trace's
     * alone, not a report's JSON); 0: none told */
    uint64_t untyped_qstate;
    char ema_said[120];    /* "an EMA copy of them (433.6 MiB, EMAModel (diffusers))", or "" */
    int formula_ok;        /* 1: a transformer's formula applies to this run's shape */
    char formula_why[512]; /* why it does not, when formula_ok = 0 */
    /* the formulas' block is a GPT-2 block: a run whose blocks are another kind's (a gated-MLP
     * decoder such as Llama) says so beside the comparison; "" otherwise */
    char formula_block[512];
    int tight;           /* 1: a run that completed on the card with less than the headroom free */
    int next_step_grows; /* 1: its one step's forward ran before the optimizer's state existed,
                          * and a step with it is predicted not to fit */
    int opt_assumed;     /* 1: the optimizer's state was not measured: predictions assume AdamW */
    int opt_bound;       /* 1: named, not measured: a bound of its kind's state (said) */
    char opt_est[400];   /* Adafactor named, not measured: its state estimated from the
                          * weights' sizes (model_factored.c), the note; "" otherwise */
    char eval_flag[64];  /* the evaluation's own batch flag and value ("--eval-batch-size 16"),
                          * where the peak was in that pass (eval_batch), else "" */
    uint64_t eval_batch; /* ... its batch (0: none; calib.eval_batch once calibrated) */
    int opt_choice;      /* 1: not measured, the script constructs several kinds without AdamW:
                          * the most state of them counted (said) */
    int measured_at_tensors; /* measured: the tensors at their peak (else at the process peak) */
    int measured_at_oom;     /* measured: what was live at the OOM (a later attempt's batch:
                              * oom_first_batch; the peaks are an earlier attempt's) */
    char notes[5][1536];     /* what the advice assumes, or how certain it is (every view) */
    int nnotes;
    int empty;              /* 1: the trace holds no allocation: no explanation, no advice (said) */
    int no_forward;         /* 1: every allocation of init (no forward, backward, step or OOM): no
                             * batch's tensors measured, no advice (advice_none says so) */
    char advice_none[1024]; /* why there is no advice (empty, no_forward), "" otherwise */
    /* head_unknown 1: the run died in its first forward, before its end, and whether the model
     * ends in an output layer over its vocabulary is not known: no logits counted, the what-ifs
     * lower bounds, each told what it needs with such a layer (model_first_forward.c);
     * head_assumed 1: the build that assumes one (model_build_head) */
    int head_unknown, head_assumed;
    char oom_forward[1536]; /* no formula, died in its first forward: how far it had got;
                             * or its trace ended before its first step (model_cut_unstepped) */
    int second_step;        /* 1: the cache is the one-step run's step taken again (replay.h) */
    int lower_bounds;       /* 1: the what-ifs scale what was alive then, lower bounds (so the
                             * largest micro-batch that fits is at most largest_batch) */
    int accum_assumed;      /* 1: the accumulation is not known: predictions keep gradients alive */
    int lora_assumed;       /* 1: LoRA on, no gradient measured: 1 % of the weights train (said) */
    model_calib calib;
    prediction current;
    /* current with the allocator cache at the share the run held when it ran out of memory, where
     * current counts the fragmentation floor in its place: the low end of the range the views
     * say (advice_own_cache; own_share that share); 0: none */
    uint64_t current_own;
    double own_share;
    uint64_t capacity;
    char capacity_name[80];
    int partial; /* the run stopped at an OOM, or its trace before its first optimizer step */
    int cut;     /* that OOM (or the trace's end) came before the measured step's peak: what it
                  * measured is partial */
    /* the trace ends, with no OOM, before the run's first optimizer step (its process killed,
     * or still running, or its capture stopped early: stopped, as run_facts): the step it
     * measured is cut short (model_cut_unstepped) */
    int cut_unstepped, stopped;
    int forward_cut; /* the run stopped at the OOM inside a forward: what it measured is part of one
                      */
    oom_cause cause;
    char why[768]; /* (a warm-up of T adds its two T: model_seq_cause; model_grads.c) */
    int expandable_set;
    uint64_t largest_batch;
    /* largest_batch 0 (none keeps the headroom), yet the run's own micro-batch ran whole on the
     * card: its steps, no out-of-memory error, its process peak within it (model_ran.c); 0: not */
    uint64_t largest_ran, largest_ran_peak; /* (and that peak) */
    /* the cache assumed at largest_batch, and the most with which it still keeps the headroom,
     * said where less than twice the assumed would not (the runs' caches moved 2-3x between
     * micro-batches: Llama 160M fp16 8.7 % of its tensors at B=4, 15.5 % at B=8); 0: not said */
    uint64_t largest_cache, largest_cache_most;
    /* the largest with the cache share this run measured, above largest_batch (which counts room
     * up to the fragmentation floor above the run's micro-batch), and that share
     * (advice_largest_own); 0: not said */
    uint64_t largest_own;
    double largest_own_share;
    /* the cache assumed at largest_batch + 1, and the most with which that micro-batch would keep
     * the headroom, said where only the cache assumed keeps it out (the cache decides): a run out
     * of memory's (the fragmentation floor), or the room for fragmentation added to the run's
     * measured cache; 0: not said (advice_next_cache) */
    uint64_t next_cache, next_cache_most;
    uint64_t state_moved;    /* the optimizer state taken out of the activations for the what-ifs
                              * (model.c state_moved; 0: none) */
    int growth_unmeasured;   /* the moment calibrated came after the forward's tensors were freed
                              * (a small B·T's gradients outweigh its activations): how the step
                              * grows with the micro-batch is not measured, no largest said */
    int largest_unpredicted; /* growth_unmeasured: no largest said, but where a run out of
                              * memory in its optimizer step would not fit at 1 either (that
                              * is measured: none, said) */
    /* the recorded script has an evaluation pass the trace never reached (model_script.c): the
     * what-ifs and the largest count the training step only. Where ("lit_own.py:96"), the flag
     * that sets its own batch as the run had it ("--val_batch_size 64", "" none) and whether the
     * command line gave it, and the note saying so (also in notes); "" none */
    char unreached_where[96], unreached_flag[64];
    int unreached_flag_argv;
    char unreached[600];
    char unreached_short[160]; /* the largest's words for it ("the training step only: ...") */
    advice_item items[ADVICE_MAX];
    int nitems;
} model_result;

/* model_recommended: the what-if called recommended, NULL when none is: none fits the card, or
 * its size is not known (advice_candidates) */
static inline const advice_item *model_recommended(const model_result *m)
{
    for (int i = 0; i < m->nitems; i++)
        if (m->items[i].recommended)
            return &m->items[i];
    return NULL;
}

/* model_state_elsewhere: optimizer steps ran before the peak, but no Python frames were recorded
 * to tell their state from the other tensors (run_recognition.optim_unmeasured): it is in the
 * measured total, in other rows (the what-ifs move it: model_trace_state_moved) */
static inline int model_state_elsewhere(const model_result *m, const run_facts *f)
{
    return m->rec.optim_unmeasured && f->iterations > 0 && f->peak_iter > 0 &&
           m->measured.bytes[CAT_OPTIMIZER] == 0;
}

/* model_state_not_kept: the program keeps no optimizer state on the device between its steps
 * (it moves it to the host after each, or frees it): steps ran before the moment measured, a
 * step held state, and none was live then, with Python frames to tell it (a program that brought
 * AdamW's state back with .cuda() before each step had been told its own configuration needs
 * 11.61 GiB, 2.64 of them state it never held in a forward, where its run peaked at 9.66) */
static inline int model_state_not_kept(const model_result *m, const run_facts *f)
{
    return f->tensor_mode && m->calib.calibrated && !m->calib.global && f->iterations > 0 &&
           f->peak_iter > 0 && m->measured.bytes[CAT_OPTIMIZER] == 0 &&
           f->at_step.bytes[CAT_OPTIMIZER] > 0 && !m->rec.optim_unmeasured;
}

/* model_none_fits: a card is known and no what-if fits it with the headroom (the views say so,
 * where a recommendation would stand; none recommended where some fit: none lowered a completed
 * run's peak by 1 %, advice_candidates) */
static inline int model_none_fits(const model_result *m)
{
    for (int i = 0; i < m->nitems; i++)
        if (m->items[i].fits == 1)
            return 0;
    return m->capacity && m->nitems && !model_recommended(m);
}

/* batch_word: what the views call the batch of a what-if of a program p: nanoGPT's flag, "batch"
 * in a run of forwards only (no micro-steps of an optimizer step), else "micro-batch";
 * model_batch_word: the report's run's */
static inline const char *batch_word(config_program p, int no_training)
{
    return p == PROG_NANOGPT ? "batch_size" : no_training ? "batch" : "micro-batch";
}

static inline const char *model_batch_word(const model_result *m)
{
    return batch_word(m->cfg.program, m->shape.no_training);
}

/* model_build: the run's configuration (its command line and the config files the trace
 * recorded — f->files, no file is opened —, a recorded config.json, the values the trace's
 * tensors give (f->inferred), then o's overrides), the formulas beside the measured peak, the
 * calibration, the OOM cause when f->has_oom, and the advice for the target card. Prints nothing.
 * Returns 0, or -1 with the reason in err when the configuration is invalid (e.g. an override that
 * does not parse). */
int model_build(model_result *m, const run_facts *f, const model_opts *o, char *err, size_t errlen);
/* model_build_head: model_build's one build; assume_head 1: a first forward cut before its end
 * whose model may or may not end in an output layer over its vocabulary is given a language
 * model's logits (model_build's second build, for what the what-ifs need with them) */
int model_build_head(model_result *m, const run_facts *f, const model_opts *o, char *err,
                     size_t errlen, int assume_head);

/* model_trained_bytes: bytes per element of what trains, its gradients and optimizer state: the
 * recognized (LoRA's fp32 adapters over 16-bit weights: 4), else the parameters' (m->shape) */
static inline int model_trained_bytes(const model_result *m)
{
    unsigned e = m->rec.state_elem;
    return e == 2 || e == 4 ? (int)e : formula_param_bytes(&m->shape);
}

/* model_ckpt_block_note: the refined formula's block note (m->formula_block) says what a
 * checkpointed run's activations count: each block's input alone (model_explain.c). */
void model_ckpt_block_note(model_result *m);
/* model_untyped_words: the weights' row (me bytes) where some have no element size the trace
 * gives (m->weights_untyped; model_trace.c): the trained ones counted, the rest in bytes. 0: not
 * such a run. */
int model_untyped_words(const model_result *m, const run_facts *f, uint64_t me, char *out,
                        size_t n);
/* model_untyped_said: what m->weights_untyped's bytes are, as the trainable row says them after
 * "beside them": "3.88 GiB of weights take no gradient: 3.02 GiB of them packed two 4-bit
 * elements a byte (6476.01 M elements: ...), the other 886.5 MiB's element count not known (the
 * trace does not give their dtype)"; without a packed part "..., their element count not known
 * (...)" (model_weights.c) */
void model_untyped_said(const model_result *m, char *out, size_t n);
/* model_param_dtype_measured: the trace shows the parameters' element size: 16-bit (the inference
 * says 2 only when told so; its 4 fp32 assumed), or fp32 with autocast's 16-bit copies (of fp32
 * ones) (model_weights.c) */
int model_param_dtype_measured(const run_facts *f);
/* model_params_at: the trace's P (m->params_trace) with the weights the program's lines cast to
 * 16 bits (INFER_cast16_bytes) counted at pb B each, as a formula of one element size counts the
 * weights: the share the trained ones take of it is theirs of the weights' bytes (a share of the
 * right count had costed an fp32 model trained beside an fp16 one fewer gradients) */
uint64_t model_params_at(const model_result *m, const run_facts *f, int pb);
/* model_cast16_words: the weights' row (me bytes) where some were made by casts to 16 bits on the
 * program's lines (infer.h's INFER_cast16_bytes): those at 2 B, the others at theirs. 0: none were.
 */
int model_cast16_words(const model_result *m, const run_facts *f, uint64_t me, char *out, size_t n);
/* model_mixed_words: the weights' row where the trace's P holds elements of several sizes (16-bit
 * ones beside packed 4-bit ones, infer.h's packed_bytes, or beside fp32 trained adapters, its
 * fp32_bytes), each count at its own bytes. 0: not so (model_weights.c) */
int model_mixed_words(const model_result *m, const run_facts *f, char *out, size_t n);
/* model_explain: the one-line reasons where measured and formula differ (m->reason_doc /
 * reason_ref), in the words of what was recognized (model_explain.c). */
void model_explain(model_result *m, const run_facts *f);
/* model_largest_ran: sets m->largest_ran (model_ran.c) */
void model_largest_ran(model_result *m, const run_facts *f);
/* model_peak_after_forward: the peak came in a backward, the optimizer step or an evaluation
 * pass after a step, with the run's category peaks known (what the forward's tensors were,
 * before they were freed) */
int model_peak_after_forward(const run_facts *f);

/* model_oom_passes_in (model_oom.c): of act bytes of activations at the moment m explains, those a
 * step made after its backward passes of one forward (run_facts oom_passes: per-pass copies, at the
 * failure), which no forward saved; 0 elsewhere */
uint64_t model_oom_passes_in(const model_result *m, const run_facts *f, uint64_t act);

/* OPTIM_NOTE_PREFIX: how every note of an optimizer state not measured begins (model_notes.c;
 * predict --from says it beside the rows it counts) */
#define OPTIM_NOTE_PREFIX "the optimizer's state was not measured"

/* model_cause_on: advice_cause_text_on's flags for m's OOM: the device refused it (f), the run's
 * micro-batch is not known (its cause one forward's tensors, not "one micro-batch"), a backward
 * that keeps what it makes failed (its tensors are of the cause), the backward made or asked for
 * tensors of a weight's size (the state's cause counts them) */
static inline int model_cause_on(const model_result *m, const run_facts *f)
{
    int bw = f->oom_phase && !strcmp(f->oom_phase, "backward") && !f->oom_step_pass &&
             advice_backward_kept(&m->calib);
    return (f->oom_device_decided ? 1 : 0) |
           (config_known(&m->cfg, CFG_batch_size) ? 0 : ADVICE_CAUSE_NO_BATCH) |
           (bw ? ADVICE_CAUSE_BACKWARD_KEPT : 0) | (f->oom_passes ? ADVICE_CAUSE_PASSES : 0) |
           (f->bwd_weight_oom || f->oom_request_weight ? ADVICE_CAUSE_WEIGHT_SIZED : 0);
}

#endif
