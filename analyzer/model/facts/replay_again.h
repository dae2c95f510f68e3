/* replay_again.h — replay_again.c's part of the replay (not an interface): a run of one step's
 * PyTorch tensor events logged, and its step simulated again through the caching allocator's
 * rules at the end (replay_result.again_*). */
#ifndef VT_ANALYZER_REPLAY_AGAIN_H
#define VT_ANALYZER_REPLAY_AGAIN_H

#include "replay_state.h"

/* what a record is (again_rec.alloc): a free, an allocation, and, for the step taken again, an
 * allocation the step kept (not made again) or a batch (made again, the last one freed) */
enum { REC_FREE, REC_ALLOC, REC_KEPT, REC_BATCH };

typedef struct again_rec {
    uint64_t event; /* its event (the records' order) */
    union {
        uint64_t size; /* an allocation's request */
        uint64_t ref;  /* a free's: the event of the allocation it ends */
    };
    uint32_t h;    /* the simulation's handle */
    uint8_t alloc; /* REC_*: a free, an allocation; after the step's first run, what it is */
    uint8_t ph;
    uint8_t bits; /* AGAIN_*: freed; grad (a free's: a gradient's, freed by the program
                   * (zero_grad); an allocation's: so freed after the step); input (an
                   * allocation's: a batch the loop moved to the device, EF_INPUT) */
} again_rec;
enum { AGAIN_FREED = 1, AGAIN_GRAD = 2, AGAIN_INPUT = 4 };
_Static_assert(sizeof(again_rec) == 24, "a record is 24 bytes (a one-step run logs up to 2^18)");
_Static_assert(offsetof(again_rec, h) == 16 && offsetof(again_rec, alloc) == 20 &&
                   offsetof(again_rec, ph) == 21 && offsetof(again_rec, bits) == 22 &&
                   __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "a record's last word: h, alloc, ph, bits (add, replay_again.c)");

/* the log: records v[0..n), room for cap (AGAIN_FIRST at first, doubled up to AGAIN_MAX) */
struct again {
    again_rec *v;
    size_t n, cap;
};
/* AGAIN_MAX: records kept (6 MiB; a longer first step: not run); AGAIN_FIRST: room at first
 * (1.5 MiB, address space until written: a compiled run's first two steps, 52k records, with no
 * copy) */
#define AGAIN_MAX ((size_t)1 << 18)
#define AGAIN_FIRST ((size_t)1 << 16)

/* replay_again_begin: the log started (s->again; NULL when out of memory: nothing said) */
void replay_again_begin(state *s);
/* replay_again_more: the log full: room for more, or stopped (s->again NULL: a second step
 * began, AGAIN_MAX reached, or out of memory) */
void replay_again_more(state *s);

/* replay_again_alloc / _free: a tensor of PyTorch's allocator made / freed (e: its entry;
 * grad: the replay took the free for a gradient's, freed by the program), logged (out of line,
 * the entry alone passed: the pass's inline path keeps its registers) */
void replay_again_alloc(state *s, const livemap_entry *e);
void replay_again_free(state *s, const livemap_entry *e, int grad);
/* replay_again_end: after the pass: where the run took one step under the allocator's default
 * rules and the simulation of its events reserves what the trace did, r->again_* from the step
 * taken again; the log freed either way */
void replay_again_end(state *s);

#endif
