/* replay_oom.h — a replay's out-of-memory failures (replay_api.c): each from its first failed
 * request until the allocator recovers (a request as large succeeds), the program goes on from it
 * (caught: still the run's OOM, unless the trace ends in a failure after it), or the trace ends
 * in it; the run's OOM then in replay_result (has_oom and the rest). Part of the one replay. */
#ifndef VT_ANALYZER_REPLAY_OOM_H
#define VT_ANALYZER_REPLAY_OOM_H

#include <stdint.h>

#include "reader.h"
#include "replay.h"
#include "timeline.h"

typedef struct state state;

typedef struct oom_track { /* an out-of-memory failure, from its first failed request */
    int pending;
    uint64_t first_event, requested, time_ns, released, last_event;
    uint32_t stack, fails;
    uint8_t phase, emulated, raised, caught; /* raised: PyTorch did (its tracker's OOM); caught:
                                              * the program went on from it (oom_caught) */
    uint8_t tentative;  /* after a caught one (state.oom_rec): that one's snapshot set aside */
    uint32_t iter, bwd; /* the optimizer steps and backward passes begun when it began */
} oom_track;

/* The caught OOM's snapshot and moment (replay_result's at_oom, oom_iter, oom_bwd,
 * oom_seen_event; the state's bwd_oom; the timeline's at_oom), set aside while a later failure's
 * own are taken at its first failure (replay_snap_oom_aside): back if that failure is resolved
 * (recovered, caught), what its window saw of the caught one's allocations merged in
 * (replay_snap_oom_back); dropped if the trace ends in it (replay_snap_oom_drop). A later failure
 * the trace ends in had been described by the live set as the trace left it (the program's
 * teardown: every tensor freed, "needs ~5.99 GiB" of a batch that failed at 11). */
typedef struct oom_aside {
    int held;
    replay_snapshot snap;
    timeline_moment tl_at_oom;
    uint64_t seen_event;
    uint32_t iter, bwd, bwd_oom;
} oom_aside;

/* What the program went on with after an error it caught (replay_went_on.c): from a training
 * failure's first event on (an evaluation's opens none), the replay's peak_train and
 * peak_reserved are that stretch's, the run's before it kept in pre_*; the failure recovered
 * (the allocator's own retry), the stretch before it goes on (undo); caught, it stays (the
 * program's inputs then read: the batch it went on with), to the next failure or the end */
#define WENT_ON_INPUTS 16
#define WENT_ON_MADE 32 /* (a Trainer's batch makes a dozen of its size) */
typedef struct went_on_window {
    int open, caught, has_undo;
    int ended_in;       /* the trace ended in the failure it began at (after a caught one) */
    uint64_t event;     /* the failure it began at */
    uint32_t iter;      /* the optimizer steps begun then */
    uint64_t res, proc; /* the reserved and process levels as its tensors rose (not in an
                         * evaluation pass) */
    uint64_t pre_train, pre_res, pre_t_res; /* the run's before it */
    struct went_on_undo {                   /* the stretch before it, as it was when it began */
        int open, caught;
        uint64_t event, train, res, t_res, wres, wproc, pre_train, pre_res, pre_t_res;
        uint32_t iter;
    } undo;
    uint32_t ninputs; /* the program's inputs live when it was caught, oldest first */
    uint64_t input_size[WENT_ON_INPUTS], input_event[WENT_ON_INPUTS];
    uint32_t input_stack[WENT_ON_INPUTS];
    /* every tensor live then made since it began, oldest first (whatever their stacks say: the
     * token batch where no Python frame marks the inputs, the position ids after it) */
    uint32_t nmade;
    uint64_t made_size[WENT_ON_MADE], made_event[WENT_ON_MADE];
} went_on_window;

/* replay_special_alloc: replay.c's apply_alloc's part of an allocation of an API with more to it
 * (AP_SPECIAL) but a tensor of PyTorch's tracker, or of a failed call (phase ph): the tracker's
 * notes and segments, an OOM, contexts; 1 when the allocation ends there */
int replay_special_alloc(state *s, const reader_event *ev, oom_track *ot, uint8_t ph);
/* replay_oom_caught: pending OOM ot caught, counted once; still has_oom's (replay.h oom_caught) */
void replay_oom_caught(state *s, oom_track *ot);
/* replay_oom_news: an allocation's phase began what s->news says (a backward pass, a step, the
 * vocabulary fixed): the categories waiting are looked at again; a pending OOM was caught */
void replay_oom_news(state *s, oom_track *ot);
/* replay_oom_restore: ot recovered (a request as large succeeded) or was caught: the caught one
 * before it, if ot was tentative, is the run's OOM again; replay_oom_end: the trace ended */
void replay_oom_restore(state *s, oom_track *ot);
void replay_oom_end(state *s, oom_track *ot);
/* replay_oom_result: the trace ended: the run's OOM (ot, or the error the program caught that it
 * stays) into the result */
void replay_oom_result(state *s, const oom_track *ot);

/* replay_oom_new_step (oomstep.c): 1 when the run's OOM (at_oom classified) came after a step in
 * a forward or backward most of whose activations were made at code first run after the last
 * step began: a step of a kind no earlier one ran (a GAN's generator after its critic's), whose
 * backward had not made the gradients of the weights it trains; else 0 */
int replay_oom_new_step(const state *s, const replay_result *r);

/* replay_snap.c: the caught OOM's snapshot set aside, back, or dropped (oom_aside) */
void replay_snap_oom_aside(state *s);
void replay_snap_oom_back(state *s);
void replay_snap_oom_drop(state *s);

/* replay_went_on_open: a training failure (ot) begins a stretch; replay_went_on_resolved: ot, the
 * failure that began the last one, was caught (the stretch stays; the inputs live now are what
 * the program went on with) or recovered (undone); replay_went_on_end: the trace ended (after the
 * inference: the batch from its token batch's stack), the run's peaks whole again */
void replay_went_on_open(state *s, const oom_track *ot);
void replay_went_on_resolved(state *s, const oom_track *ot, int caught);
void replay_went_on_end(state *s);

#endif
