/* writer_state.c — what every writer file shares and nothing calls down from: the state of the
 * one trace file (vt__ws), the system-call seam (vt__sys_ops: tests inject ENOSPC), the time
 * origin, the one warning, a window descriptor made over a mapping, and the count of events
 * lost (into the ended trace's trailer for those after it). Windows are
 * writer_window.c, slots of the chunked layout writer_slots.c. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/attr.h"
#include "core/config.h"
#include "core/output.h"
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
/* sys_mmap: a shared mapping of [off, off + len); one of 2 MiB or more is placed where its
 * address and file offset agree modulo 2 MiB and asked for huge pages, so the kernel can map
 * the file's large folios whole: in a virtual machine with shadow page tables the first store
 * into each 4 KiB page is a trap to the hypervisor (~3.4 us, 27 ns per 32-byte record measured
 * on the build machine), into each 2 MiB page 512 times fewer. Where the kernel or file system
 * has no large folios this is a plain mapping. */
static void *sys_mmap(size_t len, int fd, off_t off)
{
    if (len < HUGE_SPAN)
        return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    char *r = mmap(NULL, len + HUGE_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    uintptr_t want = (uintptr_t)off & (HUGE_SPAN - 1);
    uintptr_t at = ((uintptr_t)r & ~(uintptr_t)(HUGE_SPAN - 1)) + want;
    if (at < (uintptr_t)r)
        at += HUGE_SPAN;
    void *p = mmap((void *)at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off);
    if (p == MAP_FAILED) {
        munmap(r, len + HUGE_SPAN);
        return p;
    }
    if (at > (uintptr_t)r) /* the reservation's parts before and after the mapping */
        munmap(r, at - (uintptr_t)r);
    if ((uintptr_t)r + len + HUGE_SPAN > at + len)
        munmap((char *)(at + len), (uintptr_t)r + len + HUGE_SPAN - (at + len));
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}
static int sys_munmap(void *p, size_t len)
{
    vt__populate_forget(p, len); /* (the helper never faults in what is not the trace's) */
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

int vt__writer_fd_note(int fd)
{
    struct stat st;
    vt__ws.fd_dev = 0;
    vt__ws.fd_ino = 0;
    if (!fstat(fd, &st)) {
        vt__ws.fd_dev = st.st_dev;
        vt__ws.fd_ino = st.st_ino;
    }
    return vt__fd_high(fd, 1); /* (a low limit on descriptors: it stays where it is) */
}

int vt__writer_fd_quiet(void)
{
    int fd = vt__ws.fd;
    struct stat st;
    if (fd < 0)
        return -1;
    if (!fstat(fd, &st) && st.st_dev == vt__ws.fd_dev && st.st_ino == vt__ws.fd_ino)
        return fd;
    vt__ws.fd = -1; /* the program's now: never used again */
    errno = EBADF;
    return -1;
}

int vt__writer_fd(void)
{
    int had = vt__ws.fd, fd = vt__writer_fd_quiet();
    if (fd < 0 && had >= 0) {
        vt__writer_warn_once_why("cannot write", "the program closed its file descriptor or put "
                                                 "another file in its place");
        errno = EBADF;
    }
    return fd;
}

vt__sys vt__sys_ops = {sys_open, sys_fallocate, sys_mmap, sys_munmap, sys_ftruncate, sys_close};

vt__writer_state vt__ws = {
    .lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    .cur_changed = PTHREAD_COND_INITIALIZER,
    .pack_cond = PTHREAD_COND_INITIALIZER,
    .fd = -1,
    .next_len = WINDOW_FIRST,
    .rec_max = VT_REC_MAX_SIZE,
};

/* ---- the writing threads' slots (writer_internal.h) ------------------------------------ */

vt__wslots vt__wsl;
__thread vt__wslot *vt__wslot_mine;
__thread uint32_t vt__wslots_shared_mine;

/* slots_used: how many slots are handed out (the counter runs past VT__WSLOTS once they all
 * are) */
static uint32_t slots_used(void)
{
    uint32_t n = atomic_load(&vt__wsl.used);
    return n < VT__WSLOTS ? n : VT__WSLOTS;
}

vt__wslot *vt__wslot_take(void)
{
    if (atomic_load_explicit(&vt__wsl.used, memory_order_relaxed) >= VT__WSLOTS)
        return NULL;
    uint32_t i = atomic_fetch_add(&vt__wsl.used, 1);
    if (i >= VT__WSLOTS) {
        atomic_store(&vt__wsl.used, VT__WSLOTS);
        return NULL;
    }
    vt__wslot_mine = &vt__wsl.slot[i];
    return vt__wslot_mine;
}

int vt__wslots_hold(const window *w)
{
    if (atomic_load_explicit(&vt__wsl.busy, memory_order_acquire) > vt__wslots_shared_mine)
        return 1;
    uint32_t n = slots_used();
    for (uint32_t i = 0; i < n; i++)
        if (&vt__wsl.slot[i] != vt__wslot_mine) {
            const window *in = atomic_load_explicit(&vt__wsl.slot[i].in, memory_order_acquire);
            if (w ? in == w : in != NULL)
                return 1;
        }
    return 0;
}

void vt__wslots_totals(uint64_t *records, uint64_t *events)
{
    uint64_t r = atomic_load(&vt__wsl.records), e = atomic_load(&vt__wsl.events);
    uint32_t n = slots_used();
    for (uint32_t i = 0; i < n; i++) {
        r += atomic_load_explicit(&vt__wsl.slot[i].records, memory_order_relaxed);
        e += atomic_load_explicit(&vt__wsl.slot[i].events, memory_order_relaxed);
    }
    *records = r;
    *events = e;
}

int vt__ws_lock_mine(void)
{
    return vt__ws.lock.__data.__owner == (int)syscall(SYS_gettid);
}

int vt__ws_unlock_all(void)
{
    int n = 0;
    while (n < 64 && vt__ws_lock_mine()) {
        pthread_mutex_unlock(&vt__ws.lock);
        n++;
    }
    return n;
}

void vt__ws_relock(int n)
{
    while (n-- > 0)
        pthread_mutex_lock(&vt__ws.lock);
}

void vt__wslots_forget(void)
{
    uint32_t n = slots_used();
    for (uint32_t i = 0; i < n; i++) {
        atomic_store_explicit(&vt__wsl.slot[i].in, NULL, memory_order_relaxed);
        atomic_store_explicit(&vt__wsl.slot[i].records, 0, memory_order_relaxed);
        atomic_store_explicit(&vt__wsl.slot[i].events, 0, memory_order_relaxed);
        vt__wsl.slot[i].bwin = 0; /* (a block of the parent's file) */
    }
    atomic_store(&vt__wsl.busy, 0);
    atomic_store(&vt__wsl.records, 0);
    atomic_store(&vt__wsl.events, 0);
    vt__wslots_shared_mine = 0;
}

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

/* vt__writer_strerror: an error's description (untranslated: strerror may load the locale's
 * catalog, with malloc, and a failed exec's window may fail inside a signal handler that
 * interrupted malloc), EFBIG named for what it is here: the file-size limit. */
const char *vt__writer_strerror(int err)
{
    const char *d = err == EFBIG ? "File too large (the process's file-size limit, ulimit -f)"
                                 : strerrordesc_np(err);
    return d ? d : "Unknown error";
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

/* desc_new: a window descriptor: from malloc, or with vt__ws.no_alloc (a failed exec's) on an
 * anonymous page of its own: that exec may come from a signal handler that interrupted the
 * program inside malloc, holding its lock (a threaded process's), and an allocation there waited
 * for ever (host_cases sigexecfailmt: 14 of 40 runs); mmap takes no lock of the program's. */
static window *desc_new(int *own_page)
{
    *own_page = vt__ws.no_alloc;
    if (!*own_page)
        return aligned_alloc(64, (sizeof(window) + 63) & ~(size_t)63);
    _Static_assert(sizeof(window) <= DESC_PAGE, "a descriptor fits in its page");
    void *p = mmap(NULL, DESC_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* vt__window_make: the descriptor of a window over the mapping [map_off, end) whose records start
 * at file offset start. vt__ws.lock held. NULL when out of memory, the mapping left to the caller
 * to undo (a bounded trace's slot is released through it: it had been unmapped here, then written
 * into and unmapped again, the host killed by SIGSEGV under ulimit -v). */
window *vt__window_make(char *map, uint64_t map_off, uint64_t end, uint64_t start)
{
    int own_page;
    window *w = desc_new(&own_page);
    if (!w)
        return NULL;
    memset(w, 0, sizeof *w);
    w->own_page = own_page;
    w->map = map;
    w->map_off = map_off;
    w->map_len = (size_t)(end - map_off);
    w->start = start;
    w->base = w->map + (start - map_off);
    w->limit = end - TRAILER_ROOM - start;
    w->half = w->limit / 2;
    w->seq = ++vt__ws.n_windows;
    atomic_init(&w->sealed, UNSEALED);
    w->next_all = vt__ws.all;
    vt__ws.all = w;
    if (vt__ws.next_len < WINDOW_MAX)
        vt__ws.next_len *= 2;
    return w;
}

/* ---- events after the trailer ---------------------------------------------------------------
 * An event made once the trace has ended (other threads still running while the process exits
 * or execs) had no place and no count: it vanished. Its drop is counted in n_dropped, then the
 * ended trace's trailer (mapped until the process ends) is raised to that count; the trailer's
 * writer pushes the count once more after publishing it, so no drop falls between the two. */
static void late_push(void)
{
    if (!atomic_load(&vt__ws.late)) /* (the drops of an open trace: nothing shared more) */
        return;
    atomic_fetch_add(&vt__ws.late_busy, 1); /* (loaded again: a failed exec may take it back) */
    uint64_t *p = atomic_load(&vt__ws.late);
    if (p) {
        uint64_t v = atomic_load(&vt__ws.n_dropped), cur = __atomic_load_n(p, __ATOMIC_RELAXED);
        while (cur < v &&
               !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    }
    atomic_fetch_sub(&vt__ws.late_busy, 1);
}

void vt__writer_dropped(void)
{
    atomic_fetch_add(&vt__ws.n_dropped, 1);
    late_push();
}

void vt__writer_late_at(char *rec)
{
    uint64_t h = __atomic_load_n((uint64_t *)(void *)rec, __ATOMIC_ACQUIRE);
    if ((uint16_t)h != VT_REC_TRAILER || h >> 32 != TRAILER_ROOM)
        return;
    atomic_store(&vt__ws.late, (uint64_t *)(void *)(rec + 8 + offsetof(vt_rec_trailer, n_dropped)));
    late_push(); /* the drops counted since the trailer read n_dropped */
}

void vt__writer_note_late(void)
{
    int s = atomic_load_explicit(&vt__ws.state, memory_order_relaxed);
    if ((s == W_CLOSED || s == W_EXEC) && !vt__config_get()->disabled &&
        !(vt__ws.owner && !*vt__ws.owner)) /* (not a child made without fork()'s handlers) */
        vt__writer_dropped();
}

void vt__writer_note_no_helper(void)
{
    atomic_fetch_or(&vt__ws.lost_why, VT_TRAILER_NO_HELPER);
}
