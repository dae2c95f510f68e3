/* replay_kv.h — the replay's account of transformers' KV cache (replay.c's alloc and free
 * paths): the bytes live under it, what the attention kept of it for the backward, the inputs its
 * copies replaced (replay.h's kv_* results). Not an interface: replay_state.h's state. */
#ifndef VT_ANALYZER_REPLAY_KV_H
#define VT_ANALYZER_REPLAY_KV_H

#include "replay_state.h"

/* replay_stack_kv: stack id's facts (computed at its allocation) say transformers' KV cache */
static inline int replay_stack_kv(const state *s, uint32_t id)
{
    return id < s->nfacts && s->facts[id].f.phase != 255 && s->facts[id].f.kv;
}

/* replay_kv_alloc / replay_kv_free: a tensor e enters / leaves the live set of a trace with a KV
 * cache (kv_on; backward: freed by the autograd engine): the cache's share, and the tensors'
 * largest without it, follow */
static inline void replay_kv_alloc(state *s, const livemap_entry *e)
{
    if (replay_stack_kv(s, e->stack_id)) {
        s->kv_live += e->size;
        s->r->kv_made_bytes += e->size;
        if (s->nkv_pend < 4)
            s->kv_pend[s->nkv_pend++] = e->size;
    } else {
        s->nkv_pend = 0;
    }
    uint64_t t = s->level[L_TENSOR] + s->level[L_INNER];
    t = t > s->kv_live ? t - s->kv_live : 0;
    if (t > s->r->tensors_no_kv_peak)
        s->r->tensors_no_kv_peak = t, s->r->t_tensors_no_kv = e->time_ns;
}

static inline void replay_kv_free(state *s, const livemap_entry *e, int backward)
{
    if (replay_stack_kv(s, e->stack_id)) {
        /* freed right after a larger copy of the cache was made: a later forward extended it
         * (DynamicLayer.update's cat of a generation's next token), so the cache is read */
        if (s->nkv_pend && s->kv_pend[s->nkv_pend - 1] > e->size)
            s->r->kv_read_bytes += e->size;
        s->kv_live = s->kv_live > e->size ? s->kv_live - e->size : 0;
        s->r->kv_backward_bytes += backward ? e->size : 0; /* the attention kept it */
        return;
    }
    for (unsigned i = 0; i < s->nkv_pend; i++) /* an input the copies replaced (replay.h; in */
        if (s->kv_pend[i] >= e->size && e->size * 2 >= s->kv_pend[i]) { /* a narrower dtype */
            /* (part of its copy, half of it at the least: not a mask's or a scalar's free) */
            s->r->kv_replaced_bytes += e->size;
            s->kv_pend[i] = s->kv_pend[--s->nkv_pend];
            break;
        }
}

#endif
