/* call.c — the one sequence every hook hands its call to: guard, card admission (reserve,
 * real call, commit or roll back), one record. Before it existed the sequence was written
 * three times in the hook files, and the copies differed. The caller's errno after an _end
 * is what the real call left. Interface: call.h. */
#include <errno.h>

#include "call.h"
#include "card.h"
#include "device.h"
#include "image.h"
#include "record.h"
#include "sampler.h"
#include "thread.h"
#include "vramtrace/trace_format.h"

#define VT__RESULT_OOM 2 /* cudaErrorMemoryAllocation == CUDA_ERROR_OUT_OF_MEMORY */

static int card_device(int device)
{
    return device < 0 ? 0 : device;
}

int vt__call_alloc_begin(vt__call *c, uint16_t api, int space, int device, uint64_t size,
                         uint64_t stream)
{
    *c = (vt__call){
        .api = api, .space = space, .device = device, .stream = stream, .rec = vt__enter()};
    if (c->rec && space && size && (c->card = vt__card_enabled())) {
        if (c->device < 0)
            c->device = vt__current_device();
        if (vt__card_reserve(card_device(c->device), size))
            c->reserved = size;
        else
            c->refused = 1;
    }
    c->outer_real = vt__real_begin();
    return c->refused;
}

/* in_handler: a call not recorded, made inside a hook on this thread but not by its real call:
 * by a signal handler that interrupted the hook's own work (thread.h's vt__t_real) */
static int in_handler(void)
{
    return vt__depth() > 1 && vt__t_real != vt__depth() - 1;
}

static void alloc_end(vt__call *c, int32_t result, uint64_t addr, uint64_t size, int has_aux,
                      uint64_t aux)
{
    /* a failed VMM handle creation other than out of memory: a probe (PyTorch asking which
     * handle types the driver has), never an event, so no drop either once the trace ended */
    int probe =
        c->space == VT_SPACE_VMM_HANDLE && result != 0 && !c->refused && result != VT__RESULT_OOM;
    vt__real_end(c->outer_real);
    if (!c->rec) {
        if (vt__depth() == 1 && !probe) /* not recorded: the trace has ended, or is off */
            vt__writer_note_late();
        else if (!probe && in_handler())
            vt__writer_note_in_hook();
        vt__leave();
        return;
    }
    int e = errno; /* what the real call left, kept for the caller whatever recording does */
    if (c->device < 0)
        c->device = vt__current_device();
    if (result == 0 && c->space && (c->card || vt__card_enabled()))
        vt__card_commit(card_device(c->device), c->space, addr, c->reserved, size);
    else if (c->reserved)
        vt__card_unreserve(card_device(c->device), c->reserved);
    if (!probe) {
        vt__event ev = {.api = c->api,
                        .flags = c->refused ? VT_EVF_EMULATED : 0,
                        .device = c->device,
                        .addr = result == 0 ? addr : 0,
                        .size = size,
                        .stream = c->stream,
                        .result = result,
                        .has_aux = has_aux,
                        .aux = aux};
        vt__record_alloc(&ev);
    }
    errno = e;
    vt__leave();
}

void vt__call_alloc_end(vt__call *c, int32_t result, uint64_t addr, uint64_t size)
{
    alloc_end(c, result, addr, size, 0, 0);
}

void vt__call_alloc_end_aux(vt__call *c, int32_t result, uint64_t addr, uint64_t size, uint64_t aux)
{
    alloc_end(c, result, addr, size, 1, aux);
}

void vt__call_image_end(vt__call *c, int32_t result, uint64_t handle, const void *image)
{
    alloc_end(c, result, handle, c->rec ? vt__image_size(image) : 0, 0, 0);
}

void vt__call_free_begin(vt__call *c, uint16_t api, int space, uint64_t stream)
{
    *c = (vt__call){.api = api, .space = space, .device = -1, .stream = stream, .rec = vt__enter()};
    c->outer_real = vt__real_begin();
}

void vt__call_free_end(vt__call *c, int32_t result, uint64_t addr)
{
    vt__real_end(c->outer_real);
    if (c->rec && addr) {
        int e = errno;
        if (result == 0 && c->space && vt__card_enabled())
            vt__card_release(c->space, addr);
        vt__event ev = {
            .api = c->api, .device = -1, .addr = addr, .stream = c->stream, .result = result};
        vt__record_free(&ev);
        errno = e;
    } else if (addr && vt__depth() == 1) {
        vt__writer_note_late();
    } else if (addr && in_handler()) {
        vt__writer_note_in_hook();
    }
    vt__leave();
}

void vt__call_context_begin(vt__call *c, uint16_t api, int device)
{
    *c = (vt__call){.api = api, .device = device, .rec = vt__enter_any_depth()};
    c->outer_real = vt__real_begin();
}

void vt__call_context_end(vt__call *c, int32_t result, CUcontext ctx)
{
    vt__real_end(c->outer_real);
    int e = errno;
    int first = c->rec && result == 0 && vt__context_first(c->device);
    uint64_t used = 0, total = 0;
    if (first) {
        vt__context_measure(NULL, ctx, &used, &total);
        vt__record_meminfo(c->device, total - used, total, VT_MEMINFO_CONTEXT);
        vt__sampler_note_context(c->device, ctx);
        c->space = VT_SPACE_CONTEXT;
    }
    errno = e;
    if (c->rec && (first || result != 0)) {
        alloc_end(c, result, (uint64_t)(uintptr_t)ctx, used, 0, 0);
        return;
    }
    vt__leave();
}

void vt__call_meminfo_begin(vt__call *c)
{
    *c = (vt__call){.device = -1, .rec = vt__enter()};
    c->outer_real = vt__real_begin();
}

void vt__call_meminfo_end(vt__call *c, int32_t result, size_t *free_b, size_t *total_b)
{
    vt__real_end(c->outer_real);
    if (c->rec && result == 0 && free_b && total_b) {
        int e = errno;
        vt__meminfo_seen(free_b, total_b);
        errno = e;
    }
    vt__leave();
}
