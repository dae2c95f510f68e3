/* test_formula.c — the design documents' worked numbers (formula.md §2) and the refined
 * formula (§3) as golden values (analyzer/formula.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "formula.h"

/* Worked example 1: L=6, H=6, d=384, T=512, B=16, A=4, V=50304, float16, compile on. */
static gpt_shape example1(void)
{
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 16, s.T = 512, s.A = 4, s.L = 6, s.H = 6, s.d = 384, s.V = 50304;
    s.dtype_bytes = 2, s.compile = 1;
    return s;
}

/* Worked example 2: GPT-2 124M, L=12, H=12, d=768, T=1024, B=16, A=32. */
static gpt_shape example2(void)
{
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 16, s.T = 1024, s.A = 32, s.L = 12, s.H = 12, s.d = 768, s.V = 50304;
    s.dtype_bytes = 2, s.compile = 0;
    return s;
}

static void test_documents_example1(void **state)
{
    (void)state;
    gpt_shape s = example1();
    doc_formula d;
    formula_documents(&s, &d);
    /* 12*6*384^2 + 384*50304 = 10.6 M + 19.3 M ~= 29.9 M */
    assert_true(d.params_estimate == 10616832ull + 19316736ull);
    assert_true(d.params_estimate / 100000 == 299);
    /* the log's 29.94 M and 59.88 MB */
    assert_true((d.params_reported + 5000) / 10000 == 2994);
    assert_true((d.param_bytes + 5000) / 10000 == 5988);
    /* 30,130,176 decayed params x 8 ~= 241 MB */
    assert_true(d.decayed_params == 30130176ull);
    assert_true(d.optimizer_bytes == 30130176ull * 8);
    assert_true((d.optimizer_bytes + 500000) / 1000000 == 241);
    /* gradients ~0.06 GB, core ~300 MB */
    assert_true((d.grad_bytes + 5000000) / 10000000 == 6);
    assert_true((d.core_bytes + 50000000) / 100000000 == 3);
    /* 18.87 M elements, x 24 x 2 B ~= 906 MB; x 160 x 2 B ~= 6 GB */
    assert_true(d.act_elements == 18874368ull);
    assert_true((d.act_bytes_basic + 500000) / 1000000 == 906);
    assert_true((d.act_bytes_empirical + 500000000) / 1000000000 == 6);
    /* attention scores 50.3 MB per layer */
    assert_true((d.attn_bytes_per_layer + 50000) / 100000 == 503);
    assert_true(d.context_bytes == 500000000ull);
    assert_true(d.compile_bytes > 0);

    cat_breakdown b;
    formula_documents_breakdown(&s, &b);
    assert_true(b.bytes[CAT_PARAMETERS] == d.param_bytes);
    assert_true(b.bytes[CAT_OPTIMIZER] == d.optimizer_bytes);
    assert_true(b.bytes[CAT_ACTIVATIONS] == d.act_bytes_basic);
    assert_true(b.bytes[CAT_LOGITS] == 0); /* the documents do not model logits */
}

static void test_exact_params(void **state)
{
    (void)state;
    gpt_shape s = example2();
    /* GPT-2 124M without bias: 124,373,760 (nanoGPT logs 123.59M without wpe) */
    assert_true(formula_params_exact(&s) == 124373760ull);
    s.bias = 1;
    /* with bias (GPT-2 checkpoint shape, V=50257 padded to 50304): + 12*11*768 + 768 */
    assert_true(formula_params_exact(&s) == 124373760ull + 12ull * 11 * 768 + 768);
    s.bias = 0;
    assert_true(formula_params_matmul(&s) == 12ull * 12 * 768 * 768 + 50304ull * 768);
}

static void test_refined_peak(void **state)
{
    (void)state;
    gpt_shape s = example2();
    s.B = 8, s.A = 64;
    cat_breakdown b;
    formula_refined(&s, &b);
    uint64_t P = 124373760ull, N = 8ull * 1024, d = 768, L = 12, H = 12, V = 50304;
    uint64_t Pmm = 12 * L * d * d + V * d;
    /* formula.md §3: 4P + 8P + 2 P_mm + L(36Nd + 16N + 4NH) + 6Nd + 24N + 12NV, +4P (A > 1) */
    uint64_t want = 4 * P + 8 * P + 2 * Pmm + L * (36 * N * d + 16 * N + 4 * N * H) + 6 * N * d +
                    24 * N + 12 * N * V + 4 * P;
    assert_true(cat_breakdown_total(&b) == want);
    assert_true(b.bytes[CAT_PARAMETERS] == 4 * P);
    assert_true(b.bytes[CAT_GRADIENTS] == 4 * P);
    assert_true(b.bytes[CAT_OPTIMIZER] == 8 * P);
    assert_true(b.bytes[CAT_AUTOCAST] == 2 * Pmm);
    assert_true(b.bytes[CAT_LOGITS] == 12 * N * V);
    assert_true(b.bytes[CAT_INPUTS] == 16 * N);
    assert_true(b.bytes[CAT_ATTENTION] == 0);

    /* A = 1: no gradients at the peak; iteration 0: no Adam state */
    s.A = 1;
    s.iteration0 = 1;
    formula_refined(&s, &b);
    assert_true(cat_breakdown_total(&b) == want - 4 * P - 8 * P);

    /* compiled: 8NV, no weight copies, fewer saved activations */
    s = example2();
    s.compile = 1;
    formula_refined(&s, &b);
    N = 16ull * 1024;
    assert_true(b.bytes[CAT_LOGITS] == 8 * N * V);
    assert_true(b.bytes[CAT_AUTOCAST] == 0);
    assert_true(b.bytes[CAT_ACTIVATIONS] < L * 36 * N * d);
    assert_true(b.bytes[CAT_ACTIVATIONS] >= L * 24 * N * d);

    /* B=12, T=1024: cross-entropy ~7.4 GB vs blocks ~4.1 GB (formula.md §3) */
    s = example2();
    s.B = 12;
    formula_refined(&s, &b);
    assert_true((b.bytes[CAT_LOGITS] + 50000000) / 100000000 == 74);
    assert_true((L * formula_block_bytes(&s) + 50000000) / 100000000 == 41);
}

static void test_variants(void **state)
{
    (void)state;
    gpt_shape s = example1();
    s.compile = 0;
    uint64_t N = 16ull * 512, d = 384, H = 6;
    assert_true(formula_block_bytes(&s) == 36 * N * d + 16 * N + 4 * N * H);
    assert_string_equal(formula_block_text(&s), "36*N*d + 16*N + 4*N*H");
    s.dropout = 0.1;
    assert_true(formula_block_bytes(&s) == 38 * N * d + 16 * N + 4 * N * H);
    assert_string_equal(formula_block_text(&s), "36*N*d + 16*N + 4*N*H + 2*N*d"); /* its masks */
    s.dropout = 0;
    cat_breakdown b;
    formula_refined(&s, &b);
    uint64_t act16 = b.bytes[CAT_ACTIVATIONS];
    s.dtype_bytes = 4;
    assert_true(formula_block_bytes(&s) == 64 * N * d + 16 * N + 4 * N * H);
    assert_string_equal(formula_block_text(&s), "64*N*d + 16*N + 4*N*H"); /* (it said 36) */
    /* float32's final LayerNorm keeps its fp32 input and output: 8*N*d (16-bit output: 6) */
    formula_refined(&s, &b);
    assert_true(b.bytes[CAT_ACTIVATIONS] - act16 == s.L * 28 * N * d + 2 * N * d);
    /* Hugging Face GPT-2 in float32 (simulated): its own block, 112*N*d; compiled: nanoGPT's */
    s.hf_gpt2 = 1;
    assert_true(formula_block_bytes(&s) == 112 * N * d + 16 * N + 4 * N * H);
    assert_string_equal(formula_block_text(&s), "112*N*d + 16*N + 4*N*H");
    s.dtype_bytes = 2;
    assert_true(formula_block_bytes(&s) == 84 * N * d + 16 * N + 4 * N * H);
    s.compile = 1;
    assert_true(formula_block_bytes(&s) == 30 * N * d + 16 * N + 4 * N * H);
    assert_string_equal(formula_block_text(&s), "30*N*d + 16*N + 4*N*H"); /* (it said 36) */
    s.compile = 0, s.hf_gpt2 = 0;
    s.unfused_attention = 1;
    formula_refined(&s, &b);
    assert_true(b.bytes[CAT_ATTENTION] == 6ull * 6 * 16 * 6 * 512 * 512);
    uint64_t act_full = b.bytes[CAT_ACTIVATIONS];
    s.checkpointing = 1;
    formula_refined(&s, &b);
    assert_true(b.bytes[CAT_ACTIVATIONS] < act_full / 3);

    const char *what = NULL;
    s = example2();
    uint64_t big = formula_largest_tensor(&s, &what);
    assert_true(big == 4ull * 16 * 1024 * 50304);
    assert_non_null(strstr(what, "logits"));
    s.compile = 1; /* measured on the H100: compiled steps never make the fp32 copy */
    big = formula_largest_tensor(&s, &what);
    assert_true(big == 2ull * 16 * 1024 * 50304);
    assert_non_null(strstr(what, "16-bit logits"));
    s.dtype_bytes = 4; /* float32 compiled: the logits themselves are 4 B each */
    big = formula_largest_tensor(&s, &what);
    assert_true(big == 4ull * 16 * 1024 * 50304);
    assert_non_null(strstr(what, "fp32 logits"));
    assert_null(strstr(what, "16-bit"));
}

/* a gated-MLP decoder's block (Llama-160M of examples/hf: L=12, d=768, I=2048, V=32000, an
 * untied head): its exact parameters, the matrices autocast copies, and the saved activations
 * the H100 runs measured to the byte at B=4, T=1024 (2,122,989,568 B: hf_llama_fp16_b4) */
static void test_gated(void **state)
{
    (void)state;
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 4, s.T = 1024, s.A = 2, s.L = 12, s.H = 12, s.d = 768, s.V = 32000, s.dtype_bytes = 2;
    s.gated = 1, s.I = 2048, s.untied = 1;
    assert_int_equal(formula_params_exact(&s), 134105856);
    assert_int_equal(formula_params_matmul(&s), 109510656);
    uint64_t N = 4096;
    assert_int_equal(formula_block_bytes(&s), 34 * N * 768 + 8 * N * 2048 + 8 * N + 4 * N * 12);
    cat_breakdown r;
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], 2122989568);
    assert_int_equal(r.bytes[CAT_AUTOCAST], 2 * 109510656);
    assert_int_equal(r.bytes[CAT_PARAMETERS], 4 * 134105856);
    /* tied, grouped-query key / value of 256: fewer weights */
    s.untied = 0, s.kv = 256;
    assert_int_equal(formula_params_exact(&s),
                     32000ull * 768 +
                         12 * (2 * 768 * 768 + 2 * 768 * 256 + 3 * 768 * 2048 + 2 * 768) + 768);
    /* SDPA keeps k and v at the key / value width: 4*N*(d - kv) fewer bytes than 34*N*d */
    assert_int_equal(formula_block_bytes(&s),
                     30 * N * 768 + 4 * N * 256 + 8 * N * 2048 + 8 * N + 4 * N * 12);
    assert_string_equal(formula_block_text(&s), "30*N*d + 4*N*kv + 8*N*I + 8*N + 4*N*H");
    /* float32: every saved tensor at 4 B, the MLP's four kept whole (k and v at kv) */
    s.dtype_bytes = 4;
    assert_int_equal(formula_block_bytes(&s),
                     32 * N * 768 + 8 * N * 256 + 16 * N * 2048 + 8 * N + 4 * N * 12);
    s.kv = 768; /* kv = d: no grouped key / value */
    assert_int_equal(formula_block_bytes(&s), 40 * N * 768 + 16 * N * 2048 + 8 * N + 4 * N * 12);
    /* the text is the terms the bytes were counted with (it said 16-bit's 34*N*d + 8*N*I) */
    assert_string_equal(formula_block_text(&s), "40*N*d + 16*N*I + 8*N + 4*N*H");
    s.kv = 256;
    assert_string_equal(formula_block_text(&s), "32*N*d + 8*N*kv + 16*N*I + 8*N + 4*N*H");
    /* compiled 16-bit: the eager terms x 30/36, as counted */
    s.dtype_bytes = 2, s.compile = 1;
    assert_int_equal(formula_block_bytes(&s),
                     (30 * N * 768 + 4 * N * 256 + 8 * N * 2048) * 30 / 36 + 8 * N + 4 * N * 12);
    assert_string_equal(formula_block_text(&s), "(30*N*d + 4*N*kv + 8*N*I)*30/36 + 8*N + 4*N*H");
    s.dtype_bytes = 4, s.compile = 0;
    /* the documents' formula subtracts no position embedding (rotary) */
    doc_formula d;
    formula_documents(&s, &d);
    assert_int_equal(d.params_reported, formula_params_exact(&s));
}

/* 16-bit parameters (pure bf16 training, simulated: llama160m_bf16_b8_a2_fit, gpt2_bf16_b4_fit):
 * parameters, gradients and AdamW's two states at 2 B each, no autocast copy, the blocks'
 * residual stream 16-bit (the RMSNorm's fp32 copy of it, GPT-2's LayerNorms keep it as it is) */
static void test_params16(void **state)
{
    (void)state;
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 8, s.T = 1024, s.A = 2, s.L = 12, s.H = 12, s.d = 768, s.V = 32000, s.dtype_bytes = 2;
    s.gated = 1, s.I = 2048, s.untied = 1, s.params16 = 1;
    uint64_t N = 8192, P = 134105856;
    assert_int_equal(formula_param_bytes(&s), 2);
    assert_int_equal(formula_block_bytes(&s), 24 * N * 768 + 8 * N * 2048 + 8 * N + 4 * N * 12);
    assert_string_equal(formula_block_text(&s), "24*N*d + 8*N*I + 8*N + 4*N*H");
    assert_non_null(strstr(formula_refined_words(&s), "16-bit parameters really keep"));
    cat_breakdown r;
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], 3478421504); /* the simulated run: + 262,340 */
    assert_int_equal(r.bytes[CAT_PARAMETERS], 2 * P);
    assert_int_equal(r.bytes[CAT_GRADIENTS], 2 * P); /* A > 1 */
    assert_int_equal(r.bytes[CAT_OPTIMIZER], 4 * P); /* AdamW assumed: two 16-bit states */
    assert_int_equal(r.bytes[CAT_AUTOCAST], 0);
    s.kv = 256; /* grouped key / value */
    assert_string_equal(formula_block_text(&s), "20*N*d + 4*N*kv + 8*N*I + 8*N + 4*N*H");
    s.kv = 0;
    s.checkpointing = 1; /* the blocks' inputs are 16-bit (a block recomputed later) */
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], 12 * 2 * N * 768 + 8 * N * 768 + 4 * N);
    /* Hugging Face GPT-2 at B=4: 56*N*d a block, the final LayerNorm's 16-bit input and output */
    memset(&s, 0, sizeof s);
    s.B = 4, s.T = 1024, s.A = 1, s.L = 12, s.H = 12, s.d = 768, s.V = 50257, s.dtype_bytes = 2;
    s.bias = 1, s.hf_gpt2 = 1, s.params16 = 1;
    N = 4096;
    assert_int_equal(formula_block_bytes(&s), 56 * N * 768 + 16 * N + 4 * N * 12);
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], 2129690624); /* the run: + its KV cache + 8388 */
    s.hf_gpt2 = 0; /* a GPT-2 block of its own: 16-bit LayerNorm inputs */
    assert_int_equal(formula_block_bytes(&s), 32 * N * 768 + 16 * N + 4 * N * 12);
    s.params16 = 0;
    assert_int_equal(formula_block_bytes(&s), 36 * N * 768 + 16 * N + 4 * N * 12);
    assert_non_null(strstr(formula_refined_words(&s), "autocast"));
    s.dtype_bytes = 4;
    assert_non_null(strstr(formula_refined_words(&s), "float32"));
}

/* BERT-base at B=16, T=512 (bert_b16_fit on the H100, its simulation with dropout 0 and 0.1):
 * 40*N*d + 16*N + 4*N*H a block, 14*N*d + 16*N outside (the embeddings' LayerNorm, the MLM
 * head), dropout's masks 2*N*d a block and N*d outside, the masked-LM loss 10*N*V */
static void test_bert(void **state)
{
    (void)state;
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 16, s.T = 512, s.A = 1, s.L = 12, s.H = 12, s.d = 768, s.V = 30522, s.dtype_bytes = 2;
    s.bias = 1, s.bert = 1;
    uint64_t N = 8192;
    assert_true(formula_bert_block(&s));
    assert_int_equal(formula_block_bytes(&s), 40 * N * 768 + 16 * N + 4 * N * 12);
    assert_string_equal(formula_block_text(&s), "40*N*d + 16*N + 4*N*H");
    cat_breakdown r;
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], 3114401792); /* simulated, dropout 0: + 196 B */
    assert_int_equal(r.bytes[CAT_LOGITS], 10 * N * 30522);
    s.dropout = 0.1;
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], 3271688192); /* simulated 0.1: + 196, H100 + 4292 */
    s.compile = 1; /* not measured: GPT-2's block and loss stand in */
    assert_false(formula_bert_block(&s));
    assert_int_equal(formula_logits_per_nv(&s), 8);
    /* from its config (predict): BertForMaskedLM's own count, as transformers gives it (the
     * program's, on the H100 and simulated), with its 512 positions and 2 token types; the
     * autocast copies take the MLM head's d x d transform too; nanoGPT's count minus the
     * position table */
    uint64_t gpt = formula_params_exact(&s);
    s.pos_rows = 512, s.type_rows = 2;
    assert_int_equal(formula_params_exact(&s), 109514298);
    assert_int_equal(gpt,
                     12 * 768ull * 768 * 12 + 13 * 768 * 12 + 30522 * 768 + 512 * 768 + 2 * 768);
    assert_int_equal(formula_params_matmul(&s), 12 * 12 * 768ull * 768 + 768 * 768 + 30522 * 768);
    doc_formula d;
    formula_documents(&s, &d);
    assert_int_equal(d.params_reported, 109514298 - 512 * 768);
    s.T = 128; /* the sequence is not the table */
    assert_int_equal(formula_params_exact(&s), 109514298);
}

static void test_shape_from_config(void **state)
{
    (void)state;
    nano_config c;
    config_init(&c);
    gpt_shape s;
    formula_shape_from_config(&c, &s);
    assert_true(s.B == 12 && s.T == 1024 && s.A == 40 && s.L == 12 && s.H == 12 && s.d == 768);
    assert_true(s.V == 50304 && s.compile == 1 && s.dtype_bytes == 2 && s.bias == 0);
}

/* the end of the backward: 4P + 4P + 8P + a tied head's V x d gradient + the token batch; an
 * untied head adds no such gradient, a model that trains part of its weights neither (its
 * gradients that part), and at a small B*T it outweighs the start of the backward */
static void test_backward_end(void **state)
{
    (void)state;
    gpt_shape s = example2();
    s.B = 1, s.T = 64, s.A = 1;
    uint64_t P = formula_params_exact(&s);
    cat_breakdown end, start;
    formula_backward_end(&s, &end);
    formula_refined(&s, &start);
    assert_int_equal(end.bytes[CAT_PARAMETERS], 4 * P);
    assert_int_equal(end.bytes[CAT_GRADIENTS], 4 * P);
    assert_int_equal(end.bytes[CAT_OPTIMIZER], 8 * P);
    assert_int_equal(end.bytes[CAT_BACKWARD], 4 * s.V * s.d);
    assert_int_equal(end.bytes[CAT_INPUTS], 16 * 64);
    assert_int_equal(end.bytes[CAT_ACTIVATIONS] + end.bytes[CAT_LOGITS], 0);
    assert_true(cat_breakdown_total(&end) > cat_breakdown_total(&start));
    s.untied = 1;
    formula_backward_end(&s, &end);
    assert_int_equal(end.bytes[CAT_BACKWARD], 0);
    s.untied = 0, s.train_frac = 0.5;
    formula_backward_end(&s, &end);
    assert_int_equal(end.bytes[CAT_BACKWARD], 0);
    assert_int_equal(end.bytes[CAT_GRADIENTS], 2 * P);
    s.generic = 1;
    formula_backward_end(&s, &end);
    assert_int_equal(cat_breakdown_total(&end), 0);
}

/* no output layer over the vocabulary (an encoder classifier, XLM-R's shape): no logits, no
 * 16-bit copy of the V x d table (looked up, never cast), the table still a weight; its largest
 * tensor is no logits; a what-if's block keeps it */
static void test_no_head(void **state)
{
    (void)state;
    gpt_shape s = example2();
    s.A = 1, s.B = 64, s.T = 256, s.V = 250002, s.no_head = 1;
    uint64_t L = 12, d = 768;
    cat_breakdown b;
    formula_refined(&s, &b);
    assert_int_equal(b.bytes[CAT_LOGITS], 0);
    assert_int_equal(b.bytes[CAT_AUTOCAST], 2 * 12 * L * d * d);
    assert_int_equal(formula_params_matmul(&s), 12 * L * d * d);
    assert_int_equal(b.bytes[CAT_PARAMETERS], 4 * formula_params_exact(&s));
    assert_true(formula_params_exact(&s) > s.V * d);
    const char *what = NULL;
    assert_int_equal(formula_largest_tensor(&s, &what), 4 * s.V * d);
    assert_non_null(strstr(what, "token embedding weight"));
    s.checkpointing = 1;
    formula_refined(&s, &b);
    assert_int_equal(b.bytes[CAT_AUTOCAST], 2 * 12 * d * d);
    gpt_shape w = example2();
    formula_take_block(&w, &s);
    assert_int_equal(w.no_head, 1);
    s.no_head = 0, s.checkpointing = 0;
    formula_refined(&s, &b);
    assert_int_equal(b.bytes[CAT_LOGITS], 12ull * 64 * 256 * 250002);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_documents_example1), cmocka_unit_test(test_exact_params),
        cmocka_unit_test(test_refined_peak),       cmocka_unit_test(test_variants),
        cmocka_unit_test(test_shape_from_config),  cmocka_unit_test(test_gated),
        cmocka_unit_test(test_params16),           cmocka_unit_test(test_bert),
        cmocka_unit_test(test_backward_end),       cmocka_unit_test(test_no_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
