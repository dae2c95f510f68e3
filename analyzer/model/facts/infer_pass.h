/* infer_pass.h — infer.c's pass over the tensors, shared with infer_weights.c (what the weights
 * say); private to the two. */
#ifndef VT_ANALYZER_INFER_PASS_H
#define VT_ANALYZER_INFER_PASS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "infer.h"
#include "hashseed.h"

#define VT_EMBED_GAP 16 /* allocations between a token batch and its embedding lookup */
/* distinct sizes of the first backward's tensors kept (a power of 2) */
#define VT_GRAD_SIZES 1024
/* the first backward's tensors alive at once that are followed (a power of 2; its gradients and
 * its temporaries not yet freed) */
#define VT_BWD_SLOTS 4096

/* One tensor as the pass sees it. */
typedef struct vt__tensor {
    uint64_t addr, size;
    uint64_t event; /* the allocating event's number (the replay's; a free finds it by it) */
    int early;      /* allocated before the first backward */
    int live;
    int kept;       /* alive right after the first backward (or at an OOM before it) */
    int batch;      /* an image batch or its labels, or (no tokens) any input of the program's
                     * (vt__find_images): not a parameter */
    int input;      /* the program's own input (INFER_MADE_INPUT) */
    int data;       /* the program's data kept on the device (INFER_MADE_DATA: a replay buffer),
                     * batch set too: no weight, nor the batch of a step */
    int init;       /* made under a module's __init__, .to() or .cuda() (INFER_MADE_INIT) */
    int made;       /* where its stack says it was made: INFER_MADE_* (infer.h) */
    uint32_t stack; /* its stack id (infer_finish_without: a copy's tensors left out) */
    int attention;  /* made by a fused attention kernel (INFER_MADE_ATTENTION) */
    int dropout;    /* made by dropout's forward (INFER_MADE_DROPOUT) */
    int cast;       /* made by a dtype conversion (INFER_MADE_CAST) */
    int workspace;  /* made under cuBLAS's handle (INFER_MADE_WORKSPACE) */
    int eval;       /* made in an evaluation (INFER_MADE_EVAL) */
    int softmax;    /* made by a softmax (INFER_MADE_SOFTMAX): a plain attention's weights */
    int oom_live;   /* alive at an out-of-memory failure before any backward (vt__snap) */
    int copy;   /* a copy of the weights the program keeps beside them (fp32 master weights of its
                 * 16-bit ones, or a copy of those: vt__weights_dtype): no parameter of the model */
    int half;   /* made on a line of the program that casts to 16 bits (infer_pass_cast16): 2 B an
                 * element whatever the pass counts the others with */
    int packed; /* a weight packed two 4-bit values a byte (infer_packed.c): 2 elements a byte */
    int qstate; /* a packed weight's quantization state (vt__find_qstate): no parameter */
    uint32_t was_stack; /* a cast of a weight of twice its size that it replaced before the first
                         * forward (infer.c's vt__cast_of: fp32 to 16 bits): that weight's stack,
                         * 0: none (infer_pass_narrowed) */
    uint64_t gone;      /* kept, and freed after the first backward before the next: that event */
    uint64_t freed;     /* freed before any backward: that event (0: not) */
} vt__tensor;

typedef struct vt__pass {
    vt__tensor *t;
    size_t n, cap;
    int seen_backward;
    int seen_forward;    /* a tensor made in a forward (its stack says) was pushed */
    int snapped;         /* kept is set */
    int watch_done;      /* the second backward began: no later free says more (vt__tensor.gone) */
    uint64_t last_alloc; /* the last allocation seen after the first backward, before that */
    int at_oom;          /* ... at an out-of-memory failure before the first backward */
    int at_end;          /* ... at the end of a run with no backward: the prefix kept to its last
                          * allocation (freed at the program's exit, or never) */
    size_t bwd_over;     /* the tensors alive in a row from the first when the main thread first
                          * freed one after the first backward, + 1 (0: not yet): kept, should
                          * no allocation come after (the program exited: every tensor freed) */
    uint64_t last_early; /* the last allocation before any backward */
    int tentative;       /* ... at a failed device allocation PyTorch may recover from (its
                          * allocator frees its cache and retries): undone by a tensor after */
    uint64_t oom_bt;     /* then: B·T of the token batch found there (vt__trim_oom), 0 = none */
    uint64_t oom_size;   /* ... the size of the allocation that failed (0: none known) */
    size_t oom_at;       /* ... and its index */
    uint64_t img_b, img_side, img_bytes; /* an image batch (vt__find_images), 0 = none */
    uint32_t img_stack;                  /* ... the stack that made it */
    uint32_t img_fwd_stack;              /* ... and the first forward tensor's after it */
    size_t inputs; /* the program's inputs vt__find_images marked (no tokens: no blocks to read) */
    unsigned elem; /* bytes per parameter element (0: 4, fp32; infer_pass_params16) */
    char elem_why[256]; /* ... what says they are 16-bit */
    uint64_t elem_fp32; /* ... but these bytes of them fp32 (LoRA's adapters: their gradients') */
    int elem_sizes;     /* ... 2 read from the weights' own sizes (vt__weights_dtype) */
    int elem_head;      /* ... 2 read from a frozen head's 16-bit logits (infer_pass_head16) */
    int packed_read;    /* vt__find_packed ran */
    size_t npacked;     /* ... the weights it marked packed, */
    uint64_t packed_bytes; /* ... and their bytes */
    uint64_t qstate_bytes; /* ... their quantization state's bytes (vt__find_qstate) */
    int dtype_read;        /* vt__weights_dtype ran (a second infer_finish keeps what it found) */
    char cast_where[160];  /* the lines that cast the tensors marked half (infer_pass_cast16) */
    uint64_t master_bytes, copies_bytes; /* fp32 master weights of the 16-bit ones, and further
                                          * copies of those (an EMA's), among the weights */
    size_t nmaster;                      /* ... the weights each of them copies */
    /* how many tensors of t[] are live at each address (a count of 0: vt__free needs no
     * search), and the index + 1 of the newest pushed there (0: none, or past 2^32): open
     * addressing over the addresses met, never shrunk; address 0 apart */
    uint64_t *at_addr;
    uint32_t *at_live, at_live0, *at_last;
    size_t at_cap, at_n;
    /* the sizes in bytes of the first backward's tensors, a set (0: an empty slot): a weight
     * that got a gradient has one of its size (infer_weights.c's vt__trained) */
    uint64_t grad_size[VT_GRAD_SIZES];
    size_t ngrad;
    int grad_from_copies; /* ... were read from the 16-bit copies kept at an OOM before any
                           * backward (vt__kept_copies), twice their size */
    /* the first backward's tensors that the backward itself has not freed (address, size; open
     * addressing, linear probing, address 0 empty): its gradients, which outlive it,
     * not its temporaries. When it ends, their sizes are grad_size (a temporary of a weight's
     * size had made a frozen teacher's blocks look trained: 16-bit B·T×2048 activation
     * gradients at B·T = 1024 beside its 1024×1024 fp32 weights); all it made where more were
     * alive than followed (bwd_full) */
    uint64_t bwd_addr[VT_BWD_SLOTS], bwd_size[VT_BWD_SLOTS];
    size_t nbwd; /* slots taken */
    int bwd_full;
    int unmade; /* no Python frame says who made a tensor (recorded with --stacks none / native) */
} vt__pass;

/* vt__grad_find: size's slot in vt__pass.grad_size: where it is, else the empty slot its probe
 * ends at (the set is never full: vt__grad_add stops at three quarters) */
static inline size_t vt__grad_find(const vt__pass *p, uint64_t size)
{
    size_t j = (size_t)hashseed_mix(size) & (VT_GRAD_SIZES - 1); /* (the trace's sizes) */
    while (p->grad_size[j] && p->grad_size[j] != size)
        j = (j + 1) & (VT_GRAD_SIZES - 1);
    return j;
}

/* vt__grad_add: size (a tensor the first backward made) into the set; dropped once the set is
 * three quarters full (then a trained weight may look frozen: no model is told apart) */
static inline void vt__grad_add(vt__pass *p, uint64_t size)
{
    if (!size || p->ngrad >= VT_GRAD_SIZES * 3 / 4)
        return;
    size_t j = vt__grad_find(p, size);
    if (!p->grad_size[j])
        p->grad_size[j] = size, p->ngrad++;
}

/* vt__grad_has: the first backward made a tensor of size bytes */
static inline int vt__grad_has(const vt__pass *p, uint64_t size)
{
    return size && p->grad_size[vt__grad_find(p, size)] == size;
}

/* vt__bwd_slot: addr's slot in bwd_addr: where it is, else the empty slot its probe ends at (the
 * table is never full: vt__bwd_made stops at three quarters) */
static inline size_t vt__bwd_slot(const vt__pass *p, uint64_t addr)
{
    size_t j = (size_t)hashseed_mix(addr) & (VT_BWD_SLOTS - 1);
    while (p->bwd_addr[j] && p->bwd_addr[j] != addr)
        j = (j + 1) & (VT_BWD_SLOTS - 1);
    return j;
}

/* vt__bwd_made / vt__bwd_freed: the first backward made a tensor of size at addr; it freed the
 * one at addr (a free by another thread, zero_grad's, leaves a gradient kept) */
static inline void vt__bwd_made(vt__pass *p, uint64_t addr, uint64_t size)
{
    if (!addr || p->bwd_full)
        return;
    size_t j = vt__bwd_slot(p, addr);
    if (!p->bwd_addr[j]) {
        if (p->nbwd >= VT_BWD_SLOTS * 3 / 4) {
            p->bwd_full = 1;
            return;
        }
        p->bwd_addr[j] = addr, p->nbwd++;
    }
    p->bwd_size[j] = size;
}
static inline void vt__bwd_freed(vt__pass *p, uint64_t addr)
{
    if (!addr || !p->nbwd)
        return;
    size_t m = VT_BWD_SLOTS - 1, i = vt__bwd_slot(p, addr);
    if (!p->bwd_addr[i])
        return;
    /* deleted by shifting back the entries after it whose probe passed its slot (no tombstone:
     * a backward's temporaries, made and freed by the thousand, had left the probes long: 1.6M
     * instructions of a compiled GPT-2's report) */
    for (size_t k = (i + 1) & m; p->bwd_addr[k]; k = (k + 1) & m) {
        size_t h = (size_t)hashseed_mix(p->bwd_addr[k]) & m; /* its home slot */
        if (((k - h) & m) >= ((k - i) & m)) {                /* i lies on its probe */
            p->bwd_addr[i] = p->bwd_addr[k], p->bwd_size[i] = p->bwd_size[k];
            i = k;
        }
    }
    p->bwd_addr[i] = 0, p->bwd_size[i] = 0;
    p->nbwd--;
}

/* vt__grads_kept: the first backward is over: the sizes of its tensors still alive (its
 * gradients) are the gradients' sizes, where it kept any and all were followed */
static inline void vt__grads_kept(vt__pass *p)
{
    if (!p->seen_backward || p->bwd_full)
        return;
    size_t kept = 0;
    for (size_t j = 0; j < VT_BWD_SLOTS; j++)
        kept += p->bwd_size[j] != 0;
    if (!kept)
        return;
    memset(p->grad_size, 0, sizeof p->grad_size);
    p->ngrad = 0;
    for (size_t j = 0; j < VT_BWD_SLOTS; j++)
        vt__grad_add(p, p->bwd_size[j]);
}

/* vt__mul: a·b, or 0 when it does not fit 64 bits (trace-derived sizes: a product that wraps
 * could become 0 before a % or a /, or match a tensor it has nothing to do with) */
static inline uint64_t vt__mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? 0 : r;
}

/* vt__elem: bytes per parameter element the pass counts with (4 unless told 16-bit) */
static inline unsigned vt__elem(const vt__pass *p)
{
    return p->elem ? p->elem : 4;
}

/* vt__input_may: t can be the program's batch: its stack says so (INFER_MADE_INPUT), or does
 * not say otherwise (no Python frame; made outside a forward and a module's __init__ or .to()),
 * and it is no data the program keeps (a replay buffer's uint8 frames had been read as images).
 * A module's tensor is none: a BatchNorm's 8-byte num_batches_tracked, or its 32 channels'
 * statistics beside a GAN generator's output of the images' size, had been read as 1 image of
 * 512², or 16 of 128². */
static inline int vt__input_may(const vt__tensor *t)
{
    if (t->data) /* (the program's data kept on the device: no step's batch) */
        return 0;
    return t->input || t->made == INFER_MADE_UNKNOWN ||
           (t->made == INFER_MADE_ELSEWHERE && !t->init);
}

/* vt__pos_rows: the rows of weight i (elems[i] elements) when it can be a position embedding,
 * T_max×d outside the repeating blocks [lo, hi): not d or V rows, not the token batch of B·T
 * int64 kept with the weights (V, bt 0: none to leave out); else 0 (infer.c, infer_images.c) */
static inline uint64_t vt__pos_rows(const uint64_t *elems, size_t i, uint64_t d, uint64_t V,
                                    uint64_t bt, size_t lo, size_t hi, unsigned e)
{
    uint64_t rows = elems[i] / d;
    return elems[i] % d == 0 && rows != d && rows != V && rows >= 2 && elems[i] * e != bt * 8 &&
                   (i < lo || i >= hi)
               ? rows
               : 0;
}

/* ---- infer_tokens.c: the token batch ------------------------------------------------------ */
/* vt__embeds: the index after i of the embedding lookup of n tokens of width d, 0 when none.
 * vt__looked_up: n when tensor i can be n int64 indices with their lookup soon after it, else 0.
 * vt__batch_from: where the run of B·T·8-byte tensors that ends the kept prefix begins (*end:
 * the prefix's end). vt__infer_tokens: B·T, T and B into out, from the weights' sizes (elems,
 * nelems; the repeating blocks [lo, hi)) and the first forward's tensors. */
size_t vt__embeds(const vt__pass *p, size_t i, uint64_t n, uint64_t d);
uint64_t vt__looked_up(const vt__pass *p, size_t i, uint64_t d);
size_t vt__batch_from(const vt__pass *p, uint64_t bt, size_t *end);
void vt__infer_tokens(const vt__pass *p, const uint64_t *elems, size_t nelems, size_t lo, size_t hi,
                      infer_result *out);
/* vt__train_tokens: out->train_tokens (infer.h), where the token batch read is a no-grad pass's
 * (or none was) and a training forward followed that pass before the first backward; its heads by
 * vt__train_heads (infer_heads.c) over the tensors from index from (that forward's) */
void vt__train_tokens(const vt__pass *p, infer_result *out);
void vt__train_heads(const vt__pass *p, size_t from, uint64_t n, infer_result *out);

/* ---- infer_tensors.c: the list of tensors ----------------------------------------------- */
/* vt__push: a tensor made (event: the replay's event number; made: INFER_MADE_*); -1 out of
 * memory. vt__free: the newest live tensor at addr dies: the one the freed allocation's event
 * names (event: the replay's newest allocation at addr), else (0, or not in the list) found by
 * address; its index, p->n when none. Only the early ones matter, so later ones are not kept. */
int vt__push(vt__pass *p, uint64_t addr, uint64_t size, uint64_t event, int made, uint32_t stack);
size_t vt__free(vt__pass *p, uint64_t addr, uint64_t event);
/* vt__drop_evaluation: before the pass is read, a run that trains leaves out an evaluation
 * before its first training forward at a batch of its own (infer_tensors.c says which). */
void vt__drop_evaluation(vt__pass *p);
/* vt__tensors_copy: c (a copy of p's fields) gets lists of its own; -1 out of memory (c's lists
 * then none). vt__tensors_free: p's lists freed. */
int vt__tensors_copy(vt__pass *c, const vt__pass *p);
void vt__tensors_free(vt__pass *p);

/* vt__set: key k known, with its value and where it came from (printf-style) */
void vt__set(infer_result *out, infer_key k, int64_t v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* vt__weights_dtype: what the weights' own sizes say of their element size, before
 * vt__infer_params reads them (p->elem 0: not told): fp32 master weights (each of the program's
 * weights copied at twice its bytes, marked copy, with further copies of those) make them
 * 16-bit; so do a transformer's blocks that have d×d projections beside d-sized norms at 2 B an
 * element and none at 4 B. Once per pass. */
void vt__weights_dtype(vt__pass *p);
/* vt__block (infer_packed.c): the longest run of a repeating size pattern in seq[0..n) (period
 * up to 64): its *period, *repeats and *start; 0 when nothing repeats */
void vt__block(const uint64_t *seq, size_t n, size_t *period, size_t *repeats, size_t *start);
/* vt__square_width (infer_weights.c): the weights kept, read at 4 or at 2 B an element (packed:
 * those marked packed at 2 elements a byte; 0: none), have repeating blocks of a d×d matrix
 * beside d-element ones: 1, else 0 */
int vt__square_width(const vt__pass *p, int packed);
/* vt__find_packed (infer_packed.c): marks the weights packed two 4-bit values a byte: each has
 * a temporary of 4× its bytes (dequantized to 16 bits for a matmul) made and freed in the first
 * forward, two sizes of them at least; infer.c unmarks them where the weights read at 2 or 4 B
 * have a d×d matrix in their blocks, or read with them 4-bit have none either (a GAN's
 * activations of 4× a kernel's bytes). Once per pass. vt__packed_runs: seq[0..n) (weights'
 * element counts; pk 1 for the packed ones, ix their indexes, NULL: none) less the runs of
 * repeating blocks that hold no packed weight (their quantization state's, ahead of the
 * model's layers); its new n */
void vt__find_packed(vt__pass *p);
/* vt__find_qstate (infer_packed.c): marks the packed weights' quantization state, kept before
 * the first temporary: one absmax per 64-element block of a packed weight (1, 2 or 4 B each: its
 * bytes / 32, / 16 or / 8), each matched to one packed weight made before it, and beside it the
 * constants of its double quantization (an fp32 absmax of the absmax per 256 blocks, the 16-entry
 * fp32 code, the fp32 offset scalar, the 256-entry map); their bytes in p->qstate_bytes */
void vt__find_qstate(vt__pass *p);
size_t vt__packed_runs(uint64_t *seq, size_t *ix, unsigned char *pk, size_t n);
/* vt__infer_params: P, L, d, biases, V, a tied or untied head, a gated MLP from the parameters
 * (the tensors kept from before the first temporary); elems gets their element counts (*nelems),
 * [*lo, *hi) the repeating blocks. With two models among them, one frozen (no gradient), elems
 * keeps the trained one's alone (P is every weight's). */
void vt__infer_params(const vt__pass *p, infer_result *out, uint64_t *elems, size_t *nelems,
                      size_t *lo, size_t *hi);

/* vt__infer_bias: whether the projections of the repeating blocks elems[lo..lo+per), reps of
 * them, of width d have biases (infer_bias.c): a vector of a projection's other output width
 * beside its weight says True; the norms' weights alone, or LayerNorm's weight-and-bias pairs
 * beside projections of other widths with no such vector, False; else not known */
void vt__infer_bias(const uint64_t *elems, size_t n, size_t lo, size_t per, size_t reps, uint64_t d,
                    infer_result *out);

/* vt__find_images: an image batch and its labels among the first forward's tensors (marked batch,
 * p->img_*), and the program's other inputs (marked batch); 1 when it marked any.
 * vt__infer_images: what they say, or a vision transformer's patch tokens (infer_images.c) */
int vt__find_images(vt__pass *p);
void vt__infer_images(const vt__pass *p, const uint64_t *elems, size_t nelems, size_t lo, size_t hi,
                      infer_result *out);
/* vt__infer_heads: H from the first forward's fused attention (infer_heads.c), once B·T (or B and
 * T) and d are known */
void vt__infer_heads(const vt__pass *p, infer_result *out);
/* vt__infer_factored: out->factored_elems (infer.h) from the weights' element counts elems[0..n)
 * and the width out has (infer_sizes.c) */
void vt__infer_factored(const uint64_t *elems, size_t n, infer_result *out);
/* vt__fwd_sizes: out->fwd_sizes (infer.h) from the first forward's tensors (infer_sizes.c) */
void vt__fwd_sizes(const vt__pass *p, infer_result *out);

#endif
