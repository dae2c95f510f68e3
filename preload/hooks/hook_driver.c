/* hook_driver.c — the watched CUDA driver functions: one wrapper per (function, variant),
 * exported under the driver's own names (for programs that link libcuda directly, e.g.
 * Triton) and handed out in place of the real pointers by cuGetProcAddress /
 * cudaGetDriverEntryPoint* / dlsym (hook_procaddr.c, hook_dlsym.c). Each wrapper: guard,
 * card check, real call, one record. The list is VT_DRIVER_FUNCS below. */
#include <elf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core.h"
#include "cuda_abi.h"
#include "driver_table.h"

/* g_real[i]: the real pointer behind wrapper i (set by cuGetProcAddress, or resolved from
 * libcuda's export of the same name on first call). */
static _Atomic(void *) g_real[VT_DRV_COUNT];

static const char *const g_names[VT_DRV_COUNT] = {
#define VT_DRV_NAME(name, api, ret, params, args) #name,
    VT_DRIVER_FUNCS(VT_DRV_NAME)
#undef VT_DRV_NAME
};

static void *real_of(int i)
{
    void *p = atomic_load_explicit(&g_real[i], memory_order_acquire);
    if (VT__UNLIKELY(!p)) {
        p = vt__driver_sym(g_names[i]);
        atomic_store_explicit(&g_real[i], p, memory_order_release);
    }
    return p;
}

#define REAL(name) ((name##_fn)real_of(VT_DRV_##name))
#define REAL_OR_FAIL(name)              \
    name##_fn real = REAL(name);        \
    if (VT__UNLIKELY(!real))            \
        return CUDA_ERROR_NOT_INITIALIZED;

static int card_on(void)
{
    return vt__card_enabled();
}

static int dev_or_current(int d)
{
    return d >= 0 ? d : vt__current_device();
}

/* alloc_begin: 1 = record this call; *refuse = the emulated card has no room for size. */
static int alloc_begin(int device_space, int *dev, uint64_t size, int *refuse)
{
    int rec = vt__enter();
    *refuse = 0;
    if (rec && device_space && card_on()) {
        *dev = dev_or_current(*dev);
        *refuse = !vt__card_admit(*dev < 0 ? 0 : *dev, size);
    }
    return rec;
}

/* alloc_end: commits to the card, records the ALLOC, leaves the guard. */
static void alloc_end(int rec, uint16_t api, int space, int dev, uint64_t addr, uint64_t size,
                      uint64_t stream, CUresult r, int refuse, int has_aux, uint64_t aux)
{
    if (rec) {
        dev = dev_or_current(dev);
        if (r == CUDA_SUCCESS && space && card_on())
            vt__card_commit(dev < 0 ? 0 : dev, space, addr, size);
        vt__event ev = {api, refuse ? VT_EVF_EMULATED : 0, dev, r == CUDA_SUCCESS ? addr : 0, size,
                        stream, r, has_aux, aux};
        vt__record_alloc(&ev);
    }
    vt__leave();
}

static void free_end(int rec, uint16_t api, int space, uint64_t addr, uint64_t stream, CUresult r)
{
    if (rec) {
        if (r == CUDA_SUCCESS && space && card_on())
            vt__card_release(space, addr);
        vt__event ev = {api, 0, -1, addr, 0, stream, r, 0, 0};
        vt__record_free(&ev);
    }
    vt__leave();
}

/* ---- linear and async allocations ------------------------------------------------------- */
VT__EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    REAL_OR_FAIL(cuMemAlloc_v2);
    int dev = -1, refuse;
    int rec = alloc_begin(1, &dev, n, &refuse);
    CUresult r = refuse ? CUDA_ERROR_OUT_OF_MEMORY : real(p, n);
    alloc_end(rec, VT_API_cuMemAlloc, VT_SPACE_DEVICE, dev, p ? *p : 0, n, 0, r, refuse, 0, 0);
    return r;
}

VT__EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    REAL_OR_FAIL(cuMemFree_v2);
    int rec = vt__enter();
    CUresult r = real(p);
    free_end(rec && p, VT_API_cuMemFree, VT_SPACE_DEVICE, p, 0, r);
    return r;
}

VT__EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned e)
{
    REAL_OR_FAIL(cuMemAllocPitch_v2);
    int dev = -1, refuse;
    int rec = alloc_begin(1, &dev, (uint64_t)w * h, &refuse);
    CUresult r = refuse ? CUDA_ERROR_OUT_OF_MEMORY : real(p, pitch, w, h, e);
    uint64_t size = r == CUDA_SUCCESS && pitch ? (uint64_t)*pitch * h : (uint64_t)w * h;
    alloc_end(rec, VT_API_cuMemAllocPitch, VT_SPACE_DEVICE, dev, p ? *p : 0, size, 0, r, refuse, 0, 0);
    return r;
}

VT__EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cuMemAllocManaged);
    int dev = -1, refuse;
    int rec = alloc_begin(1, &dev, n, &refuse);
    CUresult r = refuse ? CUDA_ERROR_OUT_OF_MEMORY : real(p, n, flags);
    alloc_end(rec, VT_API_cuMemAllocManaged, VT_SPACE_MANAGED, dev, p ? *p : 0, n, 0, r, refuse, 0, 0);
    return r;
}

#define ASYNC_ALLOC(wrapper, realname)                                                            \
    VT__EXPORT CUresult wrapper(CUdeviceptr *p, size_t n, CUstream s)                             \
    {                                                                                             \
        REAL_OR_FAIL(realname);                                                                   \
        int dev = -1, refuse;                                                                     \
        int rec = alloc_begin(1, &dev, n, &refuse);                                               \
        CUresult r = refuse ? CUDA_ERROR_OUT_OF_MEMORY : real(p, n, s);                           \
        alloc_end(rec, VT_API_cuMemAllocAsync, VT_SPACE_DEVICE, dev, p ? *p : 0, n,               \
                  (uint64_t)(uintptr_t)s, r, refuse, 0, 0);                                       \
        return r;                                                                                 \
    }
ASYNC_ALLOC(cuMemAllocAsync, cuMemAllocAsync)
ASYNC_ALLOC(cuMemAllocAsync_ptsz, cuMemAllocAsync_ptsz)

#define ASYNC_FREE(wrapper, realname)                                                             \
    VT__EXPORT CUresult wrapper(CUdeviceptr p, CUstream s)                                        \
    {                                                                                             \
        REAL_OR_FAIL(realname);                                                                   \
        int rec = vt__enter();                                                                    \
        CUresult r = real(p, s);                                                                  \
        free_end(rec && p, VT_API_cuMemFreeAsync, VT_SPACE_DEVICE, p, (uint64_t)(uintptr_t)s, r); \
        return r;                                                                                 \
    }
ASYNC_FREE(cuMemFreeAsync, cuMemFreeAsync)
ASYNC_FREE(cuMemFreeAsync_ptsz, cuMemFreeAsync_ptsz)

#define POOL_ALLOC(wrapper, realname)                                                             \
    VT__EXPORT CUresult wrapper(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)          \
    {                                                                                             \
        REAL_OR_FAIL(realname);                                                                   \
        int dev = -1, refuse;                                                                     \
        int rec = alloc_begin(1, &dev, n, &refuse);                                               \
        CUresult r = refuse ? CUDA_ERROR_OUT_OF_MEMORY : real(p, n, pool, s);                     \
        alloc_end(rec, VT_API_cuMemAllocFromPoolAsync, VT_SPACE_DEVICE, dev, p ? *p : 0, n,       \
                  (uint64_t)(uintptr_t)s, r, refuse, 0, 0);                                       \
        return r;                                                                                 \
    }
POOL_ALLOC(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync)
POOL_ALLOC(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz)

VT__EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    REAL_OR_FAIL(cuMemPoolTrimTo);
    int rec = vt__enter();
    CUresult r = real(pool, keep);
    alloc_end(rec, VT_API_cuMemPoolTrimTo, 0, -1, (uint64_t)(uintptr_t)pool, keep, 0, r, 0, 0, 0);
    return r;
}

/* ---- virtual memory management (expandable segments) -------------------------------------- */
VT__EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n,
                                const CUmemAllocationProp *prop, unsigned long long flags)
{
    REAL_OR_FAIL(cuMemCreate);
    int dev = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
    int refuse;
    int rec = alloc_begin(1, &dev, n, &refuse);
    CUresult r = refuse ? CUDA_ERROR_OUT_OF_MEMORY : real(h, n, prop, flags);
    /* a failed probe of handle types is not an event; a refused one (emulation) and OOM are */
    if (rec && r != CUDA_SUCCESS && !refuse && r != CUDA_ERROR_OUT_OF_MEMORY)
        rec = 0;
    alloc_end(rec, VT_API_cuMemCreate, VT_SPACE_VMM_HANDLE, dev, h ? *h : 0, n, 0, r, refuse, 0, 0);
    return r;
}

VT__EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    REAL_OR_FAIL(cuMemRelease);
    int rec = vt__enter();
    CUresult r = real(h);
    free_end(rec, VT_API_cuMemRelease, VT_SPACE_VMM_HANDLE, h, 0, r);
    return r;
}

VT__EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
    REAL_OR_FAIL(cuMemRetainAllocationHandle);
    int rec = vt__enter();
    CUresult r = real(h, addr);
    alloc_end(rec, VT_API_cuMemRetainAllocationHandle, 0, -1, h ? *h : 0, 0, 0, r, 0, 1,
              (uint64_t)(uintptr_t)addr);
    return r;
}

VT__EXPORT CUresult cuMemMap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h,
                             unsigned long long flags)
{
    REAL_OR_FAIL(cuMemMap);
    int rec = vt__enter();
    CUresult r = real(p, n, off, h, flags);
    alloc_end(rec, VT_API_cuMemMap, 0, -1, p, n, 0, r, 0, 1, h);
    return r;
}

VT__EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t n)
{
    REAL_OR_FAIL(cuMemUnmap);
    int rec = vt__enter();
    CUresult r = real(p, n);
    free_end(rec, VT_API_cuMemUnmap, 0, p, 0, r);
    return r;
}

VT__EXPORT CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
                                        unsigned long long flags)
{
    REAL_OR_FAIL(cuMemAddressReserve);
    int rec = vt__enter();
    CUresult r = real(p, n, align, addr, flags);
    alloc_end(rec, VT_API_cuMemAddressReserve, 0, -1, p ? *p : 0, n, 0, r, 0, 1, addr);
    return r;
}

VT__EXPORT CUresult cuMemAddressFree(CUdeviceptr p, size_t n)
{
    REAL_OR_FAIL(cuMemAddressFree);
    int rec = vt__enter();
    CUresult r = real(p, n);
    free_end(rec, VT_API_cuMemAddressFree, 0, p, 0, r);
    return r;
}

VT__EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                                   CUmemAllocationHandleType t)
{
    REAL_OR_FAIL(cuMemImportFromShareableHandle);
    int rec = vt__enter();
    CUresult r = real(h, os, t);
    alloc_end(rec, VT_API_cuMemImportFromShareableHandle, 0, -1, h ? *h : 0, 0, 0, r, 0, 0, 0);
    return r;
}

/* ---- kernel images -------------------------------------------------------------------------
 * image_size: bytes of an in-memory module image when they can be told: an ELF cubin
 * (section headers end the file), a fatbin (header magic + size), else PTX text. */
static uint64_t image_size(const void *image)
{
    if (!image)
        return 0;
    const unsigned char *b = image;
    if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F' && b[4] == ELFCLASS64) {
        const Elf64_Ehdr *e = image;
        uint64_t sh = e->e_shoff + (uint64_t)e->e_shnum * e->e_shentsize;
        uint64_t ph = e->e_phoff + (uint64_t)e->e_phnum * e->e_phentsize;
        return sh > ph ? sh : ph;
    }
    uint32_t magic;
    memcpy(&magic, b, 4);
    if (magic == 0xBA55ED50u) { /* fatbin: u32 magic, u16 version, u16 header size, u64 size */
        uint16_t hdr;
        uint64_t size;
        memcpy(&hdr, b + 6, 2);
        memcpy(&size, b + 8, 8);
        return (uint64_t)hdr + size;
    }
    if (magic == 0x466243b1u) { /* fatbin wrapper: {magic, version, data*, filename*} */
        const void *const *w = (const void *const *)(b + 8);
        return *w && *w != image ? image_size(*w) : 0;
    }
    return strnlen((const char *)image, 64u << 20) + 1; /* PTX */
}

static void load_end(int rec, uint16_t api, uint64_t handle, uint64_t size, CUresult r)
{
    alloc_end(rec, api, VT_SPACE_MODULE, -1, handle, size, 0, r, 0, 0, 0);
}

VT__EXPORT CUresult cuModuleLoad(CUmodule *m, const char *fname)
{
    REAL_OR_FAIL(cuModuleLoad);
    int rec = vt__enter();
    CUresult r = real(m, fname);
    load_end(rec, VT_API_cuModuleLoad, m ? (uint64_t)(uintptr_t)*m : 0, 0, r);
    return r;
}

VT__EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    REAL_OR_FAIL(cuModuleLoadData);
    int rec = vt__enter();
    CUresult r = real(m, image);
    load_end(rec, VT_API_cuModuleLoadData, m ? (uint64_t)(uintptr_t)*m : 0, rec ? image_size(image) : 0, r);
    return r;
}

VT__EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
    REAL_OR_FAIL(cuModuleLoadDataEx);
    int rec = vt__enter();
    CUresult r = real(m, image, n, o, v);
    load_end(rec, VT_API_cuModuleLoadDataEx, m ? (uint64_t)(uintptr_t)*m : 0, rec ? image_size(image) : 0, r);
    return r;
}

VT__EXPORT CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fat)
{
    REAL_OR_FAIL(cuModuleLoadFatBinary);
    int rec = vt__enter();
    CUresult r = real(m, fat);
    load_end(rec, VT_API_cuModuleLoadFatBinary, m ? (uint64_t)(uintptr_t)*m : 0, rec ? image_size(fat) : 0, r);
    return r;
}

VT__EXPORT CUresult cuModuleUnload(CUmodule m)
{
    REAL_OR_FAIL(cuModuleUnload);
    int rec = vt__enter();
    CUresult r = real(m);
    free_end(rec, VT_API_cuModuleUnload, VT_SPACE_MODULE, (uint64_t)(uintptr_t)m, 0, r);
    return r;
}

VT__EXPORT CUresult cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *jo, void **jv,
                                      unsigned jn, CUlibraryOption *lo, void **lv, unsigned ln)
{
    REAL_OR_FAIL(cuLibraryLoadData);
    int rec = vt__enter();
    CUresult r = real(l, code, jo, jv, jn, lo, lv, ln);
    alloc_end(rec, VT_API_cuLibraryLoadData, VT_SPACE_LIBRARY, -1, l ? (uint64_t)(uintptr_t)*l : 0,
              rec ? image_size(code) : 0, 0, r, 0, 0, 0);
    return r;
}

VT__EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *l, const char *f, CUjit_option *jo, void **jv,
                                          unsigned jn, CUlibraryOption *lo, void **lv, unsigned ln)
{
    REAL_OR_FAIL(cuLibraryLoadFromFile);
    int rec = vt__enter();
    CUresult r = real(l, f, jo, jv, jn, lo, lv, ln);
    alloc_end(rec, VT_API_cuLibraryLoadFromFile, VT_SPACE_LIBRARY, -1, l ? (uint64_t)(uintptr_t)*l : 0,
              0, 0, r, 0, 0, 0);
    return r;
}

VT__EXPORT CUresult cuLibraryUnload(CUlibrary l)
{
    REAL_OR_FAIL(cuLibraryUnload);
    int rec = vt__enter();
    CUresult r = real(l);
    free_end(rec, VT_API_cuLibraryUnload, VT_SPACE_LIBRARY, (uint64_t)(uintptr_t)l, 0, r);
    return r;
}

/* ---- contexts: size = the driver's used memory right after the first one on a device ---- */
static _Atomic uint64_t g_ctx_seen;

static void context_end(int rec, uint16_t api, CUcontext ctx, int dev, CUresult r)
{
    uint64_t used = 0, total = 0;
    int first = 0;
    if (rec && r == CUDA_SUCCESS && dev >= 0 && dev < 64) {
        uint64_t bit = 1ull << dev;
        first = !(atomic_fetch_or(&g_ctx_seen, bit) & bit);
    }
    if (first) {
        CUresult (*get)(CUcontext *) = (CUresult(*)(CUcontext *))vt__driver_sym("cuCtxGetCurrent");
        CUresult (*set)(CUcontext) = (CUresult(*)(CUcontext))vt__driver_sym("cuCtxSetCurrent");
        CUresult (*info)(size_t *, size_t *) = (CUresult(*)(size_t *, size_t *))vt__driver_sym("cuMemGetInfo_v2");
        size_t f = 0, t = 0;
        CUcontext prev = NULL;
        if (get && set && info && get(&prev) == CUDA_SUCCESS && set(ctx) == CUDA_SUCCESS) {
            if (info(&f, &t) == CUDA_SUCCESS) {
                used = t - f;
                total = t;
            }
            set(prev); /* the thread's current context is left as it was */
        }
        vt__record_meminfo(dev, total - used, total, VT_MEMINFO_CONTEXT);
        vt__sampler_note_context(dev, ctx);
    }
    if (rec && (first || r != CUDA_SUCCESS))
        alloc_end(1, api, first ? VT_SPACE_CONTEXT : 0, dev, (uint64_t)(uintptr_t)ctx, used, 0, r, 0, 0, 0);
    else
        vt__leave();
}

/* Contexts are recorded at any depth: the runtime creates its context lazily inside the
 * first runtime call (a hooked cudaMalloc), and no runtime event stands for it. */
static int enter_any_depth(void)
{
    int rec = vt__enter();
    return rec || (vt__depth() > 1 && vt__active());
}

VT__EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    REAL_OR_FAIL(cuDevicePrimaryCtxRetain);
    int rec = enter_any_depth();
    CUresult r = real(ctx, dev);
    context_end(rec, VT_API_cuDevicePrimaryCtxRetain, ctx ? *ctx : NULL, dev, r);
    return r;
}

VT__EXPORT CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    REAL_OR_FAIL(cuCtxCreate_v2);
    int rec = enter_any_depth();
    CUresult r = real(ctx, flags, dev);
    context_end(rec, VT_API_cuCtxCreate, ctx ? *ctx : NULL, dev, r);
    return r;
}

/* ---- memory info and host memory ------------------------------------------------------------ */
VT__EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
    REAL_OR_FAIL(cuMemGetInfo_v2);
    int rec = vt__enter();
    CUresult r = real(free_b, total_b);
    if (rec && r == CUDA_SUCCESS && free_b && total_b)
        vt__meminfo_seen(free_b, total_b);
    vt__leave();
    return r;
}

VT__EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
    REAL_OR_FAIL(cuMemHostAlloc);
    int rec = vt__enter();
    CUresult r = real(p, n, flags);
    alloc_end(rec, VT_API_cuMemHostAlloc, 0, -1, p ? (uint64_t)(uintptr_t)*p : 0, n, 0, r, 0, 0, 0);
    return r;
}

VT__EXPORT CUresult cuMemAllocHost_v2(void **p, size_t n)
{
    REAL_OR_FAIL(cuMemAllocHost_v2);
    int rec = vt__enter();
    CUresult r = real(p, n);
    alloc_end(rec, VT_API_cuMemAllocHost, 0, -1, p ? (uint64_t)(uintptr_t)*p : 0, n, 0, r, 0, 0, 0);
    return r;
}

VT__EXPORT CUresult cuMemFreeHost(void *p)
{
    REAL_OR_FAIL(cuMemFreeHost);
    int rec = vt__enter();
    CUresult r = real(p);
    free_end(rec && p, VT_API_cuMemFreeHost, 0, (uint64_t)(uintptr_t)p, 0, r);
    return r;
}

/* ---- the table shared with hook_procaddr.c ------------------------------------------------ */
static void *const g_wrappers[VT_DRV_COUNT] = {
#define VT_DRV_WRAP(name, api, ret, params, args) (void *)&name,
    VT_DRIVER_FUNCS(VT_DRV_WRAP)
#undef VT_DRV_WRAP
};

int vt__drv_index(const char *exported_name)
{
    for (int i = 0; i < VT_DRV_COUNT; i++)
        if (!strcmp(g_names[i], exported_name))
            return i;
    return -1;
}

int vt__drv_is_wrapper(const void *p)
{
    for (int i = 0; i < VT_DRV_COUNT; i++)
        if (g_wrappers[i] == p)
            return 1;
    return 0;
}

void *vt__drv_wrap(int i, void *real)
{
    if (i < 0 || i >= VT_DRV_COUNT || !real || vt__drv_is_wrapper(real))
        return real;
    atomic_store_explicit(&g_real[i], real, memory_order_release);
    return g_wrappers[i];
}
