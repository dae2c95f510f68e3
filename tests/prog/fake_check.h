/* fake_check.h — shared by the fake CUDA self-tests (fake_selftest.c, fake_drvtest.c): the
 * runtime declarations they call, CHECK macros counting failures in g_fail, and helpers to
 * reach the driver (drv) and read free device memory (free_now). */
#ifndef FAKE_CHECK_H
#define FAKE_CHECK_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../preload/cuda_abi.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

extern cudaError_t cudaMalloc(void **, size_t);
extern cudaError_t cudaFree(void *);
extern cudaError_t cudaMallocAsync(void **, size_t, cudaStream_t);
extern cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
extern cudaError_t cudaFreeAsync(void *, cudaStream_t);
extern cudaError_t cudaMallocFromPoolAsync(void **, size_t, cudaMemPool_t, cudaStream_t);
extern cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *, int);
extern cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t);
extern cudaError_t cudaMallocManaged(void **, size_t, unsigned int);
extern cudaError_t cudaMallocPitch(void **, size_t *, size_t, size_t);
extern cudaError_t cudaHostAlloc(void **, size_t, unsigned int);
extern cudaError_t cudaMallocHost(void **, size_t);
extern cudaError_t cudaFreeHost(void *);
extern cudaError_t cudaHostRegister(void *, size_t, unsigned int);
extern cudaError_t cudaHostUnregister(void *);
extern cudaError_t cudaMemGetInfo(size_t *, size_t *);
extern cudaError_t cudaSetDevice(int);
extern cudaError_t cudaGetDevice(int *);
extern cudaError_t cudaGetDeviceCount(int *);
extern cudaError_t cudaGetLastError(void);
extern cudaError_t cudaPeekAtLastError(void);
extern const char *cudaGetErrorString(cudaError_t);
extern const char *cudaGetErrorName(cudaError_t);
extern cudaError_t cudaRuntimeGetVersion(int *);
extern cudaError_t cudaDriverGetVersion(int *);
extern cudaError_t cudaGetDriverEntryPoint(const char *, void **, unsigned long long, int *);
extern cudaError_t cudaGetDriverEntryPointByVersion(const char *, void **, unsigned int,
                                                    unsigned long long, int *);
extern cudaError_t cudaMemcpy(void *, const void *, size_t, int);
extern cudaError_t cudaMemset(void *, int, size_t);
extern cudaError_t cudaStreamCreate(cudaStream_t *);
extern cudaError_t cudaStreamDestroy(cudaStream_t);
extern cudaError_t cudaMemcpyAsync(void *, const void *, size_t, int, cudaStream_t);

static int g_fail; /* failed checks in this process */

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            g_fail++;                                                                              \
        }                                                                                          \
    } while (0)
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %llu (%#llx), %s = %llu (%#llx)\n",      \
                    __FILE__, __LINE__, #a, a_, a_, #b, b_, b_);                                   \
            g_fail++;                                                                              \
        }                                                                                          \
    } while (0)

static void *g_cuda; /* dlopen("libcuda.so.1") */

/* drv: a driver symbol by its exported name (aborts the section if missing). */
static inline void *drv(const char *name)
{
    if (!g_cuda) {
        int n = 0;
        cudaGetDeviceCount(&n); /* the runtime loads the driver; then it is found by soname */
        g_cuda = dlopen("libcuda.so.1", RTLD_NOW);
    }
    void *p = g_cuda ? dlsym(g_cuda, name) : NULL;
    if (!p) {
        fprintf(stderr, "fake_selftest: libcuda.so.1 lacks %s (%s)\n", name, dlerror());
        exit(2);
    }
    return p;
}

/* free_now: cudaMemGetInfo's free bytes. */
static inline size_t free_now(void)
{
    size_t f = 0, t = 0;
    CHECK_EQ(cudaMemGetInfo(&f, &t), cudaSuccess);
    return f;
}

#endif
