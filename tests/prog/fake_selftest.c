/* fake_selftest.c — checks the project's fake CUDA (build/fakecuda) on its own, without the
 * preload: capacity and OOM, address reuse, cudaMemGetInfo arithmetic, VMM, modules,
 * cuGetProcAddress variants, last-error state, several devices, threads, fork.
 * usage: fake_selftest SECTION [ARGS] (the env FAKECUDA_* it expects is set by fake_selftest.sh). */
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

static int g_fail;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
            g_fail++;                                                                      \
        }                                                                                  \
    } while (0)
#define CHECK_EQ(a, b)                                                                     \
    do {                                                                                   \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);     \
        if (a_ != b_) {                                                                    \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %llu (%#llx), %s = %llu (%#llx)\n", \
                    __FILE__, __LINE__, #a, a_, a_, #b, b_, b_);                           \
            g_fail++;                                                                      \
        }                                                                                  \
    } while (0)

static void *g_cuda; /* dlopen("libcuda.so.1") */

/* drv: a driver symbol by its exported name (aborts the section if missing). */
static void *drv(const char *name)
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
static size_t free_now(void)
{
    size_t f = 0, t = 0;
    CHECK_EQ(cudaMemGetInfo(&f, &t), cudaSuccess);
    return f;
}

/* Env: FAKECUDA_MEM=1G FAKECUDA_CONTEXT=100M. */
static void t_capacity(void)
{
    size_t f = 0, t = 0;
    CHECK_EQ(cudaMemGetInfo(&f, &t), 0);
    CHECK_EQ(t, 1 * GiB);
    CHECK_EQ(f, 1 * GiB - 100 * MiB); /* the primary context */

    void *a = NULL, *b = NULL, *c = NULL;
    CHECK_EQ(cudaMalloc(&a, 512 * MiB), 0);
    CHECK(a != NULL);
    CHECK_EQ((uintptr_t)a % 512, 0);
    CHECK_EQ(free_now(), 1 * GiB - 612 * MiB);
    /* 412 MiB left: 512 MiB fails with OOM, nothing allocated */
    b = (void *)0x1;
    CHECK_EQ(cudaMalloc(&b, 512 * MiB), cudaErrorMemoryAllocation);
    CHECK(b == NULL);
    CHECK_EQ(free_now(), 1 * GiB - 612 * MiB);
    CHECK_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaGetLastError(), cudaSuccess);
    /* exactly what is left still fits */
    CHECK_EQ(cudaMalloc(&b, 412 * MiB), 0);
    CHECK_EQ(free_now(), 0);
    CHECK_EQ(cudaMalloc(&c, 1), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaFree(b), 0);
    /* rounding to 512 bytes */
    CHECK_EQ(cudaMalloc(&c, 1), 0);
    CHECK_EQ(free_now(), 1 * GiB - 612 * MiB - 512);
    CHECK_EQ(cudaFree(c), 0);
    CHECK_EQ(cudaFree(a), 0);
    CHECK_EQ(free_now(), 1 * GiB - 100 * MiB);
    /* zero-size and NULL */
    c = (void *)0x1;
    CHECK_EQ(cudaMalloc(&c, 0), 0);
    CHECK(c == NULL);
    CHECK_EQ(cudaFree(NULL), 0);
    /* a pointer that was never allocated, and a double free */
    CHECK_EQ(cudaMalloc(&a, 4096), 0);
    CHECK_EQ(cudaFree((char *)a + 512), cudaErrorInvalidValue);
    CHECK_EQ(cudaFree(a), 0);
    CHECK_EQ(cudaFree(a), cudaErrorInvalidValue);
    CHECK_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    /* managed and pitched memory count as device memory */
    size_t pitch = 0;
    CHECK_EQ(cudaMallocManaged(&a, 10 * MiB, 1), 0);
    CHECK_EQ(cudaMallocPitch(&b, &pitch, 1000, 100), 0);
    CHECK_EQ(pitch, 1024);
    CHECK_EQ(free_now(), 1 * GiB - 110 * MiB - 1024 * 100);
    CHECK_EQ(cudaFree(a), 0);
    CHECK_EQ(cudaFree(b), 0);
    CHECK_EQ(free_now(), 1 * GiB - 100 * MiB);
    /* pinned host memory is real and costs no device memory */
    char *h = NULL;
    CHECK_EQ(cudaHostAlloc((void **)&h, 1 * MiB, 0), 0);
    memset(h, 7, 1 * MiB);
    CHECK_EQ(cudaFreeHost(h), 0);
    CHECK_EQ(cudaMallocHost((void **)&h, 4096), 0);
    h[4095] = 1;
    CHECK_EQ(cudaFreeHost(h), 0);
    static char buf[8192];
    CHECK_EQ(cudaHostRegister(buf, sizeof buf, 0), 0);
    CHECK_EQ(cudaHostRegister(buf + 100, 10, 0), 712);
    CHECK_EQ(cudaHostUnregister(buf), 0);
    CHECK_EQ(cudaHostUnregister(buf), 713);
    CHECK_EQ(free_now(), 1 * GiB - 100 * MiB);
    cudaGetLastError();
}

/* Env: FAKECUDA_MEM=1G. Freed ranges are reused; live ranges never overlap. */
static void t_reuse(void)
{
    void *p[64];
    for (int i = 0; i < 64; i++)
        CHECK_EQ(cudaMalloc(&p[i], 1000 + (size_t)i * 700), 0);
    for (int i = 0; i < 64; i++)
        for (int j = i + 1; j < 64; j++) {
            uintptr_t a = (uintptr_t)p[i], b = (uintptr_t)p[j];
            size_t na = 1000 + (size_t)i * 700, nb = 1000 + (size_t)j * 700;
            CHECK(a + na <= b || b + nb <= a);
        }
    void *old = p[10];
    CHECK_EQ(cudaFree(p[10]), 0);
    void *q = NULL;
    CHECK_EQ(cudaMalloc(&q, 1000 + 10 * 700), 0);
    CHECK(q == old); /* the hole is reused */
    p[10] = q;
    for (int i = 0; i < 64; i++)
        CHECK_EQ(cudaFree(p[i]), 0);
    void *a = NULL, *b = NULL;
    CHECK_EQ(cudaMalloc(&a, 4 * MiB), 0);
    CHECK_EQ(cudaFree(a), 0);
    CHECK_EQ(cudaMalloc(&b, 4 * MiB), 0);
    CHECK(a == b);
    CHECK_EQ(cudaFree(b), 0);
    /* first fit: with holes of 1, 2 and 3 KiB (in that address order), a 2 KiB request
     * takes the 2 KiB hole, a 512 B one the 1 KiB hole */
    void *r[7];
    size_t rs[7] = {1024, 512, 2048, 512, 3072, 512, 512};
    for (int i = 0; i < 7; i++)
        CHECK_EQ(cudaMalloc(&r[i], rs[i]), 0);
    for (int i = 0; i < 6; i++)
        CHECK((uintptr_t)r[i] + rs[i] == (uintptr_t)r[i + 1]); /* packed from an empty space */
    CHECK_EQ(cudaFree(r[0]), 0);
    CHECK_EQ(cudaFree(r[2]), 0);
    CHECK_EQ(cudaFree(r[4]), 0);
    CHECK_EQ(cudaMalloc(&a, 2048), 0);
    CHECK(a == r[2]);
    CHECK_EQ(cudaMalloc(&b, 512), 0);
    CHECK(b == r[0]);
    CHECK_EQ(cudaFree(a), 0);
    CHECK_EQ(cudaFree(b), 0);
    for (int i = 1; i < 7; i += 2)
        CHECK_EQ(cudaFree(r[i]), 0);
    CHECK_EQ(cudaFree(r[6]), 0);
    /* random churn against a model: live ranges never overlap, everything frees */
    enum { LIVE = 300, OPS = 20000 };
    static uintptr_t addr[LIVE];
    static size_t len[LIVE];
    size_t base = free_now(), used = 0;
    unsigned seed = 12345;
    for (int op = 0; op < OPS; op++) {
        int k = (int)(rand_r(&seed) % LIVE);
        if (addr[k]) {
            CHECK_EQ(cudaFree((void *)addr[k]), 0);
            used -= (len[k] + 511) / 512 * 512;
            addr[k] = 0;
            continue;
        }
        len[k] = 1 + (size_t)(rand_r(&seed) % (4 * MiB));
        void *np = NULL;
        CHECK_EQ(cudaMalloc(&np, len[k]), 0);
        addr[k] = (uintptr_t)np;
        used += (len[k] + 511) / 512 * 512;
        CHECK_EQ(addr[k] % 512, 0);
        for (int j = 0; j < LIVE; j++)
            if (j != k && addr[j])
                CHECK(addr[k] + len[k] <= addr[j] || addr[j] + len[j] <= addr[k]);
        if (g_fail)
            return;
    }
    CHECK_EQ(free_now(), base - used);
    for (int k = 0; k < LIVE; k++)
        if (addr[k])
            CHECK_EQ(cudaFree((void *)addr[k]), 0);
    CHECK_EQ(free_now(), base);
    /* everything free again: the next allocation starts the space afresh */
    CHECK_EQ(cudaMalloc(&a, 512), 0);
    CHECK(a == r[0]);
    CHECK_EQ(cudaFree(a), 0);
}

/* Env: FAKECUDA_MEM=1G FAKECUDA_CONTEXT=100M. Stream-ordered allocations and pools. */
static void t_async(void)
{
    size_t base = free_now();
    void *a = NULL, *b = NULL, *c = NULL;
    cudaStream_t s = NULL;
    CHECK_EQ(cudaStreamCreate(&s), 0);
    CHECK_EQ(cudaMallocAsync(&a, 100 * MiB, s), 0);
    CHECK_EQ(cudaMallocAsync_ptsz(&b, 100 * MiB, NULL), 0);
    cudaMemPool_t pool = NULL;
    CHECK_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), 0);
    CHECK(pool != NULL);
    CHECK_EQ(cudaMallocFromPoolAsync(&c, 100 * MiB, pool, s), 0);
    CHECK_EQ(free_now(), base - 300 * MiB);
    CHECK_EQ(cudaMallocAsync(&a, 1 * GiB, s) == cudaErrorMemoryAllocation, 1);
    cudaGetLastError();
    CHECK_EQ(cudaFreeAsync(b, s), 0);
    CHECK_EQ(cudaFreeAsync(c, NULL), 0);
    CHECK_EQ(cudaMemPoolTrimTo(pool, 0), 0);
    CHECK_EQ(free_now(), base - 100 * MiB);
    CHECK_EQ(cudaMallocFromPoolAsync(&c, 1, NULL, s), cudaErrorInvalidValue);
    cudaGetLastError();
    CHECK_EQ(cudaStreamDestroy(s), 0);
}

typedef CUresult (*gpa_v2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_v1_t)(const char *, void **, int, cuuint64_t);

/* query: cuGetProcAddress_v2(name, version, flags); returns the pointer, fills *r / *st. */
static void *query(const char *name, int version, unsigned long long flags, CUresult *r, int *st)
{
    gpa_v2_t gpa = (gpa_v2_t)drv("cuGetProcAddress_v2");
    void *p = (void *)0x1;
    *st = -1;
    *r = gpa(name, &p, version, flags, st);
    return p;
}

/* cuGetProcAddress picks the ABI variant by version and flags. */
static void t_procaddr(void)
{
    CUresult r;
    int st;
    CHECK(query("cuMemAlloc", 13000, 0, &r, &st) == drv("cuMemAlloc_v2"));
    CHECK_EQ(r, CUDA_SUCCESS);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK(query("cuMemAlloc", 3020, 0, &r, &st) == drv("cuMemAlloc_v2"));
    CHECK(query("cuMemAlloc", 3010, 0, &r, &st) == drv("cuMemAlloc"));
    CHECK(query("cuMemAlloc", 2000, 0, &r, &st) == drv("cuMemAlloc"));
    CHECK(query("cuMemFree", 12000, 0, &r, &st) == drv("cuMemFree_v2"));
    CHECK(query("cuMemGetInfo", 12000, 0, &r, &st) == drv("cuMemGetInfo_v2"));
    CHECK(query("cuGetProcAddress", 12000, 0, &r, &st) == drv("cuGetProcAddress_v2"));
    CHECK(query("cuGetProcAddress", 13000, 0, &r, &st) == drv("cuGetProcAddress_v2"));
    CHECK(query("cuGetProcAddress", 11030, 0, &r, &st) == drv("cuGetProcAddress"));
    CHECK(query("cuGetProcAddress", 11080, 0, &r, &st) == drv("cuGetProcAddress"));
    CHECK(query("cuMemAllocAsync", 12000, 2, &r, &st) == drv("cuMemAllocAsync_ptsz"));
    CHECK(query("cuMemAllocAsync", 12000, 0, &r, &st) == drv("cuMemAllocAsync"));
    CHECK(query("cuMemAllocAsync", 12000, 1, &r, &st) == drv("cuMemAllocAsync"));
    CHECK(query("cuMemFreeAsync", 12000, 2, &r, &st) == drv("cuMemFreeAsync_ptsz"));
    CHECK(query("cuMemAllocFromPoolAsync", 12000, 2, &r, &st) == drv("cuMemAllocFromPoolAsync_ptsz"));
    CHECK(query("cuMemCreate", 12000, 2, &r, &st) == drv("cuMemCreate")); /* no _ptsz form */
    CHECK(query("cuCtxCreate", 3020, 0, &r, &st) == drv("cuCtxCreate_v2"));
    CHECK(query("cuCtxCreate", 12000, 0, &r, &st) == drv("cuCtxCreate_v3"));
    CHECK(query("cuCtxCreate", 13000, 0, &r, &st) == drv("cuCtxCreate_v4"));
    CHECK(query("cuDeviceGetUuid", 11040, 0, &r, &st) == drv("cuDeviceGetUuid_v2"));
    CHECK(query("cuDeviceGetUuid", 11000, 0, &r, &st) == drv("cuDeviceGetUuid"));
    /* unknown name, too old a version, a suffixed name */
    CHECK(query("cuNoSuchThing", 13000, 0, &r, &st) == NULL);
    CHECK_EQ(r, CUDA_ERROR_NOT_FOUND);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(query("cuMemCreate", 10010, 0, &r, &st) == NULL);
    CHECK_EQ(r, CUDA_ERROR_NOT_FOUND);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(query("cuMemAlloc_v2", 13000, 0, &r, &st) == NULL);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    /* the v1 entry point has no status argument */
    gpa_v1_t v1 = (gpa_v1_t)drv("cuGetProcAddress");
    void *p = NULL;
    CHECK_EQ(v1("cuMemAlloc", &p, 12000, 0), CUDA_SUCCESS);
    CHECK(p == drv("cuMemAlloc_v2"));
    /* the runtime hands out the same pointers */
    int rs = -1;
    p = NULL;
    CHECK_EQ(cudaGetDriverEntryPoint("cuMemAlloc", &p, cudaEnableDefault, &rs), 0);
    CHECK(p == drv("cuMemAlloc_v2"));
    CHECK_EQ(rs, cudaDriverEntryPointSuccess);
    CHECK_EQ(cudaGetDriverEntryPoint("cuMemAllocAsync", &p, cudaEnablePerThreadDefaultStream, &rs), 0);
    CHECK(p == drv("cuMemAllocAsync_ptsz"));
    CHECK_EQ(cudaGetDriverEntryPointByVersion("cuMemAlloc", &p, 3010, 0, &rs), 0);
    CHECK(p == drv("cuMemAlloc"));
    CHECK_EQ(cudaGetDriverEntryPointByVersion("cuGetProcAddress", &p, 12000, 0, &rs), 0);
    CHECK(p == drv("cuGetProcAddress_v2"));
    CHECK_EQ(cudaGetDriverEntryPoint("cuNoSuchThing", &p, 0, &rs), 0);
    CHECK(p == NULL);
    CHECK_EQ(rs, cudaDriverEntryPointSymbolNotFound);
    CHECK_EQ(cudaGetDriverEntryPointByVersion("cuMemCreate", &p, 9000, 0, &rs), 0);
    CHECK_EQ(rs, cudaDriverEntryPointVersionNotSufficent);
    CHECK_EQ(cudaPeekAtLastError(), cudaSuccess);
}

/* Env: FAKECUDA_MEM=1G FAKECUDA_CONTEXT=100M. VMM: physical memory, not reserved VA. */
static void t_vmm(void)
{
    CUresult (*gran)(size_t *, const CUmemAllocationProp *, int) = drv("cuMemGetAllocationGranularity");
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long) = drv("cuMemCreate");
    CUresult (*release)(CUmemGenericAllocationHandle) = drv("cuMemRelease");
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) =
        drv("cuMemAddressReserve");
    CUresult (*vafree)(CUdeviceptr, size_t) = drv("cuMemAddressFree");
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) =
        drv("cuMemMap");
    CUresult (*unmap)(CUdeviceptr, size_t) = drv("cuMemUnmap");
    CUresult (*access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t) = drv("cuMemSetAccess");
    CUresult (*retain)(CUmemGenericAllocationHandle *, void *) = drv("cuMemRetainAllocationHandle");
    CUresult (*exporth)(void *, CUmemGenericAllocationHandle, int, unsigned long long) =
        drv("cuMemExportToShareableHandle");
    CUresult (*importh)(CUmemGenericAllocationHandle *, void *, int) = drv("cuMemImportFromShareableHandle");

    size_t base = free_now(); /* also creates the context */
    CHECK_EQ(base, 1 * GiB - 100 * MiB);
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0;
    CHECK_EQ(gran(&g, &prop, 0), 0);
    CHECK_EQ(g, 2 * MiB);

    /* reserving far more address space than the card has costs nothing */
    CUdeviceptr va = 0;
    CHECK_EQ(reserve(&va, 8 * GiB, 0, 0, 0), 0);
    CHECK_EQ(va % (2 * MiB), 0);
    CHECK_EQ(free_now(), base);

    CUmemGenericAllocationHandle h1 = 0, h2 = 0, h3 = 0;
    CHECK_EQ(create(&h1, 20 * MiB, &prop, 0), 0);
    CHECK_EQ(free_now(), base - 20 * MiB);
    CHECK_EQ(create(&h2, 3 * MiB, &prop, 0), CUDA_ERROR_INVALID_VALUE); /* not granular */
    CHECK_EQ(create(&h2, 2 * GiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(free_now(), base - 20 * MiB);

    CHECK_EQ(map(va, 20 * MiB, 0, h1, 0), 0);
    CHECK_EQ(map(va, 2 * MiB, 0, h1, 0), 208); /* already mapped */
    CUmemAccessDesc ad = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, 3};
    CHECK_EQ(access(va, 20 * MiB, &ad, 1), 0);
    /* released while mapped: still resident */
    CHECK_EQ(release(h1), 0);
    CHECK_EQ(free_now(), base - 20 * MiB);
    /* the handle can be retained from the address */
    CHECK_EQ(retain(&h3, (void *)(uintptr_t)(va + 4 * MiB)), 0);
    CHECK_EQ(release(h3), 0);
    CHECK_EQ(release(h3), CUDA_ERROR_INVALID_VALUE);
    /* unmapped: gone */
    CHECK_EQ(unmap(va, 20 * MiB), 0);
    CHECK_EQ(free_now(), base);
    CHECK_EQ(retain(&h3, (void *)(uintptr_t)va), CUDA_ERROR_INVALID_VALUE);

    /* unmapped first, released later */
    CHECK_EQ(create(&h2, 4 * MiB, &prop, 0), 0);
    CHECK_EQ(map(va + 2 * MiB, 4 * MiB, 0, h2, 0), 0);
    CHECK_EQ(unmap(va + 2 * MiB, 4 * MiB), 0);
    CHECK_EQ(free_now(), base - 4 * MiB);
    CHECK_EQ(release(h2), 0);
    CHECK_EQ(free_now(), base);

    /* export / import in-process: the import shares the same physical memory */
    CHECK_EQ(create(&h1, 2 * MiB, &prop, 0), 0);
    int fd = -1;
    CHECK_EQ(exporth(&fd, h1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), 0);
    CHECK(fd >= 0);
    CHECK_EQ(importh(&h2, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 0);
    CHECK(h2 != 0);
    CHECK_EQ(free_now(), base - 2 * MiB);
    CHECK_EQ(importh(&h3, (void *)(intptr_t)12345, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(release(h1), 0);
    CHECK_EQ(release(h2), 0);

    /* a mapping must lie inside a reservation; the reservation can then be freed */
    CHECK_EQ(create(&h1, 2 * MiB, &prop, 0), 0);
    CHECK_EQ(map(va + 8 * GiB, 2 * MiB, 0, h1, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(map(va, 2 * MiB, 0, h1, 0), 0);
    CHECK_EQ(vafree(va, 8 * GiB), CUDA_ERROR_INVALID_VALUE); /* still mapped */
    CHECK_EQ(unmap(va, 2 * MiB), 0);
    CHECK_EQ(release(h1), 0);
    CHECK_EQ(vafree(va, 8 * GiB), 0);
    /* a freed reservation's range is reused */
    CUdeviceptr va2 = 0;
    CHECK_EQ(reserve(&va2, 8 * GiB, 0, 0, 0), 0);
    CHECK_EQ(va2, va);
    CHECK_EQ(vafree(va2, 8 * GiB), 0);
    /* cudaFree does not take VMM memory */
    CHECK_EQ(cudaFree((void *)(uintptr_t)va), cudaErrorInvalidValue);
    cudaGetLastError();
}

/* Env: FAKECUDA_MEM=1G FAKECUDA_CONTEXT=100M. Loaded images cost their size rounded to 2 MiB. */
static void t_modules(const char *tmpfile)
{
    CUresult (*load)(CUmodule *, const char *) = drv("cuModuleLoad");
    CUresult (*load_data)(CUmodule *, const void *) = drv("cuModuleLoadData");
    CUresult (*load_ex)(CUmodule *, const void *, unsigned, CUjit_option *, void **) = drv("cuModuleLoadDataEx");
    CUresult (*load_fat)(CUmodule *, const void *) = drv("cuModuleLoadFatBinary");
    CUresult (*unload)(CUmodule) = drv("cuModuleUnload");
    CUresult (*lib_data)(CUlibrary *, const void *, CUjit_option *, void **, unsigned,
                         CUlibraryOption *, void **, unsigned) = drv("cuLibraryLoadData");
    CUresult (*lib_file)(CUlibrary *, const char *, CUjit_option *, void **, unsigned,
                         CUlibraryOption *, void **, unsigned) = drv("cuLibraryLoadFromFile");
    CUresult (*lib_unload)(CUlibrary) = drv("cuLibraryUnload");

    size_t base = free_now();
    /* PTX text of 3 MiB -> 4 MiB */
    size_t n = 3 * MiB;
    char *ptx = malloc(n + 1);
    memset(ptx, 'x', n);
    ptx[n] = 0;
    CUmodule m1 = NULL, m2 = NULL, m3 = NULL, m4 = NULL;
    CHECK_EQ(load_data(&m1, ptx), 0);
    CHECK_EQ(free_now(), base - 4 * MiB);
    CHECK_EQ(load_ex(&m2, "tiny", 0, NULL, NULL), 0);
    CHECK_EQ(free_now(), base - 6 * MiB);
    /* a fatbin: 16-byte header, body size 5 MiB -> 6 MiB */
    unsigned char fat[16] = {0};
    uint32_t magic = 0xBA55ED50u;
    uint16_t ver = 1, hsz = 16;
    uint64_t body = 5 * MiB;
    memcpy(fat, &magic, 4);
    memcpy(fat + 4, &ver, 2);
    memcpy(fat + 6, &hsz, 2);
    memcpy(fat + 8, &body, 8);
    CHECK_EQ(load_fat(&m3, fat), 0);
    CHECK_EQ(free_now(), base - 12 * MiB);
    /* a file of 2 MiB + 1 -> 4 MiB */
    FILE *f = fopen(tmpfile, "wb");
    CHECK(f != NULL);
    if (f) {
        for (size_t i = 0; i < 2 * MiB + 1; i++)
            fputc(0, f);
        fclose(f);
    }
    CHECK_EQ(load(&m4, tmpfile), 0);
    CHECK_EQ(free_now(), base - 16 * MiB);
    CHECK_EQ(load(&m4, "/nonexistent/x.cubin"), 301);
    CHECK_EQ(unload(m1), 0);
    CHECK_EQ(unload(m2), 0);
    CHECK_EQ(unload(m3), 0);
    CUmodule keep = m4;
    CHECK_EQ(load(&m4, tmpfile), 0);
    CHECK_EQ(unload(keep), 0);
    CHECK_EQ(unload(m4), 0);
    CHECK_EQ(free_now(), base);
    CUlibrary l1 = NULL, l2 = NULL;
    CHECK_EQ(lib_data(&l1, ptx, NULL, NULL, 0, NULL, NULL, 0), 0);
    CHECK_EQ(lib_file(&l2, tmpfile, NULL, NULL, 0, NULL, NULL, 0), 0);
    CHECK_EQ(free_now(), base - 8 * MiB);
    CHECK_EQ(lib_unload(l1), 0);
    CHECK_EQ(lib_unload(l2), 0);
    CHECK_EQ(free_now(), base);
    /* past capacity: a fatbin header claiming a 2 GiB body (never read) */
    body = 2 * GiB;
    memcpy(fat + 8, &body, 8);
    CHECK_EQ(load_data(&m1, fat), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(free_now(), base);
    free(ptx);
}

/* Last-error state: set by failures, read-and-cleared by cudaGetLastError. */
static void t_lasterror(void)
{
    CHECK_EQ(cudaGetLastError(), cudaSuccess);
    void *p = NULL;
    CHECK_EQ(cudaMalloc(&p, 2 * GiB), cudaErrorMemoryAllocation); /* FAKECUDA_MEM=1G */
    CHECK_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaMalloc(&p, 512), cudaSuccess); /* a success does not clear it */
    CHECK_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ(cudaGetLastError(), cudaSuccess);
    CHECK_EQ(cudaPeekAtLastError(), cudaSuccess);
    CHECK_EQ(cudaSetDevice(7), cudaErrorInvalidDevice);
    CHECK_EQ(cudaFree(p), 0);
    CHECK_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
    CHECK(strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") == 0);
    CHECK(strcmp(cudaGetErrorString(123456), "unrecognized error code") == 0);
    const char *s = NULL;
    CUresult (*estr)(CUresult, const char **) = drv("cuGetErrorString");
    CUresult (*ename)(CUresult, const char **) = drv("cuGetErrorName");
    CHECK_EQ(ename(2, &s), 0);
    CHECK(s && strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CHECK_EQ(estr(2, &s), 0);
    CHECK(s && strcmp(s, "out of memory") == 0);
    CHECK_EQ(ename(123456, &s), CUDA_ERROR_INVALID_VALUE);
    /* the error is per thread (checked in a fresh thread by t_threads) */
    int v = 0;
    CHECK_EQ(cudaRuntimeGetVersion(&v), 0);
    CHECK_EQ(v, 13000);
    CHECK_EQ(cudaDriverGetVersion(&v), 0);
    CHECK_EQ(v, 13000);
    CHECK_EQ(cudaMemcpy(NULL, NULL, 0, 1), 0);
    CHECK_EQ(cudaMemset(NULL, 0, 0), 0);
}

/* Env: FAKECUDA_DEVICES=2 FAKECUDA_MEM=2G FAKECUDA_CONTEXT=300M. */
static void t_devices(void)
{
    int n = 0, d = -1;
    CHECK_EQ(cudaGetDeviceCount(&n), 0);
    CHECK_EQ(n, 2);
    CHECK_EQ(cudaGetDevice(&d), 0);
    CHECK_EQ(d, 0);
    void *a = NULL, *b = NULL;
    CHECK_EQ(cudaMalloc(&a, 1 * GiB), 0);
    CHECK_EQ(free_now(), 2 * GiB - 300 * MiB - 1 * GiB);
    CHECK_EQ(cudaSetDevice(1), 0);
    CHECK_EQ(cudaGetDevice(&d), 0);
    CHECK_EQ(d, 1);
    CHECK_EQ(free_now(), 2 * GiB - 300 * MiB); /* device 1: its own context only */
    CHECK_EQ(cudaMalloc(&b, 1 * GiB), 0);
    CHECK(a != b);
    CHECK_EQ(free_now(), 2 * GiB - 300 * MiB - 1 * GiB);
    /* freeing device 0's pointer from device 1 works (unified addressing) */
    CHECK_EQ(cudaFree(a), 0);
    CHECK_EQ(free_now(), 2 * GiB - 300 * MiB - 1 * GiB);
    CHECK_EQ(cudaSetDevice(0), 0);
    CHECK_EQ(free_now(), 2 * GiB - 300 * MiB);
    CHECK_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
    cudaGetLastError();
    /* device queries */
    CUresult (*getname)(char *, int, CUdevice) = drv("cuDeviceGetName");
    CUresult (*uuid)(CUuuid *, CUdevice) = drv("cuDeviceGetUuid_v2");
    CUresult (*attr)(int *, int, CUdevice) = drv("cuDeviceGetAttribute");
    CUresult (*total)(size_t *, CUdevice) = drv("cuDeviceTotalMem_v2");
    char name[64];
    CHECK_EQ(getname(name, sizeof name, 1), 0);
    CHECK(strcmp(name, "Fake GPU (vramtrace test)") == 0);
    CUuuid u0, u1, u0b;
    CHECK_EQ(uuid(&u0, 0), 0);
    CHECK_EQ(uuid(&u1, 1), 0);
    CHECK_EQ(uuid(&u0b, 0), 0);
    CHECK(memcmp(&u0, &u1, sizeof u0) != 0);
    CHECK(memcmp(&u0, &u0b, sizeof u0) == 0);
    int major = 0, minor = -1;
    CHECK_EQ(attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0), 0);
    CHECK_EQ(attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0), 0);
    CHECK_EQ(major, 9);
    CHECK_EQ(minor, 0);
    size_t t = 0;
    CHECK_EQ(total(&t, 1), 0);
    CHECK_EQ(t, 2 * GiB);
    CHECK_EQ(total(&t, 2), CUDA_ERROR_INVALID_DEVICE);
    /* a second (non-primary) context costs another context's worth */
    CUresult (*ctx_create)(CUcontext *, unsigned int, CUdevice) = drv("cuCtxCreate_v2");
    CUresult (*ctx_destroy)(CUcontext) = drv("cuCtxDestroy_v2");
    CUresult (*ctx_set)(CUcontext) = drv("cuCtxSetCurrent");
    CUresult (*ctx_get)(CUcontext *) = drv("cuCtxGetCurrent");
    CUcontext prim = NULL, c2 = NULL;
    CHECK_EQ(ctx_get(&prim), 0);
    CHECK_EQ(ctx_create(&c2, 0, 0), 0);
    CHECK_EQ(free_now(), 2 * GiB - 600 * MiB);
    CHECK_EQ(ctx_destroy(c2), 0);
    CHECK_EQ(ctx_set(prim), 0);
    CHECK_EQ(free_now(), 2 * GiB - 300 * MiB);
    CHECK_EQ(cudaSetDevice(1), 0);
    CHECK_EQ(cudaFree(b), 0);
    CHECK_EQ(free_now(), 2 * GiB - 300 * MiB);
}

#define NTHREADS 4
#define NLIVE 64
#define NITER 2000

static void *thread_body(void *arg)
{
    (void)arg;
    int *bad = calloc(1, sizeof *bad);
    if (cudaPeekAtLastError() != cudaSuccess) /* a fresh thread has no error */
        (*bad)++;
    void *live[NLIVE] = {0};
    unsigned seed = (unsigned)(uintptr_t)&live;
    for (int i = 0; i < NITER; i++) {
        int k = (int)(rand_r(&seed) % NLIVE);
        if (live[k]) {
            if (cudaFree(live[k]) != 0)
                (*bad)++;
            live[k] = NULL;
        } else if (cudaMalloc(&live[k], 512 + (size_t)(rand_r(&seed) % 64) * 512) != 0) {
            (*bad)++;
        }
    }
    for (int k = 0; k < NLIVE; k++)
        if (live[k] && cudaFree(live[k]) != 0)
            (*bad)++;
    return bad;
}

/* Env: FAKECUDA_MEM=1G. Concurrent allocation keeps the books balanced. */
static void t_threads(void)
{
    void *p = NULL;
    CHECK_EQ(cudaMalloc(&p, 2 * GiB), cudaErrorMemoryAllocation); /* main thread's error only */
    size_t base = free_now();
    pthread_t tid[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&tid[i], NULL, thread_body, NULL);
    for (int i = 0; i < NTHREADS; i++) {
        int *bad = NULL;
        pthread_join(tid[i], (void **)&bad);
        CHECK(bad != NULL);
        if (bad) {
            CHECK_EQ(*bad, 0);
            free(bad);
        }
    }
    CHECK_EQ(free_now(), base);
    CHECK_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
}

/* A forked child can use the driver (fresh lock); the parent's books are its own. */
static void t_fork(void)
{
    void *a = NULL;
    CHECK_EQ(cudaMalloc(&a, 10 * MiB), 0);
    size_t base = free_now();
    pid_t pid = fork();
    if (pid == 0) {
        void *b = NULL;
        int ok = cudaMalloc(&b, 10 * MiB) == 0 && free_now() == base - 10 * MiB && cudaFree(b) == 0;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0);
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(free_now(), base);
    CHECK_EQ(cudaFree(a), 0);
}

extern cudaError_t cudaMemcpyAsync(void *, const void *, size_t, int, cudaStream_t);

/* Run with LD_PRELOAD of a shim whose cuMemHostAlloc, cuModuleLoadData, cuMemAlloc_v2,
 * cuMemFreeAsync, cudaGetDriverEntryPointByVersion, cudaStreamCreateWithFlags and cudaMemcpy
 * all return 999: the fakes' own internal calls and the runtime's driver calls must not reach
 * them (internal calls bind locally; the runtime uses cuGetProcAddress pointers only). */
static void t_interpose(void)
{
    typedef int (*shim_fn)(void);
    const char *shimmed[] = {"cuMemHostAlloc", "cuModuleLoadData", "cuMemAlloc_v2",
                             "cuMemFreeAsync", "cudaGetDriverEntryPointByVersion",
                             "cudaStreamCreateWithFlags", "cudaMemcpy"};
    for (size_t i = 0; i < sizeof shimmed / sizeof shimmed[0]; i++) {
        shim_fn f = (shim_fn)dlsym(RTLD_DEFAULT, shimmed[i]);
        CHECK(f != NULL);
        if (f)
            CHECK_EQ(f(), 999); /* the shim is really in front */
    }
    void *p = NULL;
    CHECK_EQ(cudaMalloc(&p, 1 * MiB), 0);
    CHECK_EQ(cudaFree(p), 0);
    CHECK_EQ(cudaMallocAsync_ptsz(&p, 1 * MiB, NULL), 0);
    CHECK_EQ(cudaFreeAsync(p, NULL), 0);
    void *fn = NULL;
    int st = -1;
    CHECK_EQ(cudaGetDriverEntryPoint("cuMemAlloc", &fn, 0, &st), 0);
    CHECK(fn == drv("cuMemAlloc_v2"));
    cudaStream_t s = NULL;
    CHECK_EQ(cudaStreamCreate(&s), 0);
    CHECK_EQ(cudaMemcpyAsync(NULL, NULL, 0, 1, s), 0);
    CHECK_EQ(cudaStreamDestroy(s), 0);
    CUresult (*alloc_host)(void **, size_t) = drv("cuMemAllocHost_v2");
    CUresult (*free_host)(void *) = drv("cuMemFreeHost");
    void *h = NULL;
    CHECK_EQ(alloc_host(&h, 4096), 0);
    CHECK_EQ(free_host(h), 0);
    CUresult (*load_ex)(CUmodule *, const void *, unsigned, CUjit_option *, void **) = drv("cuModuleLoadDataEx");
    CUresult (*unload)(CUmodule) = drv("cuModuleUnload");
    CUmodule m = NULL;
    CHECK_EQ(load_ex(&m, "ptx", 0, NULL, NULL), 0);
    CHECK_EQ(unload(m), 0);
    CUresult (*free_async_ptsz)(CUdeviceptr, CUstream) = drv("cuMemFreeAsync_ptsz");
    CHECK_EQ(cudaMallocAsync(&p, 512, NULL), 0);
    CHECK_EQ(free_async_ptsz((CUdeviceptr)(uintptr_t)p, NULL), 0);
}

/* Env: FAKECUDA_DEVICES=0. Every call that needs a device says there is none. */
static void t_nodevice(void)
{
    int n = -1;
    CHECK_EQ(cudaGetDeviceCount(&n), cudaErrorNoDevice);
    CHECK_EQ(n, 0);
    void *p = (void *)0x1;
    CHECK_EQ(cudaMalloc(&p, 512), cudaErrorNoDevice);
    CHECK_EQ(cudaGetLastError(), cudaErrorNoDevice);
    CHECK_EQ(cudaGetLastError(), cudaSuccess);
    size_t f = 0, t = 0;
    CHECK_EQ(cudaMemGetInfo(&f, &t), cudaErrorNoDevice);
    cudaGetLastError();
}

/* Checks cudaMemGetInfo's total on device `dev` against `expect` (bytes, decimal). */
static void t_size(const char *expect, int dev)
{
    size_t f = 0, t = 0;
    CHECK_EQ(cudaSetDevice(dev), 0);
    CHECK_EQ(cudaMemGetInfo(&f, &t), 0);
    CHECK_EQ(t, strtoull(expect, NULL, 10));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fake_selftest SECTION [ARG]\n");
        return 2;
    }
    const char *s = argv[1];
    if (!strcmp(s, "capacity"))
        t_capacity();
    else if (!strcmp(s, "reuse"))
        t_reuse();
    else if (!strcmp(s, "async"))
        t_async();
    else if (!strcmp(s, "procaddr"))
        t_procaddr();
    else if (!strcmp(s, "vmm"))
        t_vmm();
    else if (!strcmp(s, "modules") && argc > 2)
        t_modules(argv[2]);
    else if (!strcmp(s, "lasterror"))
        t_lasterror();
    else if (!strcmp(s, "devices"))
        t_devices();
    else if (!strcmp(s, "threads"))
        t_threads();
    else if (!strcmp(s, "nodevice"))
        t_nodevice();
    else if (!strcmp(s, "interpose"))
        t_interpose();
    else if (!strcmp(s, "fork"))
        t_fork();
    else if (!strcmp(s, "size") && argc > 2)
        t_size(argv[2], argc > 3 ? atoi(argv[3]) : 0);
    else {
        fprintf(stderr, "fake_selftest: unknown section '%s'\n", s);
        return 2;
    }
    if (g_fail) {
        fprintf(stderr, "fake_selftest %s: %d check(s) failed\n", s, g_fail);
        return 1;
    }
    printf("fake_selftest %s: ok\n", s);
    return 0;
}
