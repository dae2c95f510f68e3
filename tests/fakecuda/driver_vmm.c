/* driver_vmm.c — the fake driver's virtual memory management (cuMemCreate / cuMemMap ...).
 * Physical bytes are charged at cuMemCreate and returned when the last reference (handles and
 * mappings) is gone; reserved address ranges cost nothing. Shareable handles are eventfds;
 * an exported allocation stays alive until exit (the fake cannot see the fd being closed). */
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "driver_internal.h"

/* A physical allocation: referenced by handles and by mappings. */
struct phys {
    int dev;
    uint64_t size;
    int refs;
};

/* A handle value the caller holds; `refs` counts cuMemCreate/Retain/Import minus Release. */
struct handle {
    uint64_t id;
    struct phys *ph;
    int refs;
};

/* A live mapping [addr, addr+size) -> ph (it holds one ref on ph). */
struct mapping {
    uint64_t addr, size;
    struct phys *ph;
};

/* An exported shareable handle (fd) -> physical allocation (holds one ref on ph). */
struct export
{
    int fd;
    struct phys *ph;
};

static struct handle *g_handles;
static size_t g_nhandles, g_caphandles;
static struct mapping *g_maps;
static size_t g_nmaps, g_capmaps;
static struct export *g_exports;
static size_t g_nexports, g_capexports;
static uint64_t g_next_id = 0x1000;

/* grow: ensures room for one more element in a dynamic array; 0 or -1. */
static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 32;
    void *nv = realloc(*v, nc * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = nc;
    return 0;
}

/* phys_unref: drops one reference; frees the bytes and the object at zero. Lock held. */
static void phys_unref(struct phys *ph)
{
    if (--ph->refs == 0) {
        fk_uncharge(ph->dev, ph->size);
        fk_log("vmm: physical %llu bytes on dev %d released", (unsigned long long)ph->size,
               ph->dev);
        free(ph);
    }
}

static long handle_find(uint64_t id)
{
    for (size_t i = 0; i < g_nhandles; i++)
        if (g_handles[i].id == id)
            return (long)i;
    return -1;
}

/* handle_new: a new handle on ph (takes one ref on ph); 0 on allocation failure. Lock held. */
static uint64_t handle_new(struct phys *ph)
{
    if (grow((void **)&g_handles, &g_caphandles, g_nhandles, sizeof *g_handles))
        return 0;
    g_handles[g_nhandles++] = (struct handle){g_next_id++, ph, 1};
    ph->refs++;
    return g_handles[g_nhandles - 1].id;
}

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, int option)
{
    (void)option;
    if (!g || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    *g = FK_GRANULARITY;
    return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!h || !prop || flags != 0 || size == 0 || size % FK_GRANULARITY ||
        prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    int d = prop->location.id;
    if (d < 0 || d >= fk_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE &&
        prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct phys *ph = malloc(sizeof *ph);
    if (!ph)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ph = (struct phys){d, size, 0};
    fk_lock();
    r = fk_charge(d, size);
    uint64_t id = 0;
    if (r == CUDA_SUCCESS && (id = handle_new(ph)) == 0) {
        fk_uncharge(d, size);
        r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    fk_unlock();
    if (r) {
        free(ph);
        return r;
    }
    *h = id;
    fk_log("cuMemCreate dev=%d size=%llu -> handle %#llx", d, (unsigned long long)size,
           (unsigned long long)id);
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    fk_lock();
    long i = handle_find(h);
    if (i < 0) {
        fk_unlock();
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (--g_handles[i].refs == 0) {
        struct phys *ph = g_handles[i].ph;
        g_handles[i] = g_handles[--g_nhandles];
        phys_unref(ph);
    }
    fk_unlock();
    return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr want,
                             unsigned long long flags)
{
    (void)flags;
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!ptr || size == 0 || size % FK_GRANULARITY || (align & (align - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    if (align < FK_GRANULARITY)
        align = FK_GRANULARITY;
    int d = fk_current_dev();
    if (d < 0)
        d = 0; /* VA is process-wide; place it in device 0's range */
    fk_lock();
    struct fk_space *s = &fk_drv.dev[d].space;
    uint64_t a = 0;
    if (want)
        a = fk_space_alloc(s, size, align, want, FK_RESERVE, 0);
    if (!a)
        a = fk_space_alloc(s, size, align, 0, FK_RESERVE, 0);
    fk_unlock();
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ptr = a;
    fk_log("cuMemAddressReserve %llu -> %#llx", (unsigned long long)size, (unsigned long long)a);
    return CUDA_SUCCESS;
}

/* reserve_find: the reserved range containing all of [addr, addr+size), or NULL. */
static struct fk_range *reserve_find(uint64_t addr, uint64_t size, struct fk_space **sp)
{
    int d = fk_dev_of_addr(addr);
    if (d < 0)
        return NULL;
    struct fk_space *s = &fk_drv.dev[d].space;
    struct fk_range *r = fk_space_find_containing(s, addr);
    if (!r || r->kind != FK_RESERVE || size > r->size - (addr - r->addr))
        return NULL;
    *sp = s;
    return r;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    fk_lock();
    struct fk_space *s = NULL;
    struct fk_range *rg = reserve_find(ptr, size, &s);
    r = CUDA_ERROR_INVALID_VALUE;
    if (rg && rg->addr == ptr && rg->size == size) {
        for (size_t m = 0; m < g_nmaps; m++) /* still mapped inside: refuse */
            if (g_maps[m].addr >= ptr && g_maps[m].addr < ptr + size)
                goto out;
        fk_space_remove(s, rg);
        r = CUDA_SUCCESS;
    }
out:
    fk_unlock();
    return r;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                  unsigned long long flags)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (flags != 0 || size == 0 || size % FK_GRANULARITY || ptr % FK_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    fk_lock();
    struct fk_space *s = NULL;
    long hi = handle_find(h);
    r = CUDA_ERROR_INVALID_VALUE;
    if (hi < 0 || !reserve_find(ptr, size, &s) || offset + size > g_handles[hi].ph->size)
        goto out;
    for (size_t m = 0; m < g_nmaps; m++)
        if (g_maps[m].addr < ptr + size && ptr < g_maps[m].addr + g_maps[m].size) {
            r = FK_ERR_ALREADY_MAPPED;
            goto out;
        }
    if (grow((void **)&g_maps, &g_capmaps, g_nmaps, sizeof *g_maps)) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    g_maps[g_nmaps++] = (struct mapping){ptr, size, g_handles[hi].ph};
    g_handles[hi].ph->refs++;
    r = CUDA_SUCCESS;
out:
    fk_unlock();
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    fk_lock();
    int found = 0;
    for (size_t m = 0; m < g_nmaps;) { /* every mapping inside [ptr, ptr+size) goes */
        if (g_maps[m].addr >= ptr && g_maps[m].addr + g_maps[m].size <= ptr + size) {
            struct phys *ph = g_maps[m].ph;
            g_maps[m] = g_maps[--g_nmaps];
            phys_unref(ph);
            found = 1;
        } else {
            m++;
        }
    }
    fk_unlock();
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!desc || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    fk_lock();
    uint64_t covered = 0;
    for (size_t m = 0; m < g_nmaps; m++)
        if (g_maps[m].addr >= ptr && g_maps[m].addr + g_maps[m].size <= ptr + size)
            covered += g_maps[m].size;
    fk_unlock();
    return covered == size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!h)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t a = (uint64_t)(uintptr_t)addr;
    fk_lock();
    r = CUDA_ERROR_INVALID_VALUE;
    for (size_t m = 0; m < g_nmaps; m++) {
        if (a < g_maps[m].addr || a >= g_maps[m].addr + g_maps[m].size)
            continue;
        struct phys *ph = g_maps[m].ph;
        for (size_t i = 0; i < g_nhandles; i++)
            if (g_handles[i].ph == ph) {
                g_handles[i].refs++;
                *h = g_handles[i].id;
                r = CUDA_SUCCESS;
                goto out;
            }
        uint64_t id = handle_new(ph); /* original handle already released */
        r = id ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        if (id)
            *h = id;
        goto out;
    }
out:
    fk_unlock();
    return r;
}

CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h, int type,
                                      unsigned long long flags)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!out || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    fk_lock();
    long i = handle_find(h);
    r = CUDA_ERROR_INVALID_VALUE;
    if (i >= 0 && !grow((void **)&g_exports, &g_capexports, g_nexports, sizeof *g_exports)) {
        int fd = eventfd(0, EFD_CLOEXEC);
        if (fd >= 0) {
            g_exports[g_nexports++] = (struct export){fd, g_handles[i].ph};
            g_handles[i].ph->refs++;
            *(int *)out = fd;
            r = CUDA_SUCCESS;
        } else {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    fk_unlock();
    return r;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os_handle, int type)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!h)
        return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    int fd = (int)(intptr_t)os_handle;
    fk_lock();
    r = CUDA_ERROR_INVALID_VALUE; /* an fd from another process is not known here */
    for (size_t i = 0; i < g_nexports; i++)
        if (g_exports[i].fd == fd) {
            uint64_t id = handle_new(g_exports[i].ph);
            r = id ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
            if (id)
                *h = id;
            break;
        }
    fk_unlock();
    return r;
}
