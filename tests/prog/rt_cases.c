/* rt_cases.c — test workloads for the capture core and the driver layer, run under the
 * preload by tests/integration/rt_*.sh and drv_*.sh. Functions are not static so the native
 * stacks name them (-rdynamic). usage: rt_cases CASE [ARGS]; see main(). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../preload/cuda_abi.h"

cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int dev);
cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags);
cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h);
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags);
cudaError_t cudaMallocHost(void **p, size_t n);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags);
cudaError_t cudaHostUnregister(void *p);
cudaError_t cudaMemGetInfo(size_t *f, size_t *t);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep);
cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fp, unsigned ver,
                                             unsigned long long flags, int *status);

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) {                                                                                 \
            fprintf(stderr, "rt_cases: %s = %d (line %d)\n", #x, rc_, __LINE__);                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- basic: every runtime hook once, each from its own named function ---------------- */
void *vt_case_malloc(void)
{
    void *p;
    CHECK(cudaMalloc(&p, 1000000));
    return p;
}
void vt_case_free(void *p)
{
    CHECK(cudaFree(p));
}
void vt_case_async(void)
{
    void *p;
    CHECK(cudaMallocAsync(&p, 3000000, NULL));
    CHECK(cudaFreeAsync(p, NULL));
}
void vt_case_pool(void)
{
    cudaMemPool_t pool;
    void *p;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CHECK(cudaMallocFromPoolAsync(&p, 4000000, pool, NULL));
    CHECK(cudaFreeAsync(p, NULL));
    CHECK(cudaMemPoolTrimTo(pool, 0));
}
void vt_case_managed(void)
{
    void *p;
    CHECK(cudaMallocManaged(&p, 5000000, 1));
    CHECK(cudaFree(p));
}
void vt_case_pitch(void)
{
    void *p;
    size_t pitch;
    CHECK(cudaMallocPitch(&p, &pitch, 1000, 60));
    CHECK(cudaFree(p));
}
void vt_case_host(void)
{
    void *a, *b;
    CHECK(cudaHostAlloc(&a, 7000000, 0));
    CHECK(cudaMallocHost(&b, 8000000));
    CHECK(cudaFreeHost(a));
    CHECK(cudaFreeHost(b));
    static char buf[9000000];
    CHECK(cudaHostRegister(buf, sizeof buf, 0));
    CHECK(cudaHostUnregister(buf));
}
void vt_case_meminfo(void)
{
    size_t f, t;
    CHECK(cudaMemGetInfo(&f, &t));
    printf("meminfo %zu %zu\n", f, t);
}
int vt_case_too_big(void)
{
    void *p;
    return cudaMalloc(&p, (size_t)1 << 45);
}

static int case_basic(void)
{
    vt_case_free(vt_case_malloc());
    vt_case_async();
    vt_case_pool();
    vt_case_managed();
    vt_case_pitch();
    vt_case_host();
    vt_case_meminfo();
    printf("too_big %d\n", vt_case_too_big());
    return 0;
}

/* ---- threads: T threads x N pairs --------------------------------------------------------- */
static long g_pairs;
void *vt_case_thread(void *arg)
{
    (void)arg;
    for (long i = 0; i < g_pairs; i++) {
        void *p;
        CHECK(cudaMalloc(&p, 512 + (size_t)(i & 7) * 512));
        CHECK(cudaFree(p));
    }
    return NULL;
}

static int case_threads(int t, long n)
{
    pthread_t th[64];
    g_pairs = n;
    int started = 0;
    while (started < t && !pthread_create(&th[started], NULL, vt_case_thread, NULL))
        started++;
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return started == t ? 0 : 1;
}

/* ---- fork: the parent allocates; one child allocates, one does not ---------------------- */
static int case_fork(void)
{
    void *p;
    CHECK(cudaMalloc(&p, 1 << 20));
    pid_t a = fork();
    if (a == 0) {
        void *q;
        CHECK(cudaMalloc(&q, 3 << 20));
        CHECK(cudaFree(q));
        _exit(0);
    }
    pid_t b = fork();
    if (b == 0)
        _exit(0); /* never touches CUDA: no file */
    int st;
    waitpid(a, &st, 0);
    waitpid(b, &st, 0);
    printf("children %d %d\n", (int)a, (int)b);
    CHECK(cudaFree(p));
    return 0;
}

/* ---- sleep: N allocations, a line on stdout, then wait to be killed ----------------------- */
static int case_sleep(long n)
{
    for (long i = 0; i < n; i++) {
        void *p;
        CHECK(cudaMalloc(&p, 4096 * (size_t)(i + 1)));
    }
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

/* ---- driver paths: how cudart / PyTorch / Triton reach the driver --------------------------- */
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, int *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*aalloc_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*afree_fn)(CUdeviceptr, CUstream);

static int case_procaddr(void)
{
    void *cudart_init;
    CHECK(cudaMalloc(&cudart_init, 512)); /* the runtime creates the context */
    CHECK(cudaFree(cudart_init));
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "rt_cases: dlopen libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    gpa2_fn gpa = (gpa2_fn)dlsym(h, "cuGetProcAddress_v2");
    int st = 0;
    void *f = NULL;
    CHECK(gpa("cuGetProcAddress", &f, 11030, 0, &st)); /* cudart's re-fetches */
    CHECK(gpa("cuGetProcAddress", &f, 12000, 0, &st));
    gpa = (gpa2_fn)f;
    alloc_fn al;
    free_fn fr;
    aalloc_fn aal;
    afree_fn afr;
    CHECK(gpa("cuMemAlloc", (void **)&al, 12000, 0, &st));
    CHECK(gpa("cuMemFree", (void **)&fr, 12000, 0, &st));
    CHECK(gpa("cuMemAllocAsync", (void **)&aal, 12000,
              CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    CHECK(gpa("cuMemFreeAsync", (void **)&afr, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
              &st));
    for (int i = 0; i < 3; i++) {
        CUdeviceptr d;
        CHECK(al(&d, 2000000 + (size_t)i));
        CHECK(fr(d));
    }
    for (int i = 0; i < 2; i++) {
        CUdeviceptr d;
        CHECK(aal(&d, 3000000 + (size_t)i, NULL));
        CHECK(afr(d, NULL));
    }
    /* a kernel image, the way Triton loads one (the exported driver symbol) */
    typedef CUresult (*load_fn)(CUmodule *, const void *);
    typedef CUresult (*unload_fn)(CUmodule);
    load_fn load = (load_fn)dlsym(RTLD_DEFAULT, "cuModuleLoadData");
    unload_fn unload = (unload_fn)dlsym(RTLD_DEFAULT, "cuModuleUnload");
    static const char ptx[] = "// a PTX module for the test\n.version 8.0\n.target sm_90\n";
    CUmodule mod;
    CHECK(load(&mod, ptx));
    CHECK(unload(mod));
    printf("ptx_bytes %zu\n", sizeof ptx);
    /* RTLD_NEXT identity: from this executable, the next cudaMalloc is the preload's own
     * (the same as the global lookup), not the runtime's */
    void *next = dlsym(RTLD_NEXT, "cudaMalloc"), *dflt = dlsym(RTLD_DEFAULT, "cudaMalloc");
    printf("rtld_next_same %d\n", next == dflt);
    return 0;
}

typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                              unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*afree2_fn)(CUdeviceptr, size_t);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                           unsigned long long);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);

/* vmm: PyTorch's expandable segments: reserve 1.125x the card, create+map 2 MiB and 20 MiB
 * chunks through cudaGetDriverEntryPointByVersion, then unmap+release half of them. */
static int case_vmm(void)
{
    void *p;
    CHECK(cudaMalloc(&p, 512));
    CHECK(cudaFree(p));
    create_fn create;
    release_fn release;
    reserve_fn reserve;
    afree2_fn addrfree;
    map_fn map;
    unmap_fn unmap;
    int st;
    CHECK(cudaGetDriverEntryPointByVersion("cuMemCreate", (void **)&create, 12030, 0, &st));
    CHECK(cudaGetDriverEntryPointByVersion("cuMemRelease", (void **)&release, 12030, 0, &st));
    CHECK(
        cudaGetDriverEntryPointByVersion("cuMemAddressReserve", (void **)&reserve, 12030, 0, &st));
    CHECK(cudaGetDriverEntryPointByVersion("cuMemAddressFree", (void **)&addrfree, 12030, 0, &st));
    CHECK(cudaGetDriverEntryPointByVersion("cuMemMap", (void **)&map, 12030, 0, &st));
    CHECK(cudaGetDriverEntryPointByVersion("cuMemUnmap", (void **)&unmap, 12030, 0, &st));
    size_t card = (size_t)16 << 30, va_size = card + card / 8;
    CUdeviceptr va;
    CHECK(reserve(&va, va_size, 0, 0, 0));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle hs[8];
    size_t sizes[8], off = 0;
    for (int i = 0; i < 8; i++) {
        sizes[i] = (i & 1 ? (size_t)20 : 2) << 20;
        CHECK(create(&hs[i], sizes[i], &prop, 0));
        CHECK(map(va + off, sizes[i], 0, hs[i], 0));
        off += sizes[i];
    }
    off = 0;
    for (int i = 0; i < 4; i++) {
        CHECK(unmap(va + off, sizes[i]));
        CHECK(release(hs[i]));
        off += sizes[i];
    }
    printf("vmm live %zu\n", (size_t)(2 + 20) * 2 << 20);
    return 0;
}

/* card: allocate 100 MiB chunks until the emulated card says no; print what was seen. */
static int case_card(void)
{
    size_t f, t;
    CHECK(cudaMemGetInfo(&f, &t));
    int n = 0, rc = 0;
    void *p[1000];
    while (n < 1000 && (rc = cudaMalloc(&p[n], 100u << 20)) == 0)
        n++;
    printf("total %zu first_free %zu chunks %d rc %d\n", t, f, n, rc);
    for (int i = 0; i < n; i++)
        CHECK(cudaFree(p[i]));
    return 0;
}

/* ---- devices: an allocation on each of two devices (FAKECUDA_DEVICES=2): the hook asks the
 * thread's current device, which cudaSetDevice changed -------------------------------------- */
static int case_devices(void)
{
    void *a, *b;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&a, 1u << 20));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&b, 3u << 20));
    CHECK(cudaFree(b));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(a));
    return 0;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "basic"))
        return case_basic();
    if (!strcmp(c, "threads") && argc > 3)
        return case_threads(atoi(argv[2]), atol(argv[3]));
    if (!strcmp(c, "fork"))
        return case_fork();
    if (!strcmp(c, "sleep") && argc > 2)
        return case_sleep(atol(argv[2]));
    if (!strcmp(c, "procaddr"))
        return case_procaddr();
    if (!strcmp(c, "vmm"))
        return case_vmm();
    if (!strcmp(c, "card"))
        return case_card();
    if (!strcmp(c, "devices"))
        return case_devices();
    if (!strcmp(c, "exit") && argc > 2)
        return atoi(argv[2]);
    fprintf(stderr,
            "usage: rt_cases basic|threads T N|fork|sleep N|procaddr|vmm|card|devices|exit CODE\n");
    return 2;
}
