/* writer_window.c — the trace file's windows: blocks reserved with posix_fallocate, mapped
 * MAP_SHARED (the next one made ahead), walked for stored headers and unmapped once retired;
 * also the writer's shared state, system-call seam and time origin. Records and opening are
 * writer.c; the trailer, close, exec and fork are writer_end.c. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/attr.h"
#include "core/config.h"
#include "core/quietio.h"
#include "vramtrace/trace_format.h"
#include "writer.h"
#include "writer_internal.h"

static int sys_open(const char *p, int flags, mode_t mode)
{
    return open(p, flags, mode);
}
/* fallocate and ftruncate are where a file-size limit (`ulimit -f`) strikes: with SIGXFSZ
 * blocked around them they fail with EFBIG instead of killing the program (quietio.h) */
static int sys_fallocate(int fd, off_t off, off_t len)
{
    vt__quiet q;
    vt__quiet_begin(&q);
    int e = posix_fallocate(fd, off, len);
    vt__quiet_end(&q);
    return e;
}
static void *sys_mmap(size_t len, int fd, off_t off)
{
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
}
static int sys_munmap(void *p, size_t len)
{
    return munmap(p, len);
}
static int sys_ftruncate(int fd, off_t len)
{
    vt__quiet q;
    vt__quiet_begin(&q);
    int r = ftruncate(fd, len);
    vt__quiet_end(&q);
    return r;
}
static int sys_close(int fd)
{
    return close(fd);
}

vt__sys vt__sys_ops = {sys_open, sys_fallocate, sys_mmap, sys_munmap, sys_ftruncate, sys_close};

vt__writer_state vt__ws = {
    .lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    .cur_changed = PTHREAD_COND_INITIALIZER,
    .fd = -1,
    .next_len = WINDOW_FIRST,
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* vt__writer_start_clock: see writer_internal.h. */
void vt__writer_start_clock(void)
{
    if (!__atomic_load_n(&vt__ws.start_mono, __ATOMIC_ACQUIRE)) {
        vt__ws.start_real = clock_ns(CLOCK_REALTIME);
        __atomic_store_n(&vt__ws.start_mono, clock_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
    }
}

uint64_t vt__now_ns(void)
{
    uint64_t s = __atomic_load_n(&vt__ws.start_mono, __ATOMIC_ACQUIRE);
    if (VT__UNLIKELY(!s)) {
        vt__writer_start_clock();
        s = __atomic_load_n(&vt__ws.start_mono, __ATOMIC_ACQUIRE);
    }
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    return now > s ? now - s : 0;
}

/* vt__writer_strerror: strerror, EFBIG named for what it is here: the file-size limit. */
const char *vt__writer_strerror(int err)
{
    return err == EFBIG ? "File too large (the process's file-size limit, ulimit -f)"
                        : strerror(err);
}

/* vt__writer_warn_once_why: see writer_internal.h. The path is escaped (it comes from the
 * environment); never a signal (quietio.h). */
void vt__writer_warn_once_why(const char *what, const char *why)
{
    if (vt__ws.warned)
        return;
    vt__ws.warned = 1;
    char esc[600];
    vt__config_escape(vt__ws.path[0] ? vt__ws.path : "(trace file)", esc, sizeof esc);
    vt__quiet_stderr("vramtrace: %s %s: %s; tracing stopped, the program continues\n", what, esc,
                     why);
}

void vt__writer_warn_once(const char *what, int err)
{
    vt__writer_warn_once_why(what, vt__writer_strerror(err));
}

/* ---- windows ---------------------------------------------------------------------------- */

/* vt__window_set_cur_locked: where records go from now on; wakes the writers waiting for a switch.
 */
void vt__window_set_cur_locked(window *w)
{
    atomic_store_explicit(&vt__ws.cur, w, memory_order_release);
    pthread_cond_broadcast(&vt__ws.cur_changed);
}

void vt__window_drop_spare(void)
{
    if (vt__ws.spare.map)
        vt__sys_ops.munmap(vt__ws.spare.map, (size_t)(vt__ws.spare.end - vt__ws.spare.map_off));
    vt__ws.spare.map = NULL;
}

/* vt__window_scan_locked: walks w's headers from where the last walk stopped, counting records, up
 * to `upto` bytes from base; stops at a header not stored yet (a record in flight). 1 when it
 * reached upto. Past the seal it never goes: those bytes belong to the next window (and
 * stay zero while vt__ws.lock is held, since only a holder of it publishes the next window). */
int vt__window_scan_locked(window *w, uint64_t upto)
{
    while (w->scanned < upto) {
        uint64_t h = __atomic_load_n((uint64_t *)(void *)(w->base + w->scanned), __ATOMIC_ACQUIRE);
        if ((h >> 32) < 8) /* 0: in flight (a size below 8 is never written) */
            return 0;
        w->n_records++;
        w->n_events += (uint16_t)h == VT_REC_ALLOC || (uint16_t)h == VT_REC_FREE;
        w->scanned += h >> 32;
    }
    return 1;
}

/* scan_end: how far w's records can reach: its seal, or while it is open what is reserved. */
static uint64_t scan_end(window *w)
{
    uint64_t s = atomic_load(&w->sealed), u = atomic_load(&w->used);
    return s != UNSEALED ? s : u < w->limit ? u : w->limit;
}

/* vt__window_sweep_locked: unmaps the retired windows in which every accepted record is written.
 * Done while mapping the next window (prepare_next) and at the end, never on a writer's path: an
 * munmap waits for the mmap lock, which faulting a new window in holds. vt__ws.lock held. */
void vt__window_sweep_locked(void)
{
    for (window **pw = &vt__ws.retired; *pw;) {
        window *w = *pw;
        if (vt__window_scan_locked(w, atomic_load(&w->sealed))) {
            vt__sys_ops.munmap(w->map, w->map_len);
            w->unmapped = 1;
            *pw = w->next_retired;
        } else {
            pw = &w->next_retired;
        }
    }
}

/* vt__window_retire_locked: w is sealed and its switcher / closer is done with it. vt__ws.lock
 * held. */
void vt__window_retire_locked(window *w)
{
    w->next_retired = vt__ws.retired;
    vt__ws.retired = w;
}

/* map_range: reserves blocks up to at least min_end (up to want_end if the disk allows:
 * the request is halved on ENOSPC) and maps [map_off, end), faulted in at once. vt__ws.lock held.
 * The mapping (*end set), or NULL with *err. */
static char *map_range(uint64_t map_off, uint64_t min_end, uint64_t want_end, uint64_t *end_out,
                       int *err)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t end = want_end < min_end ? min_end : want_end;
    while (end > vt__ws.reserved) {
        int e = vt__sys_ops.fallocate(vt__ws.fd, (off_t)vt__ws.reserved,
                                      (off_t)(end - vt__ws.reserved));
        if (!e) {
            vt__ws.reserved = end;
            break;
        }
        if ((e != ENOSPC && e != EFBIG && e != EDQUOT) || end <= min_end) {
            *err = e;
            return NULL;
        }
        uint64_t next = vt__round_up(vt__ws.reserved + (end - vt__ws.reserved) / 2, page);
        end = next < end && next > min_end ? next : min_end;
    }
    errno = 0;
    void *p = vt__sys_ops.mmap((size_t)(end - map_off), vt__ws.fd, (off_t)map_off);
    if (p == MAP_FAILED || !p) {
        *err = errno ? errno : ENOMEM;
        return NULL;
    }
#ifdef MADV_POPULATE_WRITE
    /* faulted in now rather than a page fault every 4 KiB on the writers' path (concurrent
     * faults on one file serialize); by 256 KiB so the process's mmap lock is never held
     * long; older kernels: ignored */
    for (uint64_t o = 0; o < end - map_off; o += 256u << 10) {
        uint64_t n = end - map_off - o < (256u << 10) ? end - map_off - o : (256u << 10);
        if (madvise((char *)p + o, (size_t)n, MADV_POPULATE_WRITE))
            break;
    }
#endif
    *end_out = end;
    return p;
}

/* window_at: the descriptor of a window over the mapping [map_off, end) whose records start
 * at file offset start. vt__ws.lock held. NULL (and the mapping undone) when out of memory. */
static window *window_at(char *map, uint64_t map_off, uint64_t end, uint64_t start)
{
    window *w = aligned_alloc(64, (sizeof(window) + 63) & ~(size_t)63);
    if (!w) {
        vt__sys_ops.munmap(map, (size_t)(end - map_off));
        return NULL;
    }
    memset(w, 0, sizeof *w);
    w->map = map;
    w->map_off = map_off;
    w->map_len = (size_t)(end - map_off);
    w->start = start;
    w->base = w->map + (start - map_off);
    w->limit = end - TRAILER_ROOM - start;
    w->half = w->limit / 2;
    atomic_init(&w->sealed, UNSEALED);
    w->next_all = vt__ws.all;
    vt__ws.all = w;
    if (vt__ws.next_len < WINDOW_MAX)
        vt__ws.next_len *= 2;
    return w;
}

/* vt__window_new: a window whose records start at `start`, holding at least `need` bytes and a
 * trailer: the spare when it covers that, else mapped now. vt__ws.lock held. NULL with *err. */
window *vt__window_new(uint64_t start, uint64_t need, int *err)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (vt__ws.spare.map && vt__ws.spare.map_off <= start &&
        start + need + TRAILER_ROOM <= vt__ws.spare.end) {
        window *w = window_at(vt__ws.spare.map, vt__ws.spare.map_off, vt__ws.spare.end, start);
        vt__ws.spare.map = NULL;
        *err = ENOMEM;
        return w;
    }
    vt__window_drop_spare();
    uint64_t map_off = start & ~(page - 1), end;
    char *p = map_range(map_off, vt__round_up(start + need + TRAILER_ROOM, page),
                        vt__round_up(start + vt__ws.next_len, page), &end, err);
    if (!p)
        return NULL;
    *err = ENOMEM;
    return window_at(p, map_off, end, start);
}

/* vt__window_prepare_next: maps the window after w ahead of time (called once w is half full), so
 * the switch is a pointer swap and writers do not wait for fallocate / mmap / faults. The next
 * window starts where w is sealed, somewhere past its half: the spare covers from there. */
void vt__window_prepare_next(window *w)
{
    pthread_mutex_lock(&vt__ws.lock);
    if (atomic_load(&vt__ws.cur) == w && !vt__ws.spare.map) {
        vt__window_sweep_locked();
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t w_end = w->start + w->limit + TRAILER_ROOM;
        uint64_t map_off = (w->start + w->half) & ~(page - 1), end;
        int err = 0;
        char *p = map_range(map_off, vt__round_up(w_end + page, page),
                            vt__round_up(w_end + vt__ws.next_len, page), &end, &err);
        if (p) { /* on failure the switch tries again and reports it */
            vt__ws.spare.map = p;
            vt__ws.spare.map_off = map_off;
            vt__ws.spare.end = end;
        }
    }
    pthread_mutex_unlock(&vt__ws.lock);
}

/* vt__window_totals_locked: records and ALLOC/FREE events written so far (walks what is not
 * walked). */
void vt__window_totals_locked(uint64_t *records, uint64_t *events)
{
    *records = *events = 0;
    for (window *w = vt__ws.all; w; w = w->next_all) {
        if (!w->unmapped)
            vt__window_scan_locked(w, scan_end(w));
        *records += w->n_records;
        *events += w->n_events;
    }
}
