/* test_autocastsrc.c — which 16 bits a program's autocast computes in, from its recorded script
 * (analyzer/model/recognize/autocastsrc.c): the dtype its autocast calls name literally; a
 * variable's, calls that disagree, strings and comments say nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "autocastsrc.h"
#include "vramtrace/trace_format.h"

static char g_where[100];

/* dtype_of: autocast_src_dtype of one recorded script src */
static int dtype_of(const char *src)
{
    config_recfile f = {
        .name = "/x/train.py", .data = src, .len = strlen(src), .kind = VT_FILE_ARG};
    config_files fs = {.n = 1, .f = &f, .recorded = 1};
    return autocast_src_dtype(&fs, g_where, sizeof g_where);
}

static void test_named(void **state)
{
    (void)state;
    /* fp16 with the loss scaled by hand: no GradScaler, and float16 all the same */
    assert_int_equal(dtype_of("import torch\n"
                              "for x in data:\n"
                              "    with torch.autocast('cuda', dtype=torch.float16):\n"
                              "        loss = model(x)\n"
                              "    (loss * 65536).backward()\n"),
                     1);
    assert_string_equal(g_where, "train.py:3 autocast(..., float16)");
    assert_int_equal(dtype_of("with torch.amp.autocast(device_type='cuda',\n"
                              "                        dtype=torch.bfloat16):\n"
                              "    y = m(x)\n"),
                     2);
    assert_int_equal(dtype_of("with torch.cuda.amp.autocast(dtype=torch.half):\n    y = m(x)\n"),
                     1);
    /* its line counts the lines a docstring and a call's arguments span */
    assert_int_equal(dtype_of("\"\"\"train\n\nit.\"\"\"\n"
                              "a = torch.autocast('cuda', dtype=torch.float16,\n"
                              "                   enabled=True)\n"
                              "b = torch.autocast('cuda', dtype=torch.float16)\n"),
                     1);
    assert_string_equal(g_where, "train.py:4 autocast(..., float16)");
}

static void test_not_known(void **state)
{
    (void)state;
    /* nanoGPT's: a variable */
    assert_int_equal(dtype_of("ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype)\n"),
                     0);
    /* a variable's beside a literal: which one ran is not known */
    assert_int_equal(dtype_of("a = torch.autocast('cuda', dtype=ptdtype)\n"
                              "b = torch.autocast('cuda', dtype=torch.float16)\n"),
                     0);
    /* two calls that disagree */
    assert_int_equal(dtype_of("a = torch.autocast('cuda', dtype=torch.float16)\n"
                              "b = torch.autocast('cuda', dtype=torch.bfloat16)\n"),
                     0);
    /* a comment and a docstring name one, no call does */
    assert_int_equal(dtype_of("\"\"\"uses torch.autocast('cuda', dtype=torch.float16)\"\"\"\n"
                              "# torch.autocast('cuda', dtype=torch.bfloat16)\n"
                              "y = m(x)\n"),
                     0);
    /* no dtype given (the device's default): not said */
    assert_int_equal(dtype_of("with torch.autocast('cuda'):\n    y = m(x)\n"), 0);
    /* a name that merely ends in autocast( */
    assert_int_equal(dtype_of("y = my_autocast(dtype=torch.float16)\n"), 0);
    /* a call not closed */
    assert_int_equal(dtype_of("with torch.autocast('cuda', dtype=torch.float16"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named),
        cmocka_unit_test(test_not_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
