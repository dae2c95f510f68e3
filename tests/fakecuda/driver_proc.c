/* driver_proc.c — cuGetProcAddress / cuGetProcAddress_v2 of the fake driver: maps (base name,
 * requested CUDA version, flags) to the ABI variant the way the real driver does: the entry
 * with the highest introducing version <= the requested one; flags 2 picks the _ptsz variant. */
#include <string.h>

#include "driver_internal.h"

/* X(base name, version introducing this variant, default symbol, per-thread-stream symbol
 * or 0). Every variant of a name is listed, oldest first. */
#define FK_PROCS(X)                                                                                \
    X(cuInit, 2000, cuInit, 0)                                                                     \
    X(cuDriverGetVersion, 2020, cuDriverGetVersion, 0)                                             \
    X(cuDeviceGet, 2000, cuDeviceGet, 0)                                                           \
    X(cuDeviceGetCount, 2000, cuDeviceGetCount, 0)                                                 \
    X(cuDeviceGetName, 2000, cuDeviceGetName, 0)                                                   \
    X(cuDeviceTotalMem, 2000, cuDeviceTotalMem, 0)                                                 \
    X(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2, 0)                                              \
    X(cuDeviceGetUuid, 9020, cuDeviceGetUuid, 0)                                                   \
    X(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2, 0)                                               \
    X(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute, 0)                                         \
    X(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain, 0)                                 \
    X(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease, 0)                               \
    X(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2, 0)                           \
    X(cuCtxCreate, 3020, cuCtxCreate_v2, 0)                                                        \
    X(cuCtxCreate, 11040, cuCtxCreate_v3, 0)                                                       \
    X(cuCtxCreate, 12050, cuCtxCreate_v4, 0)                                                       \
    X(cuCtxDestroy, 4000, cuCtxDestroy_v2, 0)                                                      \
    X(cuCtxSetCurrent, 4000, cuCtxSetCurrent, 0)                                                   \
    X(cuCtxGetCurrent, 4000, cuCtxGetCurrent, 0)                                                   \
    X(cuCtxGetDevice, 2000, cuCtxGetDevice, 0)                                                     \
    X(cuCtxSynchronize, 2000, cuCtxSynchronize, 0)                                                 \
    X(cuMemAlloc, 2000, cuMemAlloc, 0)                                                             \
    X(cuMemAlloc, 3020, cuMemAlloc_v2, 0)                                                          \
    X(cuMemFree, 2000, cuMemFree, 0)                                                               \
    X(cuMemFree, 3020, cuMemFree_v2, 0)                                                            \
    X(cuMemAllocPitch, 3020, cuMemAllocPitch_v2, 0)                                                \
    X(cuMemAllocManaged, 6000, cuMemAllocManaged, 0)                                               \
    X(cuMemAllocAsync, 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz)                               \
    X(cuMemFreeAsync, 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz)                                  \
    X(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz)       \
    X(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo, 0)                                                  \
    X(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool, 0)                              \
    X(cuMemGetInfo, 2000, cuMemGetInfo, 0)                                                         \
    X(cuMemGetInfo, 3020, cuMemGetInfo_v2, 0)                                                      \
    X(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity, 0)                      \
    X(cuMemCreate, 10020, cuMemCreate, 0)                                                          \
    X(cuMemRelease, 10020, cuMemRelease, 0)                                                        \
    X(cuMemMap, 10020, cuMemMap, 0)                                                                \
    X(cuMemUnmap, 10020, cuMemUnmap, 0)                                                            \
    X(cuMemSetAccess, 10020, cuMemSetAccess, 0)                                                    \
    X(cuMemAddressReserve, 10020, cuMemAddressReserve, 0)                                          \
    X(cuMemAddressFree, 10020, cuMemAddressFree, 0)                                                \
    X(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle, 0)                          \
    X(cuMemExportToShareableHandle, 10020, cuMemExportToShareableHandle, 0)                        \
    X(cuMemImportFromShareableHandle, 10020, cuMemImportFromShareableHandle, 0)                    \
    X(cuModuleLoad, 2000, cuModuleLoad, 0)                                                         \
    X(cuModuleLoadData, 2000, cuModuleLoadData, 0)                                                 \
    X(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx, 0)                                             \
    X(cuModuleLoadFatBinary, 2000, cuModuleLoadFatBinary, 0)                                       \
    X(cuModuleUnload, 2000, cuModuleUnload, 0)                                                     \
    X(cuLibraryLoadData, 12000, cuLibraryLoadData, 0)                                              \
    X(cuLibraryLoadFromFile, 12000, cuLibraryLoadFromFile, 0)                                      \
    X(cuLibraryUnload, 12000, cuLibraryUnload, 0)                                                  \
    X(cuMemHostAlloc, 2020, cuMemHostAlloc, 0)                                                     \
    X(cuMemAllocHost, 2000, cuMemAllocHost, 0)                                                     \
    X(cuMemAllocHost, 3020, cuMemAllocHost_v2, 0)                                                  \
    X(cuMemFreeHost, 2000, cuMemFreeHost, 0)                                                       \
    X(cuMemHostRegister, 4000, cuMemHostRegister, 0)                                               \
    X(cuMemHostRegister, 6050, cuMemHostRegister_v2, 0)                                            \
    X(cuMemHostUnregister, 4000, cuMemHostUnregister, 0)                                           \
    X(cuGetErrorString, 6000, cuGetErrorString, 0)                                                 \
    X(cuGetErrorName, 6000, cuGetErrorName, 0)                                                     \
    X(cuThreadExchangeStreamCaptureMode, 10010, cuThreadExchangeStreamCaptureMode, 0)              \
    X(cuStreamCreate, 2000, cuStreamCreate, 0)                                                     \
    X(cuStreamDestroy, 4000, cuStreamDestroy_v2, 0)                                                \
    X(cuStreamSynchronize, 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz)                    \
    X(cuGetProcAddress, 11030, cuGetProcAddress, 0)                                                \
    X(cuGetProcAddress, 12000, cuGetProcAddress_v2, 0)

/* Declarations of everything the table points at (defined in driver_*.c); the table only
 * takes their addresses, so an unprototyped declaration is enough. */
#define DECL(name, ver, fn, ptsz) CUresult fn();
FK_PROCS(DECL)
#undef DECL
CUresult cuMemAllocAsync_ptsz();
CUresult cuMemFreeAsync_ptsz();
CUresult cuMemAllocFromPoolAsync_ptsz();
CUresult cuStreamSynchronize_ptsz();

struct proc {
    const char *name;
    int version;
    void *fn, *ptsz;
};

static const struct proc g_procs[] = {
#define ROW(name, ver, fn, ptsz) {#name, ver, (void *)fn, (void *)ptsz},
    FK_PROCS(ROW)
#undef ROW
};

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    fk_configure();
    if (!symbol || !pfn || flags > 3) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_INVALID_VALUE;
    }
    const struct proc *best = NULL;
    int known = 0;
    for (size_t i = 0; i < sizeof g_procs / sizeof g_procs[0]; i++) {
        if (strcmp(g_procs[i].name, symbol) != 0)
            continue;
        known = 1;
        if (g_procs[i].version <= version && (!best || g_procs[i].version > best->version))
            best = &g_procs[i];
    }
    *pfn = NULL;
    if (!best) {
        if (status)
            *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                            : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        fk_log("cuGetProcAddress(%s, %d, %llu) -> not found", symbol, version,
               (unsigned long long)flags);
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptsz ? best->ptsz
                                                                                 : best->fn;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    fk_log("cuGetProcAddress(%s, %d, %llu) -> %p", symbol, version, (unsigned long long)flags,
           *pfn);
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
