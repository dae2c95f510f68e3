/* test_phases.c — training phases from frames (analyzer/model/facts/phases.c): each phase's signal,
 * their precedence (backward > optimizer > eval > data > compile > forward > init), the loss
 * and dtype-conversion flags, native frames, and the site a report names for a stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "phases.h"

static tables_frame py(const char *file, const char *qualname)
{
    tables_frame f;
    memset(&f, 0, sizeof f);
    f.kind = TABLES_FRAME_PYTHON;
    f.file = file;
    f.function = qualname;
    f.line = 1;
    return f;
}

static tables_frame native(const char *symbol)
{
    tables_frame f;
    memset(&f, 0, sizeof f);
    f.kind = TABLES_FRAME_NATIVE;
    f.function = symbol;
    f.file = "";
    return f;
}

#define PHASE_OF(...)                                                                              \
    ({                                                                                             \
        tables_frame fr_[] = {__VA_ARGS__};                                                        \
        phases_of_stack(fr_, sizeof fr_ / sizeof fr_[0]);                                          \
    })

static void test_each_phase(void **state)
{
    (void)state;
    assert_int_equal(
        PHASE_OF(py("/w/model.py", "Block.forward"), py("/w/train.py", "<module>")).phase,
        PHASE_FORWARD);
    assert_int_equal(PHASE_OF(py("/x/torch/autograd/__init__.py", "backward")).phase,
                     PHASE_BACKWARD);
    assert_int_equal(PHASE_OF(native("torch::autograd::Engine::thread_main()")).phase,
                     PHASE_BACKWARD);
    assert_int_equal(PHASE_OF(py("/x/torch/optim/adamw.py", "AdamW.step")).phase, PHASE_OPTIMIZER);
    assert_int_equal(PHASE_OF(py("/w/train.py", "estimate_loss")).phase, PHASE_EVAL);
    assert_int_equal(PHASE_OF(py("/w/train.py", "get_batch")).phase, PHASE_DATA);
    assert_int_equal(PHASE_OF(py("/x/torch/_dynamo/eval_frame.py", "_fn")).phase, PHASE_COMPILE);
    assert_int_equal(PHASE_OF(py("/x/torch/_inductor/compile_fx.py", "compile_fx")).phase,
                     PHASE_COMPILE);
    assert_int_equal(PHASE_OF(py("/w/model.py", "GPT.__init__")).phase, PHASE_INIT);
    assert_int_equal(PHASE_OF(py("/w/train.py", "<module>")).phase, PHASE_OTHER);
    stack_facts none = phases_of_stack(NULL, 0);
    assert_int_equal(none.phase, PHASE_OTHER);
    assert_int_equal(none.has_python, 0);
}

static void test_precedence(void **state)
{
    (void)state;
    /* a forward recomputed under backward (checkpointing) is backward */
    assert_int_equal(PHASE_OF(py("/w/model.py", "Block.forward"),
                              py("/x/torch/autograd/__init__.py", "backward"))
                         .phase,
                     PHASE_BACKWARD);
    /* the model's forward under estimate_loss is evaluation */
    assert_int_equal(
        PHASE_OF(py("/w/model.py", "GPT.forward"), py("/w/train.py", "estimate_loss")).phase,
        PHASE_EVAL);
    /* forward under torch.compile's frames is compile */
    assert_int_equal(
        PHASE_OF(py("/w/model.py", "GPT.forward"), py("/x/torch/_dynamo/eval_frame.py", "_fn"))
            .phase,
        PHASE_COMPILE);
    /* .to(device) inside forward is forward */
    assert_int_equal(
        PHASE_OF(py("/x/torch/nn/modules/module.py", "Module.to"), py("/w/model.py", "GPT.forward"))
            .phase,
        PHASE_FORWARD);
}

static void test_flags(void **state)
{
    (void)state;
    /* a loss computed in the training loop (outside any forward) counts as forward */
    stack_facts f =
        PHASE_OF(py("/x/torch/nn/functional.py", "cross_entropy"), py("/w/train.py", "<module>"));
    assert_int_equal(f.phase, PHASE_FORWARD);
    assert_int_equal(f.loss, 1);
    assert_int_equal(f.has_python, 1);
    f = PHASE_OF(native("at::native::_to_copy(at::Tensor const&)"),
                 py("/w/model.py", "GPT.forward"));
    assert_int_equal(f.to_copy, 1);
    assert_int_equal(f.loss, 0);
    f = PHASE_OF(native("at::native::log_softmax_cuda(at::Tensor const&)"));
    assert_int_equal(f.loss, 1);
    assert_int_equal(f.has_python, 0);
}

/* the signals that survive torch.compile and loops other than nanoGPT's */
static void test_compiled_and_scaler(void **state)
{
    (void)state;
    /* a compiled graph running inside autograd.Function.apply is the forward, not backward */
    assert_int_equal(PHASE_OF(py("/tmp/torchinductor_root/ab/cab.py", "Runner.call"),
                              py("/x/torch/_inductor/output_code.py", "CompiledFxGraph.__call__"),
                              py("/x/torch/autograd/function.py", "Function.apply"),
                              py("/x/torch/_dynamo/eval_frame.py", "_fn"),
                              py("/w/train.py", "main"))
                         .phase,
                     PHASE_FORWARD);
    assert_int_equal(
        PHASE_OF(py("/x/torch/_tensor.py", "Tensor.backward"), py("/w/train.py", "main")).phase,
        PHASE_BACKWARD);
    /* GradScaler: step / unscale_ are the optimizer step; scale() is the loss */
    assert_int_equal(PHASE_OF(py("/x/torch/amp/grad_scaler.py", "GradScaler.unscale_")).phase,
                     PHASE_OPTIMIZER);
    assert_int_equal(
        PHASE_OF(py("/x/torch/amp/grad_scaler.py", "GradScaler._lazy_init_scale_growth_tracker"),
                 py("/x/torch/amp/grad_scaler.py", "GradScaler.scale"), py("/w/train.py", "main"))
            .phase,
        PHASE_OTHER);
    assert_int_equal(PHASE_OF(py("/x/torch/nn/utils/clip_grad.py", "_get_total_norm")).phase,
                     PHASE_OPTIMIZER);
    /* cuBLAS's workspace and fused attention kernels are flagged */
    stack_facts f =
        PHASE_OF(native("at::cuda::getCurrentCUDABlasHandle()"), native("at::_ops::mm::call"));
    assert_int_equal(f.workspace, 1);
    assert_int_equal(f.attention, 0);
    f = PHASE_OF(native("at::_ops::_scaled_dot_product_efficient_attention::call"));
    assert_int_equal(f.attention, 1);
    /* a batch the program makes itself (torch.randint(..., device="cuda") in its loop) */
    f = PHASE_OF(native("at::_ops::randint_low::call"), py("/w/hf_train.py", "main"));
    assert_int_equal(f.input, 1);
    /* negative: a dtype conversion inside a module (autocast) is no input */
    f = PHASE_OF(native("at::_ops::_to_copy::call"),
                 py("/x/torch/nn/modules/linear.py", "Linear.forward"),
                 py("/w/hf_train.py", "main"));
    assert_int_equal(f.input, 0);
}

static void test_site(void **state)
{
    (void)state;
    /* the innermost Python frame outside torch / site-packages */
    tables_frame a[] = {native("at::native::empty_cuda"), py("/x/torch/nn/functional.py", "linear"),
                        py("/w/model.py", "MLP.forward"), py("/w/train.py", "<module>")};
    assert_int_equal(phases_site(a, 4), 2);
    /* only library Python frames: the innermost one */
    tables_frame b[] = {native("at::native::empty_cuda"), py("/v/site-packages/x.py", "f"),
                        py("/x/torch/nn/functional.py", "linear")};
    assert_int_equal(phases_site(b, 3), 1);
    /* native only: the innermost with a symbol */
    tables_frame c[] = {native(""), native("cudaMalloc")};
    assert_int_equal(phases_site(c, 2), 1);
    tables_frame d[] = {native("")};
    assert_int_equal(phases_site(d, 1), -1);
    assert_int_equal(phases_site(NULL, 0), -1);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(phase_name(PHASE_FORWARD), "forward");
    assert_string_equal(phase_name(PHASE_COMPILE), "compile");
    assert_string_equal(phase_name(PHASE_COUNT), "?");
    assert_string_equal(phase_name(-1), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_phase), cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_flags),      cmocka_unit_test(test_site),
        cmocka_unit_test(test_names),      cmocka_unit_test(test_compiled_and_scaler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
