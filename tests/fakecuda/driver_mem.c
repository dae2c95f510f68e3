/* driver_mem.c — the fake driver's device memory: linear, pitched, managed and stream-ordered
 * allocations, memory pools and cuMemGetInfo. Every byte counts against the simulated
 * device's capacity; past it the call fails with CUDA_ERROR_OUT_OF_MEMORY and allocates nothing. */
#include <stdlib.h>

#include "driver_internal.h"

/* alloc_on: allocates `size` bytes of `kind` on device d (32-bit space if `small`); fills
 * *out. Results: CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY (capacity or address space). */
static CUresult alloc_on(int d, uint64_t size, int kind, int small, uint64_t *out)
{
    uint64_t rounded = (size + FK_ALIGN - 1) / FK_ALIGN * FK_ALIGN;
    fk_lock();
    struct fk_device *dv = &fk_drv.dev[d];
    CUresult r = fk_charge(d, rounded);
    if (r == CUDA_SUCCESS) {
        uint64_t a =
            fk_space_alloc(small ? &dv->space32 : &dv->space, rounded, FK_ALIGN, 0, kind, rounded);
        if (!a) {
            fk_uncharge(d, rounded);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            *out = a;
        }
    }
    fk_unlock();
    fk_log("alloc kind=%d dev=%d size=%llu -> %d addr=%#llx", kind, d, (unsigned long long)size, r,
           r ? 0ull : (unsigned long long)*out);
    return r;
}

/* alloc_current: alloc_on for the calling thread's current context. */
static CUresult alloc_current(uint64_t size, int kind, int small, uint64_t *out)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!out || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int d = fk_current_dev();
    if (d < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    return alloc_on(d, size, kind, small, out);
}

/* free_addr: frees a non-VMM allocation starting exactly at addr; CUDA_ERROR_INVALID_VALUE
 * when addr is not the start of a live linear/managed/async allocation. */
static CUresult free_addr(uint64_t addr)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (addr == 0)
        return CUDA_SUCCESS;
    fk_lock();
    int d = fk_dev_of_addr(addr);
    r = CUDA_ERROR_INVALID_VALUE;
    if (d >= 0) {
        struct fk_device *dv = &fk_drv.dev[d];
        struct fk_space *s = addr < 0x100000000ull ? &dv->space32 : &dv->space;
        struct fk_range *rg = fk_space_find(s, addr);
        if (rg && rg->kind != FK_RESERVE) {
            fk_uncharge(d, rg->charged);
            fk_space_remove(s, rg);
            r = CUDA_SUCCESS;
        }
    }
    fk_unlock();
    fk_log("free %#llx -> %d", (unsigned long long)addr, r);
    return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    uint64_t a = 0;
    CUresult r = alloc_current(size, FK_LINEAR, 0, &a);
    if (r == CUDA_SUCCESS)
        *dptr = a;
    return r;
}

/* cuMemAlloc: the 32-bit (pre-3.2) API; allocations come from a small space below 4 GiB. */
CUresult cuMemAlloc(unsigned int *dptr, unsigned int size)
{
    uint64_t a = 0;
    CUresult r = dptr ? alloc_current(size, FK_LINEAR32, 1, &a) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *dptr = (unsigned int)a;
    return r;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    return free_addr(p);
}
CUresult cuMemFree(unsigned int p)
{
    return free_addr(p);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                            unsigned int elem)
{
    if (!dptr || !pitch || width == 0 || height == 0 || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = (width + 511) / 512 * 512;
    if (height > (~(size_t)0) / p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t a = 0;
    CUresult r = alloc_current((uint64_t)p * height, FK_PITCH, 0, &a);
    if (r == CUDA_SUCCESS) {
        *dptr = a;
        *pitch = p;
    }
    return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
    if (flags != 1 && flags != 2) /* CU_MEM_ATTACH_GLOBAL / HOST */
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t a = 0;
    CUresult r = alloc_current(size, FK_MANAGED, 0, &a);
    if (r == CUDA_SUCCESS)
        *dptr = a;
    return r;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s)
{
    (void)s;
    uint64_t a = 0;
    CUresult r = alloc_current(size, FK_ASYNC, 0, &a);
    if (r == CUDA_SUCCESS)
        *dptr = a;
    return r;
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream s)
{
    return cuMemAllocAsync(dptr, size, s);
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    (void)s;
    return p ? free_addr(p) : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
    return cuMemFreeAsync(p, s);
}

/* pool_dev: device of a pool handle from cuDeviceGetDefaultMemPool, or -1. */
static int pool_dev(CUmemoryPool pool)
{
    for (int d = 0; d < fk_drv.ndev; d++)
        if ((void *)pool == (void *)&fk_drv.dev[d].pool)
            return d;
    return -1;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
    (void)s;
    CUresult r = fk_ready();
    if (r)
        return r;
    int d = pool_dev(pool);
    if (d < 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t a = 0;
    r = alloc_on(d, size, FK_ASYNC, 0, &a);
    if (r == CUDA_SUCCESS)
        *dptr = a;
    return r;
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
    return cuMemAllocFromPoolAsync(dptr, size, pool, s);
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice d)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (d < 0 || d >= fk_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = (CUmemoryPool)&fk_drv.dev[d].pool;
    return CUDA_SUCCESS;
}

/* cuMemPoolTrimTo: the fake pool returns freed memory at once, so nothing is cached. */
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    (void)keep;
    CUresult r = fk_ready();
    if (r)
        return r;
    return pool_dev(pool) < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    int d = fk_current_dev();
    if (d < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!free_b || !total_b)
        return CUDA_ERROR_INVALID_VALUE;
    fk_lock();
    *total_b = fk_drv.dev[d].capacity;
    *free_b = fk_drv.dev[d].capacity - fk_drv.dev[d].used;
    fk_unlock();
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo(unsigned int *free_b, unsigned int *total_b)
{
    size_t f = 0, t = 0;
    if (!free_b || !total_b)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuMemGetInfo_v2(&f, &t);
    if (r == CUDA_SUCCESS) {
        *free_b = f > 0xffffffffu ? 0xffffffffu : (unsigned int)f;
        *total_b = t > 0xffffffffu ? 0xffffffffu : (unsigned int)t;
    }
    return r;
}
