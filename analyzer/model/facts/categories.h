/* categories.h — the memory categories every byte of a report is sorted into.
 * One X-macro is the single list (formula.md §1); names, order and JSON keys come from it.
 * Classification rules live in classify.c; the formulas that predict them in formula.c. */
#ifndef VT_ANALYZER_CATEGORIES_H
#define VT_ANALYZER_CATEGORIES_H

#include <stdint.h>

/* X(ENUM_SUFFIX, "display name", "json_key", "one-line meaning") */
#define VT_CATEGORIES(X)                                                                           \
    X(PARAMETERS, "parameters", "parameters",                                                      \
      "model weights: fp32 under AMP, 16-bit in pure 16-bit training")                             \
    X(GRADIENTS, "gradients", "gradients", ".grad buffers, alive from backward to zero_grad")      \
    X(OPTIMIZER, "optimizer", "optimizer",                                                         \
      "the optimizer's state (moments, momentum), made at its first step")                         \
    X(ACTIVATIONS, "activations", "activations", "forward tensors saved for backward")             \
    X(LOGITS, "logits/loss", "logits_loss", "the output layer's logits and the loss's buffers")    \
    X(ATTENTION, "attention", "attention", "attention scores / kernels' scratch, freed in phase")  \
    X(AUTOCAST, "autocast copies", "autocast_copies", "16-bit weight copies made by autocast")     \
    X(BACKWARD, "backward", "backward", "made by backward, not a parameter gradient (scratch)")    \
    X(WORKSPACE, "library workspaces", "workspaces", "cuBLAS workspaces kept by PyTorch")          \
    X(TEMPORARIES, "temporaries", "temporaries", "allocated and freed within one phase")           \
    X(INPUTS, "inputs", "inputs",                                                                  \
      "batches and other tensors the program puts on the device itself (token ids, images, "       \
      "targets; its own random draws and copies)")                                                 \
    X(CONTEXT, "CUDA context", "cuda_context", "driver/runtime state, no allocation call")         \
    X(KERNEL_CODE, "kernel code", "kernel_code", "module / library loads (kernel images)")         \
    X(CACHE, "allocator cache", "allocator_cache", "reserved by the caching allocator, unused")    \
    X(EXTERNAL, "other / external", "external", "allocations outside PyTorch (e.g. cuBLAS, NCCL)") \
    X(UNKNOWN, "unknown", "unknown", "could not be classified; always shown")

typedef enum category {
#define VT_CAT_ENUM(e, name, key, doc) CAT_##e,
    VT_CATEGORIES(VT_CAT_ENUM)
#undef VT_CAT_ENUM
        CAT_COUNT
} category;

/* Bytes per category at one instant (a peak, an OOM). */
typedef struct cat_breakdown {
    uint64_t bytes[CAT_COUNT];
} cat_breakdown;

/* category_name: display name ("logits/loss"); "?" for an out-of-range value. */
const char *category_name(category c);
/* category_key: JSON key ("logits_loss"); "?" for an out-of-range value. */
const char *category_key(category c);
/* category_doc: one-line meaning. */
const char *category_doc(category c);
/* category_from_key: parses a JSON key or display name; returns CAT_COUNT if unknown. */
category category_from_key(const char *key);
/* cat_breakdown_total: sum of all categories (at most UINT64_MAX: a sum past it is held). */
uint64_t cat_breakdown_total(const cat_breakdown *b);
/* category_tensor: 1 for a category of tensors PyTorch's allocator hands out (what
 * max_memory_allocated counts), 0 for its cache and what lies outside it (the CUDA context,
 * kernel code, external allocations). cat_breakdown_tensors: b's bytes in those categories (held
 * at UINT64_MAX, as cat_breakdown_total). */
int category_tensor(category c);
uint64_t cat_breakdown_tensors(const cat_breakdown *b);

#endif
