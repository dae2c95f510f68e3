/* record.h — record.c's interface: turning one hooked call into trace records (ALLOC, FREE,
 * OOM, MEMINFO, plus the THREAD / DEVICE / STACK records they need the first time). Hooks
 * reach it through call.h; the sampler writes MEMINFO records with it. */
#ifndef VT_PRELOAD_RECORD_H
#define VT_PRELOAD_RECORD_H

#include <stddef.h>
#include <stdint.h>

typedef struct vt__event {
    uint16_t api;   /* enum vt_api */
    uint16_t flags; /* extra VT_EVF_FAILED / VT_EVF_EMULATED bits; api/device are added */
    int32_t device; /* ordinal, or -1: the core asks the driver for the current device */
    uint64_t addr;  /* result pointer / handle / address freed */
    uint64_t size;
    uint64_t stream; /* raw cudaStream_t / CUstream value, 0 = default */
    int32_t result;  /* the real call's return code (0 = success) */
    int has_aux;
    uint64_t aux;
} vt__event;

/* vt__record_alloc / vt__record_free: stamp time + thread, capture the stack (per config),
 * write one ALLOC / FREE record (plus THREAD/STACK/CODE/SYMBOL/MODULE/DEVICE records the
 * first time each is needed). On an out-of-memory result an OOM record follows the ALLOC.
 * Cost target: < 150 ns without stacks. Never fails visibly: on output failure tracing
 * stops with one warning on stderr. */
void vt__record_alloc(const vt__event *ev);
/* vt__record_last_ns: the time of this thread's last vt__record_alloc (0: none yet), for a
 * caller that wants the time without reading the clock again (inline: the segment hook's
 * attach check asks it on every cudaMalloc). */
extern __thread __attribute__((visibility("hidden"))) uint64_t vt__t_last_ns;
static inline uint64_t vt__record_last_ns(void)
{
    return vt__t_last_ns;
}
void vt__record_free(const vt__event *ev);
/* vt__record_meminfo: one MEMINFO record (source VT_MEMINFO_*). */
void vt__record_meminfo(int device, uint64_t free_b, uint64_t total_b, int source);
/* vt__meminfo_seen: what a hooked cudaMemGetInfo / cuMemGetInfo returned: rewritten to the
 * emulated card when --card is set, then recorded (MEMINFO, source app). */
void vt__meminfo_seen(size_t *free_b, size_t *total_b);

#endif
