/* formula_train.c — LoRA's adapters and Adafactor's factored state, counted from a shape
 * (formula_train.h). Reads gpt_shape's sizes alone: formula.c calls here, never the reverse. */
#include "formula_train.h"

/* kv: a gated block's key / value width (d without grouped-query attention) */
static uint64_t kv(const gpt_shape *s)
{
    return s->gated && s->kv ? s->kv : s->d;
}

/* mlp: the MLP's hidden width (a gated block's I; GPT-2's and BERT's 4d) */
static uint64_t mlp(const gpt_shape *s)
{
    return s->gated ? s->I : 4 * s->d;
}

int formula_lora_dims(const gpt_shape *s, unsigned target, uint64_t *in, uint64_t *out)
{
    int gpt2 = !s->gated && !(s->bert && s->pos_rows); /* c_attn: q, k and v in one */
    *in = s->d, *out = s->d;
    switch (target) {
    case LORA_Q:
        return !gpt2;
    case LORA_K:
    case LORA_V:
        *out = kv(s);
        return !gpt2;
    case LORA_O:
        return 1;
    case LORA_QKV:
        *out = 3 * s->d;
        return gpt2;
    case LORA_GATE:
        *out = mlp(s);
        return s->gated;
    case LORA_UP:
        *out = mlp(s);
        return 1;
    case LORA_DOWN:
        *in = mlp(s);
        return 1;
    default:
        return 0;
    }
}

/* each: the sum over the targeted projections of one block of R * (in + out) (elements) or of
 * in + out + 2R (Adafactor's rows and columns of lora_A and lora_B) */
static uint64_t each(const gpt_shape *s, int factored)
{
    uint64_t sum = 0, in, out;
    for (unsigned t = 1; t & LORA_ALL; t <<= 1)
        if ((s->lora_targets & t) && formula_lora_dims(s, t, &in, &out))
            sum += factored ? in + out + 2 * s->lora_rank : s->lora_rank * (in + out);
    return sum;
}

uint64_t formula_lora_params(const gpt_shape *s)
{
    return s->lora_rank ? s->L * each(s, 0) : 0;
}

uint64_t formula_lora_factored(const gpt_shape *s)
{
    return s->lora_rank ? s->L * each(s, 1) : 0;
}

uint64_t formula_factored_elems(const gpt_shape *s)
{
    uint64_t d = s->d, V = s->V;
    if (s->gated) { /* the embedding (and an untied head): V + d each; per block two RMSNorm
                     * weights, q and o (2d each), k and v (kv + d), gate, up, down (I + d), the
                     * biases whole; the final RMSNorm's weight */
        uint64_t biases = (s->attn_bias >= 3 ? d + 2 * kv(s) : 0) + (s->attn_bias == 4 ? d : 0);
        return (V + d) * (s->untied ? 2 : 1) + s->L * (11 * d + 2 * kv(s) + 3 * s->I + biases) + d;
    }
    if (s->bert && s->pos_rows) /* word, position and token-type tables, their LayerNorm; per
                                 * block q, k, v, o (2d each) and their biases, two LayerNorms,
                                 * the MLP's matrices (5d each) and biases: 31d; the head's
                                 * transform, its bias and LayerNorm, the decoder's bias */
        return V + s->pos_rows + s->type_rows + 3 * d + 2 * d + s->L * 31 * d + 5 * d + V;
    /* GPT-2: the token and position tables; per block ln_1, c_attn (4d), c_proj (2d), ln_2, c_fc
     * and the MLP's c_proj (5d each): 18d, 29d with the biases; ln_f; the head is the embedding */
    return V + d + formula_pos_rows(s) + d + s->L * (s->bias ? 29 : 18) * d + (s->bias ? 2 : 1) * d;
}

uint64_t formula_lora_block_bytes(const gpt_shape *s)
{
    uint64_t N = s->B * s->T, in, out, adapters = 0;
    for (unsigned t = 1; t & LORA_ALL; t <<= 1)
        if ((s->lora_targets & t) && formula_lora_dims(s, t, &in, &out))
            adapters += 2 * N * in + 2 * N * s->lora_rank;
    return 12 * N * s->d + 4 * N * kv(s) + 6 * N * s->I + 8 * N + 4 * N * s->H + adapters;
}
