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

/* What modules_of_stack reads of a frame (modules_frame_class): a Python frame, one of the
 * program's own files, a forward, and that forward's kind (torch.nn's layer, PyTorch's own
 * forward that is no module and whether torch.compile's CompiledFunction, a single layer of
 * another library; none of these: the model's own module). */
enum {
    MODULES_PY = 1u << 0,
    MODULES_PROG = 1u << 1,
    MODULES_FWD = 1u << 2,
    MODULES_NN = 1u << 3,
    MODULES_TORCH_OWN = 1u << 4,
    MODULES_COMPILED = 1u << 5,
    MODULES_LEAF = 1u << 6,
};
unsigned modules_frame_class(const tables_frame *f);

/* modules_of_frames: modules_of_stack over n frames a caller gives by index: cls, frame i's
 * modules_frame_class (a caller may keep it per code object: it reads the qualname and file
 * alone); frame, frame i itself (buf: room it may fill), asked only of the frame named. */
typedef struct modules_frames {
    unsigned (*cls)(const void *ctx, size_t i);
    const tables_frame *(*frame)(const void *ctx, size_t i, tables_frame *buf);
    const void *ctx;
} modules_frames;
int modules_of_frames(const modules_frames *fr, size_t n, char *out, size_t len);

#endif
