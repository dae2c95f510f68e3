/* phases.h — training phases (forward, backward, optimizer, eval, ...) told from an event's
 * stack and thread role, and the allocation site a report names for it. */
#ifndef VT_ANALYZER_PHASES_H
#define VT_ANALYZER_PHASES_H

#include <stddef.h>
#include <stdint.h>

#include "tables.h"

/* X(ENUM, "name", "how it is recognised") — precedence is the order of phases_of(). */
#define VT_PHASES(X)                                                                               \
    X(INIT, "init", "model construction / .to(device), before the first forward")                  \
    X(FORWARD, "forward", "the main thread outside backward / optimizer (eager or compiled)")      \
    X(BACKWARD, "backward", "an autograd thread, or under backward()")                             \
    X(OPTIMIZER, "optimizer", "under torch/optim/ or GradScaler.step, or freeing gradients")       \
    X(EVAL, "eval", "under estimate_loss / evaluate (no_grad evaluation)")                         \
    X(DATA, "data", "under get_batch or torch/utils/data")                                         \
    X(COMPILE, "compile", "under torch/_dynamo or torch/_inductor")                                \
    X(OTHER, "other", "none of the above")

typedef enum phase {
#define VT_PHASE_ENUM(e, name, doc) PHASE_##e,
    VT_PHASES(VT_PHASE_ENUM)
#undef VT_PHASE_ENUM
        PHASE_COUNT
} phase;

/* Facts about one stack, computed once per stack id. */
typedef struct stack_facts {
    uint8_t phase;   /* enum phase, from the frames alone (OTHER if nothing matched) */
    uint8_t loss;    /* 1: a cross_entropy / log_softmax / nll_loss frame */
    uint8_t to_copy; /* 1: made by a dtype conversion (a native _to_copy frame) */
    uint8_t has_python;
    uint8_t workspace; /* 1: under cuBLAS's handle / workspace (a library workspace); with input,
                        * a copy on the device the program made itself (phases_acc_end) */
    uint8_t attention; /* 1: under a fused attention kernel (sdpa, flash, efficient, cudnn) */
    uint8_t input;     /* 1: the program's own code makes / copies a batch onto the device */
    uint8_t engine;    /* 1: a native frame of the autograd engine (torch::autograd::Engine): what
                        * backward made on the engine's threads, not on the calling thread before
                        * it ran (the starting gradient: _make_grads' ones_like of the loss) */
    uint8_t fused_attention; /* 1: under a fused attention kernel (flash, efficient, cudnn; not
                              * sdpa's math path, which makes the scores of a plain one) */
    uint8_t dropout;         /* 1: made by dropout's forward (native_dropout) */
    uint8_t kv;              /* 1: under transformers' KV cache (PHASES_KV_CACHE_FILE) */
    uint8_t op; /* 1: its native frames reach an ATen operator (at::_ops::): what made it, a cast, a
                 * workspace or a fused kernel, can be told */
    uint8_t model_op; /* 1: its native frames reach an operator only a model's forward runs (a
                       * matmul, convolution, normalization, attention, embedding lookup) */
    /* (the two below in one byte: 14 bytes, replay_state.h's stack_fx 16 with its flags)
     * data: storage filled with a constant on a line where no weight is made (a plain class's:
     * datasrc.h), before training: data the program keeps on the device (a replay buffer), with
     * input set. cast: the program's own dtype cast of a tensor on the device, outside a module
     * (x.float(), .to(dtype)): no loss, attention kernel or batch (phases_acc_end) */
    uint8_t data : 1;
    uint8_t cast : 1;
    /* opt_copy: such a copy on the device (input and workspace: phases_acc_end) made on a line of
     * the program's own optimizer class (optsrc.h: SAM's first_step keeps old_p so), its state */
    uint8_t opt_copy : 1;
    /* opt_init: made by an optimizer's constructor (phase init: no step): its state, made before
     * any step (torch.optim.Adagrad's sums; phases_acc.opt_init) */
    uint8_t opt_init : 1;
    /* softmax: made by a softmax the caller called (FB_SOFTMAX as the outermost operator): a
     * plain attention's weights, S·H·T·T (infer.h INFER_MADE_SOFTMAX) */
    uint8_t softmax : 1;
} stack_facts;
_Static_assert(sizeof(stack_facts) == 14, "stack_facts: 14 bytes");

/* the file of transformers' KV cache: what a Python frame of it made, use_cache=False does not */
#define PHASES_KV_CACHE_FILE "transformers/cache_utils.py"

const char *phase_name(int p);
/* phases_of_stack: the facts of a resolved stack (frames innermost first). */
stack_facts phases_of_stack(const tables_frame *frames, size_t n);
/* phases_memo: what each code object / symbol (its name) / file said, for the stacks of one trace's
 * tables (the keys are their records: free it before the tables). Zero it to start. */
typedef struct phases_memo {
    struct phases_memo_entry {
        const void *key;
        uint32_t bits;
    } * e;
    size_t n, cap;
    struct phases_ip_entry { /* a native frame's ip: its bits (phases_memo_keep_ip) */
        uint64_t ip;
        uint32_t bits, until; /* kept while the trace's symbols number until - 1 (0: always) */
    } * ip;
    size_t nip, capip;
    uint32_t *code_bits; /* a Python frame's bits by its code id, PHASES_CODE_KEPT set once kept
                          * (phases_acc_code: the ids are a trace's own count, 1, 2, ...) */
    size_t ncode;
} phases_memo;
/* phases_of_stack_memo: phases_of_stack, each frame's part looked up in / added to m. */
stack_facts phases_of_stack_memo(const tables_frame *frames, size_t n, phases_memo *m);
/* The same one frame at a time (a stack's frames need not be resolved into an array): start at
 * PHASES_ACC_INIT, add every frame (its Python frames in their order), then phases_acc_end. A
 * frame's facts come from its function and file and its code object / symbol (the memo's key). */
typedef struct phases_acc {
    uint32_t any, py_any, py_last; /* py_last: the bits of the last Python frame added */
    int first_py_user, has_python;
    /* the innermost optimizer frame (torch/optim, GradScaler.step): 0 none yet, 1 the optimizer's
     * own code, 2 a caller of a forward or a loss (optimizer.step(closure): Lightning, LBFGS) */
    int opt_frame;
    /* opt_init: that innermost optimizer frame is a constructor's (torch.optim's __init__, or the
     * __init__ of a class an optimizer's name names: phases_optim.c) */
    int opt_init;
    /* npy: the Python frames added; lead: the index among them of the innermost one not of torch
     * (-1 none yet), lead_bits: the bits of torch's frames before it */
    int npy, lead;
    uint32_t lead_bits;
    uint32_t op_last; /* the bits of the outermost native frame of an ATen operator: the op the
                       * caller called (torch.zeros; not the empty a randint calls inside) */
    int opt_own;      /* phases_acc_mark_opt: its lead frame's line is in an own optimizer class */
} phases_acc;
#define PHASES_ACC_INIT                                                                            \
    {                                                                                              \
        0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0                                                          \
    }
/* phases_own_draw: the stack f (n frames, innermost first) is a call of the program's own line
 * that drew random values onto the device or copied a tensor there (randn, randint, .to), where
 * none of the program's frames says a phase (no module's construction, forward, backward, step,
 * evaluation, data loader) and no frame of torch.nn's machinery (Module.to) comes before them:
 * values the program made itself, no weight (phases_own.c) */
int phases_own_draw(const tables_frame *f, size_t n);

/* phases_acc_frame: adds f; its bits (what phases_memo_keep_ip keeps). */
uint32_t phases_acc_frame(phases_acc *a, const tables_frame *f, phases_memo *m);
/* phases_acc_natives: adds the native frames at ip[i], ip[i + 1], ... up to n, while m kept their
 * bits and they hold with nsyms symbols in the tables; the index of the first it did not (n:
 * none). */
size_t phases_acc_natives(phases_acc *a, const uint64_t *ip, size_t i, size_t n,
                          const phases_memo *m, size_t nsyms);
/* phases_acc_code: adds Python frame raw of t's (tables_code_frame: its qualname and file, as
 * phases need no line), its bits from m by its code id once its CODE record is known; its bits. */
uint32_t phases_acc_code(phases_acc *a, const tables *t, uint64_t raw, phases_memo *m);
/* phases_acc_symbol: adds native frame ip, whose symbol is sym (named for good: the phases read
 * nothing else of it), by sym's recorded name, kept in m for the other ips of that name; a name
 * that can say nothing (phases_native_may_say) is not demangled. Its bits. */
uint32_t phases_acc_symbol(phases_acc *a, const tables *t, uint64_t ip, const tables_symbol *sym,
                           phases_memo *m);
/* phases_acc_codes: phases_acc_code of each of n Python frames raw[0..n), in their order. */
void phases_acc_codes(phases_acc *a, const tables *t, const uint64_t *raw, size_t n,
                      phases_memo *m);
/* phases_native_may_say: whether a native frame whose symbol is name (as recorded: mangled, or
 * not a C++ name) may say anything (phases_acc_frame's bits): 0 when its demangled name cannot,
 * which then need not be worked out. */
int phases_native_may_say(const char *name);
/* phases_memo_keep_ip: a native frame at ip gave bits, for good (its symbol's name can no longer
 * change), or, with until = nsyms + 1 (no symbol), until a symbol is added; out of memory keeps
 * nothing. */
void phases_memo_keep_ip(phases_memo *m, uint64_t ip, uint32_t bits, uint32_t until);
stack_facts phases_acc_end(const phases_acc *a);
/* phases_eval_function: a function of that name (its last component) in the program's own files
 * is an evaluation's (estimate_loss, evaluate, eval_step, validate, or its '_'-separated words
 * say it evaluates and none says it trains: validation_step, run_eval) */
int phases_eval_function(const char *name);
/* phases_acc_mark_eval: the stack passes through an evaluation the program's source shows
 * (evalsrc.h: an inline one, under no function named so), as a frame named evaluate would say */
void phases_acc_mark_eval(phases_acc *a);
/* phases_acc_filled: when the frames added so far make storage filled with a constant (zeros,
 * ones, full, empty: the outermost operator) by a call of torch's from a caller's line (no module's
 * construction between), the index among the Python frames of that caller's, else -1;
 * phases_acc_mark_data: the caller's line is one where such storage is the program's data kept on
 * the device, not a weight (evalsrc_data_at: a plain class's, datasrc.h) */
int phases_acc_filled(const phases_acc *a);
void phases_acc_mark_data(phases_acc *a);
/* phases_acc_lead: the index among the Python frames added of the innermost one not of torch (the
 * caller's line of torch's call), -1 none; phases_acc_mark_opt: that line lies in the body of the
 * program's own optimizer class (evalsrc_opt_at, optsrc.h): a copy it makes there is its state */
int phases_acc_lead(const phases_acc *a);
void phases_acc_mark_opt(phases_acc *a);
/* phases_optim_name: the n bytes at s name an optimizer's class (one of torch.optim's names, or
 * one ending in Optimizer: phases_optim.c) */
int phases_optim_name(const char *s, size_t n);
/* phases_acc_mark_optim_ctor: the stack passes through an optimizer's constructor the program's
 * source shows (evalsrc.h evalsrc_optim_ctor: Python 3.10's frames name no class), as a frame of
 * torch.optim's __init__ would say */
void phases_acc_mark_optim_ctor(phases_acc *a);
void phases_memo_free(phases_memo *m);
/* phases_site: the frame a report names for a stack: the innermost Python frame of the program's
 * own (outside torch / site-packages); when a framework's training loop (Hugging Face's Trainer,
 * Lightning's loops) lies between, the innermost library frame that is not torch's below it (the
 * model's code: every frame the program's own would be its trainer.train() line); else the
 * innermost Python frame, else the innermost native frame with a symbol; -1 if none. */
long phases_site(const tables_frame *frames, size_t n);
/* The same walk over a stack's Python frames one at a time, innermost first (replay_sites.c):
 * phases_site_step takes frame f, at index i; 1 when the site is decided (w->pick). Undecided
 * after the last: w->first_py (the innermost Python frame, -1 if none). */
typedef struct phases_site_walk {
    long first_py, first_lib, pick;
    phases_memo *memo; /* NULL: each frame's file is looked at anew */
} phases_site_walk;
#define PHASES_SITE_WALK_INIT                                                                      \
    {                                                                                              \
        -1, -1, -1, NULL                                                                           \
    }
int phases_site_step(phases_site_walk *w, const tables_frame *f, long i);

#endif
