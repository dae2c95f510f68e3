/* driver_core.c — the fake CUDA driver's devices, contexts, streams and errors (address
 * spaces: driver_space.c). Devices are simulated from FAKECUDA_DEVICES (count, default 1),
 * FAKECUDA_MEM (capacity, default 16G; "12G" or "12G,24G" per device), FAKECUDA_CONTEXT
 * (context cost, default 300M), FAKECUDA_LOG=1; addresses are never dereferenced. */
#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_internal.h"

struct fk_driver fk_drv = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t g_conf_once = PTHREAD_ONCE_INIT;
static __thread struct fk_ctx *t_cur_ctx;
static struct fk_ctx g_ctx_pool[256]; /* contexts from cuCtxCreate; magic 0 = free slot */
static __thread int t_capture_mode;

/* parse_size: "16G", "300M", "512MiB", "1024" -> bytes; `dflt` when unset or malformed. */
static uint64_t parse_size(const char *s, uint64_t dflt)
{
    if (!s || !*s)
        return dflt;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return dflt;
    while (*end == ' ')
        end++;
    uint64_t mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 0:
        break;
    case 'B':
        break;
    case 'K':
        mul = 1ull << 10;
        break;
    case 'M':
        mul = 1ull << 20;
        break;
    case 'G':
        mul = 1ull << 30;
        break;
    case 'T':
        mul = 1ull << 40;
        break;
    default:
        return dflt;
    }
    return (uint64_t)(v * (double)mul);
}

/* atfork handlers: hold the lock across fork, give the child a fresh one. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&fk_drv.lock);
}
static void fork_parent(void)
{
    pthread_mutex_unlock(&fk_drv.lock);
}
static void fork_child(void)
{
    pthread_mutex_init(&fk_drv.lock, NULL);
}

static void configure_once(void)
{
    const char *e = getenv("FAKECUDA_DEVICES");
    int n = e && *e ? atoi(e) : 1;
    if (n < 0)
        n = 0;
    if (n > FK_MAX_DEVICES)
        n = FK_MAX_DEVICES;
    fk_drv.ndev = n;
    fk_drv.ctx_bytes = parse_size(getenv("FAKECUDA_CONTEXT"), 300ull << 20);
    /* FAKECUDA_MEM: one size for every device, or a comma list (the last one repeats) */
    const char *mem = getenv("FAKECUDA_MEM");
    uint64_t cap = 16ull << 30;
    e = getenv("FAKECUDA_LOG");
    fk_drv.log = e && *e && strcmp(e, "0") != 0;
    e = getenv("FAKECUDA_RAISE");
    fk_drv.raise_sig = e && *e ? atoi(e) : 0;
    e = getenv("FAKECUDA_NO_REUSE");
    int no_reuse = e && *e && strcmp(e, "0") != 0;
    for (int d = 0; d < FK_MAX_DEVICES; d++) {
        struct fk_device *dv = &fk_drv.dev[d];
        if (mem && *mem) {
            char one[64];
            size_t len = strcspn(mem, ",");
            snprintf(one, sizeof one, "%.*s", (int)(len < 63 ? len : 63), mem);
            cap = parse_size(one, cap);
            mem = mem[len] == ',' ? mem + len + 1 : NULL;
        }
        dv->capacity = cap;
        dv->primary = (struct fk_ctx){FK_CTX_MAGIC, d, 1};
        dv->pool.dev = d;
        /* 4 TiB of fake VA per device, well away from host addresses of small tests */
        dv->space.base = 0x200000000000ull + (uint64_t)d * 0x40000000000ull;
        dv->space.limit = dv->space.base + 0x40000000000ull;
        dv->space32.base = 0x10000000ull + (uint64_t)d * 0x10000000ull;
        dv->space32.limit = dv->space32.base + 0x10000000ull;
        dv->space.no_reuse = dv->space32.no_reuse = no_reuse;
    }
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    fk_drv.configured = 1;
}

void fk_configure(void)
{
    pthread_once(&g_conf_once, configure_once);
}
void fk_lock(void)
{
    pthread_mutex_lock(&fk_drv.lock);
}
void fk_unlock(void)
{
    pthread_mutex_unlock(&fk_drv.lock);
}

void fk_log(const char *fmt, ...)
{
    if (!fk_drv.log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("[fakecuda] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

CUresult fk_ready(void)
{
    fk_configure();
    return fk_drv.initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

int fk_current_dev(void)
{
    struct fk_ctx *c = t_cur_ctx;
    return c && c->magic == FK_CTX_MAGIC ? c->dev : -1;
}

CUresult fk_charge(int d, uint64_t bytes)
{
    struct fk_device *dv = &fk_drv.dev[d];
    if (bytes > dv->capacity - dv->used)
        return CUDA_ERROR_OUT_OF_MEMORY;
    dv->used += bytes;
    return CUDA_SUCCESS;
}

void fk_uncharge(int d, uint64_t bytes)
{
    struct fk_device *dv = &fk_drv.dev[d];
    dv->used = bytes > dv->used ? 0 : dv->used - bytes;
}

/* ---- address spaces (ranges live in driver_space.c) ---- */

int fk_dev_of_addr(uint64_t addr)
{
    for (int d = 0; d < fk_drv.ndev; d++) {
        const struct fk_device *dv = &fk_drv.dev[d];
        if ((addr >= dv->space.base && addr < dv->space.limit) ||
            (addr >= dv->space32.base && addr < dv->space32.limit))
            return d;
    }
    return -1;
}

/* ---- init, version, devices ---- */

CUresult cuInit(unsigned int flags)
{
    fk_configure();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    fk_lock();
    fk_drv.initialized = 1;
    fk_unlock();
    fk_log("cuInit: %d device(s), %llu bytes each, context %llu", fk_drv.ndev,
           (unsigned long long)fk_drv.dev[0].capacity, (unsigned long long)fk_drv.ctx_bytes);
    return fk_drv.ndev > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = 13000;
    return CUDA_SUCCESS;
}

/* check_dev: common guard for device-ordinal APIs. */
static CUresult check_dev(CUdevice d)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    return d >= 0 && d < fk_drv.ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetCount(int *n)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = fk_drv.ndev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    CUresult r = check_dev(ordinal);
    if (r)
        return r;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    CUresult r = check_dev(d);
    if (r)
        return r;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", "Fake GPU (vramtrace test)");
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    CUresult r = check_dev(d);
    if (r)
        return r;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = fk_drv.dev[d].capacity;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice d)
{
    size_t b = 0;
    CUresult r = cuDeviceTotalMem_v2(&b, d);
    if (r == CUDA_SUCCESS)
        *bytes = b > 0xffffffffu ? 0xffffffffu : (unsigned int)b;
    return r;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice d)
{
    CUresult r = check_dev(d);
    if (r)
        return r;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    /* deterministic: "vramtrace-fake" bytes then the ordinal */
    static const char stem[14] = {'v', 'r', 'a', 'm', 't', 'r', 'a',
                                  'c', 'e', '-', 'f', 'a', 'k', 'e'};
    memcpy(uuid->bytes, stem, sizeof stem);
    uuid->bytes[14] = 0;
    uuid->bytes[15] = (char)d;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice d)
{
    return cuDeviceGetUuid(uuid, d);
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    CUresult r = check_dev(d);
    if (r)
        return r;
    if (!v || attr <= 0 || attr > 200)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
    case 16:
        *v = 132;
        break; /* multiprocessor count */
    case 33:
        *v = d + 1;
        break; /* PCI bus id */
    case 1:
        *v = 1024;
        break; /* max threads per block */
    case 10:
        *v = 32;
        break; /* warp size */
    case 83:
        *v = 1;
        break; /* unified addressing */
    case 115:
        *v = 1;
        break; /* memory pools supported */
    case 102:
        *v = 1;
        break; /* virtual memory management supported */
    default:
        *v = 0;
        break;
    }
    return CUDA_SUCCESS;
}

/* ---- contexts ---- */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
    CUresult r = check_dev(d);
    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    fk_lock();
    struct fk_device *dv = &fk_drv.dev[d];
    if (dv->primary_refs == 0 && (r = fk_charge(d, fk_drv.ctx_bytes)) != CUDA_SUCCESS) {
        fk_unlock();
        return r;
    }
    dv->primary_refs++;
    *pctx = (CUcontext)&dv->primary;
    fk_unlock();
    fk_log("cuDevicePrimaryCtxRetain(%d) refs=%d", d, dv->primary_refs);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    CUresult r = check_dev(d);
    if (r)
        return r;
    fk_lock();
    struct fk_device *dv = &fk_drv.dev[d];
    if (dv->primary_refs == 0) {
        fk_unlock();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (--dv->primary_refs == 0)
        fk_uncharge(d, fk_drv.ctx_bytes);
    fk_unlock();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    return cuDevicePrimaryCtxRelease_v2(d);
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice d)
{
    (void)flags;
    CUresult r = check_dev(d);
    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    fk_lock();
    struct fk_ctx *c = NULL;
    for (size_t i = 0; i < sizeof g_ctx_pool / sizeof g_ctx_pool[0] && !c; i++)
        if (g_ctx_pool[i].magic != FK_CTX_MAGIC)
            c = &g_ctx_pool[i];
    r = c ? fk_charge(d, fk_drv.ctx_bytes) : CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        *c = (struct fk_ctx){FK_CTX_MAGIC, d, 0};
    fk_unlock();
    if (r)
        return r;
    t_cur_ctx = c; /* a created context becomes current */
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v3(CUcontext *pctx, void *params, int nparams, unsigned int flags, CUdevice d)
{
    (void)params;
    (void)nparams;
    return cuCtxCreate_v2(pctx, flags, d);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, void *params, unsigned int flags, CUdevice d)
{
    (void)params;
    return cuCtxCreate_v2(pctx, flags, d);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    struct fk_ctx *c = (struct fk_ctx *)ctx;
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    fk_lock();
    if (c->magic != FK_CTX_MAGIC || c->primary) {
        fk_unlock();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    fk_uncharge(c->dev, fk_drv.ctx_bytes);
    c->magic = 0;
    fk_unlock();
    if (t_cur_ctx == c)
        t_cur_ctx = NULL;
    /* the slot stays readable (another thread may hold it as current) and is reused */
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    struct fk_ctx *c = (struct fk_ctx *)ctx;
    if (c && c->magic != FK_CTX_MAGIC)
        return CUDA_ERROR_INVALID_CONTEXT;
    t_cur_ctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)t_cur_ctx;
    return CUDA_SUCCESS;
}

/* t_raising: this thread is inside FAKECUDA_RAISE's raise() (the handler's own calls raise nothing)
 */
static __thread int t_raising;

CUresult cuCtxGetDevice(CUdevice *d)
{
    if (fk_drv.raise_sig && !t_raising) { /* a signal landing wherever the caller is */
        t_raising = 1;
        raise(fk_drv.raise_sig);
        t_raising = 0;
    }
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    int cur = fk_current_dev();
    if (cur < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = cur;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    return fk_current_dev() < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

/* ---- streams (trivial objects) ---- */

CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_current_dev() < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    int *obj = malloc(sizeof *obj);
    if (!obj)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *obj = fk_current_dev();
    *s = (CUstream)obj;
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream s)
{
    if (!s)
        return FK_ERR_INVALID_HANDLE;
    free(s);
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize_ptsz(CUstream s)
{
    return cuStreamSynchronize(s);
}

CUresult cuThreadExchangeStreamCaptureMode(int *mode)
{
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    int old = t_capture_mode;
    t_capture_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* ---- errors ---- */

CUresult cuGetErrorString(CUresult e, const char **s)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    switch (e) {
#define X(code, name, desc)                                                                        \
    case code:                                                                                     \
        *s = desc;                                                                                 \
        return CUDA_SUCCESS;
        FK_ERRORS(X)
#undef X
    }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult e, const char **s)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    switch (e) {
#define X(code, name, desc)                                                                        \
    case code:                                                                                     \
        *s = #name;                                                                                \
        return CUDA_SUCCESS;
        FK_ERRORS(X)
#undef X
    }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}
