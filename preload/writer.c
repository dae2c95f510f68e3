/* writer.c — records into the trace file: the file created at the first record (O_EXCL|
 * O_NOFOLLOW|O_CLOEXEC, 0600) with its header and first records, then each record reserved
 * without a lock and copied in; strings encoded as (u32 len, bytes). Windows (MAP_SHARED over
 * space reserved with posix_fallocate: records survive SIGKILL, a full disk is an error value,
 * never a SIGBUS) are writer_window.c; the trailer, close, exec and fork are writer_end.c.
 * System calls go through vt__sys so tests inject ENOSPC. The record layout itself is
 * include/vramtrace/trace_format.h.
 *
 * No lock per record: a writer reserves its bytes with one fetch_add on the current window's
 * `used`, copies the payload and stores the header last (release); that is all it shares.
 * The reservation that runs past the window's end seals it (`sealed` = where it stopped) and
 * switches to the next window (mapped ahead when the current one was half full) under
 * vt__ws.lock, which is taken only to open, switch, close or exec; writers that overflowed sleep
 * until then and retry. Each writing thread says in its own slot which window it is storing
 * into (writer_internal.h): a retired window is unmapped once no slot holds it, and the slots
 * count the records for the trailer, so nothing walks the records again. Windows
 * start small (64 KiB) and double up to 4 MiB, each keeping room for a trailer, so a nearly
 * full disk keeps what fits and ends with a DISK_FULL trailer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/output.h"
#include "core/quietio.h"
#include "vramtrace/trace_format.h"
#include "writer.h"
#include "writer_internal.h"

/* ---- reserving ---------------------------------------------------------------------------- */

/* unhold / rehold: this thread stores nothing into w while it waits for the lock (its
 * reservation ran past w's end): its slot (or its count on the shared path) says so, so that a
 * close or an exec that holds the lock and drains w does not wait for it (both had waited ~1 s,
 * the drain's bound: a process's exit or exec stalled 2 s, 2 of 25 times, while other threads
 * allocated). `own`: this thread's slot, else the shared path (append). */
static inline void unhold(vt__wslot *me, int own)
{
    if (own) {
        atomic_store_explicit(&me->in, NULL, memory_order_release); /* (w gets none of it) */
    } else {
        vt__wslots_shared_mine--;
        atomic_fetch_sub_explicit(&vt__wsl.busy, 1, memory_order_release);
    }
}

static inline void rehold(int own)
{
    if (!own) { /* (its slot is held again with the next window, append's loop) */
        vt__wslots_shared_mine++;
        atomic_fetch_add(&vt__wsl.busy, 1);
    }
}

/* switch_window: w is full at s (the caller's reservation ran past it): the next window,
 * or the end of the trace on failure. 0: retry; -1: tracing stopped. w is held until its seal
 * is stored; not while waiting for the lock (unhold: under it, w is valid while current). */
static int switch_window(window *w, uint64_t s, uint64_t need, vt__wslot *me, int own)
{
    atomic_store(&w->sealed, s);
    unhold(me, own);
    pthread_mutex_lock(&vt__ws.lock);
    rehold(own);
    if (atomic_load(&vt__ws.cur) != w) { /* closed or paused meanwhile: that path owns w */
        pthread_mutex_unlock(&vt__ws.lock);
        return 0;
    }
    int err = 0;
    window *nw = vt__window_new(w->start + s, need, &err);
    if (!nw && vt__ws.chunked && err == EAGAIN) {
        /* no raw slot free: records are dropped (counted) until the packer frees one and puts
         * a new window in (writer_pack.c); the program never waits for it */
        vt__window_set_cur_locked(NULL);
        vt__window_retire_locked(w);
        vt__pack_inline_locked(); /* (no packer thread: the slots freed here) */
        pthread_mutex_unlock(&vt__ws.lock);
        return -1;
    }
    if (!nw) {
        vt__window_set_cur_locked(NULL);
        vt__writer_fail_locked(w, s, err == ENOSPC ? "disk full, cannot extend" : "cannot extend",
                               err);
        pthread_mutex_unlock(&vt__ws.lock);
        return -1;
    }
    vt__window_set_cur_locked(nw);
    vt__window_retire_locked(w);
    vt__pack_inline_locked(); /* (a bounded trace with no packer thread: packed here) */
    pthread_mutex_unlock(&vt__ws.lock);
    return 0;
}

/* wait_switch: another thread is switching away from w; sleep until it is done (vt__ws.cur only
 * changes under vt__ws.lock, with a broadcast). */
static void wait_switch(window *w)
{
    pthread_mutex_lock(&vt__ws.lock);
    while (atomic_load(&vt__ws.cur) == w)
        pthread_cond_wait(&vt__ws.cur_changed, &vt__ws.lock);
    pthread_mutex_unlock(&vt__ws.lock);
}

/* hold / release: this thread stores a record into w (its slot says so before it reserves,
 * so the thread that seals w and retires it sees it: the reservation is a release, the seal an
 * acquire on the same word) / is done with it; count: a record stored. `own`: through this
 * thread's slot, else through the shared path (writer_internal.h). */
static inline void hold(vt__wslot *me, int own, window *w)
{
    if (own)
        atomic_store_explicit(&me->in, w, memory_order_release);
}

static inline void count(vt__wslot *me, int own, uint16_t type)
{
    uint64_t ev = type == VT_REC_ALLOC || type == VT_REC_FREE;
    if (own) { /* this thread's alone: no atomic read-modify-write */
        atomic_store_explicit(&me->records,
                              atomic_load_explicit(&me->records, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_store_explicit(&me->events,
                              atomic_load_explicit(&me->events, memory_order_relaxed) + ev,
                              memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&vt__wsl.records, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&vt__wsl.events, ev, memory_order_relaxed);
    }
}

static inline int release(vt__wslot *me, int own, int rc)
{
    if (own) {
        atomic_store_explicit(&me->in, NULL, memory_order_release);
    } else {
        vt__wslots_shared_mine--;
        atomic_fetch_sub_explicit(&vt__wsl.busy, 1, memory_order_release);
    }
    return rc;
}

/* stored: the record at pos (size bytes) in w is stored: counted, w released, then the next
 * window mapped ahead once the half is crossed (under vt__ws.lock: not while holding w, which a
 * close holding the lock waits to see released; vt__window_prepare_next uses w's fields only
 * while w is current, and a window's struct is never freed). 0. */
static inline int stored(vt__wslot *me, int own, window *w, uint64_t pos, uint64_t size,
                         uint16_t type)
{
    count(me, own, type);
    int half = pos < w->half && pos + size >= w->half;
    release(me, own, 0);
    if (VT__UNLIKELY(half))
        vt__window_prepare_next(w);
    return 0;
}

/* unannounced_child: this process is a child made without fork()'s handlers (_Fork, a raw
 * clone: vt__ws.owner reads 0): the parent's windows are mapped shared with the parent's file,
 * so nothing is written through them; they are forgotten as a fork child forgets them, and this
 * process is not traced (what the other layers hold is the parent's: its stacks, threads), with
 * a warning. -1. */
static __attribute__((noinline, cold)) int unannounced_child(void)
{
    vt__writer_fork_child();
    atomic_store(&vt__ws.state, W_STOPPED);
    *vt__ws.owner = 1; /* said once */
    vt__quiet_stderr("vramtrace: process %d was made without fork()'s handlers (_Fork or clone): "
                     "it is not traced, its parent's trace is left as it was\n",
                     (int)getpid());
    return -1;
}

/* past_end: the reservation at pos ran past w's end: w is sealed and the next window put in (the
 * reservation that crossed the end), or waited for (one after it). 0: retry; -1: tracing stopped,
 * w released. */
static __attribute__((noinline)) int past_end(window *w, uint64_t pos, uint64_t size, vt__wslot *me,
                                              int own)
{
    if (pos <= w->limit)
        return switch_window(w, pos, size, me, own) < 0 ? release(me, own, -1) : 0;
    unhold(me, own);
    wait_switch(w);
    rehold(own);
    return 0;
}

/* ---- blocks (a plain trace, 2.0: trace_blocks.h) ---------------------------------------------
 * A thread reserves BLOCK_BYTES of the window at a time (one fetch_add) and stores its records
 * into that block one after the other: threads share no word per record (8 threads had cost
 * 3.1x the CPU per event of one on the shared reservation). Before a record goes into its
 * block the thread holds w (its slot), then a full fence, then w must still be unsealed: a
 * switch, close or exec seals w before it waits for the slots (drain, sweep), so either it sees
 * this thread holding w or this thread sees the seal and takes a block in the current window. */
#define BLOCK_BYTES 4096u

/* in_block: the record fits in this thread's block in w (held), and w takes records */
static inline int in_block(const vt__wslot *me, const window *w, size_t size)
{
    atomic_thread_fence(memory_order_seq_cst);
    return me->bwin == w->seq && me->bpos + size <= me->bend &&
           atomic_load_explicit(&w->sealed, memory_order_relaxed) == UNSEALED;
}

/* block_store: the record into this thread's block in w where in_block said it fits: stored,
 * counted, w released. 0. */
static inline int block_store(vt__wslot *me, window *w, size_t size, uint16_t type, uint16_t flags,
                              const void *p1, size_t n1, const void *p2, size_t n2, const void *p3,
                              size_t n3)
{
    uint64_t q = me->bpos;
    me->bpos = q + size;
    vt__put_record(w->base + q, size, type, flags, p1, n1, p2, n2, p3, n3);
    count(me, 1, type);
    return release(me, 1, 0);
}

/* block_head: the BLOCK record at pos (bs bytes) of w: its payload, then its header */
static inline void block_head(window *w, uint64_t pos, uint64_t bs, uint32_t writer)
{
    vt_rec_block b = {w->seq, writer};
    memcpy(w->base + pos + 8, &b, sizeof b);
    uint64_t hdr = (uint64_t)VT_REC_BLOCK | (bs << 32);
    __atomic_store_n((uint64_t *)(void *)(w->base + pos), hdr, __ATOMIC_RELEASE);
}

/* block_put: a record into a new block of w (held): this thread's next BLOCK_BYTES (a larger
 * record: a block of its size), or without a slot of its own (`own` 0: the shared path) a block
 * of this record alone. 0: stored; 1: w was full, retry; -1: tracing stopped. */
static int block_put(window *w, size_t size, uint16_t type, uint16_t flags, const void *p1,
                     size_t n1, const void *p2, size_t n2, const void *p3, size_t n3, vt__wslot *me,
                     int own)
{
    uint64_t bs = size + VT_BLOCK_HEAD_SIZE;
    if (own && bs < BLOCK_BYTES)
        bs = BLOCK_BYTES;
    uint64_t pos = atomic_fetch_add_explicit(&w->used, bs, memory_order_acq_rel);
    if (VT__UNLIKELY(pos + bs > w->limit))
        return past_end(w, pos, bs, me, own) < 0 ? -1 : 1;
    block_head(w, pos, bs, own ? (uint32_t)(me - vt__wsl.slot) : VT_BLOCK_SHARED);
    if (own) {
        me->bwin = w->seq;
        me->bpos = pos + VT_BLOCK_HEAD_SIZE + size;
        me->bend = pos + bs;
    }
    vt__put_record(w->base + pos + VT_BLOCK_HEAD_SIZE, size, type, flags, p1, n1, p2, n2, p3, n3);
    return stored(me, own, w, pos, bs, type);
}

/* append: one record from up to three parts, without a lock (see the top of this file).
 * 0, or -1 when tracing is off or output failed. */
static int append(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2,
                  size_t n2, const void *p3, size_t n3)
{
    if (VT__UNLIKELY(vt__ws.owner && !*vt__ws.owner))
        return unannounced_child();
    size_t size = (8 + n1 + n2 + n3 + (VT_REC_ALIGN - 1)) & ~(size_t)(VT_REC_ALIGN - 1);
    if (size > vt__ws.rec_max) { /* VT_REC_MAX_SIZE, or what a slot of a chunked trace holds */
        atomic_fetch_add(&vt__ws.n_dropped, 1);
        return -1;
    }
    vt__wslot *me = vt__wslot_mine;
    if (VT__UNLIKELY(!me))
        me = vt__wslot_take();
    /* the slot is free unless this record interrupted another of this thread's (a signal) */
    int own = me && !atomic_load_explicit(&me->in, memory_order_relaxed);
    if (!own) {
        vt__wslots_shared_mine++;
        atomic_fetch_add(&vt__wsl.busy, 1);
    }
    for (;;) {
        window *w = atomic_load_explicit(&vt__ws.cur, memory_order_acquire);
        if (VT__UNLIKELY(!w))
            return release(me, own, -1);
#ifdef VT_WRITER_TEST_HOOKS
        vt__writer_test_before_hold(); /* (test_writer_seal.c: a close comes here) */
#endif
        hold(me, own, w);
        if (vt__ws.blocks) {
            if (own && in_block(me, w, size)) {
#ifdef VT_WRITER_TEST_HOOKS
                vt__writer_test_before_store(); /* (test_writer_seal.c: a switch and a close) */
#endif
                return block_store(me, w, size, type, flags, p1, n1, p2, n2, p3, n3);
            }
            int r = block_put(w, size, type, flags, p1, n1, p2, n2, p3, n3, me, own);
            if (r <= 0)
                return r;
            continue;
        }
        uint64_t pos = atomic_fetch_add_explicit(&w->used, size, memory_order_acq_rel);
        if (VT__LIKELY(pos + size <= w->limit)) {
            vt__put_record(w->base + pos, size, type, flags, p1, n1, p2, n2, p3, n3);
            return stored(me, own, w, pos, size, type);
        }
        if (past_end(w, pos, size, me, own) < 0)
            return -1;
    }
}

/* ---- opening -------------------------------------------------------------------------- */

void vt__writer_on_open(void (*first_records)(void))
{
    vt__ws.on_open = first_records;
}

/* open_locked: creates the file, header, PROCESS and CONFIG records, then publishes the
 * state W_OPEN (other threads wait on vt__ws.lock until then, so PROCESS comes first). When not
 * even the first page can be reserved, the file is removed: no empty trace is left. */
static void open_locked(void)
{
    const vt__config *c = vt__config_get();
    char base[4200];
    vt__wfile_expand(c->output, base, sizeof base);
    const char *why = NULL;
    int fd = -1;
    if (c->output_long) { /* never the file its start names (it had been cut there in silence) */
        snprintf(vt__ws.path, sizeof vt__ws.path, "%s", base);
        why = "File name too long (VRAMTRACE_OUTPUT is past 4095 bytes, %r expanded)";
    } else {
        fd = vt__wfile_create(base, &why);
    }
    if (fd < 0) {
        int err = errno;
        atomic_store(&vt__ws.state, W_STOPPED);
        vt__wfile_failure(c->manifest, "cannot create", why ? why : vt__writer_strerror(err));
        return;
    }
    /* listed for `vramtrace run` at once: a process that ends before its first window is set up
     * (it had left an empty file that run said nothing of: "no CUDA allocation was made") */
    vt__wfile_manifest(c->manifest);
    vt__ws.fd = vt__writer_fd_note(fd);
    vt__ws.pid = getpid();
    vt__wfile_mark_owner();
    vt__ws.reserved = 0;
    vt__ws.next_len = WINDOW_FIRST;
    vt__ws.chunked = 0;
    vt__ws.blocks = !(c->max_size || c->compress); /* (the packer reads raw slots in order) */
    vt__ws.rec_max = VT_REC_MAX_SIZE;
    vt__writer_start_clock();
    int err = 0;
    vt_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, VT_MAGIC, VT_MAGIC_LEN);
    h.major = vt__ws.blocks ? VT_BLOCKS_MAJOR : VT_VERSION_MAJOR;
    h.minor = vt__ws.blocks ? VT_BLOCKS_MINOR : VT_VERSION_MINOR;
    h.header_size = sizeof h;
    h.start_realtime_ns = vt__ws.start_real;
    h.start_mono_ns = vt__ws.start_mono;
    if (c->max_size || c->compress) {
        /* the chunked layout: slot 0 is the first HEAD slot, never freed (its SLOT record
         * right after the header says the layout); the writers' first raw slot comes after */
        int perr = ENOMEM;
        if (vt__slots_init_locked(c->max_size) || vt__pack_start_locked(&h, &perr)) {
            atomic_store(&vt__ws.state, W_STOPPED);
            vt__writer_close_fd();
            unlink(vt__ws.path);
            /* the disk or the file-size limit named as such (it had been "out of memory,
             * threads or room for it" under ulimit -f 200) */
            vt__wfile_failure(c->manifest, perr == ENOMEM ? "cannot start" : "cannot create",
                              perr == ENOMEM ? "out of memory" : vt__writer_strerror(perr));
            return;
        }
        vt__ws.rec_max = vt__slot_capacity();
    }
    window *w = vt__window_new(0, sizeof(vt_file_header), &err);
    if (!w && err == EAGAIN && vt__ws.full_err) /* a bounded trace's first raw slot: no room */
        err = vt__ws.full_err; /* (the disk or the file-size limit, not "try again") */
    if (!w) { /* not even the first page: no empty file is left, and the warning says why */
        atomic_store(&vt__ws.state, W_STOPPED);
        vt__writer_close_fd();
        unlink(vt__ws.path);
        vt__wfile_failure(c->manifest, err == ENOSPC ? "disk full, cannot create" : "cannot create",
                          vt__writer_strerror(err));
        return;
    }
    if (!vt__ws.chunked) {
        memcpy(w->base, &h, sizeof h);
        atomic_store(&w->used, sizeof h);
    }
    vt__window_set_cur_locked(w);
    if (vt__ws.on_open)
        vt__ws.on_open();
    vt_rec_config cr = {c->card_bytes, (uint32_t)c->stack_mode, (uint32_t)c->stack_depth,
                        c->sample_ms, c->native_off_fork ? VT_CONFIG_NATIVE_OFF_FORK : 0};
    uint32_t nlen = (uint32_t)strlen(c->card_name);
    append(VT_REC_CONFIG, 0, &cr, sizeof cr, &nlen, 4, c->card_name, nlen);
    if (atomic_load(&vt__ws.state) == W_UNOPENED)
        atomic_store(&vt__ws.state, W_OPEN);
}

int vt__writer_append_locked(uint16_t type, uint16_t flags, const void *p1, size_t n1,
                             const void *p2, size_t n2, const void *p3, size_t n3)
{
    return append(type, flags, p1, n1, p2, n2, p3, n3);
}

int vt__active(void)
{
    /* the states that take records: W_UNOPENED, W_OPEN, W_EXEC, as one test of a bit */
    unsigned s = (unsigned)atomic_load_explicit(&vt__ws.state, memory_order_relaxed);
    return (1u << W_UNOPENED | 1u << W_OPEN | 1u << W_EXEC) >> (s & 31) & 1 &&
           !vt__config_get()->disabled;
}

/* vt__writer_note_in_hook: see output.h (here beside vt__active, which it asks) */
void vt__writer_note_in_hook(void)
{
    if (!vt__active()) { /* the trace has ended (or is off): as any event made then */
        vt__writer_note_late();
        return;
    }
    atomic_fetch_or(&vt__ws.lost_why, VT_TRAILER_LOST_IN_HOOK);
    vt__writer_dropped();
}

/* write3: the path behind vt__write and vt__write_strings; opens the file the first time. */
static int write3(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2,
                  size_t n2, const void *p3, size_t n3)
{
    if (vt__config_get()->disabled)
        return -1;
    int s = atomic_load_explicit(&vt__ws.state, memory_order_acquire);
    if (VT__UNLIKELY(s == W_UNOPENED)) {
        sigset_t old; /* a signal's handler runs once the file is whole and the lock free */
        vt__hold_async(&old);
        pthread_mutex_lock(&vt__ws.lock);
        if (atomic_load(&vt__ws.state) == W_UNOPENED)
            open_locked();
        s = atomic_load(&vt__ws.state);
        pthread_mutex_unlock(&vt__ws.lock);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    int rc = s == W_OPEN ? append(type, flags, p1, n1, p2, n2, p3, n3) : -1;
    if (rc && (type == VT_REC_ALLOC || type == VT_REC_FREE))
        vt__writer_dropped(); /* (after the trailer too: writer_state.c) */
    return rc;
}

int vt__write(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2, size_t n2)
{
    return write3(type, flags, p1, n1, p2, n2, NULL, 0);
}

/* vt__write_event: write3 and append for one record of one part in the common case (the trace open,
 * this thread's slot free, room in the window), with no call on the way; anything else goes the
 * general way (write3, or append's loop after a reservation past the window's end). The same
 * steps in the same order as append: the window held before the reservation, the header stored
 * last, the counts, the next window mapped ahead at the half. Callgrind, bench_alloc --stacks
 * none: ~180 -> ~99 instructions a record. Built once per record size (an ALLOC's 32 bytes, a
 * FREE's 16: its checks, copy and padding folded): ~103 -> ~92. */
static inline __attribute__((always_inline)) int write_event(uint16_t type, uint16_t flags,
                                                             const void *p, size_t n)
{
    size_t size = (8 + n + (VT_REC_ALIGN - 1)) & ~(size_t)(VT_REC_ALIGN - 1);
    vt__wslot *me = vt__wslot_mine;
    if (VT__UNLIKELY(atomic_load_explicit(&vt__ws.state, memory_order_acquire) != W_OPEN ||
                     vt__config_get()->disabled || !me ||
                     atomic_load_explicit(&me->in, memory_order_relaxed) ||
                     (vt__ws.owner && !*vt__ws.owner) || n > 64 || (n & 7) ||
                     size > vt__ws.rec_max))
        return write3(type, flags, p, n, NULL, 0, NULL, 0);
    window *w = atomic_load_explicit(&vt__ws.cur, memory_order_acquire);
    if (VT__UNLIKELY(!w))
        return write3(type, flags, p, n, NULL, 0, NULL, 0);
    hold(me, 1, w);
    if (vt__ws.blocks) { /* (a plain trace: this thread's block, else append's way) */
        if (VT__UNLIKELY(!in_block(me, w, size))) {
            release(me, 1, 0);
            int rc = append(type, flags, p, n, NULL, 0, NULL, 0);
            if (rc)
                vt__writer_dropped();
            return rc;
        }
        return block_store(me, w, size, type, flags, p, n, NULL, 0, NULL, 0);
    }
    uint64_t pos = atomic_fetch_add_explicit(&w->used, size, memory_order_acq_rel);
    if (VT__UNLIKELY(pos + size > w->limit)) {
        int rc = past_end(w, pos, size, me, 1);
        if (!rc) /* retried as append's loop would: its slot is free again */
            rc = append(type, flags, p, n, NULL, 0, NULL, 0);
        if (rc)
            vt__writer_dropped();
        return rc;
    }
    vt__put_record(w->base + pos, size, type, flags, p, n, NULL, 0, NULL, 0);
    return stored(me, 1, w, pos, size, type);
}

int vt__write_event_32(uint16_t type, uint16_t flags, const void *p)
{
    return write_event(type, flags, p, 32);
}

int vt__write_event_16(uint16_t type, uint16_t flags, const void *p)
{
    return write_event(type, flags, p, 16);
}

int vt__write_event_n(uint16_t type, uint16_t flags, const void *p, size_t n)
{
    return write_event(type, flags, p, n);
}

/* vt__encode_strings: (u32 len, bytes) for each string into buf; the byte count, or 0 when
 * not even every length fits (strings cut at the end keep room for the lengths after them, so
 * every string is there, perhaps cut or empty; never overrun). */
size_t vt__encode_strings(char *buf, size_t cap, const char *const *strs, const uint32_t *lens,
                          int nstrs)
{
    size_t n = 0;
    for (int i = 0; i < nstrs; i++) {
        const char *s = strs[i] ? strs[i] : "";
        uint32_t len = lens ? lens[i] : (uint32_t)strlen(s);
        size_t later = 4 * (size_t)(nstrs - 1 - i); /* the lengths of the strings after it */
        if (n + 4 + later > cap)
            return 0;
        if (len > cap - n - 4 - later)
            len = (uint32_t)(cap - n - 4 - later);
        memcpy(buf + n, &len, 4);
        memcpy(buf + n + 4, s, len);
        n += 4 + len;
    }
    return n;
}

int vt__write_strings(uint16_t type, uint16_t flags, const void *fixed, size_t nfixed,
                      const char *const *strs, const uint32_t *lens, int nstrs)
{
    size_t total = 0;
    for (int i = 0; i < nstrs; i++)
        total += 4 + (lens ? lens[i] : (strs[i] ? strlen(strs[i]) : 0));
    size_t lim = vt__writer_rec_max(); /* a chunked trace's slot, not only the format's bound */
    size_t cap = lim > 64 + nfixed ? lim - 64 - nfixed : 0;
    if (total > cap)
        total = cap;
    char small[1024];
    char *buf = total <= sizeof small ? small : malloc(total);
    if (!buf)
        return -1;
    size_t n = vt__encode_strings(buf, total, strs, lens, nstrs);
    int rc = write3(type, flags, fixed, nfixed, buf, n, NULL, 0);
    if (buf != small)
        free(buf);
    return rc;
}

void vt__writer_note_truncated_stack(void)
{
    atomic_fetch_add_explicit(&vt__ws.stacks_truncated, 1, memory_order_relaxed);
}

size_t vt__writer_rec_max(void)
{
    return vt__ws.rec_max;
}

const char *vt__writer_path(void)
{
    return atomic_load(&vt__ws.state) == W_UNOPENED ? NULL : vt__ws.path;
}

void vt__writer_counts(uint64_t *events, uint64_t *dropped)
{
    uint64_t records;
    pthread_mutex_lock(&vt__ws.lock);
    vt__window_totals_locked(&records, events);
    pthread_mutex_unlock(&vt__ws.lock);
    *dropped = atomic_load(&vt__ws.n_dropped);
}
