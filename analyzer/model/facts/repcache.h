/* repcache.h — backward passes of a step that are not gradient accumulation's micro-steps: the
 * first made no gradient of a weight (a representation cache's loss, GradCache's), repcache.c */
#ifndef VT_ANALYZER_REPCACHE_H
#define VT_ANALYZER_REPCACHE_H

#include <stdint.h>

#include "replay.h"

/* repcache_detect: after the pass, with its snapshots classified: the backward passes of each
 * step (accum over accum_steps steps, every step the same: replay's count), or, a run that ran
 * out of memory before its first step, those begun, when a step's first backward pass made no
 * gradient of a weight and a later one did; 0 when not so or not known. */
uint32_t repcache_detect(const replay_result *r, uint32_t accum, uint32_t accum_steps);
/* repcache_weight_gradients: in a run of r->cache_passes passes per step, the bytes of the
 * weights' gradients: those live in its largest optimizer step (at_step), none made in their
 * step's first pass (the cached representations', leaves that are no weights, may have a
 * weight's size, and live with the weights' before the step); 0 when not so or not known. */
uint64_t repcache_weight_gradients(const replay_result *r);

/* repcache_one_batch: 1 when each step's backward passes (replay's accum >= 2, every step the
 * same) are the terms of one batch's loss: an input the step copied before its first pass was
 * alive at the step, none of its size was copied between the passes, and a tensor of its size
 * the program made between them (not copied) was alive too: a GAN critic's real images and the
 * fakes its generator made for errD_fake's pass. Not micro-batches cut from that batch (no
 * batch-sized tensor made between the passes: views); 0 otherwise. */
int repcache_one_batch(const replay_result *r);

#endif
