/* hook_procaddr.c — where programs get driver entry points at run time: cuGetProcAddress
 * (v1 and _v2, itself re-fetched by cudart at versions 11030 and 12000) and the runtime's
 * cudaGetDriverEntryPoint[ByVersion]. The real call comes first with the same arguments;
 * a watched function's pointer is then swapped for our wrapper (hook_driver.c), per ABI
 * variant (version) and per-thread-stream variant (_ptsz). Unwatched symbols pass untouched;
 * cuGetExportTable is never touched. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/realsym.h"
#include "cuda_abi.h"
#include "hook_table.h"

typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
static _Atomic(void *) g_gpa1, g_gpa2;

CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status);

/* The first CUDA version at which a base name means its _v2 ABI (older: not watched). */
static const struct {
    const char *base;
    int v2_from, v2_until; /* [from, until): until 0 = no later ABI */
} g_versioned[] = {
    {"cuMemAlloc", 3020, 0},   {"cuMemFree", 3020, 0},      {"cuMemAllocPitch", 3020, 0},
    {"cuMemGetInfo", 3020, 0}, {"cuMemAllocHost", 3020, 0}, {"cuCtxCreate", 3020, 11040},
};

/* exported_name: the driver export a (symbol, version, flags) query means; "" = unwatched. */
static void exported_name(const char *sym, int ver, unsigned long long flags, char *out, size_t cap)
{
    snprintf(out, cap, "%s", sym);
    for (size_t i = 0; i < sizeof g_versioned / sizeof g_versioned[0]; i++) {
        if (strcmp(sym, g_versioned[i].base))
            continue;
        int v2 = ver >= g_versioned[i].v2_from &&
                 (!g_versioned[i].v2_until || ver < g_versioned[i].v2_until);
        if (v2)
            snprintf(out, cap, "%s_v2", sym);
        else
            out[0] = '\0'; /* v1 (32-bit sizes) or a later ABI: pass through unwatched */
        return;
    }
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
        /* the per-thread-stream variant, when the table watches one (hook_table.h) */
        char ptsz[128];
        snprintf(ptsz, sizeof ptsz, "%s_ptsz", sym);
        if (vt__drv_index(ptsz) >= 0)
            snprintf(out, cap, "%s", ptsz);
    }
}

void *vt__procaddr_wrap(const char *sym, int ver, unsigned long long flags, void *real)
{
    if (!sym || !real)
        return real;
    if (real == (void *)&cuGetProcAddress || real == (void *)&cuGetProcAddress_v2)
        return real;
    if (!strcmp(sym, "cuGetProcAddress") || !strcmp(sym, "cuGetProcAddress_v2")) {
        int v2 = !strcmp(sym, "cuGetProcAddress_v2") || ver >= 12000;
        atomic_store(v2 ? &g_gpa2 : &g_gpa1, real);
        return v2 ? (void *)&cuGetProcAddress_v2 : (void *)&cuGetProcAddress;
    }
    char name[128];
    exported_name(sym, ver, flags, name, sizeof name);
    if (!name[0])
        return real;
    return vt__drv_wrap(vt__drv_index(name), real);
}

static void *gpa_real(_Atomic(void *) *slot, const char *name)
{
    return vt__driver_sym_cached(slot, name);
}

VT__EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    gpa1_fn real = (gpa1_fn)gpa_real(&g_gpa1, "cuGetProcAddress");
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(sym, pfn, ver, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = vt__procaddr_wrap(sym, ver, flags, *pfn);
    return r;
}

VT__EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *status)
{
    gpa2_fn real = (gpa2_fn)gpa_real(&g_gpa2, "cuGetProcAddress_v2");
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(sym, pfn, ver, flags, status);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = vt__procaddr_wrap(sym, ver, flags, *pfn);
    return r;
}

/* ---- the runtime's entry points (PyTorch >= 2.8 gets cuMemCreate & co. this way) -------- */

VT__EXPORT cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fp, unsigned long long flags,
                                               cudaDriverEntryPointQueryResult *status)
{
    static _Atomic(void *) slot;
    cudaGetDriverEntryPoint_fn real = (cudaGetDriverEntryPoint_fn)atomic_load(&slot);
    if (!real) {
        real = (cudaGetDriverEntryPoint_fn)vt__next("cudaGetDriverEntryPoint");
        atomic_store(&slot, (void *)real);
    }
    if (!real)
        return cudaErrorInitializationError;
    cudaError_t r = real(sym, fp, flags, status);
    if (r == cudaSuccess && fp && *fp)
        *fp = vt__procaddr_wrap(sym, 13000, flags, *fp); /* the newest ABI of each name */
    return r;
}

VT__EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fp, unsigned ver,
                                                        unsigned long long flags,
                                                        cudaDriverEntryPointQueryResult *status)
{
    static _Atomic(void *) slot;
    cudaGetDriverEntryPointByVersion_fn real =
        (cudaGetDriverEntryPointByVersion_fn)atomic_load(&slot);
    if (!real) {
        real = (cudaGetDriverEntryPointByVersion_fn)vt__next("cudaGetDriverEntryPointByVersion");
        atomic_store(&slot, (void *)real);
    }
    if (!real)
        return cudaErrorInitializationError;
    cudaError_t r = real(sym, fp, ver, flags, status);
    if (r == cudaSuccess && fp && *fp)
        *fp = vt__procaddr_wrap(sym, (int)ver, flags, *fp);
    return r;
}
