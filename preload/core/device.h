/* device.h — device.c's interface: devices and contexts as the driver tells them (never the
 * runtime): the calling thread's current device, one DEVICE record per ordinal, and the
 * memory a new context takes. Calls realsym and the writer only. */
#ifndef VT_PRELOAD_DEVICE_H
#define VT_PRELOAD_DEVICE_H

#include <stdatomic.h>
#include <stdint.h>

#include "../cuda_abi.h"
#include "attr.h"

#define VT__MAX_DEVICES 64

/* vt__current_device: the calling thread's current device via the driver's cuCtxGetDevice;
 * -1 if unknown. Inline, asked on every event: the cached pointer (device.c's
 * vt__ctx_get_device, realsym.h's slot: NULL not looked up yet, 1 missing) called directly once
 * found; vt__current_device_lookup looks it up (and answers) otherwise. Callgrind, bench_alloc
 * 100k pairs --stacks none: ~14 -> ~5 of this function's own instructions an event. */
extern __attribute__((visibility("hidden"))) _Atomic(void *) vt__ctx_get_device;
int vt__current_device_lookup(void);
static inline int vt__current_device(void)
{
    void *p = atomic_load_explicit(&vt__ctx_get_device, memory_order_acquire);
    if (VT__UNLIKELY((uintptr_t)p <= 1))
        return vt__current_device_lookup();
    CUdevice d = -1;
    return ((CUresult(*)(CUdevice *))(uintptr_t)p)(&d) == CUDA_SUCCESS ? (int)d : -1;
}
/* vt__device_note: writes the DEVICE record of `ordinal` the first time it is seen (out of
 * range: nothing). Inline, asked on every allocation: a bit per ordinal (vt__devices_seen,
 * device.c's), the record written by vt__device_note_new. */
extern __attribute__((visibility("hidden"))) _Atomic uint64_t vt__devices_seen;
void vt__device_note_new(int ordinal);
static inline void vt__device_note(int ordinal)
{
    if (VT__LIKELY((unsigned)ordinal < VT__MAX_DEVICES &&
                   (atomic_load_explicit(&vt__devices_seen, memory_order_acquire) >> ordinal & 1)))
        return;
    vt__device_note_new(ordinal);
}
/* vt__device_total: the total bytes its DEVICE record said (0 before it was written). */
uint64_t vt__device_total(int ordinal);

/* The three driver functions a context measurement uses; tests pass their own. */
typedef struct vt__ctx_ops {
    CUresult (*get_current)(CUcontext *);
    CUresult (*set_current)(CUcontext);
    CUresult (*mem_get_info)(size_t *, size_t *);
} vt__ctx_ops;

/* vt__context_first: 1 exactly once per device ordinal in [0, 64) (its first context), else 0. */
int vt__context_first(int device);
/* vt__context_measure: the device memory in use right after `ctx` was created: makes ctx
 * current, asks mem_get_info, restores the thread's previous context. ops NULL = the real
 * driver's. Result 0 with *used / *total set, or -1 (both 0) when a function is missing or
 * fails; the thread's current context is left as it was either way. */
int vt__context_measure(const vt__ctx_ops *ops, CUcontext ctx, uint64_t *used, uint64_t *total);

/* vt__device_fork_child: DEVICE records are per trace file (a context stays measured). */
void vt__device_fork_child(void);

#endif
