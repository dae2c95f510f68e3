/* writer_window.c — the trace file's windows: blocks reserved with posix_fallocate, mapped
 * MAP_SHARED (the next one made ahead), walked for stored headers and unmapped once retired.
 * The writer's shared state, system-call seam and time origin are writer_state.c; records and
 * opening writer.c; the trailer, close, exec and fork writer_end.c; the chunked layout's slots
 * writer_slots.c. */
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

/* vt__window_sweep_locked: unmaps the retired windows no writer is storing a record into (no
 * thread's slot holds them: writer_internal.h). Done while mapping the next window
 * (prepare_next) and at the end, never on a writer's path: an munmap waits for the mmap lock,
 * which faulting a new window in holds. vt__ws.lock held. */
void vt__window_sweep_locked(void)
{
    for (window **pw = &vt__ws.retired; *pw;) {
        window *w = *pw;
        if (!vt__wslots_hold(w)) {
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
    if (vt__ws.chunked) { /* the packer's, oldest first: it unmaps the slot once packed */
        w->next_retired = NULL;
        if (vt__ws.pack_last)
            vt__ws.pack_last->next_retired = w;
        else
            vt__ws.pack_first = w;
        vt__ws.pack_last = w;
        pthread_cond_broadcast(&vt__ws.pack_cond);
        return;
    }
    w->next_retired = vt__ws.retired;
    vt__ws.retired = w;
}

/* map_range: reserves blocks up to at least min_end (up to want_end if the disk allows:
 * the request is halved on ENOSPC) and maps [*map_off, end), faulted in at once. A range of a
 * huge page or more is widened to huge-page boundaries first (*map_off lowered: those bytes
 * are mapped again, never written through this mapping), so all of it can be mapped with
 * huge pages (writer_state.c sys_mmap). vt__ws.lock held. The mapping (*end set), or NULL
 * with *err. */
static char *map_range(uint64_t *map_off_io, uint64_t min_end, uint64_t want_end, uint64_t *end_out,
                       int ahead, int *err)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t end = want_end < min_end ? min_end : want_end, map_off = *map_off_io;
    if (end - map_off >= HUGE_SPAN) {
        map_off &= ~(uint64_t)(HUGE_SPAN - 1);
        end = vt__round_up(end, HUGE_SPAN);
    }
    int fd = vt__writer_fd(); /* still the trace's file (the program may reuse its number) */
    if (fd < 0) {
        *err = EBADF;
        return NULL;
    }
    while (end > vt__ws.reserved) {
        int e = vt__sys_ops.fallocate(fd, (off_t)vt__ws.reserved, (off_t)(end - vt__ws.reserved));
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
    void *p = vt__sys_ops.mmap((size_t)(end - map_off), fd, (off_t)map_off);
    if (p == MAP_FAILED || !p) {
        *err = errno ? errno : ENOMEM;
        return NULL;
    }
    vt__populate(p, end - map_off, ahead); /* faulted in before the writers store into it */
    *end_out = end;
    *map_off_io = map_off;
    return p;
}

/* vt__window_new: a window whose records start at `start`, holding at least `need` bytes and a
 * trailer: the spare when it covers that, else mapped now. vt__ws.lock held. NULL with *err. */
window *vt__window_new(uint64_t start, uint64_t need, int *err)
{
    if (vt__ws.chunked)
        return vt__slot_window_new_locked(need, err);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (vt__ws.spare.map && vt__ws.spare.map_off <= start &&
        start + need + TRAILER_ROOM <= vt__ws.spare.end) {
        window *w =
            vt__window_make(vt__ws.spare.map, vt__ws.spare.map_off, vt__ws.spare.end, start);
        if (!w)
            vt__sys_ops.munmap(vt__ws.spare.map, (size_t)(vt__ws.spare.end - vt__ws.spare.map_off));
        vt__ws.spare.map = NULL;
        *err = ENOMEM;
        return w;
    }
    vt__window_drop_spare();
    uint64_t map_off = start & ~(page - 1), end;
    char *p = map_range(&map_off, vt__round_up(start + need + TRAILER_ROOM, page),
                        vt__round_up(start + vt__ws.next_len, page), &end, 0, err);
    if (!p)
        return NULL;
    *err = ENOMEM;
    window *w = vt__window_make(p, map_off, end, start);
    if (!w)
        vt__sys_ops.munmap(p, (size_t)(end - map_off));
    return w;
}

/* vt__window_prepare_next: maps the window after w ahead of time (called once w is half full), so
 * the switch is a pointer swap and writers do not wait for fallocate / mmap / faults. The next
 * window starts where w is sealed, somewhere past its half: the spare covers from there. */
void vt__window_prepare_next(window *w)
{
    pthread_mutex_lock(&vt__ws.lock);
    if (vt__ws.chunked) {
        if (atomic_load(&vt__ws.cur) == w)
            vt__slot_prepare_locked();
    } else if (atomic_load(&vt__ws.cur) == w && !vt__ws.spare.map) {
        vt__window_sweep_locked();
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t w_end = w->start + w->limit + TRAILER_ROOM;
        uint64_t map_off = (w->start + w->half) & ~(page - 1), end;
        int err = 0;
        char *p = map_range(&map_off, vt__round_up(w_end + page, page),
                            vt__round_up(w_end + vt__ws.next_len, page), &end, 1, &err);
        if (p) { /* on failure the switch tries again and reports it */
            vt__ws.spare.map = p;
            vt__ws.spare.map_off = map_off;
            vt__ws.spare.end = end;
        }
    }
    pthread_mutex_unlock(&vt__ws.lock);
}

/* vt__window_totals_locked: records and ALLOC/FREE events written so far: the writing threads'
 * counts, or in the chunked layout the packer's walks over its raw windows (and a walk over
 * what is not walked yet). */
void vt__window_totals_locked(uint64_t *records, uint64_t *events)
{
    if (!vt__ws.chunked) {
        vt__wslots_totals(records, events);
        return;
    }
    *records = *events = 0;
    for (window *w = vt__ws.all; w; w = w->next_all) {
        if (!w->unmapped)
            vt__window_scan_locked(w, scan_end(w));
        *records += w->n_records;
        *events += w->n_events;
    }
}
