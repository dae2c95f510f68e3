/* hook_runtime.c — the exported CUDA runtime hooks (cudaMalloc, cudaFree, ...). Each is a
 * shim: guard, (card emulation check), the real call, one record for the core. The list of
 * hooked runtime functions is the X-macro below; driver entry points are hook_driver*.c. */
#include <stddef.h>

#include "core.h"
#include "cuda_abi.h"

__attribute__((weak)) int vt__card_enabled(void);
__attribute__((weak)) int vt__card_admit(int device, uint64_t size);
__attribute__((weak)) void vt__card_commit(int device, int space, uint64_t key, uint64_t size);
__attribute__((weak)) uint64_t vt__card_release(int space, uint64_t key);

/* X(name, return type, parameter list) — one line per hooked runtime function. */
#define VT_RUNTIME_HOOKS(X)                                                                 \
    X(cudaMalloc, cudaError_t, (void **, size_t))                                           \
    X(cudaFree, cudaError_t, (void *))                                                      \
    X(cudaMallocAsync, cudaError_t, (void **, size_t, cudaStream_t))                        \
    X(cudaMallocAsync_ptsz, cudaError_t, (void **, size_t, cudaStream_t))                   \
    X(cudaFreeAsync, cudaError_t, (void *, cudaStream_t))                                   \
    X(cudaFreeAsync_ptsz, cudaError_t, (void *, cudaStream_t))                              \
    X(cudaMallocFromPoolAsync, cudaError_t, (void **, size_t, cudaMemPool_t, cudaStream_t)) \
    X(cudaMallocFromPoolAsync_ptsz, cudaError_t, (void **, size_t, cudaMemPool_t, cudaStream_t)) \
    X(cudaMallocManaged, cudaError_t, (void **, size_t, unsigned))                          \
    X(cudaMallocPitch, cudaError_t, (void **, size_t *, size_t, size_t))                    \
    X(cudaHostAlloc, cudaError_t, (void **, size_t, unsigned))                              \
    X(cudaMallocHost, cudaError_t, (void **, size_t))                                       \
    X(cudaFreeHost, cudaError_t, (void *))                                                  \
    X(cudaHostRegister, cudaError_t, (void *, size_t, unsigned))                            \
    X(cudaHostUnregister, cudaError_t, (void *))                                            \
    X(cudaMemGetInfo, cudaError_t, (size_t *, size_t *))                                    \
    X(cudaMemPoolTrimTo, cudaError_t, (cudaMemPool_t, size_t))

/* real_<name>(): the next definition (libcudart), resolved once; NULL if absent. */
#define VT_RT_REAL(name, ret, params)                                           \
    typedef ret(*name##_fn) params;                                             \
    static name##_fn real_##name(void)                                          \
    {                                                                           \
        static name##_fn p;                                                     \
        name##_fn f = __atomic_load_n(&p, __ATOMIC_ACQUIRE);                    \
        if (!f) {                                                               \
            f = (name##_fn)vt__next(#name);                                     \
            __atomic_store_n(&p, f, __ATOMIC_RELEASE);                          \
        }                                                                       \
        return f;                                                               \
    }
VT_RUNTIME_HOOKS(VT_RT_REAL)
#undef VT_RT_REAL

/* The missing-library answer: the runtime's own "not initialised" error, never a NULL call. */
#define REAL_OR_FAIL(name)                 \
    name##_fn real = real_##name();        \
    if (VT__UNLIKELY(!real))               \
        return cudaErrorInitializationError;

static int card_on(void)
{
    return vt__card_enabled && vt__card_enabled();
}

/* device_alloc: the common shape of every device allocation hook. `call` performs the real
 * call; the card check comes first; one ALLOC record after. */
typedef cudaError_t (*alloc_thunk)(void *ctx);
static cudaError_t device_alloc(uint16_t api, int space, void **ptr, size_t size,
                                cudaStream_t stream, alloc_thunk call, void *ctx)
{
    int rec = vt__enter();
    cudaError_t r;
    int emulated_oom = 0;
    int dev = -1;
    if (rec && space && card_on()) {
        dev = vt__current_device();
        if (!vt__card_admit(dev < 0 ? 0 : dev, size))
            emulated_oom = 1;
    }
    r = emulated_oom ? cudaErrorMemoryAllocation : call(ctx);
    if (rec) {
        if (dev < 0)
            dev = vt__current_device();
        uint64_t addr = r == cudaSuccess && ptr ? (uint64_t)(uintptr_t)*ptr : 0;
        if (r == cudaSuccess && card_on() && space)
            vt__card_commit(dev < 0 ? 0 : dev, space, addr, size);
        vt__event ev = {api, emulated_oom ? VT_EVF_EMULATED : 0, dev, addr, size,
                        (uint64_t)(uintptr_t)stream, r, 0, 0};
        vt__record_alloc(&ev);
    }
    vt__leave();
    return r;
}

/* device_free: the common shape of every release hook (NULL frees are not events). */
typedef cudaError_t (*free_thunk)(void *ctx);
static cudaError_t device_free(uint16_t api, int space, void *ptr, cudaStream_t stream,
                               free_thunk call, void *ctx)
{
    int rec = vt__enter();
    cudaError_t r = call(ctx);
    if (rec && ptr) {
        if (r == cudaSuccess && space && card_on())
            vt__card_release(space, (uint64_t)(uintptr_t)ptr);
        vt__event ev = {api, 0, -1, (uint64_t)(uintptr_t)ptr, 0, (uint64_t)(uintptr_t)stream, r, 0, 0};
        vt__record_free(&ev);
    }
    vt__leave();
    return r;
}

/* ---- the hooks ------------------------------------------------------------------------ */
struct a2 { void **p; size_t n; unsigned flags; cudaStream_t s; cudaMemPool_t pool; void *real; };

static cudaError_t call_malloc(void *c) { struct a2 *a = c; return ((cudaMalloc_fn)a->real)(a->p, a->n); }
static cudaError_t call_async(void *c) { struct a2 *a = c; return ((cudaMallocAsync_fn)a->real)(a->p, a->n, a->s); }
static cudaError_t call_pool(void *c) { struct a2 *a = c; return ((cudaMallocFromPoolAsync_fn)a->real)(a->p, a->n, a->pool, a->s); }
static cudaError_t call_managed(void *c) { struct a2 *a = c; return ((cudaMallocManaged_fn)a->real)(a->p, a->n, a->flags); }
static cudaError_t call_hostalloc(void *c) { struct a2 *a = c; return ((cudaHostAlloc_fn)a->real)(a->p, a->n, a->flags); }
static cudaError_t call_mallochost(void *c) { struct a2 *a = c; return ((cudaMallocHost_fn)a->real)(a->p, a->n); }

VT__EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
    REAL_OR_FAIL(cudaMalloc);
    struct a2 a = {p, n, 0, NULL, NULL, (void *)real};
    return device_alloc(VT_API_cudaMalloc, VT_SPACE_DEVICE, p, n, NULL, call_malloc, &a);
}

VT__EXPORT cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    REAL_OR_FAIL(cudaMallocAsync);
    struct a2 a = {p, n, 0, s, NULL, (void *)real};
    return device_alloc(VT_API_cudaMallocAsync, VT_SPACE_DEVICE, p, n, s, call_async, &a);
}

VT__EXPORT cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s)
{
    REAL_OR_FAIL(cudaMallocAsync_ptsz);
    struct a2 a = {p, n, 0, s, NULL, (void *)real};
    return device_alloc(VT_API_cudaMallocAsync, VT_SPACE_DEVICE, p, n, s, call_async, &a);
}

VT__EXPORT cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    REAL_OR_FAIL(cudaMallocFromPoolAsync);
    struct a2 a = {p, n, 0, s, pool, (void *)real};
    return device_alloc(VT_API_cudaMallocFromPoolAsync, VT_SPACE_DEVICE, p, n, s, call_pool, &a);
}

VT__EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    REAL_OR_FAIL(cudaMallocFromPoolAsync_ptsz);
    struct a2 a = {p, n, 0, s, pool, (void *)real};
    return device_alloc(VT_API_cudaMallocFromPoolAsync, VT_SPACE_DEVICE, p, n, s, call_pool, &a);
}

VT__EXPORT cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cudaMallocManaged);
    struct a2 a = {p, n, flags, NULL, NULL, (void *)real};
    return device_alloc(VT_API_cudaMallocManaged, VT_SPACE_MANAGED, p, n, NULL, call_managed, &a);
}

struct pitch_args { void **p; size_t *pitch; size_t w, h; cudaMallocPitch_fn real; };
static cudaError_t call_pitch(void *c)
{
    struct pitch_args *a = c;
    return a->real(a->p, a->pitch, a->w, a->h);
}

VT__EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    REAL_OR_FAIL(cudaMallocPitch);
    struct pitch_args a = {p, pitch, w, h, real};
    /* the pitch is known only after the call: the card check uses the unpadded size */
    int rec = vt__enter();
    int dev = rec ? vt__current_device() : -1;
    int refuse = rec && card_on() && !vt__card_admit(dev < 0 ? 0 : dev, (uint64_t)w * h);
    cudaError_t r = refuse ? cudaErrorMemoryAllocation : call_pitch(&a);
    if (rec) {
        uint64_t size = r == cudaSuccess && pitch ? (uint64_t)*pitch * h : (uint64_t)w * h;
        uint64_t addr = r == cudaSuccess && p ? (uint64_t)(uintptr_t)*p : 0;
        if (r == cudaSuccess && card_on())
            vt__card_commit(dev < 0 ? 0 : dev, VT_SPACE_DEVICE, addr, size);
        vt__event ev = {VT_API_cudaMallocPitch, refuse ? VT_EVF_EMULATED : 0, dev, addr, size, 0, r, 0, 0};
        vt__record_alloc(&ev);
    }
    vt__leave();
    return r;
}

VT__EXPORT cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cudaHostAlloc);
    struct a2 a = {p, n, flags, NULL, NULL, (void *)real};
    return device_alloc(VT_API_cudaHostAlloc, 0, p, n, NULL, call_hostalloc, &a);
}

VT__EXPORT cudaError_t cudaMallocHost(void **p, size_t n)
{
    REAL_OR_FAIL(cudaMallocHost);
    struct a2 a = {p, n, 0, NULL, NULL, (void *)real};
    return device_alloc(VT_API_cudaMallocHost, 0, p, n, NULL, call_mallochost, &a);
}

struct f1 { void *p; cudaStream_t s; void *real; };
static cudaError_t call_free(void *c) { struct f1 *a = c; return ((cudaFree_fn)a->real)(a->p); }
static cudaError_t call_free_async(void *c) { struct f1 *a = c; return ((cudaFreeAsync_fn)a->real)(a->p, a->s); }

VT__EXPORT cudaError_t cudaFree(void *p)
{
    REAL_OR_FAIL(cudaFree);
    struct f1 a = {p, NULL, (void *)real};
    return device_free(VT_API_cudaFree, VT_SPACE_DEVICE, p, NULL, call_free, &a);
}

VT__EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    REAL_OR_FAIL(cudaFreeAsync);
    struct f1 a = {p, s, (void *)real};
    return device_free(VT_API_cudaFreeAsync, VT_SPACE_DEVICE, p, s, call_free_async, &a);
}

VT__EXPORT cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
    REAL_OR_FAIL(cudaFreeAsync_ptsz);
    struct f1 a = {p, s, (void *)real};
    return device_free(VT_API_cudaFreeAsync, VT_SPACE_DEVICE, p, s, call_free_async, &a);
}

VT__EXPORT cudaError_t cudaFreeHost(void *p)
{
    REAL_OR_FAIL(cudaFreeHost);
    struct f1 a = {p, NULL, (void *)real};
    return device_free(VT_API_cudaFreeHost, 0, p, NULL, call_free, &a);
}

VT__EXPORT cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cudaHostRegister);
    int rec = vt__enter();
    cudaError_t r = real(p, n, flags);
    if (rec) {
        vt__event ev = {VT_API_cudaHostRegister, 0, -1, (uint64_t)(uintptr_t)p, n, 0, r, 0, 0};
        vt__record_alloc(&ev);
    }
    vt__leave();
    return r;
}

VT__EXPORT cudaError_t cudaHostUnregister(void *p)
{
    REAL_OR_FAIL(cudaHostUnregister);
    struct f1 a = {p, NULL, (void *)real};
    return device_free(VT_API_cudaHostUnregister, 0, p, NULL, call_free, &a);
}

VT__EXPORT cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    REAL_OR_FAIL(cudaMemGetInfo);
    int rec = vt__enter();
    cudaError_t r = real(free_b, total_b);
    if (rec && r == cudaSuccess && free_b && total_b)
        vt__meminfo_seen(free_b, total_b);
    vt__leave();
    return r;
}

VT__EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    REAL_OR_FAIL(cudaMemPoolTrimTo);
    int rec = vt__enter();
    cudaError_t r = real(pool, keep);
    if (rec) {
        vt__event ev = {VT_API_cudaMemPoolTrimTo, 0, -1, (uint64_t)(uintptr_t)pool, keep, 0, r, 0, 0};
        vt__record_alloc(&ev);
    }
    vt__leave();
    return r;
}
