/* modules.c — the module a tensor was made in (modules.h): the innermost module forward on its
 * Python stack, the model's own modules before single layers (torch.nn's, or a library's Linear /
 * Conv1D / norm / activation), so that a Linear inside an MLP counts for the MLP and a model built
 * from torch.nn layers alone still gets its layers. */
#include <stdio.h>
#include <string.h>

#include "modules.h"

static int is_forward(const char *q)
{
    size_t n = strlen(q);
    return (n >= 8 && !strcmp(q + n - 8, ".forward")) || !strcmp(q, "forward");
}

/* leaf_layer: a layer class (its name ends like a single torch.nn layer's: Linear, Conv1D,
 * LayerNorm, RMSNorm, an activation, Dropout): its allocations count for the module around it. */
static int leaf_layer(const char *q)
{
    static const char *const ends[] = {"Linear",    "Conv1D",  "Conv1d",     "Conv2d",  "Conv3d",
                                       "LayerNorm", "RMSNorm", "Activation", "Dropout", "GELU",
                                       "SiLU",      "ReLU",    "Identity",   NULL};
    const char *dot = strrchr(q, '.');
    size_t n = dot ? (size_t)(dot - q) : 0;
    for (const char *const *e = ends; n && *e; e++) {
        size_t m = strlen(*e);
        if (n >= m && !strncmp(q + n - m, *e, m))
            return 1;
    }
    return 0;
}

static const char *base_name(const char *file)
{
    const char *s = strrchr(file, '/');
    return s ? s + 1 : file;
}

/* module_text: "Class.forward", or "forward (file.py)" when the qualname names no class. */
static void module_text(const tables_frame *f, char *out, size_t len)
{
    const char *q = f->function ? f->function : "";
    if (strchr(q, '.'))
        snprintf(out, len, "%s", q);
    else
        snprintf(out, len, "%s (%s)", q, base_name(f->file ? f->file : ""));
}

unsigned modules_frame_class(const tables_frame *f)
{
    if (f->kind != TABLES_FRAME_PYTHON)
        return 0;
    const char *q = f->function ? f->function : "";
    const char *file = f->file ? f->file : "";
    unsigned c = MODULES_PY;
    /* a frame of the program's own (the "no module" line's), not a library's helper */
    if (f->file && !strstr(f->file, "/torch/") && !strstr(f->file, "-packages/") &&
        !strstr(f->file, "/simtorch/"))
        c |= MODULES_PROG;
    if (!is_forward(q))
        return c;
    c |= MODULES_FWD;
    if (strstr(file, "torch/nn/")) {
        c |= MODULES_NN;
    } else if (strstr(file, "/torch/_") || strstr(file, "/torch/autograd/")) {
        /* PyTorch's own forward that is no module: torch.compile's compiled graph
         * (AOTDispatchAutograd's CompiledFunction), an autograd.Function; the model's
         * module, if on the stack, is further out */
        c |= MODULES_TORCH_OWN | (strstr(q, "CompiledFunction") ? MODULES_COMPILED : 0);
    } else if (leaf_layer(q)) {
        c |= MODULES_LEAF;
    }
    return c;
}

int modules_of_frames(const modules_frames *fr, size_t n, char *out, size_t len)
{
    long layer = -1, own = -1, own_leaf = -1, first_py = -1, compiled = -1;
    for (size_t i = 0; i < n; i++) {
        unsigned c = fr->cls(fr->ctx, i);
        if (!(c & MODULES_PY))
            continue;
        if (first_py < 0)
            first_py = (long)i;
        if (!(c & MODULES_FWD))
            continue;
        if (c & MODULES_NN) {
            if (layer < 0)
                layer = (long)i;
        } else if (c & MODULES_TORCH_OWN) {
            if (compiled < 0 && (c & MODULES_COMPILED))
                compiled = (long)i;
        } else if (c & MODULES_LEAF) {
            if (own_leaf < 0)
                own_leaf = (long)i;
        } else {
            own = (long)i;
            break;
        }
    }
    if (own < 0)
        own = own_leaf;
    tables_frame buf;
    if (own >= 0 || layer >= 0) {
        module_text(fr->frame(fr->ctx, (size_t)(own >= 0 ? own : layer), &buf), out, len);
        return 1;
    }
    if (compiled >= 0) { /* the modules ran inside the graph: none of them is on the stack */
        snprintf(out, len, "(torch.compile's compiled graph: no module on the stack)");
        return 0;
    }
    if (first_py >= 0) {
        /* the program's own innermost frame, not a library's helper */
        long prog = first_py;
        for (size_t i = (size_t)first_py; i < n; i++)
            if ((fr->cls(fr->ctx, i) & (MODULES_PY | MODULES_PROG)) ==
                (MODULES_PY | MODULES_PROG)) {
                prog = (long)i;
                break;
            }
        const tables_frame *f = fr->frame(fr->ctx, (size_t)prog, &buf);
        snprintf(out, len, "(no module: %s %s)", base_name(f->file ? f->file : ""),
                 f->function ? f->function : "");
        return 0;
    }
    snprintf(out, len, "(no Python frames)");
    return 0;
}

/* an array of frames as modules_of_frames reads them */
static unsigned array_class(const void *ctx, size_t i)
{
    return modules_frame_class(&((const tables_frame *)ctx)[i]);
}

static const tables_frame *array_frame(const void *ctx, size_t i, tables_frame *buf)
{
    (void)buf;
    return &((const tables_frame *)ctx)[i];
}

int modules_of_stack(const tables_frame *f, size_t n, char *out, size_t len)
{
    modules_frames fr = {array_class, array_frame, f};
    return modules_of_frames(&fr, n, out, len);
}
