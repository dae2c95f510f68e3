/* test_optsrc.c — the body lines of the program's own optimizer classes (analyzer/model/facts/
 * optsrc.c): a class whose bases name Optimizer (alone or dotted: torch.optim.Optimizer), at any
 * depth, its methods' lines all (SAM's first_step keeps old_p there), the header's not; not a
 * class whose base only contains the word (OptimizerWrapper, Optimizers), not a Module, nor the
 * lines after the class; strings and comments say nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "optsrc.h"

static uint8_t g_lines[64];

/* opt: optsrc_lines of src with bit 8 (other bits kept: the caller's); the count set */
static size_t opt(const char *src)
{
    memset(g_lines, 1, sizeof g_lines);
    return optsrc_lines(src, strlen(src), g_lines, sizeof g_lines, 8);
}

static int on(int line)
{
    return (g_lines[line] & 8) != 0;
}

static const char k_sam[] = "import torch\n"                                         /* 1 */
                            "class SAM(torch.optim.Optimizer):\n"                    /* 2 */
                            "    def __init__(self, params, base):\n"                /* 3 */
                            "        super().__init__(params, {})\n"                 /* 4 */
                            "    @torch.no_grad()\n"                                 /* 5 */
                            "    def first_step(self):\n"                            /* 6 */
                            "        for p in self.params:\n"                        /* 7 */
                            "            self.state[p]['old_p'] = p.data.clone()\n"  /* 8 */
                            "class Net(nn.Module):\n"                                /* 9 */
                            "    def forward(self, x):\n"                            /* 10 */
                            "        return x.clone()\n"                             /* 11 */
                            "def main():\n"                                          /* 12 */
                            "    class Lion(Optimizer):\n"                           /* 13 */
                            "        def step(self):\n"                              /* 14 */
                            "            pass\n"                                     /* 15 */
                            "    opt = SAM(net.parameters(), torch.optim.SGD)\n"     /* 16 */
                            "    s = 'class X(Optimizer):'  # class Y(Optimizer):\n" /* 17 */
                            "class Wrap(OptimizerWrapper):\n"                        /* 18 */
                            "    def step(self):\n"                                  /* 19 */
                            "        pass\n"                                         /* 20 */
                            "class Many(Optimizers):\n"                              /* 21 */
                            "    x = 1\n";                                           /* 22 */

static void test_sam(void **state)
{
    (void)state;
    assert_true(opt(k_sam) > 0);
    assert_false(on(1));
    assert_false(on(2));         /* the header */
    for (int l = 3; l <= 8; l++) /* its body, the decorator's line too */
        assert_true(on(l));
    for (int l = 9; l <= 12; l++) /* a Module's, and what follows the class */
        assert_false(on(l));
    assert_false(on(13)); /* a nested class's header */
    assert_true(on(14));
    assert_true(on(15));
    assert_false(on(16));          /* the function's own lines after it */
    assert_false(on(17));          /* a string and a comment */
    for (int l = 18; l <= 22; l++) /* a base that only contains the word */
        assert_false(on(l));
    assert_int_equal(g_lines[1], 1); /* (other bits kept) */
}

static void test_none(void **state)
{
    (void)state;
    assert_int_equal(opt("import torch\nopt = torch.optim.AdamW(p)\n"), 0);
    assert_int_equal(opt("class Optimizer:\n    pass\n"), 0); /* (defining one: no base) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sam),
        cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
