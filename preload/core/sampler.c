/* sampler.c — the optional background sampler (VRAMTRACE_SAMPLE_MS): every N ms, the driver's
 * cuMemGetInfo for each device whose context the program created, as MEMINFO records (source
 * SAMPLER). Its thread blocks every signal, switches itself to relaxed stream-capture mode so
 * it never breaks a CUDA-graph capture, uses the driver's own functions (never the runtime),
 * and is started only when a context exists (a process without CUDA never gets one). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "../cuda_abi.h"
#include "card.h"
#include "config.h"
#include "helper.h"
#include "output.h"
#include "quietio.h"
#include "realsym.h"
#include "record.h"
#include "sampler.h"
#include "thread.h"
#include "vramtrace/trace_format.h"

#define MAX_DEV 64

static _Atomic(void *) g_ctx[MAX_DEV];
static _Atomic int g_started;

typedef CUresult (*set_ctx_fn)(CUcontext);
typedef CUresult (*meminfo_fn)(size_t *, size_t *);
typedef CUresult (*capture_mode_fn)(int *);

static void *sampler_main(void *arg)
{
    (void)arg; /* (every signal blocked: vt__thread_start) */
    set_ctx_fn set = (set_ctx_fn)vt__driver_sym("cuCtxSetCurrent");
    meminfo_fn info = (meminfo_fn)vt__driver_sym("cuMemGetInfo_v2");
    capture_mode_fn mode = (capture_mode_fn)vt__driver_sym("cuThreadExchangeStreamCaptureMode");
    if (!set || !info)
        return NULL;
    int relaxed = 2; /* CU_STREAM_CAPTURE_MODE_RELAXED */
    if (mode)
        mode(&relaxed);
    unsigned ms = vt__config_get()->sample_ms;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    for (;;) {
        nanosleep(&ts, NULL);
        if (!vt__active())
            continue;
        for (int d = 0; d < MAX_DEV; d++) {
            void *ctx = atomic_load(&g_ctx[d]);
            size_t f = 0, t = 0;
            if (!ctx || set((CUcontext)ctx) != CUDA_SUCCESS)
                continue;
            int rec = vt__enter(); /* our own calls are not the program's events */
            CUresult r = info(&f, &t);
            vt__leave();
            (void)rec;
            if (r != CUDA_SUCCESS)
                continue;
            uint64_t fu = f, tu = t;
            if (vt__card_enabled())
                vt__card_meminfo(d, &fu, &tu);
            vt__record_meminfo(d, fu, tu, VT_MEMINFO_SAMPLER);
        }
    }
    return NULL;
}

void vt__sampler_note_context(int device, void *ctx)
{
    if (device < 0 || device >= MAX_DEV || !ctx)
        return;
    void *expected = NULL;
    atomic_compare_exchange_strong(&g_ctx[device], &expected, ctx);
    if (!vt__config_get()->sample_ms || atomic_exchange(&g_started, 1))
        return;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* not where it would take one of the program's threads (`ulimit -u`, helper.h), nor tried
     * again when it cannot start (it had been, at each context, silently): said once */
    static int said;
    unsigned long long limit = 0;
    int err = vt__helper_start(&t, &a, VT__HELPER_STACK_SAMPLER, sampler_main, &limit);
    if (err) /* (no event lost: not the trailer's loss reason, said here alone) */
        vt__helper_said(&said, "sampler", limit, err,
                        "the trace has no periodic device-memory samples (VRAMTRACE_SAMPLE_MS)");
    pthread_attr_destroy(&a);
}

/* fork: the child has no sampler thread; it starts its own at its first context. */
static void sampler_fork_child(void)
{
    atomic_store(&g_started, 0);
    for (int d = 0; d < MAX_DEV; d++)
        atomic_store(&g_ctx[d], NULL);
}

__attribute__((constructor)) static void vt__sampler_init(void)
{
    pthread_atfork(NULL, NULL, sampler_fork_child);
}
