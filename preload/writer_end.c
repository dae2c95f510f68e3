/* writer_end.c — how a trace ends: the trailer (counts, why it stopped) and the file cut after
 * it, on a clean close, an output failure or an exec (taken back when the exec fails); and the
 * fork hooks, which give a child its own file. Windows are writer_window.c, records writer.c. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/output.h"
#include "core/quietio.h"
#include "vramtrace/trace_format.h"
#include "writer.h"
#include "writer_internal.h"

/* seal: closes w to writers from outside (close, exec); the bytes accepted in it. */
static uint64_t seal(window *w)
{
    uint64_t p = atomic_fetch_add(&w->used, SEAL_BIAS);
    if (p <= w->limit) {
        atomic_store(&w->sealed, p);
        return p;
    }
    uint64_t s; /* a writer's reservation filled it first: it stores the seal right away */
    while ((s = atomic_load(&w->sealed)) == UNSEALED)
        sched_yield();
    return s;
}

/* drain: waits until every record accepted (w sealed) is written and counted, that is until no
 * other thread's slot holds a window: microseconds, unless a writer was descheduled mid-record;
 * bounded (~1 s) all the same. Any window, not w alone: a thread that found the window before w
 * still open stores its record there, in its block, after w is put in (a close that waited for
 * w's holders alone had counted up to 2 events fewer than its file held, 6 of 80 exits under
 * load, lost_events.sh: the report's count of the events made short of the program's own). */
static void drain(void)
{
    for (int i = 0; vt__wslots_hold(NULL) && i < 11000; i++) {
        if (i < 1000) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

/* finish_locked: the trailer at w's seal s (room for it is always kept) and the file cut
 * right after it. The descriptor stays open (exec may fail and tracing resume). */
static void finish_locked(window *w, uint64_t s, uint16_t flags, int err)
{
    flags |=
        (uint16_t)atomic_load(&vt__ws.lost_why); /* (why events were lost, beside why it ended) */
    if (vt__ws.chunked) { /* the packer packs what is left and ends the summary with it */
        vt__pack_finish_locked(w, s, flags, err);
        return;
    }
    vt__window_drop_spare(); /* its blocks are cut off below */
    if (w)
        drain();
    uint64_t records, events;
    vt__window_totals_locked(&records, &events);
    vt_rec_trailer t = {vt__now_ns(),
                        events,
                        atomic_load(&vt__ws.n_dropped),
                        records,
                        atomic_load(&vt__ws.stacks_truncated),
                        (uint32_t)err};
    vt__put_record(w->base + s, TRAILER_ROOM, VT_REC_TRAILER, flags, &t, sizeof t, NULL, 0, NULL,
                   0);
    vt__ws.reserved = w->start + s + TRAILER_ROOM;
    int fd = vt__writer_fd();
    if (fd >= 0)
        vt__sys_ops.ftruncate(fd, (off_t)vt__ws.reserved);
}

void vt__writer_close_fd(void)
{
    int fd = vt__writer_fd_quiet();
    if (fd >= 0)
        vt__sys_ops.close(fd);
    vt__ws.fd = -1;
}

/* vt__writer_fail_locked: an output failure with the file open: tracing stops with one warning; the
 * trace keeps every record accepted and ends with a trailer saying why. vt__ws.cur is NULL. */
void vt__writer_fail_locked(window *w, uint64_t s, const char *what, int err)
{
    atomic_store(&vt__ws.state, W_STOPPED);
    vt__writer_warn_once(what, err);
    int full = err == ENOSPC || err == EDQUOT || err == EFBIG;
    finish_locked(w, s, full ? VT_TRAILER_DISK_FULL : VT_TRAILER_OUTPUT_ERROR, err);
    vt__writer_close_fd();
    if (vt__ws.chunked)
        return; /* w is the packer's (packed and freed) */
    vt__window_retire_locked(w);
    vt__window_sweep_locked();
}

/* ---- closing, exec ---------------------------------------------------------------------- */

static void close_locked(void)
{
    if (atomic_load(&vt__ws.state) == W_OPEN) {
        window *w = atomic_load(&vt__ws.cur);
        vt__window_set_cur_locked(NULL);
        /* no window: a chunked trace whose writers found no raw slot free (records dropped) */
        uint64_t s = w ? seal(w) : 0;
        atomic_store(&vt__ws.state, W_CLOSED);
        finish_locked(w, s, 0, 0);
        vt__writer_close_fd();
        if (!vt__ws.chunked) { /* w stays mapped: later events are counted in its trailer */
            vt__writer_late_at(w->base + s);
            vt__window_sweep_locked();
        }
    }
}

void vt__writer_close(void)
{
    pthread_mutex_lock(&vt__ws.lock);
    close_locked();
    pthread_mutex_unlock(&vt__ws.lock);
}

/* interrupted_lock: exit() or an exec from a signal handler that interrupted a hook on this
 * thread (`what` names it). The hook may have reserved a record it had not stored (a trailer
 * after it is read as a zero-filled tail) or hold vt__ws.lock mid-switch (taken again,
 * recursively, the end had sealed a window half put in). (It may hold malloc's lock too: a
 * bounded trace's packing takes its memory from mmap, writer_mem.h.) A trace that is in neither
 * is ended as usual: 1, the lock taken (waited for 2 s at most: a thread holding it may wait on a
 * lock this one holds). Else the trace is left cut there, said once: 0. */
/* lock_within: vt__ws.lock taken, waited for s seconds at most. 1, or 0 when not taken. */
static int lock_within(int s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += s;
    return !pthread_mutex_timedlock(&vt__ws.lock, &ts);
}

static int interrupted_lock(const char *what)
{
    int owner = vt__ws_lock_mine();
    int st = atomic_load(&vt__ws.state);
    /* (or interrupted opening the file: only by a fault's handler, writer.c holds the rest) */
    if (st != W_OPEN && !(st == W_UNOPENED && owner))
        return 0;
    int mid =
        (vt__wslot_mine && atomic_load(&vt__wslot_mine->in)) || vt__wslots_shared_mine || owner;
    if (!mid && lock_within(2))
        return 1;
    atomic_store(&vt__ws.state, W_CLOSED); /* (what other threads make from here is lost too) */
    if (vt__ws.warned)
        return 0;
    vt__ws.warned = 1;
    char esc[600];
    vt__config_escape(vt__ws.path[0] ? vt__ws.path : "(trace file)", esc, sizeof esc);
    vt__quiet_stderr("vramtrace: %s ends without its trailer (read as cut there): %s was called "
                     "from a signal handler that interrupted the recording of a CUDA call\n",
                     esc, what);
    return 0;
}

void vt__writer_close_interrupted(void)
{
    if (interrupted_lock("exit()")) {
        close_locked();
        pthread_mutex_unlock(&vt__ws.lock);
    }
}

/* exec_end_locked: the trace ends with an EXEC trailer and the file is cut after it. */
static void exec_end_locked(void)
{
    if (atomic_load(&vt__ws.state) == W_OPEN) {
        window *w = atomic_load(&vt__ws.cur);
        vt__window_set_cur_locked(NULL);
        atomic_store(&vt__ws.state, W_EXEC);
        vt__ws.exec_seal = w ? seal(w) : 0; /* no window: as in vt__writer_close */
        vt__ws.exec_win = w;
        finish_locked(w, vt__ws.exec_seal, VT_TRAILER_EXEC, 0);
        if (!vt__ws.chunked) /* (the packer's trailer: writer_pack.c) */
            vt__writer_late_at(w->base + vt__ws.exec_seal);
    }
}

/* vt__writer_exec_prepare: before an exec: the trace ends here with an EXEC trailer and the
 * file cut after it (records made meanwhile on other threads are counted in it as lost). Not in
 * a vfork child (it shares the parent's memory but is not the process that owns the file). */
void vt__writer_exec_prepare(void)
{
    if (atomic_load(&vt__ws.state) != W_OPEN || getpid() != vt__ws.pid)
        return;
    pthread_mutex_lock(&vt__ws.lock);
    exec_end_locked();
    pthread_mutex_unlock(&vt__ws.lock);
}

void vt__writer_exec_interrupted(void)
{
    if (getpid() == vt__ws.pid && interrupted_lock("an exec")) {
        exec_end_locked();
        pthread_mutex_unlock(&vt__ws.lock);
    }
}

/* vt__writer_exec_failed: the exec returned: the trailer is taken back and tracing goes on
 * in the same file (or, if the file cannot grow again, it ends there as DISK_FULL). */
void vt__writer_exec_failed(void)
{
    if (atomic_load(&vt__ws.state) == W_CLOSED && getpid() == vt__ws.pid) {
        /* a trace an exec from a signal handler cut (interrupted_lock): it stays cut, and its
         * descriptor goes back to the program (it had stayed open for the rest of the run).
         * Not while another thread holds the lock mid-switch (it may be using it); where this
         * one was interrupted holding it, the switch finds the descriptor no longer the trace's
         * (vt__writer_fd checks) and stops there: the trace is cut already. */
        if (lock_within(1)) {
            vt__writer_close_fd();
            pthread_mutex_unlock(&vt__ws.lock);
        }
        return;
    }
    if (atomic_load(&vt__ws.state) != W_EXEC || getpid() != vt__ws.pid)
        return;
    pthread_mutex_lock(&vt__ws.lock);
    if (atomic_load(&vt__ws.state) == W_EXEC && vt__ws.chunked) {
        /* the packer has ended the chunked trace: it stays ended (README) */
        atomic_store(&vt__ws.state, W_CLOSED);
        vt__writer_close_fd();
    } else if (atomic_load(&vt__ws.state) == W_EXEC) {
        window *w = vt__ws.exec_win;
        uint64_t s = vt__ws.exec_seal;
        char *t = w->base + s;
        atomic_store(&vt__ws.late, NULL); /* no drop is counted in it any more: */
        for (int i = 0; atomic_load(&vt__ws.late_busy) && i < 100000; i++)
            sched_yield(); /* (those counting now take microseconds) */
        if (atomic_load(&vt__ws.late_busy)) {
            /* one still counting into the trailer (this thread, interrupted inside late_push by
             * the handler whose exec failed, or one stalled past the wait): it would store its
             * count into the records written where the trailer was. The trace stays ended as
             * the exec left it, whole, what comes after counted there as dropped, and its
             * trailer says the output stopped (the program went on, no new image: not EXEC) */
            uint64_t h = (uint64_t)VT_REC_TRAILER |
                         (uint64_t)(VT_TRAILER_OUTPUT_ERROR | atomic_load(&vt__ws.lost_why)) << 16 |
                         (uint64_t)TRAILER_ROOM << 32; /* (why events were lost kept too) */
            __atomic_store_n((uint64_t *)(void *)t, h, __ATOMIC_RELEASE);
            vt__writer_late_at(t); /* counted there again, the drops of the wait pushed too */
            atomic_store(&vt__ws.state, W_CLOSED);
            vt__writer_close_fd();
        } else {
            __atomic_store_n((uint64_t *)(void *)t, 0, __ATOMIC_RELEASE);
            memset(t + 8, 0, TRAILER_ROOM - 8);
            int err = 0, no_alloc = vt__ws.no_alloc; /* (a handler's inside this: kept) */
            vt__ws.no_alloc = 1; /* (maybe in a signal handler: no malloc, writer_state.c) */
            window *nw = vt__window_new(w->start + s, 0, &err);
            vt__ws.no_alloc = no_alloc;
            if (nw) {
                vt__window_set_cur_locked(nw);
                atomic_store(&vt__ws.state, W_OPEN);
                vt__window_retire_locked(w);
            } else {
                vt__writer_fail_locked(
                    w, s, err == ENOSPC ? "disk full, cannot extend" : "cannot extend", err);
            }
        }
        vt__ws.exec_win = NULL;
    }
    pthread_mutex_unlock(&vt__ws.lock);
}

/* ---- fork ---------------------------------------------------------------------------------
 * prepare: hold vt__ws.lock so no window switch is half-done when the child is made; parent:
 * release; child (one thread): forget the parent's file WITHOUT writing to it (munmap only
 * changes the child's address space) and start over: its own file at its first event. */
void vt__writer_fork_prepare(void)
{
    pthread_mutex_lock(&vt__ws.lock);
}

void vt__writer_fork_parent(void)
{
    pthread_mutex_unlock(&vt__ws.lock);
}

/* forget_file: the file's state back to unopened, nothing written (a child's, a test's reset) */
static void forget_file(void);

void vt__writer_fork_child(void)
{
    vt__populate_fork_child(); /* (first: its lock may have been held by the parent's helper) */
    forget_file();
}

static void forget_file(void)
{
    atomic_store(&vt__ws.late, NULL); /* the parent's trailer */
    atomic_store(&vt__ws.late_busy, 0);
    vt__ws.lock = (pthread_mutex_t)PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    vt__ws.cur_changed = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    while (vt__ws.all) { /* the only thread left: no one else holds a window */
        window *w = vt__ws.all;
        vt__ws.all = w->next_all;
        if (!w->unmapped)
            munmap(w->map, w->map_len);
        if (w->own_page)
            munmap(w, DESC_PAGE);
        else
            free(w);
    }
    atomic_store(&vt__ws.cur, NULL);
    vt__ws.retired = NULL;
    vt__ws.exec_win = NULL;
    /* the chunked layout's slots and packer are the parent's: nothing of them is touched */
    vt__ws.pack_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    vt__ws.pack_first = vt__ws.pack_last = NULL;
    if (vt__ws.spare_slot.map)
        munmap(vt__ws.spare_slot.map, (size_t)vt__ws.slot_size);
    vt__ws.spare_slot.map = NULL;
    vt__ws.n_free = 0;
    vt__ws.chunked = 0;
    vt__ws.rec_max = VT_REC_MAX_SIZE;
    if (vt__ws.slot_size)
        vt__pack_forget_child();
    if (vt__ws.spare.map)
        munmap(vt__ws.spare.map, (size_t)(vt__ws.spare.end - vt__ws.spare.map_off));
    vt__ws.spare.map = NULL;
    if (vt__writer_fd_quiet() >= 0) /* the child's copy, unless the number is another file now */
        close(vt__ws.fd);
    vt__ws.fd = -1;
    vt__ws.reserved = 0;
    vt__ws.warned = 0;
    vt__ws.path[0] = '\0';
    vt__wslots_forget();
    atomic_store(&vt__ws.n_dropped, 0);
    atomic_store(&vt__ws.stacks_truncated, 0);
    atomic_store(&vt__ws.lost_why, 0);
    __atomic_store_n(&vt__ws.start_mono, 0, __ATOMIC_RELEASE);
    int s = atomic_load(&vt__ws.state);
    atomic_store(&vt__ws.state,
                 s == W_STOPPED && vt__config_get()->disabled ? W_STOPPED : W_UNOPENED);
}

/* vt__writer_reset_for_tests: back to the unopened state (unit tests only, one thread). */
void vt__writer_reset_for_tests(void)
{
    vt__writer_close();
    forget_file(); /* (the helper thread, if running, is this process's: kept) */
}
