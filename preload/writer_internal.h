/* writer_internal.h — what the three writer files share and nothing else includes: the state
 * of the one trace file, the window descriptor, and each file's internal functions. Calls go
 * one way: writer.c (open, reserve, write) -> writer_end.c (trailer, failure, close, exec,
 * fork) -> writer_window.c (state, time origin, windows). The interface is writer.h/output.h. */
#ifndef VT_PRELOAD_WRITER_INTERNAL_H
#define VT_PRELOAD_WRITER_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "vramtrace/trace_format.h"

#define WINDOW_FIRST (64u << 10) /* the first window; each next one doubles ... */
#define WINDOW_MAX (4u << 20)    /* ... up to this */
#define TRAILER_ROOM (8u + (unsigned)sizeof(vt_rec_trailer))
#define UNSEALED UINT64_MAX
#define SEAL_BIAS (1ull << 62) /* added to `used` to seal a window from outside */

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
    _Atomic uint64_t sealed;           /* bytes accepted, UNSEALED until full, closed or paused */
    int unmapped;                      /* (lock) */
    struct window *next_all;           /* every window of this file, newest first (lock) */
    struct window *next_retired;       /* sealed, waiting for its last records (lock) */
    uint64_t scanned;                  /* (lock) the walk over stored headers reached here, */
    uint64_t n_records, n_events;      /* counting these (events: ALLOC / FREE) */
    alignas(64) _Atomic uint64_t used; /* bytes reserved (runs past limit once full); the
                                        * only word writers share, on its own cache line */
} window;

/* The one trace file of this process (defined in writer_window.c). `lock` is taken only to
 * open, switch, close or exec; every record reads `state` and `cur` without it. */
typedef struct vt__writer_state {
    _Atomic int state;                /* W_* */
    _Atomic(window *) cur;            /* where records go now; NULL when not open (set: lock) */
    alignas(64) pthread_mutex_t lock; /* recursive: the PROCESS record may switch windows
                                       * while opening */
    pthread_cond_t cur_changed;
    window *all;
    window *retired;
    window *exec_win;   /* the window holding the exec trailer (W_EXEC) */
    uint64_t exec_seal; /* where in it */
    int fd;
    pid_t pid;         /* the process that opened the file (a vfork child is not it) */
    uint64_t reserved; /* bytes of the file with blocks reserved (fallocate) */
    uint64_t next_len;
    struct {
        char *map; /* NULL: none */
        uint64_t map_off, end;
    } spare; /* the next window's mapping, made ahead (lock) */
    int warned;
    uint64_t start_mono, start_real;
    void (*on_open)(void); /* set once by vt__writer_on_open before any thread writes */
    char path[4200];
    /* counters written on the way (drops, cut stacks): each on its own cache line, away from
     * state / cur, which every record reads */
    alignas(64) _Atomic uint64_t n_dropped;
    alignas(64) _Atomic uint32_t stacks_truncated;
} vt__writer_state;
/* hidden: every record reads it, so its address is PC-relative, never loaded from the GOT */
extern __attribute__((visibility("hidden"))) vt__writer_state vt__ws;

static inline uint64_t vt__round_up(uint64_t v, uint64_t page)
{
    return (v + page - 1) & ~(page - 1);
}

/* vt__put_record: one record at dst from up to three parts: payload, zero padding, then the
 * header with a release store, so a reader never sees a header before its payload. */
static inline void vt__put_record(char *dst, size_t size, uint16_t type, uint16_t flags,
                                  const void *p1, size_t n1, const void *p2, size_t n2,
                                  const void *p3, size_t n3)
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

/* ---- writer_window.c: time origin, warnings, windows (lock held where _locked) ---------- */

/* vt__writer_start_clock: the trace's time origin, fixed once per process (and again in a
 * fork child). */
void vt__writer_start_clock(void);
/* vt__writer_warn_once: the one warning of an output failure (the program is never affected);
 * _why: with the reason in words. vt__writer_strerror: strerror, EFBIG named as the limit. */
void vt__writer_warn_once(const char *what, int err);
void vt__writer_warn_once_why(const char *what, const char *why);
const char *vt__writer_strerror(int err);
/* vt__window_set_cur_locked: where records go from now on; wakes writers waiting for a switch. */
void vt__window_set_cur_locked(window *w);
/* vt__window_drop_spare: unmaps the mapping made ahead, if any. */
void vt__window_drop_spare(void);
/* vt__window_scan_locked: counts w's stored records up to `upto` bytes from base; 1 when it
 * got there, 0 when it stopped at a record in flight. */
int vt__window_scan_locked(window *w, uint64_t upto);
/* vt__window_sweep_locked: unmaps the retired windows whose accepted records are all stored. */
void vt__window_sweep_locked(void);
/* vt__window_retire_locked: w is sealed and its switcher / closer is done with it. */
void vt__window_retire_locked(window *w);
/* vt__window_new: a window whose records start at file offset `start`, holding at least `need`
 * bytes and a trailer. NULL with *err. */
window *vt__window_new(uint64_t start, uint64_t need, int *err);
/* vt__window_prepare_next: maps the window after w ahead (called once w is half full). */
void vt__window_prepare_next(window *w);
/* vt__window_totals_locked: records and ALLOC/FREE events written so far in all windows. */
void vt__window_totals_locked(uint64_t *records, uint64_t *events);

/* ---- writer_end.c: the end of a trace (lock held) --------------------------------------- */

/* vt__writer_close_fd: closes the file's descriptor, if open. */
void vt__writer_close_fd(void);
/* vt__writer_fail_locked: an output failure with the file open, w full at s: tracing stops
 * with one warning; the trace keeps every record accepted and ends with a trailer saying why. */
void vt__writer_fail_locked(window *w, uint64_t s, const char *what, int err);

#endif
