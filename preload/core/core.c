/* core.c — the tracking core behind the hooks: the per-thread guard, thread indices and
 * roles, devices, streams, and turning a vt__event into ALLOC / FREE / OOM records.
 * Output is writer.c, stacks stacks.c, Python frames pyframes.c, card emulation card.c. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "cuda_abi.h"
#include "stacks.h"
#include "writer.h"

/* Provided by card.c and pyframes.c; weak so the core links without them. */
__attribute__((weak)) int vt__card_enabled(void);
__attribute__((weak)) uint64_t vt__card_used(int device);
__attribute__((weak)) void vt__card_meminfo(int device, uint64_t *free_b, uint64_t *total_b);

/* ---- per-thread state (initial-exec TLS: no allocation, no lock on first touch) --------- */
static __thread int t_depth;
static __thread uint32_t t_index;      /* thread index + 1; 0 = not registered */
static __thread uint32_t t_generation; /* g_generation when registered */
static __thread int t_role;
static _Atomic uint32_t g_generation = 1; /* bumped in a fork child: re-register threads */
static _Atomic uint32_t g_next_thread;

int vt__enter(void)
{
    int e = errno;
    int d = ++t_depth;
    int rec = d == 1 && vt__active();
    errno = e;
    return rec;
}

void vt__leave(void)
{
    int e = errno;
    --t_depth;
    errno = e;
}

int vt__depth(void)
{
    return t_depth;
}

static int role_of(const char *name, pid_t tid)
{
    if (!strncmp(name, "pt_autograd", 11))
        return VT_ROLE_AUTOGRAD;
    if (tid == getpid())
        return VT_ROLE_MAIN;
    if (!strncmp(name, "pt_data", 7) || !strncmp(name, "pt_main", 7))
        return VT_ROLE_WORKER;
    return VT_ROLE_OTHER;
}

/* register_thread: assigns the index and writes the THREAD record (first event only). */
static void register_thread(void)
{
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    pid_t tid = (pid_t)syscall(SYS_gettid);
    uint32_t idx = atomic_fetch_add(&g_next_thread, 1);
    if (idx > 0xfffe)
        idx = 0xffff; /* 65535 threads: the rest share the last index */
    t_role = role_of(name, tid);
    t_index = idx + 1;
    t_generation = atomic_load(&g_generation);
    vt_rec_thread r = {idx, (uint32_t)tid, (uint32_t)t_role, 0};
    const char *s[1] = {name};
    vt__write_strings(VT_REC_THREAD, 0, &r, sizeof r, s, NULL, 1);
}

uint32_t vt__thread_index(void)
{
    if (VT__UNLIKELY(!t_index || t_generation != atomic_load_explicit(&g_generation, memory_order_relaxed)))
        register_thread();
    return t_index - 1;
}

int vt__thread_role(void)
{
    vt__thread_index();
    return t_role;
}

/* ---- devices ------------------------------------------------------------------------------ */
typedef CUresult (*ctx_get_device_fn)(CUdevice *);
static _Atomic(ctx_get_device_fn) g_ctx_get_device;
static _Atomic uint64_t g_devices_seen; /* bit per ordinal: DEVICE record written */
static uint64_t g_device_total[64];

int vt__current_device(void)
{
    ctx_get_device_fn f = atomic_load_explicit(&g_ctx_get_device, memory_order_acquire);
    if (!f) {
        f = (ctx_get_device_fn)vt__driver_sym("cuCtxGetDevice");
        if (!f)
            return -1;
        atomic_store_explicit(&g_ctx_get_device, f, memory_order_release);
    }
    CUdevice d = -1;
    return f(&d) == CUDA_SUCCESS ? (int)d : -1;
}

/* write_device: the DEVICE record of one ordinal, from the driver's own queries. */
static void write_device(int ordinal)
{
    CUresult (*dev_get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))vt__driver_sym("cuDeviceGet");
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
    if (ordinal < 64)
        g_device_total[ordinal] = r.total_bytes;
    const char *s[1] = {name};
    vt__write_strings(VT_REC_DEVICE, 0, &r, sizeof r, s, NULL, 1);
}

static void ensure_device(int ordinal)
{
    if (ordinal < 0 || ordinal >= 64)
        return;
    uint64_t bit = 1ull << ordinal;
    if (VT__LIKELY(atomic_load_explicit(&g_devices_seen, memory_order_acquire) & bit))
        return;
    if (atomic_fetch_or(&g_devices_seen, bit) & bit)
        return;
    write_device(ordinal);
}

/* ---- streams: raw handle -> small per-file index ----------------------------------------- */
#define STREAM_SLOTS 256
static _Atomic uint64_t g_streams[STREAM_SLOTS];

static uint16_t stream_index(uint64_t s)
{
    if (!s)
        return 0;
    for (unsigned i = 0; i < STREAM_SLOTS - 1; i++) {
        uint64_t cur = atomic_load_explicit(&g_streams[i], memory_order_relaxed);
        if (cur == s)
            return (uint16_t)(i + 1);
        if (!cur) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&g_streams[i], &expected, s) || expected == s)
                return (uint16_t)(i + 1);
        }
    }
    return 0xffff; /* more streams than slots: "some other stream" */
}

/* ---- events ------------------------------------------------------------------------------ */
static const uint8_t g_api_kind[256] = {
#define VT_API_KIND(name, id, layer, kind, space) [id] = VT_KIND_##kind,
    VT_APIS(VT_API_KIND)
#undef VT_API_KIND
};

static uint16_t event_flags(const vt__event *ev, int device, int role)
{
    uint16_t f = VT_EVF_MAKE(ev->api, device < 0 ? (int)VT_DEVICE_UNKNOWN : device);
    f |= ev->flags & (VT_EVF_FAILED | VT_EVF_EMULATED);
    if (ev->result != 0)
        f |= VT_EVF_FAILED;
    if (role == VT_ROLE_AUTOGRAD)
        f |= VT_EVF_BACKWARD;
    return f;
}

static int16_t clamp_result(int32_t r)
{
    return r > 32767 ? 32767 : r < -32768 ? -32768 : (int16_t)r;
}

void vt__record_alloc(const vt__event *ev)
{
    if (!vt__active())
        return;
    uint32_t ti = vt__thread_index();
    int role = t_role;
    int dev = ev->device >= 0 ? ev->device : vt__current_device();
    ensure_device(dev);
    uint64_t tt = VT_TT_MAKE(vt__now_ns(), ti);
    uint32_t stack = vt__config_get()->stack_mode ? vt__stack_capture(0) : 0;
    vt_rec_alloc r = {tt, ev->result ? 0 : ev->addr, ev->size, stack, stream_index(ev->stream),
                      clamp_result(ev->result)};
    uint16_t flags = event_flags(ev, dev, role);
    vt__write(VT_REC_ALLOC, flags, &r, sizeof r, ev->has_aux ? &ev->aux : NULL, ev->has_aux ? 8 : 0);
    if (ev->result == 2 && g_api_kind[ev->api & 0xff] == VT_KIND_ALLOC) {
        int card = vt__card_enabled && vt__card_enabled();
        vt_rec_oom o = {tt, ev->size,
                        card ? vt__config_get()->card_bytes
                             : (dev >= 0 && dev < 64 ? g_device_total[dev] : 0),
                        card && vt__card_used ? vt__card_used(dev < 0 ? 0 : dev) : 0, stack,
                        ev->result};
        vt__write(VT_REC_OOM, flags, &o, sizeof o, NULL, 0);
    }
}

void vt__record_free(const vt__event *ev)
{
    if (!vt__active())
        return;
    uint32_t ti = vt__thread_index();
    int role = t_role;
    int dev = ev->device; /* a free's device is its allocation's: the analyzer pairs them */
    uint64_t tt = VT_TT_MAKE(vt__now_ns(), ti);
    uint16_t flags = event_flags(ev, dev, role);
    vt_rec_free r = {tt, ev->addr};
    const vt__config *c = vt__config_get();
    if (ev->result == 0 && !c->free_stacks) {
        vt__write(VT_REC_FREE, flags, &r, sizeof r, NULL, 0);
        return;
    }
    uint32_t stack = c->stack_mode && (c->free_stacks || ev->result) ? vt__stack_capture(0) : 0;
    vt_rec_free_ext x = {stack, stream_index(ev->stream), clamp_result(ev->result)};
    vt__write(VT_REC_FREE, flags, &r, sizeof r, &x, sizeof x);
}

void vt__meminfo_seen(size_t *free_b, size_t *total_b)
{
    int dev = vt__current_device();
    uint64_t f = *free_b, t = *total_b;
    if (vt__card_enabled && vt__card_enabled() && vt__card_meminfo) {
        vt__card_meminfo(dev < 0 ? 0 : dev, &f, &t);
        *free_b = (size_t)f;
        *total_b = (size_t)t;
    }
    vt__record_meminfo(dev, f, t, VT_MEMINFO_APP);
}

void vt__record_meminfo(int device, uint64_t free_b, uint64_t total_b, int source)
{
    if (!vt__active())
        return;
    uint32_t ti = vt__thread_index();
    vt_rec_meminfo m = {VT_TT_MAKE(vt__now_ns(), ti), free_b, total_b,
                        (uint32_t)(device < 0 ? (int)VT_DEVICE_UNKNOWN : device), (uint32_t)source};
    vt__write(VT_REC_MEMINFO, 0, &m, sizeof m, NULL, 0);
}

/* ---- process life: fork handlers, trailer at exit ----------------------------------------- */
static void fork_prepare(void)
{
    vt__stacks_fork_prepare();
    vt__writer_fork_prepare();
}

static void fork_parent(void)
{
    vt__writer_fork_parent();
    vt__stacks_fork_parent();
}

static void fork_child(void)
{
    vt__writer_fork_child();
    vt__stacks_fork_child();
    atomic_fetch_add(&g_generation, 1);
    atomic_store(&g_next_thread, 0);
    atomic_store(&g_devices_seen, 0);
    for (unsigned i = 0; i < STREAM_SLOTS; i++)
        atomic_store(&g_streams[i], 0);
}

/* Constructor: only registers handlers (no I/O, no file, no CUDA). */
__attribute__((constructor)) static void vt__core_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Destructor: runs after the program's atexit handlers; writes the trailer if a trace is open. */
__attribute__((destructor)) static void vt__core_fini(void)
{
    t_depth++; /* nothing recorded from here on */
    vt__writer_close();
}
