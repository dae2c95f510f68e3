/* hook_table.h — every function the preload hooks, listed once for both layers with the
 * trace API id (include/vramtrace/trace_format.h's VT_APIS) its events carry: the runtime
 * hooks (hook_runtime.c, plus the entry-point lookups of hook_procaddr.c) and the watched
 * driver functions (hook_driver.c: one wrapper each, exported under the driver's own
 * versioned name and matched by cuGetProcAddress / dlsym lookups in hook_procaddr.c and
 * hook_dlsym.c). test_hooks checks that every API of VT_APIS is hooked here.
 * X(exported name, VT_API_ suffix, return type, parameter list) */
#ifndef VT_PRELOAD_HOOK_TABLE_H
#define VT_PRELOAD_HOOK_TABLE_H

#include "../cuda_abi.h"
#include "vramtrace/trace_format.h"

#define VT_RUNTIME_HOOKS(X)                                                                        \
    X(cudaMalloc, cudaMalloc, cudaError_t, (void **, size_t))                                      \
    X(cudaFree, cudaFree, cudaError_t, (void *))                                                   \
    X(cudaMallocAsync, cudaMallocAsync, cudaError_t, (void **, size_t, cudaStream_t))              \
    X(cudaMallocAsync_ptsz, cudaMallocAsync, cudaError_t, (void **, size_t, cudaStream_t))         \
    X(cudaFreeAsync, cudaFreeAsync, cudaError_t, (void *, cudaStream_t))                           \
    X(cudaFreeAsync_ptsz, cudaFreeAsync, cudaError_t, (void *, cudaStream_t))                      \
    X(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync, cudaError_t,                               \
      (void **, size_t, cudaMemPool_t, cudaStream_t))                                              \
    X(cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync, cudaError_t,                          \
      (void **, size_t, cudaMemPool_t, cudaStream_t))                                              \
    X(cudaMallocManaged, cudaMallocManaged, cudaError_t, (void **, size_t, unsigned))              \
    X(cudaMallocPitch, cudaMallocPitch, cudaError_t, (void **, size_t *, size_t, size_t))          \
    X(cudaHostAlloc, cudaHostAlloc, cudaError_t, (void **, size_t, unsigned))                      \
    X(cudaMallocHost, cudaMallocHost, cudaError_t, (void **, size_t))                              \
    X(cudaFreeHost, cudaFreeHost, cudaError_t, (void *))                                           \
    X(cudaHostRegister, cudaHostRegister, cudaError_t, (void *, size_t, unsigned))                 \
    X(cudaHostUnregister, cudaHostUnregister, cudaError_t, (void *))                               \
    X(cudaMemGetInfo, cudaMemGetInfo, cudaError_t, (size_t *, size_t *))                           \
    X(cudaMemPoolTrimTo, cudaMemPoolTrimTo, cudaError_t, (cudaMemPool_t, size_t))                  \
    X(cudaGetDriverEntryPoint, cudaGetDriverEntryPoint, cudaError_t,                               \
      (const char *, void **, unsigned long long, cudaDriverEntryPointQueryResult *))              \
    X(cudaGetDriverEntryPointByVersion, cudaGetDriverEntryPointByVersion, cudaError_t,             \
      (const char *, void **, unsigned, unsigned long long, cudaDriverEntryPointQueryResult *))

#define VT_DRIVER_FUNCS(X)                                                                         \
    X(cuMemAlloc_v2, cuMemAlloc, CUresult, (CUdeviceptr *, size_t))                                \
    X(cuMemFree_v2, cuMemFree, CUresult, (CUdeviceptr))                                            \
    X(cuMemAllocPitch_v2, cuMemAllocPitch, CUresult,                                               \
      (CUdeviceptr *, size_t *, size_t, size_t, unsigned))                                         \
    X(cuMemAllocManaged, cuMemAllocManaged, CUresult, (CUdeviceptr *, size_t, unsigned))           \
    X(cuMemAllocAsync, cuMemAllocAsync, CUresult, (CUdeviceptr *, size_t, CUstream))               \
    X(cuMemAllocAsync_ptsz, cuMemAllocAsync, CUresult, (CUdeviceptr *, size_t, CUstream))          \
    X(cuMemFreeAsync, cuMemFreeAsync, CUresult, (CUdeviceptr, CUstream))                           \
    X(cuMemFreeAsync_ptsz, cuMemFreeAsync, CUresult, (CUdeviceptr, CUstream))                      \
    X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, CUresult,                                  \
      (CUdeviceptr *, size_t, CUmemoryPool, CUstream))                                             \
    X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, CUresult,                             \
      (CUdeviceptr *, size_t, CUmemoryPool, CUstream))                                             \
    X(cuMemPoolTrimTo, cuMemPoolTrimTo, CUresult, (CUmemoryPool, size_t))                          \
    X(cuMemCreate, cuMemCreate, CUresult,                                                          \
      (CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long))   \
    X(cuMemRelease, cuMemRelease, CUresult, (CUmemGenericAllocationHandle))                        \
    X(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, CUresult,                          \
      (CUmemGenericAllocationHandle *, void *))                                                    \
    X(cuMemMap, cuMemMap, CUresult,                                                                \
      (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long))             \
    X(cuMemUnmap, cuMemUnmap, CUresult, (CUdeviceptr, size_t))                                     \
    X(cuMemAddressReserve, cuMemAddressReserve, CUresult,                                          \
      (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long))                            \
    X(cuMemAddressFree, cuMemAddressFree, CUresult, (CUdeviceptr, size_t))                         \
    X(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle, CUresult,                    \
      (CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType))                         \
    X(cuModuleLoad, cuModuleLoad, CUresult, (CUmodule *, const char *))                            \
    X(cuModuleLoadData, cuModuleLoadData, CUresult, (CUmodule *, const void *))                    \
    X(cuModuleLoadDataEx, cuModuleLoadDataEx, CUresult,                                            \
      (CUmodule *, const void *, unsigned, CUjit_option *, void **))                               \
    X(cuModuleLoadFatBinary, cuModuleLoadFatBinary, CUresult, (CUmodule *, const void *))          \
    X(cuModuleUnload, cuModuleUnload, CUresult, (CUmodule))                                        \
    X(cuLibraryLoadData, cuLibraryLoadData, CUresult,                                              \
      (CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **,   \
       unsigned))                                                                                  \
    X(cuLibraryLoadFromFile, cuLibraryLoadFromFile, CUresult,                                      \
      (CUlibrary *, const char *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **,   \
       unsigned))                                                                                  \
    X(cuLibraryUnload, cuLibraryUnload, CUresult, (CUlibrary))                                     \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))       \
    X(cuCtxCreate_v2, cuCtxCreate, CUresult, (CUcontext *, unsigned, CUdevice))                    \
    X(cuMemGetInfo_v2, cuMemGetInfo, CUresult, (size_t *, size_t *))                               \
    X(cuMemHostAlloc, cuMemHostAlloc, CUresult, (void **, size_t, unsigned))                       \
    X(cuMemAllocHost_v2, cuMemAllocHost, CUresult, (void **, size_t))                              \
    X(cuMemFreeHost, cuMemFreeHost, CUresult, (void *))

/* VT_HOOKS: both layers, for checks that span them (test_hooks). */
#define VT_HOOKS(X) VT_RUNTIME_HOOKS(X) VT_DRIVER_FUNCS(X)

/* VT_HOOK_API(exported name): the API id a hook's events carry, from the table only (a name
 * not in the table does not compile). */
enum vt_hook_api {
#define VT_HOOK_API_ENUM(name, api, ret, params) VT_HOOK_API_##name = VT_API_##api,
    VT_HOOKS(VT_HOOK_API_ENUM)
#undef VT_HOOK_API_ENUM
};
#define VT_HOOK_API(name) ((uint16_t)VT_HOOK_API_##name)

/* name_fn: each hooked function's type. */
#define VT_HOOK_TYPEDEF(name, api, ret, params) typedef ret(*name##_fn) params;
VT_HOOKS(VT_HOOK_TYPEDEF)
#undef VT_HOOK_TYPEDEF

enum vt_drv_index {
#define VT_DRV_ENUM(name, api, ret, params) VT_DRV_##name,
    VT_DRIVER_FUNCS(VT_DRV_ENUM)
#undef VT_DRV_ENUM
        VT_DRV_COUNT
};

/* hook_driver.c: the index of an exported name (-1 if not watched); whether p is one of our
 * wrappers; vt__drv_wrap stores real as the pointer behind wrapper i and returns the wrapper
 * (real itself when i < 0 or real is already a wrapper: never wrapped twice). */
int vt__drv_index(const char *exported_name);
int vt__drv_is_wrapper(const void *p);
void *vt__drv_wrap(int i, void *real);
/* hook_procaddr.c: the wrapper for what cuGetProcAddress(symbol, version, flags) returned. */
void *vt__procaddr_wrap(const char *symbol, int version, unsigned long long flags, void *real);

#endif /* VT_PRELOAD_HOOK_TABLE_H */
