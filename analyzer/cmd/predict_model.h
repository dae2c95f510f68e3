/* predict_model.h — the model `vramtrace predict` is told about without a trace
 * (predict_model.c): a preset (--model), a gated-MLP decoder's options (--mlp-width, --kv-heads,
 * --tied-head) and a Hugging Face config.json (llama, mistral and qwen2: gated blocks; gpt2: its
 * own). */
#ifndef VT_ANALYZER_PREDICT_MODEL_H
#define VT_ANALYZER_PREDICT_MODEL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "config.h"
#include "formula.h"

typedef struct predict_block {
    uint64_t mlp_width; /* a gated MLP's width I (gate, up, down); 0: GPT-2's 4d GELU MLP */
    uint64_t kv_heads;  /* grouped-query attention's key / value heads; 0: as many as n_head */
    int tied;           /* the head shares the embedding: -1 not given, 0 untied, 1 tied */
    int attn_bias;      /* projection biases: 3 q, k, v (Qwen2), 4 and o (attention_bias) */
    int hf_gpt2;        /* a Hugging Face GPT-2 config: transformers' GPT-2 block */
    int no_kv_cache;    /* its config says use_cache false: no KV cache in training */
    int hf_gated;       /* a Hugging Face Llama / Mistral / Qwen2 config: transformers' model */
    int bert;           /* a Hugging Face BERT (1) / RoBERTa (2) config: BertForMaskedLM's model */
    uint64_t pos_rows, type_rows; /* ... its position and token-type tables' rows (GPT-2's
                                   * position table too: n_positions) */
    uint64_t pos_off; /* rows before its first position (RoBERTa's padding index and 1), or 0 */
    char from[160];   /* what gave the block ("--mlp-width 2816", "config.json: llama") */
} predict_block;

/* predict_model_preset: a preset's shape and extra settings into c (source "flag": --model
 * NAME), its micro-batch and accumulation only where nothing gave them (the user, a traced run);
 * -1 with err for a name that is none (they are listed). */
int predict_model_preset(nano_config *c, predict_block *b, const char *name, char *err,
                         size_t errlen);
/* predict_model_names: every name --model takes ("gpt2, ..., qwen2.5-1.5b") and a newline onto
 * out, where the cursor is at column col, lines wrapped before 80 columns and indented by indent */
void predict_model_names(FILE *out, int col, int indent);

/* predict_block_init: no block given (GPT-2's, nanoGPT's). */
void predict_block_init(predict_block *b);

/* predict_block_key: key (normalized: "mlp_width") is one of the block's options: 2 when it
 * takes a value (mlp_width, kv_heads), 1 a flag (tied_head, untied_head), 0 not one. */
int predict_block_key(const char *key);
/* predict_block_option: the option key (predict_block_key's) applied, val its value (NULL for a
 * flag). 0, or -1 with err on a bad value. */
int predict_block_option(predict_block *b, const char *key, const char *val, char *err,
                         size_t errlen);

/* predict_hf_config: path is a Hugging Face config.json (a JSON object with "model_type"):
 * its shape into c (n_layer, n_head, n_embd, vocab_size, dropout, bias, compile off: the source
 * "file") and its block into b. 1 when it was one, 0 when path is not (left to the config
 * reader), -1 with err: a model_type whose block the formulas do not have (they say which do),
 * or a key missing or out of range. */
int predict_hf_config(nano_config *c, predict_block *b, const char *path, char *err, size_t errlen);

/* predict_block_apply: b onto s (formula_shape_from_config's); -1 with err when the shape
 * cannot have it (kv heads that do not divide n_head, a width that n_head does not divide), or
 * when a gated block lacks a value nanoGPT's defaults would fill (its n_layer, n_head, n_embd,
 * vocab_size: never another program's). */
int predict_block_apply(const predict_block *b, const nano_config *c, gpt_shape *s, char *err,
                        size_t errlen);

/* predict_kv_cache: the KV cache transformers' models keep in training (use_cache=True, their
 * config's default): GPT-2's a key and a value of B·T·d per block in the compute dtype, 4·N·d
 * bytes in 16 bits, 8·N·d in fp32; a Llama-style decoder's of B·T·kv (its key / value width) in
 * fp32 under autocast (the rotary embedding's fp32 cos and sin promote them), in 16 bits with
 * 16-bit weights (measured beside their activations on the H100: GPT-2 144 MiB, Llama 160M 288
 * MiB at B=4, T=1024): the bytes for b's shape s, which the formulas never count (0 for another
 * model, or when its config turns the cache off). */
uint64_t predict_kv_cache(const predict_block *b, const gpt_shape *s);

#endif
