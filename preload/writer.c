/* writer.c — the trace file: created at the first event (O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600),
 * written through a MAP_SHARED window over space reserved with posix_fallocate (so records
 * reach the page cache as they are made and survive SIGKILL, and a full disk is an error
 * value, never a SIGBUS), a trailer on a clean stop. System calls go through vt__sys so
 * tests inject ENOSPC. The record layout itself is include/vramtrace/trace_format.h. */
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

#include "core.h"
#include "writer.h"

#define WINDOW_BYTES (4u << 20) /* mapped at a time; the file grows by this much */

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

enum { W_UNOPENED, W_OPEN, W_STOPPED, W_CLOSED };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_state = W_UNOPENED;
static int g_fd = -1;
static char *g_win;        /* mapped window */
static uint64_t g_win_off; /* file offset of g_win[0] */
static uint64_t g_win_len;
static uint64_t g_cursor;    /* file offset of the next record */
static uint64_t g_reserved;  /* bytes of the file reserved with fallocate */
static uint64_t g_start_mono, g_start_real;
static _Atomic uint64_t g_n_records, g_n_events, g_n_dropped;
static _Atomic uint32_t g_stacks_truncated;
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

/* stop_locked: the first output failure: one warning, tracing off, program unaffected. */
static void stop_locked(const char *what, int err)
{
    if (atomic_load(&g_state) == W_STOPPED)
        return;
    fprintf(stderr, "vramtrace: %s %s: %s; tracing stopped, the program continues\n", what,
            g_path[0] ? g_path : "(trace file)", strerror(err));
    atomic_store(&g_state, W_STOPPED);
    if (g_win) {
        vt__sys_ops.munmap(g_win, g_win_len);
        g_win = NULL;
    }
    if (g_fd >= 0) {
        vt__sys_ops.ftruncate(g_fd, (off_t)g_cursor);
        vt__sys_ops.close(g_fd);
        g_fd = -1;
    }
}

/* map_window_locked: makes [g_cursor, g_cursor + need) writable; 0 or -1 (stopped). */
static int map_window_locked(uint64_t need)
{
    if (g_win && g_cursor + need <= g_win_off + g_win_len)
        return 0;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t off = g_cursor & ~(page - 1);
    uint64_t len = WINDOW_BYTES;
    while (off + len < g_cursor + need)
        len *= 2;
    if (off + len > g_reserved) {
        int e = vt__sys_ops.fallocate(g_fd, (off_t)g_reserved, (off_t)(off + len - g_reserved));
        if (e) {
            stop_locked("cannot extend", e);
            return -1;
        }
        g_reserved = off + len;
    }
    if (g_win)
        vt__sys_ops.munmap(g_win, g_win_len);
    g_win = NULL;
    void *p = vt__sys_ops.mmap((size_t)len, g_fd, (off_t)off);
    if (p == MAP_FAILED || !p) {
        stop_locked("cannot map", errno ? errno : ENOMEM);
        return -1;
    }
    g_win = p;
    g_win_off = off;
    g_win_len = len;
    return 0;
}

/* append_locked: one record from up to three parts; payload first, header last. */
static int append_locked(uint16_t type, uint16_t flags, const void *p1, size_t n1,
                         const void *p2, size_t n2, const void *p3, size_t n3)
{
    size_t body = n1 + n2 + n3;
    size_t size = (8 + body + (VT_REC_ALIGN - 1)) & ~(size_t)(VT_REC_ALIGN - 1);
    if (size > VT_REC_MAX_SIZE) {
        atomic_fetch_add(&g_n_dropped, 1);
        return -1;
    }
    if (map_window_locked(size) < 0)
        return -1;
    char *dst = g_win + (g_cursor - g_win_off);
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
    g_cursor += size;
    atomic_fetch_add_explicit(&g_n_records, 1, memory_order_relaxed);
    return 0;
}

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

/* open_locked: creates the file, header, PROCESS and CONFIG records; 0 or -1 (stopped). */
static int open_locked(void)
{
    const vt__config *c = vt__config_get();
    char base[4200];
    expand_path(c->output, base, sizeof base);
    int fd = create_file(base);
    if (fd < 0) {
        stop_locked("cannot create", errno);
        return -1;
    }
    g_fd = fd;
    g_cursor = 0;
    g_reserved = 0;
    start_clock();
    vt_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, VT_MAGIC, VT_MAGIC_LEN);
    h.major = VT_VERSION_MAJOR;
    h.minor = VT_VERSION_MINOR;
    h.header_size = sizeof h;
    h.start_realtime_ns = g_start_real;
    h.start_mono_ns = g_start_mono;
    if (map_window_locked(sizeof h) < 0)
        return -1;
    memcpy(g_win, &h, sizeof h);
    g_cursor = sizeof h;
    atomic_store(&g_state, W_OPEN);
    note_in_manifest(c->manifest);
    vt__write_process_locked();
    vt_rec_config cr = {c->card_bytes, (uint32_t)c->stack_mode, (uint32_t)c->stack_depth,
                        c->sample_ms, 0};
    uint32_t nlen = (uint32_t)strlen(c->card_name);
    append_locked(VT_REC_CONFIG, 0, &cr, sizeof cr, &nlen, 4, c->card_name, nlen);
    return atomic_load(&g_state) == W_OPEN ? 0 : -1;
}

int vt__writer_append_locked(uint16_t type, uint16_t flags, const void *p1, size_t n1,
                             const void *p2, size_t n2, const void *p3, size_t n3)
{
    return append_locked(type, flags, p1, n1, p2, n2, p3, n3);
}

int vt__active(void)
{
    int s = atomic_load_explicit(&g_state, memory_order_relaxed);
    return (s == W_UNOPENED || s == W_OPEN) && !vt__config_get()->disabled;
}

/* write3: the locked path behind vt__write and vt__write_strings. */
static int write3(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2,
                  size_t n2, const void *p3, size_t n3)
{
    if (vt__config_get()->disabled)
        return -1;
    pthread_mutex_lock(&g_lock);
    int s = atomic_load(&g_state);
    int rc = -1;
    if (s == W_UNOPENED && open_locked() == 0)
        s = W_OPEN;
    if (s == W_OPEN)
        rc = append_locked(type, flags, p1, n1, p2, n2, p3, n3);
    pthread_mutex_unlock(&g_lock);
    if (rc == 0 && (type == VT_REC_ALLOC || type == VT_REC_FREE))
        atomic_fetch_add_explicit(&g_n_events, 1, memory_order_relaxed);
    else if (rc != 0 && (type == VT_REC_ALLOC || type == VT_REC_FREE))
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

void vt__writer_close(void)
{
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_state) == W_OPEN) {
        vt_rec_trailer t = {vt__now_ns(), atomic_load(&g_n_events), atomic_load(&g_n_dropped),
                            atomic_load(&g_n_records), atomic_load(&g_stacks_truncated), 0};
        append_locked(VT_REC_TRAILER, 0, &t, sizeof t, NULL, 0, NULL, 0);
        if (g_win)
            vt__sys_ops.munmap(g_win, g_win_len);
        g_win = NULL;
        vt__sys_ops.ftruncate(g_fd, (off_t)g_cursor);
        vt__sys_ops.close(g_fd);
        g_fd = -1;
        atomic_store(&g_state, W_CLOSED);
    }
    pthread_mutex_unlock(&g_lock);
}

const char *vt__writer_path(void)
{
    return atomic_load(&g_state) == W_UNOPENED ? NULL : g_path;
}

void vt__writer_counts(uint64_t *events, uint64_t *dropped)
{
    *events = atomic_load(&g_n_events);
    *dropped = atomic_load(&g_n_dropped);
}

/* ---- fork ---------------------------------------------------------------------------------
 * prepare: hold the lock so no record is half-written when the child is made; parent:
 * release; child: forget the parent's file WITHOUT writing to it (munmap only changes the
 * child's address space) and start over: its own file at its first event. */
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
    pthread_mutex_init(&g_lock, NULL);
    if (g_win)
        munmap(g_win, g_win_len);
    g_win = NULL;
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
    g_cursor = g_reserved = 0;
    g_path[0] = '\0';
    atomic_store(&g_n_records, 0);
    atomic_store(&g_n_events, 0);
    atomic_store(&g_n_dropped, 0);
    atomic_store(&g_stacks_truncated, 0);
    __atomic_store_n(&g_start_mono, 0, __ATOMIC_RELEASE);
    int s = atomic_load(&g_state);
    atomic_store(&g_state, s == W_STOPPED && vt__config_get()->disabled ? W_STOPPED : W_UNOPENED);
}

/* vt__writer_reset_for_tests: back to the unopened state (unit tests only). */
void vt__writer_reset_for_tests(void)
{
    vt__writer_close();
    vt__writer_fork_child();
}
