/* writer_pack_inline.c — a bounded trace packed without a thread of its own: where the packer's
 * thread is not started (core/helper.h: under `ulimit -u` it would take one of the program's) or
 * cannot start, the thread whose record filled a raw window packs the queued windows itself, at
 * the switch (writer.c), one thread at a time and with the program's signals held. Until 2026-12-06
 * a packer that could not start left every window to the close: the raw slots ran out and 96 %
 * of a bounded trace's events were lost, with no reason given. The packing is writer_pack.c. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "core/helper.h"
#include "core/output.h"
#include "core/quietio.h"
#include "vramtrace/trace_format.h"
#include "writer_internal.h"

static int g_inline; /* 1: no packer thread, the windows are packed inline */
static int g_busy;   /* a thread packs inline now (vt__ws.lock: set and read under it) */
static pthread_t g_who;
static int g_said;           /* (the warning, once a process) */
static void (*g_pack)(void); /* writer_pack.c's: packs the oldest queued window */

int vt__pack_thread_start(pthread_t *t, pthread_attr_t *a, void *(*fn)(void *), void (*pack)(void))
{
    g_pack = pack;
    unsigned long long limit = 0;
    int err = vt__helper_start(t, a, VT__HELPER_STACK_PACKER, fn, &limit);
    g_inline = err != 0;
    g_busy = 0; /* (a fork child: the parent's inline packer is not its) */
    if (g_inline) {
        vt__writer_note_no_helper();
        vt__helper_said(&g_said, "packing", limit, err,
                        "the bounded trace is packed on the program's threads as they fill it");
    }
    return !g_inline;
}

void vt__pack_inline_locked(void)
{
    if (!g_inline || !vt__ws.chunked || g_busy)
        return;
    g_busy = 1;
    g_who = pthread_self();
    sigset_t old;
    vt__hold_async(&old); /* (a handler's record would find the packing half done) */
    while (vt__ws.pack_first && atomic_load(&vt__ws.state) == W_OPEN)
        g_pack();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    g_busy = 0;
}

void vt__pack_inline_wait_locked(void)
{
    while (g_busy && !pthread_equal(g_who, pthread_self())) {
        int held = vt__ws_unlock_all();
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        vt__ws_relock(held);
    }
}
