/* castsrc.h — the lines of a recorded script that cast to 16 bits, read from its source: what a
 * weight made there holds is 16-bit (diffusers' `unet.to(accelerator.device, dtype=weight_dtype)`
 * under --mixed_precision fp16: a frozen U-Net of 2-byte elements, which the trace's sizes alone
 * do not tell from fp32 ones). Nothing is executed. */
#ifndef VT_ANALYZER_CASTSRC_H
#define VT_ANALYZER_CASTSRC_H

#include <stddef.h>
#include <stdint.h>

/* castsrc_lines: sets lit in out[line] (1-based physical lines of a logical line, line < n) of
 * every line of src (len bytes) whose code holds
 *  - X.half( or X.bfloat16(, or
 *  - a call X.to(...) whose arguments name a 16-bit dtype (torch.float16, torch.half,
 *    torch.bfloat16) and no other floating one (torch.float32, torch.float, torch.float64),
 *    or name, as dtype=NAME or a bare positional NAME, a variable every assignment of which in
 *    the script gives only 16-bit dtypes;
 * and var where NAME's assignments give float32 too, each 16-bit one under a condition that names
 * the precision (an if / elif header, or a conditional expression's test, whose text says
 * precision, fp16, bf16, float16, bfloat16, half, amp or mixed: diffusers' `weight_dtype =
 * torch.float16` under `if accelerator.mixed_precision == "fp16":`): 16-bit where the run's own
 * precision is (the caller's to know). A NAME assigned anything else (a model's .dtype, a
 * lookup) marks nothing. The count of lines set; 0 out of memory. */
size_t castsrc_lines(const char *src, size_t len, uint8_t *out, size_t n, uint8_t lit, uint8_t var);

#endif
