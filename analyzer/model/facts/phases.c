/* phases.c — which training phase an allocation belongs to, from its frames (Python
 * qualnames and files first, then native symbols), and the site a report names for it. */
#include "phases.h"
#include "phases_bits.h"

#include "hashseed.h"
#include "namewords.h"

#include <stdlib.h>
#include <string.h>

static const char *const g_phase_names[] = {
#define VT_PHASE_NAME(e, name, doc) name,
    VT_PHASES(VT_PHASE_NAME)
#undef VT_PHASE_NAME
};

const char *phase_name(int p)
{
    return p >= 0 && p < PHASE_COUNT ? g_phase_names[p] : "?";
}

/* last_component: "GPT.forward" -> "forward"; "<lambda>" stays. */
static const char *last_component(const char *q)
{
    const char *d = strrchr(q, '.');
    return d ? d + 1 : q;
}

static int in(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

static int library_file(const char *file)
{
    return strstr(file, "/torch/") || strstr(file, "site-packages") || strstr(file, "/simtorch/") ||
           strstr(file, "dist-packages") || file[0] == '<';
}

/* torch_or_optimizer_file: a file of torch itself (or of bitsandbytes' optimizers): the package
 * right after site-packages/ (a path such as /opt/torch/.venv/.../lightning/ is not torch's), or a
 * torch/ folder anywhere in a path that has none (a source checkout). */
static int torch_or_optimizer_file(const char *file)
{
    const char *p = strstr(file, "-packages/"), *q;
    while (p && (q = strstr(p + 1, "-packages/")))
        p = q;
    if (p)
        p += strlen("-packages/");
    else if ((p = strstr(file, "/torch/")) != NULL)
        p++;
    else
        p = file;
    return !strncmp(p, "torch/", 6) || !strncmp(p, "bitsandbytes/", 13) ||
           strstr(file, "/simtorch/");
}

static int framework_loop_file(const char *file);

/* eval_name: a function name whose words ('_'-separated) say it evaluates (eval, evaluate,
 * evaluation, validate, validation) and none says it trains */
static int eval_name(const char *name)
{
    /* (namewords.h; not a short form: a function's "val" is often a value, "valid" a check) */
    unsigned k = namewords_kinds(name, strlen(name), "_", 0);
    return (k & NW_EVAL) && !(k & NW_TRAIN);
}

/* the functions a frame of which is an evaluation's wherever they are (a program's own or a
 * library's) */
static const char *const eval_fns[] = {"estimate_loss", "evaluate", "eval_step", "validate", NULL};

int phases_eval_function(const char *name)
{
    return in(name, eval_fns) || eval_name(name);
}

/* What a Python frame's file alone says (python_bits' part of it, kept per file by file_bits):
 * FB_ bits that need nothing else, and the files whose frames' names then decide. */
enum {
    FF_EMA_STEP = 1u << 30,   /* diffusers' training_utils.py (its EMAModel.step) */
    FF_EMA_UPDATE = 1u << 29, /* timm's model_ema.py, torch_ema's ema.py (their update) */
    FF_GS = 1u << 28,         /* grad_scaler.py */
    FF_DATA = 1u << 27,       /* torch/utils/data */
    FF_RUN = 1u << 26,        /* inductor's generated code (torchinductor_) */
};

static uint32_t file_facts(const char *file)
{
    uint32_t b = library_file(file) ? FB_LIBRARY : 0;
    b |= strstr(file, "/optim/") || strstr(file, "/optim.py") ||
                 strstr(file, "torch/nn/utils/clip_grad")
             ? FB_OPT
             : 0;
    b |= strstr(file, "diffusers/training_utils.py") ? FF_EMA_STEP : 0;
    b |= strstr(file, "timm/utils/model_ema.py") || strstr(file, "torch_ema/ema.py") ? FF_EMA_UPDATE
                                                                                     : 0;
    b |= strstr(file, "grad_scaler.py") ? FF_GS : 0;
    b |= strstr(file, PHASES_KV_CACHE_FILE) ? FB_KV : 0;
    b |= strstr(file, "torch/utils/data") ? FF_DATA : 0;
    b |= strstr(file, "torchinductor_") ? FF_RUN : 0;
    /* not dynamo's eval_frame.py alone: its _fn wraps disable() too, which eager code runs
     * (torch.utils.checkpoint, optimizers) */
    b |= strstr(file, "torch/_inductor") ||
                 (strstr(file, "torch/_dynamo") && !strstr(file, "/eval_frame.py") &&
                  !strstr(file, "/external_utils.py") && !strstr(file, "/decorators.py"))
             ? FB_COMPILE
             : 0;
    b |= torch_or_optimizer_file(file) ? FB_TORCH_FILE : 0;
    b |= framework_loop_file(file) ? FB_LOOP_FILE : 0;
    return b;
}

/* ptr_slot: pointer key's first slot in a table of cap (a power of two) */
static size_t ptr_slot(const void *key, size_t cap)
{
    /* (seeded: where the trace's strings lie is partly the trace's choice) */
    return (size_t)hashseed_mix((uint64_t)(uintptr_t)key) & (cap - 1);
}

/* memo_get / memo_put: the bits m keeps by key (a code object, a symbol, a name, a file: the
 * tables' records and strings, each its own address); out of memory keeps nothing */
static int memo_get(const phases_memo *m, const void *key, uint32_t *bits)
{
    if (!m->cap)
        return 0;
    for (size_t j = ptr_slot(key, m->cap); m->e[j].key; j = (j + 1) & (m->cap - 1))
        if (m->e[j].key == key) {
            *bits = m->e[j].bits;
            return 1;
        }
    return 0;
}

static void memo_put(phases_memo *m, const void *key, uint32_t b)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        struct phases_memo_entry *n = calloc(cap, sizeof *n);
        if (!n)
            return;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i].key)
                continue;
            size_t k = ptr_slot(m->e[i].key, cap);
            while (n[k].key)
                k = (k + 1) & (cap - 1);
            n[k] = m->e[i];
        }
        free(m->e);
        m->e = n;
        m->cap = cap;
    }
    size_t j = ptr_slot(key, m->cap);
    while (m->e[j].key)
        j = (j + 1) & (m->cap - 1);
    m->e[j].key = key;
    m->e[j].bits = b;
    m->n++;
}

/* file_bits: file_facts of file, kept in m by the file's pointer (the tables keep a file's name
 * once for all its code objects: tables.c) */
static uint32_t file_bits(const char *file, phases_memo *m)
{
    uint32_t b;
    if (m && memo_get(m, file, &b))
        return b;
    b = file_facts(file);
    if (m)
        memo_put(m, file, b);
    return b;
}

static uint32_t python_bits(const char *fn, const char *file, phases_memo *m)
{
    static const char *const loss_fns[] = {"cross_entropy", "log_softmax",           "_log_softmax",
                                           "nll_loss",      "softmax_cross_entropy", NULL};
    /* a batch loaded, or moved onto the device by a framework (Lightning, Accelerate, the
     * Hugging Face Trainer) */
    static const char *const data_fns[] = {"get_batch",
                                           "get_batch_samples", /* the Trainer's: its batches and
                                                                 * their label count */
                                           "__next__",
                                           "_next_data",
                                           "transfer_batch_to_device",
                                           "send_to_device",
                                           "move_data_to_device",
                                           "_prepare_input",
                                           "_prepare_inputs",
                                           NULL};
    static const char *const fwd_fns[] = {"forward", "_call_impl", "_wrapped_call_impl", NULL};
    static const char *const bwd_fns[] = {"backward", "_make_grads", "_engine_run_backward", NULL};
    static const char *const init_fns[] = {"__init__",  "to",      "_apply",   "cuda",
                                           "to_device", "convert", "_to_copy", NULL};
    const char *last = last_component(fn);
    uint32_t ff = file_bits(file, m);
    /* the file's own bits (FB_LIBRARY, FB_KV, FB_COMPILE, FB_TORCH_FILE, FB_LOOP_FILE, its part
     * of FB_OPT); the rest with the function's name */
    uint32_t b = ff & (FB_LIBRARY | FB_OPT | FB_KV | FB_COMPILE | FB_TORCH_FILE | FB_LOOP_FILE);
    /* torch/autograd/function.py (Function.apply) runs compiled forwards: not backward */
    /* a framework's backward (Accelerate's, Lightning's, DeepSpeed's) scales the loss before it
     * calls torch's: what it makes is the step's loss, not the backward's (a gradient's size:
     * the 4-byte loss of a Trainer, whose 4-byte running loss is made before the forward) */
    b |= in(last, bwd_fns) && (strcmp(last, "backward") || (ff & FB_TORCH_FILE)) ? FB_BWD : 0;
    /* ema_update: the update of an EMA of the weights, run after the optimizer step (diffusers'
     * EMAModel.step, timm's ModelEma*.update, torch_ema's update; AveragedModel is under optim/):
     * the step's, not a forward's (it had drawn a "forward" between the step and zero_grad and
     * begun a step of its own). Its last name alone: Python 3.10 names no class. */
    int ema = ((ff & FF_EMA_STEP) && !strcmp(last, "step")) ||
              ((ff & FF_EMA_UPDATE) && !strcmp(last, "update"));
    b |= ema ? FB_OPT : 0;
    /* GradScaler's step / unscale_ / update belong to the optimizer step; everything under its
     * scale() multiplies the loss (forward) */
    b |= ff & FF_GS ? FB_GS : 0;
    b |= (ff & FF_GS) && !strcmp(last, "scale") ? FB_GS_SCALE : 0;
    /* the names above anywhere; in the program's own files, any function whose name says it
     * evaluates, word for word ("late_eval", "run_eval", "evaluation_loop", "validation_step";
     * not "train_and_evaluate", "retrieval_loss", "valid_mask"): a late evaluation's OOM had
     * been the forward's */
    b |= in(last, eval_fns) || (!(ff & FB_LIBRARY) && eval_name(last)) ? FB_EVAL : 0;
    b |= in(last, data_fns) || (ff & FF_DATA) ? FB_DATA : 0;
    /* a compiled graph running (inductor's generated code) is the forward, not compile */
    b |= (ff & FF_RUN) || !strcmp(fn, "CompiledFxGraph.__call__") ? FB_RUN : 0;
    b |= in(last, fwd_fns) ? FB_FWD : 0;
    b |= in(last, init_fns) ? FB_INIT : 0;
    /* (a constructor of the program's own optimizer: its code, as torch.optim's __init__ is) */
    b |= !(ff & FB_LIBRARY) && phases_optim_ctor(fn) ? FB_OPT | FB_INIT : 0;
    b |= in(last, loss_fns) ? FB_LOSS : 0;
    b |= !(b & FB_TORCH_FILE) && !(b & FB_OPT) ? FB_FOREIGN : 0;
    return b;
}

/* frame_bits: the bits of frame f, from the memo when it has them (keyed by the code object or
 * symbol the frame resolved to; frames with neither are computed each time). */
static uint32_t frame_bits(const tables_frame *f, phases_memo *m)
{
    int py = f->kind == TABLES_FRAME_PYTHON;
    /* a native frame by its symbol's name, which the tables keep once for all the ips of a
     * function (tables.c; the frame's function is that name, as long as the tables live) */
    const void *key = py                                             ? (const void *)f->code
                      : f->sym && f->function == f->sym->demangled.s ? (const void *)f->function
                                                                     : (const void *)f->sym;
    uint32_t b;
    if (m && key && memo_get(m, key, &b))
        return b;
    const char *fn = f->function ? f->function : "";
    b = py ? python_bits(fn, f->file ? f->file : "", m) : phases_native_bits(fn);
    if (m && key)
        memo_put(m, key, b);
    return b;
}

/* acc_bits: adds a frame's bits b (py: a Python frame's) */
static inline void acc_bits(phases_acc *a, uint32_t b, int py)
{
    if (py) {
        a->has_python = 1;
        if (a->first_py_user < 0)
            a->first_py_user = !(b & FB_LIBRARY);
        /* frames come innermost first: an optimizer frame that called a module's forward, a
         * loss or code of neither torch nor an optimizer (its caller's closure:
         * optimizer.step(closure), as Lightning and LBFGS do) is not the optimizer's work */
        if (!a->opt_frame && ((b & FB_OPT) || ((b & FB_GS) && !(b & FB_GS_SCALE)))) {
            a->opt_frame =
                (a->py_any & FB_FWD) || (a->any & FB_LOSS) || (a->py_last & FB_FOREIGN) ? 2 : 1;
            a->opt_init = (b & (FB_OPT | FB_INIT)) == (FB_OPT | FB_INIT);
        }
        a->py_any |= b;
        a->py_last = b;
        if (a->lead < 0 && (b & FB_TORCH_FILE)) /* (torch's own frames before the caller's) */
            a->lead_bits |= b;
        else if (a->lead < 0)
            a->lead = a->npy;
        a->npy++;
    }
    a->any |= b;
    if (!py && (b & FB_OP)) /* (native frames come innermost first: the caller's op is last) */
        a->op_last = b;
}

uint32_t phases_acc_frame(phases_acc *a, const tables_frame *f, phases_memo *m)
{
    uint32_t b = frame_bits(f, m);
    acc_bits(a, b, f->kind == TABLES_FRAME_PYTHON);
    return b;
}

#define PHASES_CODE_KEPT (1u << 31) /* (above every FB_ bit) */

/* keep_code: code_id's bits into m's array, grown to hold it while ids stay near the count of
 * code objects (a corrupt id sizes nothing: it is looked up each time); out of memory keeps none */
static void keep_code(phases_memo *m, const tables *t, uint32_t code_id, uint32_t b)
{
    if (code_id >= m->ncode) {
        if (code_id > 2 * tables_n_codes(t) + 1024)
            return;
        size_t n = m->ncode ? m->ncode : 1024;
        while (n <= code_id)
            n *= 2;
        uint32_t *k = realloc(m->code_bits, n * sizeof *k);
        if (!k)
            return;
        memset(k + m->ncode, 0, (n - m->ncode) * sizeof *k);
        m->code_bits = k, m->ncode = n;
    }
    m->code_bits[code_id] = b | PHASES_CODE_KEPT;
}

/* kept_bits: the bits keep_code kept for code_id into *b, 1; 0 when it kept none */
static inline int kept_bits(const phases_memo *m, uint32_t code_id, uint32_t *b)
{
    if (code_id >= m->ncode || !(m->code_bits[code_id] & PHASES_CODE_KEPT))
        return 0;
    *b = m->code_bits[code_id] & ~PHASES_CODE_KEPT;
    return 1;
}

uint32_t phases_acc_symbol(phases_acc *a, const tables *t, uint64_t ip, const tables_symbol *sym,
                           phases_memo *m)
{
    /* by its recorded name (never a code object's nor a demangled name's key with other bits:
     * a name that is no C++ one is its own demangling, read the same) */
    uint32_t b = 0;
    if (memo_get(m, sym->name.s, &b)) {
        acc_bits(a, b, 0);
        return b;
    }
    if (phases_native_may_say(sym->name.s)) {
        tables_frame f;
        tables_resolve_frame(t, ip, TABLES_FRAME_NATIVE, &f);
        b = phases_acc_frame(a, &f, m);
    }
    memo_put(m, sym->name.s, b);
    return b;
}

void phases_acc_codes(phases_acc *a, const tables *t, const uint64_t *raw, size_t n, phases_memo *m)
{
    /* the frames whose bits m kept, on a copy of a that nothing else points at (its fields stay
     * in registers: a store into a is not read back after each store of the memo's) */
    for (size_t i = 0; i < n; i++) {
        phases_acc l = *a;
        uint32_t b;
        for (; i < n && kept_bits(m, VT_PYFRAME_CODE(raw[i]), &b); i++)
            acc_bits(&l, b, 1);
        *a = l;
        if (i < n)
            phases_acc_code(a, t, raw[i], m);
    }
}

uint32_t phases_acc_code(phases_acc *a, const tables *t, uint64_t raw, phases_memo *m)
{
    uint32_t b, code_id = VT_PYFRAME_CODE(raw);
    if (!kept_bits(m, code_id, &b)) {
        tables_frame f;
        tables_code_frame(t, raw, &f);
        b = frame_bits(&f, m);
        if (f.code) /* (a CODE record, once read, is the id's for good) */
            keep_code(m, t, code_id, b);
    }
    acc_bits(a, b, 1);
    return b;
}

static size_t ip_slot(uint64_t ip, size_t cap)
{
    return (size_t)hashseed_fold(ip) & (cap - 1); /* (ips are the trace's: seeded) */
}

size_t phases_acc_natives(phases_acc *a, const uint64_t *ip, size_t i, size_t n,
                          const phases_memo *m, size_t nsyms)
{
    if (!m->capip)
        return i;
    const size_t mask = m->capip - 1;
    uint32_t any = a->any, op_last = a->op_last;
    for (; i < n && ip[i]; i++) { /* (the frame at ip, when m kept its bits and they hold) */
        const struct phases_ip_entry *e = &m->ip[ip_slot(ip[i], m->capip)];
        while (e->ip && e->ip != ip[i])
            e = &m->ip[(size_t)(e - m->ip + 1) & mask];
        if (!e->ip || (e->until && e->until != nsyms + 1))
            break;
        any |= e->bits;
        op_last = e->bits & FB_OP ? e->bits : op_last;
    }
    a->any = any, a->op_last = op_last;
    return i;
}

void phases_memo_keep_ip(phases_memo *m, uint64_t ip, uint32_t bits, uint32_t until)
{
    if (!ip)
        return;
    if ((m->nip + 1) * 2 > m->capip) {
        size_t cap = m->capip ? m->capip * 2 : 1024;
        struct phases_ip_entry *n = calloc(cap, sizeof *n);
        if (!n)
            return;
        for (size_t i = 0; i < m->capip; i++)
            if (m->ip[i].ip) {
                size_t k = ip_slot(m->ip[i].ip, cap);
                while (n[k].ip)
                    k = (k + 1) & (cap - 1);
                n[k] = m->ip[i];
            }
        free(m->ip);
        m->ip = n, m->capip = cap;
    }
    size_t j = ip_slot(ip, m->capip);
    while (m->ip[j].ip && m->ip[j].ip != ip)
        j = (j + 1) & (m->capip - 1);
    if (!m->ip[j].ip)
        m->nip++;
    m->ip[j].ip = ip, m->ip[j].bits = bits, m->ip[j].until = until;
}

void phases_acc_mark_data(phases_acc *a)
{
    a->py_any |= FB_DATA_LINE;
}

int phases_acc_lead(const phases_acc *a)
{
    return a->lead;
}

void phases_acc_mark_opt(phases_acc *a)
{
    a->opt_own = 1;
}

int phases_acc_filled(const phases_acc *a)
{
    /* made by a call of torch's from the caller's line (a builtin's: torch's frames before it, if
     * any, say no phase: not a module's construction, nor a forward's) */
    const uint32_t says = FB_INIT | FB_FWD | FB_BWD | FB_OPT | FB_GS | FB_DATA | FB_EVAL | FB_RUN |
                          FB_COMPILE | FB_KV | FB_LOSS;
    return (a->op_last & FB_FILLED) && a->lead >= 0 && !(a->lead_bits & says) ? a->lead : -1;
}

void phases_acc_mark_eval(phases_acc *a)
{
    a->py_any |= FB_EVAL;
    a->any |= FB_EVAL;
}

stack_facts phases_acc_end(const phases_acc *a)
{
    uint32_t any = a->any, py_any = a->py_any;
    stack_facts r = {PHASE_OTHER, 0, 0, 0, 0, 0, 0};
    r.has_python = (uint8_t)a->has_python;
    int bwd = (any & FB_BWD) != 0, ev = (py_any & FB_EVAL) != 0, data = (py_any & FB_DATA) != 0;
    int run = (py_any & FB_RUN) != 0, comp = (py_any & FB_COMPILE) != 0;
    int fwd = (py_any & FB_FWD) != 0, init = (py_any & FB_INIT) != 0;
    int opt =
        ((py_any & FB_OPT) || ((py_any & FB_GS) && !(py_any & FB_GS_SCALE))) && a->opt_frame != 2;
    r.loss = (any & FB_LOSS) != 0;
    r.to_copy = (any & FB_TO_COPY) != 0;
    r.workspace = (any & FB_WORKSPACE) != 0;
    r.attention = (any & FB_ATTENTION) != 0;
    r.engine = (any & FB_ENGINE) != 0;
    r.fused_attention = (any & FB_FUSED_ATTN) != 0;
    r.dropout = (any & FB_DROPOUT) != 0;
    r.op = (any & FB_OP) != 0;
    r.model_op = (any & FB_MODEL_OP) != 0;
    r.kv = (py_any & FB_KV) != 0;
    /* the data path: a batch the program itself makes or copies onto the device (random token
     * ids, .to(device)), or a framework's data path does, not an operation inside a module */
    /* (random floats too: a diffusion step's noise, not under a module's __init__, where a
     * parameter made with torch.randn on the device is) */
    int own = (a->first_py_user == 1 || data) && !fwd && !run;
    /* the program's own dtype cast of a tensor on the device (x.float(), .to(dtype): aten::to
     * with a dtype alone), not autocast's and under no operator that says more (a loss, an
     * attention kernel, cuBLAS), outside a data path, evaluation, backward, step or compile (the
     * phase below: none, or init's frames): no batch moved onto the device by itself; what it is
     * (master weights, master gradients, the logits' fp32 copy, a batch's cast) its lifetime and
     * size tell (classify.c's own_cast) */
    int cast = own && r.to_copy && (any & FB_TO_DTYPE) && !data && !ev && !bwd && !opt && !comp &&
               !(any & (FB_AUTOCAST | FB_LOSS | FB_ATTENTION | FB_WORKSPACE | FB_RAND | FB_NOISE |
                        FB_CLONE));
    /* storage filled with a constant that the program's own line makes where no weight is made
     * (a plain class's or function's: datasrc.h), not a copy: data it keeps on the device (a
     * replay buffer), as a batch is, not a weight (it had been the parameters', read at 2 B) */
    int kept = (py_any & FB_DATA_LINE) && (a->op_last & FB_FILLED) && !r.to_copy &&
               !(any & FB_CLONE) && !fwd && !run && !bwd && !opt && !ev && !comp;
    /* an optimizer constructor's (or an own Optimizer subclass's __init__'s: optsrc.h): state */
    int ctor = (opt && a->opt_init) || (a->opt_own && init && !(any & FB_CLONE) && !fwd && !bwd);
    r.input =
        own && !ctor && ((any & FB_RAND) || ((any & FB_NOISE) && !init) || (r.to_copy && !cast));
    r.data = (uint8_t)kept;
    r.input |= r.data;
    /* a copy on the device the program's own code makes outside a module (clone: device to
     * device), such as a checkpoint of the weights or of the optimizer's state kept on the device:
     * told to classify.c as input and workspace together, which nothing else is (a batch is no
     * library workspace, and a workspace is made under a matmul, never by the program's copy) */
    if (own && (any & FB_CLONE) && !r.input) {
        r.input = 1;
        r.workspace = 1;
        r.opt_copy = a->opt_own != 0; /* (its class an optimizer: its state, as SAM's old_p) */
    }
    r.phase = bwd             ? PHASE_BACKWARD
              : ctor          ? PHASE_INIT
              : opt           ? PHASE_OPTIMIZER
              : ev            ? PHASE_EVAL
              : data          ? PHASE_DATA
              : run           ? PHASE_FORWARD
              : comp          ? PHASE_COMPILE
              : fwd || r.loss ? PHASE_FORWARD
              : init          ? PHASE_INIT
                              : PHASE_OTHER;
    /* a loss computed in the training loop (outside forward) is still the forward pass */
    /* (the cast's phase: none, or init's; before the first forward it is made as init's) */
    r.cast = (uint8_t)cast;
    r.opt_init = (uint8_t)(r.phase == PHASE_INIT && ctor);
    r.softmax = (a->op_last & FB_SOFTMAX) != 0;
    return r;
}

stack_facts phases_of_stack_memo(const tables_frame *f, size_t n, phases_memo *m)
{
    phases_acc a = PHASES_ACC_INIT;
    for (size_t i = 0; i < n; i++)
        phases_acc_frame(&a, &f[i], m);
    return phases_acc_end(&a);
}

stack_facts phases_of_stack(const tables_frame *f, size_t n)
{
    return phases_of_stack_memo(f, n, NULL);
}

void phases_memo_free(phases_memo *m)
{
    free(m->e);
    free(m->ip);
    free(m->code_bits);
    memset(m, 0, sizeof *m);
}

/* framework_loop_file: a training loop that calls the model for the program (Hugging Face's
 * Trainer and TRL's, Lightning's loops and strategies) */
static int framework_loop_file(const char *file)
{
    static const char *const parts[] = {"transformers/trainer",
                                        "trl/trainer/",
                                        "lightning/pytorch/loops/",
                                        "lightning/pytorch/trainer/",
                                        "pytorch_lightning/loops/",
                                        "pytorch_lightning/trainer/",
                                        NULL};
    for (size_t i = 0; parts[i]; i++)
        if (strstr(file, parts[i]))
            return 1;
    return 0;
}

int phases_site_step(phases_site_walk *w, const tables_frame *f, long i)
{
    const char *file = f->file ? f->file : "";
    if (w->first_py < 0)
        w->first_py = i;
    /* the file's three answers, from the memo when the walk has one (a Python frame's bits) */
    uint32_t b = w->memo ? frame_bits(f, w->memo)
                         : (library_file(file) ? FB_LIBRARY : 0) |
                               (framework_loop_file(file) ? FB_LOOP_FILE : 0) |
                               (torch_or_optimizer_file(file) ? FB_TORCH_FILE : 0);
    if (!(b & FB_LIBRARY)) { /* the program's own */
        w->pick = i;
        return 1;
    }
    if (b & FB_LOOP_FILE) {
        w->pick = w->first_lib >= 0 ? w->first_lib : i;
        return 1;
    }
    if (w->first_lib < 0 && !(b & FB_TORCH_FILE) && file[0] != '<')
        w->first_lib = i;
    return 0;
}

long phases_site(const tables_frame *f, size_t n)
{
    phases_site_walk w = PHASES_SITE_WALK_INIT;
    long first_native = -1;
    for (size_t i = 0; i < n; i++) {
        if (f[i].kind == TABLES_FRAME_PYTHON) {
            if (phases_site_step(&w, &f[i], (long)i))
                return w.pick;
        } else if (first_native < 0 && f[i].function && f[i].function[0]) {
            first_native = (long)i;
        }
    }
    return w.first_py >= 0 ? w.first_py : first_native;
}
