/* writer_slots.c — the slot grid of a chunked trace (trace_format.h, CHUNKED LAYOUT): which
 * slots are free, a slot mapped MAP_SHARED over blocks reserved with posix_fallocate, a raw
 * slot made the writers' window (its SLOT record written first) and the next one mapped ahead.
 * What goes into pack and summary slots is writer_pack.c's; the plain layout's windows are
 * writer_window.c's. Everything here runs under vt__ws.lock unless it says otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/config.h"
#include "core/quietio.h"
#include "vramtrace/trace_format.h"
#include "writer.h"
#include "writer_internal.h"
#include "writer_mem.h"

#define SLOT_MIN (256u << 10)
#define SLOT_MAX (4u << 20)
#define SLOT_MARGIN                                                                                \
    64u /* room a raw window leaves unused: a whole raw slot, stored as one CHUNK                  \
         * (56 bytes more), still fits a pack slot */

/* vt__slots_init_locked: see writer_internal.h. The slot size: a power of two, 1/32 of the
 * bound (256 KiB to 4 MiB), 1 MiB without a bound (a short run's file stays small). */
int vt__slots_init_locked(uint64_t max_size)
{
    uint64_t s = 1u << 20;
    if (max_size) {
        s = SLOT_MIN;
        while (s < SLOT_MAX && s * 2 <= max_size / 32)
            s *= 2;
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (s % page)
        s = vt__round_up(s, page);
    vt__ws.slot_size = s;
    vt__ws.max_size = max_size;
    vt__ws.max_slots = max_size ? max_size / s : UINT64_MAX;
    vt__ws.n_slots = 0;
    vt__ws.n_free = 0;
    vt__ws.raw_seq = 0;
    vt__ws.pack_first = vt__ws.pack_last = NULL;
    vt__ws.spare_slot.map = NULL;
    vt__ws.dropped_no_slot = 0;
    vt__ws.full_err = 0;
    if (!vt__ws.free_slots) {
        vt__ws.cap_free = 64;
        vt__ws.free_slots = vt__wm_alloc(vt__ws.cap_free * sizeof *vt__ws.free_slots);
        if (!vt__ws.free_slots)
            return -1;
    }
    vt__ws.chunked = 1;
    return 0;
}

uint64_t vt__slot_off(uint64_t i)
{
    return i ? i * vt__ws.slot_size : sizeof(vt_file_header);
}

uint64_t vt__slot_capacity(void)
{
    return vt__ws.slot_size - sizeof(vt_file_header) - VT_SLOT_REC_SIZE - TRAILER_ROOM -
           SLOT_MARGIN;
}

int64_t vt__slot_take_locked(void)
{
    if (vt__ws.n_free)
        return (int64_t)vt__ws.free_slots[--vt__ws.n_free];
    if (vt__ws.n_slots < vt__ws.max_slots)
        return (int64_t)vt__ws.n_slots++;
    return -1;
}

/* vt__slot_map: see writer_internal.h. Slot 0's mapping starts at the file's first byte (the
 * header); every other slot's at its own. Not under the lock: only its taker uses slot i. */
char *vt__slot_map(uint64_t i, int *err)
{
    uint64_t off = i * vt__ws.slot_size, len = vt__ws.slot_size;
    int fd = vt__writer_fd(); /* still the trace's file (the program may reuse its number) */
    int e = fd < 0 ? EBADF : vt__sys_ops.fallocate(fd, (off_t)off, (off_t)len);
    if (e) {
        *err = e;
        return NULL;
    }
    errno = 0;
    void *p = vt__sys_ops.mmap((size_t)len, fd, (off_t)off);
    if (p == MAP_FAILED || !p) {
        *err = errno ? errno : ENOMEM;
        return NULL;
    }
    vt__populate(p, len, 0); /* faulted in now, as a window is */
    return p;
}

void vt__slot_release_locked(uint64_t i, char *map)
{
    if (map) {
        char *first = map + (vt__slot_off(i) - i * vt__ws.slot_size);
        __atomic_store_n((uint64_t *)(void *)first, 0, __ATOMIC_RELEASE);
        vt__sys_ops.munmap(map, (size_t)vt__ws.slot_size);
    }
    if (vt__ws.n_free == vt__ws.cap_free) {
        uint64_t *n = vt__wm_realloc(vt__ws.free_slots, 2 * vt__ws.cap_free * sizeof *n);
        if (!n)
            return; /* out of memory: the slot stays unused (the file keeps its bound) */
        vt__ws.free_slots = n;
        vt__ws.cap_free *= 2;
    }
    vt__ws.free_slots[vt__ws.n_free++] = i;
}

/* disk_bound_said: the one warning that the disk or the file-size limit bounds the trace where
 * it stands (a bounded trace keeps what fits, as within a smaller --max-size; it had said
 * nothing) */
static void disk_bound_said(int err)
{
    char esc[600];
    vt__config_escape(vt__ws.path[0] ? vt__ws.path : "(trace file)", esc, sizeof esc);
    vt__quiet_stderr("vramtrace: %s: %s at %llu KiB: the trace keeps what fits there, the events "
                     "that do not are lost (the report counts them); the program continues\n",
                     esc, vt__writer_strerror(err),
                     (unsigned long long)(vt__ws.n_slots * vt__ws.slot_size >> 10));
}

/* vt__slot_map_failed_locked: see writer_internal.h. A bound met while the trace ends (the
 * packer's last slots, state W_CLOSED at the close, W_EXEC at an exec) is said as one met while
 * it runs; not while the file is created (said as that fails) nor after tracing stopped on an
 * error (said then). */
int vt__slot_map_failed_locked(uint64_t i, int err)
{
    if (i + 1 != vt__ws.n_slots || (err != ENOSPC && err != EFBIG && err != EDQUOT)) {
        vt__slot_release_locked(i, NULL);
        return 0;
    }
    vt__ws.n_slots--; /* the disk's bound: no slot past this one */
    vt__ws.max_slots = vt__ws.n_slots;
    /* (when no window is current, the packer's new one after records were dropped for want of a
     * slot: said, where it had been the one moment it was not, then never, the limit set: a CI
     * run's) */
    int st = atomic_load(&vt__ws.state);
    if (!vt__ws.full_err &&
        (atomic_load(&vt__ws.cur) || st == W_OPEN || st == W_CLOSED || st == W_EXEC))
        disk_bound_said(err);
    vt__ws.full_err = err; /* said by the trailer (DISK_FULL) */
    return 1;
}

int vt__slot_map_failed(uint64_t i, int err)
{
    pthread_mutex_lock(&vt__ws.lock);
    int bound = vt__slot_map_failed_locked(i, err);
    pthread_mutex_unlock(&vt__ws.lock);
    return bound;
}

/* take_and_map: a fresh slot mapped, or NULL (*err EAGAIN when none is free; a new slot the disk
 * has no room for makes the file's present size its bound). */
static char *take_and_map(uint64_t *slot, int *err)
{
    int64_t i = vt__slot_take_locked();
    if (i < 0) {
        *err = EAGAIN;
        return NULL;
    }
    char *p = vt__slot_map((uint64_t)i, err);
    if (!p) {
        if (vt__slot_map_failed_locked((uint64_t)i, *err))
            *err = EAGAIN;
        return NULL;
    }
    *slot = (uint64_t)i;
    return p;
}

void vt__slot_prepare_locked(void)
{
    if (vt__ws.spare_slot.map)
        return;
    int err = 0;
    uint64_t slot;
    char *p = take_and_map(&slot, &err);
    if (p) {
        vt__ws.spare_slot.map = p;
        vt__ws.spare_slot.slot = slot;
    }
}

window *vt__slot_window_new_locked(uint64_t need, int *err)
{
    if (need > vt__slot_capacity()) {
        *err = EFBIG;
        return NULL;
    }
    uint64_t slot;
    char *map = vt__ws.spare_slot.map;
    if (map) {
        slot = vt__ws.spare_slot.slot;
        vt__ws.spare_slot.map = NULL;
    } else if (!(map = take_and_map(&slot, err))) {
        return NULL;
    }
    uint64_t map_off = slot * vt__ws.slot_size, off = vt__slot_off(slot);
    vt_rec_slot sr = {++vt__ws.raw_seq,
                      vt__ws.slot_size,
                      vt__ws.max_size,
                      VT_SLOT_RAW,
                      0,
                      atomic_load(&vt__ws.n_dropped)};
    vt__put_record(map + (off - map_off), VT_SLOT_REC_SIZE, VT_REC_SLOT, 0, &sr, sizeof sr, NULL, 0,
                   NULL, 0);
    window *w = vt__window_make(map, map_off, map_off + vt__ws.slot_size, off + VT_SLOT_REC_SIZE);
    if (!w) {
        vt__slot_release_locked(slot, map);
        *err = ENOMEM;
        return NULL;
    }
    w->limit -= SLOT_MARGIN;
    w->half = w->limit / 2;
    w->slot = slot;
    w->raw_seq = sr.seq;
    return w;
}

/* vt__slot_wipe: slot i leaves the file's content: its SLOT header zeroed first (readers skip it
 * from then on; through map when it is mapped, then unmapped), the rest of its first page zeroed
 * and its other blocks punched out (zeros again; mapped anew, the slot is reserved again), or
 * zeros written where the file system has no holes. Slot 0 keeps the file header. */
void vt__slot_wipe(uint64_t i, char *map)
{
    static const char zeros[4096];
    uint64_t S = vt__ws.slot_size, page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t off = vt__slot_off(i), first = off - i * S, rest = i * S + page;
    int fd = vt__writer_fd(); /* the mapping is the trace's; the descriptor may not be */
    if (map) {
        __atomic_store_n((uint64_t *)(void *)(map + first), 0, __ATOMIC_RELEASE);
        memset(map + first, 0, (size_t)(page - first));
        vt__sys_ops.munmap(map, (size_t)S);
    } else {
        for (uint64_t o = off; o < rest; o += sizeof zeros)
            if (fd < 0 ||
                pwrite(fd, zeros, (size_t)(rest - o < sizeof zeros ? rest - o : sizeof zeros),
                       (off_t)o) < 0)
                break;
    }
    if (fd < 0 || fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)rest,
                            (off_t)(S - page)) == 0)
        return;
    for (uint64_t o = rest; o < (i + 1) * S; o += sizeof zeros)
        if (pwrite(fd, zeros, sizeof zeros, (off_t)o) < 0)
            break;
}

/* vt__slots_trim_locked: the free slots at the grid's end go (the writers' reserve, the spare):
 * the file ends at the last slot in use (a clean stop) */
void vt__slots_trim_locked(void)
{
    uint64_t end = vt__ws.n_slots;
    for (int again = 1; again && end > 1;) {
        again = 0;
        for (size_t i = 0; i < vt__ws.n_free; i++)
            if (vt__ws.free_slots[i] == end - 1)
                again = 1;
        if (vt__ws.spare_slot.map && vt__ws.spare_slot.slot == end - 1)
            again = 1;
        end -= again;
    }
    int fd = end < vt__ws.n_slots ? vt__writer_fd() : -1;
    if (fd >= 0)
        vt__sys_ops.ftruncate(fd, (off_t)(end * vt__ws.slot_size));
}
