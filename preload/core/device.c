/* device.c — devices and contexts from the driver's own queries: the current device, the
 * DEVICE record of each ordinal (name, total memory, UUID, compute capability), and what a
 * new context takes (measured with cuMemGetInfo right after its creation). Interface:
 * device.h; hook_driver.c's context hooks reach it through call.c. */
#include <stdatomic.h>
#include <string.h>

#include "device.h"
#include "output.h"
#include "realsym.h"
#include "vramtrace/trace_format.h"

typedef CUresult (*ctx_get_device_fn)(CUdevice *);
_Atomic(void *) vt__ctx_get_device; /* (device.h) cached, absence included (realsym.h) */
_Atomic uint64_t vt__devices_seen;  /* (device.h) */
static _Atomic uint64_t g_ctx_seen; /* bit per ordinal: first context measured */
static uint64_t g_device_total[VT__MAX_DEVICES];

int vt__current_device_lookup(void)
{
    ctx_get_device_fn f =
        (ctx_get_device_fn)vt__driver_sym_cached(&vt__ctx_get_device, "cuCtxGetDevice");
    if (!f)
        return -1;
    CUdevice d = -1;
    return f(&d) == CUDA_SUCCESS ? (int)d : -1;
}

/* write_device: the DEVICE record of one ordinal, from the driver's own queries. */
static void write_device(int ordinal)
{
    CUresult (*dev_get)(CUdevice *, int) =
        (CUresult(*)(CUdevice *, int))vt__driver_sym("cuDeviceGet");
    CUresult (*get_name)(char *, int, CUdevice) =
        (CUresult(*)(char *, int, CUdevice))vt__driver_sym("cuDeviceGetName");
    CUresult (*total_mem)(size_t *, CUdevice) =
        (CUresult(*)(size_t *, CUdevice))vt__driver_sym("cuDeviceTotalMem_v2");
    CUresult (*get_uuid)(CUuuid *, CUdevice) =
        (CUresult(*)(CUuuid *, CUdevice))vt__driver_sym("cuDeviceGetUuid_v2");
    if (!get_uuid)
        get_uuid = (CUresult(*)(CUuuid *, CUdevice))vt__driver_sym("cuDeviceGetUuid");
    CUresult (*get_attr)(int *, int, CUdevice) =
        (CUresult(*)(int *, int, CUdevice))vt__driver_sym("cuDeviceGetAttribute");
    vt_rec_device r;
    memset(&r, 0, sizeof r);
    r.ordinal = (uint32_t)ordinal;
    char name[256] = "";
    CUdevice d = ordinal;
    if (dev_get && dev_get(&d, ordinal) != CUDA_SUCCESS)
        d = ordinal;
    if (get_name && get_name(name, sizeof name - 1, d) != CUDA_SUCCESS)
        name[0] = '\0';
    name[sizeof name - 1] = '\0';
    size_t total = 0;
    if (total_mem && total_mem(&total, d) == CUDA_SUCCESS)
        r.total_bytes = total;
    CUuuid u;
    if (get_uuid && get_uuid(&u, d) == CUDA_SUCCESS)
        memcpy(r.uuid, u.bytes, 16);
    int v = 0;
    if (get_attr && get_attr(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) == CUDA_SUCCESS)
        r.cc_major = (uint32_t)v;
    if (get_attr && get_attr(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) == CUDA_SUCCESS)
        r.cc_minor = (uint32_t)v;
    g_device_total[ordinal] = r.total_bytes;
    const char *s[1] = {name};
    vt__write_strings(VT_REC_DEVICE, 0, &r, sizeof r, s, NULL, 1);
}

void vt__device_note_new(int ordinal)
{
    if (ordinal < 0 || ordinal >= VT__MAX_DEVICES)
        return;
    uint64_t bit = 1ull << ordinal;
    if (atomic_fetch_or(&vt__devices_seen, bit) & bit)
        return;
    write_device(ordinal);
}

uint64_t vt__device_total(int ordinal)
{
    return ordinal >= 0 && ordinal < VT__MAX_DEVICES ? g_device_total[ordinal] : 0;
}

int vt__context_first(int device)
{
    if (device < 0 || device >= VT__MAX_DEVICES)
        return 0;
    uint64_t bit = 1ull << device;
    return !(atomic_fetch_or(&g_ctx_seen, bit) & bit);
}

int vt__context_measure(const vt__ctx_ops *ops, CUcontext ctx, uint64_t *used, uint64_t *total)
{
    vt__ctx_ops real;
    if (!ops) {
        real.get_current = (CUresult(*)(CUcontext *))vt__driver_sym("cuCtxGetCurrent");
        real.set_current = (CUresult(*)(CUcontext))vt__driver_sym("cuCtxSetCurrent");
        real.mem_get_info = (CUresult(*)(size_t *, size_t *))vt__driver_sym("cuMemGetInfo_v2");
        ops = &real;
    }
    *used = *total = 0;
    CUcontext prev = NULL;
    if (!ops->get_current || !ops->set_current || !ops->mem_get_info ||
        ops->get_current(&prev) != CUDA_SUCCESS || ops->set_current(ctx) != CUDA_SUCCESS)
        return -1;
    size_t f = 0, t = 0;
    int rc = -1;
    if (ops->mem_get_info(&f, &t) == CUDA_SUCCESS && f <= t) {
        *used = t - f;
        *total = t;
        rc = 0;
    }
    ops->set_current(prev); /* the thread's current context is left as it was */
    return rc;
}

void vt__device_fork_child(void)
{
    atomic_store(&vt__devices_seen, 0);
}
