/* replay_again.h — replay_again.c's part of the replay (not an interface): a run of one step's
 * PyTorch tensor events logged, and its step simulated again through the caching allocator's
 * rules at the end (replay_result.again_*). */
#ifndef VT_ANALYZER_REPLAY_AGAIN_H
#define VT_ANALYZER_REPLAY_AGAIN_H

#include "replay_state.h"

/* replay_again_begin: the log started (s->again; NULL when out of memory: nothing said) */
void replay_again_begin(state *s);
/* replay_again_alloc / _free: a tensor of PyTorch's allocator made / freed (e: its entry;
 * grad: the replay took the free for a gradient's, freed by the program) */
void replay_again_alloc(state *s, const livemap_entry *e);
void replay_again_free(state *s, const livemap_entry *e, int grad);
/* replay_again_end: after the pass: where the run took one step under the allocator's default
 * rules and the simulation of its events reserves what the trace did, r->again_* from the step
 * taken again; the log freed either way */
void replay_again_end(state *s);

#endif
