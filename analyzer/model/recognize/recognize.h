/* recognize.h — what was trained and what was on, recognized from the trace: the model family
 * and its class (family.c), the optimizer from the state it created (optim.c), activation
 * checkpointing, torch.compile, CUDA graphs, LoRA, a KV cache and an EMA of the weights
 * (features.c), put together by recognize.c, each with the evidence it rests on. Facts come from
 * the layers below: the trace's code objects, the replay's peaks. */
#ifndef VT_ANALYZER_RECOGNIZE_H
#define VT_ANALYZER_RECOGNIZE_H

#include <stdint.h>

#include "config.h"
#include "infer.h"
#include "state_layout.h"
#include "tables.h"

/* the evidence of nanoGPT's model class, said where it is nanoGPT's (its model.py, its
 * configurator's run) */
#define RECOGNIZE_NANOGPT_CLASS "nanoGPT's model class on the Python stacks (GPT.forward)"

/* X(enum suffix, key, words) — what kind of model was trained. */
#define VT_FAMILIES(X)                                                                             \
    X(UNKNOWN, "unknown", "a model vramtrace does not recognize")                                  \
    X(DECODER, "decoder_transformer", "a decoder transformer language model")                      \
    X(ENCODER, "encoder_transformer", "an encoder transformer (masked language model)")            \
    X(ENCODER_DECODER, "encoder_decoder_transformer",                                              \
      "an encoder-decoder transformer (sequence to sequence)")                                     \
    X(VISION_TRANSFORMER, "vision_transformer", "a vision transformer (patch tokens)")             \
    X(CONVNET, "convolutional", "a convolutional network")                                         \
    X(DIFFUSION_UNET, "diffusion_unet", "a diffusion U-Net (convolutions with attention)")

typedef enum model_family {
#define VT_FAMILY_ENUM(e, key, words) FAM_##e,
    VT_FAMILIES(VT_FAMILY_ENUM)
#undef VT_FAMILY_ENUM
        FAM_COUNT
} model_family;

/* X(enum suffix, key, words, words16) — the optimizer, as its state shows it; words16: said of
 * 16-bit parameters (PyTorch's optimizers keep their state in the parameters' dtype). */
#define VT_OPTIMS(X)                                                                               \
    X(UNKNOWN, "unknown", "not known", "not known")                                                \
    X(NONE, "none", "no state (plain SGD)", "no state (plain SGD)")                                \
    X(ADAM, "adam", "Adam / AdamW: exp_avg and exp_avg_sq, 8 B per trainable parameter",           \
      "Adam / AdamW: exp_avg and exp_avg_sq in the parameters' 16 bits, 4 B per trainable "        \
      "parameter")                                                                                 \
    X(MOMENTUM, "momentum", "SGD with momentum: one momentum buffer, 4 B per trainable parameter", \
      "SGD with momentum: one momentum buffer in the parameters' 16 bits, 2 B per trainable "      \
      "parameter")                                                                                 \
    X(ONE_STATE, "one_state", "one fp32 state per trainable parameter (4 B)",                      \
      "one state per trainable parameter in the parameters' 16 bits (2 B)")                        \
    X(FACTORED, "factored", "factored second moments (Adafactor): under 1 B per parameter",        \
      "factored second moments (Adafactor): under 1 B per parameter")                              \
    X(EIGHT_BIT, "8bit",                                                                           \
      "two 8-bit states with per-block scales (an 8-bit Adam, as bitsandbytes'): about 2 B per "   \
      "trainable parameter",                                                                       \
      "two 8-bit states with per-block scales (an 8-bit Adam, as bitsandbytes'): about 2 B per "   \
      "trainable parameter")                                                                       \
    X(SGD, "sgd",                                                                                  \
      "SGD, its state not measured: none, or a momentum buffer of 4 B per trainable parameter",    \
      "SGD, its state not measured: none, or a momentum buffer of 2 B per trainable parameter")    \
    X(OTHER, "other", "a state of its own size", "a state of its own size")

typedef enum optim_kind {
#define VT_OPTIM_ENUM(e, key, words, words16) OPT_##e,
    VT_OPTIMS(VT_OPTIM_ENUM)
#undef VT_OPTIM_ENUM
        OPT_COUNT
} optim_kind;

/* A feature of the run: on, off, or not known, with the evidence. */
enum { FEAT_UNKNOWN = 0, FEAT_OFF, FEAT_ON };
typedef struct recog_feature {
    int state;       /* FEAT_* */
    char where[320]; /* the evidence ("" when unknown) */
} recog_feature;

/* X(enum suffix, key, words) — the features recognized (features.c), in the views' order. */
#define VT_FEATURES(X)                                                                             \
    X(CHECKPOINTING, "activation_checkpointing", "activation checkpointing")                       \
    X(COMPILE, "torch_compile", "torch.compile")                                                   \
    X(CUDA_GRAPHS, "cuda_graphs", "CUDA graphs")                                                   \
    X(LORA, "lora", "LoRA adapters (peft)")                                                        \
    X(KV_CACHE, "kv_cache", "KV cache (use_cache)")                                                \
    X(EMA, "ema", "EMA weights")

typedef enum feature_id {
#define VT_FEATURE_ENUM(e, key, words) FEATURE_##e,
    VT_FEATURES(VT_FEATURE_ENUM)
#undef VT_FEATURE_ENUM
        FEATURE_COUNT
} feature_id;

/* X(file part, qualname prefix, words) — the code that keeps an exponential moving average (EMA)
 * of the weights: a copy of them, made before training and updated after each optimizer step,
 * that no gradient or optimizer state follows. A prefix "" takes the whole file; under Python
 * 3.10 a frame names its function only ("__init__"), then a class's __init__ and to() count
 * (recognize_ema_code). */
#define VT_EMA_CODE(X)                                                                             \
    X("diffusers/training_utils.py", "EMAModel.", "EMAModel (diffusers)")                          \
    X("timm/utils/model_ema.py", "", "ModelEma (timm)")                                            \
    X("torch/optim/swa_utils.py", "AveragedModel.", "AveragedModel (torch.optim.swa_utils)")       \
    X("torch_ema/ema.py", "", "ExponentialMovingAverage (torch_ema)")

/* recognize_ema_code: 1 + the VT_EMA_CODE entry a Python code object of file and qualname is
 * (its tensors are the EMA's), 0 when none; recognize_ema_words: that entry's words ("" for 0). */
int recognize_ema_code(const char *file, const char *qualname);
const char *recognize_ema_words(int which);
/* recognize_ema_files: whether a code object of t may be an EMA's (its file is a VT_EMA_CODE
 * entry's): 0 when recognize_ema_code says 0 of every one. */
int recognize_ema_files(const tables *t);

/* What the recognizer reads. */
typedef struct recognize_input {
    const tables *t;              /* the trace's code objects (Python frames); NULL: none */
    const infer_result *inferred; /* the tensors' sizes (NULL: nothing inferred) */
    int tensor_mode;              /* 1: tensors seen (the state below is measured) */
    int iterations;               /* optimizer steps seen */
    int backward_done;            /* backward passes that completed (not one an OOM cut short) */
    int grads_cut;        /* 1: the run ran out of memory in its first backward: the weights it had
                           * not reached yet took no gradient, whether they train or not; 2: in a
                           * step of a kind no earlier step ran (replay.h's oom_new_step), whose
                           * backward had not made the gradients of the weights it trains */
    int passes_shared;    /* 1: backward passes of one forward with the gradients freed between
                           * them (replay.h free_steps_shared): each pass's gradients may be of a
                           * part of the weights, and whether a step ran is not known */
    int compile_phase;    /* 1: allocations while torch.compile compiled */
    int forward_seen;     /* 1: allocations in a forward */
    uint64_t param_bytes; /* parameter bytes measured (largest live) */
    uint64_t grad_peak;   /* gradients' largest live bytes over the run */
    uint64_t grad_union;  /* the union of the gradient sets the steps read (replay.h), where 2 or
                           * more sets (grad_sets) were seen; 0: not measured */
    unsigned grad_sets;
    int grad_union_lower; /* 1: grad_union is a lower bound (replay.h) */
    uint64_t optim_peak;  /* optimizer state's largest live bytes over the run */
    uint64_t optim_own;   /* of it, weight-sized copies the program's own optimizer class keeps
                           * (classify.c's opt_copy: SAM's old_p); 0 none */
    int has_cat_peaks;    /* 1: grad_peak / optim_peak were measured */
    int grad_scaler;      /* 1: an enabled GradScaler allocated (it may skip steps) */
    int state_cut; /* 1: the run ran out of memory in its first optimizer step, while the state
                    * was being made: optim_peak is part of it */
    state_layout layout;      /* how the optimizer's state lies beside the weights (state_layout.h):
                               * 8-bit pairs with scales, or a tensor of each weight's size */
    uint64_t adapter_bytes;   /* parameters made under peft's code (LoRA adapters), 0: none seen */
    uint64_t adapters16;      /* before any gradient, 16-bit casts the program made of them
                               * (report_params16.c), their bytes; 0: none */
    uint64_t kv_cache_bytes;  /* tensors of transformers' KV cache (cache_utils.py) live at the
                               * moment the report explains (kv_cache_at), 0: none */
    const char *kv_cache_at;  /* "at the out-of-memory error" / "at the peak" */
    double kv_cache_replaced; /* the share of its bytes whose copies replaced their inputs, which
                               * the attention keeps in their stead (replay_kv_replaced) */
    int kv_cache_unmeasured;  /* 1: that share is not measured (replay_kv_unmeasured): no
                               * backward pass began, taken as 0 */
    uint64_t ema_bytes;    /* parameters made under an EMA's code (VT_EMA_CODE) live at the moment
                            * kv_cache_at says: the EMA copy of the weights, 0: none */
    int ema_which;         /* recognize_ema_code of the code that made them, 0: none */
    unsigned param_elem;   /* bytes per parameter element (the inferred 2: 16-bit; else 4) */
    unsigned state_elem;   /* ... of the trained ones, their gradients and state (LoRA's fp32
                            * adapters over a 16-bit model: 4); 0: param_elem */
    uint64_t master_bytes; /* the program's fp32 master copies of its 16-bit weights (infer.h),
                            * which its optimizer steps: the trainable count; 0: none */
    uint64_t trained_by_copies; /* an OOM before any backward: the weights' bytes whose copies
                                 * autocast kept (infer.h); 0: none */
    uint64_t act_bytes;      /* activations live at act_at: of the peak, the tensors' peak and the
                              * out-of-memory error, the moment that held the most; 0: none */
    uint64_t conv_act_bytes; /* ... of them made under torch's convolution layers (conv.py) */
    const char *act_at;      /* that moment in words ("at the tensors' peak") */
    int attention;           /* 1: attention kernels' tensors were made (the attention category),
                              * or torch's MultiheadAttention ran */
    /* the weights at the moment explained hold a copy of themselves (weights_copy.h): its
     * tensors and bytes; 0: none found */
    size_t copy_tensors;
    uint64_t copy_bytes;
    /* weights_copy.h beside: a copy of the weights but for tensors interleaved in them (LoRA's
     * adapters absent from a copy of the base: a frozen reference model), its tensors, bytes and
     * the extra tensors' bytes; 0: none found */
    size_t beside_tensors;
    uint64_t beside_bytes, beside_extra;
    int copy_reordered;    /* weights_copy.h reordered: 0 in order, 1 copy.deepcopy made it, 2 made
                            * by stacks apart from the model's, both in another order */
    uint64_t optim_ctor;   /* tensors an optimizer's constructor made, its state (replay.h
                            * optim_ctor_bytes): state made before any step, 0: none */
    uint64_t copies_freed; /* autocast's 16-bit weight copies the first forward made and freed
                            * within it (replay.h fwd0_copies_freed): weights used, none kept */
} recognize_input;

/* What was trained and how. */
typedef struct run_recognition {
    model_family family;
    char family_where[512];
    int family_by_sizes; /* 1: the family is from the tensor sizes alone (no frame names the model):
                          * a transformer language model, decoder or encoder not told */
    /* 1: the width the program gives is not the d the sizes read from a block's d×d parameter
     * (recognize_family_width): nothing then tells the blocks are a transformer's (a Mamba's) */
    int family_width_program;
    /* 1: a transformer told by a convolution at its input alone (family.c patch_conv), with
     * neither an image batch nor a patch grid's position embedding in the trace: a vision
     * transformer's patch embedding, or an audio encoder's subsampling of its frames (fairseq's
     * speech_to_text, ESPnet, Whisper), not told (family_text says so; FAM_VISION_TRANSFORMER's
     * formula and unknown vocabulary still apply) */
    int conv_stem;
    /* the model ends in an output layer over its vocabulary, making B·T×V logits: 1 (the trace
     * shows them, or a recognized language model's class and nothing against it), -1 (its first
     * forward ended with none: INFER_lm_logits), 0 not known (no vocabulary, or the sizes alone
     * and a forward cut before its end; a recognition left zeroed) */
    int lm_head;
    int lm_ended; /* lm_head 0 where a backward completed: the first forward ended, and no B·T×V
                   * logits of the token batch read were seen (a no-grad pass's batch read, its
                   * logits of the last position only: a PPO rollout's) */
    char model_class[64]; /* the model class the evidence names ("GPT2LMHeadModel"), or "" */
    int python_frames;    /* the trace recorded Python frames (classes can be recognized) */
    int nanogpt;          /* a model class GPT (GPT.forward): nanoGPT's where its file is model.py
                           * or the run is nanoGPT's by its configurator (model_build) */
    int huggingface;      /* Hugging Face transformers' modeling code ran */
    int batchnorm;        /* batch statistics (BatchNorm) in the forward */
    optim_kind optim;
    char optim_class[48]; /* from the frames ("AdamW", "SGD"), "" if unseen */
    double optim_bpp;     /* state bytes per trainable parameter, measured; < 0: not measured */
    const char *optim_unmeasured; /* why not, where steps ran (a static string); NULL: none ran */
    int steps_unsure;        /* 1: no state, and whether a step ran is not known (optim_passes) */
    int passes_lower;        /* 1: trainable is one backward pass's of several of one forward */
    int optim_forwards_only; /* 1: a run of forwards only: what names the optimizer says none ran */
    char optim_where[320];
    uint64_t optim_own; /* of the state measured, the program's own optimizer class's copies of
                         * the weights (recognize_input's optim_own): its kind is not the base
                         * optimizer's alone (OPT_OTHER) */
    /* no step ran and the script constructs optimizers of several kinds (which one ran is not in
     * the source): their kinds (bit 1u << optim_kind) and where ("SGD( at train.py:58, AdamW(
     * at train.py:60"); 0 and "" otherwise */
    unsigned optim_kinds;
    char optim_choices[200];
    int optim_ctor; /* 1: the optimizer made (part of) its state at its construction, before any
                     * step (torch.optim.Adagrad's sums): measured then, not at a first step */
    int state_cut;  /* 1: the state was being made when the run ran out of memory (its first step):
                     * optim_where says the part made, optim_bpp is not measured (< 0) */
    int steps_maybe_skipped; /* 1: no optimizer ran that a GradScaler's skipping explains: the
                              * steps counted (gradients freed) may have updated nothing */
    int sgd_bare; /* 1: no step ran, and every one of the script's SGD calls gives neither momentum
                   * nor weight decay (optim_sgd_bare): its update makes no tensor */
    int optim_off_device;   /* 1: its steps made no state on the device, and the script constructs
                             * no SGD (optim_none_elsewhere): none here, whatever it keeps */
    char optim_source[160]; /* the script's SGD call that says it keeps no state, with what says
                             * so ("SGD( in train.py:56 (momentum not given: ...)"); "": none */
    int steps_may_hide;     /* 1: no optimizer step seen, after a backward pass that completed: one
                             * may have run unseen where it allocates and frees nothing
                             * (optim_steps_unseen says whether this optimizer's would) */
    uint64_t trainable;     /* trainable parameters (the gradients' elements); 0: unknown */
    unsigned param_elem;    /* bytes per parameter element: 4, or 2 (16-bit) */
    unsigned state_elem;    /* ... of the trained ones (their gradients, the optimizer's state) */
    char trainable_where[400]; /* what they were counted from */
    int trainable_lower;   /* 1: trainable is a lower bound (before any backward, the weights whose
                            * 16-bit copies were kept; weights never cast are not told) */
    int grads_cut;         /* 1 (with trainable_lower): the gradients' elements of a backward the
                            * out-of-memory error cut short (recognize_input's grads_cut): the
                            * weights it had not reached may train (predictions cost them so); 2:
                            * of the run's backward passes before a step of a new kind (its 2) */
    int beside_unused;     /* 1 (with trainable_lower): another model's blocks beside the trained
                            * one's had not been used when the first forward died (a teacher run
                            * after the student): whether they train is not told, and the kept
                            * copies may be a share of the trained model's weights (trainable.c) */
    int rest_untold;       /* 1: trainable is the gradients' elements at their most, fewer than
                            * the weights': the others had none then, frozen or not reached by a
                            * step (an expert no token was routed to): not told apart */
    int trainable_by_kept; /* 1: trainable is the few weights whose 16-bit copies autocast kept
                            * before any backward (trainable.c: adapters' share) */
    int trainable_union;   /* 1: trainable is the union of the gradient sets of steps of different
                            * weights, made and freed in turn (trainable.c's steps_apart) */
    recog_feature feat[FEATURE_COUNT]; /* by feature_id */
    uint64_t ema_bytes; /* the EMA copy of the weights among the parameters (recognize_input) */
    /* the training loop: "lightning" (Lightning's Trainer), "hf_trainer" (Hugging Face's),
     * "accelerate", "own" (the script's: none of those on the stacks), "" (no Python frames) */
    char loop[16];
    char loop_where[200];
    /* a state the recorded script carries from batch to batch (scriptpass_carried: truncated
     * BPTT's hidden state, detached and fed back): its name and where ("hidden, lstm_lm.py:86"),
     * "" none (set by the model, model_script.c) */
    char carried[120];
} run_recognition;

/* recognize_loop_words: how a loop key is said ("Lightning's Trainer"), "unknown" for "". */
const char *recognize_loop_words(const char *loop);

/* recognize_run: fills out from in (never fails: what the trace does not show stays unknown). */
void recognize_run(const recognize_input *in, run_recognition *out);

/* recognize_optim_cmdline: no step ran and no optimizer code was seen (r->optim unknown, nothing
 * measured), but the traced command line names the optimizer (--optimizer adafactor, Hugging
 * Face Trainer's --optim): that one, its where saying so. SGD is not taken: a command line does
 * not say whether it keeps a momentum buffer. */
void recognize_optim_cmdline(int argc, const char *const *argv, run_recognition *r);
/* OPTIM_FORWARDS_ONLY: an evaluation's optimizer row, whatever its script or command line names */
#define OPTIM_FORWARDS_ONLY                                                                        \
    "forwards only (no backward pass): no optimizer ran, nothing was trained"
/* recognize_optim_default: the same, when the command line does not give --optimizer /
 * --optim and the traced script's argparse defines it with a default that names an optimizer
 * (hf_train.py: --optimizer, default="adamw"): that one, said as the default (SGD is not taken:
 * its name does not say whether it keeps a momentum buffer). */
void recognize_optim_default(const nano_config *c, int argc, const char *const *argv,
                             run_recognition *r);
/* recognize_optim_script: the same, from the traced script's recorded source (files: the trace's
 * recorded files; the program's own, passed as an argument) when it constructs optimizers of one
 * kind only (torch.optim.SGD(...) and no other: its kind, said with the file and line); when it
 * constructs several kinds (which one ran is not in the source), those kinds in optim_kinds /
 * optim_choices, the kind left unknown; nothing when it constructs none. */
void recognize_optim_script(const config_files *files, const tables *t, run_recognition *r);
/* optim_steps_unseen: r's optimizer steps may have run though the trace shows none: none was
 * seen after a backward pass that completed, and a step of r's optimizer may allocate and free
 * nothing (one without state: plain SGD, its gradients zeroed in place; one not known; any where
 * no Python frames were recorded to tell a step's allocations): how many ran is not known. A
 * stateful optimizer's first step makes its state under its own code, which the stacks show. */
int optim_steps_unseen(const run_recognition *r);
/* recognize_trainable: out->trainable and its trainable_where from what the run measured (the
 * program's fp32 master weights, the gradients, or before any backward the 16-bit copies autocast
 * kept), e the trained elements' bytes; returns e as it stands after (fp32 masters: 4). */
unsigned recognize_trainable(const recognize_input *in, run_recognition *out, unsigned e);
/* recognize_optim_passes (trainable.c): steps counted by gradient frees between backward passes of
 * one forward (passes_shared) and no state measured: the kind named (an optim_kind), its state and
 * whether a step ran not known; 1: said so, 0: not such a run */
int recognize_optim_passes(const recognize_input *in, run_recognition *out, int named);
/* OPTIM_UNSEEN_WHY: why such steps are not seen, in words */
#define OPTIM_UNSEEN_WHY                                                                           \
    "one that allocates and frees nothing, as plain SGD's with its gradients zeroed in place, "    \
    "leaves no trace"
/* optim_sgd_momentum: the momentum of the torch.optim.SGD call whose '(' is s[open] (len bytes of
 * a script): 1 on (momentum= or its third positional argument, a literal not 0), 0 off (0, or
 * not given: torch's default), -1 not known (a name or an expression, ** arguments); what says
 * so in said ("momentum=0.9", "momentum not given: torch's default 0"). */
int optim_sgd_momentum(const char *s, size_t len, size_t open, char *said, size_t n);
/* optim_sgd_bare: 1 when that call gives no weight decay (weight_decay= or its fifth positional
 * argument absent, or a literal 0) and no ** arguments: with no momentum, its update adds the
 * gradients to the weights in place, making no tensor; 0 otherwise. */
int optim_sgd_bare(const char *s, size_t len, size_t open);
/* optim_defined_at: 1 when the name at s[i] follows `class` or `def` (its definition, not a call)
 */
int optim_defined_at(const char *s, size_t i);
/* optim_own_classes: the classes s[0..len) defines whose bases name an Optimizer (class
 * Lion(Optimizer), class SAM(torch.optim.Optimizer)), at most max into names; their number */
int optim_own_classes(const char *s, size_t len, char names[][48], int max);
/* optim_own_at: the index in names[0..k) of such a class constructed at s[i] (its name then '(',
 * no identifier before it, not its definition), its name's length in *n; -1 none */
int optim_own_at(const char *s, size_t len, size_t i, char names[][48], int k, size_t *n);
/* optim_ctor_said (optim_ctor.c): r's optimizer made its state at its construction
 * (r->optim_ctor), no step ran: with its state measured (optim_bpp), optim_where says it was made
 * so (and at most that per parameter where the backward was cut short); with no gradient to
 * count the trainable parameters, optim_unmeasured says why; else nothing. */
void optim_ctor_said(const recognize_input *in, run_recognition *r);
/* optim_by_state (optim_state.c): the kind a measured state of bpp bytes per trainable
 * parameter, scaled to fp32 parameters (×4 / their bytes), is; named: the kind the stacks name;
 * kernels: the model's weights are convolutions' */
optim_kind optim_by_state(double bpp, optim_kind named, int kernels);
/* optim_layout_said (optim_state.c): where the measured state is about 2 B per parameter, its
 * tensors' layout (in->layout): two 8-bit states with per-block scales make r's kind 8-bit; one
 * state in 16-bit parameters' dtype that the tensors do not show is not said (neither reading
 * picked: OPT_OTHER); each said in r->optim_where. e: the trained elements' bytes */
void optim_layout_said(const recognize_input *in, run_recognition *out, unsigned e);
/* optim_own_wraps: a state measured under a library optimizer's code (r->optim_class) that a
 * class of the script's own constructs and drives (SAM over SGD): said in r->optim_where, with
 * what its class keeps beside the step not counted there. t: the trace's code objects (NULL:
 * none): a class none of whose methods is on a recorded stack did not drive it (a branch of
 * the script that never ran constructs it), and is not said */
void optim_own_wraps(const config_files *fs, const tables *t, run_recognition *r);
/* optim_none_elsewhere: steps measured to make no state on the device (r->optim OPT_NONE), by a
 * script whose optimizer constructions (kinds: bit 1u << optim_kind; where: the first, "NAME( in
 * FILE:LINE") include no SGD: not said to be plain SGD (an Adam whose state is on the host, as
 * ZeRO-Offload's, had been "no state (plain SGD)"): r->optim_off_device set, where said */
void optim_none_elsewhere(run_recognition *r, unsigned kinds, const char *where);
/* optim_host_said: no step measured, and the script's only optimizer is its own class name,
 * constructed in fs's file (where: "NAME( in FILE:LINE ..."), whose code puts tensors into its
 * state, each made on the host ("cpu", .cpu(), pin_memory; none naming CUDA) (optim_host.c): r
 * made OPT_NONE with optim_off_device, its where and source said (unmeasured: why not measured).
 * 1 when so, 0 (r untouched) otherwise. */
int optim_host_said(const config_files *fs, int file, const char *name, const char *where,
                    const char *unmeasured, run_recognition *r);
/* recognize_family / recognize_optim / recognize_features: the three parts of recognize_run. */
void recognize_family(const recognize_input *in, run_recognition *out);
void recognize_optim(const recognize_input *in, run_recognition *out);
void recognize_features(const recognize_input *in, run_recognition *out);
/* recognize_family_width: a family read from the sizes whose width the program's own flag
 * default or argument corrects (a Mamba's d_inner had been read as d): the evidence says d
 * and V as taken, and why (WHY: "--d_model's default") */
void recognize_family_width(run_recognition *r, long long d, long long V, const char *why);

/* family_key / family_words, optim_key / optim_words: names for the views. */
const char *family_key(model_family f);
const char *family_words(model_family f);
/* family_text: r's family in words, as far as its evidence tells it (from the sizes alone, a
 * transformer language model whose kind they do not tell, or a transformer without one where
 * the trace shows no logits; a recognized family's words less its head where it made none) */
const char *family_text(const run_recognition *r);
/* family_told_key: the key of what family_text says (the JSON's recognized.family): a family's
 * key, or where the evidence does not tell the family itself "conv_stem_transformer",
 * "language_model", "transformer_language_model" or "transformer" (family_key(r->family) is the
 * family the formulas take) */
const char *family_told_key(const run_recognition *r);
const char *optim_key(optim_kind k);
const char *optim_words(optim_kind k);
/* optim_text: r's optimizer in words, said of its parameters' dtype (optim_words at 4 B) */
const char *optim_text(const run_recognition *r);
/* optim_factored_kernels: r's Adafactor factors a convolution's kernels (a convolutional network
 * or a U-Net, or state of 1 B per parameter or more measured): torch's and transformers'
 * Adafactor factor a weight over its last two dimensions only, so a k×k kernel keeps 2/k states
 * per weight (ResNet-50: 4.99 B per parameter), not the under 1 B of a transformer's matrices */
int optim_factored_kernels(const run_recognition *r);
/* optim_bound_bpp: the bytes per trainable parameter counted for a kind named but not measured,
 * a bound of its state (pb: the trained parameters' bytes): factored moments 1 B (matrices) or
 * 2·pb (kernels: a 1×1 convolution's row and column factors are each its weight's size), 8-bit
 * moments 2 B, SGD pb (its momentum buffer, when momentum is on) */
double optim_bound_bpp(const run_recognition *r, int pb);
/* optim_kinds_bpp: the most state per trainable parameter of the kinds (1u << optim_kind) a script
 * constructs, none of them Adam, each as optim_bound_bpp has it: a momentum buffer / one state pb,
 * 8-bit moments 2 B, factored moments 1 B (a convolution's kernels: 2·pb) */
double optim_kinds_bpp(const run_recognition *r, unsigned kinds, int pb);
/* feature_key / feature_words: "torch_compile" / "torch.compile"; feature_state_word: "on",
 * "off" or "unknown". */
const char *feature_key(feature_id f);
const char *feature_words(feature_id f);
const char *feature_state_word(int state);
/* family_transformer: 1 for the transformer families a formula can apply to (one stack of like
 * blocks: not an encoder-decoder, whose two stacks differ). */
int family_transformer(model_family f);

#endif
