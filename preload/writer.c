/* writer.c — the trace file: created at the first event (O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600),
 * written through MAP_SHARED windows over space reserved with posix_fallocate (records reach
 * the page cache as they are made and survive SIGKILL; a full disk is an error value, never a
 * SIGBUS), a trailer on a clean stop, a full disk or an exec. System calls go through vt__sys so
 * tests inject ENOSPC. The record layout itself is include/vramtrace/trace_format.h.
 *
 * No lock per record: a writer reserves its bytes with one fetch_add on the current window's
 * `used`, copies the payload and stores the header last (release); that is all it shares.
 * The reservation that runs past the window's end seals it (`sealed` = where it stopped) and
 * switches to the next window (mapped ahead when the current one was half full) under
 * g_lock, which is taken only to open, switch, close or exec; writers that overflowed sleep
 * until then and retry. A retired window is unmapped once a walk over its headers finds
 * every record accepted in it stored (the same walk counts records for the trailer). Windows start small (64 KiB) and double up to 4 MiB, each keeping room for a
 * trailer, so a nearly full disk keeps what fits and ends with a DISK_FULL trailer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/output.h"
#include "vramtrace/trace_format.h"
#include "writer.h"

#define WINDOW_FIRST (64u << 10) /* the first window; each next one doubles ... */
#define WINDOW_MAX (4u << 20)    /* ... up to this */
#define TRAILER_ROOM (8u + (unsigned)sizeof(vt_rec_trailer))
#define UNSEALED UINT64_MAX
#define SEAL_BIAS (1ull << 62) /* added to `used` to seal a window from outside */

static int sys_open(const char *p, int flags, mode_t mode)
{
    return open(p, flags, mode);
}
static int sys_fallocate(int fd, off_t off, off_t len)
{
    return posix_fallocate(fd, off, len);
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
    return ftruncate(fd, len);
}
static int sys_close(int fd)
{
    return close(fd);
}

vt__sys vt__sys_ops = {sys_open, sys_fallocate, sys_mmap, sys_munmap, sys_ftruncate, sys_close};

enum { W_UNOPENED, W_OPEN, W_STOPPED, W_CLOSED, W_EXEC };

/* One mapped window of the file. Records go at base[pos] for pos in [0, limit); limit keeps
 * TRAILER_ROOM free after it, so a trailer always fits where the window was sealed.
 * Descriptors are never freed while other threads may hold one (a writer may still load a
 * window that was just switched away from; it then finds it sealed and retries). */
typedef struct window {
    char *map;        /* the mapping of [map_off, map_off + map_len) */
    char *base;       /* map + (start - map_off) */
    uint64_t map_off; /* page-aligned file offset of map[0] */
    uint64_t start;   /* file offset of base[0] (where the previous window was sealed) */
    uint64_t limit;   /* bytes usable by records from base */
    uint64_t half;    /* the reservation that crosses it maps the next window ahead */
    size_t map_len;
    _Atomic uint64_t sealed;  /* bytes accepted, UNSEALED until full, closed or paused */
    int unmapped;             /* (g_lock) */
    struct window *next_all;  /* every window of this file, newest first (g_lock) */
    struct window *next_retired; /* sealed, waiting for its last records (g_lock) */
    uint64_t scanned;             /* (g_lock) the walk over stored headers reached here, */
    uint64_t n_records, n_events; /* counting these (events: ALLOC / FREE) */
    alignas(64) _Atomic uint64_t used; /* bytes reserved (runs past limit once full); the
                                        * only word writers share, on its own cache line */
} window;

static pthread_mutex_t g_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP; /* recursive: the
                                        PROCESS record may switch windows while opening */
static _Atomic int g_state = W_UNOPENED;
static _Atomic(window *) g_cur; /* where records go now; NULL when not open (set: g_lock) */
static pthread_cond_t g_cur_changed = PTHREAD_COND_INITIALIZER;
static window *g_all;
static window *g_retired;
static window *g_exec_win;   /* the window holding the exec trailer (W_EXEC) */
static uint64_t g_exec_seal; /* where in it */
static int g_fd = -1;
static pid_t g_pid; /* the process that opened the file (a vfork child is not it) */
static uint64_t g_reserved; /* bytes of the file with blocks reserved (fallocate) */
static uint64_t g_next_len = WINDOW_FIRST;
static struct {
    char *map; /* NULL: none */
    uint64_t map_off, end;
} g_spare; /* the next window's mapping, made ahead (g_lock) */
static int g_warned;
static uint64_t g_start_mono, g_start_real;
/* counters written on the way (drops, cut stacks): each on its own cache line, away from
 * g_state / g_cur, which every record reads */
static alignas(64) _Atomic uint64_t g_n_dropped;
static alignas(64) _Atomic uint32_t g_stacks_truncated;
static char g_path[4200];

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* start_clock: the trace's time origin, fixed once per process (and again in a fork child). */
static void start_clock(void)
{
    if (!__atomic_load_n(&g_start_mono, __ATOMIC_ACQUIRE)) {
        g_start_real = clock_ns(CLOCK_REALTIME);
        __atomic_store_n(&g_start_mono, clock_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
    }
}

uint64_t vt__now_ns(void)
{
    uint64_t s = __atomic_load_n(&g_start_mono, __ATOMIC_ACQUIRE);
    if (VT__UNLIKELY(!s)) {
        start_clock();
        s = __atomic_load_n(&g_start_mono, __ATOMIC_ACQUIRE);
    }
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    return now > s ? now - s : 0;
}

/* warn_once: the one warning of an output failure (the program is never affected). */
static void warn_once(const char *what, int err)
{
    if (g_warned)
        return;
    g_warned = 1;
    fprintf(stderr, "vramtrace: %s %s: %s; tracing stopped, the program continues\n", what,
            g_path[0] ? g_path : "(trace file)", strerror(err));
}

static uint64_t round_up(uint64_t v, uint64_t page)
{
    return (v + page - 1) & ~(page - 1);
}

/* ---- windows ---------------------------------------------------------------------------- */

/* set_cur_locked: where records go from now on; wakes the writers waiting for a switch. */
static void set_cur_locked(window *w)
{
    atomic_store_explicit(&g_cur, w, memory_order_release);
    pthread_cond_broadcast(&g_cur_changed);
}

static void drop_spare(void)
{
    if (g_spare.map)
        vt__sys_ops.munmap(g_spare.map, (size_t)(g_spare.end - g_spare.map_off));
    g_spare.map = NULL;
}

/* scan_locked: walks w's headers from where the last walk stopped, counting records, up to
 * `upto` bytes from base; stops at a header not stored yet (a record in flight). 1 when it
 * reached upto. Past the seal it never goes: those bytes belong to the next window (and
 * stay zero while g_lock is held, since only a holder of it publishes the next window). */
static int scan_locked(window *w, uint64_t upto)
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

/* sweep_locked: unmaps the retired windows in which every accepted record is written. Done
 * while mapping the next window (prepare_next) and at the end, never on a writer's path: an
 * munmap waits for the mmap lock, which faulting a new window in holds. g_lock held. */
static void sweep_locked(void)
{
    for (window **pw = &g_retired; *pw;) {
        window *w = *pw;
        if (scan_locked(w, atomic_load(&w->sealed))) {
            vt__sys_ops.munmap(w->map, w->map_len);
            w->unmapped = 1;
            *pw = w->next_retired;
        } else {
            pw = &w->next_retired;
        }
    }
}

/* retire_locked: w is sealed and its switcher / closer is done with it. g_lock held. */
static void retire_locked(window *w)
{
    w->next_retired = g_retired;
    g_retired = w;
}

/* map_range: reserves blocks up to at least min_end (up to want_end if the disk allows:
 * the request is halved on ENOSPC) and maps [map_off, end), faulted in at once. g_lock held.
 * The mapping (*end set), or NULL with *err. */
static char *map_range(uint64_t map_off, uint64_t min_end, uint64_t want_end, uint64_t *end_out,
                       int *err)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t end = want_end < min_end ? min_end : want_end;
    while (end > g_reserved) {
        int e = vt__sys_ops.fallocate(g_fd, (off_t)g_reserved, (off_t)(end - g_reserved));
        if (!e) {
            g_reserved = end;
            break;
        }
        if ((e != ENOSPC && e != EFBIG && e != EDQUOT) || end <= min_end) {
            *err = e;
            return NULL;
        }
        uint64_t next = round_up(g_reserved + (end - g_reserved) / 2, page);
        end = next < end && next > min_end ? next : min_end;
    }
    errno = 0;
    void *p = vt__sys_ops.mmap((size_t)(end - map_off), g_fd, (off_t)map_off);
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
 * at file offset start. g_lock held. NULL (and the mapping undone) when out of memory. */
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
    w->next_all = g_all;
    g_all = w;
    if (g_next_len < WINDOW_MAX)
        g_next_len *= 2;
    return w;
}

/* window_new: a window whose records start at `start`, holding at least `need` bytes and a
 * trailer: the spare when it covers that, else mapped now. g_lock held. NULL with *err. */
static window *window_new(uint64_t start, uint64_t need, int *err)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (g_spare.map && g_spare.map_off <= start && start + need + TRAILER_ROOM <= g_spare.end) {
        window *w = window_at(g_spare.map, g_spare.map_off, g_spare.end, start);
        g_spare.map = NULL;
        *err = ENOMEM;
        return w;
    }
    drop_spare();
    uint64_t map_off = start & ~(page - 1), end;
    char *p = map_range(map_off, round_up(start + need + TRAILER_ROOM, page),
                        round_up(start + g_next_len, page), &end, err);
    if (!p)
        return NULL;
    *err = ENOMEM;
    return window_at(p, map_off, end, start);
}

/* prepare_next: maps the window after w ahead of time (called once w is half full), so the
 * switch is a pointer swap and writers do not wait for fallocate / mmap / faults. The next
 * window starts where w is sealed, somewhere past its half: the spare covers from there. */
static void prepare_next(window *w)
{
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_cur) == w && !g_spare.map) {
        sweep_locked();
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        uint64_t w_end = w->start + w->limit + TRAILER_ROOM;
        uint64_t map_off = (w->start + w->half) & ~(page - 1), end;
        int err = 0;
        char *p = map_range(map_off, round_up(w_end + page, page),
                            round_up(w_end + g_next_len, page), &end, &err);
        if (p) { /* on failure the switch tries again and reports it */
            g_spare.map = p;
            g_spare.map_off = map_off;
            g_spare.end = end;
        }
    }
    pthread_mutex_unlock(&g_lock);
}

/* put: one record at dst from up to three parts: payload, zero padding, then the header
 * with a release store, so a reader never sees a header before its payload. */
static void put(char *dst, size_t size, uint16_t type, uint16_t flags, const void *p1,
                size_t n1, const void *p2, size_t n2, const void *p3, size_t n3)
{
    char *q = dst + 8;
    if (n1)
        memcpy(q, p1, n1), q += n1;
    if (n2)
        memcpy(q, p2, n2), q += n2;
    if (n3)
        memcpy(q, p3, n3), q += n3;
    memset(q, 0, (size_t)(dst + size - q));
    uint64_t hdr = (uint64_t)type | ((uint64_t)flags << 16) | ((uint64_t)size << 32);
    __atomic_store_n((uint64_t *)(void *)dst, hdr, __ATOMIC_RELEASE);
}

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

/* drain: waits until every record accepted below s is written: microseconds, unless a writer
 * was descheduled mid-record; bounded (~1 s) all the same. */
static void drain(window *w, uint64_t s)
{
    for (int i = 0; !scan_locked(w, s) && i < 11000; i++) {
        if (i < 1000) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

/* totals_locked: records and ALLOC/FREE events written so far (walks what is not walked). */
static void totals_locked(uint64_t *records, uint64_t *events)
{
    *records = *events = 0;
    for (window *w = g_all; w; w = w->next_all) {
        if (!w->unmapped)
            scan_locked(w, scan_end(w));
        *records += w->n_records;
        *events += w->n_events;
    }
}

/* finish_locked: the trailer at w's seal s (room for it is always kept) and the file cut
 * right after it. The descriptor stays open (exec may fail and tracing resume). */
static void finish_locked(window *w, uint64_t s, uint16_t flags)
{
    drop_spare(); /* its blocks are cut off below */
    drain(w, s);
    uint64_t records, events;
    totals_locked(&records, &events);
    vt_rec_trailer t = {vt__now_ns(), events, atomic_load(&g_n_dropped), records,
                        atomic_load(&g_stacks_truncated), 0};
    put(w->base + s, TRAILER_ROOM, VT_REC_TRAILER, flags, &t, sizeof t, NULL, 0, NULL, 0);
    g_reserved = w->start + s + TRAILER_ROOM;
    vt__sys_ops.ftruncate(g_fd, (off_t)g_reserved);
}

static void close_fd(void)
{
    if (g_fd >= 0)
        vt__sys_ops.close(g_fd);
    g_fd = -1;
}

/* fail_locked: an output failure with the file open: tracing stops with one warning; the
 * trace keeps every record accepted and ends with a trailer saying why. g_cur is NULL. */
static void fail_locked(window *w, uint64_t s, const char *what, int err)
{
    atomic_store(&g_state, W_STOPPED);
    warn_once(what, err);
    int full = err == ENOSPC || err == EDQUOT || err == EFBIG;
    finish_locked(w, s, full ? VT_TRAILER_DISK_FULL : VT_TRAILER_OUTPUT_ERROR);
    close_fd();
    retire_locked(w);
    sweep_locked();
}

/* switch_window: w is full at s (the caller's reservation ran past it): the next window,
 * or the end of the trace on failure. 0: retry; -1: tracing stopped. */
static int switch_window(window *w, uint64_t s, uint64_t need)
{
    atomic_store(&w->sealed, s);
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_cur) != w) { /* closed or paused meanwhile: that path owns w */
        pthread_mutex_unlock(&g_lock);
        return 0;
    }
    int err = 0;
    window *nw = window_new(w->start + s, need, &err);
    if (!nw) {
        set_cur_locked(NULL);
        fail_locked(w, s, err == ENOSPC ? "disk full, cannot extend" : "cannot extend", err);
        pthread_mutex_unlock(&g_lock);
        return -1;
    }
    set_cur_locked(nw);
    retire_locked(w);
    pthread_mutex_unlock(&g_lock);
    return 0;
}

/* wait_switch: another thread is switching away from w; sleep until it is done (g_cur only
 * changes under g_lock, with a broadcast). */
static void wait_switch(window *w)
{
    pthread_mutex_lock(&g_lock);
    while (atomic_load(&g_cur) == w)
        pthread_cond_wait(&g_cur_changed, &g_lock);
    pthread_mutex_unlock(&g_lock);
}

/* append: one record from up to three parts, without a lock (see the top of this file).
 * 0, or -1 when tracing is off or output failed. */
static int append(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2,
                  size_t n2, const void *p3, size_t n3)
{
    size_t size = (8 + n1 + n2 + n3 + (VT_REC_ALIGN - 1)) & ~(size_t)(VT_REC_ALIGN - 1);
    if (size > VT_REC_MAX_SIZE) {
        atomic_fetch_add(&g_n_dropped, 1);
        return -1;
    }
    for (;;) {
        window *w = atomic_load_explicit(&g_cur, memory_order_acquire);
        if (VT__UNLIKELY(!w))
            return -1;
        uint64_t pos = atomic_fetch_add_explicit(&w->used, size, memory_order_relaxed);
        if (VT__LIKELY(pos + size <= w->limit)) {
            put(w->base + pos, size, type, flags, p1, n1, p2, n2, p3, n3);
            if (VT__UNLIKELY(pos < w->half && pos + size >= w->half))
                prepare_next(w);
            return 0;
        }
        if (pos <= w->limit) {
            if (switch_window(w, pos, size) < 0)
                return -1;
        } else {
            wait_switch(w);
        }
    }
}

/* ---- opening -------------------------------------------------------------------------- */

/* expand_path: the output template with %p (pid), %r ($RANK or 0) and %% replaced. */
static void expand_path(const char *tmpl, char *out, size_t cap)
{
    size_t n = 0;
    const char *rank = getenv("RANK");
    for (const char *s = tmpl; *s && n + 24 < cap; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            n += (size_t)snprintf(out + n, cap - n, "%d", (int)getpid());
            s++;
        } else if (s[0] == '%' && s[1] == 'r') {
            n += (size_t)snprintf(out + n, cap - n, "%.16s", rank && *rank ? rank : "0");
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            out[n++] = '%';
            s++;
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
}

/* create_file: O_EXCL; an existing name gets ".1", ".2", ... (never overwritten). */
static int create_file(const char *base)
{
    int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    for (int i = 0; i < 1000; i++) {
        if (i == 0)
            snprintf(g_path, sizeof g_path, "%s", base);
        else
            snprintf(g_path, sizeof g_path, "%.4096s.%d", base, i);
        int fd = vt__sys_ops.open(g_path, flags, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

static void note_in_manifest(const char *manifest)
{
    if (!manifest[0])
        return;
    char line[8400];
    int n;
    if (g_path[0] == '/') {
        n = snprintf(line, sizeof line, "%s\n", g_path);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd))
            cwd[0] = '\0';
        n = snprintf(line, sizeof line, "%s/%s\n", cwd, g_path);
    }
    int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return;
    if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) != n) {
        /* the trace still exists; `vramtrace run` just will not list it */
    }
    close(fd);
}

/* Set once by vt__writer_on_open before any thread writes. */
static void (*g_on_open)(void);

void vt__writer_on_open(void (*first_records)(void))
{
    g_on_open = first_records;
}

/* open_locked: creates the file, header, PROCESS and CONFIG records, then publishes the
 * state W_OPEN (other threads wait on g_lock until then, so PROCESS comes first). When not
 * even the first page can be reserved, the file is removed: no empty trace is left. */
static void open_locked(void)
{
    const vt__config *c = vt__config_get();
    char base[4200];
    expand_path(c->output, base, sizeof base);
    int fd = create_file(base);
    if (fd < 0) {
        atomic_store(&g_state, W_STOPPED);
        warn_once("cannot create", errno);
        return;
    }
    g_fd = fd;
    g_pid = getpid();
    g_reserved = 0;
    g_next_len = WINDOW_FIRST;
    start_clock();
    int err = 0;
    window *w = window_new(0, sizeof(vt_file_header), &err);
    if (!w) {
        atomic_store(&g_state, W_STOPPED);
        warn_once(err == ENOSPC ? "disk full, cannot create" : "cannot create", err);
        close_fd();
        unlink(g_path);
        return;
    }
    vt_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, VT_MAGIC, VT_MAGIC_LEN);
    h.major = VT_VERSION_MAJOR;
    h.minor = VT_VERSION_MINOR;
    h.header_size = sizeof h;
    h.start_realtime_ns = g_start_real;
    h.start_mono_ns = g_start_mono;
    memcpy(w->base, &h, sizeof h);
    atomic_store(&w->used, sizeof h);
    w->scanned = sizeof h;
    set_cur_locked(w);
    note_in_manifest(c->manifest);
    if (g_on_open)
        g_on_open();
    vt_rec_config cr = {c->card_bytes, (uint32_t)c->stack_mode, (uint32_t)c->stack_depth,
                        c->sample_ms, 0};
    uint32_t nlen = (uint32_t)strlen(c->card_name);
    append(VT_REC_CONFIG, 0, &cr, sizeof cr, &nlen, 4, c->card_name, nlen);
    if (atomic_load(&g_state) == W_UNOPENED)
        atomic_store(&g_state, W_OPEN);
}

int vt__writer_append_locked(uint16_t type, uint16_t flags, const void *p1, size_t n1,
                             const void *p2, size_t n2, const void *p3, size_t n3)
{
    return append(type, flags, p1, n1, p2, n2, p3, n3);
}

int vt__active(void)
{
    int s = atomic_load_explicit(&g_state, memory_order_relaxed);
    return (s == W_UNOPENED || s == W_OPEN || s == W_EXEC) && !vt__config_get()->disabled;
}

/* write3: the path behind vt__write and vt__write_strings; opens the file the first time. */
static int write3(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2,
                  size_t n2, const void *p3, size_t n3)
{
    if (vt__config_get()->disabled)
        return -1;
    int s = atomic_load_explicit(&g_state, memory_order_acquire);
    if (VT__UNLIKELY(s == W_UNOPENED)) {
        pthread_mutex_lock(&g_lock);
        if (atomic_load(&g_state) == W_UNOPENED)
            open_locked();
        s = atomic_load(&g_state);
        pthread_mutex_unlock(&g_lock);
    }
    int rc = s == W_OPEN ? append(type, flags, p1, n1, p2, n2, p3, n3) : -1;
    if (rc && (type == VT_REC_ALLOC || type == VT_REC_FREE))
        atomic_fetch_add_explicit(&g_n_dropped, 1, memory_order_relaxed);
    return rc;
}

int vt__write(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2, size_t n2)
{
    return write3(type, flags, p1, n1, p2, n2, NULL, 0);
}

/* vt__encode_strings: (u32 len, bytes) for each string into buf; the byte count, or 0 when
 * it does not fit (strings longer than the record limit are cut, never overrun). */
size_t vt__encode_strings(char *buf, size_t cap, const char *const *strs, const uint32_t *lens,
                          int nstrs)
{
    size_t n = 0;
    for (int i = 0; i < nstrs; i++) {
        const char *s = strs[i] ? strs[i] : "";
        uint32_t len = lens ? lens[i] : (uint32_t)strlen(s);
        if (n + 4 > cap)
            return 0;
        if (len > cap - n - 4)
            len = (uint32_t)(cap - n - 4);
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
    size_t cap = VT_REC_MAX_SIZE - 64 - nfixed;
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
    atomic_fetch_add_explicit(&g_stacks_truncated, 1, memory_order_relaxed);
}

/* ---- closing, exec ---------------------------------------------------------------------- */

void vt__writer_close(void)
{
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_state) == W_OPEN) {
        window *w = atomic_load(&g_cur);
        set_cur_locked(NULL);
        uint64_t s = seal(w);
        finish_locked(w, s, 0);
        close_fd();
        atomic_store(&g_state, W_CLOSED);
        retire_locked(w);
        sweep_locked();
    }
    pthread_mutex_unlock(&g_lock);
}

/* vt__writer_exec_prepare: before an exec: the trace ends here with an EXEC trailer and the
 * file cut after it (records made meanwhile on other threads are dropped). Not in a vfork
 * child (it shares the parent's memory but is not the process that owns the file). */
void vt__writer_exec_prepare(void)
{
    if (atomic_load(&g_state) != W_OPEN || getpid() != g_pid)
        return;
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_state) == W_OPEN) {
        window *w = atomic_load(&g_cur);
        set_cur_locked(NULL);
        atomic_store(&g_state, W_EXEC);
        g_exec_seal = seal(w);
        g_exec_win = w;
        finish_locked(w, g_exec_seal, VT_TRAILER_EXEC);
    }
    pthread_mutex_unlock(&g_lock);
}

/* vt__writer_exec_failed: the exec returned: the trailer is taken back and tracing goes on
 * in the same file (or, if the file cannot grow again, it ends there as DISK_FULL). */
void vt__writer_exec_failed(void)
{
    if (atomic_load(&g_state) != W_EXEC || getpid() != g_pid)
        return;
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_state) == W_EXEC) {
        window *w = g_exec_win;
        uint64_t s = g_exec_seal;
        char *t = w->base + s;
        __atomic_store_n((uint64_t *)(void *)t, 0, __ATOMIC_RELEASE);
        memset(t + 8, 0, TRAILER_ROOM - 8);
        int err = 0;
        window *nw = window_new(w->start + s, 0, &err);
        if (nw) {
            set_cur_locked(nw);
            atomic_store(&g_state, W_OPEN);
            retire_locked(w);
        } else {
            fail_locked(w, s, err == ENOSPC ? "disk full, cannot extend" : "cannot extend", err);
        }
        g_exec_win = NULL;
    }
    pthread_mutex_unlock(&g_lock);
}

const char *vt__writer_path(void)
{
    return atomic_load(&g_state) == W_UNOPENED ? NULL : g_path;
}

void vt__writer_counts(uint64_t *events, uint64_t *dropped)
{
    uint64_t records;
    pthread_mutex_lock(&g_lock);
    totals_locked(&records, events);
    pthread_mutex_unlock(&g_lock);
    *dropped = atomic_load(&g_n_dropped);
}

/* ---- fork ---------------------------------------------------------------------------------
 * prepare: hold g_lock so no window switch is half-done when the child is made; parent:
 * release; child (one thread): forget the parent's file WITHOUT writing to it (munmap only
 * changes the child's address space) and start over: its own file at its first event. */
void vt__writer_fork_prepare(void)
{
    pthread_mutex_lock(&g_lock);
}

void vt__writer_fork_parent(void)
{
    pthread_mutex_unlock(&g_lock);
}

void vt__writer_fork_child(void)
{
    g_lock = (pthread_mutex_t)PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    g_cur_changed = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    while (g_all) { /* the only thread left: no one else holds a window */
        window *w = g_all;
        g_all = w->next_all;
        if (!w->unmapped)
            munmap(w->map, w->map_len);
        free(w);
    }
    atomic_store(&g_cur, NULL);
    g_retired = NULL;
    g_exec_win = NULL;
    if (g_spare.map)
        munmap(g_spare.map, (size_t)(g_spare.end - g_spare.map_off));
    g_spare.map = NULL;
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
    g_reserved = 0;
    g_warned = 0;
    g_path[0] = '\0';
    atomic_store(&g_n_dropped, 0);
    atomic_store(&g_stacks_truncated, 0);
    __atomic_store_n(&g_start_mono, 0, __ATOMIC_RELEASE);
    int s = atomic_load(&g_state);
    atomic_store(&g_state, s == W_STOPPED && vt__config_get()->disabled ? W_STOPPED : W_UNOPENED);
}

/* vt__writer_reset_for_tests: back to the unopened state (unit tests only, one thread). */
void vt__writer_reset_for_tests(void)
{
    vt__writer_close();
    vt__writer_fork_child();
}
