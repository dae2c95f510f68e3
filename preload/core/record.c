/* record.c — turning one hooked call into trace records: ALLOC / FREE / OOM / MEMINFO with
 * time, thread, device, stream index and stack; plus the process-life handlers (fork, the
 * trailer at exit). Devices are device.c, threads thread.c, stacks stacks/, output writer*.c. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "card.h"
#include "config.h"
#include "device.h"
#include "output.h"
#include "record.h"
#include "stacks/stacks.h"
#include "thread.h"
#include "vramtrace/trace_format.h"
#include "writer.h"

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

__thread uint64_t vt__t_last_ns; /* (record.h: vt__record_last_ns) */

void vt__record_alloc(const vt__event *ev)
{
    if (!vt__active()) { /* ended since the hook began (exit, exec on another thread) */
        vt__writer_note_late();
        return;
    }
    int role;
    uint32_t ti = vt__thread_current(&role);
    int dev = ev->device >= 0 ? ev->device : vt__current_device();
    vt__device_note(dev);
    uint64_t now = vt__now_ns();
    vt__t_last_ns = now;
    uint64_t tt = VT_TT_MAKE(now, ti);
    uint32_t stack = vt__config_get()->stack_mode ? vt__stack_capture(0) : 0;
    vt_rec_alloc r = {tt,    ev->result ? 0 : ev->addr, ev->size,
                      stack, stream_index(ev->stream),  clamp_result(ev->result)};
    uint16_t flags = event_flags(ev, dev, role);
    if (ev->has_aux)
        vt__write(VT_REC_ALLOC, flags, &r, sizeof r, &ev->aux, 8);
    else
        vt__write_event(VT_REC_ALLOC, flags, &r, sizeof r);
    if (ev->result == 2 && g_api_kind[ev->api & 0xff] == VT_KIND_ALLOC) {
        int card = vt__card_enabled();
        vt_rec_oom o = {tt,
                        ev->size,
                        card ? vt__config_get()->card_bytes : vt__device_total(dev),
                        card ? vt__card_used(dev < 0 ? 0 : dev) : 0,
                        stack,
                        ev->result};
        vt__write(VT_REC_OOM, flags, &o, sizeof o, NULL, 0);
    }
}

void vt__record_free(const vt__event *ev)
{
    if (!vt__active()) { /* ended since the hook began (exit, exec on another thread) */
        vt__writer_note_late();
        return;
    }
    int role;
    uint32_t ti = vt__thread_current(&role);
    int dev = ev->device; /* a free's device is its allocation's: the analyzer pairs them */
    uint64_t tt = VT_TT_MAKE(vt__now_ns(), ti);
    uint16_t flags = event_flags(ev, dev, role);
    vt_rec_free r = {tt, ev->addr};
    const vt__config *c = vt__config_get();
    if (ev->result == 0 && !c->free_stacks) {
        vt__write_event(VT_REC_FREE, flags, &r, sizeof r);
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
    if (vt__card_enabled()) {
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
/* glibc (2.32+) clears it when the process makes its first thread; weak: unknown elsewhere */
extern char __libc_single_threaded __attribute__((weak));
static int g_fork_threaded; /* the forking process had other threads (prepare -> child) */
static pid_t g_pid;         /* this process (set at load and in a fork child) */

static void fork_prepare(void)
{
    g_fork_threaded = &__libc_single_threaded ? !__libc_single_threaded : 1;
    if (g_fork_threaded && vt__populate_alone()) /* (its one other thread is ours) */
        g_fork_threaded = 0;
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
    int cancel = vt__cancel_off(); /* its close of the parent's file (thread.h) */
    g_pid = getpid();
    vt__config_fork_child(g_fork_threaded); /* first: what the child may still call */
    vt__writer_fork_child();
    vt__stacks_fork_child();
    vt__thread_fork_child();
    vt__device_fork_child();
    for (unsigned i = 0; i < STREAM_SLOTS; i++)
        atomic_store(&g_streams[i], 0);
    vt__cancel_restore(cancel);
}

/* Constructor: only registers handlers (no I/O, no file, no CUDA). */
__attribute__((constructor)) static void vt__record_init(void)
{
    g_pid = getpid();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Destructor: runs after the program's atexit handlers; writes the trailer if a trace is open. */
__attribute__((destructor)) static void vt__record_fini(void)
{
    /* another process running our exit: a vfork child's exit() shares the parent's memory, this
     * thread's guard included (the parent would record nothing more), and a child made without
     * fork()'s handlers has its parent's trace: neither is touched (no trailer is written into
     * the parent's file) */
    if (getpid() != g_pid)
        return;
    int in_hook = vt__depth() > 0; /* exit() from a signal handler that interrupted a hook */
    vt__guard_forever();           /* nothing recorded from here on */
    int cancel = vt__cancel_off(); /* the trailer's wait and close (thread.h) */
    if (in_hook)
        vt__writer_close_interrupted();
    else
        vt__writer_close();
    vt__cancel_restore(cancel);
}
