/* classify.h — sorting one live allocation into a category (categories.h) by the rules of
 * classify.c: its memory space, the phase that allocated it, when it was freed (lifetime),
 * whether its site is the loss, and the capture mode. */
#ifndef VT_ANALYZER_CLASSIFY_H
#define VT_ANALYZER_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "categories.h"

/* What a rule may look at. phase_free = PHASE_COUNT: not freed before the trace ended. */
typedef struct classify_input {
    int space;       /* enum vt_space of the allocating API */
    int layer;       /* 1 runtime, 2 driver */
    int tensor_api;  /* 1: a per-tensor (async / pool) allocation */
    int tensor_mode; /* 1: the trace is in tensor mode */
    int phase_alloc; /* enum phase */
    int phase_free;
    uint32_t iter_alloc, iter_free; /* optimizer steps seen before the alloc / the free */
    int loss_site;                  /* 1: allocated under cross_entropy / log_softmax / nll_loss */
    int weight_copy; /* 1: a dtype conversion whose size is half a parameter's (fp32 -> 16-bit) */
    /* tensor mode: lifetime and role */
    int freed;                    /* 1: freed before the trace ended */
    uint32_t bwd_alloc, bwd_free; /* backward passes begun before the alloc / the free */
    int param_sized;              /* 1: the size of a parameter */
    int vocab_sized;  /* 1: a multiple of the vocabulary, at least 64 rows (B*T*V logits) */
    int workspace;    /* 1: under cuBLAS's handle / workspace */
    int attention;    /* 1: under a fused attention kernel */
    int input;        /* 1: the program's own code made / copied it onto the device (a batch) */
    int own_cast;     /* 1: the program's own dtype cast on the device, outside a module (x.float(),
                       * .to(dtype): phases.h's stack_facts.cast); no loss_site, attention, input */
    int cast_output;  /* with own_cast: its line first ran after the run's first forward began,
                       * before its first backward: a cast of what the forward made (its output,
                       * for the loss: F.mse_loss(pred.float(), ...)), not a batch's */
    int cast_grads;   /* with own_cast: its line first ran after the run's first backward began,
                       * before its first optimizer step: a cast of what the backward made (fp32
                       * master gradients, m.grad = p.grad.float()), not a batch's */
    int cut_by_oom;   /* 1: freed while an out-of-memory error unwound the step */
    int freed_at_end; /* 1: freed after the run's last allocation (kept to the end), in a run
                       * that never freed a gradient */
    int outlived_step; /* 1: freed after a gradient freed after it (past its optimizer step) */
    int frozen_oom;    /* 1: alive at, or freed by, an out-of-memory error in a first forward that
                        * kept nothing for a backward (replay.h's oom_frozen_forward) */
    int state_left;    /* 1: the run had moved its optimizer's state off the device between steps
                        * (replay.h's state_left: a run-level fact, from 0 to 1 at most) */
} classify_input;

/* classify: the category of the first rule that matches (never fails: UNKNOWN last).
 * *rule_out (optional) receives the rule's index for explanations. */
category classify(const classify_input *in, int *rule_out);
/* ---- settling a category before the lifetime ends ---------------------------------------------
 * What the end of a lifetime can still change, from the replay's state now: counters only grow
 * (a free's iter_free / bwd_free are at least the ones now), a gradient freed after the
 * allocation stays freed after it (outlived_step), once the run freed a gradient freed_at_end is 0,
 * tensor_mode goes from 0 to 1 at most, and the parameters' sizes only gain members until the
 * first forward (param_sized / weight_copy from 0 to 1; vocab_sized is set at the first forward).
 * Rules may compare iter_free / bwd_free only with iter_alloc / bwd_alloc and with 0. */

/* classify_settle_key: an allocation's features (in: its fields but the end's) and what may still
 * change of them (param_sized, weight_copy, vocab_sized may still become 1; end_counts: its being
 * alive at the end is an end to settle, 0: the caller's business; state_left 0 may still become
 * 1: the run's), as 27 bits: classify_settle_bits, and state_left at bit 26. */
uint32_t classify_settle_key(const classify_input *in, int param_may, int weight_copy_may,
                             int vocab_may, int end_counts);
/* classify_settle_bits: the same from the fields themselves (flags 0 / 1; no struct to fill):
 * bits 0-3 space, 4-5 layer, 6 tensor_api, 7 tensor_mode, 8-11 phase_alloc, 12 loss_site, 13
 * weight_copy, 14 param_sized, 15 vocab_sized, 16 workspace, 17 attention, 18 input, 19 bwd_alloc
 * > 0, 20 param_sized may still change, 21 weight_copy may, 22 vocab_sized may, 23 the end counts,
 * 24-25 the program's own cast: 0 none, 1 one (own_cast), 2 cast_output, 3 cast_grads. */
static inline uint32_t classify_settle_bits(unsigned space, unsigned layer, unsigned tensor_api,
                                            unsigned tensor_mode, unsigned phase_alloc,
                                            unsigned loss_site, unsigned weight_copy,
                                            unsigned param_sized, unsigned vocab_sized,
                                            unsigned workspace, unsigned attention, unsigned input,
                                            unsigned bwd_alloc_pos, unsigned param_may,
                                            unsigned weight_copy_may, unsigned vocab_may,
                                            unsigned end_counts, unsigned cast_kind)
{
    return (space & 15) | (layer & 3) << 4 | tensor_api << 6 | tensor_mode << 7 |
           (phase_alloc & 15) << 8 | loss_site << 12 | weight_copy << 13 | param_sized << 14 |
           vocab_sized << 15 | workspace << 16 | attention << 17 | input << 18 |
           bwd_alloc_pos << 19 | (param_may & !param_sized) << 20 |
           (weight_copy_may & !weight_copy) << 21 | vocab_may << 22 | end_counts << 23 |
           (cast_kind & 3) << 24;
}
/* What has happened since the allocation (classify_settled's now). */
enum {
    CLS_ITER_PASSED = 1, /* an optimizer step began */
    CLS_BWD_PASSED = 2,  /* a backward pass began */
    CLS_OUTLIVED = 4,    /* a gradient was freed after it */
    CLS_GRAD_FREED = 8,  /* the run has freed a gradient (freed_at_end is 0 from then on) */
    CLS_TM_SET = 16      /* tensor_mode can no longer change (1, or assumed to stay 0) */
};

/* classify_memo: classify_settled's answers by key (zero it to start). */
typedef struct classify_memo {
    struct classify_memo_entry {
        uint32_t key; /* 0 = empty */
        uint8_t cat;
    } * e;
    size_t n, cap;
} classify_memo;

/* classify_settled: the category of an allocation whose lifetime has not ended (key), when every
 * end it can still have, now, gives the same one, else CAT_COUNT. Then classify() at its end
 * gives that category too. */
/* classify_memo_slot: where a memo key's probe starts (cap: a power of two) */
static inline size_t classify_memo_slot(uint32_t key, size_t cap)
{
    return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}
category classify_settled_slow(uint32_t key, unsigned now, classify_memo *m);
static inline category classify_settled(uint32_t key, unsigned now, classify_memo *m)
{
    uint32_t full = (key << 5 | (now & 31)) + 1; /* 0: an empty slot */
    if (m->cap)
        for (size_t j = classify_memo_slot(full, m->cap); m->e[j].key; j = (j + 1) & (m->cap - 1))
            if (m->e[j].key == full)
                return (category)m->e[j].cat;
    return classify_settled_slow(key, now, m);
}
void classify_memo_free(classify_memo *m);

/* classify_cache: classify's answers for the lifetimes that ended last (a fixed table, made on
 * first use; zero it to start). */
#define CLASSIFY_CACHE 1024
typedef struct classify_cache {
    struct classify_cache_entry {
        uint64_t key; /* the input packed, its counters ranked (classify_cached); 0 = empty */
        uint8_t cat;
    } * e;
} classify_cache;

/* classify_cached: classify(in) (no rule), from c when an input that classify cannot tell from
 * it was seen: the same but for counters in the same order among themselves and 0 (iter_alloc,
 * iter_free and 0; bwd_alloc, bwd_free and 0: all the rules compare them with). */
category classify_cached(const classify_input *in, classify_cache *c);
/* classify_cache_make: the cache's table (-1 when out of memory). */
int classify_cache_make(classify_cache *c);
/* classify_cache_at: the one entry a key (never 0) may be in (the table made on first use; NULL
 * when out of memory); an entry whose key differs is free to take it. */
static inline struct classify_cache_entry *classify_cache_at(classify_cache *c, uint64_t key)
{
    if (!c->e && classify_cache_make(c) < 0)
        return NULL;
    return &c->e[(size_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (CLASSIFY_CACHE - 1)];
}
void classify_cache_free(classify_cache *c);
/* classify_rank: a counter pair (iter_alloc, iter_free; bwd_alloc, bwd_free) as ranks among 0
 * and themselves, 0..2 (their order kept, equals equal): all classify's rules tell of them. */
static inline void classify_rank(uint32_t *a, uint32_t *f)
{
    uint32_t x = *a, y = *f;
    *a = (x > 0) + (y > 0 && y < x);
    *f = (y > 0) + (x > 0 && x < y);
}
/* classify_order: the same of a pair told in 4 bits for a key (which are not 0, which is the
 * smaller): what classify_rank tells, in fewer instructions (no ranks to add up) */
static inline unsigned classify_order(uint32_t x, uint32_t y)
{
    return (unsigned)(x != 0) | (unsigned)(y != 0) << 1 | (unsigned)(x < y) << 2 |
           (unsigned)(y < x) << 3;
}

/* classify_rule_name / classify_rule_reason: the rule table, for reports and reviews. */
const char *classify_rule_name(int rule);
const char *classify_rule_reason(int rule);
int classify_rule_count(void);
/* classify_vocab: the vocabulary V from the byte sizes of the parameters (sorted in place):
 * the largest is the embedding / head (V*d elements) when one of the first four weights is that
 * large (an embedding comes first; else there is none, e.g. a ViT; or half as large, when the
 * largest is a later fp32 master copy of a 16-bit embedding, among copies of the first four
 * weights in their order), the smallest of at least 256 B
 * occurring four times or more a norm's weight (d elements, same dtype; a pair is not): V = largest
 * / smallest when it divides and lies in [1000, 4M]; 0 otherwise. The logits rule takes a multiple
 * of V (B*T*V) for logits. */
uint64_t classify_vocab(uint64_t *sizes, size_t n);

#endif
