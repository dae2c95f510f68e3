/* cudart_core.c — the fake CUDA runtime's start-up and bookkeeping: it reaches the driver
 * exactly like the real runtime (dlopen("libcuda.so.1"), one dlsym of cuGetProcAddress_v2,
 * everything else through cuGetProcAddress), and keeps per-thread device and last error. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_internal.h"

#define RT_VERSION 13000
#define RT_MAX_DEVICES 64
#define RT_ERR_INSUFFICIENT_DRIVER 35
#define RT_ERR_INVALID_RESOURCE_HANDLE 400

struct rt_driver rt_drv;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cudaError_t g_init_err = cudaErrorInitializationError;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext g_primary[RT_MAX_DEVICES]; /* retained primary contexts */
static int g_ndev;

static __thread int t_dev;
static __thread cudaError_t t_last;

/* Runtime error names and strings: X(code, name, description). */
#define RT_ERRORS(X)                                                                               \
    X(0, cudaSuccess, "no error")                                                                  \
    X(1, cudaErrorInvalidValue, "invalid argument")                                                \
    X(2, cudaErrorMemoryAllocation, "out of memory")                                               \
    X(3, cudaErrorInitializationError, "initialization error")                                     \
    X(4, cudaErrorCudartUnloading, "driver shutting down")                                         \
    X(35, cudaErrorInsufficientDriver,                                                             \
      "CUDA driver version is insufficient for CUDA runtime version")                              \
    X(100, cudaErrorNoDevice, "no CUDA-capable device is detected")                                \
    X(101, cudaErrorInvalidDevice, "invalid device ordinal")                                       \
    X(200, cudaErrorInvalidKernelImage, "device kernel image is invalid")                          \
    X(201, cudaErrorDeviceUninitialized, "invalid device context")                                 \
    X(208, cudaErrorAlreadyMapped, "resource already mapped")                                      \
    X(211, cudaErrorNotMapped, "resource not mapped")                                              \
    X(301, cudaErrorFileNotFound, "file not found")                                                \
    X(400, cudaErrorInvalidResourceHandle, "invalid resource handle")                              \
    X(500, cudaErrorSymbolNotFound, "named symbol not found")                                      \
    X(712, cudaErrorHostMemoryAlreadyRegistered,                                                   \
      "part or all of the requested memory range is already mapped")                               \
    X(713, cudaErrorHostMemoryNotRegistered,                                                       \
      "pointer does not correspond to a registered memory region")                                 \
    X(801, cudaErrorNotSupported, "operation not supported")                                       \
    X(999, cudaErrorUnknown, "unknown error")

static void child_reset(void)
{
    pthread_mutex_init(&g_lock, NULL);
}

/* load_driver: the body of rt_init, run once. */
static void load_driver(void)
{
    pthread_atfork(NULL, NULL, child_reset);
    /* the fake driver beside us, by path: another libcuda.so.1 on LD_LIBRARY_PATH (a real
     * one on a GPU machine) must never answer the fake runtime; by name only as a fallback */
    void *h = NULL;
    Dl_info self;
    char path[4096];
    if (dladdr((void *)rt_init, &self) && self.dli_fname && strrchr(self.dli_fname, '/')) {
        int dir = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
        snprintf(path, sizeof path, "%.*s/libcuda.so.1", dir, self.dli_fname);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h)
        h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (getenv("FAKECUDA_LOG") && strcmp(getenv("FAKECUDA_LOG"), "0") != 0)
            fprintf(stderr, "[fakecudart] dlopen(libcuda.so.1): %s\n", dlerror());
        g_init_err = RT_ERR_INSUFFICIENT_DRIVER;
        return;
    }
    rt_gpa_fn first = (rt_gpa_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!first) {
        g_init_err = RT_ERR_INSUFFICIENT_DRIVER;
        return;
    }
    /* like the real runtime: ask for cuGetProcAddress itself at 11030 and at 12000 */
    void *p = NULL;
    CUdriverProcAddressQueryResult st = 0;
    (void)first("cuGetProcAddress", &p, 11030, 0, &st);
    p = NULL;
    if (first("cuGetProcAddress", &p, 12000, 0, &st) != CUDA_SUCCESS || !p) {
        g_init_err = RT_ERR_INSUFFICIENT_DRIVER;
        return;
    }
    rt_drv.gpa = (rt_gpa_fn)p;
#define FETCH(field, name, ver, flags, params)                                                     \
    p = NULL;                                                                                      \
    if (rt_drv.gpa(name, &p, ver, flags, &st) != CUDA_SUCCESS || !p) {                             \
        g_init_err = RT_ERR_INSUFFICIENT_DRIVER;                                                   \
        return;                                                                                    \
    }                                                                                              \
    rt_drv.field = (CUresult(*) params)p;
    RT_DRIVER(FETCH)
#undef FETCH
    CUresult r = rt_drv.cuInit(0);
    if (r != CUDA_SUCCESS) {
        g_init_err = rt_err(r);
        return;
    }
    if (rt_drv.cuDeviceGetCount(&g_ndev) != CUDA_SUCCESS || g_ndev <= 0) {
        g_init_err = cudaErrorNoDevice;
        return;
    }
    g_init_err = cudaSuccess;
}

cudaError_t rt_init(void)
{
    pthread_once(&g_once, load_driver);
    return g_init_err;
}

cudaError_t rt_err(CUresult r)
{
    switch (r) {
#define X(code, name, desc)                                                                        \
    case code:                                                                                     \
        return code;
        RT_ERRORS(X)
#undef X
    }
    return cudaErrorUnknown;
}

cudaError_t rt_ret(cudaError_t e)
{
    if (e != cudaSuccess)
        t_last = e;
    return e;
}

/* use_device: retains device d's primary context (once per process) and makes it current. */
static cudaError_t use_device(int d)
{
    pthread_mutex_lock(&g_lock);
    CUresult r = CUDA_SUCCESS;
    if (!g_primary[d])
        r = rt_drv.cuDevicePrimaryCtxRetain(&g_primary[d], d);
    CUcontext c = g_primary[d];
    pthread_mutex_unlock(&g_lock);
    if (r == CUDA_SUCCESS)
        r = rt_drv.cuCtxSetCurrent(c);
    return rt_err(r);
}

cudaError_t rt_ctx(void)
{
    cudaError_t e = rt_init();
    if (e)
        return e;
    CUcontext cur = NULL;
    if (rt_drv.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur)
        return cudaSuccess;
    return use_device(t_dev);
}

/* ---- exported: devices, versions, errors ---- */

cudaError_t cudaGetDeviceCount(int *n)
{
    if (!n)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    *n = e ? 0 : g_ndev;
    return rt_ret(e);
}

cudaError_t cudaSetDevice(int d)
{
    cudaError_t e = rt_init();
    if (e)
        return rt_ret(e);
    if (d < 0 || d >= g_ndev || d >= RT_MAX_DEVICES)
        return rt_ret(cudaErrorInvalidDevice);
    t_dev = d;
    return rt_ret(use_device(d));
}

cudaError_t cudaGetDevice(int *d)
{
    if (!d)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e)
        return rt_ret(e);
    CUcontext cur = NULL;
    CUdevice cd = 0;
    if (rt_drv.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur &&
        rt_drv.cuCtxGetDevice(&cd) == CUDA_SUCCESS)
        t_dev = cd;
    *d = t_dev;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = rt_ctx();
    return rt_ret(e ? e : rt_err(rt_drv.cuCtxSynchronize()));
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return rt_ret(cudaErrorInvalidValue);
    *v = RT_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return rt_ret(cudaErrorInvalidValue);
    if (rt_init() == RT_ERR_INSUFFICIENT_DRIVER) {
        *v = 0;
        return cudaSuccess;
    }
    return rt_ret(rt_err(rt_drv.cuDriverGetVersion(v)));
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = t_last;
    t_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return t_last;
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
#define X(code, name, desc)                                                                        \
    case code:                                                                                     \
        return desc;
        RT_ERRORS(X)
#undef X
    }
    return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
#define X(code, name, desc)                                                                        \
    case code:                                                                                     \
        return #name;
        RT_ERRORS(X)
#undef X
    }
    return "unrecognized error code";
}

/* ---- exported: driver entry points ---- */

cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fn, unsigned int version,
                                             unsigned long long flags,
                                             cudaDriverEntryPointQueryResult *status)
{
    if (!sym || !fn || flags > 2)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e)
        return rt_ret(e);
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *fn = NULL;
    CUresult r = rt_drv.gpa(sym, fn, (int)version, flags, &st);
    if (status)
        *status = st == CU_GET_PROC_ADDRESS_SUCCESS ? cudaDriverEntryPointSuccess
                  : st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      ? cudaDriverEntryPointVersionNotSufficent
                      : cudaDriverEntryPointSymbolNotFound;
    /* a symbol that is not found is reported through *status, not as an error */
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_FOUND)
        return rt_ret(rt_err(r));
    return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fn, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult *status)
{
    return cudaGetDriverEntryPointByVersion(sym, fn, RT_VERSION, flags, status);
}

/* ---- exported: streams ---- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    if (!s)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_ctx();
    return rt_ret(e ? e : rt_err(rt_drv.cuStreamCreate((CUstream *)s, flags)));
}

cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    return cudaStreamCreateWithFlags(s, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    cudaError_t e = rt_ctx();
    if (!e && !s)
        e = RT_ERR_INVALID_RESOURCE_HANDLE;
    return rt_ret(e ? e : rt_err(rt_drv.cuStreamDestroy_v2((CUstream)s)));
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    cudaError_t e = rt_ctx();
    return rt_ret(e ? e : rt_err(rt_drv.cuStreamSynchronize((CUstream)s)));
}
