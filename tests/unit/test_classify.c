/* test_classify.c — every classification rule, with the negative cases that must not match
 * it (a temporary is not an activation, an optimizer scratch is not state, ...). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "casts.h"
#include "categories.h"
#include "classify.h"
#include "phases.h"
#include "vramtrace/trace_format.h"

/* tensor: a tensor-mode allocation; ba / bf = backward passes begun before its alloc / free
 * (phase_free = PHASE_COUNT: alive at the end). */
static classify_input tensor(int phase_alloc, int phase_free, uint32_t ba, uint32_t bf)
{
    classify_input in = {VT_SPACE_DEVICE, 1, 1, 1, phase_alloc, phase_free, 0, 0, 0, 0};
    in.freed = phase_free != PHASE_COUNT;
    in.bwd_alloc = ba;
    in.bwd_free = in.freed ? bf : ba;
    in.param_sized = phase_alloc == PHASE_BACKWARD; /* gradients: a parameter's size */
    return in;
}

static category cat_of(classify_input in)
{
    int rule;
    category c = classify(&in, &rule);
    assert_true(rule >= 0 && rule <= classify_rule_count());
    return c;
}

static void test_fixed_spaces(void **st)
{
    (void)st;
    classify_input in = tensor(PHASE_FORWARD, PHASE_COUNT, 0, 0);
    in.space = VT_SPACE_CONTEXT;
    assert_int_equal(cat_of(in), CAT_CONTEXT);
    in.space = VT_SPACE_MODULE;
    assert_int_equal(cat_of(in), CAT_KERNEL_CODE);
    in.space = VT_SPACE_LIBRARY;
    assert_int_equal(cat_of(in), CAT_KERNEL_CODE);
    in.space = VT_SPACE_MANAGED;
    assert_int_equal(cat_of(in), CAT_EXTERNAL);
    in = tensor(PHASE_FORWARD, PHASE_COUNT, 0, 0);
    in.layer = 2;
    in.tensor_api = 0; /* a driver-level cuMemAlloc: not PyTorch's allocator */
    assert_int_equal(cat_of(in), CAT_EXTERNAL);
    in.tensor_api = 1; /* cuMemAllocAsync from the async backend is PyTorch's */
    assert_int_equal(cat_of(in), CAT_ACTIVATIONS);
}

static void test_parameters_inputs(void **st)
{
    (void)st;
    assert_int_equal(cat_of(tensor(PHASE_INIT, PHASE_COUNT, 0, 0)), CAT_PARAMETERS);
    /* negative: made before the first forward and freed before training: not a parameter */
    assert_int_equal(cat_of(tensor(PHASE_INIT, PHASE_INIT, 0, 0)), CAT_TEMPORARIES);
    /* made before the first forward and freed after its backward, before any optimizer step (a
     * U-Net's first noisy images, not marked an input): not a parameter; one freed after a step
     * (iter_free 1) is */
    classify_input n = tensor(PHASE_INIT, PHASE_OTHER, 0, 1);
    assert_int_not_equal(cat_of(n), CAT_PARAMETERS);
    n.iter_free = 1;
    assert_int_equal(cat_of(n), CAT_PARAMETERS);
    assert_int_equal(cat_of(tensor(PHASE_DATA, PHASE_FORWARD, 0, 0)), CAT_INPUTS);
    classify_input in = tensor(PHASE_FORWARD, PHASE_BACKWARD, 0, 1);
    in.input = 1; /* made by the program's own loop (randint / .to(device)), kept for backward */
    assert_int_equal(cat_of(in), CAT_INPUTS);
}

static void test_optimizer(void **st)
{
    (void)st;
    /* AdamW state: created at step 1 and never freed, or kept across a later backward */
    assert_int_equal(cat_of(tensor(PHASE_OPTIMIZER, PHASE_COUNT, 1, 0)), CAT_OPTIMIZER);
    assert_int_equal(cat_of(tensor(PHASE_OPTIMIZER, PHASE_OPTIMIZER, 1, 3)), CAT_OPTIMIZER);
    /* negative: scratch allocated and freed within the same step is a temporary */
    assert_int_equal(cat_of(tensor(PHASE_OPTIMIZER, PHASE_OPTIMIZER, 2, 2)), CAT_TEMPORARIES);
}

/* a weight-sized copy from the host after a backward, freed once the step after it began, before
 * the next backward: the optimizer's state brought back for the step where the run's state had
 * left the device between steps; where it never had (Adam's state stays on the device), it is no
 * state (an Opacus step's noise, randn(p.size()).to(device), freed after the gradient it replaced
 * had been 1 MiB of "state") */
static void test_state_back(void **st)
{
    (void)st;
    classify_input in = tensor(PHASE_FORWARD, PHASE_OPTIMIZER, 1, 1);
    in.param_sized = 1, in.input = 1, in.iter_alloc = 1, in.iter_free = 2, in.outlived_step = 1;
    in.state_left = 1;
    int rule;
    assert_int_equal(classify(&in, &rule), CAT_OPTIMIZER);
    assert_string_equal(classify_rule_name(rule), "state_back");
    in.state_left = 0;
    assert_int_not_equal(classify(&in, &rule), CAT_OPTIMIZER);
    in.state_left = 1, in.iter_free = 1; /* (freed before the step began: no state) */
    assert_int_not_equal(classify(&in, &rule), CAT_OPTIMIZER);
}

static void test_backward(void **st)
{
    (void)st;
    /* gradients outlive backward (freed by zero_grad in the optimizer phase, or alive) */
    assert_int_equal(cat_of(tensor(PHASE_BACKWARD, PHASE_OPTIMIZER, 1, 1)), CAT_GRADIENTS);
    assert_int_equal(cat_of(tensor(PHASE_BACKWARD, PHASE_COUNT, 1, 1)), CAT_GRADIENTS);
    /* accumulated over micro-steps: freed in a later backward */
    assert_int_equal(cat_of(tensor(PHASE_BACKWARD, PHASE_BACKWARD, 1, 2)), CAT_GRADIENTS);
    /* negative: backward scratch freed within backward */
    assert_int_equal(cat_of(tensor(PHASE_BACKWARD, PHASE_BACKWARD, 1, 1)), CAT_BACKWARD);
    /* negative: kept past backward but no parameter's size: not a gradient */
    classify_input in = tensor(PHASE_BACKWARD, PHASE_OPTIMIZER, 1, 1);
    in.param_sized = 0;
    assert_int_equal(cat_of(in), CAT_BACKWARD);
    /* the loss's backward: B*T*V sized */
    in = tensor(PHASE_BACKWARD, PHASE_BACKWARD, 1, 1);
    in.param_sized = 0;
    in.vocab_sized = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    in.vocab_sized = 0;
    in.attention = 1;
    assert_int_equal(cat_of(in), CAT_ATTENTION);
    /* cuBLAS's workspace made on the autograd thread is no gradient */
    in = tensor(PHASE_BACKWARD, PHASE_COUNT, 1, 1);
    in.workspace = 1;
    assert_int_equal(cat_of(in), CAT_WORKSPACE);
}

static void test_forward(void **st)
{
    (void)st;
    /* saved for backward: alive when a backward began */
    assert_int_equal(cat_of(tensor(PHASE_FORWARD, PHASE_BACKWARD, 0, 1)), CAT_ACTIVATIONS);
    /* negative: a temporary freed within forward is not an activation */
    assert_int_equal(cat_of(tensor(PHASE_FORWARD, PHASE_FORWARD, 0, 0)), CAT_TEMPORARIES);
    /* an out-of-memory error in the forward freed it: it was kept for a backward never reached */
    classify_input in = tensor(PHASE_FORWARD, PHASE_FORWARD, 0, 0);
    in.cut_by_oom = 1;
    assert_int_equal(cat_of(in), CAT_ACTIVATIONS);
    in = tensor(PHASE_FORWARD, PHASE_FORWARD, 0, 0);
    in.attention = 1;
    assert_int_equal(cat_of(in), CAT_ATTENTION);
    in = tensor(PHASE_FORWARD, PHASE_BACKWARD, 0, 1);
    in.loss_site = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    in = tensor(PHASE_FORWARD, PHASE_BACKWARD, 0, 1);
    in.vocab_sized = 1; /* compiled: no loss frame, a B*T*V size */
    assert_int_equal(cat_of(in), CAT_LOGITS);
    /* the same in a first forward that kept nothing for a backward (frozen weights: their
     * copies freed after use): in use, a temporary, freed by the OOM or alive at it */
    in = tensor(PHASE_FORWARD, PHASE_FORWARD, 0, 0);
    in.cut_by_oom = in.frozen_oom = 1;
    assert_int_equal(cat_of(in), CAT_TEMPORARIES);
    in = tensor(PHASE_FORWARD, PHASE_COUNT, 0, 0);
    in.freed = 0, in.frozen_oom = 1;
    assert_int_equal(cat_of(in), CAT_TEMPORARIES);
    in.loss_site = 1; /* the logits stay the logits */
    assert_int_equal(cat_of(in), CAT_LOGITS);
    /* negative: made after a backward began (not the first forward), it was saved */
    in = tensor(PHASE_FORWARD, PHASE_FORWARD, 0, 0);
    in.cut_by_oom = in.frozen_oom = 1, in.bwd_alloc = in.bwd_free = 1;
    assert_int_equal(cat_of(in), CAT_ACTIVATIONS);
    in = tensor(PHASE_EVAL, PHASE_EVAL, 0, 0);
    assert_int_equal(cat_of(in), CAT_TEMPORARIES);
    in.loss_site = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    /* made in a no-grad pass, freed after a backward began: what the training read from it (a
     * PPO rollout's sequences, which the updates slice) */
    assert_int_equal(cat_of(tensor(PHASE_EVAL, PHASE_OPTIMIZER, 0, 1)), CAT_INPUTS);
    /* negative: alive at the end, or at an out-of-memory error, it may be a spike still */
    assert_int_equal(cat_of(tensor(PHASE_EVAL, PHASE_COUNT, 0, 0)), CAT_TEMPORARIES);
    in = tensor(PHASE_EVAL, PHASE_EVAL, 1, 1);
    in.cut_by_oom = 1;
    assert_int_equal(cat_of(in), CAT_TEMPORARIES);
    assert_int_equal(cat_of(tensor(PHASE_COMPILE, PHASE_COMPILE, 0, 0)), CAT_TEMPORARIES);
}

static void test_autocast(void **st)
{
    (void)st;
    /* a 16-bit copy of a weight made in forward, kept for backward */
    classify_input in = tensor(PHASE_FORWARD, PHASE_BACKWARD, 0, 1);
    in.weight_copy = 1;
    assert_int_equal(cat_of(in), CAT_AUTOCAST);
    /* negative: a conversion of an activation (not a weight's size) stays an activation */
    in.weight_copy = 0;
    assert_int_equal(cat_of(in), CAT_ACTIVATIONS);
    /* negative: the same size made in backward is not an autocast copy */
    in = tensor(PHASE_BACKWARD, PHASE_BACKWARD, 1, 1);
    in.param_sized = 0;
    in.weight_copy = 1;
    assert_int_equal(cat_of(in), CAT_BACKWARD);
    /* negative: a weight copy's size cast under an attention op (its key) is its input, kept */
    in = tensor(PHASE_FORWARD, PHASE_BACKWARD, 0, 1);
    in.weight_copy = 1, in.attention = 1;
    assert_int_equal(cat_of(in), CAT_ACTIVATIONS);
    /* an evaluation's or a rollout's forward under autocast copies the weights too */
    in = tensor(PHASE_EVAL, PHASE_EVAL, 0, 0);
    in.weight_copy = 1;
    assert_int_equal(cat_of(in), CAT_AUTOCAST);
}

/* casts.h: the forward's casts in the order autocast makes them; 1 = the op's input */
static void test_casts_input(void **st)
{
    (void)st;
    const uint64_t M = 1 << 20;
    uint64_t w = 0;
    /* Llama at B·T = d: q_proj's weight copy (d x d), its input (B·T x d, the same size) */
    assert_false(casts_input(&w, 1, 2 * M));
    assert_true(casts_input(&w, 1, 2 * M));
    /* k_proj under grouped key / value: a smaller copy (d x kv), then the input */
    assert_false(casts_input(&w, 1, M / 2));
    assert_true(casts_input(&w, 1, 2 * M));
    /* a weight copy after an input is a copy (the input is no weight's) */
    assert_false(casts_input(&w, 1, 2 * M));
    /* something else between: the next cast is a copy again */
    assert_false(casts_input(&w, 0, 8 * M));
    assert_false(casts_input(&w, 1, 2 * M));
    /* linear's order: bias, weight, input; addmm's: weight, input, bias: a bias is no input */
    w = 0;
    assert_false(casts_input(&w, 1, 6 << 10));
    assert_false(casts_input(&w, 1, 6 * M));
    assert_true(casts_input(&w, 1, 6 * M));
    assert_false(casts_input(&w, 1, 6 * M));
    assert_false(casts_input(&w, 1, 6 << 10));
    /* a large head's bias (V x 2 B) before its weight (V x d x 2 B): the weight is a copy */
    w = 0;
    assert_false(casts_input(&w, 1, 100 << 10));
    assert_false(casts_input(&w, 1, 250 * M));
}

/* own: the program's own dtype cast in the loop (phases.c's stack_facts.cast: no loss, attention
 * nor input), made in the forward after bwd backward passes, freed after bf */
static classify_input own(int phase_free, uint32_t ba, uint32_t bf)
{
    classify_input in = tensor(PHASE_FORWARD, phase_free, ba, bf);
    in.own_cast = 1;
    return in;
}

static void test_own_casts(void **st)
{
    (void)st;
    /* fp32 master gradients: a weight's size, cast after a backward, freed by zero_grad in the
     * step that followed (counted from the first gradient freed, among the casts: or after it
     * began), before the next backward */
    classify_input in = own(PHASE_OPTIMIZER, 1, 1);
    in.param_sized = 1;
    in.iter_alloc = in.iter_free = 1;
    assert_int_equal(cat_of(in), CAT_GRADIENTS);
    in.phase_free = PHASE_FORWARD, in.iter_free = 2;
    assert_int_equal(cat_of(in), CAT_GRADIENTS);
    /* negative: alive through the next backward (a batch's size by chance), not a weight's size,
     * made before any backward, cut by an out-of-memory error */
    in.bwd_free = 2;
    assert_int_equal(cat_of(in), CAT_INPUTS);
    in = own(PHASE_OPTIMIZER, 1, 1);
    in.iter_free = 1;
    assert_int_equal(cat_of(in), CAT_INPUTS);
    in.param_sized = 1, in.bwd_alloc = in.bwd_free = 0;
    assert_int_equal(cat_of(in), CAT_INPUTS);
    in.bwd_alloc = in.bwd_free = 1, in.cut_by_oom = 1;
    assert_int_equal(cat_of(in), CAT_INPUTS);
    /* the logits' fp32 copy for the loss: B*T*V, whatever its lifetime */
    in = own(PHASE_FORWARD, 0, 0);
    in.vocab_sized = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    /* freed before a backward or a step followed: a temporary */
    in.vocab_sized = 0;
    assert_int_equal(cat_of(in), CAT_TEMPORARIES);
    /* a batch's cast before the forward, alive through its backward (or to the end) */
    assert_int_equal(cat_of(own(PHASE_FORWARD, 1, 2)), CAT_INPUTS);
    assert_int_equal(cat_of(own(PHASE_COUNT, 1, 1)), CAT_INPUTS);
    /* the forward's output cast for the loss (its line first ran after the first forward
     * began), saved for the loss's backward: the loss's, whatever its size; freed before the
     * backward: a temporary as any cast */
    in = own(PHASE_BACKWARD, 1, 2);
    in.cast_output = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    in = own(PHASE_COUNT, 1, 1); /* (alive at the end) */
    in.cast_output = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    in = own(PHASE_FORWARD, 1, 1);
    in.cast_output = 1;
    assert_int_equal(cat_of(in), CAT_TEMPORARIES);
    /* master gradients kept between steps (zero_grad(set_to_none=False)): a weight's size, cast
     * after the first backward (its line first ran before the first step), alive to the end or
     * freed after a later backward (recast); a batch's cast of a weight's size is none (its line
     * ran before the forward); not a weight's size: a batch's */
    in = own(PHASE_COUNT, 1, 1);
    in.cast_grads = in.param_sized = 1;
    assert_int_equal(cat_of(in), CAT_GRADIENTS);
    in = own(PHASE_FORWARD, 1, 2);
    in.cast_grads = in.param_sized = 1;
    assert_int_equal(cat_of(in), CAT_GRADIENTS);
    in.cast_grads = 0;
    assert_int_equal(cat_of(in), CAT_INPUTS);
    in.cast_grads = 1, in.param_sized = 0;
    assert_int_equal(cat_of(in), CAT_INPUTS);
    /* made before the first forward: init's (master weights kept are parameters); the batch's
     * cast is input already there (the replay: a batch went onto the device before it) */
    in = own(PHASE_COUNT, 0, 0);
    in.phase_alloc = PHASE_INIT;
    assert_int_equal(cat_of(in), CAT_PARAMETERS);
    in.input = 1;
    assert_int_equal(cat_of(in), CAT_INPUTS);
    /* negative: a loss's own allocation (no attention) and an attention kernel's (no loss) */
    in = tensor(PHASE_FORWARD, PHASE_FORWARD, 0, 0);
    in.loss_site = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    in.loss_site = 0, in.attention = 1;
    assert_int_equal(cat_of(in), CAT_ATTENTION);
    /* segment mode: such a cast's segment is the forward's, not the loss's */
    in = own(PHASE_FORWARD, 0, 0);
    in.tensor_api = in.tensor_mode = 0;
    assert_int_equal(cat_of(in), CAT_ACTIVATIONS);
}

static void test_segment_mode(void **st)
{
    (void)st;
    /* a cached segment stays alive to the end: it is the phase that forced it, not a leak */
    classify_input in = tensor(PHASE_FORWARD, PHASE_COUNT, 0, 0);
    in.tensor_mode = 0;
    in.tensor_api = 0;
    assert_int_equal(cat_of(in), CAT_ACTIVATIONS);
    /* segment mode cannot tell gradients from backward scratch: never "gradients" */
    in.phase_alloc = PHASE_BACKWARD;
    assert_int_equal(cat_of(in), CAT_BACKWARD);
    in.phase_alloc = PHASE_FORWARD;
    in.loss_site = 1;
    assert_int_equal(cat_of(in), CAT_LOGITS);
    in.phase_alloc = PHASE_INIT;
    assert_int_equal(cat_of(in), CAT_PARAMETERS);
}

static void test_unknown_and_table(void **st)
{
    (void)st;
    int rule = -2;
    classify_input in = tensor(PHASE_OTHER, PHASE_COUNT, 0, 0);
    in.tensor_api = 0; /* a runtime allocation of no phase outside PyTorch's tensors */
    assert_int_equal(classify(&in, &rule), CAT_UNKNOWN);
    assert_int_equal(rule, classify_rule_count());
    assert_string_equal(classify_rule_name(rule), "unknown");
    for (int i = 0; i < classify_rule_count(); i++) {
        assert_true(classify_rule_reason(i)[0] != '\0');
        assert_string_not_equal(classify_rule_name(i), "unknown");
    }
}

/* the sums of a breakdown whose bytes pass 2^64 (a hostile trace) are held there, never wrapped
 * to a small number a report or a prediction would take for the run's */
static void test_breakdown_sums_held(void **st)
{
    (void)st;
    cat_breakdown b = {0};
    b.bytes[CAT_PARAMETERS] = UINT64_MAX - 10;
    b.bytes[CAT_GRADIENTS] = 100;
    b.bytes[CAT_CACHE] = 5;
    assert_true(category_tensor(CAT_PARAMETERS) && category_tensor(CAT_GRADIENTS));
    assert_false(category_tensor(CAT_CACHE));
    assert_true(cat_breakdown_tensors(&b) == UINT64_MAX);
    assert_true(cat_breakdown_total(&b) == UINT64_MAX);
    b.bytes[CAT_PARAMETERS] = 1000; /* below it: the sums themselves */
    assert_true(cat_breakdown_tensors(&b) == 1100);
    assert_true(cat_breakdown_total(&b) == 1105);
}

/* every_end: the category every end an allocation of key can still have, now, gives (CAT_COUNT:
 * two differ), walked wider than classify_settled walks it: each counter two past its value now,
 * every bit of an end (an OOM's, outliving its step, kept to the end) at both values where the
 * run still allows it; what classify_settled answers must be this. */
static category every_end(uint32_t key, unsigned now)
{
    classify_input in;
    memset(&in, 0, sizeof in);
    in.space = (int)(key & 15), in.layer = (int)(key >> 4 & 3);
    in.tensor_api = key >> 6 & 1, in.phase_alloc = (int)(key >> 8 & 15);
    in.loss_site = key >> 12 & 1, in.workspace = key >> 16 & 1;
    in.attention = key >> 17 & 1, in.input = key >> 18 & 1, in.bwd_alloc = key >> 19 & 1;
    unsigned kind = key >> 24 & 3;
    in.own_cast = kind != 0, in.cast_output = kind == 2, in.cast_grads = kind == 3;
    int sl_fixed = key >> 26 & 1; /* (the run's state_left: 0 may still become 1) */
    uint32_t it0 = (now & CLS_ITER_PASSED) != 0, bw0 = in.bwd_alloc + ((now & CLS_BWD_PASSED) != 0);
    category cat = CAT_COUNT;
    int first = 1;
    for (unsigned v = 0; v < 64; v++) { /* tensor mode, the sizes' bits, alive or freed, state */
        if (sl_fixed && !(v & 32))
            continue;
        in.state_left = (v & 32) != 0;
        int tm = (now & CLS_TM_SET) || (key >> 7 & 1) ? (int)(key >> 7 & 1) : (int)(v & 1);
        in.tensor_mode = tm;
        in.param_sized = key >> 20 & 1 ? (int)(v >> 1 & 1) : (int)(key >> 14 & 1);
        in.weight_copy = key >> 21 & 1 ? (int)(v >> 2 & 1) : (int)(key >> 13 & 1);
        in.vocab_sized = key >> 22 & 1 ? (int)(v >> 3 & 1) : (int)(key >> 15 & 1);
        if (!(v & 16)) { /* alive at the end, when that is an end */
            if (!(key >> 23 & 1))
                continue;
            in.freed = 0, in.phase_free = PHASE_COUNT, in.iter_free = in.bwd_free = 0;
            in.cut_by_oom = in.freed_at_end = in.outlived_step = 0;
            category c = classify(&in, NULL);
            if (!first && c != cat)
                return CAT_COUNT;
            cat = c, first = 0;
            continue;
        }
        in.freed = 1;
        for (int ph = 0; ph < PHASE_COUNT; ph++)
            for (uint32_t it = it0; it <= it0 + 2; it++)
                for (uint32_t bw = bw0; bw <= bw0 + 2; bw++)
                    for (unsigned bits = 0; bits < 8; bits++) {
                        in.phase_free = ph, in.iter_free = it, in.bwd_free = bw;
                        in.cut_by_oom = bits & 1;
                        in.outlived_step = (now & CLS_OUTLIVED) || (bits & 2);
                        in.freed_at_end = !(now & CLS_GRAD_FREED) && (bits & 4);
                        category c = classify(&in, NULL);
                        if (!first && c != cat)
                            return CAT_COUNT;
                        cat = c, first = 0;
                    }
    }
    return cat;
}

/* classify_settled: an allocation is settled exactly when every end it can still have gives one
 * category, that one, for tensors and segments of every phase, role and size, at every state of
 * the run (a walk that skipped an end, or one that stopped short, settles too early or never) */
static void test_settled_is_every_end(void **st)
{
    (void)st;
    classify_memo m = {0};
    unsigned long n = 0, settled = 0;
    /* roles: none, the loss's, an attention kernel's, the program's own cast (a batch's, the
     * forward's output's, the backward's gradients'); sizes: none, a parameter's, a parameter's
     * still to come, logits still to come */
    static const unsigned roles[] = {0, 1u << 12, 1u << 17, 1u << 18, 1u << 24, 2u << 24, 3u << 24},
                          sizes[] = {0, 1u << 14, 1u << 20, 1u << 21 | 1u << 22};
    for (unsigned ph = 0; ph < PHASE_COUNT; ph++)
        for (unsigned ten = 0; ten < 2; ten++)
            for (unsigned tm = 0; tm < 4; tm++) /* (tensor mode; 2: the run's state_left) */
                for (unsigned bwd = 0; bwd < 2; bwd++)
                    for (unsigned end = 0; end < 2; end++)
                        for (size_t ro = 0; ro < sizeof roles / sizeof *roles; ro++)
                            for (size_t sz = 0; sz < sizeof sizes / sizeof *sizes; sz++) {
                                uint32_t key = VT_SPACE_DEVICE | 1u << 4 | ten << 6 |
                                               (tm & 1) << 7 | (tm >> 1) << 26 | ph << 8 |
                                               roles[ro] | sizes[sz] | bwd << 19 | end << 23;
                                for (unsigned now = 0; now < 32; now++) {
                                    category want = every_end(key, now);
                                    category got = classify_settled(key, now, &m);
                                    if (got != want)
                                        fail_msg("key %#x now %#x: settled %d, every end %d", key,
                                                 now, got, want);
                                    settled += want != CAT_COUNT;
                                    n++;
                                }
                            }
    assert_true(settled > 0 && settled < n); /* (some settle, some wait) */
    classify_memo_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_spaces),
        cmocka_unit_test(test_parameters_inputs),
        cmocka_unit_test(test_optimizer),
        cmocka_unit_test(test_state_back),
        cmocka_unit_test(test_backward),
        cmocka_unit_test(test_forward),
        cmocka_unit_test(test_autocast),
        cmocka_unit_test(test_casts_input),
        cmocka_unit_test(test_segment_mode),
        cmocka_unit_test(test_own_casts),
        cmocka_unit_test(test_unknown_and_table),
        cmocka_unit_test(test_breakdown_sums_held),
        cmocka_unit_test(test_settled_is_every_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
