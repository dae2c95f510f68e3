/* test_recognize.c — what was trained and what was on (analyzer/model/recognize/): the family
 * from the classes a trace's code objects name, the optimizer from its state per trainable
 * parameter, checkpointing / torch.compile / LoRA from the frames, each from a trace written
 * here with exactly those code objects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trace_enc.h"

#include "reader.h"
#include "recognize.h"
#include "tables.h"

/* tables_of: a trace whose only records are CODE records (file, qualname pairs, NULL-ended),
 * read into tables. */
static tables *tables_of(const char *first, ...)
{
    wbuf w = {0};
    w_header(&w, 1, 2);
    va_list ap;
    va_start(ap, first);
    uint32_t id = 1;
    for (const char *file = first; file; file = va_arg(ap, const char *)) {
        const char *qual = va_arg(ap, const char *);
        vt_rec_code cd = {id++, 1};
        uint32_t ltn = 0;
        pl_reset();
        pl(&cd, sizeof cd), pl_str(file), pl_str(qual), pl(&ltn, 4);
        w_rec(&w, VT_REC_CODE, 0);
    }
    va_end(ap);
    w_trailer(&w, 0);
    const char *path = save(&w);
    char msg[256];
    reader *r = reader_open(path, msg, sizeof msg);
    assert_non_null(r);
    tables *t = tables_new();
    reader_record rec;
    while (reader_next(r, &rec))
        assert_int_equal(tables_add(t, &rec), 0);
    reader_close(r);
    free(w.p);
    return t;
}

static run_recognition recog(const tables *t, int iterations, uint64_t grads, uint64_t state)
{
    recognize_input in = {.t = t,
                          .tensor_mode = 1,
                          .iterations = iterations,
                          .forward_seen = 1,
                          .param_bytes = 4000,
                          .grad_peak = grads,
                          .optim_peak = state,
                          .has_cat_peaks = 1};
    run_recognition r;
    recognize_run(&in, &r);
    return r;
}

static void test_families(void **state)
{
    (void)state;
    tables *t = tables_of("/w/model.py", "GPT.forward", "/w/model.py", "Block.forward", NULL);
    run_recognition r = recog(t, 1, 400, 800);
    assert_int_equal(r.family, FAM_DECODER);
    assert_true(r.nanogpt);
    tables_free(t);

    t = tables_of(
        "/v/site-packages/transformers/models/gpt2/modeling_gpt2.py", "GPT2LMHeadModel.forward",
        "/v/site-packages/transformers/models/gpt2/modeling_gpt2.py", "GPT2MLP.forward", NULL);
    r = recog(t, 1, 400, 800);
    assert_int_equal(r.family, FAM_DECODER);
    assert_string_equal(r.model_class, "GPT2LMHeadModel");
    assert_true(r.huggingface && !r.nanogpt);
    tables_free(t);

    t = tables_of("/v/transformers/models/bert/modeling_bert.py", "BertForMaskedLM.forward", NULL);
    assert_int_equal(recog(t, 0, 0, 0).family, FAM_ENCODER);
    tables_free(t);

    /* a ViT's patch embedding is a Conv2d: still a vision transformer */
    t = tables_of("/v/torch/nn/modules/conv.py", "Conv2d.forward",
                  "/v/timm/models/vision_transformer.py", "VisionTransformer.forward", NULL);
    assert_int_equal(recog(t, 0, 0, 0).family, FAM_VISION_TRANSFORMER);
    tables_free(t);

    /* a ResNet: convolutional, with batch statistics; Hugging Face's too (not a ViT) */
    t = tables_of("/v/torchvision/models/resnet.py", "Bottleneck.forward",
                  "/v/torch/nn/modules/batchnorm.py", "_BatchNorm.forward",
                  "/v/torch/nn/modules/conv.py", "Conv2d.forward", NULL);
    r = recog(t, 1, 400, 400);
    assert_int_equal(r.family, FAM_CONVNET);
    assert_true(r.batchnorm);
    tables_free(t);
    t = tables_of("/v/transformers/models/resnet/modeling_resnet.py",
                  "ResNetForImageClassification.forward", NULL);
    assert_int_equal(recog(t, 0, 0, 0).family, FAM_CONVNET);
    tables_free(t);

    /* a diffusion U-Net: Conv2d and attention, neither a plain CNN nor a transformer */
    t = tables_of("/v/torch/nn/modules/conv.py", "Conv2d.forward",
                  "/v/diffusers/models/unets/unet_2d_condition.py", "UNet2DConditionModel.forward",
                  "/v/diffusers/models/attention_processor.py", "Attention.forward", NULL);
    r = recog(t, 0, 0, 0);
    assert_int_equal(r.family, FAM_DIFFUSION_UNET);
    assert_false(family_transformer(r.family));
    tables_free(t);

    t = tables_of("/w/train.py", "main", NULL);
    r = recog(t, 0, 0, 0);
    assert_int_equal(r.family, FAM_UNKNOWN);
    assert_true(r.python_frames);
    tables_free(t);
}

/* no frame names the model: repeating blocks, an embedding and B·T×V logits are a transformer
 * language model; the parameters of a CNN (no logits) are not */
static void test_family_from_shapes(void **state)
{
    (void)state;
    infer_result ir;
    memset(&ir, 0, sizeof ir);
    ir.v[INFER_n_layer] = (infer_value){1, 12, "x"};
    ir.v[INFER_n_embd] = (infer_value){1, 768, "x"};
    ir.v[INFER_vocab_size] = (infer_value){1, 50257, "x"};
    recognize_input in = {.inferred = &ir};
    run_recognition r;
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_UNKNOWN);
    ir.v[INFER_block_size] = (infer_value){1, 1024, "x"};
    ir.v[INFER_batch_size] = (infer_value){1, 8, "x"};
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_DECODER);
    assert_non_null(strstr(r.family_where, "tensor sizes"));
    assert_int_equal(r.python_frames, 0);
    assert_int_equal(r.feat[FEATURE_COMPILE].state,
                     FEAT_UNKNOWN); /* no frames: nothing is off either */
    assert_int_equal(r.feat[FEATURE_CHECKPOINTING].state, FEAT_UNKNOWN);
}

/* the optimizer from its state per trainable parameter (gradients: 4 B per element) */
static void test_optimizers(void **state)
{
    (void)state;
    tables *t = tables_of("/v/torch/optim/sgd.py", "SGD.step", NULL);
    run_recognition r = recog(t, 3, 4000, 4000); /* 1000 trainable, 4 B each */
    assert_int_equal(r.optim, OPT_MOMENTUM);
    assert_true(r.optim_bpp > 3.99 && r.optim_bpp < 4.01);
    assert_int_equal(r.trainable, 1000);
    r = recog(t, 3, 4000, 0);
    assert_int_equal(r.optim, OPT_NONE);
    assert_string_equal(r.optim_class, "SGD without momentum");
    r = recog(t, 0, 4000, 0); /* no step ran: the class, its state not measured */
    assert_int_equal(r.optim, OPT_MOMENTUM);
    assert_true(r.optim_bpp < 0);
    tables_free(t);

    t = tables_of("/v/torch/optim/adam.py", "Adam.step", NULL);
    r = recog(t, 2, 4000, 8000);
    assert_int_equal(r.optim, OPT_ADAM);
    /* LoRA: 40 trainable parameters of 1000, their state is AdamW's 8 B each */
    r = recog(t, 2, 160, 320);
    assert_int_equal(r.optim, OPT_ADAM);
    assert_int_equal(r.trainable, 40);
    tables_free(t);

    /* 16-bit parameters (pure bf16): 2000 trainable of 2 B, AdamW's two states 4 B each, said in
     * their 16 bits (not fp32 momentum, not 8 B) */
    t = tables_of("/v/torch/optim/adamw.py", "AdamW.step", NULL);
    recognize_input in16 = {.t = t,
                            .tensor_mode = 1,
                            .iterations = 2,
                            .forward_seen = 1,
                            .param_bytes = 4000,
                            .grad_peak = 4000,
                            .optim_peak = 8000,
                            .has_cat_peaks = 1,
                            .param_elem = 2};
    recognize_run(&in16, &r);
    assert_int_equal(r.optim, OPT_ADAM);
    assert_int_equal(r.trainable, 2000);
    assert_true(r.optim_bpp > 3.99 && r.optim_bpp < 4.01);
    assert_non_null(strstr(optim_text(&r), "16 bits, 4 B"));
    in16.optim_peak = 4000; /* one 16-bit state: a momentum buffer, 2 B */
    recognize_run(&in16, &r);
    assert_int_equal(r.optim, OPT_OTHER); /* (AdamW's code, one state's size) */
    in16.param_elem = 0; /* fp32: the same bytes are 1000 parameters, AdamW's 8 B */
    in16.optim_peak = 8000;
    recognize_run(&in16, &r);
    assert_int_equal(r.trainable, 1000);
    assert_string_equal(optim_text(&r), optim_words(OPT_ADAM));
    tables_free(t);

    t = tables_of("/v/transformers/optimization.py", "Adafactor.step", NULL);
    assert_int_equal(recog(t, 2, 4000, 300).optim, OPT_FACTORED);
    tables_free(t);
    /* torch.optim.Adafactor (torch/optim/_adafactor.py): a d×d weight keeps 2d floats, 0.01 B
     * per parameter at d = 768, below the threshold that reads as no state */
    t = tables_of("/v/torch/optim/_adafactor.py", "Adafactor.step", NULL);
    r = recog(t, 2, 4000000, 10000);
    assert_int_equal(r.optim, OPT_FACTORED);
    assert_string_equal(r.optim_class, "Adafactor");
    assert_int_equal(recog(t, 2, 4000000, 0).optim, OPT_NONE); /* no state at all */
    assert_false(optim_factored_kernels(&r));
    assert_true(optim_bound_bpp(&r, 4) == 1.0);
    tables_free(t);
    /* ... of a convolutional network: a k×k kernel's factors are 2/k states per weight, two at
     * 1×1 (ResNet-50: 4.99 B per parameter), still Adafactor's, and counted as 2 states when no
     * step measured them (it had been "a state of its own size", or 1 B) */
    t = tables_of("/v/torch/optim/_adafactor.py", "Adafactor.step",
                  "/v/torchvision/models/resnet.py", "Bottleneck.forward",
                  "/v/torch/nn/modules/conv.py", "Conv2d.forward", NULL);
    r = recog(t, 2, 4000, 4990);
    assert_int_equal(r.family, FAM_CONVNET);
    assert_int_equal(r.optim, OPT_FACTORED);
    assert_true(optim_factored_kernels(&r));
    assert_non_null(strstr(optim_text(&r), "2/k states per weight"));
    r = recog(t, 0, 0, 0);
    assert_int_equal(r.optim, OPT_FACTORED);
    assert_true(optim_bound_bpp(&r, 4) == 8.0 && optim_bound_bpp(&r, 2) == 4.0);
    tables_free(t);

    t = tables_of("/w/train.py", "main", NULL);
    r = recog(t, 2, 4000, 8000); /* no class on the stacks: the state says it */
    assert_int_equal(r.optim, OPT_ADAM);
    assert_string_equal(r.optim_class, "");
    r = recog(t, 0, 0, 0);
    assert_int_equal(r.optim, OPT_UNKNOWN);
    tables_free(t);
}

static void test_features(void **state)
{
    (void)state;
    /* checkpointing runs its blocks under dynamo's disable() wrapper: that is not compile */
    tables *t =
        tables_of("/v/torch/utils/checkpoint.py", "checkpoint", "/v/torch/_dynamo/eval_frame.py",
                  "DisableContext.__call__.<locals>._fn", "/w/train.py", "main", NULL);
    run_recognition r = recog(t, 1, 400, 800);
    assert_int_equal(r.feat[FEATURE_CHECKPOINTING].state, FEAT_ON);
    assert_int_equal(r.feat[FEATURE_COMPILE].state, FEAT_OFF);
    assert_int_equal(r.feat[FEATURE_LORA].state, FEAT_OFF);
    tables_free(t);

    t = tables_of("/v/torch/_inductor/output_code.py", "CompiledFxGraph.__call__", "/w/train.py",
                  "main", NULL);
    r = recog(t, 1, 400, 800);
    assert_int_equal(r.feat[FEATURE_COMPILE].state, FEAT_ON);
    assert_int_equal(r.feat[FEATURE_CHECKPOINTING].state, FEAT_OFF);
    tables_free(t);
    t = tables_of("/v/torch/_dynamo/convert_frame.py", "_compile", NULL);
    assert_int_equal(recog(t, 0, 0, 0).feat[FEATURE_COMPILE].state, FEAT_ON);
    tables_free(t);

    t = tables_of("/v/peft/tuners/lora/layer.py", "Linear.forward", NULL);
    r = recog(t, 1, 160, 320);
    assert_int_equal(r.feat[FEATURE_LORA].state, FEAT_ON);
    assert_non_null(
        strstr(r.feat[FEATURE_LORA].where, "4.00 % of the parameters")); /* 40 of 1000 */
    assert_non_null(strstr(r.trainable_where, "the gradients' elements"));
    /* no gradient measured (an OOM before the first backward): the adapters made under peft's
     * code are what trains; measured gradients win over them */
    recognize_input in = {.t = t, .tensor_mode = 1, .param_bytes = 4000, .adapter_bytes = 80};
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 20);
    assert_non_null(strstr(r.trainable_where, "LoRA adapters"));
    assert_non_null(strstr(r.feat[FEATURE_LORA].where, "2.00 % of the parameters"));
    in.grad_peak = 160, in.has_cat_peaks = 1;
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 40);
    tables_free(t);

    t = tables_of("/v/torch/cuda/graphs.py", "CUDAGraph.capture_begin", NULL);
    assert_int_equal(recog(t, 0, 0, 0).feat[FEATURE_CUDA_GRAPHS].state, FEAT_ON);
    tables_free(t);
}

/* an EMA of the weights: its code (VT_EMA_CODE) on the stacks, by class where the frame names
 * it (diffusers' training_utils.py holds other helpers: cast_training_params makes the model's
 * own fp32 weights there), by file under Python 3.10's bare names; off only with frames */
static void test_ema(void **state)
{
    (void)state;
    static const struct {
        const char *file, *qual;
        int on;
    } codes[] = {
        {"/v/diffusers/training_utils.py", "EMAModel.__init__.<locals>.<listcomp>", 1},
        {"/v/diffusers/training_utils.py", "EMAModel.to", 1},
        {"/v/diffusers/training_utils.py", "__init__", 1}, /* Python 3.10 */
        {"/v/diffusers/training_utils.py", "cast_training_params", 0},
        {"/v/diffusers/training_utils.py", "compute_snr", 0},
        {"/v/timm/utils/model_ema.py", "ModelEmaV3.__init__", 2},
        {"/v/torch/optim/swa_utils.py", "AveragedModel.__init__", 3},
        {"/v/torch/optim/swa_utils.py", "update_bn", 0},
        {"/v/torch_ema/ema.py", "ExponentialMovingAverage.__init__", 4},
        {"/w/train.py", "main", 0},
        {NULL, "EMAModel.__init__", 0},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        assert_int_equal(recognize_ema_code(codes[i].file, codes[i].qual), codes[i].on);
    assert_string_equal(recognize_ema_words(1), "EMAModel (diffusers)");
    assert_string_equal(recognize_ema_words(0), "");
    assert_string_equal(recognize_ema_words(99), "");

    tables *t = tables_of("/v/diffusers/training_utils.py", "EMAModel.__init__", "/w/train.py",
                          "main", NULL);
    recognize_input in = {.t = t,
                          .tensor_mode = 1,
                          .forward_seen = 1,
                          .param_bytes = 4000,
                          .ema_bytes = 3 << 20,
                          .ema_which = 1,
                          .kv_cache_at = "at the peak"};
    run_recognition r;
    recognize_run(&in, &r);
    assert_int_equal(r.feat[FEATURE_EMA].state, FEAT_ON);
    assert_int_equal(r.ema_bytes, 3 << 20);
    assert_non_null(
        strstr(r.feat[FEATURE_EMA].where, "EMAModel (diffusers)): 3.0 MiB live at the peak"));
    in.ema_bytes = 0, in.ema_which = 0; /* its code ran, no copy among the parameters */
    recognize_run(&in, &r);
    assert_int_equal(r.feat[FEATURE_EMA].state, FEAT_ON);
    assert_int_equal(r.ema_bytes, 0);
    assert_non_null(strstr(r.feat[FEATURE_EMA].where, "none of them among the parameters"));
    tables_free(t);
    t = tables_of("/v/diffusers/training_utils.py", "cast_training_params", NULL);
    in.t = t, in.ema_bytes = 1 << 20; /* no EMA code: bytes said of none */
    recognize_run(&in, &r);
    assert_int_equal(r.feat[FEATURE_EMA].state, FEAT_OFF);
    assert_int_equal(r.ema_bytes, 0);
    tables_free(t);
    in.t = NULL; /* no Python frames: not known */
    recognize_run(&in, &r);
    assert_int_equal(r.feat[FEATURE_EMA].state, FEAT_UNKNOWN);
}

/* the loop that ran the steps: a framework's Trainer on the stacks, Hugging Face's before the
 * Accelerate it runs under, else the script's own; nothing said without Python frames */
static void test_loops(void **state)
{
    (void)state;
    static const struct {
        const char *file, *qual, *want;
    } cases[] = {
        {"/v/lightning/pytorch/trainer/call.py", "_call_lightning_module_hook", "lightning"},
        {"/v/pytorch_lightning/trainer/trainer.py", "Trainer.fit", "lightning"},
        {"/v/transformers/trainer.py", "Trainer.training_step", "hf_trainer"},
        {"/v/accelerate/accelerator.py", "Accelerator.backward", "accelerate"},
        {"/w/train.py", "main", "own"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tables *t = tables_of(cases[i].file, cases[i].qual, NULL);
        run_recognition r = recog(t, 1, 400, 800);
        assert_string_equal(r.loop, cases[i].want);
        assert_non_null(strstr(recognize_loop_words(r.loop), i < 2    ? "Lightning"
                                                             : i == 2 ? "Hugging Face"
                                                             : i == 3 ? "Accelerate"
                                                                      : "own"));
        tables_free(t);
    }
    tables *t = tables_of("/v/accelerate/accelerator.py", "Accelerator.backward",
                          "/v/transformers/trainer.py", "Trainer.training_step", NULL);
    assert_string_equal(recog(t, 1, 400, 800).loop, "hf_trainer");
    tables_free(t);
}

/* before any backward, beside another model's blocks whose 16-bit copies the first forward freed
 * after each use (a frozen teacher under no_grad), the weights whose copies were kept train, a
 * lower bound (trainable.c); not where the freed copies cover under half of the other weights
 * (their blocks never used: nothing says they are frozen), nor with no such blocks inferred */
static void test_trainable_by_copies(void **state)
{
    (void)state;
    infer_result ir;
    memset(&ir, 0, sizeof ir);
    ir.v[INFER_frozen_blocks] = (infer_value){1, 16, "x"};
    recognize_input in = {.inferred = &ir,
                          .tensor_mode = 1,
                          .forward_seen = 1,
                          .param_bytes = 4000,
                          .has_cat_peaks = 1,
                          .trained_by_copies = 500,
                          .copies_freed = 1700};
    run_recognition r;
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 125);
    assert_int_equal(r.trainable_lower, 1);
    assert_non_null(strstr(r.trainable_where, "at least"));
    assert_int_equal(r.beside_unused, 0);
    /* (2 x 800 B of weights used of the 3500 not kept: under half) the other model had not been
     * used (a teacher run after the student): at least the kept copies' weights still, the rest
     * not told (they had been costed as trained: trainable unknown) */
    in.copies_freed = 800;
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 125);
    assert_int_equal(r.trainable_lower, 1);
    assert_int_equal(r.beside_unused, 1);
    assert_non_null(strstr(r.trainable_where, "whether they train is not told"));
    in.copies_freed = 0;
    recognize_run(&in, &r);
    assert_int_equal(r.beside_unused, 1);
    /* the weights hold a copy of themselves (an own EMA of a U-Net): its tensors' sizes are the
     * kept copies' too, so they tell no model beside unused; the copy tells the weights it copies
     * train, at least (an EMA's, of a trained model) */
    in.copy_tensors = 277, in.copy_bytes = 1700;
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 425);
    assert_int_equal(r.trainable_lower, 1);
    assert_int_equal(r.beside_unused, 0);
    in.copy_tensors = 0, in.copy_bytes = 0;
    in.copies_freed = 1700, ir.v[INFER_frozen_blocks].known = 0;
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 0);
    ir.v[INFER_frozen_blocks].known = 1, in.grad_peak = 400; /* a backward: its gradients */
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 100);
    assert_int_equal(r.trainable_lower, 0);
}

/* out of memory in the first backward (grads_cut): the gradients made by then are a lower bound,
 * the weights it had not reached may train (a DLRM's tables all trained had been 4.96 GiB of
 * weights that "take no gradient"); with the error elsewhere, the gradients' elements as they are
 */
static void test_trainable_cut(void **state)
{
    (void)state;
    tables *t = tables_of("/w/train.py", "main", NULL);
    recognize_input in = {.t = t,
                          .tensor_mode = 1,
                          .forward_seen = 1,
                          .param_bytes = 4000,
                          .grad_peak = 1000,
                          .has_cat_peaks = 1,
                          .grads_cut = 1};
    run_recognition r;
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 250);
    assert_int_equal(r.trainable_lower, 1);
    assert_int_equal(r.grads_cut, 1);
    assert_non_null(strstr(r.trainable_where, "at least"));
    assert_non_null(strstr(r.trainable_where, "the backward did not reach the rest"));
    /* its EMA row: whether the others train is not known, never that they take no gradient */
    assert_non_null(strstr(r.feat[FEATURE_EMA].where, "not reached yet"));
    assert_null(strstr(r.feat[FEATURE_EMA].where, "take no gradient"));
    in.grads_cut = 0;
    recognize_run(&in, &r);
    assert_int_equal(r.trainable, 250);
    assert_int_equal(r.trainable_lower, 0);
    assert_int_equal(r.grads_cut, 0);
    assert_non_null(strstr(r.feat[FEATURE_EMA].where, "take no gradient"));
    tables_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_family_from_shapes),
        cmocka_unit_test(test_optimizers),
        cmocka_unit_test(test_features),
        cmocka_unit_test(test_loops),
        cmocka_unit_test(test_ema),
        cmocka_unit_test(test_trainable_by_copies),
        cmocka_unit_test(test_trainable_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
