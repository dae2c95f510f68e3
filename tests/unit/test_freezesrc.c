/* test_freezesrc.c — whether a program freezes weights, from its recorded script
 * (analyzer/model/recognize/freezesrc.c): requires_grad_(False) or requires_grad = False in its
 * code, not under an if, elif, else or while up to its def; strings, comments, a comparison and
 * requires_grad=False as a constructor's argument say nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "freezesrc.h"
#include "vramtrace/trace_format.h"

static char g_where[100];

/* freezes: freeze_src of one recorded script src */
static int freezes(const char *src)
{
    config_recfile f = {
        .name = "/x/train.py", .data = src, .len = strlen(src), .kind = VT_FILE_ARG};
    config_files fs = {.n = 1, .f = &f, .recorded = 1};
    return freeze_src(&fs, g_where, sizeof g_where);
}

static void test_freezes(void **state)
{
    (void)state;
    /* diffusers' textual inversion: the UNet and VAE frozen, one embedding trained */
    assert_int_equal(freezes("def main():\n"
                             "    vae = load()\n"
                             "    vae.requires_grad_(False)\n"
                             "    unet.requires_grad_( False )\n"),
                     1);
    assert_string_equal(g_where, "train.py:3 requires_grad_(False)");
    /* a loop over the parameters, an attribute set */
    assert_int_equal(freezes("import torch\n"
                             "for p in backbone.parameters():\n"
                             "    p.requires_grad = False\n"),
                     1);
    assert_string_equal(g_where, "train.py:3 requires_grad = False");
    /* under with and try: they run */
    assert_int_equal(freezes("def f(m):\n"
                             "    with ctx:\n"
                             "        try:\n"
                             "            m.requires_grad_(False)\n"
                             "        except E:\n"
                             "            pass\n"),
                     1);
}

static void test_not_said(void **state)
{
    (void)state;
    /* a flag's branch (--freeze-backbone): whether the run took it is not known */
    assert_int_equal(freezes("def main():\n"
                             "    if a.freeze_backbone:\n"
                             "        for p in model.parameters():\n"
                             "            p.requires_grad_(False)\n"),
                     0);
    assert_int_equal(freezes("if x:\n    pass\nelse:\n    m.requires_grad = False\n"), 0);
    assert_int_equal(freezes("while k:\n    m.requires_grad_(False)\n"), 0);
    /* unfrozen, compared, a constructor's argument, a comment, a docstring */
    assert_int_equal(freezes("emb.requires_grad_(True)\n"
                             "if p.requires_grad == False:\n"
                             "    pass\n"
                             "t = torch.zeros(3, requires_grad=False)\n"
                             "# m.requires_grad_(False)\n"
                             "\"\"\"m.requires_grad_(False)\"\"\"\n"
                             "m.requires_grad = False_value\n"),
                     0);
    assert_string_equal(g_where, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_freezes),
        cmocka_unit_test(test_not_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
