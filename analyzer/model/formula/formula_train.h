/* formula_train.h — what trains, counted from a shape (formula_train.c): LoRA's adapters on the
 * blocks' projections (their elements, the activations of a gated block whose other weights are
 * frozen) and Adafactor's factored second moment. Set by `vramtrace predict` (--lora-rank,
 * --optimizer adafactor); a trace's run measures its own. Only gpt_shape's sizes are read here. */
#ifndef VT_ANALYZER_FORMULA_TRAIN_H
#define VT_ANALYZER_FORMULA_TRAIN_H

#include <stdint.h>

#include "formula.h"

/* The projections of a block LoRA can adapt (gpt_shape.lora_targets, bits): a gated block's q, k,
 * v, o, gate, up and down; GPT-2's fused q, k, v (c_attn: d to 3d), o (c_proj), up (c_fc: d to 4d)
 * and down (the MLP's c_proj); BERT's query, key, value, o (attention.output.dense), up
 * (intermediate.dense) and down (output.dense). */
enum {
    LORA_Q = 1u << 0,
    LORA_K = 1u << 1,
    LORA_V = 1u << 2,
    LORA_O = 1u << 3,
    LORA_GATE = 1u << 4,
    LORA_UP = 1u << 5,
    LORA_DOWN = 1u << 6,
    LORA_QKV = 1u << 7, /* GPT-2's c_attn: one projection d to 3d */
    LORA_ALL = (1u << 8) - 1
};

/* formula_lora_dims: a targeted projection's input and output widths in s's block (kv wide k and
 * v under grouped key / value; I wide gate and up, 4d for GPT-2 and BERT); 0 when the block has
 * no such projection (GPT-2's q alone, a gate outside a gated block) */
int formula_lora_dims(const gpt_shape *s, unsigned target, uint64_t *in, uint64_t *out);
/* formula_lora_params: the adapters' elements: R * (in + out) for each targeted projection of
 * each block (lora_A: R x in, lora_B: out x R); 0 without LoRA */
uint64_t formula_lora_params(const gpt_shape *s);
/* formula_lora_factored: Adafactor's state elements over the adapters: each is a matrix, its
 * rows + columns (R + in, out + R) */
uint64_t formula_lora_factored(const gpt_shape *s);
/* formula_factored_elems: Adafactor's state elements over the model's weights (torch.optim.
 * Adafactor: a row and a column vector of each matrix, every vector whole), the tensors
 * formula_params_exact counts: GPT-2 124M's 321,617 (its H100 run kept 1,286,468 B in fp32) */
uint64_t formula_factored_elems(const gpt_shape *s);
/* formula_lora_block_bytes: one gated block's saved activations with LoRA, eager 16-bit autocast
 * over fp32 weights: a frozen weight keeps no input for its gradient, so the block keeps its fp32
 * input, the two RMSNorms' rsqrt rows, SDPA's q, output, k, v and log-sum-exp rows, the residual
 * after attention and the MLP's gate, SiLU and up outputs: 12*N*d + 4*N*kv + 6*N*I + 8*N + 4*N*H;
 * each adapter a 16-bit copy of its input (2*N*in, for lora_A's gradient) and lora_A's output
 * (2*N*R, lora_B's input). The H100's Llama 400M, LoRA rank 8 on q, k, v and o (B=4, T=1024):
 * 4,090,790,276 B measured, 24 such blocks 4,090,232,832. */
uint64_t formula_lora_block_bytes(const gpt_shape *s);

#endif
