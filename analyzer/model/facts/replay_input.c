/* replay_input.c — what the rules of classify.c see of an allocation, for replay_cats.c (each
 * allocation's category) and replay_snap.c (the snapshots' items): an entry's item, the input
 * classify reads of an item, and the keys its answers are kept by. */
#include <string.h>

#include "replay_state.h"

/* item_of: replay_item's work (inline in replay_item_ended: every freed allocation a snapshot
 * holds is one) */
static inline __attribute__((always_inline)) live_item item_of(const livemap_entry *e)
{
    return (live_item){.addr = e->addr,
                       .size = e->size,
                       .time_ns = e->time_ns,
                       .stack_id = e->stack_id,
                       .alloc_event = e->alloc_event,
                       .iter_alloc = e->iter,
                       .api = e->api,
                       .space = e->space,
                       .device = e->device,
                       .layer = (uint8_t)reader_api_layer(e->api),
                       .phase_alloc = e->phase,
                       .phase_free = PHASE_COUNT,
                       .bwd_alloc = e->bwd,
                       .loss_site = (uint8_t)((e->flags & EF_LOSS) != 0),
                       .workspace = (uint8_t)((e->flags & EF_WORKSPACE) != 0),
                       .attention = (uint8_t)((e->flags & EF_ATTENTION) != 0),
                       .input = (uint8_t)((e->flags & EF_INPUT) != 0),
                       .tensor_api = e->level == L_TENSOR || e->level == L_INNER,
                       .to_copy = (uint8_t)((e->flags & EF_TO_COPY) != 0),
                       .torch_segment = (uint8_t)((e->flags & EF_TORCH_SEG) != 0)};
}

live_item replay_item(const livemap_entry *e)
{
    return item_of(e);
}

live_item replay_item_ended(const livemap_entry *e, const replay_end *x)
{
    live_item it = item_of(e);
    replay_item_end(&it, x);
    return it;
}

void replay_item_ended_at(live_item *it, const livemap_entry *e, const replay_end *x)
{
    *it = item_of(e);
    replay_item_end(it, x);
}

/* input_core: what the rules of classify.c see of an allocation at its birth (its end's fields
 * left 0); *copy: its size is half a parameter's. */
/* replay_size_bits_slow: replay_size_bits (replay_state.h) for a size not in the memo now (the
 * same slot: 4096 slots of two ways) */
unsigned replay_size_bits_slow(const state *s, uint64_t size)
{
    struct size_memo *m = replay_size_memo(s->szm, size);
    int half = !(size & 1) && replay_phase_half_has(s, size / 2); /* a parameter's size */
    int copy = replay_phase_half_has(s, size);                    /* half a parameter's */
    int vocab = s->vocab && size % s->vocab == 0 && size / s->vocab >= 128 && !half && !copy;
    unsigned bits = (unsigned)(half | copy << 1 | vocab << 2);
    m[1] = m[0]; /* the newer one in the first way */
    m[0] = (struct size_memo){size, s->sizes_gen, (uint8_t)bits};
    return bits;
}

uint32_t replay_cats_key_miss(const state *s, const livemap_entry *e, struct key_memo *k,
                              uint64_t tag)
{
    k->tag = tag;
    return k->key = replay_cats_key(s, e);
}

static classify_input input_core(const state *s, const replay_result *r, uint64_t size, int space,
                                 int layer, int tensor_api, int phase_alloc, int loss_site,
                                 int to_copy, int *copy)
{
    unsigned bits = replay_size_bits(s, size);
    int half = bits & 1, vocab = bits >> 2 & 1;
    *copy = bits >> 1 & 1;
    classify_input in;
    memset(&in, 0, sizeof in);
    in.space = space, in.layer = layer, in.tensor_api = tensor_api;
    in.tensor_mode = r->tensor_mode, in.phase_alloc = phase_alloc, in.loss_site = loss_site;
    in.state_left = r->state_left != 0;
    in.weight_copy = to_copy && tensor_api && *copy;
    in.param_sized = half;
    in.vocab_sized = vocab;
    return in;
}

/* kept_to_end: what the event free_event freed (0: not freed) was freed after the run's last
 * allocation, in a run that never freed a gradient to tell a step's end by
 * (classify_input.freed_at_end) */
static int kept_to_end(const state *s, uint64_t free_event)
{
    return free_event && free_event > s->last_alloc_event && !s->grad_free_event;
}

/* frozen_at_oom: what an OOM's unwinding freed (after_oom), or what is alive (phase_free
 * PHASE_COUNT), at an OOM in a frozen first forward (s->frozen_oom: while it pends;
 * classify_input.frozen_oom) */
static int frozen_at_oom(const state *s, int after_oom, int phase_free)
{
    return s->frozen_oom && (after_oom || phase_free == PHASE_COUNT);
}

classify_input replay_input(const state *s, const replay_result *r, const live_item *it)
{
    int copy,
        cast = it->loss_site && it->attention; /* (an item's flags are its entry's: EF_CAST) */
    classify_input in = input_core(s, r, it->size, it->space, it->layer, it->tensor_api,
                                   it->phase_alloc, it->loss_site && !cast, it->to_copy, &copy);
    in.phase_free = it->phase_free;
    in.iter_alloc = it->iter_alloc;
    in.iter_free = it->iter_free;
    in.freed = it->phase_free != PHASE_COUNT;
    in.bwd_alloc = it->bwd_alloc;
    in.bwd_free = it->bwd_free;
    int ws = cast && it->workspace, gr = ws && it->input; /* (EF_CAST_OUT, EF_CAST_GRAD) */
    in.workspace = it->workspace && !cast;
    in.attention = it->attention && !cast;
    in.own_cast = cast;
    in.cast_output = ws && !gr;
    in.cast_grads = gr;
    in.cut_by_oom = it->after_oom;
    in.input = it->input && !gr;
    in.freed_at_end = kept_to_end(s, it->free_event);
    in.outlived_step = it->outlived_step;
    in.frozen_oom = frozen_at_oom(s, it->after_oom, it->phase_free);
    return in;
}

replay_key2 replay_item_key(const state *s, const live_item *it)
{
    uint32_t w0;     /* api, space, device, layer */
    uint64_t w1, w2; /* phase_alloc ... input; after_oom ... outlived_step */
    memcpy(&w0, &it->api, sizeof w0);
    memcpy(&w1, &it->phase_alloc, sizeof w1);
    memcpy(&w2, &it->after_oom, sizeof w2);
    _Static_assert(offsetof(live_item, layer) == offsetof(live_item, api) + 3 &&
                       offsetof(live_item, space) == offsetof(live_item, api) + 1 &&
                       offsetof(live_item, input) == offsetof(live_item, phase_alloc) + 7 &&
                       offsetof(live_item, after_oom) == offsetof(live_item, phase_alloc) + 8 &&
                       offsetof(live_item, outlived_step) == offsetof(live_item, after_oom) + 5,
                   "the fields classify sees of an item lie in three words");
    unsigned order = classify_order(it->iter_alloc, it->iter_free) |
                     classify_order(it->bwd_alloc, it->bwd_free) << 4;
    uint64_t b = (w0 & 0xff00ff00u) | (w2 & 0x0000ff00000000ffull) |
                 (uint64_t)replay_size_bits(s, it->size) << 16 | (uint64_t)order << 48 |
                 (uint64_t)kept_to_end(s, it->free_event) << 56 | 1ull << 63;
    return (replay_key2){w1, b};
}

/* replay_end_key (replay_state.h): what classify sees of e ending now as x says (replay_input's
 * fields, the counters ordered by classify_order) in 44 bits: e's settle key, now
 * (replay_cats_key: every field of its allocation, what its size says now), and its end's. arec:
 * e's allocating record in the window (0: none): one that came after what a key is made of last
 * changed (keys_from) has the key it was given then (e->ckey), the one it has now. */
uint64_t replay_end_key(const state *s, const livemap_entry *e, const replay_end *x, uint64_t arec)
{
    uint32_t key = arec && arec >= s->keys_from ? e->ckey : replay_cats_key(s, e);
    unsigned ranks = classify_order(e->iter, x->iter) | classify_order(e->bwd, x->bwd) << 4;
    unsigned freed = x->phase != PHASE_COUNT;
    return (uint64_t)(key & 0xffffff) | (uint64_t)(x->phase & 15) << 24 | (uint64_t)ranks << 28 |
           (uint64_t)freed << 36 | (uint64_t)(x->after_oom != 0) << 37 |
           (uint64_t)kept_to_end(s, x->event) << 38 | (uint64_t)(x->outlived_step != 0) << 39 |
           (uint64_t)frozen_at_oom(s, x->after_oom, x->phase) << 40 | 1ull << 41 |
           (uint64_t)(key >> 24) << 42; /* (the key's cast kind last) */
}
