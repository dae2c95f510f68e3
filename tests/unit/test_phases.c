/* test_phases.c — training phases from frames (analyzer/model/facts/phases.c): each phase's signal,
 * their precedence (backward > optimizer > eval > data > compile > forward > init), the loss
 * and dtype-conversion flags, native frames, the site a report names for a stack, and a call of
 * the program's own line that drew values onto the device (phases_own_draw). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "phases.h"
#include "pyframe.h"

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
    /* a program's own evaluation by its name's words; not a name that trains too, nor words
     * that merely hold the letters */
    assert_int_equal(PHASE_OF(py("/w/train.py", "LongTrainer.late_eval")).phase, PHASE_EVAL);
    assert_int_equal(PHASE_OF(py("/w/train.py", "eval")).phase, PHASE_EVAL);
    assert_int_equal(PHASE_OF(py("/w/train.py", "run_validation_epoch")).phase, PHASE_EVAL);
    assert_int_equal(PHASE_OF(py("/w/train.py", "train_and_evaluate")).phase, PHASE_OTHER);
    assert_int_equal(PHASE_OF(py("/w/train.py", "retrieval_loss")).phase, PHASE_OTHER);
    assert_int_equal(PHASE_OF(py("/w/model.py", "valid_mask")).phase, PHASE_OTHER);
    assert_int_equal(PHASE_OF(py("/x/torch/nn/modules/module.py", "Module.eval")).phase,
                     PHASE_OTHER);
    assert_int_equal(PHASE_OF(py("/w/train.py", "get_batch")).phase, PHASE_DATA);
    assert_int_equal(PHASE_OF(py("/x/torch/_dynamo/convert_frame.py", "_compile")).phase,
                     PHASE_COMPILE);
    /* eval_frame.py's _fn alone also wraps disable() (torch.utils.checkpoint, optimizers) */
    assert_int_equal(PHASE_OF(py("/x/torch/_dynamo/eval_frame.py", "_fn")).phase, PHASE_OTHER);
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
    assert_int_equal(PHASE_OF(py("/w/model.py", "GPT.forward"),
                              py("/x/torch/_dynamo/convert_frame.py", "_compile"))
                         .phase,
                     PHASE_COMPILE);
    /* a checkpointed block's forward runs under dynamo's disable() wrapper: still a forward */
    assert_int_equal(PHASE_OF(py("/w/model.py", "Block.forward"),
                              py("/x/torch/utils/checkpoint.py", "checkpoint"),
                              py("/x/torch/_dynamo/eval_frame.py", "_fn"))
                         .phase,
                     PHASE_FORWARD);
    /* .to(device) inside forward is forward */
    assert_int_equal(
        PHASE_OF(py("/x/torch/nn/modules/module.py", "Module.to"), py("/w/model.py", "GPT.forward"))
            .phase,
        PHASE_FORWARD);
}

/* optimizer.step(closure): what the closure computes is not the optimizer's (Lightning, LBFGS);
 * the optimizer's own code under it is, wherever torch is installed */
static void test_closure(void **state)
{
    (void)state;
    const char *adam = "/opt/torch/.venv/lib/python3.12/site-packages/torch/optim/adam.py";
    const char *lit =
        "/opt/torch/.venv/lib/python3.12/site-packages/lightning/pytorch/loops/optimization/"
        "automatic.py";
    /* the model's forward in Lightning's training_step */
    assert_int_equal(PHASE_OF(py("/x/torch/nn/modules/module.py", "Module._call_impl"),
                              py("/w/lit.py", "LitLM.training_step"), py(lit, "Closure.closure"),
                              py(adam, "Adam.step"), py("/w/lit.py", "main"))
                         .phase,
                     PHASE_FORWARD);
    /* Lightning's own bookkeeping of the loss in the closure (a venv under /opt/torch/): none of
     * the phases (the replay counts it in the forward) */
    assert_int_equal(PHASE_OF(py(lit, "ClosureResult.from_training_step_output"),
                              py(lit, "Closure.closure"), py(adam, "Adam.step"))
                         .phase,
                     PHASE_OTHER);
    /* a loss computed in an LBFGS closure of the program's own */
    assert_int_equal(PHASE_OF(native("at::_ops::nll_loss_forward::call"),
                              py("/x/torch/nn/functional.py", "cross_entropy"),
                              py("/w/train.py", "main.<locals>.closure"),
                              py("/x/torch/optim/lbfgs.py", "LBFGS.step"))
                         .phase,
                     PHASE_FORWARD);
    /* the backward in the closure stays backward */
    assert_int_equal(PHASE_OF(py("/x/torch/autograd/__init__.py", "backward"),
                              py("/w/train.py", "closure"),
                              py("/x/torch/optim/lbfgs.py", "LBFGS.step"))
                         .phase,
                     PHASE_BACKWARD);
    /* the optimizer's state, made by its own code and torch's helpers under the same step */
    assert_int_equal(PHASE_OF(py("/opt/torch/.venv/lib/python3.12/site-packages/torch/utils/"
                                 "_foreach_utils.py",
                                 "_group_tensors_by_device_and_dtype"),
                              py(adam, "_multi_tensor_adam"), py(adam, "Adam.step"),
                              py(lit, "Closure.step"), py("/w/lit.py", "main"))
                         .phase,
                     PHASE_OPTIMIZER);
    /* Lightning moves the batch onto the device (not the program's own frame): an input */
    stack_facts in =
        PHASE_OF(native("at::_ops::_to_copy::call"), py("/x/torch/_tensor.py", "Tensor.to"),
                 py("/x/site-packages/lightning/fabric/utilities/apply_func.py",
                    "move_data_to_device.<locals>.batch_to"),
                 py("/x/site-packages/lightning/pytorch/core/hooks.py",
                    "DataHooks.transfer_batch_to_device"),
                 py("/w/lit.py", "main"));
    assert_int_equal(in.phase, PHASE_DATA);
    assert_int_equal(in.input, 1);
    /* the Hugging Face Trainer's _prepare_input: the same */
    in = PHASE_OF(native("at::_ops::_to_copy::call"), py("/x/torch/_tensor.py", "Tensor.to"),
                  py("/x/site-packages/transformers/trainer.py", "Trainer._prepare_input"),
                  py("/x/site-packages/transformers/trainer.py", "Trainer.training_step"),
                  py("/w/run.py", "main"));
    assert_int_equal(in.phase, PHASE_DATA);
    assert_int_equal(in.input, 1);
    assert_int_equal(
        PHASE_OF(py("/x/site-packages/bitsandbytes/functional.py", "quantize"),
                 py("/x/site-packages/bitsandbytes/optim/optimizer.py", "Optimizer8bit.step"))
            .phase,
        PHASE_OPTIMIZER);
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

/* the operators only a model's forward runs (what tells a run recorded without Python frames that
 * its first forward began), by their dispatch frame, not a longer name beginning alike (a
 * backward's, an out= variant's), nor what building a model and moving it to the device calls (a
 * rotary table's einsum on the device is a bmm: plain products are not a model's) */
static void test_model_ops(void **state)
{
    (void)state;
    static const char *const yes[] = {
        "at::_ops::embedding::call(at::Tensor const&, at::Tensor const&, c10::SymInt, bool, bool)",
        "at::_ops::addmm::call(unsigned long)",
        "at::_ops::convolution::redispatch(c10::DispatchKeySet)",
        "at::_ops::native_layer_norm::call", "at::_ops::_scaled_dot_product_flash_attention::call"};
    static const char *const no[] = {"at::_ops::embedding_dense_backward::call(unsigned long)",
                                     "at::_ops::mm_out::call",
                                     "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)",
                                     "at::_ops::mm::call",
                                     "at::_ops::matmul::call",
                                     "at::_ops::_to_copy::call",
                                     "at::_ops::empty_strided::call",
                                     "at::_ops::normal_::call",
                                     "at::native::addmm_out_cuda(at::Tensor const&)",
                                     "at::_ops::arange_start::call",
                                     "at::_ops::cos::call"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_int_equal(PHASE_OF(native(yes[i])).model_op, 1);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_int_equal(PHASE_OF(native(no[i])).model_op, 0);
    /* under a Python frame too (the rule uses it only where none was recorded) */
    assert_int_equal(
        PHASE_OF(native("at::_ops::addmm::call"), py("/w/model.py", "GPT.forward")).model_op, 1);
}

/* a batch made in the training loop: random token ids, and a diffusion step's noise (random
 * floats made on the device), not a parameter made with torch.randn in a module's __init__, nor
 * noise made inside a forward; the backward's starting gradient and what a framework's backward
 * makes before torch's */
static void test_inputs_and_seed(void **state)
{
    (void)state;
    stack_facts f = PHASE_OF(native("at::_ops::randn::call(c10::ArrayRef<long>)"),
                             py("/w/train_unet.py", "main"));
    assert_int_equal(f.input, 1);
    f = PHASE_OF(native("at::_ops::randn_like::call(at::Tensor const&)"),
                 py("/w/train_unet.py", "main"));
    assert_int_equal(f.input, 1);
    f = PHASE_OF(native("at::_ops::randint_low::call(long, long)"), py("/w/train.py", "main"));
    assert_int_equal(f.input, 1);
    /* a random operator named after another at::_ops:: of the name (a template's argument) */
    f = PHASE_OF(native("c10::impl::wrap<at::_ops::mm::call, at::_ops::randint::call>(long)"),
                 py("/w/train.py", "main"));
    assert_int_equal(f.input, 1);
    f = PHASE_OF(native("c10::impl::wrap<at::_ops::mm::call, at::_ops::normal_::call>(long)"),
                 py("/w/train_unet.py", "main"));
    assert_int_equal(f.input, 1);
    f = PHASE_OF(native("c10::impl::wrap<at::_ops::mm::call, at::_ops::empty::call>(long)"),
                 py("/w/train.py", "main"));
    assert_int_equal(f.input, 0);
    f = PHASE_OF(native("at::_ops::randn::call(c10::ArrayRef<long>)"),
                 py("/w/model.py", "Net.__init__"), py("/w/train.py", "main"));
    assert_int_equal(f.input, 0);
    f = PHASE_OF(native("at::_ops::randn::call(c10::ArrayRef<long>)"),
                 py("/w/model.py", "Net.forward"), py("/w/train.py", "main"));
    assert_int_equal(f.input, 0);
    f = PHASE_OF(native("at::_ops::empty_strided::call"), py("/w/train.py", "main"));
    assert_int_equal(f.input, 0);
    f = PHASE_OF(native("at::_ops::ones_like::call"),
                 py("/v/site-packages/torch/autograd/__init__.py", "_make_grads"),
                 py("/v/site-packages/torch/autograd/__init__.py", "backward"),
                 py("/v/site-packages/torch/_tensor.py", "Tensor.backward"),
                 py("/w/train.py", "main"));
    assert_int_equal(f.engine, 0); /* the calling thread's, before the engine runs */
    assert_int_equal(f.phase, PHASE_BACKWARD);
    f = PHASE_OF(
        native("at::_ops::mm::call"), native("torch::autograd::Engine::evaluate_function(...)"),
        py("/v/site-packages/torch/_tensor.py", "Tensor.backward"), py("/w/train.py", "main"));
    assert_int_equal(f.engine, 1); /* the engine's: a gradient may be */
    assert_int_equal(f.phase, PHASE_BACKWARD);
    f = PHASE_OF(native("at::_ops::div_Tensor::call"),
                 py("/v/site-packages/accelerate/accelerator.py", "Accelerator.backward"),
                 py("/v/site-packages/transformers/trainer.py", "Trainer.training_step"));
    assert_int_equal(f.engine, 0);
    assert_true(f.phase != PHASE_BACKWARD);
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
    /* a framework's training loop between: the model's code below it (not the script's
     * trainer.train() line, every tensor's); the program's own loop keeps its own line */
    const char *gpt2 = "/v/site-packages/transformers/models/gpt2/modeling_gpt2.py";
    tables_frame e[] = {native("at::_ops::mm::call"),
                        py("/v/site-packages/torch/nn/functional.py", "linear"),
                        py(gpt2, "GPT2MLP.forward"),
                        py("/v/site-packages/transformers/trainer.py", "Trainer.compute_loss"),
                        py("/w/train.py", "main")};
    assert_int_equal(phases_site(e, 5), 2);
    tables_frame g[] = {native("at::_ops::mm::call"),
                        py("/v/site-packages/torch/nn/functional.py", "linear"),
                        py(gpt2, "GPT2MLP.forward"), py("/w/train.py", "main")};
    assert_int_equal(phases_site(g, 4), 3);
    /* nothing but torch below the loop: the loop's own frame */
    tables_frame h[] = {py("/v/site-packages/torch/optim/adamw.py", "AdamW.step"),
                        py("/v/site-packages/lightning/pytorch/loops/fit_loop.py", "FitLoop.run"),
                        py("/w/lit.py", "main")};
    assert_int_equal(phases_site(h, 3), 1);
}

/* site_memo: phases_site's walk over the Python frames with a memo (as a report names its
 * stacks: replay_sites.c), each frame given a code object of its own as the memo's key; walked
 * twice, the second time from the memo; the pick, or the first Python frame, or -1. */
static long site_memo(tables_frame *f, size_t n, phases_memo *m)
{
    static tables_code codes[16];
    long pick = -2;
    for (int round = 0; round < 2; round++) {
        phases_site_walk w = PHASES_SITE_WALK_INIT;
        w.memo = m;
        long got = -1;
        for (size_t i = 0; i < n && got < 0; i++) {
            f[i].code = &codes[i];
            if (f[i].kind == TABLES_FRAME_PYTHON && phases_site_step(&w, &f[i], (long)i))
                got = w.pick;
        }
        if (got < 0)
            got = w.first_py;
        assert_true(pick == -2 || pick == got);
        pick = got;
    }
    return pick;
}

/* The same sites through the memo: a framework's loop file, a library, the program's own. */
static void test_site_memo(void **state)
{
    (void)state;
    phases_memo m;
    memset(&m, 0, sizeof m);
    const char *gpt2 = "/v/site-packages/transformers/models/gpt2/modeling_gpt2.py";
    tables_frame e[] = {py("/v/site-packages/torch/nn/functional.py", "linear"),
                        py(gpt2, "GPT2MLP.forward"),
                        py("/v/site-packages/transformers/trainer.py", "Trainer.compute_loss"),
                        py("/w/train.py", "main")};
    assert_int_equal(site_memo(e, 4, &m), 1);
    phases_memo_free(&m);
    tables_frame h[] = {py("/v/site-packages/torch/optim/adamw.py", "AdamW.step"),
                        py("/v/site-packages/lightning/pytorch/loops/fit_loop.py", "FitLoop.run"),
                        py("/w/lit.py", "main")};
    assert_int_equal(site_memo(h, 3, &m), 1);
    phases_memo_free(&m);
    tables_frame a[] = {py("/x/torch/nn/functional.py", "linear"), py("/w/model.py", "MLP.forward"),
                        py("/w/train.py", "<module>")};
    assert_int_equal(site_memo(a, 3, &m), 1);
    phases_memo_free(&m);
    /* a library's own frame is picked over torch's when nothing of the program's is there */
    tables_frame b[] = {py("/x/torch/nn/functional.py", "linear"), py("/v/site-packages/x.py", "f"),
                        py("/v/site-packages/y.py", "g")};
    assert_int_equal(site_memo(b, 3, &m), 0);
    phases_memo_free(&m);
}

/* a native frame's symbol whose demangling may say something (phases_native_may_say, which spares
 * the others their demangling): every pattern's name as recorded, mangled or not; not a name with
 * none of their words */
/* the program's own dtype cast on the device (x.float(): aten::to with a dtype alone, the
 * program's line innermost): no batch moved onto the device by itself, told to classify.c as a
 * cast (stack_facts.cast), no loss nor attention; a move onto the device (.cuda(), .to(device):
 * to_dtype_layout) is */
static void test_own_cast(void **state)
{
    (void)state;
    stack_facts f =
        PHASE_OF(native("at::_ops::_to_copy::call"), native("at::native::to"),
                 native("at::_ops::to_dtype::call(at::Tensor const&)"), py("/w/train.py", "main"));
    assert_int_equal(f.input, 0);
    assert_int_equal(f.cast, 1);
    assert_int_equal(f.loss, 0);
    assert_int_equal(f.attention, 0);
    assert_int_equal(f.workspace, 0);
    assert_int_equal(f.phase, PHASE_OTHER); /* (no loss's: the forward's only by the replay) */
    f = PHASE_OF(native("at::_ops::_to_copy::call"), native("at::native::to"),
                 native("at::_ops::to_dtype_layout::call(at::Tensor const&)"),
                 py("/w/train.py", "main"));
    assert_int_equal(f.input, 1);
    assert_int_equal(f.cast, 0);
    assert_int_equal(f.loss, 0);
    assert_int_equal(f.attention, 0);
    /* negative: autocast's cast of an operator's input called from the loop, a cast in the
     * program's data path (a batch) or inside a module */
    f = PHASE_OF(native("at::_ops::_to_copy::call"), native("at::_ops::to_dtype::call"),
                 native("at::autocast::cached_cast(c10::ScalarType, at::Tensor const&)"),
                 native("at::_ops::mm::call"), py("/w/train.py", "main"));
    assert_int_equal(f.cast, 0);
    assert_int_equal(f.loss, 0);
    f = PHASE_OF(native("at::_ops::_to_copy::call"), native("at::_ops::to_dtype::call"),
                 py("/w/train.py", "get_batch"), py("/w/train.py", "main"));
    assert_int_equal(f.input, 1);
    assert_int_equal(f.cast, 0);
    f = PHASE_OF(native("at::_ops::_to_copy::call"), native("at::_ops::to_dtype::call"),
                 py("/w/model.py", "Net.forward"), py("/w/train.py", "main"));
    assert_int_equal(f.input, 0);
    assert_int_equal(f.cast, 0);
    assert_int_equal(f.phase, PHASE_FORWARD);
}

static void test_native_may_say(void **state)
{
    (void)state;
    static const char *const yes[] = {
        "_ZN5torch8autograd6Engine11thread_mainERKSt10shared_ptrINS0_9GraphTaskEE",
        "_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_",
        "_ZN2at6native18cross_entropy_lossERKNS_6TensorE",
        "_ZN2at6native16log_softmax_cudaERKNS_6TensorElb",
        "_ZN2at6native16nll_loss_forwardERKNS_6TensorE",
        "_ZN2at6native8_to_copyERKNS_6TensorE",
        "_ZN2at4cuda24getCurrentCUDABlasHandleEv",
        "_ZN2at4cuda24getCUDABlasLtWorkspaceEv",
        "cublasGemmEx",
        "_ZN2at6native24_flash_attention_forwardERKNS_6TensorE",
        "_ZN2at6native28_efficient_attention_forwardERKNS_6TensorE",
        "_ZN2at6native24_cudnn_attention_forwardERKNS_6TensorE",
        "_ZN2at6native28scaled_dot_product_attentionERKNS_6TensorE",
        "_ZN2at6native19native_dropout_cudaERKNS_6TensorEdSt8optionalIbE",
        "_ZN2at8autocast11cached_castEN3c1010ScalarTypeERKNS_6TensorENS1_10DeviceTypeE",
    };
    static const char *const no[] = {"", "_PyEval_EvalFrameDefault", "_ZN3c1010TensorImpl4sizeEl",
                                     "_ZN2at6native5emptyEv",
                                     "_ZN2at6native7mm_cudaERKNS_6TensorES3_"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_int_equal(phases_native_may_say(yes[i]), 1);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_int_equal(phases_native_may_say(no[i]), 0);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(phase_name(PHASE_FORWARD), "forward");
    assert_string_equal(phase_name(PHASE_COMPILE), "compile");
    assert_string_equal(phase_name(PHASE_COUNT), "?");
    assert_string_equal(phase_name(-1), "?");
}

#define OWN_DRAW(...)                                                                              \
    ({                                                                                             \
        tables_frame fr_[] = {__VA_ARGS__};                                                        \
        phases_own_draw(fr_, sizeof fr_ / sizeof fr_[0]);                                          \
    })

/* phases_own_draw: values the program's own line drew or copied onto the device (an evolution
 * strategy's noise), through a simulated torch's Python frames too; never a module's weights */
static void test_own_draw(void **state)
{
    (void)state;
    assert_int_equal(OWN_DRAW(native("at::_ops::randn::call(unsigned long)"),
                              py("/w/es.py", "main.<locals>.generation"), py("/w/es.py", "main")),
                     1);
    assert_int_equal(OWN_DRAW(native("at::_ops::randn::call(unsigned long)"),
                              py("/w/sim/simtorch/_C/_aten.py", "randn"),
                              py("/w/sim/simtorch/__init__.py", "randn"), py("/w/es.py", "main")),
                     1);
    assert_int_equal(OWN_DRAW(native("at::_ops::_to_copy::call"), py("/w/train.py", "main")), 1);
    /* a module's weights moved (Module.to), made (__init__), a forward's, a zeros' (data) */
    assert_int_equal(OWN_DRAW(native("at::_ops::_to_copy::call"),
                              py("/v/site-packages/torch/nn/modules/module.py", "Module._apply"),
                              py("/w/train.py", "main")),
                     0);
    assert_int_equal(OWN_DRAW(native("at::_ops::randn::call(c10::ArrayRef<long>)"),
                              py("/w/model.py", "Net.__init__"), py("/w/train.py", "main")),
                     0);
    assert_int_equal(OWN_DRAW(native("at::_ops::randn::call(c10::ArrayRef<long>)"),
                              py("/w/model.py", "Net.forward"), py("/w/train.py", "main")),
                     0);
    assert_int_equal(OWN_DRAW(native("at::_ops::zeros::call"), py("/w/train.py", "main")), 0);
    assert_int_equal(OWN_DRAW(native("at::_ops::randn::call(unsigned long)"),
                              py("/v/site-packages/lib/x.py", "f"), py("/w/train.py", "main")),
                     0);
}

/* an optimizer's constructor: torch.optim's __init__, or the __init__ of a program's own class an
 * optimizer's name names (its comprehensions too): its state made before any step, phase init
 * (no step) with opt_init set; not its step, not a class of another name, not a module */
static void test_optim_ctor(void **state)
{
    (void)state;
    stack_facts f =
        PHASE_OF(native("at::_ops::full_like::call(unsigned long)"),
                 py("/x/torch/optim/adagrad.py", "Adagrad.__init__"), py("/w/kge.py", "main"));
    assert_int_equal(f.phase, PHASE_INIT);
    assert_int_equal(f.opt_init, 1);
    assert_int_equal(f.input, 0);
    f = PHASE_OF(py("/w/kge.py", "Adagrad.__init__.<locals>.<dictcomp>"),
                 py("/w/kge.py", "Adagrad.__init__"), py("/w/kge.py", "main"));
    assert_int_equal(f.phase, PHASE_INIT);
    assert_int_equal(f.opt_init, 1);
    f = PHASE_OF(py("/w/es.py", "Adam.__init__"), py("/w/es.py", "main"));
    assert_int_equal(f.opt_init, 1);
    f = PHASE_OF(py("/w/es.py", "MyOptimizer.__init__"), py("/w/es.py", "main"));
    assert_int_equal(f.opt_init, 1);
    /* its step is the optimizer's; another class's constructor a module's (init) */
    f = PHASE_OF(py("/x/torch/optim/adamw.py", "AdamW.step"), py("/w/kge.py", "main"));
    assert_int_equal(f.phase, PHASE_OPTIMIZER);
    assert_int_equal(f.opt_init, 0);
    f = PHASE_OF(py("/w/model.py", "Adapter.__init__"), py("/w/kge.py", "main"));
    assert_int_equal(f.phase, PHASE_INIT);
    assert_int_equal(f.opt_init, 0);
    f = PHASE_OF(py("/w/model.py", "AdamLayer.__init__"), py("/w/kge.py", "main"));
    assert_int_equal(f.opt_init, 0);
    /* a library's class named so outside an optimizer's package says nothing */
    f = PHASE_OF(py("/x/site-packages/foo/layers.py", "Adam.__init__"), py("/w/kge.py", "main"));
    assert_int_equal(f.opt_init, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_phase),      cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_flags),           cmocka_unit_test(test_model_ops),
        cmocka_unit_test(test_inputs_and_seed), cmocka_unit_test(test_site),
        cmocka_unit_test(test_site_memo),       cmocka_unit_test(test_names),
        cmocka_unit_test(test_native_may_say),  cmocka_unit_test(test_compiled_and_scaler),
        cmocka_unit_test(test_closure),         cmocka_unit_test(test_own_cast),
        cmocka_unit_test(test_own_draw),        cmocka_unit_test(test_optim_ctor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
