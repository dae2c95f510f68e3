/* hook_runtime.c — the exported CUDA runtime hooks (cudaMalloc, cudaFree, ...). Each is a
 * shim: find the real function, hand the call to the core (core/call.h: guard, card
 * admission, one record) around the real call. The hooked functions and the API id of each
 * are hook_table.h's VT_RUNTIME_HOOKS; driver entry points are hook_driver.c, hook_procaddr.c. */
#include <stddef.h>

#include "core/call.h"
#include "core/realsym.h"
#include "cuda_abi.h"
#include "hook_table.h"
#include "torch/torchalloc.h"
#include "vramtrace/trace_format.h"

/* real_<name>(): the next definition (libcudart), resolved once; NULL if absent. */
#define VT_RT_REAL(name, api, ret, params)                                                         \
    static inline name##_fn real_##name(void)                                                      \
    {                                                                                              \
        static name##_fn p;                                                                        \
        name##_fn f = __atomic_load_n(&p, __ATOMIC_ACQUIRE);                                       \
        if (!f) {                                                                                  \
            f = (name##_fn)vt__next(#name);                                                        \
            __atomic_store_n(&p, f, __ATOMIC_RELEASE);                                             \
        }                                                                                          \
        return f;                                                                                  \
    }
VT_RUNTIME_HOOKS(VT_RT_REAL)
#undef VT_RT_REAL

/* The missing-library answer: the runtime's own "not initialised" error, never a NULL call. */
#define REAL_OR_FAIL(name)                                                                         \
    name##_fn real = real_##name();                                                                \
    if (VT__UNLIKELY(!real))                                                                       \
        return cudaErrorInitializationError;

#define OOM cudaErrorMemoryAllocation
#define U64(x) ((uint64_t)(uintptr_t)(x))
/* OUT: the pointer a successful call stored, else 0 */
#define OUT(r, p) ((r) == cudaSuccess && (p) ? U64(*(p)) : 0)

/* ---- device and host allocations ---------------------------------------------------------- */
VT__EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
    REAL_OR_FAIL(cudaMalloc);
    vt__call c;
    cudaError_t r = vt__call_alloc_begin(&c, VT_HOOK_API(cudaMalloc), VT_SPACE_DEVICE, -1, n, 0)
                        ? OOM
                        : real(p, n);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    if (c.rec && r == cudaSuccess)
        vt__torch_segment(OUT(r, p), n, 0); /* PyTorch's allocator tracker: attach, self-check */
    return r;
}

#define ASYNC_ALLOC(name)                                                                          \
    VT__EXPORT cudaError_t name(void **p, size_t n, cudaStream_t s)                                \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        vt__call c;                                                                                \
        cudaError_t r =                                                                            \
            vt__call_alloc_begin(&c, VT_HOOK_API(name), VT_SPACE_DEVICE, -1, n, U64(s))            \
                ? OOM                                                                              \
                : real(p, n, s);                                                                   \
        vt__call_alloc_end(&c, r, OUT(r, p), n);                                                   \
        return r;                                                                                  \
    }
ASYNC_ALLOC(cudaMallocAsync)
ASYNC_ALLOC(cudaMallocAsync_ptsz)

#define POOL_ALLOC(name)                                                                           \
    VT__EXPORT cudaError_t name(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)            \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        vt__call c;                                                                                \
        cudaError_t r =                                                                            \
            vt__call_alloc_begin(&c, VT_HOOK_API(name), VT_SPACE_DEVICE, -1, n, U64(s))            \
                ? OOM                                                                              \
                : real(p, n, pool, s);                                                             \
        vt__call_alloc_end(&c, r, OUT(r, p), n);                                                   \
        return r;                                                                                  \
    }
POOL_ALLOC(cudaMallocFromPoolAsync)
POOL_ALLOC(cudaMallocFromPoolAsync_ptsz)

VT__EXPORT cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cudaMallocManaged);
    vt__call c;
    cudaError_t r =
        vt__call_alloc_begin(&c, VT_HOOK_API(cudaMallocManaged), VT_SPACE_MANAGED, -1, n, 0)
            ? OOM
            : real(p, n, flags);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    return r;
}

/* the pitch is known only after the call: admission uses the unpadded size */
VT__EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    REAL_OR_FAIL(cudaMallocPitch);
    vt__call c;
    uint64_t want = (uint64_t)w * h;
    cudaError_t r =
        vt__call_alloc_begin(&c, VT_HOOK_API(cudaMallocPitch), VT_SPACE_DEVICE, -1, want, 0)
            ? OOM
            : real(p, pitch, w, h);
    vt__call_alloc_end(&c, r, OUT(r, p), r == cudaSuccess && pitch ? (uint64_t)*pitch * h : want);
    return r;
}

VT__EXPORT cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cudaHostAlloc);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cudaHostAlloc), 0, -1, n, 0);
    cudaError_t r = real(p, n, flags);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    return r;
}

VT__EXPORT cudaError_t cudaMallocHost(void **p, size_t n)
{
    REAL_OR_FAIL(cudaMallocHost);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cudaMallocHost), 0, -1, n, 0);
    cudaError_t r = real(p, n);
    vt__call_alloc_end(&c, r, OUT(r, p), n);
    return r;
}

VT__EXPORT cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cudaHostRegister);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cudaHostRegister), 0, -1, n, 0);
    cudaError_t r = real(p, n, flags);
    vt__call_alloc_end(&c, r, U64(p), n);
    return r;
}

VT__EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    REAL_OR_FAIL(cudaMemPoolTrimTo);
    vt__call c;
    vt__call_alloc_begin(&c, VT_HOOK_API(cudaMemPoolTrimTo), 0, -1, keep, 0);
    cudaError_t r = real(pool, keep);
    vt__call_alloc_end(&c, r, U64(pool), keep);
    return r;
}

/* ---- releases ---------------------------------------------------------------------------- */
#define FREE1(name, space)                                                                         \
    VT__EXPORT cudaError_t name(void *p)                                                           \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        vt__call c;                                                                                \
        vt__call_free_begin(&c, VT_HOOK_API(name), space, 0);                                      \
        cudaError_t r = real(p);                                                                   \
        vt__call_free_end(&c, r, U64(p));                                                          \
        return r;                                                                                  \
    }
FREE1(cudaFree, VT_SPACE_DEVICE)
FREE1(cudaFreeHost, 0)
FREE1(cudaHostUnregister, 0)

#define FREE_ASYNC(name)                                                                           \
    VT__EXPORT cudaError_t name(void *p, cudaStream_t s)                                           \
    {                                                                                              \
        REAL_OR_FAIL(name);                                                                        \
        vt__call c;                                                                                \
        vt__call_free_begin(&c, VT_HOOK_API(name), VT_SPACE_DEVICE, U64(s));                       \
        cudaError_t r = real(p, s);                                                                \
        vt__call_free_end(&c, r, U64(p));                                                          \
        return r;                                                                                  \
    }
FREE_ASYNC(cudaFreeAsync)
FREE_ASYNC(cudaFreeAsync_ptsz)

/* ---- memory info --------------------------------------------------------------------------- */
VT__EXPORT cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    REAL_OR_FAIL(cudaMemGetInfo);
    vt__call c;
    vt__call_meminfo_begin(&c);
    cudaError_t r = real(free_b, total_b);
    vt__call_meminfo_end(&c, r, free_b, total_b);
    return r;
}
