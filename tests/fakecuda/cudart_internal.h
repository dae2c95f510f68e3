/* cudart_internal.h — shared state of the fake CUDA runtime (libcudart.so.13): the driver
 * entry points it obtained through cuGetProcAddress, per-thread device and last error.
 * Only tests/fakecuda/cudart*.c include this; exports are limited by cudart.map. */
#ifndef FK_CUDART_INTERNAL_H
#define FK_CUDART_INTERNAL_H

#include "../../preload/cuda_abi.h"

/* The driver entry points the runtime uses: X(field, "base name", version, flags, params).
 * Each is fetched once through cuGetProcAddress_v2; never called by its exported symbol. */
#define RT_DRIVER(X)                                                                               \
    X(cuInit, "cuInit", 12000, 0, (unsigned int))                                                  \
    X(cuDriverGetVersion, "cuDriverGetVersion", 12000, 0, (int *))                                 \
    X(cuDeviceGetCount, "cuDeviceGetCount", 12000, 0, (int *))                                     \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 12000, 0, (CUcontext *, CUdevice))     \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 12000, 0, (CUcontext))                                   \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", 12000, 0, (CUcontext *))                                 \
    X(cuCtxGetDevice, "cuCtxGetDevice", 12000, 0, (CUdevice *))                                    \
    X(cuCtxSynchronize, "cuCtxSynchronize", 12000, 0, (void))                                      \
    X(cuMemAlloc_v2, "cuMemAlloc", 13000, 0, (CUdeviceptr *, size_t))                              \
    X(cuMemFree_v2, "cuMemFree", 13000, 0, (CUdeviceptr))                                          \
    X(cuMemAllocPitch_v2, "cuMemAllocPitch", 13000, 0,                                             \
      (CUdeviceptr *, size_t *, size_t, size_t, unsigned int))                                     \
    X(cuMemAllocManaged, "cuMemAllocManaged", 13000, 0, (CUdeviceptr *, size_t, unsigned int))     \
    X(cuMemAllocAsync, "cuMemAllocAsync", 13000, 0, (CUdeviceptr *, size_t, CUstream))             \
    X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 13000, 2, (CUdeviceptr *, size_t, CUstream))        \
    X(cuMemFreeAsync, "cuMemFreeAsync", 13000, 0, (CUdeviceptr, CUstream))                         \
    X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 13000, 2, (CUdeviceptr, CUstream))                    \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 13000, 0,                                \
      (CUdeviceptr *, size_t, CUmemoryPool, CUstream))                                             \
    X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 13000, 2,                           \
      (CUdeviceptr *, size_t, CUmemoryPool, CUstream))                                             \
    X(cuMemPoolTrimTo, "cuMemPoolTrimTo", 13000, 0, (CUmemoryPool, size_t))                        \
    X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 13000, 0,                            \
      (CUmemoryPool *, CUdevice))                                                                  \
    X(cuMemGetInfo_v2, "cuMemGetInfo", 13000, 0, (size_t *, size_t *))                             \
    X(cuMemHostAlloc, "cuMemHostAlloc", 13000, 0, (void **, size_t, unsigned int))                 \
    X(cuMemAllocHost_v2, "cuMemAllocHost", 13000, 0, (void **, size_t))                            \
    X(cuMemFreeHost, "cuMemFreeHost", 13000, 0, (void *))                                          \
    X(cuMemHostRegister_v2, "cuMemHostRegister", 13000, 0, (void *, size_t, unsigned int))         \
    X(cuMemHostUnregister, "cuMemHostUnregister", 13000, 0, (void *))                              \
    X(cuStreamCreate, "cuStreamCreate", 13000, 0, (CUstream *, unsigned int))                      \
    X(cuStreamDestroy_v2, "cuStreamDestroy", 13000, 0, (CUstream))                                 \
    X(cuStreamSynchronize, "cuStreamSynchronize", 13000, 0, (CUstream))

typedef CUresult (*rt_gpa_fn)(const char *, void **, int, cuuint64_t,
                              CUdriverProcAddressQueryResult *);

struct rt_driver {
    rt_gpa_fn gpa; /* cuGetProcAddress_v2 as re-fetched at version 12000 */
#define FIELD(field, name, ver, flags, params) CUresult(*field) params;
    RT_DRIVER(FIELD)
#undef FIELD
};

extern struct rt_driver rt_drv;

/* rt_init: loads the driver once (dlopen + one dlsym + cuGetProcAddress) and cuInit(0);
 * cudaSuccess or the (sticky) initialisation error. */
cudaError_t rt_init(void);
/* rt_ctx: rt_init, then makes sure the calling thread has a current context (the primary
 * context of its device, retained on first use); cudaSuccess or an error. */
cudaError_t rt_ctx(void);
/* rt_err: maps a driver result to a runtime error. */
cudaError_t rt_err(CUresult r);
/* rt_ret: records a failure as the thread's last error; returns e unchanged. */
cudaError_t rt_ret(cudaError_t e);

#endif
