/* optsrc.h — the program's own optimizer classes, read from the recorded script's source: the
 * lines of the body of a class whose bases name an Optimizer (`class SAM(torch.optim.Optimizer):`,
 * `class Lion(Optimizer):`). What such a class's methods make on the device and keep is its
 * state, as what torch's optimizers make in their step() is, whatever the method (SAM's
 * first_step keeps a copy of every weight, state["old_p"], outside step()). Nothing is executed. */
#ifndef VT_ANALYZER_OPTSRC_H
#define VT_ANALYZER_OPTSRC_H

#include <stddef.h>
#include <stdint.h>

/* optsrc_lines: sets bit in out[line] (1-based physical lines, line < n) of every line of src
 * (len bytes) inside the body of a class whose header's bases name Optimizer as a whole name (its
 * last dotted part: Optimizer, torch.optim.Optimizer; not Optimizers, not OptimizerWrapper), at
 * any depth; the header's own lines not. The count of lines set; 0 out of memory. */
size_t optsrc_lines(const char *src, size_t len, uint8_t *out, size_t n, uint8_t bit);

#endif
