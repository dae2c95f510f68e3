/* test_castsrc.c — the lines of a recorded script that cast to 16 bits (analyzer/model/facts/
 * castsrc.c): .half() / .bfloat16(), a .to( naming a 16-bit dtype alone, a .to( by a variable:
 * diffusers' weight_dtype (float32, and float16 / bfloat16 under if / elif tests of the mixed
 * precision: var), a conditional expression on the precision (var), a variable only ever 16-bit
 * (lit); not a .to( naming float32 too, a device, a variable assigned a model's dtype, nor a
 * 16-bit assignment under a test that says nothing of the precision; strings and comments say
 * nothing; a call over several lines marks them all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "castsrc.h"

static uint8_t g_lines[64];

/* cast: castsrc_lines of src with lit 32 and var 64 (other bits kept: the caller's) */
static size_t cast(const char *src)
{
    memset(g_lines, 1, sizeof g_lines);
    return castsrc_lines(src, strlen(src), g_lines, sizeof g_lines, 32, 64);
}

static int lit(int line)
{
    return (g_lines[line] & 32) != 0;
}

static int var(int line)
{
    return (g_lines[line] & 64) != 0;
}

static const char k_diffusers[] =
    "import torch\n"                                                  /* 1 */
    "weight_dtype = torch.float32\n"                                  /* 2 */
    "if accelerator.mixed_precision == 'fp16':\n"                     /* 3 */
    "    weight_dtype = torch.float16\n"                              /* 4 */
    "elif accelerator.mixed_precision == 'bf16':\n"                   /* 5 */
    "    weight_dtype = torch.bfloat16\n"                             /* 6 */
    "vae.to(accelerator.device, dtype=weight_dtype)\n"                /* 7 */
    "unet.to(\n"                                                      /* 8 */
    "    accelerator.device, dtype=weight_dtype)\n"                   /* 9 */
    "controlnet = accelerator.prepare(controlnet)\n"                  /* 10 */
    "x = batch.to(weight_dtype)\n"                                    /* 11 */
    "model.to(device, dtype=torch.float16)\n"                         /* 12 */
    "model.to(device, dtype=torch.float16 if a else torch.float32)\n" /* 13 */
    "model.to(device)\n"                                              /* 14 */
    "teacher = Net().cuda().half()\n"                                 /* 15 */
    "s = 'm.to(torch.float16)'  # m.half()\n"                         /* 16 */
    "enc.to('cuda', dtype=torch.bfloat16)\n";                         /* 17 */

static void test_diffusers(void **state)
{
    (void)state;
    assert_true(cast(k_diffusers) > 0);
    for (int l = 1; l <= 6; l++) /* the assignments themselves cast nothing */
        assert_false(lit(l) || var(l));
    assert_true(var(7) && !lit(7));
    assert_true(var(8) && var(9)); /* (a call over two lines) */
    assert_false(lit(10) || var(10));
    assert_true(var(11)); /* (an input's cast: the report counts weights alone) */
    assert_true(lit(12));
    assert_false(lit(13) || var(13)); /* float32 too */
    assert_false(lit(14) || var(14));
    assert_true(lit(15));
    assert_false(lit(16) || var(16)); /* a string and a comment */
    assert_true(lit(17));
    assert_int_equal(g_lines[1], 1); /* (other bits kept) */
}

static void test_variables(void **state)
{
    (void)state;
    /* a conditional expression on the precision (textual inversion's) */
    cast("wd = torch.float16 if args.mixed_precision == 'fp16' else torch.float32\n"
         "unet = unet.to('cuda', dtype=wd)\n");
    assert_true(var(2) && !lit(2));
    /* 16-bit whatever the run: its only assignment */
    cast("dt = torch.bfloat16\nmodel.to(dt)\n");
    assert_true(lit(2));
    /* a model's dtype: not known here */
    cast("dt = torch.float32\nif args.fp16:\n    dt = unet.dtype\nvae.to(dev, dtype=dt)\n");
    assert_false(lit(4) || var(4));
    /* a 16-bit assignment under a test that names no precision */
    cast("dt = torch.float32\nif args.small:\n    dt = torch.float16\nvae.to(dev, dtype=dt)\n");
    assert_false(lit(4) || var(4));
    /* ... under an else whose chain's test names it */
    cast("if args.mixed_precision == 'no':\n    dt = torch.float32\nelse:\n    dt = torch.half\n"
         "vae.to(dev, dtype=dt)\n");
    assert_true(var(5));
    /* a device variable and a float32 one */
    cast("device = torch.device('cuda')\ndt = torch.float32\nm.to(device)\nm.to(device, dt)\n");
    assert_false(lit(3) || var(3) || lit(4) || var(4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diffusers),
        cmocka_unit_test(test_variables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
