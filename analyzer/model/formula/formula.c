/* formula.c — the design documents' memory formula (formula.md §2, exactly as written) and
 * the refined formula (§3) for transformer shapes, per category (formula.h); nothing for a
 * shape no formula applies to (gpt_shape.generic).
 * Checked on an H100 (PyTorch 2.11, examples/gpt/train.py, fp16 AMP, 3 iterations): the
 * refined tensor bytes vs torch.cuda.max_memory_allocated were GPT-2 124M eager B=8 A=2
 * 9.95 / 10.04 GB, B=4 A=1 5.60 / 5.67, B=4 A=2 bf16 6.10 / 6.17, the documents' 30M model
 * eager 6.20 / 6.26; compiled 124M B=8 7.60 / 7.65, 30M 4.37 / 3.83 (compile saves more there).
 * max_memory_reserved / allocated was 1.14-1.47 eager and 1.03-1.13 compiled. Under a
 * 12282 MiB cap (rtx4070 less a 500 MiB context) predict's fits / does-not-fit matched every
 * run: eager B=16 and B=8 (A=64) out of memory, B=7 and B=4 fit; compiled B=16 and B=14 out
 * of memory, B=12 (10.41 GB predicted, 10.25 measured) and B=8 fit. */
#include "formula.h"

#include <stdio.h>
#include <string.h>

#include "formula_train.h"

void formula_shape_from_config(const nano_config *c, gpt_shape *s)
{
    memset(s, 0, sizeof *s);
    s->B = (uint64_t)c->v[CFG_batch_size].i;
    s->T = (uint64_t)c->v[CFG_block_size].i;
    s->A = (uint64_t)c->v[CFG_gradient_accumulation_steps].i;
    s->L = (uint64_t)c->v[CFG_n_layer].i;
    s->H = (uint64_t)c->v[CFG_n_head].i;
    s->d = (uint64_t)c->v[CFG_n_embd].i;
    s->V = (uint64_t)c->v[CFG_vocab_size].i;
    s->dropout = c->v[CFG_dropout].f;
    s->bias = (int)c->v[CFG_bias].i;
    s->dtype_bytes = config_dtype_bytes(c);
    s->compile = (int)c->v[CFG_compile].i;
    if (c->accum_nbs > 0) /* (the program's own count at each micro-batch) */
        s->nbs = (uint64_t)c->accum_nbs, s->nbs_floor = (uint64_t)c->accum_nbs_floor;
    if (c->batch_multiple_v > 1) /* (the script's own requirement: config_script_multiple) */
        s->B_multiple = (uint64_t)c->batch_multiple_v;
}

uint64_t formula_accum_own(const gpt_shape *s, uint64_t b)
{
    if (!s->nbs || !b || s->accum_unknown || s->no_training)
        return 0;
    uint64_t q = s->nbs / b, r = s->nbs % b, a = q + (2 * r > b || (2 * r == b && (q & 1)));
    return a > s->nbs_floor ? a : s->nbs_floor;
}

double formula_opt_bpp(const gpt_shape *s)
{
    if (s->opt_set)
        return s->opt_bpp;
    if (s->opt_factored) /* Adafactor's rows and columns, in the gradients' dtype */
        return (double)(s->lora_rank ? formula_lora_factored(s) : formula_factored_elems(s)) *
               formula_trained_bytes(s) / formula_trained(s);
    return 2.0 * formula_trained_bytes(s); /* AdamW's two states */
}

int formula_dropout(const gpt_shape *s)
{
    return s->dropout > 0 || s->dropout_on;
}

int formula_param_bytes(const gpt_shape *s)
{
    return s->params16 ? 2 : 4;
}

int formula_params16(const gpt_shape *s)
{
    return formula_param_bytes(s) == 2;
}

double formula_train_frac(const gpt_shape *s)
{
    if (s->none_seen_trained)
        return 0.0;
    if (s->lora_rank) { /* the adapters' share of the model's weights and theirs */
        double a = (double)formula_lora_params(s);
        return a / ((double)formula_params_exact(s) + a);
    }
    return s->train_frac > 0 && s->train_frac < 1 ? s->train_frac : 1.0;
}

double formula_trained(const gpt_shape *s)
{
    if (s->lora_rank)
        return (double)formula_lora_params(s);
    return (double)formula_params_exact(s) * formula_train_frac(s);
}

double formula_grads_live(const gpt_shape *s)
{
    if (s->lora_rank || s->none_seen_trained || !(s->grads_frac > 0 && s->grads_frac < 1))
        return formula_trained(s);
    return (double)formula_params_exact(s) * s->grads_frac;
}

int formula_trained_bytes(const gpt_shape *s)
{
    return s->lora_rank ? 4 : formula_param_bytes(s);
}

int formula_lora_block(const gpt_shape *s)
{
    return s->lora_rank && s->gated && s->dtype_bytes == 2 && !s->compile && !formula_params16(s) &&
           !s->checkpointing;
}

/* kv_width: a gated block's key / value width (d without grouped-query attention) */
static uint64_t kv_width(const gpt_shape *s)
{
    return s->kv ? s->kv : s->d;
}

/* gated_matmul: the matrices of one gated block (q, o: d x d; k, v: d x kv; gate, up, down) */
static uint64_t gated_matmul(const gpt_shape *s)
{
    return 2 * s->d * s->d + 2 * s->d * kv_width(s) + 3 * s->d * s->I;
}

uint64_t formula_params_exact(const gpt_shape *s)
{
    if (s->gated) {
        uint64_t biases =
            (s->attn_bias >= 3 ? s->d + 2 * kv_width(s) : 0) + (s->attn_bias == 4 ? s->d : 0);
        return s->V * s->d * (s->untied ? 2 : 1) + s->L * (gated_matmul(s) + 2 * s->d + biases) +
               s->d;
    }
    if (s->bert && s->pos_rows)
        return s->V * s->d + (s->pos_rows + s->type_rows + 2) * s->d +
               s->L * (12 * s->d * s->d + 13 * s->d) + s->d * s->d + 3 * s->d + s->V;
    uint64_t c = s->bias ? 13 : 2, f = s->bias ? 2 : 1;
    return s->V * s->d + formula_pos_rows(s) * s->d + s->L * (12 * s->d * s->d + c * s->d) +
           f * s->d;
}

/* head_matmul: the V x d weight of the output layer autocast casts (none with no head) */
static uint64_t head_matmul(const gpt_shape *s)
{
    return s->no_head ? 0 : s->V * s->d;
}

uint64_t formula_params_matmul(const gpt_shape *s)
{
    if (s->gated)
        return s->L * gated_matmul(s) + head_matmul(s);
    return 12 * s->L * s->d * s->d + head_matmul(s) + (s->bert && s->pos_rows ? s->d * s->d : 0);
}

/* decayed_params: the matrices (dim >= 2) whose AdamW state the documents count (nanoGPT's
 * decay group: its embeddings, position table and the blocks' 12*d*d); a gated block's model
 * has no position table and matrices of its own (an untied head besides), BERT its position and
 * token-type tables' rows and the masked-LM head's d x d transform */
static uint64_t decayed_params(const gpt_shape *s)
{
    if (s->gated)
        return s->V * s->d * (s->untied ? 2 : 1) + s->L * gated_matmul(s);
    if (s->bert && s->pos_rows)
        return s->V * s->d + (s->pos_rows + s->type_rows) * s->d + 12 * s->L * s->d * s->d +
               s->d * s->d;
    return s->V * s->d + formula_pos_rows(s) * s->d + 12 * s->L * s->d * s->d;
}

void formula_documents(const gpt_shape *s, doc_formula *d)
{
    memset(d, 0, sizeof *d);
    if (s->generic)
        return;
    d->params_estimate = 12 * s->L * s->d * s->d + s->d * s->V;
    /* nanoGPT's get_num_params(non_embedding=True) subtracts the position embeddings (a gated
     * block's model has none: rotary) */
    d->params_reported = formula_params_exact(s) - (s->gated ? 0 : formula_pos_rows(s) * s->d);
    d->decayed_params = decayed_params(s);
    d->param_bytes = d->params_reported * 2;
    d->grad_bytes = d->params_reported * 2;
    d->optimizer_bytes = d->decayed_params * 2 * 4;
    d->core_bytes = d->params_reported * (2 + 8);
    d->act_elements = s->B * s->T * s->d * s->L;
    d->act_bytes_basic = d->act_elements * FORMULA_DOC_MULT_BASIC * 2;
    d->act_bytes_empirical = d->act_elements * FORMULA_DOC_MULT_EMPIRICAL * 2;
    d->attn_bytes_per_layer = s->B * s->H * s->T * s->T * 2;
    d->context_bytes = 500000000ull;
    d->compile_bytes = s->compile ? 750000000ull : 0;
}

void formula_documents_breakdown(const gpt_shape *s, cat_breakdown *out)
{
    doc_formula d;
    formula_documents(s, &d);
    memset(out, 0, sizeof *out);
    out->bytes[CAT_PARAMETERS] = d.param_bytes;
    out->bytes[CAT_GRADIENTS] = d.grad_bytes;
    out->bytes[CAT_OPTIMIZER] = d.optimizer_bytes;
    out->bytes[CAT_ACTIVATIONS] = d.act_bytes_basic;
    out->bytes[CAT_ATTENTION] = d.attn_bytes_per_layer;
    out->bytes[CAT_CONTEXT] = d.context_bytes;
    out->bytes[CAT_KERNEL_CODE] = d.compile_bytes;
}

/* plain_per_nd: a block without a gated MLP: its bytes per N*d (formula.h) */
static uint64_t plain_per_nd(const gpt_shape *s)
{
    if (formula_bert_block(s))
        return FORMULA_BERT_ND;
    if (formula_hf_gpt2_block(s))
        return s->dtype_bytes >= 4   ? FORMULA_HF_GPT2_ND32
               : formula_params16(s) ? FORMULA_HF_GPT2_ND16
                                     : FORMULA_HF_GPT2_ND;
    if (formula_params16(s) && s->dtype_bytes < 4 && !s->compile)
        return 32; /* 16-bit parameters: the residuals the LayerNorms keep are 16-bit */
    if (s->dtype_bytes >= 4)
        return 64; /* float32: every saved tensor at 4 B */
    return s->compile ? 30 /* torch.compile recomputes some: 24-36, the middle */ : 36;
}

/* gated_of: a gated block's bytes per N*d, per N*kv and per N*I (formula.h), and whether
 * torch.compile's 30/36 of the eager bytes applies */
typedef struct gated_terms {
    unsigned nd, nkv, ni;
    int compiled;
} gated_terms;
static gated_terms gated_of(const gpt_shape *s)
{
    gated_terms t = s->dtype_bytes >= 4   ? (gated_terms){32, 8, 16, 0}
                    : formula_params16(s) ? (gated_terms){20, 4, 8, 0}
                                          : (gated_terms){30, 4, 8, 0};
    t.compiled = s->compile && s->dtype_bytes < 4;
    return t;
}

uint64_t formula_block_bytes(const gpt_shape *s)
{
    uint64_t N = s->B * s->T, d = s->d;
    if (s->gated) { /* SDPA keeps k and v at the key / value width (grouped-query attention) */
        gated_terms g = gated_of(s);
        uint64_t b = g.nd * N * d + g.nkv * N * kv_width(s) + g.ni * N * s->I;
        if (g.compiled)
            b = b * 30 / 36;
        return b + 8 * N + 4 * N * s->H;
    }
    uint64_t per_nd = plain_per_nd(s);
    uint64_t b = per_nd * N * d + 16 * N + 4 * N * s->H;
    if (formula_dropout(s))
        b += 2 * N * d; /* dropout masks */
    return b;
}

const char *formula_block_text(const gpt_shape *s)
{
    static char text[96]; /* (one at a time: each caller prints it before the next call) */
    const char *masks = !s->gated && formula_dropout(s) ? " + 2*N*d" : "";
    if (!s->gated) {
        snprintf(text, sizeof text, "%llu*N*d + 16*N + 4*N*H%s",
                 (unsigned long long)plain_per_nd(s), masks);
        return text;
    }
    gated_terms g = gated_of(s);
    char kv[24] = ""; /* k and v at d: their terms in N*d's */
    if (formula_kv_grouped(s))
        snprintf(kv, sizeof kv, " + %u*N*kv", g.nkv);
    snprintf(text, sizeof text, "%s%u*N*d%s + %u*N*I%s + 8*N + 4*N*H", g.compiled ? "(" : "",
             kv[0] ? g.nd : g.nd + g.nkv, kv, g.ni, g.compiled ? ")*30/36" : "");
    return text;
}

unsigned formula_ckpt_per_nd(const gpt_shape *s)
{
    return formula_params16(s) && s->dtype_bytes < 4 ? 2 : 4;
}

const char *formula_refined_words(const gpt_shape *s)
{
    return s->dtype_bytes >= 4   ? "what float32 training really keeps"
           : formula_params16(s) ? "what 16-bit parameters really keep (no fp32 master weights, "
                                   "no copies of them)"
                                 : "what PyTorch autocast really keeps";
}

const char *formula_params_words(const gpt_shape *s, char *buf, size_t n)
{
    if (s->bert && s->pos_rows)
        snprintf(buf, n,
                 "BERT masked-LM model of the same L, d, V with its %llu position and %llu "
                 "token-type rows",
                 (unsigned long long)s->pos_rows, (unsigned long long)s->type_rows);
    else
        snprintf(buf, n, "%s blocks of the same %s",
                 s->patch_tokens ? "GPT-shaped (pre-LayerNorm, a 4d GELU MLP)"
                 : s->gated      ? "gated"
                                 : "GPT",
                 s->patch_tokens ? "L, d, T (no vocabulary)"
                 : s->gated      ? "L, d, I, V"
                                 : "L, d, V");
    return buf;
}

int formula_bert_block(const gpt_shape *s)
{
    return s->bert && s->dtype_bytes < 4 && !s->compile && !formula_params16(s);
}

unsigned formula_logits_per_nv(const gpt_shape *s)
{
    return s->no_head ? 0 : formula_bert_block(s) ? 10 : s->compile ? 8 : 12;
}

int formula_kv_grouped(const gpt_shape *s)
{
    return s->gated && kv_width(s) != s->d;
}

int formula_hf_gpt2_block(const gpt_shape *s)
{
    return s->hf_gpt2 && !s->compile;
}

void formula_take_block(gpt_shape *dst, const gpt_shape *src)
{
    dst->gated = src->gated, dst->I = src->I, dst->kv = src->kv, dst->untied = src->untied;
    dst->attn_bias = src->attn_bias;
    dst->hf_gpt2 = src->hf_gpt2, dst->no_head = src->no_head;
    dst->bert = src->bert, dst->pos_rows = src->pos_rows, dst->type_rows = src->type_rows;
    dst->params16 = src->params16, dst->trained32 = src->trained32;
}

void formula_refined(const gpt_shape *s, cat_breakdown *out)
{
    memset(out, 0, sizeof *out);
    if (s->generic)
        return;
    uint64_t P = formula_params_exact(s), N = s->B * s->T, d = s->d;
    double trained = formula_trained(s);
    int pb = formula_param_bytes(s); /* gradients in the parameters' dtype (LoRA's: fp32) */
    /* LoRA: the adapters beside the frozen weights, in fp32 (peft's default) */
    out->bytes[CAT_PARAMETERS] = (uint64_t)pb * P + 4 * formula_lora_params(s);
    out->bytes[CAT_OPTIMIZER] = s->iteration0 ? 0 : (uint64_t)(formula_opt_bpp(s) * trained + 0.5);
    out->bytes[CAT_GRADIENTS] =
        s->A > 1 ? (uint64_t)(formula_trained_bytes(s) * formula_grads_live(s) + 0.5) : 0;
    if (s->dtype_bytes == 2 && !s->compile && pb == 4) /* (16-bit weights need no copy) */
        out->bytes[CAT_AUTOCAST] =
            s->checkpointing ? 2 * (head_matmul(s) + (s->gated ? gated_matmul(s) : 12 * d * d))
                             : 2 * formula_params_matmul(s);
    uint64_t block = formula_block_bytes(s);
    uint64_t act;
    int lora = formula_lora_block(s);
    int p16 = pb == 2 && s->dtype_bytes < 4; /* the residual stream is 16-bit */
    if (s->checkpointing) /* only block inputs (the residual: fp32, or 16-bit): a block is
                           * recomputed later in the backward, after the logits are freed */
        act = s->L * formula_ckpt_per_nd(s) * N * d;
    else
        act = s->L * (lora ? formula_lora_block_bytes(s) : block);
    if (lora) /* the final RMSNorm keeps its fp32 input and rsqrt rows (4Nd + 4N; the frozen head
               * no cast of its input): what the first block does not, its input (the frozen
               * embedding's output) needing no gradient */
        ;
    else if (s->gated) /* final RMSNorm: fp32 input and normalized input, rsqrt rows, the head's
                        * input (a 16-bit cast, or the fp32 output itself); of a 16-bit stream: its
                        * fp32 copy, the 16-bit normalized input and output */
        act += (s->dtype_bytes >= 4 ? 12 : p16 ? 8 : 10) * N * d + 4 * N;
    else if (formula_bert_block(s)) /* the embeddings' LayerNorm, the MLM head's transform and
                                     * its decoder's input cast */
        act += 14 * N * d + 16 * N;
    else /* final LayerNorm: fp32 (16-bit) input + 16-bit (fp32) output, mean/rstd */
        act += (p16 ? 4 : s->dtype_bytes >= 4 ? 8 : 6) * N * d + 8 * N;
    if (formula_dropout(s))
        act += N * d; /* embedding dropout mask */
    out->bytes[CAT_ACTIVATIONS] = act;
    out->bytes[CAT_LOGITS] = formula_logits_per_nv(s) * N * s->V;
    if (s->unfused_attention)
        out->bytes[CAT_ATTENTION] = (s->checkpointing ? 1 : s->L) * 6 * s->B * s->H * s->T * s->T;
    /* int64 token ids and targets; a vision transformer's images: their size is not in it */
    out->bytes[CAT_INPUTS] = s->patch_tokens ? 0 : 16 * N;
}

uint64_t formula_compiled_casts(const gpt_shape *s)
{
    if (s->generic || !s->compile || s->dtype_bytes != 2 || formula_param_bytes(s) != 4 ||
        s->checkpointing)
        return 0;
    return 2 * formula_params_matmul(s);
}

void formula_backward_end(const gpt_shape *s, cat_breakdown *out)
{
    cat_breakdown ref;
    formula_refined(s, &ref);
    memset(out, 0, sizeof *out);
    if (s->generic)
        return;
    int pb = formula_param_bytes(s);
    out->bytes[CAT_PARAMETERS] = ref.bytes[CAT_PARAMETERS];
    out->bytes[CAT_OPTIMIZER] = ref.bytes[CAT_OPTIMIZER];
    out->bytes[CAT_GRADIENTS] =
        (uint64_t)((double)formula_trained_bytes(s) * formula_grads_live(s) + 0.5);
    out->bytes[CAT_INPUTS] = ref.bytes[CAT_INPUTS];
    if (!s->untied && !s->patch_tokens && formula_train_frac(s) >= 1.0)
        out->bytes[CAT_BACKWARD] = (uint64_t)pb * s->V * s->d;
}

int formula_attention_unfused(const gpt_shape *s, uint64_t measured)
{
    if (s->generic || !s->H)
        return 0; /* no score matrices to compare with: heads unknown */
    double scores = 6.0 * (double)s->B * (double)s->H * (double)s->T * (double)s->T *
                    (double)(s->checkpointing ? 1 : s->L);
    return measured > 0 && (double)measured >= 0.25 * scores;
}

uint64_t formula_largest_tensor(const gpt_shape *s, const char **what)
{
    uint64_t N = s->B * s->T;
    struct {
        uint64_t bytes;
        const char *what;
    } c[] = {
        /* compiled 16-bit: the fused loss makes no fp32 copy; fp32 logits are 4 B anyway */
        {s->no_head                         ? 0
         : s->compile && s->dtype_bytes < 4 ? 2 * N * s->V
                                            : 4 * N * s->V,
         !s->compile          ? "fp32 logits for cross-entropy (4*B*T*V)"
         : s->dtype_bytes < 4 ? "16-bit logits (2*B*T*V; the compiled loss makes no fp32 copy)"
                              : "fp32 logits (4*B*T*V; float32 training)"},
        {(uint64_t)formula_param_bytes(s) * s->V * s->d,
         s->no_head            ? (formula_params16(s) ? "token embedding weight, 16-bit (2*V*d)"
                                                      : "token embedding weight, fp32 (4*V*d)")
         : formula_params16(s) ? "token embedding / lm_head weight, 16-bit (2*V*d)"
                               : "token embedding / lm_head weight, fp32 (4*V*d)"},
        {s->gated ? (uint64_t)(s->dtype_bytes >= 4 ? 4 : 2) * N * s->I
                  : (uint64_t)(s->dtype_bytes >= 4 ? 16 : 8) * N * s->d,
         s->gated ? "gated MLP hidden activation (I wide)" : "MLP hidden activation (4*d wide)"},
        {s->unfused_attention ? 4 * s->B * s->H * s->T * s->T : 0,
         "attention scores, fp32 (4*B*H*T^2)"},
    };
    size_t best = 0;
    for (size_t i = 1; i < sizeof c / sizeof c[0]; i++)
        if (c[i].bytes > c[best].bytes)
            best = i;
    if (what)
        *what = c[best].what;
    return c[best].bytes;
}

int formula_too_large(const gpt_shape *s)
{
    double B = (double)s->B, T = (double)s->T, L = (double)s->L, d = (double)s->d, V = (double)s->V,
           H = (double)s->H, I = (double)(s->I ? s->I : 4 * s->d);
    double most = (double)((uint64_t)1 << 56);
    double rows[] = {B * T * d * L * 320.0, B * T * V * 16.0, B * H * T * T * L * 4.0,
                     (L * (4.0 * d * d + 3.0 * d * I) + 2.0 * V * d + T * d) * 16.0};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!(rows[i] < most))
            return 1;
    return 0;
}
