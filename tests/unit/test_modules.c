/* test_modules.c — the nn.Module a tensor was made in (analyzer/model/facts/modules.c): the
 * model's own module before a single layer, a library installed under a path holding "torch"
 * (a virtual environment in /opt/torch) still the model's, torch.compile's CompiledFunction and
 * other autograd.Functions of PyTorch passed over for the module further out, the compiled graph
 * named when no module is on the stack, and the program's own frame when no forward is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "modules.h"
#include "pyframe.h"

#define VENV "/opt/torch/.venv/lib/python3.12/site-packages/"

#define MODULE_OF(...)                                                                             \
    ({                                                                                             \
        tables_frame fr[] = {__VA_ARGS__};                                                         \
        modules_of_stack(fr, sizeof fr / sizeof fr[0], out, sizeof out);                           \
    })

static void test_model_modules(void **st)
{
    (void)st;
    char out[200];
    /* Hugging Face in a venv under /opt/torch: the MLP, not its Conv1D, not the whole model */
    assert_int_equal(
        MODULE_OF(py(VENV "transformers/pytorch_utils.py", "Conv1D.forward"),
                  py(VENV "transformers/models/gpt2/modeling_gpt2.py", "GPT2MLP.forward"),
                  py(VENV "transformers/models/gpt2/modeling_gpt2.py", "GPT2LMHeadModel.forward"),
                  py("/w/hf_train.py", "main")),
        1);
    assert_string_equal(out, "GPT2MLP.forward");
    /* a model of torch.nn layers alone: the layer */
    assert_int_equal(
        MODULE_OF(py(VENV "torch/nn/modules/conv.py", "Conv2d.forward"), py("/w/train.py", "main")),
        1);
    assert_string_equal(out, "Conv2d.forward");
}

static void test_compiled(void **st)
{
    (void)st;
    char out[200];
    /* torch.compile: the compiled graph's forward is PyTorch's autograd.Function, no module;
     * the module that called the compiled code is further out */
    assert_int_equal(
        MODULE_OF(py(VENV "torch/_functorch/_aot_autograd/runtime_wrappers.py",
                     "AOTDispatchAutograd.post_compile.<locals>.CompiledFunction.forward"),
                  py(VENV "torch/autograd/function.py", "Function.apply"),
                  py("/w/model.py", "Block.forward"), py("/w/train.py", "main")),
        1);
    assert_string_equal(out, "Block.forward");
    /* the whole model compiled: no module's frame on the stack, the compiled graph said */
    assert_int_equal(
        MODULE_OF(py(VENV "torch/_functorch/_aot_autograd/runtime_wrappers.py",
                     "AOTDispatchAutograd.post_compile.<locals>.CompiledFunction.forward"),
                  py(VENV "torch/_dynamo/eval_frame.py", "_TorchDynamoContext.__call__"),
                  py("/w/hf_train.py", "main")),
        0);
    assert_string_equal(out, "(torch.compile's compiled graph: no module on the stack)");
}

static void test_no_module(void **st)
{
    (void)st;
    char out[200];
    assert_int_equal(MODULE_OF(py(VENV "torch/_tensor.py", "Tensor.to"), py("/w/train.py", "main")),
                     0);
    assert_string_equal(out, "(no module: train.py main)");
    tables_frame none[1];
    memset(none, 0, sizeof none);
    none[0].kind = TABLES_FRAME_NATIVE;
    assert_int_equal(modules_of_stack(none, 1, out, sizeof out), 0);
    assert_string_equal(out, "(no Python frames)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_modules),
        cmocka_unit_test(test_compiled),
        cmocka_unit_test(test_no_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
