/* evalsrc_flow.h — whether what a no_grad block computes feeds a later backward (evalsrc.c's
 * inline evaluations): a rollout or generation pass whose outputs the step trains on is the
 * step's, not an evaluation. Private to evalsrc.c. */
#ifndef VT_ANALYZER_EVALSRC_FLOW_H
#define VT_ANALYZER_EVALSRC_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "pysrc.h" /* (lline) */

/* the most lines after a block walked for its names (a longer function: none found there) */
#define EVALSRC_FLOW_LINES 1000

/* evalsrc_feeds_backward: a name the block bound — assigned (`x = ...`, `a, b = ...`, `for x
 * in`, `with ... as x`) or filled (`x.append(`, `x[i] =`) by its body: the code after the colon
 * of line w when one, else the lines (w, e) — and did not del, is read by a line among [e, to)
 * that calls .backward(, directly or through names later lines bound from it (a name bound again
 * from none of them no longer counts), or, where again < w, by one among [again, w) after those
 * (a loop's body before the block: the next iteration's lines, which the names bound at its end
 * reach). c: the cleaned source, L its logical lines. */
int evalsrc_feeds_backward(const char *c, const lline *L, size_t w, int one, size_t e, size_t to,
                           size_t again);

#endif
