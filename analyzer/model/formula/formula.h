/* formula.h — the two memory formulas of formula.md for a nanoGPT-shaped model: the design
 * documents' formula exactly as written (§2) and the refined formula (§3), per category.
 * Calibration against a measurement and what-ifs live in advice.c. */
#ifndef VT_ANALYZER_FORMULA_H
#define VT_ANALYZER_FORMULA_H

#include <stdint.h>

#include "categories.h"
#include "config.h"

/* The shape of one training step. All sizes > 0. */
typedef struct gpt_shape {
    uint64_t B, T, A, L, H, d, V; /* batch, block, grad accum, layers, heads, width, vocab */
    double dropout;
    int dropout_on; /* 1: dropout's masks seen in the trace, its rate not known (formula_dropout) */
    int bias;
    int dtype_bytes;       /* 2: float16 / bfloat16 autocast; 4: float32 */
    int compile;           /* torch.compile */
    int unfused_attention; /* 1: B*H*T^2 scores materialized (no flash / SDPA) */
    int checkpointing;     /* 1: activation checkpointing of every block */
    int iteration0;        /* 1: before the first optimizer step (no Adam state) */
    int accum_unknown;     /* 1: A is an assumption (no argument gave it): advice keeps the
                            * effective batch with micro-batches dividing B, said as a factor */
    int generic;           /* 1: no transformer formula applies (a convolutional network, an
                            * unrecognized model, or a shape the trace does not give): the
                            * formulas are 0 and predictions scale what was measured with B */
    int opt_set;           /* 1: opt_bpp is the run's (recognized); 0: AdamW's 8 B assumed */
    double opt_bpp;        /* optimizer state bytes per trainable parameter, when opt_set */
    double train_frac;     /* trainable share of the parameters (0 or 1: all; LoRA: a few %) */
    double grads_frac;     /* the share whose gradients are live at once, where steps of different
                            * weights read them in turn (a GAN's two models; 0: train_frac's) */
    int patch_tokens;      /* 1: T counts a vision transformer's patches (not a knob to turn) */
    /* a gated-MLP decoder's block (Llama, Mistral, Qwen: gate, up, down of width I, RMSNorm,
     * rotary positions, no biases) instead of GPT-2's; kv: grouped-query attention's key / value
     * width (0: d); untied: the head is a V x d tensor of its own */
    int gated;
    uint64_t I, kv;
    int untied;
    int attn_bias;   /* a gated block's projection biases (parameters only: a bias adds no saved
                      * tensor): 3 on q, k and v (Qwen2), 4 on o too (LlamaConfig attention_bias);
                      * 0 none. Set by predict from a model's config; a trace's P is its own. */
    int hf_gpt2;     /* Hugging Face's GPT-2 (GPT2LMHeadModel: Conv1D, NewGELU written in Python),
                      * whose eager 16-bit block keeps more than nanoGPT's (formula_block_bytes) */
    int no_head;     /* 1: no output layer over the vocabulary (the trace's first forward made no
                      * B·T×V logits, or does not say and no recognized class has one): no logits
                      * counted, the V x d table an input embedding (looked up, never cast) */
    int no_kv_cache; /* 1: transformers' KV cache turned off (use_cache=False): what the run's
                      * cache held is not made (advice.c; the formulas never count a cache) */
    int bert;        /* BERT's encoder block (BertLayer: post-LayerNorm, a GELU MLP, an MLM head;
                      * RoBERTa's the same, 2: named RobertaForMaskedLM): its eager 16-bit block
                      * is formula_block_bytes's */
    uint64_t pos_rows, type_rows; /* BERT's position and token-type tables' rows, from its
                                   * config (predict); transformers' GPT-2's position table
                                   * (n_positions, whatever T: type_rows 0), from its config or
                                   * a trace's weights; 0: nanoGPT's, T rows */
    int params16;                 /* 1: 16-bit parameters (pure bf16 / fp16 training: gradients and
                                   * optimizer state in 16 bits too, no autocast copies); 0: fp32 */
    int trained32;   /* 1: the trained weights fp32 beside 16-bit ones (params16: LoRA's adapters
                      * as peft makes them over a bf16 model): a calibrated prediction costs
                      * their gradients at 4 B an element (advice.c's weights_of) */
    int no_training; /* 1: a run of forwards only (evaluation, inference): no backward pass, no
                      * optimizer step, so no gradients, no optimizer state, no accumulation */
    int none_seen_trained; /* 1: a first forward that failed had frozen every weight it used:
                            * lower bounds count no gradient and no optimizer state (the weights
                            * it did not reach may train): formula_train_frac 0 */
    /* set by predict alone (--optimizer adafactor, --lora-rank; a trace's run measures its
     * own): */
    int opt_factored;      /* 1: Adafactor's factored second moment, its size from the shape
                            * (formula_factored_elems, in the trained parameters' dtype) */
    uint64_t lora_rank;    /* LoRA's rank R: adapters on the projections lora_targets names
                            * (formula_train.h) train alone, fp32 (peft's default), the model's
                            * weights frozen; 0: no LoRA */
    unsigned lora_targets; /* LORA_Q, ... (formula_train.h) */
    /* set by advice alone: the evaluation pass's own batch, changed (0: as the run had it; only
     * where the run peaked in such a pass: model_calib.eval_batch), which advice_predict_eval
     * predicts (advice_predict does not read it) */
    uint64_t eval_B;
    /* nbs > 0: the program sets A from its micro-batch itself, max(round(nbs / B), nbs_floor)
     * (YOLOv5's nominal batch 64: config_script_nominal): a what-if's B runs with that count
     * (formula_accum_own), no code change; 0: not so */
    uint64_t nbs, nbs_floor;
    /* > 1: every micro-batch is a multiple of it (the program checks or divides its batch by
     * another flag: GRPO's completions per prompt, config_script_multiple); advice offers no
     * other; 0: none */
    uint64_t B_multiple;
} gpt_shape;

/* The documents' formula (formula.md §2), with its worked-example quantities. */
typedef struct doc_formula {
    uint64_t params_estimate;      /* 12*L*d^2 + d*V */
    uint64_t params_reported;      /* what nanoGPT logs: exact P minus position embeddings */
    uint64_t decayed_params;       /* 2-D tensors: V*d + T*d + 12*L*d^2 */
    uint64_t param_bytes;          /* params_reported * 2 B (the documents assume fp16) */
    uint64_t grad_bytes;           /* params_reported * 2 B */
    uint64_t optimizer_bytes;      /* decayed_params * 2 states * 4 B */
    uint64_t core_bytes;           /* (2 + 8) B/param * params_reported */
    uint64_t act_elements;         /* B*T*d*L */
    uint64_t act_bytes_basic;      /* act_elements * 24 * 2 B */
    uint64_t act_bytes_empirical;  /* act_elements * 160 * 2 B ("adjusted to match") */
    uint64_t attn_bytes_per_layer; /* B*H*T^2 * 2 B, one layer at a time */
    uint64_t context_bytes;        /* ~500 MB */
    uint64_t compile_bytes;        /* torch.compile 0.5-1 GB: 750 MB when compiled, else 0 */
} doc_formula;

enum { FORMULA_DOC_MULT_BASIC = 24, FORMULA_DOC_MULT_EMPIRICAL = 160 };

/* formula_shape_from_config: the shape of a configuration (attention fused, no checkpointing,
 * steady state, AdamW's 8 B per parameter, every parameter trained); unknown keys are 0. */
/* formula_opt_bpp: the optimizer state per trainable parameter s assumes (opt_set: the run's;
 * opt_factored: Adafactor's, from the shape; else AdamW's two states in the trained parameters'
 * dtype, 8 B); formula_train_frac: its trainable share (1 when not set; 0 when
 * none_seen_trained; LoRA: the adapters' share of the model's weights and theirs). */
double formula_opt_bpp(const gpt_shape *s);
/* formula_accum_own: the accumulation the program itself runs at micro-batch b where it sets it
 * from its micro-batch (s->nbs: max(round(nbs / b), nbs_floor), Python's round, half to even);
 * 0 where it does not, where A is not known, or where no step is taken */
uint64_t formula_accum_own(const gpt_shape *s, uint64_t b);
/* formula_trained: the trainable parameters' elements (the model's times its trainable share;
 * LoRA: the adapters, formula_lora_params); formula_trained_bytes: their bytes per element (the
 * parameters', formula_param_bytes; LoRA's adapters: 4, fp32 as peft keeps them) */
double formula_trained(const gpt_shape *s);
/* formula_grads_live: of them, those whose gradients are live at once (grads_frac) */
double formula_grads_live(const gpt_shape *s);
int formula_trained_bytes(const gpt_shape *s);
/* formula_lora_block: s's activations are formula_lora_block_bytes's (LoRA on a gated block,
 * eager 16-bit autocast over fp32 weights, no checkpointing: the case measured); other LoRA
 * shapes keep the full fine-tuning's block */
int formula_lora_block(const gpt_shape *s);
/* formula_dropout: s keeps dropout's masks (a rate > 0, or masks seen: dropout_on) */
int formula_dropout(const gpt_shape *s);
/* formula_param_bytes: bytes per parameter element of s (2: 16-bit parameters, else 4) */
int formula_param_bytes(const gpt_shape *s);
/* formula_params16: s trains 16-bit parameters (no fp32 master weights) */
int formula_params16(const gpt_shape *s);
double formula_train_frac(const gpt_shape *s);
void formula_shape_from_config(const nano_config *c, gpt_shape *s);

/* formula_pos_rows: the position table's rows: pos_rows where the model fixes them (BERT,
 * transformers' GPT-2: n_positions whatever the run's T), else T (nanoGPT's block_size).
 * (Inline: formula.c and formula_train.c both count it, and neither calls the other's back.) */
static inline uint64_t formula_pos_rows(const gpt_shape *s)
{
    return s->pos_rows ? s->pos_rows : s->T;
}
/* formula_params_exact: nanoGPT's exact parameter count, all tensors on the GPU:
 * V*d + T*d (formula_pos_rows) + L*(12*d^2 + c*d) + f*d, c = 13, f = 2 with bias, c = 2, f = 1
 * without; a gated block's: V*d (twice untied) + L*(2*d^2 + 2*d*kv + 3*d*I + 2*d) + d (no
 * positions), plus L*(d + 2*kv) for q, k and v biases and L*d more for o's (attn_bias 3 / 4). */
uint64_t formula_params_exact(const gpt_shape *s);
/* formula_params_matmul: P_mm = 12*L*d^2 + V*d (weights autocast copies to 16 bits; V*d not
 * with no_head: an embedding looked up is not cast); gated:
 * L*(2*d^2 + 2*d*kv + 3*d*I) + V*d; BERT's (pos_rows set) d^2 more: the MLM head's transform.
 * BERT's exact count (pos_rows set): V*d + (pos + types + 2)*d + L*(12*d^2 + 13*d) + d^2 + 3*d + V
 * (its embeddings and their LayerNorm, the blocks with their biases, the head's transform, its
 * LayerNorm and the decoder's bias; the decoder's weight is the embedding's). */
uint64_t formula_params_matmul(const gpt_shape *s);

/* formula_documents: fills d with the documents' formula for s (all 0 when s->generic). */
void formula_documents(const gpt_shape *s, doc_formula *d);
/* formula_documents_breakdown: the documents' numbers per category (parameters, gradients,
 * optimizer, activations at multiplier 24, attention one layer, context, compile as kernel
 * code); categories the documents do not model are 0. */
void formula_documents_breakdown(const gpt_shape *s, cat_breakdown *out);

/* formula_block_bytes: saved activations of one transformer block (36*N*d + 16*N + 4*N*H
 * for eager 16-bit autocast with fused attention; variants per s). A gated block, eager 16-bit:
 * 30*N*d + 4*N*kv + 8*N*I + 8*N + 4*N*H, 34*N*d + ... without grouped key / value (kv = d: the
 * fp32 residual and the one after attention, the two RMSNorms' normalized inputs and rsqrt rows,
 * the 16-bit casts of their outputs for q, k, v and for gate, up, SDPA's q and output (d wide),
 * k and v (kv wide) and log-sum-exp rows, the MLP's gate, SiLU, up and product); float32:
 * 32*N*d + 8*N*kv + 16*N*I + 8*N + 4*N*H; compiled: the eager bytes x 30/36, as for GPT-2. */
uint64_t formula_block_bytes(const gpt_shape *s);
/* Hugging Face GPT-2's block, eager 16-bit: 84*N*d + 16*N + 4*N*H (its Conv1D outputs: q, k, v
 * 6, attention's 2, the MLP's 8 and 2; the two fp32 residuals 8; NewGELU, written in Python:
 * pow, its sum and tanh in fp32, 16 each, and the half input 8; SDPA's output 2; measured on the
 * H100 to the byte, its KV cache's 4*N*d apart). Compiled: nanoGPT's block. */
#define FORMULA_HF_GPT2_ND 84
/* ... of 16-bit parameters (pure 16-bit training, simulated): 56*N*d (its GELU's steps and the
 * residuals are 16-bit: tanh, 1 + tanh, 0.5*x and the GELU's output 8 each, the MLP's input 8) */
#define FORMULA_HF_GPT2_ND16 56
/* ... in float32 (simulated): 112*N*d (every tensor at 4 B, no casts: q, k, v 12 and SDPA's
 * output 4; the MLP's first output, tanh, 1 + tanh, 0.5*x and the GELU's output 16 each; the two
 * LayerNorms' inputs and outputs 16; its KV cache's 8*N*d apart) */
#define FORMULA_HF_GPT2_ND32 112
/* BERT's block (BertLayer), eager 16-bit autocast over fp32 weights, SDPA, dropout 0: 40*N*d +
 * 16*N + 4*N*H (the three 16-bit casts of the block's fp32 input for q, k, v 6, q, k, v 6,
 * SDPA's output 2; the two LayerNorms' fp32 inputs 8; the MLP's input cast 2, its output 8 and
 * GELU's 8), 2*N*d more with dropout (two masks); outside the blocks the embeddings' LayerNorm
 * and the MLM head keep 14*N*d + 16*N (+N*d: the embeddings' dropout mask), the loss 10*N*V.
 * Measured on the H100 (bert_b16_fit, dropout 0.1) and simulated (dropout 0 and 0.1) to 16 B a
 * block. Compiled, float32 or 16-bit weights: GPT-2's block stands in. */
#define FORMULA_BERT_ND 40
/* formula_bert_block: BERT's own block is the refined formula's (eager 16-bit autocast) */
int formula_bert_block(const gpt_shape *s);
/* formula_logits_per_nv: the bytes per B*T*V the refined formula's logits and loss keep (12 eager,
 * 8 compiled; BERT's masked-LM loss 10; 0 with no head: no_head) */
unsigned formula_logits_per_nv(const gpt_shape *s);
/* formula_block_text: formula_block_bytes's terms for s, as a report writes them (a static
 * buffer: print it before the next call) */
const char *formula_block_text(const gpt_shape *s);
/* formula_params_words: what formula_params_exact counts for s, as a report names it beside the
 * trace's own count ("GPT blocks of the same L, d, V", "BERT masked-LM model of the same L, d,
 * V with its 512 position and 2 token-type rows", ...), into buf. */
const char *formula_params_words(const gpt_shape *s, char *buf, size_t n);
/* formula_ckpt_per_nd: the bytes per N*d a checkpointed block keeps (its input, the residual
 * stream: 4 in fp32, 2 when it is 16-bit), what the refined activations count per block with
 * activation checkpointing */
unsigned formula_ckpt_per_nd(const gpt_shape *s);
/* formula_refined_words: what the refined formula counts for s's precision ("what PyTorch
 * autocast really keeps", float32's, 16-bit parameters') */
const char *formula_refined_words(const gpt_shape *s);
/* formula_kv_grouped: a gated block whose key / value width is not d (grouped-query attention) */
int formula_kv_grouped(const gpt_shape *s);
/* formula_hf_gpt2_block: Hugging Face GPT-2's own block is the refined formula's (eager) */
int formula_hf_gpt2_block(const gpt_shape *s);
/* formula_take_block: dst's block becomes src's (gated: I, kv, untied head; Hugging Face GPT-2;
 * BERT; 16-bit parameters), the rest of dst left as it is (a what-if keeps the run's block) */
void formula_take_block(gpt_shape *dst, const gpt_shape *src);

/* formula_refined: the refined formula's tensor bytes at the step's peak (start of the
 * loss backward) per category: parameters 4P (LoRA: and 4 B per adapter element), optimizer
 * opt_bpp per trainable parameter (0 at iteration 0), gradients 4 B per trainable parameter when
 * A > 1, autocast copies 2*P_mm (eager 16-bit), activations L blocks + 6Nd + 8N (final
 * LayerNorm; checkpointing: L block inputs, the recomputed block comes after the logits are
 * freed; formula_lora_block: L LoRA blocks), logits/loss 12NV (8NV compiled),
 * attention 6*B*H*T^2 per layer when unfused, inputs 16N. Sums to formula.md §3's peak. Other
 * categories are 0; all are 0 when s->generic. */
void formula_refined(const gpt_shape *s, cat_breakdown *out);
/* formula_backward_end: the tensor bytes at the end of the backward, the step's other candidate
 * peak (a small B*T's: its activations below the gradients): parameters and the optimizer's
 * state as formula_refined has them, every trainable parameter's gradient, the token batch, and
 * a head tied to the embedding's dense V x d gradient being added into its .grad (backward; a
 * simulated GPT-2 at B=1, T=64 peaked there, 147 MiB of it). All 0 when s->generic. */
void formula_backward_end(const gpt_shape *s, cat_breakdown *out);

/* formula_attention_unfused: 1 when measured attention bytes are score matrices (at least a
 * quarter of the unfused 6*B*H*T^2 per layer), 0 when they are a fused kernel's small buffers
 * (log-sum-exp rows: B*H*T fp32) or none. */
int formula_attention_unfused(const gpt_shape *s, uint64_t measured);

/* formula_compiled_casts: the 16-bit casts of the fp32 matmul weights a compiled graph saves
 * for its backward under 16-bit autocast (torch.compile, fp32 parameters, no checkpointing): 2*P_mm
 * bytes (formula_params_matmul), as eager autocast's copies, but made in the graph (no autocast
 * frame: a trace counts them as activations), and the same at any micro-batch. The refined
 * formula's compiled activations leave them out (its 30/36 of the eager block). Measured on the
 * H100: nanoGPT GPT-2 124M compiled kept 238.8 MiB of activations whatever the batch (B=8, 10,
 * 12), Hugging Face's GPT-2 238.6 MiB between its activations and its backward (B=4, 8, 12);
 * 2*P_mm is 235.6 MiB. 0 for any other shape. */
uint64_t formula_compiled_casts(const gpt_shape *s);

/* formula_largest_tensor: the largest single tensor of a step in bytes; *what (optional)
 * gets a static description. */
uint64_t formula_largest_tensor(const gpt_shape *s, const char **what);

/* Fixed costs assumed by `predict` when nothing was measured. */
#define FORMULA_CONTEXT_BYTES (500ull << 20) /* CUDA context, lazy kernel loading */
#define FORMULA_CUBLAS_BYTES (8ull << 20)    /* cuBLAS workspace, default size */
/* The caching allocator's cache at the peak, as a fraction of tensor bytes, that a run needs
 * room for (an H100 with a 12282 MiB cap: eager fp16 runs reserved 1.14-1.22x what they
 * allocated, and GPT-2 124M at B=8 failed on fragmentation with 1.14x; compiled 1.03-1.13x;
 * expandable_segments:True eager 1.13x). */
/* formula_too_large: 1 when a formula's byte count for s passes 2^56 (64 PiB, beyond any
 * device): its activations at the documents' x160, its logits, its scores, its weights with
 * AdamW's state (the sizes each option allows multiply past 2^64: rows held, sums wrapped) */
int formula_too_large(const gpt_shape *s);
#define FORMULA_CACHE_EAGER 0.20
#define FORMULA_CACHE_COMPILED 0.10
#define FORMULA_CACHE_EXPANDABLE_EAGER 0.13
#define FORMULA_CACHE_EXPANDABLE_COMPILED 0.05

#endif
