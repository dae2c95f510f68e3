/* scriptpass.h — what a recorded training script's source says of its loop that a trace may not
 * show (scriptpass.c): an evaluation pass it would run later (a validation every N steps, which a
 * run that died in its first step never reached), and a state it carries from one batch to the
 * next (truncated backpropagation through time: a recurrent model's hidden state, detached and
 * fed back). Nothing is executed; strings and comments say nothing. */
#ifndef VT_ANALYZER_SCRIPTPASS_H
#define VT_ANALYZER_SCRIPTPASS_H

#include <stddef.h>
#include <stdint.h>

/* scriptpass_eval: the first line (1-based) of an evaluation pass of src (len bytes): a line of
 * an inline evaluation or of a no_grad pass of its own (evalsrc_lines' 1), else the def line of a
 * function named like an evaluation (phases_eval_function: validation_step, evaluate) that the
 * script calls somewhere besides its def, in a script that calls .backward(; 0 when none. name
 * gets that def's name, or "" (an inline one); def, for an inline one, the name of the def whose
 * block holds it (a no_grad sample()'s: "sample"), or "". */
uint32_t scriptpass_eval(const char *src, size_t len, char *name, size_t n, char *def, size_t dn);

/* scriptpass_carried: a state the script carries across batches: a name N that one line of a
 * loop rebinds from itself detached (`hidden = [(h.detach(), c.detach()) for h, c in hidden]`,
 * `h = h.detach()`, or through a def of the script that calls .detach(: `hidden =
 * repackage_hidden(hidden)`) and another line of the same loop rebinds from a call that takes N
 * (`out, hidden = model(data, hidden)`), in a function that calls .backward(. The detaching
 * line's number (1-based), N in name; 0 when none. */
uint32_t scriptpass_carried(const char *src, size_t len, char *name, size_t n);

#endif
