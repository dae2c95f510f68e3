/* infer.h — what a trace's own tensors say about the model and the training step (parameter
 * count, layers, width, vocabulary, micro-batch, sequence length, accumulation), each value with
 * where it came from; used where no argument of the traced command line gave the value. */
#ifndef VT_ANALYZER_INFER_H
#define VT_ANALYZER_INFER_H

#include <stdint.h>

#include "reader.h"

/* X(name, meaning) — the inferred quantities, in one list. */
#define VT_INFER_KEYS(X)                                                                           \
    X(params, "parameters P")                                                                      \
    X(param_dtype_bytes, "bytes per parameter element")                                            \
    X(cast16_bytes, "bytes of the weights made on the program's lines that cast to 16 bits")       \
    X(n_layer, "transformer blocks L")                                                             \
    X(frozen_blocks, "blocks of a second model beside the trained one, its weights no gradient")   \
    X(n_embd, "model width d")                                                                     \
    X(n_head, "attention heads H")                                                                 \
    X(bias, "biases in the blocks' linear and norm layers (1 / 0)")                                \
    X(vocab_size, "vocabulary V")                                                                  \
    X(mlp_width, "a gated MLP's width I (gate, up and down: three d×I matrices per block)")        \
    X(kv_width, "grouped-query attention's key / value width (two d×w matrices per block)")        \
    X(untied_head, "1: the head is a V×d tensor of its own, 0: tied to the embedding")             \
    X(dropout_masks, "1: dropout's masks (B·T·d bytes) in the first forward (its rate is not)")    \
    X(tokens, "tokens per micro-batch B·T")                                                        \
    X(position_rows, "rows of the position embedding outside the blocks (the maximum context)")    \
    X(token_type_rows, "rows of a second, smaller embedding outside the blocks (token types)")     \
    X(logits_dtype_bytes, "bytes per element of the largest logits tensor (2: 16-bit)")            \
    X(lm_logits, "1: B·T×V logits in the first forward; 0: none in a forward that ended")          \
    X(token_dtype_bytes, "bytes per element of a vision transformer's first token tensor")         \
    X(attention_kernels, "fused attention kernels the first forward ran (log-sum-exp rows kept)")  \
    X(batch_size, "micro-batch B")                                                                 \
    X(block_size, "sequence length T (patch tokens for a vision transformer)")                     \
    X(image_size, "image side H = W of an image batch")                                            \
    X(gradient_accumulation_steps, "micro-steps per optimizer step A")                             \
    X(optimizer_steps, "optimizer steps in the trace")

typedef enum infer_key {
#define VT_INFER_ENUM(k, doc) INFER_##k,
    VT_INFER_KEYS(VT_INFER_ENUM)
#undef VT_INFER_ENUM
        INFER_COUNT
} infer_key;

#define INFER_FWD_SIZES 32 /* infer_result.fwd_sizes */
#define INFER_FWD_TOP 24

typedef struct infer_value {
    int known; /* 0: the trace does not say (never a guess) */
    int64_t value;
    char where[384]; /* "B·T = 4096 from the int64 input tensor", ... (config.h: as long) */
} infer_value;

/* what INFER_tokens' where ends with when tokens_eval (report_pass.c says a rollout's so) */
#define INFER_TOKENS_EVAL_SAID ", in an evaluation's forward"

typedef struct infer_result {
    infer_value v[INFER_COUNT];
    /* 1: the token batch (INFER_tokens) is an evaluation's, its lookup made in one (a run cut in
     * Lightning's sanity check, before any training forward): its B is that pass's own, not
     * the training's micro-batch (model_complete_tokens) */
    int tokens_eval;
    uint32_t tokens_stack;        /* the stack that made the token batch (0: none known) */
    uint32_t tokens_lookup_stack; /* ... and its embedding lookup (0: none known) */
    uint32_t images_stack;        /* ... the image batch (INFER_image_size; 0: none known) */
    uint32_t images_fwd_stack;    /* ... the first forward's first tensor after it (0: none) */
    /* 1: the image batch's B = 1 was read from ONE int64 beside it, which may be one timestep
     * for a whole batch of B images of a side √B times smaller (a diffusion step's): no
     * micro-batch is taken from it (cfgsrc_apply_inferred, model_batch_seen, report_batch_now) */
    int images_one_label;
    /* the program keeps fp32 master weights of its 16-bit weights (a copy of each at twice its
     * bytes), left out of P: their bytes, and those of further copies of them (an EMA's); 0:
     * none found */
    uint64_t master_bytes, copies_bytes;
    int elem_by_sizes; /* 1: INFER_param_dtype_bytes 2 was read from the weights' own sizes */
    /* the bytes of the weights packed two 4-bit elements a byte (infer_packed.c: each dequantized
     * to a 16-bit temporary of 4× its bytes in the first forward), in P at 2 elements a byte
     * beside the others at INFER_param_dtype_bytes; 0: none */
    uint64_t packed_bytes;
    /* ... and, kept beside them, their quantization state's bytes (vt__find_qstate: an absmax
     * per 64-element block and its constants), out of P; 0: none told */
    uint64_t qstate_bytes;
    /* the bytes of the trained weights counted at 4 B an element among 16-bit ones (LoRA's fp32
     * adapters over a 16-bit or packed 4-bit base: infer_pass_params16's fp32), in P at 4 B;
     * 0: none */
    uint64_t fp32_bytes;
    /* 1: ... read from 16-bit logits of a frozen head beside a small trained part counted fp32
     * (report.c's params16): the other frozen weights' element size is not given (a QLoRA's
     * 4-bit base) */
    int elem_by_head;
    /* an out-of-memory failure before any backward: the bytes of the weights whose 16-bit copies
     * autocast kept there (it keeps those of weights that need a gradient: the trained ones, fp32
     * at twice a copy's bytes); 0: not read so */
    uint64_t trained_by_copies;
    /* the lines of the program that cast to 16 bits the weights INFER_cast16_bytes counts
     * ("train.py:384, :386"; infer_pass_cast16), in P at 2 B an element beside the others at
     * INFER_param_dtype_bytes */
    char cast16_where[160];
    /* a vision transformer whose d-wide blocks saw fewer tokens than its position embedding has
     * rows (vt__infer_heads: MAE's encoder sees the patches left unmasked): those rows; 0: not
     * so. The rest went elsewhere: a stack the formula does not describe may run over them all
     * (MAE's narrower decoder), so the share of its blocks' weights a forward cut short had used
     * does not say how much of its activations were made. */
    uint64_t pos_rows_unseen;
    /* where the token batch read is a no-grad pass's (tokens_eval), or none was read (a rollout
     * makes its sequences in its block, and a forward's tensors are no batch), and a training
     * forward came
     * after that pass before the first backward: that forward's B·T from its logits and its
     * embedding lookup (a PPO update's batch, a slice of the rollout's, has no int64 tensor of
     * its own), and the heads its log-sum-exp rows give over them (vt__train_tokens); known 0:
     * not read. report_pass.c takes them for a rollout's, whose own tokens are no step's. */
    infer_value train_tokens, train_heads, train_kernels;
    uint32_t train_after_stack; /* ... the stack of that pass's last tensor before it */
    /* a second token batch of the program's (B·T' int64, T' another length than the first's),
     * looked up in the first forward after the first (B·T'×d): an encoder-decoder's decoder
     * input, whose positions its logits are made over (vt__second_tokens); known 0: none read */
    infer_value second_tokens;
    /* Adafactor's factored state over the weights P counts, read from their sizes and the width
     * d (vt__infer_factored, infer_sizes.c): a row and a column of each weight of k·d elements,
     * k >= d (a d × k matrix: d + k), each other one whole (a norm's d, a bias, a small table);
     * factored_of: the elements of the weights read, factored_mats: the matrices among them;
     * factored_elems 0: not read (no width) */
    uint64_t factored_elems, factored_of;
    uint32_t factored_mats, factored_whole;
    /* the first forward's tensors by size, read whatever else is known: those a forward made
     * (no input, cast, workspace, weight, evaluation's, nor a fused attention kernel's), the
     * sizes made most often first (then the larger), INFER_FWD_TOP of them, then the sizes a
     * softmax made (a plain attention's weights over its S·H·T·T scores) where room is left:
     * how many tensors of each size, and how many of those a softmax made; nfwd_sizes of them.
     * model_seq_encoder (model_seq.c) reads an encoder's tokens from them with the program's
     * width and heads. */
    struct infer_fwd_size {
        uint64_t size;
        uint32_t n, softmax;
    } fwd_sizes[INFER_FWD_SIZES];
    int nfwd_sizes;
} infer_result;

/* The pass over PyTorch's allocator tracker's tensors (a segment-only trace infers nothing), fed
 * by the replay as it reads the trace (replay.h: r->inferred), so the trace is read once:
 * infer_pass_event for each ALLOC / FREE record in order (event: its number, 1 for the first;
 * freed_event: for a FREE, the number of the event that made the allocation it frees, when the
 * caller knows it, else 0), then infer_finish fills out (0; -1 when memory ran short: nothing
 * known). Only the events up to the end of the first backward count: later ones cost nothing. */
typedef struct infer_pass infer_pass;
infer_pass *infer_pass_new(void); /* NULL when out of memory */
/* infer_pass_unmade: the run was recorded without Python frames (on): what a tensor's stack
 * would say of it is not known, so no small int64 tensor is read as the position ids. p may be
 * NULL. */
void infer_pass_unmade(infer_pass *p, int on);
void infer_pass_event(infer_pass *p, uint64_t event, int is_alloc, const reader_event *ev,
                      uint64_t freed_event);
/* infer_pass_event_made: infer_pass_event, with where the allocation's stack says it was made
 * (the replay knows; INFER_MADE_UNKNOWN is infer_pass_event's): position ids are made in a
 * module's forward, a training loop's token mask of the same size is not. */
enum { INFER_MADE_UNKNOWN, INFER_MADE_FORWARD, INFER_MADE_ELSEWHERE };
/* | INFER_MADE_ATTENTION: made by a fused attention kernel (sdpa's flash / efficient / cudnn, not
 * its math path) */
#define INFER_MADE_ATTENTION 8
/* | INFER_MADE_DROPOUT: made by dropout's forward (native_dropout: its output, its mask) */
#define INFER_MADE_DROPOUT 16
/* | INFER_MADE_CAST: made by a dtype conversion (_to_copy: autocast's copy of a weight, or of an
 * op's input) */
#define INFER_MADE_CAST 32
/* | INFER_MADE_INPUT: the program's own batch (made or copied onto the device by its own code,
 * not in a forward: classify.c's inputs), never a parameter */
#define INFER_MADE_INPUT 64
/* | INFER_MADE_INIT: made under a module's __init__, .to() or .cuda() (a weight or a buffer) */
#define INFER_MADE_INIT 128
/* | INFER_MADE_WORKSPACE: made under cuBLAS's handle (its workspace, kept by PyTorch): never
 * the logits (a 32 MiB workspace is a multiple of any power-of-two vocabulary) */
#define INFER_MADE_WORKSPACE 256
/* | INFER_MADE_EVAL: made in an evaluation (its stack's phase: evaluate, estimate_loss,
 * Lightning's validation_step): before the first backward of a run that trains, not the first
 * training forward's (Lightning's sanity check validates before any training step) */
#define INFER_MADE_EVAL 512
/* | INFER_MADE_DATA: storage the program's own line filled before training where no weight is made
 * (a plain class's: a replay buffer on the device; stack_facts.data), never a parameter */
#define INFER_MADE_DATA 1024
/* | INFER_MADE_OPTIM: made by an optimizer's constructor (stack_facts.opt_init: Adagrad's sums),
 * optimizer state before any step, never a parameter (they had been counted as weights) */
#define INFER_MADE_OPTIM 2048
/* | INFER_MADE_SOFTMAX: made by a softmax the caller called (stack_facts.softmax): a plain
 * attention's weights over its scores (infer_result.fwd_sizes) */
#define INFER_MADE_SOFTMAX 4096
void infer_pass_event_made(infer_pass *p, uint64_t event, int is_alloc, const reader_event *ev,
                           uint64_t freed_event, int made);
/* infer_pass_done: 1 once no later event can change what infer_finish says. */
int infer_pass_done(const infer_pass *p);
int infer_finish(infer_pass *p, infer_result *out);
void infer_pass_free(infer_pass *p);
/* infer_pass_copy: a copy of p as it is (infer_finish changes what it finishes; NULL when memory
 * ran short). infer_finish_without: infer_finish of p without the tensors made before the first
 * backward whose stack drop says (a copy of the weights the program keeps beside them: an
 * EMA's, found from the stacks' code by the report), as if never made; *ndropped of them,
 * *dropped_bytes. */
infer_pass *infer_pass_copy(const infer_pass *p);
/* infer_pass_params16: p's parameters are 16-bit (why: what says so, said in
 * INFER_param_dtype_bytes), but fp32 bytes of them fp32 (LoRA's trained adapters over a 16-bit
 * model; 0: none): its next infer_finish counts them at 2 B an element, those at 4 */
void infer_pass_params16(infer_pass *p, const char *why, uint64_t fp32);
/* infer_pass_cast16: marks p's weights made before the first backward (under a module's __init__,
 * .to(), .half()) whose stack pick says were made by a cast to 16 bits (the report reads the
 * recorded scripts' lines: evalsrc_cast16): its next infer_finish counts them at 2 B an element
 * and the others as it would, and reads the weights' sizes and what trains without them
 * (INFER_cast16_bytes). The count marked. infer_pass_cast16_where: those lines, as P's
 * where says them. */
size_t infer_pass_cast16(infer_pass *p, int (*pick)(void *ctx, uint32_t stack), void *ctx);
void infer_pass_cast16_where(infer_pass *p, const char *where);
/* infer_pass_narrowed: the bytes of p's weights alive after the first backward (or at an OOM
 * before it) that replaced, before the first forward, a weight of twice their size (its fp32
 * elements cast to 16 bits, the fp32 one freed) whose stack pick says (the report's: made under
 * peft's code: LoRA adapters a program cast to bfloat16 after get_peft_model). 0: none. */
uint64_t infer_pass_narrowed(const infer_pass *p, int (*pick)(void *ctx, uint32_t stack),
                             void *ctx);
/* infer_pass_head16: ... read from a frozen head's 16-bit logits alone (infer_result.elem_by_head)
 */
void infer_pass_head16(infer_pass *p);
/* infer_pass_grad_has: p's first backward made (and kept) a tensor of size bytes: a weight of
 * that size may have got a gradient (0: none did, or no backward was read) */
int infer_pass_grad_has(const infer_pass *p, uint64_t size);
int infer_finish_without(infer_pass *p, int (*drop)(void *ctx, uint32_t stack), void *ctx,
                         infer_result *out, size_t *ndropped, uint64_t *dropped_bytes);

/* infer_model: the same from the trace at path, read on its own. Returns 0 (out filled,
 * possibly with nothing known) or -1 with err when the trace cannot be read. */
int infer_model(const char *path, infer_result *out, char *err, size_t errlen);

/* infer_params_less: P less a copy of the weights the program keeps beside them, bytes of them
 * made with the model and kept as its weights are (an EMA of the weights: what, "EMAModel
 * (diffusers)"), said in P's where; P stays when it is not known or not larger. */
void infer_params_less(infer_result *r, uint64_t bytes, const char *what);

/* infer_key_name: "params", "n_layer", ... */
const char *infer_key_name(infer_key k);

#endif
