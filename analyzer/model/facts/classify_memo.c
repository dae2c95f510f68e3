/* classify_memo.c — classify()'s answers kept, so that the replay asks the rule table once per
 * kind of allocation: the category an allocation of a settle key has at every end it can still have
 * (classify_settled, the category sweep's), and the whole inputs' cache (classify_cached, the
 * snapshots'). The rules themselves: classify.c. Interface: classify.h. */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "phases.h"

/* ---- classify_settled: every end the lifetime can still have ------------------------------------
 */

/* The settle key (classify_settle_bits): iter_alloc is 0 and bwd_alloc 0 or 1 in it (rules compare
 * the counters only with each other and 0). */
#define KEY_BITS 27

uint32_t classify_settle_key(const classify_input *in, int param_may, int weight_copy_may,
                             int vocab_may, int end_counts)
{
    uint32_t key = classify_settle_bits(
        (unsigned)in->space, (unsigned)in->layer, in->tensor_api != 0, in->tensor_mode != 0,
        (unsigned)in->phase_alloc, in->loss_site != 0, in->weight_copy != 0, in->param_sized != 0,
        in->vocab_sized != 0, in->workspace != 0, in->attention != 0, in->input != 0,
        in->bwd_alloc > 0, param_may != 0, weight_copy_may != 0, vocab_may != 0, end_counts != 0,
        in->own_cast ? 1u + (in->cast_output != 0) + 2u * (in->cast_grads != 0) : 0u);
    return key | (uint32_t)(in->state_left != 0) << 26; /* (the run's) */
}

/* settle_at: classify() over every end an allocation of key can still have, now, the run's
 * state_left as key says */
static category settle_at(uint32_t key, unsigned now)
{
    classify_input in;
    memset(&in, 0, sizeof in);
    in.space = (int)(key & 15), in.layer = (int)(key >> 4 & 3);
    in.tensor_api = key >> 6 & 1, in.tensor_mode = key >> 7 & 1;
    in.phase_alloc = (int)(key >> 8 & 15), in.loss_site = key >> 12 & 1;
    in.weight_copy = key >> 13 & 1, in.param_sized = key >> 14 & 1;
    in.vocab_sized = key >> 15 & 1, in.workspace = key >> 16 & 1;
    in.attention = key >> 17 & 1, in.input = key >> 18 & 1;
    in.iter_alloc = 0, in.bwd_alloc = key >> 19 & 1;
    int param_may = key >> 20 & 1, wc_may = key >> 21 & 1, vocab_may = key >> 22 & 1;
    int end_counts = key >> 23 & 1;
    unsigned kind = key >> 24 & 3; /* (classify_settle_bits) */
    in.own_cast = kind != 0, in.cast_output = kind == 2, in.cast_grads = kind == 3;
    in.state_left = key >> 26 & 1;
    uint32_t iter = (now & CLS_ITER_PASSED) != 0;
    uint32_t bwd = in.bwd_alloc + ((now & CLS_BWD_PASSED) != 0);
    /* the ends told apart: a counter already past its allocation's is past it at either value
     * (the rules compare it with that and 0 only), a lifetime a gradient's free outlived
     * outlives its step at either bit, a run that freed one frees nothing at its end (the walk
     * had been up to 4 times longer: 10.7 M instructions of the 37 H100 traces' 972 M) */
    uint32_t iter_last = iter + !(now & CLS_ITER_PASSED), bwd_last = bwd + !(now & CLS_BWD_PASSED);
    unsigned bits_walked = 1u | (now & CLS_OUTLIVED ? 0 : 2u) | (now & CLS_GRAD_FREED ? 0 : 4u);
    int tm0 = in.tensor_mode, ps0 = in.param_sized, wc0 = in.weight_copy, vs0 = in.vocab_sized;
    int tm_n = (now & CLS_TM_SET) || tm0 ? 1 : 2;
    int ps_n = param_may ? 2 : 1, wc_n = wc_may ? 2 : 1, vs_n = vocab_may ? 2 : 1;
    /* (frozen_oom is not walked: a tensor the frozen_forward rule could take, a forward's, can
     * still be freed within its forward, a temporary the same; it never settles before) */
    category cat = CAT_COUNT;
    for (int tm = 0; tm < tm_n; tm++)
        for (int ps = 0; ps < ps_n; ps++)
            for (int wc = 0; wc < wc_n; wc++)
                for (int vs = 0; vs < vs_n; vs++) {
                    in.tensor_mode = tm_n == 1 ? tm0 : tm;
                    in.param_sized = ps_n == 1 ? ps0 : ps;
                    in.weight_copy = wc_n == 1 ? wc0 : wc;
                    in.vocab_sized = vs_n == 1 ? vs0 : vs;
                    /* alive at the end: what a live allocation's item says */
                    if (end_counts) {
                        in.freed = 0;
                        in.phase_free = PHASE_COUNT;
                        in.iter_free = in.bwd_free = 0;
                        in.cut_by_oom = in.freed_at_end = in.outlived_step = 0;
                        category c = classify(&in, NULL);
                        if (cat != CAT_COUNT && c != cat)
                            return CAT_COUNT;
                        cat = c;
                    }
                    in.freed = 1;
                    for (int ph = 0; ph < PHASE_COUNT; ph++)
                        for (uint32_t it = iter; it <= iter_last; it++)
                            for (uint32_t bw = bwd; bw <= bwd_last; bw++)
                                for (unsigned bits = 0; bits < 8; bits++) {
                                    if (bits & ~bits_walked)
                                        continue;
                                    in.phase_free = ph;
                                    in.iter_free = it;
                                    in.bwd_free = bw;
                                    in.cut_by_oom = bits & 1;
                                    in.outlived_step = (now & CLS_OUTLIVED) || (bits & 2);
                                    in.freed_at_end = !(now & CLS_GRAD_FREED) && (bits & 4);
                                    category c = classify(&in, NULL);
                                    if (cat != CAT_COUNT && c != cat)
                                        return CAT_COUNT;
                                    cat = c;
                                }
                }
    return cat;
}

/* the settle key names every field classify() reads but the ones a lifetime's end sets: a new
 * field of classify_input belongs in it (or among those settle() walks) */
_Static_assert(sizeof(classify_input) == 104, "classify_input changed: update the settle key");

/* settle: settle_at where the run's state_left is 1, else at both (0 may still become 1) */
static category settle(uint32_t key, unsigned now)
{
    category c = settle_at(key, now);
    return key >> 26 & 1 || c == settle_at(key | 1u << 26, now) ? c : CAT_COUNT;
}

/* classify_settled_slow: classify_settled's answer not yet in m: worked out and kept. */
category classify_settled_slow(uint32_t key, unsigned now, classify_memo *m)
{
    uint32_t full = (key << 5 | (now & 31)) + 1; /* 0: an empty slot (classify_settled) */
    category c = settle(key, now);
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        struct classify_memo_entry *e = calloc(cap, sizeof *e);
        if (!e)
            return c;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->e[i].key)
                continue;
            size_t k = classify_memo_slot(m->e[i].key, cap);
            while (e[k].key)
                k = (k + 1) & (cap - 1);
            e[k] = m->e[i];
        }
        free(m->e);
        m->e = e;
        m->cap = cap;
    }
    size_t j = classify_memo_slot(full, m->cap);
    while (m->e[j].key)
        j = (j + 1) & (m->cap - 1);
    m->e[j].key = full;
    m->e[j].cat = (uint8_t)c;
    m->n++;
    return c;
}

/* PACKED: every field of classify_input with the bits its place in the cache's key has (the
 * counters ranked: 0..2) */
/* clang-format off */
#define PACKED(X)                                                                                  \
    X(space, 4)                                                                                    \
    X(layer, 2)                                                                                    \
    X(tensor_api, 1)                                                                               \
    X(tensor_mode, 1)                                                                              \
    X(phase_alloc, 4)                                                                              \
    X(phase_free, 4)                                                                               \
    X(iter_alloc, 2)                                                                               \
    X(iter_free, 2)                                                                                \
    X(loss_site, 1)                                                                                \
    X(weight_copy, 1)                                                                              \
    X(freed, 1)                                                                                    \
    X(bwd_alloc, 2)                                                                                \
    X(bwd_free, 2)                                                                                 \
    X(param_sized, 1)                                                                              \
    X(vocab_sized, 1)                                                                              \
    X(workspace, 1)                                                                                \
    X(attention, 1)                                                                                \
    X(input, 1)                                                                                    \
    X(own_cast, 1)                                                                                 \
    X(cast_output, 1)                                                                              \
    X(cast_grads, 1)                                                                               \
    X(cut_by_oom, 1)                                                                               \
    X(freed_at_end, 1)                                                                             \
    X(outlived_step, 1)                                                                            \
    X(frozen_oom, 1)                                                                               \
    X(state_left, 1)
/* clang-format on */
#define PACKED_ONE(f, bits) +1
_Static_assert(sizeof(classify_input) == (0 PACKED(PACKED_ONE)) * 4, "every field packed");
#undef PACKED_ONE

/* pack: k (its counters ranked) in 64 bits, every field in a place of its own (a key for the
 * cache; never 0), 0 when a field is wider than its place (classify then answers uncached) */
static uint64_t pack(const classify_input *k)
{
    uint64_t key = 1, over = 0;
    unsigned at = 1;
#define PACK_ONE(f, bits)                                                                          \
    over |= (uint64_t)(uint32_t)k->f >> (bits);                                                    \
    key |= (uint64_t)(uint32_t)k->f << at;                                                         \
    at += (bits);
    PACKED(PACK_ONE)
#undef PACK_ONE
    return over ? 0 : key;
}

category classify_cached(const classify_input *in, classify_cache *c)
{
    classify_input k = *in;
    classify_rank(&k.iter_alloc, &k.iter_free);
    classify_rank(&k.bwd_alloc, &k.bwd_free);
    uint64_t key = pack(&k);
    struct classify_cache_entry *e = key ? classify_cache_at(c, key) : NULL;
    if (!e)
        return classify(&k, NULL);
    if (e->key == key)
        return (category)e->cat;
    e->key = key;
    e->cat = (uint8_t)classify(&k, NULL);
    return (category)e->cat;
}

int classify_cache_make(classify_cache *c)
{
    return (c->e = calloc(CLASSIFY_CACHE, sizeof *c->e)) ? 0 : -1;
}

void classify_cache_free(classify_cache *c)
{
    free(c->e);
    c->e = NULL;
}

void classify_memo_free(classify_memo *m)
{
    free(m->e);
    m->e = NULL;
    m->n = m->cap = 0;
}
