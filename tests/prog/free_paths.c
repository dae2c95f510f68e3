/* free_paths.c — every free path of every API, and the emulated card's edge on the driver path,
 * for tests/integration/free_paths.sh (run with FAKECUDA_NO_REUSE=1, so a free the tracer misses
 * cannot hide behind a later allocation at the same address). usage: free_paths frees | edge */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../preload/cuda_abi.h"

cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fp, unsigned ver,
                                             unsigned long long flags, int *status);

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*aalloc_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*afree_fn)(CUdeviceptr, CUstream);
typedef CUresult (*info_fn)(size_t *, size_t *);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                              unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                           unsigned long long);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);

static struct {
    alloc_fn alloc;
    free_fn free;
    aalloc_fn aalloc;
    afree_fn afree;
    info_fn info;
    create_fn create;
    release_fn release;
    reserve_fn reserve;
    map_fn map;
    unmap_fn unmap;
} drv;

#define CHECK(what, x)                                                                             \
    do {                                                                                           \
        int rc_ = (int)(x);                                                                        \
        if (rc_) {                                                                                 \
            printf("failed %s: %s = %d\n", what, #x, rc_);                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void get(const char *name, void **fp)
{
    int st = 0;
    CHECK(name, cudaGetDriverEntryPointByVersion(name, fp, 12030, 0, &st));
}

static void load_driver(void)
{
    get("cuMemAlloc", (void **)&drv.alloc);
    get("cuMemFree", (void **)&drv.free);
    get("cuMemAllocAsync", (void **)&drv.aalloc);
    get("cuMemFreeAsync", (void **)&drv.afree);
    get("cuMemGetInfo", (void **)&drv.info);
    get("cuMemCreate", (void **)&drv.create);
    get("cuMemRelease", (void **)&drv.release);
    get("cuMemAddressReserve", (void **)&drv.reserve);
    get("cuMemMap", (void **)&drv.map);
    get("cuMemUnmap", (void **)&drv.unmap);
}

static CUmemAllocationProp prop(void)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    return p;
}

#define MiB ((size_t)1 << 20)

/* frees: per API, allocate, free, allocate again and keep: what stays live is one allocation per
 * API (64 + 66 + 68 + 70 + 72 MiB = 340 MiB beside the context); a free that was missed leaves
 * its block live twice (the peak grows by that block; on a card of exactly the right size, the
 * second allocation fails). Everything is freed at the end. */
static int case_frees(void)
{
    void *rt[2], *ra[2];
    CUdeviceptr da[2], dd[2], va;
    CUmemGenericAllocationHandle h[2];
    CUmemAllocationProp pr = prop();
    for (int i = 0; i < 2; i++) { /* the runtime: cudaMalloc / cudaFree */
        CHECK("cudaMalloc", cudaMalloc(&rt[i], 64 * MiB));
        if (!i)
            CHECK("cudaFree", cudaFree(rt[i]));
    }
    for (int i = 0; i < 2; i++) { /* the runtime's stream-ordered path */
        CHECK("cudaMallocAsync", cudaMallocAsync(&ra[i], 66 * MiB, NULL));
        if (!i)
            CHECK("cudaFreeAsync", cudaFreeAsync(ra[i], NULL));
    }
    load_driver();
    for (int i = 0; i < 2; i++) { /* the driver: cuMemAlloc / cuMemFree */
        CHECK("cuMemAlloc", drv.alloc(&dd[i], 68 * MiB));
        if (!i)
            CHECK("cuMemFree", drv.free(dd[i]));
    }
    for (int i = 0; i < 2; i++) { /* the driver's stream-ordered path */
        CHECK("cuMemAllocAsync", drv.aalloc(&da[i], 70 * MiB, NULL));
        if (!i)
            CHECK("cuMemFreeAsync", drv.afree(da[i], NULL));
    }
    CHECK("cuMemAddressReserve", drv.reserve(&va, 144 * MiB, 0, 0, 0));
    for (int i = 0; i < 2; i++) { /* virtual memory: create + map, unmap + release */
        CHECK("cuMemCreate", drv.create(&h[i], 72 * MiB, &pr, 0));
        CHECK("cuMemMap", drv.map(va + (CUdeviceptr)i * 72 * MiB, 72 * MiB, 0, h[i], 0));
        if (!i) {
            CHECK("cuMemUnmap", drv.unmap(va, 72 * MiB));
            CHECK("cuMemRelease", drv.release(h[i]));
        }
    }
    printf("all allocated\n");
    CHECK("cudaFree", cudaFree(rt[1]));
    CHECK("cudaFreeAsync", cudaFreeAsync(ra[1], NULL));
    CHECK("cuMemFree", drv.free(dd[1]));
    CHECK("cuMemFreeAsync", drv.afree(da[1], NULL));
    CHECK("cuMemUnmap", drv.unmap(va + 72 * MiB, 72 * MiB));
    CHECK("cuMemRelease", drv.release(h[1]));
    printf("all freed\n");
    return 0;
}

/* edge: the card's edge on the driver path, to the byte: what cuMemGetInfo says is free fits
 * exactly (cuMemAlloc and cuMemCreate), one byte more does not, nor does one more allocation
 * once it is all taken. Prints "NAME rc" per call; the test holds them to the card's size. */
static int case_edge(void)
{
    void *p;
    CHECK("cudaMalloc", cudaMalloc(&p, 2 * MiB)); /* the context, then one 2 MiB block */
    CHECK("cudaFree", cudaFree(p));
    load_driver();
    size_t f = 0, t = 0;
    CHECK("cuMemGetInfo", drv.info(&f, &t));
    printf("free %zu total %zu\n", f, t);
    CUdeviceptr d, e;
    printf("alloc_free_plus_1 %d\n", (int)drv.alloc(&d, f + 1));
    CHECK("cuMemAlloc(free)", drv.alloc(&d, f));
    printf("alloc_free 0\n");
    printf("alloc_1_more %d\n", (int)drv.alloc(&e, 1));
    CHECK("cuMemFree", drv.free(d));
    CUmemAllocationProp pr = prop();
    CUmemGenericAllocationHandle h, h2;
    printf("create_free_plus_2mib %d\n", (int)drv.create(&h, f + 2 * MiB, &pr, 0));
    CHECK("cuMemCreate(free)", drv.create(&h, f, &pr, 0));
    printf("create_free 0\n");
    printf("create_2mib_more %d\n", (int)drv.create(&h2, 2 * MiB, &pr, 0));
    CHECK("cuMemRelease", drv.release(h));
    CHECK("cuMemAlloc(free) again", drv.alloc(&d, f));
    printf("alloc_free_again 0\n");
    CHECK("cuMemFree", drv.free(d));
    return 0;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "frees"))
        return case_frees();
    if (!strcmp(c, "edge"))
        return case_edge();
    fprintf(stderr, "usage: free_paths frees|edge\n");
    return 2;
}
