/* cudart_mem.c — the fake CUDA runtime's memory API (cudaMalloc, cudaMallocAsync, pinned
 * host memory, cudaMemGetInfo, pools). Each call ends in exactly one driver call made
 * through the pointer cuGetProcAddress returned, as in the real runtime. */
#include <stdint.h>

#include "cudart_internal.h"

/* CALL: runs a driver call after making sure a context is current; records failures. */
#define CALL(expr)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = rt_ctx();                                                                 \
        return rt_ret(e_ ? e_ : rt_err(expr));                                                     \
    } while (0)

cudaError_t cudaMalloc(void **p, size_t size)
{
    if (!p)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_ctx();
    if (e)
        return rt_ret(e);
    if (size == 0) { /* like the real runtime: success and a NULL pointer */
        *p = NULL;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    e = rt_err(rt_drv.cuMemAlloc_v2(&d, size));
    *p = e ? NULL : (void *)(uintptr_t)d;
    return rt_ret(e);
}

/* cudaFree: cudaFree(NULL) only initialises the context (a common idiom). */
cudaError_t cudaFree(void *p)
{
    cudaError_t e = rt_ctx();
    if (e || !p)
        return rt_ret(e);
    return rt_ret(rt_err(rt_drv.cuMemFree_v2((CUdeviceptr)(uintptr_t)p)));
}

/* async_alloc: shared body of the stream-ordered allocations; `pool` NULL = current device. */
static cudaError_t async_alloc(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s, int ptsz)
{
    if (!p)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_ctx();
    if (e)
        return rt_ret(e);
    if (size == 0) {
        *p = NULL;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    CUresult r;
    if (pool)
        r = ptsz ? rt_drv.cuMemAllocFromPoolAsync_ptsz(&d, size, (CUmemoryPool)pool, (CUstream)s)
                 : rt_drv.cuMemAllocFromPoolAsync(&d, size, (CUmemoryPool)pool, (CUstream)s);
    else
        r = ptsz ? rt_drv.cuMemAllocAsync_ptsz(&d, size, (CUstream)s)
                 : rt_drv.cuMemAllocAsync(&d, size, (CUstream)s);
    e = rt_err(r);
    *p = e ? NULL : (void *)(uintptr_t)d;
    return rt_ret(e);
}

cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
    return async_alloc(p, size, NULL, s, 0);
}
cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t s)
{
    return async_alloc(p, size, NULL, s, 1);
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    return pool ? async_alloc(p, size, pool, s, 0) : rt_ret(cudaErrorInvalidValue);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    return pool ? async_alloc(p, size, pool, s, 1) : rt_ret(cudaErrorInvalidValue);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    CALL(rt_drv.cuMemFreeAsync((CUdeviceptr)(uintptr_t)p, (CUstream)s));
}

cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
    CALL(rt_drv.cuMemFreeAsync_ptsz((CUdeviceptr)(uintptr_t)p, (CUstream)s));
}

cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    if (!p)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_ctx();
    if (e)
        return rt_ret(e);
    CUdeviceptr d = 0;
    e = rt_err(rt_drv.cuMemAllocManaged(&d, size, flags));
    *p = e ? NULL : (void *)(uintptr_t)d;
    return rt_ret(e);
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    if (!p || !pitch)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_ctx();
    if (e)
        return rt_ret(e);
    CUdeviceptr d = 0;
    e = rt_err(rt_drv.cuMemAllocPitch_v2(&d, pitch, width, height, 4));
    *p = e ? NULL : (void *)(uintptr_t)d;
    return rt_ret(e);
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    CALL(rt_drv.cuMemHostAlloc(p, size, flags));
}
cudaError_t cudaMallocHost(void **p, size_t size)
{
    CALL(rt_drv.cuMemAllocHost_v2(p, size));
}
cudaError_t cudaFreeHost(void *p)
{
    CALL(rt_drv.cuMemFreeHost(p));
}

cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags)
{
    CALL(rt_drv.cuMemHostRegister_v2(p, size, flags));
}

cudaError_t cudaHostUnregister(void *p)
{
    CALL(rt_drv.cuMemHostUnregister(p));
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    if (!free_b || !total_b)
        return rt_ret(cudaErrorInvalidValue);
    CALL(rt_drv.cuMemGetInfo_v2(free_b, total_b));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    CALL(rt_drv.cuMemPoolTrimTo((CUmemoryPool)pool, keep));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int dev)
{
    cudaError_t e = rt_init();
    if (e)
        return rt_ret(e);
    return rt_ret(rt_err(rt_drv.cuDeviceGetDefaultMemPool((CUmemoryPool *)pool, dev)));
}

/* ---- copies and sets: nothing to move on a fake device ---- */

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
    (void)dst, (void)src, (void)n;
    if (kind < 0 || kind > 4)
        return rt_ret(cudaErrorInvalidValue);
    return rt_ret(rt_ctx());
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t s)
{
    (void)s;
    return cudaMemcpy(dst, src, n, kind);
}

cudaError_t cudaMemset(void *p, int v, size_t n)
{
    (void)p, (void)v, (void)n;
    return rt_ret(rt_ctx());
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    (void)s;
    return cudaMemset(p, v, n);
}
