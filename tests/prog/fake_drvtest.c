/* fake_drvtest.c — checks the fake CUDA driver (build/fakecuda/libcuda.so.1) on its own,
 * without the preload: cuGetProcAddress variants, VMM accounting, module memory, and that the
 * fakes' internal calls never reach a preloaded shim. usage: fake_drvtest SECTION [ARG]
 * (fake_selftest.sh sets the FAKECUDA_* environment each section expects). */
#include "fake_check.h"

typedef CUresult (*gpa_v2_t)(const char *, void **, int, cuuint64_t,
                             CUdriverProcAddressQueryResult *);
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
    CHECK(query("cuMemAllocFromPoolAsync", 12000, 2, &r, &st) ==
          drv("cuMemAllocFromPoolAsync_ptsz"));
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
    CHECK_EQ(cudaGetDriverEntryPoint("cuMemAllocAsync", &p, cudaEnablePerThreadDefaultStream, &rs),
             0);
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
    CUresult (*gran)(size_t *, const CUmemAllocationProp *, int) =
        drv("cuMemGetAllocationGranularity");
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long) = drv("cuMemCreate");
    CUresult (*release)(CUmemGenericAllocationHandle) = drv("cuMemRelease");
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) =
        drv("cuMemAddressReserve");
    CUresult (*vafree)(CUdeviceptr, size_t) = drv("cuMemAddressFree");
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) =
        drv("cuMemMap");
    CUresult (*unmap)(CUdeviceptr, size_t) = drv("cuMemUnmap");
    CUresult (*access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t) =
        drv("cuMemSetAccess");
    CUresult (*retain)(CUmemGenericAllocationHandle *, void *) = drv("cuMemRetainAllocationHandle");
    CUresult (*exporth)(void *, CUmemGenericAllocationHandle, int, unsigned long long) =
        drv("cuMemExportToShareableHandle");
    CUresult (*importh)(CUmemGenericAllocationHandle *, void *, int) =
        drv("cuMemImportFromShareableHandle");

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
    CUresult (*load_ex)(CUmodule *, const void *, unsigned, CUjit_option *, void **) =
        drv("cuModuleLoadDataEx");
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

/* Run with LD_PRELOAD of a shim whose cuMemHostAlloc, cuModuleLoadData, cuMemAlloc_v2,
 * cuMemFreeAsync, cudaGetDriverEntryPointByVersion, cudaStreamCreateWithFlags and cudaMemcpy
 * all return 999: the fakes' own internal calls and the runtime's driver calls must not reach
 * them (internal calls bind locally; the runtime uses cuGetProcAddress pointers only). */
static void t_interpose(void)
{
    typedef int (*shim_fn)(void);
    const char *shimmed[] = {"cuMemHostAlloc",
                             "cuModuleLoadData",
                             "cuMemAlloc_v2",
                             "cuMemFreeAsync",
                             "cudaGetDriverEntryPointByVersion",
                             "cudaStreamCreateWithFlags",
                             "cudaMemcpy"};
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
    CUresult (*load_ex)(CUmodule *, const void *, unsigned, CUjit_option *, void **) =
        drv("cuModuleLoadDataEx");
    CUresult (*unload)(CUmodule) = drv("cuModuleUnload");
    CUmodule m = NULL;
    CHECK_EQ(load_ex(&m, "ptx", 0, NULL, NULL), 0);
    CHECK_EQ(unload(m), 0);
    CUresult (*free_async_ptsz)(CUdeviceptr, CUstream) = drv("cuMemFreeAsync_ptsz");
    CHECK_EQ(cudaMallocAsync(&p, 512, NULL), 0);
    CHECK_EQ(free_async_ptsz((CUdeviceptr)(uintptr_t)p, NULL), 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fake_drvtest SECTION [ARG]\n");
        return 2;
    }
    const char *s = argv[1];
    if (!strcmp(s, "procaddr"))
        t_procaddr();
    else if (!strcmp(s, "vmm"))
        t_vmm();
    else if (!strcmp(s, "modules") && argc > 2)
        t_modules(argv[2]);
    else if (!strcmp(s, "interpose"))
        t_interpose();
    else {
        fprintf(stderr, "fake_drvtest: unknown section '%s'\n", s);
        return 2;
    }
    if (g_fail) {
        fprintf(stderr, "fake_drvtest %s: %d check(s) failed\n", s, g_fail);
        return 1;
    }
    printf("fake_drvtest %s: ok\n", s);
    return 0;
}
