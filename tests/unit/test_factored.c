/* test_factored.c — Adafactor's state where no step measured it (analyzer/model/advice/
 * model_factored.c, analyzer/model/facts/infer_sizes.c): the weights' sizes read as a row and a
 * column of each d × k matrix and the other tensors whole; a first moment only where the
 * script's Adafactor( call sets beta1 to something other than None. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "infer_pass.h"
#include "model_factored.h"
#include "vramtrace/trace_format.h"

static char g_where[100];

/* beta1_of: model_adafactor_beta1 of one recorded script src */
static int beta1_of(const char *src)
{
    config_recfile f = {
        .name = "/x/train.py", .data = src, .len = strlen(src), .kind = VT_FILE_ARG};
    config_files fs = {.n = 1, .f = &f, .recorded = 1};
    g_where[0] = '\0';
    return model_adafactor_beta1(&fs, g_where, sizeof g_where);
}

static void test_beta1(void **state)
{
    (void)state;
    /* torch's: no beta1; transformers' with its default (None) */
    assert_int_equal(beta1_of("opt = torch.optim.Adafactor(params, lr=1e-3, foreach=False)\n"), 0);
    assert_int_equal(beta1_of("opt = Adafactor(model.parameters(), beta1=None, lr=1e-3)\n"), 0);
    /* set: on the call's second line */
    assert_int_equal(beta1_of("import x\nopt = Adafactor(model.parameters(), lr=1e-3,\n"
                              "                beta1=0.9, relative_step=False)\n"),
                     1);
    assert_string_equal(g_where, "train.py:2");
    /* a variable's value is not read: counted */
    assert_int_equal(beta1_of("opt = Adafactor(ps, beta1 = args.beta1)\n"), 1);
    /* a nested call's keyword, a comment, a string, a class's definition: none */
    assert_int_equal(beta1_of("opt = Adafactor(groups(beta1=0.9), lr=1)\n"), 0);
    assert_int_equal(beta1_of("opt = Adafactor(ps)  # beta1=0.9 would add a moment\n"), 0);
    assert_int_equal(beta1_of("s = 'Adafactor(ps, beta1=0.9)'\n"), 0);
    assert_int_equal(beta1_of("class Adafactor(beta1=0.9):\n    pass\n"), 0);
    assert_int_equal(beta1_of("opt = MyAdafactor(ps, beta1=0.9)\n"), 0);
}

static void test_sizes(void **state)
{
    (void)state;
    /* a T5 block's kind of weights at d = 8: an embedding 32×8, q 8×8, a norm's 8, a 4×2 bias
     * table, an MLP's 8×32 */
    infer_result r;
    memset(&r, 0, sizeof r);
    r.v[INFER_n_embd].known = 1, r.v[INFER_n_embd].value = 8;
    const uint64_t elems[] = {256, 64, 8, 8, 256};
    vt__infer_factored(elems, 5, &r);
    assert_int_equal(r.factored_elems, (8 + 32) + (8 + 8) + 8 + 8 + (8 + 32));
    assert_int_equal(r.factored_of, 592);
    assert_int_equal(r.factored_mats, 3);
    assert_int_equal(r.factored_whole, 2);
    /* 4 B per element of the rows, columns and vectors; a first moment adds 4 B per weight */
    assert_true(model_factored_bpp(&r, 0) == 4.0 * 112 / 592);
    assert_true(model_factored_bpp(&r, 1) == 4.0 * 112 / 592 + 4.0);
    /* a vector of 3d elements (a fused q, k, v bias) is no matrix: whole */
    const uint64_t bias[] = {24};
    vt__infer_factored(bias, 1, &r);
    assert_int_equal(r.factored_elems, 24);
    /* no width: nothing read */
    r.v[INFER_n_embd].known = 0;
    vt__infer_factored(elems, 5, &r);
    assert_int_equal(r.factored_elems, 0);
    assert_true(model_factored_bpp(&r, 1) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_beta1),
        cmocka_unit_test(test_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
