/* test_formula_train.c — what trains, counted from the shape (analyzer/model/formula/
 * formula_train.c) and the refined formula with it (formula.c): LoRA's adapters on a gated block
 * against the H100's Llama 400M LoRA run (examples/traces/h100-torch2.11-beyond/
 * llama400m_lora8_b4_fit: the program's own counts of its weights, gradients and AdamW state,
 * the trace's activations), Adafactor's factored state against its GPT-2 run (1,286,468 B) and
 * against the tensors of each model listed one by one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "formula.h"
#include "formula_train.h"

/* Llama 400M as examples/hf/hf_train.py builds it (L 24, d 1024, 16 heads, I 2816, V 32000, an
 * untied head), B=4, T=1024, bf16 autocast over fp32 weights, eager, one micro-step */
static gpt_shape llama400m(void)
{
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.B = 4, s.T = 1024, s.A = 1, s.L = 24, s.H = 16, s.d = 1024, s.V = 32000, s.dtype_bytes = 2;
    s.gated = 1, s.I = 2816, s.untied = 1;
    return s;
}

static void test_lora_llama(void **state)
{
    (void)state;
    gpt_shape s = llama400m();
    uint64_t P = formula_params_exact(&s);
    assert_int_equal(P, 373867520);
    assert_int_equal(formula_lora_params(&s), 0); /* no rank: no adapters */
    s.lora_rank = 8, s.lora_targets = LORA_Q | LORA_K | LORA_V | LORA_O;
    /* 8 x (1024 + 1024) a projection, four a block, 24 blocks: the run's 6,291,456 B of fp32
     * gradients */
    assert_int_equal(formula_lora_params(&s), 1572864);
    assert_true(formula_trained(&s) == 1572864.0);
    assert_int_equal(formula_trained_bytes(&s), 4);
    assert_true(formula_train_frac(&s) > 0.00418 && formula_train_frac(&s) < 0.00419);
    cat_breakdown r;
    formula_refined(&s, &r);
    /* the program's counts: parameters 1,501,761,536 B, AdamW's state 12,583,680 (its 768 B
     * more: a step counter per adapter tensor) */
    assert_int_equal(r.bytes[CAT_PARAMETERS], 1501761536);
    assert_int_equal(r.bytes[CAT_OPTIMIZER], 12582912);
    assert_int_equal(r.bytes[CAT_GRADIENTS], 0);
    /* the frozen block and the adapters' input copies and B*T*R rows, 24 blocks: the trace's
     * 4,090,790,276 B of activations at its tensors' peak, 0.01 % above these */
    uint64_t N = 4096, d = 1024;
    assert_true(formula_lora_block(&s));
    assert_int_equal(formula_lora_block_bytes(&s), 12 * N * d + 4 * N * d + 6 * N * 2816 + 8 * N +
                                                       4 * N * 16 + 4 * (2 * N * d + 2 * N * 8));
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], 4090232832);
    /* with a second micro-step the adapters' fp32 gradients are kept */
    s.A = 2;
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_GRADIENTS], 6291456);
    /* the end of the backward: the adapters' gradients, no V x d one for a frozen tied head */
    s.untied = 0;
    formula_backward_end(&s, &r);
    assert_int_equal(r.bytes[CAT_GRADIENTS], 6291456);
    assert_int_equal(r.bytes[CAT_BACKWARD], 0);
    /* grouped key / value (256 wide): k's and v's adapters are R x (d + kv) */
    s.kv = 256;
    assert_int_equal(formula_lora_params(&s), 24 * 8 * (2 * 2048 + 2 * (1024 + 256)));
    /* every projection (q, k, v, o, gate, up, down) */
    s.kv = 0, s.lora_targets = LORA_ALL;
    assert_int_equal(formula_lora_params(&s), 24 * 8 * (4 * 2048 + 3 * (1024 + 2816)));
}

/* 16-bit weights, float32, compiled or checkpointed: the adapters stay fp32 (peft), their state
 * AdamW's 8 B; the activations the full fine-tuning's block (the LoRA block is measured in eager
 * 16-bit autocast only) */
static void test_lora_unmeasured(void **state)
{
    (void)state;
    gpt_shape s = llama400m();
    s.lora_rank = 8, s.lora_targets = LORA_Q | LORA_V;
    assert_int_equal(formula_lora_params(&s), 786432);
    gpt_shape full = llama400m();
    cat_breakdown r, f;
    s.params16 = full.params16 = 1;
    formula_refined(&s, &r);
    formula_refined(&full, &f);
    assert_false(formula_lora_block(&s));
    assert_int_equal(r.bytes[CAT_PARAMETERS], 2 * 373867520ull + 4 * 786432);
    assert_int_equal(r.bytes[CAT_OPTIMIZER], 8 * 786432);
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], f.bytes[CAT_ACTIVATIONS]);
    s.params16 = full.params16 = 0;
    s.checkpointing = full.checkpointing = 1;
    formula_refined(&s, &r);
    formula_refined(&full, &f);
    assert_false(formula_lora_block(&s));
    assert_int_equal(r.bytes[CAT_ACTIVATIONS], f.bytes[CAT_ACTIVATIONS]);
    s.checkpointing = 0, s.compile = 1;
    assert_false(formula_lora_block(&s));
    s.compile = 0, s.dtype_bytes = 4;
    assert_false(formula_lora_block(&s));
}

/* a GPT-2 block's q, k and v are one projection (c_attn, d to 3d); BERT's are three */
static void test_lora_dims(void **state)
{
    (void)state;
    gpt_shape s;
    memset(&s, 0, sizeof s);
    s.L = 12, s.d = 768, s.H = 12, s.V = 50257, s.T = 1024, s.bias = 1;
    uint64_t in, out;
    assert_false(formula_lora_dims(&s, LORA_Q, &in, &out));
    assert_false(formula_lora_dims(&s, LORA_GATE, &in, &out));
    assert_true(formula_lora_dims(&s, LORA_QKV, &in, &out));
    assert_int_equal(in, 768);
    assert_int_equal(out, 2304);
    assert_true(formula_lora_dims(&s, LORA_DOWN, &in, &out));
    assert_int_equal(in, 3072);
    assert_int_equal(out, 768);
    s.lora_rank = 8, s.lora_targets = LORA_QKV;
    assert_int_equal(formula_lora_params(&s), 12 * 8 * (768 + 2304));
    assert_int_equal(formula_lora_factored(&s), 12 * (768 + 2304 + 16));
    s.bert = 1, s.pos_rows = 512, s.type_rows = 2;
    assert_true(formula_lora_dims(&s, LORA_K, &in, &out));
    assert_false(formula_lora_dims(&s, LORA_QKV, &in, &out));
}

/* Adafactor: a row and a column vector per matrix, vectors whole; counted tensor by tensor for
 * each model (its parameters formula_params_exact's) */
static void test_factored(void **state)
{
    (void)state;
    gpt_shape s;
    memset(&s, 0, sizeof s);
    /* transformers' GPT-2 124M: the H100 run's 1,286,468 B of state, fp32 */
    s.B = 4, s.T = 1024, s.A = 1, s.L = 12, s.H = 12, s.d = 768, s.V = 50257, s.bias = 1;
    s.dtype_bytes = 2, s.hf_gpt2 = 1;
    assert_int_equal(formula_factored_elems(&s), 321617);
    s.opt_factored = 1;
    cat_breakdown r;
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_OPTIMIZER], 1286468);
    s.params16 = 1; /* in the gradients' dtype */
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_OPTIMIZER], 2 * 321617);
    /* bert-base-uncased's masked-LM model (109,514,298 parameters) */
    memset(&s, 0, sizeof s);
    s.L = 12, s.d = 768, s.H = 12, s.V = 30522, s.T = 512, s.bias = 1;
    s.bert = 1, s.pos_rows = 512, s.type_rows = 2;
    assert_int_equal(formula_params_exact(&s), 109514298);
    assert_int_equal(formula_factored_elems(&s), 354934);
    /* Qwen2.5-0.5B: tied, biases on q, k and v, 2 key / value heads of 64 */
    memset(&s, 0, sizeof s);
    s.L = 24, s.d = 896, s.H = 14, s.V = 151936, s.gated = 1, s.I = 4864, s.kv = 128;
    s.attn_bias = 3;
    assert_int_equal(formula_params_exact(&s), 494032768);
    assert_int_equal(formula_factored_elems(&s), 774272);
    /* Llama 400M, untied; with LoRA the adapters' matrices alone */
    s = llama400m();
    assert_int_equal(formula_factored_elems(&s), 589312);
    s.lora_rank = 8, s.lora_targets = LORA_Q | LORA_V, s.opt_factored = 1;
    assert_int_equal(formula_lora_factored(&s), 24 * 2 * (1024 + 1024 + 16));
    formula_refined(&s, &r);
    assert_int_equal(r.bytes[CAT_OPTIMIZER], 4 * 24 * 2 * (1024 + 1024 + 16));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lora_llama),
        cmocka_unit_test(test_lora_unmeasured),
        cmocka_unit_test(test_lora_dims),
        cmocka_unit_test(test_factored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
