/* sampler.h — sampler.c's interface: the optional VRAMTRACE_SAMPLE_MS sampler thread. */
#ifndef VT_PRELOAD_SAMPLER_H
#define VT_PRELOAD_SAMPLER_H

/* vt__sampler_note_context: a device's context exists (call.c); starts the sampler thread
 * the first time when the period is set. */
void vt__sampler_note_context(int device, void *ctx);

#endif
