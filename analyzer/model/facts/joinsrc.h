/* joinsrc.h — whether the line of a recorded script that made a tensor joins several tensors
 * along their first dimension (torch.cat([chosen, rejected], dim=0)): a token batch made so holds
 * the sequences of each part, more than the batch flag counts (a DPO loop's --batch_size pairs,
 * each a chosen and a rejected sequence); or folds a tensor's leading dimensions into one (a
 * video model's clips into frames). Read from the script's code; nothing is executed. */
#ifndef VT_ANALYZER_JOINSRC_H
#define VT_ANALYZER_JOINSRC_H

#include <stddef.h>

#include "tables.h"

/* joinsrc_code: k >= 2 when code (len bytes of a logical line, strings and comments blanked:
 * pysrc_clean) calls torch.cat / concat / concatenate / vstack / row_stack on a literal list or
 * tuple of k names or expressions (no comprehension, no *unpacking) along dimension 0 (dim=0,
 * axis=0, a second argument 0, or none given); *at, *end: where the call begins and ends. 0 when
 * it does not. */
int joinsrc_code(const char *code, size_t len, size_t *at, size_t *end);

/* joinsrc_stack: k >= 2 when the innermost Python frame of st in a recorded script lies on a
 * line that joins k tensors so (joinsrc_code), or that copies to the device (.to( / .cuda() a name
 * an earlier line of the same block bound to such a join; said, when given: "FILE:LINE
 * torch.cat([chosen, rejected], dim=0)". 0 when not, or no recorded script holds the frame. */
int joinsrc_stack(const tables *t, const tables_stack *st, char *said, size_t len);

/* joinsrc_fold_code: 1 when code (len bytes of a logical line, strings and comments blanked)
 * calls .view( / .reshape( with a first argument of -1 or a product (b * t), or .flatten(0, 1);
 * *at, *end: where the call, its receiver's name first (input.view(...)), begins and ends. 0 when
 * it does not. */
int joinsrc_fold_code(const char *code, size_t len, size_t *at, size_t *end);
/* joinsrc_folds: 1 when the innermost Python frame of st in a recorded script lies on a line
 * that folds a tensor's leading dimensions into one (.view(-1, ...) / .reshape(-1, ...), a product
 * first: .view(b * t, c, h, w), or .flatten(0, 1)): a video model's clips made frames, B·T images
 * of a batch of B samples; said as joinsrc_stack's. 0 when not, or no recorded script holds it. */
int joinsrc_folds(const tables *t, const tables_stack *st, char *said, size_t len);

#endif
