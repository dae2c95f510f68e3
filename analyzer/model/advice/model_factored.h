/* model_factored.h — Adafactor's state where no step measured it (model_factored.c): estimated
 * from the weights' sizes the trace shows (infer_result.factored_elems: a row and a column of
 * each d × k matrix, the other tensors whole) and from the script's Adafactor( call (a first
 * moment only where it sets beta1). Called by model.c only. */
#ifndef VT_ANALYZER_MODEL_FACTORED_H
#define VT_ANALYZER_MODEL_FACTORED_H

#include "model.h"

/* model_factored_state: where m's optimizer is Adafactor, named and not measured, over matrices
 * (no convolution's kernels) and every weight trained, its bound (optim_bound_bpp's 1 B per
 * parameter) replaced by the estimate: m->shape.opt_bpp set, m->opt_bound cleared, m->opt_est
 * said. Nothing changes where the trace gave no width or the run measured the state. */
void model_factored_state(model_result *m, const run_facts *f);

/* model_factored_bpp: the state bytes per weight element ir's sizes give Adafactor: 4 B for each
 * row, column or whole vector's element (fp32), over ir->factored_of elements, plus 4 B per
 * element, a first moment, where beta1 is set; 0 where nothing was read */
double model_factored_bpp(const infer_result *ir, int beta1);

/* model_adafactor_beta1: where one of the recorded script's Adafactor( calls sets beta1= to
 * anything but None (transformers' Adafactor then keeps a first moment, one fp32 state per
 * parameter; torch.optim.Adafactor takes no beta1; a variable's value, not read, is counted):
 * 1, and "train.py:47" in where; else 0 (no call, or beta1 not given: its default None) */
int model_adafactor_beta1(const config_files *fs, char *where, size_t cap);

#endif
