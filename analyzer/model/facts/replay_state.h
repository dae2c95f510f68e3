/* replay_state.h — the replay's private state, shared by the files of the one replay:
 * replay.c (the pass, events in order), replay_phase.c (phases, iterations, parameter sizes)
 * and replay_snap.c (peaks, snapshots, lifetimes, their classification). Not an interface. */
#ifndef VT_ANALYZER_REPLAY_STATE_H
#define VT_ANALYZER_REPLAY_STATE_H

#include "blocks.h"
#include "catpeaks.h"
#include "livemap.h"
#include "replay.h"

/* L_INNER: a tensor of PyTorch's caching allocator (its tracker, layer 3), inside a segment
 * that L_SEGMENT already counts: allocated, never reserved a second time. */
enum level { L_NONE, L_TENSOR, L_SEGMENT, L_OTHER, L_INNER };

/* flags of a live entry (livemap_entry.flags), from its stack or the allocator tracker */
enum {
    EF_LOSS = 1,
    EF_TO_COPY = 2,
    EF_TORCH_SEG = 4,
    EF_WORKSPACE = 8,
    EF_ATTENTION = 16,
    EF_INPUT = 32
};

/* the replay state: one per replay_file */
typedef struct state {
    replay_result *r;
    livemap live;
    stack_facts *facts; /* by stack id; phase 255 = not computed */
    uint32_t nfacts;
    uint64_t level[5];
    uint8_t thread_phase[1024];
    int seen_forward;
    uint8_t last_alloc_phase;    /* the phase of the last allocation on any thread */
    int in_opt;                  /* inside an optimizer stretch (one step) */
    uint32_t iter, bwd;          /* optimizer steps / backward passes begun */
    uint32_t bwd_at_step;        /* bwd when the last optimizer step began */
    uint32_t accum, accum_steps; /* backward passes before each step, over how many steps */
    int accum_mixed;             /* 1: the steps did not all follow the same number of them */
    /* sizes of the tensors allocated before the first forward (parameters): the vocabulary */
    uint64_t *init_sizes;
    size_t ninit, capinit;
    uint64_t vocab;
    int vocab_done;
    catpeaks peaks; /* category_peaks */
    uint64_t event;
    /* allocations freed after the current peak candidate that were live at it: with the ones
     * still live at the end, they are the snapshot at the peak (one pass, no replay) */
    live_item *ret;
    size_t nret, capret;
    /* the same for the allocated (tensor) peak, r->at_tensors */
    live_item *ret2;
    size_t nret2, capret2;
    uint64_t alloc_at_peak; /* tensor bytes at the snapshot's moment (replay_snap_bump_peaks) */
    /* half the sizes of the parameters (allocated at init): a 16-bit copy of a weight */
    uint64_t *half;
    size_t nhalf, caphalf;
    /* cuMemMap chunks (VA, handle) since the allocator tracker's last SEGMENT_MAP: which
     * physical handles that segment is made of */
    struct {
        uint64_t va, handle;
    } maps[4096];
    unsigned nmaps;
    /* optimizer-step tensors freed since the last allocation, classified once the next one
     * comes (or the trace ends: then they were kept to the end, e.g. a one-step run's state) */
    uint64_t last_alloc_event;
    uint64_t grad_free_event; /* the last free of a gradient by the program (zero_grad), 0: none */
    struct pending_free {
        live_item it;
        uint64_t alloc_event;
        uint8_t level, flags;
    } * pend;
    size_t npend, cappend;
    /* PyTorch's blocks (blocks.c), from the allocator tracker's events: max_memory_allocated */
    blocks blocks;
    int blocks_on;
} state;

/* OOM bookkeeping */
typedef struct oom_track {
    int pending;
    uint64_t first_event, requested, time_ns, released, last_event;
    uint32_t stack, fails;
    uint8_t phase, emulated;
} oom_track;

/* replay_phase.c */
/* replay_phase_half_add / replay_phase_half_has: a set of sizes (half a parameter's size). */
void replay_phase_half_add(state *s, uint64_t v);
int replay_phase_half_has(const state *s, uint64_t v);
/* replay_phase_note_init: the size of a tensor made before the first forward (a parameter). */
void replay_phase_note_init(state *s, uint64_t size);
/* replay_phase_step: an optimizer step begins (iter, in_opt); the backward passes since the last
 * one were its micro-steps (accum, accum_steps, accum_mixed). */
void replay_phase_step(state *s);
/* replay_phase_of_stack: the phase of a stack's frames (s: the state), for growth.c */
int replay_phase_of_stack(void *s, uint32_t id);
/* replay_phase_event: the phase of an event; *loss gets its EF_* flags (allocations). */
uint8_t replay_phase_event(state *s, const reader_event *ev, int is_alloc, uint8_t *loss);

/* replay_snap.c */
/* replay_snap_bump_peaks: the levels changed: new peaks of the three levels (at time t). */
void replay_snap_bump_peaks(state *s, uint8_t ph, uint64_t t);
/* replay_snap_oom: copies the live set at the first failure of an OOM. */
void replay_snap_oom(state *s);
/* replay_snap_on_free: e is freed in phase ph: its lifetime is noted, then it leaves the set. */
void replay_snap_on_free(state *s, livemap_entry *e, uint8_t ph, int oom_pending);
/* replay_snap_flush: notes the lifetimes held back (s->pend): after an allocation (they were
 * not the run's last frees) or at the end of the pass (they were). */
void replay_snap_flush(state *s);
/* replay_snap_finish_peak: builds the snapshot at the peak after the pass. */
void replay_snap_finish_peak(state *s);
/* replay_snap_classify: sorts a snapshot's items into categories (snap->by_cat). */
void replay_snap_classify(const state *s, replay_result *r, replay_snapshot *snap);
/* replay_snap_cat_peaks: category_peaks, from every lifetime noted and the live set's, swept in a
 * second pass over the trace (rd, rewound). */
void replay_snap_cat_peaks(state *s, replay_result *r, reader *rd);

#endif
