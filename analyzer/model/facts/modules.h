/* modules.h — the nn.Module a tensor was made in, from its recorded Python stack (modules.c):
 * the innermost module forward of the model's own code (a class outside torch/nn that is not a
 * single layer, e.g. "GPT2MLP"), else the innermost layer ("Conv1D", torch.nn's "Conv2d"), else
 * no module. Read from the stacks
 * the capture already took, without the GIL. */
#ifndef VT_ANALYZER_MODULES_H
#define VT_ANALYZER_MODULES_H

#include <stddef.h>

#include "tables.h"

/* modules_of_stack: the module of a stack (frames innermost first, as tables_resolve_stack
 * gives them) into out: "GPT2MLP.forward" (3.11+ qualnames), "forward (model.py)" when the
 * qualname has no class (Python 3.10); PyTorch's own forwards that are no module (an
 * autograd.Function's) are passed over, and when torch.compile's CompiledFunction was the only
 * one, "(torch.compile's compiled graph: no module on the stack)"; "(no module: train.py main)"
 * when no forward is on the
 * stack but a Python frame is; "(no Python frames)" otherwise. Returns 1 when a module's
 * forward was found, 0 otherwise. Raw trace text: escape before printing. */
int modules_of_stack(const tables_frame *f, size_t n, char *out, size_t len);

#endif
