/* phases_bits.h — private to phases.c, phases_native.c and phases_own.c: the bits a frame says (a
 * stack's facts OR them over its frames), and the reading of a native frame's symbol. */
#ifndef VT_ANALYZER_PHASES_BITS_H
#define VT_ANALYZER_PHASES_BITS_H

#include <stdint.h>

/* What one frame says, as bits (a stack's facts OR them over its frames): Python frames by
 * their code object's qualname and file, native frames by their symbol. */
enum {
    FB_BWD = 1 << 0,
    FB_OPT = 1 << 1,
    FB_GS = 1 << 2,
    FB_GS_SCALE = 1 << 3,
    FB_EVAL = 1 << 4,
    FB_DATA = 1 << 5,
    FB_RUN = 1 << 6,
    FB_COMPILE = 1 << 7,
    FB_FWD = 1 << 8,
    FB_INIT = 1 << 9,
    FB_LOSS = 1 << 10,
    FB_LIBRARY = 1 << 11, /* a Python frame of torch / site-packages (not the program's own) */
    FB_TO_COPY = 1 << 12,
    FB_RAND = 1 << 13,
    FB_WORKSPACE = 1 << 14,
    FB_ATTENTION = 1 << 15,
    FB_FOREIGN = 1 << 16, /* a Python frame of neither torch nor an optimizer's own package */
    FB_KV = 1 << 17,      /* a Python frame of transformers' KV cache */
    FB_NOISE = 1 << 18,   /* random floats made (randn, rand, normal): a diffusion step's noise */
    FB_ENGINE = 1 << 19,  /* a native frame of the autograd engine (its threads' work) */
    FB_FUSED_ATTN =
        1 << 20, /* a fused attention kernel's (flash, efficient, cudnn): not sdpa's math */
    FB_DROPOUT = 1 << 21, /* dropout's forward (native_dropout: its output and 1-byte mask) */
    /* what phases_site_step asks of a Python frame's file (no phase reads them) */
    FB_TORCH_FILE = 1 << 22, /* torch_or_optimizer_file */
    FB_LOOP_FILE = 1 << 23,  /* framework_loop_file */
    FB_OP = 1 << 24,         /* a native frame of an ATen operator's dispatch (at::_ops::) */
    FB_MODEL_OP = 1 << 25,   /* a native frame of an operator only a model's forward runs */
    FB_CLONE = 1 << 26,      /* a copy on the device (clone): a batch's, or a weight's kept */
    FB_TO_DTYPE = 1 << 27,   /* aten::to with a dtype alone (.float(), .to(dtype)): a cast on the
                              * tensor's own device, no move (at::_ops::to_dtype::) */
    FB_AUTOCAST = 1 << 28,   /* autocast's cast of an operator's input (at::autocast::) */
    FB_FILLED = 1 << 29,     /* storage made filled with a constant, or uninitialised (zeros,
                              * ones, full, empty; not a tensor's *_like copy of a shape) */
    FB_DATA_LINE = 1 << 30,  /* (phases_acc_mark_data) its own line keeps data (datasrc.h) */
};
/* a softmax's forward (softmax, softmax_int, _softmax; not log_softmax nor a backward): a plain
 * attention's weights over its S·H·T·T scores, where it is the op the caller called (phases_acc
 * op_last); the last bit, past an enum's int */
#define FB_SOFTMAX 0x80000000u

/* phases_native_bits: what a native frame says, from its function's name (demangled) */
uint32_t phases_native_bits(const char *fn);
/* phases_optim_ctor (phases_optim.c): qualname q is (or is nested in) the __init__ of a class an
 * optimizer's name names ("Adagrad.__init__", "Adam.__init__.<locals>.<dictcomp>"; one of
 * torch.optim's names, or one ending in Optimizer): a program's own optimizer, whose state made
 * at construction is its state (OpenAI ES's Adam, a hand-written Adagrad, as torch.optim.Adagrad
 * makes its sums); its state had been counted as parameters. Python 3.10's frames name no class:
 * not told there. */
int phases_optim_ctor(const char *q);

#endif
