/* driver_table.h — the watched CUDA driver functions, listed once: each entry is one
 * wrapper in hook_driver.c, exported under the driver's own (versioned) name, and the name
 * cuGetProcAddress / dlsym lookups are matched against (hook_procaddr.c, hook_dlsym.c).
 * X(exported name, trace api, return type, parameter list, argument names) */
#ifndef VT_PRELOAD_DRIVER_TABLE_H
#define VT_PRELOAD_DRIVER_TABLE_H

#include "cuda_abi.h"

#define VT_DRIVER_FUNCS(X)                                                                              \
    X(cuMemAlloc_v2, cuMemAlloc, CUresult, (CUdeviceptr *, size_t), ())                                 \
    X(cuMemFree_v2, cuMemFree, CUresult, (CUdeviceptr), ())                                             \
    X(cuMemAllocPitch_v2, cuMemAllocPitch, CUresult, (CUdeviceptr *, size_t *, size_t, size_t, unsigned), ()) \
    X(cuMemAllocManaged, cuMemAllocManaged, CUresult, (CUdeviceptr *, size_t, unsigned), ())            \
    X(cuMemAllocAsync, cuMemAllocAsync, CUresult, (CUdeviceptr *, size_t, CUstream), ())                \
    X(cuMemAllocAsync_ptsz, cuMemAllocAsync, CUresult, (CUdeviceptr *, size_t, CUstream), ())           \
    X(cuMemFreeAsync, cuMemFreeAsync, CUresult, (CUdeviceptr, CUstream), ())                            \
    X(cuMemFreeAsync_ptsz, cuMemFreeAsync, CUresult, (CUdeviceptr, CUstream), ())                       \
    X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, CUresult, (CUdeviceptr *, size_t, CUmemoryPool, CUstream), ()) \
    X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, CUresult, (CUdeviceptr *, size_t, CUmemoryPool, CUstream), ()) \
    X(cuMemPoolTrimTo, cuMemPoolTrimTo, CUresult, (CUmemoryPool, size_t), ())                           \
    X(cuMemCreate, cuMemCreate, CUresult, (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long), ()) \
    X(cuMemRelease, cuMemRelease, CUresult, (CUmemGenericAllocationHandle), ())                         \
    X(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, CUresult, (CUmemGenericAllocationHandle *, void *), ()) \
    X(cuMemMap, cuMemMap, CUresult, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long), ()) \
    X(cuMemUnmap, cuMemUnmap, CUresult, (CUdeviceptr, size_t), ())                                      \
    X(cuMemAddressReserve, cuMemAddressReserve, CUresult, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long), ()) \
    X(cuMemAddressFree, cuMemAddressFree, CUresult, (CUdeviceptr, size_t), ())                          \
    X(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle, CUresult, (CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType), ()) \
    X(cuModuleLoad, cuModuleLoad, CUresult, (CUmodule *, const char *), ())                             \
    X(cuModuleLoadData, cuModuleLoadData, CUresult, (CUmodule *, const void *), ())                     \
    X(cuModuleLoadDataEx, cuModuleLoadDataEx, CUresult, (CUmodule *, const void *, unsigned, CUjit_option *, void **), ()) \
    X(cuModuleLoadFatBinary, cuModuleLoadFatBinary, CUresult, (CUmodule *, const void *), ())           \
    X(cuModuleUnload, cuModuleUnload, CUresult, (CUmodule), ())                                         \
    X(cuLibraryLoadData, cuLibraryLoadData, CUresult, (CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **, unsigned), ()) \
    X(cuLibraryLoadFromFile, cuLibraryLoadFromFile, CUresult, (CUlibrary *, const char *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **, unsigned), ()) \
    X(cuLibraryUnload, cuLibraryUnload, CUresult, (CUlibrary), ())                                      \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice), ())       \
    X(cuCtxCreate_v2, cuCtxCreate, CUresult, (CUcontext *, unsigned, CUdevice), ())                     \
    X(cuMemGetInfo_v2, cuMemGetInfo, CUresult, (size_t *, size_t *), ())                                \
    X(cuMemHostAlloc, cuMemHostAlloc, CUresult, (void **, size_t, unsigned), ())                        \
    X(cuMemAllocHost_v2, cuMemAllocHost, CUresult, (void **, size_t), ())                               \
    X(cuMemFreeHost, cuMemFreeHost, CUresult, (void *), ())

enum vt_drv_index {
#define VT_DRV_ENUM(name, api, ret, params, args) VT_DRV_##name,
    VT_DRIVER_FUNCS(VT_DRV_ENUM)
#undef VT_DRV_ENUM
        VT_DRV_COUNT
};

#define VT_DRV_TYPEDEF(name, api, ret, params, args) typedef ret(*name##_fn) params;
VT_DRIVER_FUNCS(VT_DRV_TYPEDEF)
#undef VT_DRV_TYPEDEF

/* hook_driver.c: the index of an exported name (-1 if not watched); whether p is one of our
 * wrappers; vt__drv_wrap stores real as the pointer behind wrapper i and returns the wrapper
 * (real itself when i < 0 or real is already a wrapper: never wrapped twice). */
int vt__drv_index(const char *exported_name);
int vt__drv_is_wrapper(const void *p);
void *vt__drv_wrap(int i, void *real);
/* hook_procaddr.c: the wrapper for what cuGetProcAddress(symbol, version, flags) returned. */
void *vt__procaddr_wrap(const char *symbol, int version, unsigned long long flags, void *real);

#endif
