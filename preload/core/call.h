/* call.h — call.c's interface, the one thing a hook hands its call to: the guard, admission
 * to the emulated card (reserve before the real call, commit or roll back after), and one
 * record. A hook is:
 *     vt__call c;
 *     r = vt__call_alloc_begin(&c, api, space, device, size, stream) ? OOM_CODE : real(...);
 *     vt__call_alloc_end(&c, r, new_address, final_size);
 * (or the _free_, _image_, _context_ and _meminfo_ pairs). Every _begin pairs with one _end. */
#ifndef VT_PRELOAD_CALL_H
#define VT_PRELOAD_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "../cuda_abi.h"
#include "attr.h"
#include "thread.h"

typedef struct vt__call {
    uint16_t api;      /* enum vt_api */
    int space;         /* VT_SPACE_* accounted on the emulated card; 0 = not device memory */
    int device;        /* ordinal, -1 = the current one (asked only when needed) */
    uint64_t stream;   /* raw stream handle, 0 = default */
    uint64_t reserved; /* bytes reserved on the emulated card by _begin */
    int rec;           /* 1: this call is recorded (outermost hook, tracing on) */
    int refused;       /* 1: the emulated card had no room; the real function is not called */
    int card;          /* 1: card emulation was found on by _begin */
    int outer_real;    /* thread.h's vt__t_real as _begin found it, put back by _end */
} vt__call;

/* vt__call_nested: this hook was reached inside another's real call on this thread (the
 * runtime's cudaMalloc calling the driver's cuMemAlloc): nothing of it is recorded, so the hooks
 * of the calls every allocation makes twice pass it straight through (what _begin / _end would
 * have done at that depth, without their calls). Reached inside a hook but not in its real call
 * (a signal handler's): 0, so that _end counts it lost. */
static inline int vt__call_nested(void)
{
    return vt__depth() > 0 && vt__in_real_call();
}

/* vt__call_alloc_begin: enters the guard; when recorded and `space` is device memory under
 * card emulation, reserves `size` bytes on the device atomically (threads racing for the last
 * bytes never pass the card together). Returns 1 when the card refused: the caller returns
 * the API's out-of-memory code (2) without calling the real function. */
int vt__call_alloc_begin(vt__call *c, uint16_t api, int space, int device, uint64_t size,
                         uint64_t stream);
/* vt__call_alloc_end: after the real call (result 0 = success): commits the reservation as
 * `size` bytes keyed by `addr` (final size, e.g. with the pitch) or rolls it back, writes one
 * ALLOC record (OOM after it on out-of-memory), leaves the guard. A failed VMM handle creation
 * other than out-of-memory is a probe, not an event. */
void vt__call_alloc_end(vt__call *c, int32_t result, uint64_t addr, uint64_t size);
/* vt__call_alloc_end_aux: the same with the record's 8-byte aux field (handle, hint). */
void vt__call_alloc_end_aux(vt__call *c, int32_t result, uint64_t addr, uint64_t size,
                            uint64_t aux);
/* vt__call_image_end: a module / library load: size = vt__image_size(image), computed only
 * when recorded; image NULL = unknown size (loaded from a file). */
void vt__call_image_end(vt__call *c, int32_t result, uint64_t handle, const void *image);

/* vt__call_free_begin / _end: a release; addr 0 is not an event. On success the card forgets
 * what (space, addr) held. */
void vt__call_free_begin(vt__call *c, uint16_t api, int space, uint64_t stream);
void vt__call_free_end(vt__call *c, int32_t result, uint64_t addr);

/* vt__call_context_begin / _end: a context creation, recorded at any guard depth (the runtime
 * creates its context inside the first hooked runtime call). The first context of a device is
 * measured (device.h), recorded as MEMINFO (source context) and as an ALLOC of that size,
 * accounted on the card, and starts the sampler; later ones only if they fail. */
void vt__call_context_begin(vt__call *c, uint16_t api, int device);
void vt__call_context_end(vt__call *c, int32_t result, CUcontext ctx);

/* vt__call_meminfo_begin / _end: cudaMemGetInfo / cuMemGetInfo: on success (free, total) are
 * rewritten for the emulated card and recorded. */
void vt__call_meminfo_begin(vt__call *c);
void vt__call_meminfo_end(vt__call *c, int32_t result, size_t *free_b, size_t *total_b);

#endif
