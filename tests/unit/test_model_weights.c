/* test_model_weights.c — weights whose element size the trace does not give
 * (analyzer/model/advice/model_trace.c: model_weights_untyped, and model_trace_dtype with them):
 * a frozen base beside fp32 trained weights is counted in bytes, not at 4 B an element, and its
 * compute is not called fp32 from the trained weights alone; buffers, a frozen model autocast
 * copied (fp32) and fp32 logits made from the frozen weights leave the count as it was. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "model_trace.h"

#define MB (1000ull * 1000ull)

static char dir[256] = "/nonexistent";

#include "model_facts.h"

/* a QLoRA-like run: 160 M fp32 trained weights (640 MB, their gradients' size), 4160 MB of
 * weights beside them that took no gradient, no autocast copy, two optimizer steps */
static void qlora(model_result *m, run_facts *f, infer_result *ir)
{
    memset(m, 0, sizeof *m);
    memset(f, 0, sizeof *f);
    memset(ir, 0, sizeof *ir);
    ir->v[INFER_param_dtype_bytes] = (infer_value){1, 4, "assumed: fp32 parameters"};
    f->inferred = ir;
    f->tensor_mode = f->has_cat_peaks = f->casts_visible = 1;
    f->compile_frames = MODEL_COMPILE_NOT_SEEN;
    f->iterations = 2;
    f->cat_peak[CAT_PARAMETERS] = 4800 * MB;
    m->rec.trainable = 160 * MB, m->rec.state_elem = 4;
    m->params_trace = 1200 * MB;
}

static void test_untyped(void **state)
{
    (void)state;
    model_result m;
    run_facts f;
    infer_result ir;
    qlora(&m, &f, &ir);
    assert_int_equal(model_weights_untyped(&m, &f), 4160 * MB);
    /* the trained ones' bytes less, an EMA's copy less */
    f.ema_at_peak = 160 * MB;
    assert_int_equal(model_weights_untyped(&m, &f), 4000 * MB);
    /* buffers beside a model that trains all its weights (under 1/16 of them): none */
    qlora(&m, &f, &ir);
    f.cat_peak[CAT_PARAMETERS] = 680 * MB;
    assert_int_equal(model_weights_untyped(&m, &f), 0);
    /* a frozen base autocast copied (fp32), its embedding never cast beside it (under 1/4) */
    qlora(&m, &f, &ir);
    m.rec.trainable = 2 * MB;
    f.cat_peak[CAT_PARAMETERS] = 1500 * MB;
    f.fwd0_copies_made = 685 * MB; /* (1370 MB of fp32 weights) */
    assert_int_equal(model_weights_untyped(&m, &f), 0);
    /* ... a larger share never copied (a frozen encoder cast to fp16): said */
    f.fwd0_copies_made = 300 * MB;
    assert_int_equal(model_weights_untyped(&m, &f), 1492 * MB);
    /* 16-bit weights read from their sizes, fp32 logits made from them, no trained count, no
     * weights read, segments only, a trained count that is a lower bound (the rest may train):
     * none */
    static const int cases = 6;
    for (int i = 0; i < cases; i++) {
        qlora(&m, &f, &ir);
        if (i == 0)
            ir.v[INFER_param_dtype_bytes].value = 2;
        else if (i == 1)
            ir.v[INFER_logits_dtype_bytes] = (infer_value){1, 4, "fp32 logits only"};
        else if (i == 2)
            m.rec.trainable = 0;
        else if (i == 3)
            m.params_trace = 0;
        else if (i == 4)
            m.rec.trainable_lower = 1;
        else
            f.tensor_mode = 0;
        assert_int_equal(model_weights_untyped(&m, &f), 0);
    }
}

static void test_dtype(void **state)
{
    (void)state;
    model_result m;
    run_facts f;
    infer_result ir;
    qlora(&m, &f, &ir);
    nano_config c;
    /* fp32 trained weights over whole steps with no copy: fp32 compute where nothing else is */
    config_init(&c);
    config_reset(&c, CFG_dtype);
    model_trace_dtype(&c, &f, 0);
    assert_string_equal(c.v[CFG_dtype].s, "float32");
    /* ... not known beside weights with no element size known, said */
    config_init(&c);
    config_reset(&c, CFG_dtype);
    model_trace_dtype(&c, &f, model_weights_untyped(&m, &f));
    assert_int_not_equal(c.v[CFG_dtype].src, CONFIG_SRC_TRACE);
    assert_non_null(strstr(c.v[CFG_dtype].where, "3.87 GiB of weights take no gradient"));
    assert_non_null(strstr(c.v[CFG_dtype].where, "not known"));
}

/* out of memory before any backward with no P read (a latent DiT's), the trainable count a
 * copy among the weights told (at least: an EMA's of the trained model) is the share of the
 * weights' bytes that gradients and optimizer state are predicted for, not all of them */
static void test_copy_share(void **state)
{
    (void)state;
    static model_result m;
    run_facts f;
    oom_facts(&f);
    run_recognition rec;
    memset(&rec, 0, sizeof rec);
    rec.trainable = 100 * MB, rec.trainable_lower = 1, rec.param_elem = rec.state_elem = 4;
    f.recog = &rec;
    f.tensor_mode = f.has_cat_peaks = 1;
    f.cat_peak[CAT_PARAMETERS] = 1000 * MB; /* (250 M weights at 4 B: the trained 40 %) */
    model_opts o;
    memset(&o, 0, sizeof o);
    char err[256];
    assert_int_equal(model_build(&m, &f, &o, err, sizeof err), 0);
    assert_true(fabs(m.shape.train_frac - 0.4) < 1e-9);
}

/* the trainable row's words of the weights that take no gradient: the packed 4-bit ones'
 * elements counted (2 a byte), the rest's not; all packed: all counted */
static void test_untyped_said(void **state)
{
    (void)state;
    model_result m;
    char out[400];
    memset(&m, 0, sizeof m);
    m.weights_untyped = 3 * 1073741824ull;
    model_untyped_said(&m, out, sizeof out);
    assert_string_equal(out, "3.00 GiB of weights take no gradient, their element count not known "
                             "(the trace does not give their dtype)");
    m.untyped_packed = 2 * 1073741824ull;
    model_untyped_said(&m, out, sizeof out);
    assert_non_null(strstr(out, "3.00 GiB of weights take no gradient: 2.00 GiB of them packed "
                                "two 4-bit elements a byte (4294.97 M elements: "));
    assert_non_null(strstr(out, "the other 1.00 GiB's element count not known"));
    m.untyped_packed = m.weights_untyped;
    model_untyped_said(&m, out, sizeof out);
    assert_non_null(strstr(out, "3.00 GiB of weights take no gradient, all packed two 4-bit "
                                "elements a byte (6442.45 M elements"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untyped),
        cmocka_unit_test(test_untyped_said),
        cmocka_unit_test(test_dtype),
        cmocka_unit_test(test_copy_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
