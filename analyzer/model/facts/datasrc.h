/* datasrc.h — data the program keeps on the device, read from the recorded script's source: the
 * lines of a plain class (no base, or object alone) or of a function outside any class, whose text
 * never makes nor names a weight. A tensor filled with a constant there before training (zeros,
 * ones, full, empty: storage made to be written later) is the program's data (a replay buffer on
 * the device, rollout storage, a ring buffer), not a weight: no module holds it and no gradient is
 * asked of it there. Nothing is executed. */
#ifndef VT_ANALYZER_DATASRC_H
#define VT_ANALYZER_DATASRC_H

#include <stddef.h>
#include <stdint.h>

/* datasrc_lines: sets bit in out[line] (1-based physical lines, line < n) of every line of src (len
 * bytes) that lies
 *  - inside classes each of which has no base but object (a class with a base may be a Module:
 *    its tensors may be its weights or buffers), the outermost one's text naming none of the words
 *    below, or
 *  - outside any class, inside a function whose text names none of them, or at the module's level,
 *    whose own lines (outside every function and class) name none of them.
 * The words: requires_grad, Parameter, parameters, forward (a weight made by hand, a module's
 * parameters, a forward written by hand). The count of lines set; 0 out of memory. */
size_t datasrc_lines(const char *src, size_t len, uint8_t *out, size_t n, uint8_t bit);

#endif
