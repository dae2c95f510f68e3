/* replay_again.c — a run of one optimizer step, its step taken again through PyTorch's caching
 * allocator (allocsim.h): what a second step would reserve. The run's one step made the
 * optimizer's state after its forward, in blocks its forward's activations had freed; a second
 * forward's activations fit where they find room then, and that decides the cache, which the
 * run never measured. The replay logs PyTorch's tensor events (size, phase, which allocation a
 * free ends) until a second step begins; at the end the log is simulated from the start (its
 * reserved peak must be the trace's, else the rules are not the run's and nothing is said), then
 * the step again: from the first forward to the last allocation, the state and what else the
 * step kept alive left as they are, the gradients freed first (zero_grad) and made again. */
#include <stdlib.h>
#include <string.h>

#include "allocsim.h"
#include "replay_again.h"

#define AGAIN_STEPS 4 /* the most steps taken again */

void replay_again_begin(state *s)
{
    s->again = calloc(1, sizeof *s->again);
}

static void stop(state *s)
{
    if (s->again) {
        free(s->again->v);
        free(s->again);
        s->again = NULL;
    }
}

void replay_again_more(state *s)
{
    struct again *g = s->again;
    if (s->iter >= 2 || g->n == AGAIN_MAX) { /* a second step: this run is not one of one */
        stop(s);
        return;
    }
    size_t cap = g->cap ? 2 * g->cap : AGAIN_FIRST;
    again_rec *v = realloc(g->v, cap * sizeof *v);
    if (!v) {
        stop(s);
        return;
    }
    g->v = v, g->cap = cap;
}

/* put: a record in its place (x: an allocation's request, or a free's ref; bits AGAIN_*), its
 * last word (h 0, alloc, ph, bits) written whole: its bit fields had each been read, masked and
 * written */
static inline void put(state *s, again_rec *r, uint64_t x, int alloc, uint8_t ph, unsigned bits)
{
    uint64_t w = (uint64_t)(uint8_t)alloc << 32 | (uint64_t)ph << 40 | (uint64_t)bits << 48;
    r->event = s->event;
    r->size = x;
    memcpy(&r->h, &w, sizeof w);
}

/* add_more: add's record where the log is full or a second step began (out of line: add saves no
 * register for it) */
static __attribute__((noinline)) void add_more(state *s, uint64_t x, int alloc, uint8_t ph,
                                               unsigned bits)
{
    replay_again_more(s);
    struct again *g = s->again;
    if (g) /* (NULL: stopped, a second step began or out of memory) */
        put(s, &g->v[g->n++], x, alloc, ph, bits);
}

/* add: a record of the log (0 bytes allocated: none, PyTorch allocates nothing for them) */
static inline void add(state *s, uint64_t x, int alloc, uint8_t ph, unsigned bits)
{
    struct again *g = s->again;
    if (!x && alloc)
        return;
    if (__builtin_expect(s->iter >= 2 || g->n == g->cap, 0))
        add_more(s, x, alloc, ph, bits);
    else
        put(s, &g->v[g->n++], x, alloc, ph, bits);
}

void replay_again_alloc(state *s, const livemap_entry *e)
{
    add(s, e->size, REC_ALLOC, e->phase, e->flags & EF_INPUT ? AGAIN_INPUT : 0);
}

void replay_again_free(state *s, const livemap_entry *e, int grad)
{
    add(s, e->alloc_event, REC_FREE, e->phase, grad ? AGAIN_GRAD : 0);
}

/* of: the record of the allocation a free (records before below) ends, or NULL */
static again_rec *of(struct again *g, size_t below, uint64_t ref)
{
    size_t lo = 0, hi = below;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->v[mid].event < ref)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < below && g->v[lo].alloc && g->v[lo].event == ref ? &g->v[lo] : NULL;
}

/* matched: the allocation record a free record ended, as run found it (its h: that record's index
 * + 1, 0 for none; a free has no handle of its own), or NULL */
static inline again_rec *matched(struct again *g, const again_rec *x)
{
    return x->h ? &g->v[x->h - 1] : NULL;
}

/* run: the records [0, last] simulated: 0 and the reserved peak, or -1; each free's allocation
 * record found once, kept in the free's h (matched) */
static int run(allocsim *a, struct again *g, size_t last, uint64_t *peak)
{
    *peak = 0;
    for (size_t i = 0; i <= last; i++) {
        again_rec *x = &g->v[i];
        if (x->alloc) {
            if (!(x->h = allocsim_alloc(a, x->size)))
                return -1;
        } else {
            again_rec *m = of(g, i, x->ref);
            x->h = m ? (uint32_t)(m - g->v) + 1 : 0;
            if (m && m->h) {
                allocsim_free(a, m->h);
                m->bits |= AGAIN_FREED;
            }
        }
        if (allocsim_reserved(a) > *peak)
            *peak = allocsim_reserved(a);
    }
    return 0;
}

void replay_again_end(state *s)
{
    struct again *g = s->again;
    replay_result *r = s->r;
    size_t last = 0, first = SIZE_MAX;
    /* (a trace cut short, bounded or with events dropped: its step's end, the gradients'
     * frees, may be missing, and what the step kept is not what it made) */
    if (!g || r->iterations != 1 || !r->allocator_mode || !s->blocks_on ||
        s->blocks.rules.basis != BLOCKS_BASIS_DEFAULT || r->status != READER_OK || r->chunked ||
        r->dropped_events || r->missing_events || r->run_dropped) {
        stop(s);
        return;
    }
    for (size_t i = 0; i < g->n; i++)
        if (g->v[i].alloc) {
            last = i;
            if (first == SIZE_MAX && g->v[i].ph == PHASE_FORWARD)
                first = i;
        }
    /* the step begins with the batches the loop moved to the device just before its forward */
    for (size_t b = first;
         b != SIZE_MAX && b > 0 && (!g->v[b - 1].alloc || (g->v[b - 1].bits & AGAIN_INPUT));)
        if (g->v[--b].alloc)
            first = b;
    allocsim *a = allocsim_new();
    uint64_t once = 0, twice = 0;
    if (first == SIZE_MAX || !a || run(a, g, last, &once) < 0) {
        allocsim_delete(a);
        stop(s);
        return;
    }
    /* the step again, and again while the cache grows (up to AGAIN_STEPS): the gradients it
     * kept (those the program freed as gradients after it) freed first, as zero_grad does,
     * made again by its backward; what else it kept (the optimizer's state, a library's
     * workspace, the last loss) as it is, not made again */
    for (size_t i = last + 1; i < g->n; i++) {
        again_rec *m = (g->v[i].bits & AGAIN_GRAD) && !g->v[i].alloc ? of(g, i, g->v[i].ref) : NULL;
        if (m && m >= g->v + first)
            m->bits |= AGAIN_GRAD;
    }
    for (size_t i = first; i <= last; i++)
        if (g->v[i].alloc && !(g->v[i].bits & (AGAIN_FREED | AGAIN_GRAD | AGAIN_INPUT)))
            g->v[i].h = 0, g->v[i].alloc = REC_KEPT; /* (no free of it comes) */
        else if (g->v[i].alloc && (g->v[i].bits & (AGAIN_FREED | AGAIN_INPUT)) == AGAIN_INPUT)
            g->v[i].alloc = REC_BATCH; /* (kept to the next: freed when that one is made) */
    uint64_t before = once;
    for (int k = 0; k < AGAIN_STEPS && !allocsim_failed(a); k++) {
        for (size_t i = first; i <= last; i++)
            if (g->v[i].alloc == REC_ALLOC && !(g->v[i].bits & AGAIN_FREED) && g->v[i].h)
                allocsim_free(a, g->v[i].h), g->v[i].h = 0;
        for (size_t i = first; i <= last && !allocsim_failed(a); i++) {
            again_rec *x = &g->v[i];
            if (x->alloc == REC_ALLOC) {
                x->h = allocsim_alloc(a, x->size);
            } else if (x->alloc == REC_BATCH) { /* the next batch, then the last one freed */
                uint32_t h = allocsim_alloc(a, x->size);
                allocsim_free(a, x->h);
                x->h = h;
            } else if (x->alloc == REC_FREE) {
                again_rec *m = matched(g, x);
                if (m && m >= g->v + first && m->alloc == REC_ALLOC && m->h)
                    allocsim_free(a, m->h), m->h = 0;
            }
            if (allocsim_reserved(a) > twice)
                twice = allocsim_reserved(a);
        }
        if (twice == before) /* (the same blocks again: so every later step) */
            break;
        before = twice;
    }
    if (!allocsim_failed(a)) {
        r->again_first = once;
        r->again_reserved = twice > once ? twice : once;
    }
    allocsim_delete(a);
    stop(s);
}
