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

/* datasrc_reaching: the names whose values reach the storage a call on physical line `line` of
 * src made (1-based): the names the logical line reads (`args.buffer_size` gives args and
 * buffer_size), and, where call_line > 0 (a line of the same source that called fn, the function
 * holding `line`, as its qualname gives it: "DeviceReplayBuffer.__init__", "make"), the names read
 * in that call's arguments that fn takes as a parameter the line reads (DeviceReplayBuffer(
 * args.buffer_size, "cuda") passes buffer_size as size, which torch.zeros(size, 4, 84, 84) reads;
 * a loader's batch_size=args.batch_size that the line does not read reaches nothing). Written
 * into out (n bytes) each between spaces (" args buffer_size size "); their count, 0 when the
 * line is not found. Nothing is executed. */
int datasrc_reaching(const char *src, size_t len, uint32_t line, const char *fn, uint32_t call_line,
                     char *out, size_t n);

#endif
