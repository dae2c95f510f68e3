/* hook_driver.c — the watched CUDA driver functions: one wrapper per (function, variant),
 * exported under the driver's own names (for programs that link libcuda directly, e.g.
 * Triton) and handed out in place of the real pointers by cuGetProcAddress /
 * cudaGetDriverEntryPoint* / dlsym (hook_procaddr.c, hook_dlsym.c). Each wrapper is a shim
 * around the real call that hands it to the core (core/call.h). The list, with each
 * function's API id, is hook_table.h's VT_DRIVER_FUNCS. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/call.h"
#include "core/realsym.h"
#include "cuda_abi.h"
#include "hook_table.h"
#include "torch/torchalloc.h"
#include "vramtrace/trace_format.h"

/* g_real[i]: the real pointer behind wrapper i (set by cuGetProcAddress, or resolved from
 * libcuda's export of the same name on first call; VT__SYM_MISSING: libcuda lacks it). */
static _Atomic(void *) g_real[VT_DRV_COUNT];

static const char *const g_names[VT_DRV_COUNT] = {
#define VT_DRV_NAME(name, api, ret, params) #name,
    VT_DRIVER_FUNCS(VT_DRV_NAME)
#undef VT_DRV_NAME
};

static void *real_of(int i)
{
    void *p = atomic_load_explicit(&g_real[i], memory_order_acquire);
    if (VT__LIKELY(p && p != VT__SYM_MISSING))
        return p;
    return vt__driver_sym_cached(&g_real[i], g_names[i]);
}

#define REAL(name) ((name##_fn)real_of(VT_DRV_##name))
#define REAL_OR_FAIL(name)                                                                         \
    name##_fn real = REAL(name);                                                                   \
    if (VT__UNLIKELY(!real))                                                                       \
        return CUDA_ERROR_NOT_INITIALIZED;

/* PASS_IF_NESTED: inside another hook (the runtime's call of the same allocation), the real
 * call alone (core/call.h's vt__call_nested) */
#define PASS_IF_NESTED(call)                                                                       \
    if (vt__call_nested())                                                                         \
        return call;

#define OOM CUDA_ERROR_OUT_OF_MEMORY
#define U64(x) ((uint64_t)(uintptr_t)(x))
/* OUT: the pointer / handle a successful call stored, else 0 */
#define OUT(r, p) ((r) == CUDA_SUCCESS && (p) ? U64(*(p)) : 0)

/* ---- linear and async allocations ------------------------------------------------------- */
VT__EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    REAL_OR_FAIL(cuMemAlloc_v2);
    PASS_IF_NESTED(real(p, n));
    vt__call c;
    CUresult r = vt__call_alloc_begin(&c, VT_HOOK_API(cuMemAlloc_v2), VT_SPACE_DEVICE, -1, n, 0)
                     ? OOM
                     : real(p, n);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    return r;
}

/* the pitch is known only after the call: admission uses the unpadded size */
VT__EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h,
                                       unsigned e)
{
    REAL_OR_FAIL(cuMemAllocPitch_v2);
    vt__call c;
    uint64_t want = (uint64_t)w * h;
    CUresult r =
        vt__call_alloc_begin(&c, VT_HOOK_API(cuMemAllocPitch_v2), VT_SPACE_DEVICE, -1, want, 0)
            ? OOM
            : real(p, pitch, w, h, e);
    vt__call_alloc_end(&c, r, OUT(r, p), r == CUDA_SUCCESS && pitch ? (uint64_t)*pitch * h : want);
    return r;
}

VT__EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cuMemAllocManaged);
    vt__call c;
    CUresult r =
        vt__call_alloc_begin(&c, VT_HOOK_API(cuMemAllocManaged), VT_SPACE_MANAGED, -1, n, 0)
            ? OOM
            : real(p, n, flags);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    return r;
}

#define ASYNC_ALLOC(name)                                                                          \
    VT__EXPORT CUresult name(CUdeviceptr *p, size_t n, CUstream s)                                 \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        PASS_IF_NESTED(real(p, n, s));                                                             \
        vt__call c;                                                                                \
        CUresult r = vt__call_alloc_begin(&c, VT_HOOK_API(name), VT_SPACE_DEVICE, -1, n, U64(s))   \
                         ? OOM                                                                     \
                         : real(p, n, s);                                                          \
        vt__call_alloc_end(&c, r, OUT(r, p), n);                                                   \
        return r;                                                                                  \
    }
ASYNC_ALLOC(cuMemAllocAsync)
ASYNC_ALLOC(cuMemAllocAsync_ptsz)

#define POOL_ALLOC(name)                                                                           \
    VT__EXPORT CUresult name(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)              \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        PASS_IF_NESTED(real(p, n, pool, s));                                                       \
        vt__call c;                                                                                \
        CUresult r = vt__call_alloc_begin(&c, VT_HOOK_API(name), VT_SPACE_DEVICE, -1, n, U64(s))   \
                         ? OOM                                                                     \
                         : real(p, n, pool, s);                                                    \
        vt__call_alloc_end(&c, r, OUT(r, p), n);                                                   \
        return r;                                                                                  \
    }
POOL_ALLOC(cuMemAllocFromPoolAsync)
POOL_ALLOC(cuMemAllocFromPoolAsync_ptsz)

VT__EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    REAL_OR_FAIL(cuMemFree_v2);
    PASS_IF_NESTED(real(p));
    vt__call c;
    vt__call_free_begin(&c, VT_HOOK_API(cuMemFree_v2), VT_SPACE_DEVICE, 0);
    CUresult r = real(p);
    vt__call_free_end(&c, r, p);
    return r;
}

#define ASYNC_FREE(name)                                                                           \
    VT__EXPORT CUresult name(CUdeviceptr p, CUstream s)                                            \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        PASS_IF_NESTED(real(p, s));                                                                \
        vt__call c;                                                                                \
        vt__call_free_begin(&c, VT_HOOK_API(name), VT_SPACE_DEVICE, U64(s));                       \
        CUresult r = real(p, s);                                                                   \
        vt__call_free_end(&c, r, p);                                                               \
        return r;                                                                                  \
    }
ASYNC_FREE(cuMemFreeAsync)
ASYNC_FREE(cuMemFreeAsync_ptsz)

VT__EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    REAL_OR_FAIL(cuMemPoolTrimTo);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cuMemPoolTrimTo), 0, -1, keep, 0);
    CUresult r = real(pool, keep);
    vt__call_alloc_end(&c, r, U64(pool), keep);
    return r;
}

/* ---- virtual memory management (expandable segments) -------------------------------------- */
VT__EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n,
                                const CUmemAllocationProp *prop, unsigned long long flags)
{
    REAL_OR_FAIL(cuMemCreate);
    int dev = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
    vt__call c;
    CUresult r = vt__call_alloc_begin(&c, VT_HOOK_API(cuMemCreate), VT_SPACE_VMM_HANDLE, dev, n, 0)
                     ? OOM
                     : real(h, n, prop, flags);
    vt__call_alloc_end(&c, r, OUT(r, h), n);
    return r;
}

VT__EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    REAL_OR_FAIL(cuMemRelease);
    vt__call c;
    vt__call_free_begin(&c, VT_HOOK_API(cuMemRelease), VT_SPACE_VMM_HANDLE, 0);
    CUresult r = real(h);
    vt__call_free_end(&c, r, h);
    return r;
}

VT__EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
    REAL_OR_FAIL(cuMemRetainAllocationHandle);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cuMemRetainAllocationHandle), 0, -1, 0, 0);
    CUresult r = real(h, addr);
    vt__call_alloc_end_aux(&c, r, OUT(r, h), 0, U64(addr));
    return r;
}

VT__EXPORT CUresult cuMemMap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h,
                             unsigned long long flags)
{
    REAL_OR_FAIL(cuMemMap);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cuMemMap), 0, -1, n, 0);
    CUresult r = real(p, n, off, h, flags);
    vt__call_alloc_end_aux(&c, r, p, n, h);
    if (c.rec && r == CUDA_SUCCESS)
        vt__torch_segment(p, n, 1); /* expandable segments: the tracker's SEGMENT_MAP */
    return r;
}

VT__EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t n)
{
    REAL_OR_FAIL(cuMemUnmap);
    vt__call c;
    vt__call_free_begin(&c, VT_HOOK_API(cuMemUnmap), 0, 0);
    CUresult r = real(p, n);
    vt__call_free_end(&c, r, p);
    return r;
}

VT__EXPORT CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
                                        unsigned long long flags)
{
    REAL_OR_FAIL(cuMemAddressReserve);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cuMemAddressReserve), 0, -1, n, 0);
    CUresult r = real(p, n, align, addr, flags);
    vt__call_alloc_end_aux(&c, r, OUT(r, p), n, addr);
    return r;
}

VT__EXPORT CUresult cuMemAddressFree(CUdeviceptr p, size_t n)
{
    REAL_OR_FAIL(cuMemAddressFree);
    vt__call c;
    vt__call_free_begin(&c, VT_HOOK_API(cuMemAddressFree), 0, 0);
    CUresult r = real(p, n);
    vt__call_free_end(&c, r, p);
    return r;
}

VT__EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                                   CUmemAllocationHandleType t)
{
    REAL_OR_FAIL(cuMemImportFromShareableHandle);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cuMemImportFromShareableHandle), 0, -1, 0, 0);
    CUresult r = real(h, os, t);
    vt__call_alloc_end(&c, r, OUT(r, h), 0);
    return r;
}

/* ---- kernel images (sized by the core: core/image.h) ---------------------------------------- */
#define MODULE_LOAD(name, params, args, image)                                                     \
    VT__EXPORT CUresult name params                                                                \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        vt__call c;                                                                                \
        vt__call_alloc_begin(&c, VT_HOOK_API(name), VT_SPACE_MODULE, -1, 0, 0);                    \
        CUresult r = real args;                                                                    \
        vt__call_image_end(&c, r, OUT(r, m), image);                                               \
        return r;                                                                                  \
    }
MODULE_LOAD(cuModuleLoad, (CUmodule * m, const char *fname), (m, fname), NULL)
MODULE_LOAD(cuModuleLoadData, (CUmodule * m, const void *image), (m, image), image)
MODULE_LOAD(cuModuleLoadDataEx,
            (CUmodule * m, const void *image, unsigned n, CUjit_option *o, void **v),
            (m, image, n, o, v), image)
MODULE_LOAD(cuModuleLoadFatBinary, (CUmodule * m, const void *fat), (m, fat), fat)

#define LIBRARY_LOAD(name, arg1, image)                                                            \
    VT__EXPORT CUresult name(CUlibrary *m, arg1, CUjit_option *jo, void **jv, unsigned jn,         \
                             CUlibraryOption *lo, void **lv, unsigned ln)                          \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        vt__call c;                                                                                \
        vt__call_alloc_begin(&c, VT_HOOK_API(name), VT_SPACE_LIBRARY, -1, 0, 0);                   \
        CUresult r = real(m, src, jo, jv, jn, lo, lv, ln);                                         \
        vt__call_image_end(&c, r, OUT(r, m), image);                                               \
        return r;                                                                                  \
    }
LIBRARY_LOAD(cuLibraryLoadData, const void *src, src)
LIBRARY_LOAD(cuLibraryLoadFromFile, const char *src, NULL)

VT__EXPORT CUresult cuModuleUnload(CUmodule m)
{
    REAL_OR_FAIL(cuModuleUnload);
    vt__call c;
    vt__call_free_begin(&c, VT_HOOK_API(cuModuleUnload), VT_SPACE_MODULE, 0);
    CUresult r = real(m);
    vt__call_free_end(&c, r, U64(m));
    return r;
}

VT__EXPORT CUresult cuLibraryUnload(CUlibrary l)
{
    REAL_OR_FAIL(cuLibraryUnload);
    vt__call c;
    vt__call_free_begin(&c, VT_HOOK_API(cuLibraryUnload), VT_SPACE_LIBRARY, 0);
    CUresult r = real(l);
    vt__call_free_end(&c, r, U64(l));
    return r;
}

/* ---- contexts (measured by the core: core/device.h) ------------------------------------------ */
VT__EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    REAL_OR_FAIL(cuDevicePrimaryCtxRetain);
    vt__call c;
    vt__call_context_begin(&c, VT_HOOK_API(cuDevicePrimaryCtxRetain), dev);
    CUresult r = real(ctx, dev);
    vt__call_context_end(&c, r, ctx ? *ctx : NULL);
    return r;
}

VT__EXPORT CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    REAL_OR_FAIL(cuCtxCreate_v2);
    vt__call c;
    vt__call_context_begin(&c, VT_HOOK_API(cuCtxCreate_v2), dev);
    CUresult r = real(ctx, flags, dev);
    vt__call_context_end(&c, r, ctx ? *ctx : NULL);
    return r;
}

/* ---- memory info and host memory ------------------------------------------------------------ */
VT__EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
    REAL_OR_FAIL(cuMemGetInfo_v2);
    vt__call c;
    vt__call_meminfo_begin(&c);
    CUresult r = real(free_b, total_b);
    vt__call_meminfo_end(&c, r, free_b, total_b);
    return r;
}

VT__EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cuMemHostAlloc);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cuMemHostAlloc), 0, -1, n, 0);
    CUresult r = real(p, n, flags);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    return r;
}

VT__EXPORT CUresult cuMemAllocHost_v2(void **p, size_t n)
{
    REAL_OR_FAIL(cuMemAllocHost_v2);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cuMemAllocHost_v2), 0, -1, n, 0);
    CUresult r = real(p, n);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    return r;
}

VT__EXPORT CUresult cuMemFreeHost(void *p)
{
    REAL_OR_FAIL(cuMemFreeHost);
    vt__call c;
    vt__call_free_begin(&c, VT_HOOK_API(cuMemFreeHost), 0, 0);
    CUresult r = real(p);
    vt__call_free_end(&c, r, U64(p));
    return r;
}

/* ---- the table shared with hook_procaddr.c ------------------------------------------------ */
static void *const g_wrappers[VT_DRV_COUNT] = {
#define VT_DRV_WRAP(name, api, ret, params) (void *)&name,
    VT_DRIVER_FUNCS(VT_DRV_WRAP)
#undef VT_DRV_WRAP
};

int vt__drv_index(const char *exported_name)
{
    for (int i = 0; i < VT_DRV_COUNT; i++)
        if (!strcmp(g_names[i], exported_name))
            return i;
    return -1;
}

int vt__drv_is_wrapper(const void *p)
{
    for (int i = 0; i < VT_DRV_COUNT; i++)
        if (g_wrappers[i] == p)
            return 1;
    return 0;
}

void *vt__drv_wrap(int i, void *real)
{
    if (i < 0 || i >= VT_DRV_COUNT || !real || vt__drv_is_wrapper(real))
        return real;
    atomic_store_explicit(&g_real[i], real, memory_order_release);
    return g_wrappers[i];
}
