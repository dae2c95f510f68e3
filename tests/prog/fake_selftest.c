/* fake_selftest.c — checks the project's fake CUDA runtime (build/fakecuda) on its own,
 * without the preload: capacity and OOM, address reuse, cudaMemGetInfo arithmetic, async
 * allocation, last-error state, several devices, threads, fork (driver-side checks:
 * fake_drvtest.c). usage: fake_selftest SECTION [ARGS] (fake_selftest.sh sets FAKECUDA_*). */
#include "fake_check.h"

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
    int started = 0;
    while (started < NTHREADS && !pthread_create(&tid[started], NULL, thread_body, NULL))
        started++;
    CHECK_EQ(started, NTHREADS);
    for (int i = 0; i < started; i++) {
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
    else if (!strcmp(s, "lasterror"))
        t_lasterror();
    else if (!strcmp(s, "devices"))
        t_devices();
    else if (!strcmp(s, "threads"))
        t_threads();
    else if (!strcmp(s, "nodevice"))
        t_nodevice();
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
