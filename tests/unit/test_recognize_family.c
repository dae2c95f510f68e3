/* test_recognize_family.c — the family where a run's convolution layers and attention kernels
 * both ran (analyzer/model/recognize/family.c): a convolution at the input that made a sliver of
 * the activations is a vision transformer's patch embedding, and the evidence names the program's
 * modules that call the layers, from a trace written here with its code objects and stacks; a
 * transformer told from its sizes where its token batch is seen and T is not. */
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

/* a CLIP-like program's own model: its ImageTower calls a Conv2d (the patch embedding), its Block
 * and Attn call none (stacks of code ids innermost first, each a STACK record after the codes) */
static tables *clip_tables(void)
{
    static const char *const code[][2] = {{"/v/torch/nn/modules/conv.py", "Conv2d.forward"},
                                          {"/v/torch/nn/modules/module.py", "Module._call_impl"},
                                          {"/w/clip.py", "ImageTower.forward"},
                                          {"/w/clip.py", "CLIP.forward"},
                                          {"/w/clip.py", "Block.forward"},
                                          {"/w/clip.py", "Attn.forward"},
                                          {"/w/clip.py", "main"}};
    static const uint32_t stacks[][8] = {{1, 2, 3, 2, 4, 7}, {6, 2, 5, 2, 3, 2, 4, 7}};
    static const uint16_t depth[] = {6, 8};
    wbuf w = {0};
    w_header(&w, VT_VERSION_MAJOR, VT_VERSION_MINOR);
    for (uint32_t i = 0; i < sizeof code / sizeof code[0]; i++) {
        vt_rec_code c = {i + 1, 1};
        const char *names[3] = {code[i][0], code[i][1], ""};
        w_rec_strs(&w, VT_REC_CODE, 0, &c, sizeof c, names, 3);
    }
    for (uint32_t i = 0; i < 2; i++) {
        struct {
            vt_rec_stack s;
            uint64_t f[8];
        } st = {{i + 1, 0, depth[i]}, {0}};
        for (uint16_t k = 0; k < depth[i]; k++)
            st.f[k] = VT_PYFRAME(stacks[i][k], 0);
        w_rec_strs(&w, VT_REC_STACK, 0, &st, sizeof st.s + depth[i] * sizeof st.f[0], NULL, 0);
    }
    vt_rec_trailer tr = {2000, 0, 0, 0, 0, 0};
    w_rec_strs(&w, VT_REC_TRAILER, 0, &tr, sizeof tr, NULL, 0);
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

/* a Conv2d that made a sliver of the activations beside attention kernels is a patch embedding
 * (a vision transformer), not a convolutional network; the evidence names the modules that call
 * a convolution alone (ImageTower, not Block nor Attn) */
static void test_patch_conv(void **state)
{
    (void)state;
    tables *t = clip_tables();
    recognize_input in = {.t = t,
                          .tensor_mode = 1,
                          .forward_seen = 1,
                          .attention = 1,
                          .act_bytes = 1000,
                          .conv_act_bytes = 10,
                          .act_at = "at the peak"};
    run_recognition r;
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_VISION_TRANSFORMER);
    assert_non_null(strstr(r.family_where, "own module ImageTower) made 1.0 % of the activations "
                                           "live at the peak: a convolution at the input"));
    in.conv_act_bytes = 300; /* a CNN's share */
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_CONVNET);
    assert_string_equal(r.family_where,
                        "Conv2d layers (torch's conv.py) in the program's own modules ImageTower");
    in.conv_act_bytes = 0, in.attention = 0; /* no attention kernel: no transformer said */
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_CONVNET);
    in.attention = 1, in.act_bytes = 0; /* no activations measured: the layers decide, as before */
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_CONVNET);
    tables_free(t);
}

/* no frame names the model and no T is read (no position ids: a Llama-like model's own), but its
 * token batch is looked up in its V×d embedding beside repeating blocks: a transformer, from its
 * sizes; repeating blocks and an embedding with no token batch are none */
static void test_family_from_tokens(void **state)
{
    (void)state;
    infer_result ir;
    memset(&ir, 0, sizeof ir);
    ir.v[INFER_n_layer] = (infer_value){1, 4, "x"};
    ir.v[INFER_n_embd] = (infer_value){1, 512, "x"};
    ir.v[INFER_vocab_size] = (infer_value){1, 8000, "x"};
    recognize_input in = {.inferred = &ir};
    run_recognition r;
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_UNKNOWN);
    ir.v[INFER_tokens] = (infer_value){1, 2048, "x"};
    recognize_run(&in, &r);
    assert_int_equal(r.family, FAM_DECODER);
    assert_true(r.family_by_sizes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_patch_conv),
                                       cmocka_unit_test(test_family_from_tokens)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
