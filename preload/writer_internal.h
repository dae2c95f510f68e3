/* writer_internal.h — what the writer files share and nothing else includes: the state of the
 * one trace file, the window descriptor, and each file's internal functions. Calls go one way:
 * writer.c (open, reserve, write) -> writer_end.c (trailer, failure, close, exec, fork) ->
 * writer_pack.c (the chunked layout's packer thread) -> writer_pack_live.c (its live set and
 * steps), writer_window.c (windows) -> writer_slots.c (the chunked layout's slots) ->
 * writer_state.c (state, seam, time origin) -> writer_populate.c (the window mapped ahead faulted
 * in by a helper thread). The interface is writer.h/output.h. */
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
#define HUGE_SPAN (2u << 20)     /* a huge page: mappings this long are aligned to it */
#define TRAILER_ROOM (8u + (unsigned)sizeof(vt_rec_trailer))
#define UNSEALED UINT64_MAX
#define SEAL_BIAS (1ull << 62) /* added to `used` to seal a window from outside */

enum { W_UNOPENED, W_OPEN, W_STOPPED, W_CLOSED, W_EXEC };

/* One mapped window of the file. Records go at base[pos] for pos in [0, limit); limit keeps
 * TRAILER_ROOM free after it, so a trailer always fits where the window was sealed.
 * Descriptors are never freed while other threads may hold one (a writer may still load a
 * window that was just switched away from; it then finds it sealed and retries). */
#define DESC_PAGE 4096 /* the mapping a failed exec's window descriptor has (writer_state.c) */

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
    int own_page;                      /* the descriptor is on a page of its own: DESC_PAGE */
    struct window *next_all;           /* every window of this file, newest first (lock) */
    struct window *next_retired;       /* sealed, waiting for its last records (lock); in the
                                        * chunked layout: waiting for the packer, oldest first */
    uint64_t slot;                     /* chunked layout: its slot's index */
    uint64_t raw_seq;                  /* chunked layout: its SLOT record's seq */
    uint32_t seq;                      /* increasing in the file's order (BLOCK's `window`) */
    uint64_t scanned;                  /* (lock) the walk over stored headers reached here, */
    uint64_t n_records, n_events;      /* counting these (events: ALLOC / FREE) */
    alignas(64) _Atomic uint64_t used; /* bytes reserved (runs past limit once full); the
                                        * only word writers share, on its own cache line */
} window;

/* Each writing thread's own slot (writer_state.c), on its own cache line: the window it is
 * storing a record into now (NULL: none) and the records / ALLOC-FREE events it has stored in
 * this process's file. A retired window is unmapped once no slot holds it (no walk over its
 * records on the writers' path), and a plain trace's trailer counts are the slots' sums. A
 * thread past the last slot, or a record made while the thread's slot is taken (a signal
 * handler's record inside another), goes through the shared path (vt__wslots' busy, records,
 * events): a count of such records in flight (while it is not zero no retired window is
 * unmapped) and atomic counts. Slots are never
 * handed out twice (a process with more threads than VT__WSLOTS uses `shared` for the rest). */
#define VT__WSLOTS 1024
typedef struct vt__wslot {
    alignas(64) _Atomic(struct window *) in;
    _Atomic uint64_t records, events;
    /* a plain trace (2.0): this thread's BLOCK, in window `bwin` (0: none), its next record at
     * base + bpos, its end at base + bend (the owning thread's alone) */
    uint32_t bwin;
    uint64_t bpos, bend;
} vt__wslot;
typedef struct vt__wslots {
    vt__wslot slot[VT__WSLOTS];
    _Atomic uint32_t used;                              /* slots handed out */
    alignas(64) _Atomic uint64_t busy, records, events; /* the shared path */
} vt__wslots;
extern __attribute__((visibility("hidden"))) vt__wslots vt__wsl;
/* this thread's slot, once it has one (initial-exec TLS: no allocation, no lock) */
extern __thread __attribute__((visibility("hidden"))) vt__wslot *vt__wslot_mine;
/* vt__wslot_take: a slot for this thread (vt__wslot_mine set), NULL when all are handed out. */
vt__wslot *vt__wslot_take(void);
/* vt__wslots_hold: a record may still be being stored into w by a thread other than the
 * caller (a slot holding it, or the shared path busy beyond the caller's own records); w NULL:
 * into any window. */
int vt__wslots_hold(const struct window *w);
/* vt__wslots_totals: the records and events stored so far (every slot and the shared path). */
void vt__wslots_totals(uint64_t *records, uint64_t *events);
/* ---- writer_file.c: the file's name and creation ---------------------------------------- */
/* vt__wfile_expand: the output template with %p (pid) and %% replaced into out */
void vt__wfile_expand(const char *tmpl, char *out, size_t cap);
/* vt__wfile_create: the file made (O_EXCL: an existing one gets ".1", ".2", ...; a directory,
 * device, FIFO or socket refused with *why); its descriptor, or -1 */
int vt__wfile_create(const char *base, const char **why);
/* vt__wfile_manifest / vt__wfile_failure: the manifest's line for `vramtrace run`: the file made,
 * or why there is none (with the warning) */
void vt__wfile_manifest(const char *manifest);
void vt__wfile_failure(const char *manifest, const char *what, const char *why);
/* vt__wfile_mark_owner: this process opened the file (vt__ws.owner) */
void vt__wfile_mark_owner(void);

/* vt__ws_unlock_all / vt__ws_relock: vt__ws.lock released by this thread however many times
 * it holds it, and taken that many times again after a wait on a thread that needs it (the
 * packer's end): an exec or exit() from a signal handler that ran inside fork() finds the lock
 * held once by the fork's prepare handler and takes it again (one unlock had left it held: the
 * packer and the exec waited on each other for ever). The count held, at most 64. */
int vt__ws_unlock_all(void);
void vt__ws_relock(int n);
/* vt__ws_lock_mine: this thread holds vt__ws.lock (a recursive mutex's owner) */
int vt__ws_lock_mine(void);
/* vt__wslots_forget: a fork child's: counts and holds back to zero (its one thread keeps its
 * slot; others' slots stay handed out, unused). */
void vt__wslots_forget(void);
/* vt__wslots_shared_mine: records this thread has in flight through the shared path. */
extern __thread __attribute__((visibility("hidden"))) uint32_t vt__wslots_shared_mine;

/* The one trace file of this process (defined in writer_window.c). `lock` is taken only to
 * open, switch, close or exec; every record reads `state` and `cur` without it. */
typedef struct vt__writer_state {
    _Atomic int state;     /* W_* */
    _Atomic(window *) cur; /* where records go now; NULL when not open (set: lock) */
    size_t rec_max;        /* the largest record: VT_REC_MAX_SIZE, or what a raw slot holds (set at
                            * open; beside cur, which every record reads) */
    int blocks;            /* a plain trace: each thread's records in BLOCKs (trace_blocks.h) */
    uint32_t n_windows;    /* windows made by this process, never reset: a thread's block of an
                            * earlier trace (a test's reopen) never matches a window's seq */
    alignas(64) pthread_mutex_t lock; /* recursive: the PROCESS record may switch windows
                                       * while opening */
    pthread_cond_t cur_changed;
    window *all;
    window *retired;
    window *exec_win;   /* the window holding the exec trailer (W_EXEC) */
    uint64_t exec_seal; /* where in it */
    int no_alloc;       /* vt__window_make calls no malloc (a failed exec's: writer_state.c) */
    int fd;
    dev_t fd_dev; /* what fd was when the file was made: the program may close it and */
    ino_t fd_ino; /* open another file under the same number (vt__writer_fd) */
    pid_t pid;    /* the process that opened the file (a vfork child is not it) */
    /* a page of MADV_WIPEONFORK memory holding 1 in the process that opened the file: zero in
     * any child, also one made without fork()'s handlers (_Fork, a raw clone), which must not
     * write into its parent's windows (writer.c); NULL where the kernel has no such pages */
    volatile char *owner;
    uint64_t reserved; /* bytes of the file with blocks reserved (fallocate) */
    uint64_t next_len;
    struct {
        char *map; /* NULL: none */
        uint64_t map_off, end;
    } spare; /* the next window's mapping, made ahead (lock) */
    int warned;
    uint64_t start_mono, start_real;
    /* the chunked layout (trace_format.h CHUNKED LAYOUT; --max-size / --compress), 0 = plain.
     * Slots are handed out under `lock`: free ones first, then new ones while the file is under
     * its bound; the packer (writer_pack.c) frees raw slots it packed and drops old ones. */
    int chunked;
    uint64_t slot_size, max_size, max_slots; /* max_slots UINT64_MAX: no bound */
    uint64_t n_slots;                        /* slots the file has */
    uint64_t *free_slots;                    /* (lock) a stack of free slot indices */
    size_t n_free, cap_free;
    uint64_t raw_seq;                      /* the last raw slot's seq */
    struct window *pack_first, *pack_last; /* (lock) sealed raw windows, oldest first */
    pthread_cond_t pack_cond;              /* signalled when one is queued or at the end */
    struct {
        char *map; /* NULL: none; the next raw slot, mapped ahead (lock) */
        uint64_t slot;
    } spare_slot;
    uint64_t dropped_no_slot; /* events dropped while no raw slot could be had */
    int full_err;             /* the disk (or the file-size limit) bounded the grid: its errno */

    void (*on_open)(void); /* set once by vt__writer_on_open before any thread writes */
    char path[4200];
    /* counters written on the way (drops, cut stacks): each on its own cache line, away from
     * state / cur, which every record reads */
    alignas(64) _Atomic uint64_t n_dropped;
    alignas(64) _Atomic uint32_t stacks_truncated;
    _Atomic uint32_t lost_why; /* VT_TRAILER_LOSSES bits: why events counted in n_dropped were */
    /* the ended trace's trailer, its n_dropped, mapped until the process ends (NULL: none): the
     * events that come after it is written are counted there (writer_state.c vt__writer_dropped);
     * late_busy: threads counting into it now (a failed exec waits for them) */
    alignas(64) _Atomic(uint64_t *) late;
    _Atomic uint32_t late_busy;
} vt__writer_state;
/* hidden: every record reads it, so its address is PC-relative, never loaded from the GOT */
extern __attribute__((visibility("hidden"))) vt__writer_state vt__ws;

static inline uint64_t vt__round_up(uint64_t v, uint64_t page)
{
    return (v + page - 1) & ~(page - 1);
}

/* vt__put_record: one record at dst from up to three parts: payload, zero padding, then the
 * header with a release store, so a reader never sees a header before its payload. */
static inline char *vt__put_part(char *q, const void *p, size_t n)
{
    if (n <= 64 && !(n & 7)) { /* an event's fixed parts: words, not a call to memcpy */
        for (size_t i = 0; i < n; i += 8) {
            uint64_t w;
            memcpy(&w, (const char *)p + i, 8);
            memcpy(q + i, &w, 8);
        }
    } else {
        memcpy(q, p, n);
    }
    return q + n;
}

static inline void vt__put_record(char *dst, size_t size, uint16_t type, uint16_t flags,
                                  const void *p1, size_t n1, const void *p2, size_t n2,
                                  const void *p3, size_t n3)
{
    char *q = dst + 8;
    q = vt__put_part(q, p1, n1);
    q = vt__put_part(q, p2, n2);
    q = vt__put_part(q, p3, n3);
    if (q != dst + size)
        memset(q, 0, (size_t)(dst + size - q));
    uint64_t hdr = (uint64_t)type | ((uint64_t)flags << 16) | ((uint64_t)size << 32);
    __atomic_store_n((uint64_t *)(void *)dst, hdr, __ATOMIC_RELEASE);
}

/* ---- writer_state.c: time origin, warnings, window descriptors ------------------------- */

/* vt__writer_fd_note: fd (just created) is the trace's: its identity kept, the descriptor moved
 * above the numbers a program's own files take (close-on-exec kept); the descriptor to use.
 * vt__writer_fd: the trace's descriptor while it still is the trace's file, else -1 (the
 * program closed it, perhaps opened another file under its number, or dup2()ed over it: that
 * file is the program's and nothing of the tracer's touches it, not even close), with the one
 * warning the first time. vt__writer_fd_quiet: the same without the warning (a fork child). */
int vt__writer_fd_note(int fd);
int vt__writer_fd(void);
int vt__writer_fd_quiet(void);

/* vt__writer_start_clock: the trace's time origin, fixed once per process (and again in a
 * fork child). */
void vt__writer_start_clock(void);
/* vt__writer_warn_once: the one warning of an output failure (the program is never affected);
 * _why: with the reason in words. vt__writer_strerror: strerror, EFBIG named as the limit. */
void vt__writer_warn_once(const char *what, int err);
void vt__writer_warn_once_why(const char *what, const char *why);
const char *vt__writer_strerror(int err);
/* vt__window_make: the descriptor of a window over the mapping [map_off, end) whose records start
 * at file offset start (linked into vt__ws.all). NULL (and the mapping undone) when out of memory.
 * vt__ws.lock held. */
window *vt__window_make(char *map, uint64_t map_off, uint64_t end, uint64_t start);

/* vt__writer_dropped: one event lost (n_dropped), counted in the trailer when it is written.
 * vt__writer_late_at: the trailer record at rec is written and stays mapped: later drops are
 * counted in it (nothing when rec holds no trailer: it could not be written). */
void vt__writer_dropped(void);
void vt__writer_late_at(char *rec);

/* ---- writer_window.c: windows (lock held where _locked) --------------------------------- */

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

/* ---- writer_slots.c: the chunked layout's slot grid (lock held) ------------------------ */

/* vt__slots_init_locked: the grid for a chunked trace bounded at max_size bytes (0: none);
 * -1 when out of memory. vt__slot_off: slot i's first byte (slot 0 starts after the header). */
int vt__slots_init_locked(uint64_t max_size);
uint64_t vt__slot_off(uint64_t i);
/* vt__slot_take_locked: a free slot, else a new one while the file is under its bound; -1 when
 * none (the packer then drops an old one). */
int64_t vt__slot_take_locked(void);
/* vt__slot_map: slot i mapped read-write, blocks reserved (posix_fallocate); NULL with *err. */
char *vt__slot_map(uint64_t i, int *err);
/* vt__slot_map_failed_locked: slot i (just taken) could not be mapped with err: when it is the
 * grid's last and the disk or the file-size limit refused it, the file's present size becomes
 * its bound (said once; the trailer says DISK_FULL) and 1 is returned (an old slot may be reused);
 * else the slot is released and 0 returned. vt__slot_map_failed: the same, taking the lock. */
int vt__slot_map_failed_locked(uint64_t i, int err);
int vt__slot_map_failed(uint64_t i, int err);
/* vt__slot_release_locked: slot i is free again: its first 8 bytes zeroed through map (its
 * mapping, unmapped here) so readers skip it, and it joins the free ones. */
void vt__slot_release_locked(uint64_t i, char *map);
/* vt__slot_window_new_locked: a window over a fresh raw slot (the spare when there is one), its
 * SLOT record written; NULL with *err (EAGAIN: no slot free now). */
window *vt__slot_window_new_locked(uint64_t need, int *err);
/* vt__slot_prepare_locked: maps the next raw slot ahead (the spare), when one is free. */
void vt__slot_prepare_locked(void);
/* vt__slot_wipe: slot i leaves the file's content (its SLOT header zeroed first, through map
 * when it is mapped, then unmapped; its blocks punched out, or zeros written); not locked: the
 * caller owns slot i. vt__slots_trim_locked: the file cut after its last slot in use. */
void vt__slot_wipe(uint64_t i, char *map);
void vt__slots_trim_locked(void);
/* vt__slot_capacity: the largest record a raw slot holds. */
uint64_t vt__slot_capacity(void);

/* ---- writer_pack.c / writer_pack_live.c: the packer (chunked layout) -------------------- */

/* vt__pack_start_locked: the packer's thread for a newly opened chunked trace, its first HEAD
 * slot slot 0 with the file header h; -1 with *err (an errno: EFBIG, ENOSPC, ENOMEM) when its
 * first slot cannot be had. */
int vt__pack_start_locked(const vt_file_header *h, int *err);
/* vt__pack_finish_locked: packs every queued raw window and w (sealed at s: its records up to
 * there; NULL: none, the writers had no raw slot), joins the packer's thread, and writes the
 * trailer in the summary slot (flags, err). The trace is complete after it. vt__ws.lock held
 * (released while waiting for the thread). */
void vt__pack_finish_locked(window *w, uint64_t s, uint16_t flags, int err);
/* writer_pack_inline.c: vt__pack_thread_start: the packer's thread, where helper.h finds room
 * for it (its stack helper.h's VT__HELPER_STACK_PACKER; else none, said once, the trailer's
 * VT_TRAILER_NO_HELPER set): 1 when it runs, 0 when
 * the windows are packed inline, by `pack` (writer_pack.c's: the oldest queued window; released
 * vt__ws.lock while packing). vt__pack_inline_locked: with no packer thread, the raw windows
 * queued packed on the calling thread (writer.c's window switch), one thread at a time.
 * vt__pack_inline_wait_locked: until no other thread packs inline (the close). vt__ws.lock
 * held by all three. */
int vt__pack_thread_start(pthread_t *t, pthread_attr_t *a, void *(*fn)(void *), void (*pack)(void));
void vt__pack_inline_locked(void);
void vt__pack_inline_wait_locked(void);
/* vt__pack_forget_child: in a fork child: the parent's packer is not ours (no thread, no I/O). */
void vt__pack_forget_child(void);

/* writer_pack_codes.c: what a stack is for the step rule (records given as header + payload):
 * vt__pl_meta reads CONFIG, CODE and STACK records; vt__pl_stack_kind: 1 an optimizer's, 2 a
 * backward call's, 0 neither; vt__pl_no_python: no Python frames (--stacks native / none);
 * _reset frees, _forget (a fork child) forgets without touching */
void vt__pl_meta(const char *rec, uint32_t size);
int vt__pl_stack_kind(uint32_t stack);
int vt__pl_no_python(void);
void vt__pl_codes_reset(void);
void vt__pl_codes_forget(void);
/* writer_pack_live.c: the packer's view of the run (records given as header + payload) */
void vt__pl_event(const char *rec, uint32_t size, void (*emit)(const void *, size_t));
void vt__pl_end(uint64_t tt, void (*emit)(const void *, size_t));
uint64_t vt__pl_events(void);
size_t vt__pl_snapshot(char **buf, size_t *cap, vt_rec_snapshot *snap);
void vt__pl_reset(void);
void vt__pl_forget(void);

/* ---- writer_end.c: the end of a trace (lock held) --------------------------------------- */

/* vt__writer_close_fd: closes the file's descriptor, if open. */
void vt__writer_close_fd(void);
/* vt__writer_fail_locked: an output failure with the file open, w full at s: tracing stops
 * with one warning; the trace keeps every record accepted and ends with a trailer saying why. */
void vt__writer_fail_locked(window *w, uint64_t s, const char *what, int err);

/* ---- writer_populate.c: a mapping's pages faulted in ------------------------------------ */

/* vt__populate: [p, p + len) of a new mapping faulted in writable: at once, or when it is the
 * window mapped ahead (ahead) of HUGE_SPAN bytes or more, by the helper thread (started then;
 * at once where it cannot start). vt__populate_forget: before [p, p + len) is unmapped (every
 * vt__sys_ops.munmap): the helper's job on it dropped and its piece there waited for. */
void vt__populate(char *p, uint64_t len, int ahead);
void vt__populate_forget(const void *p, uint64_t len);
/* vt__populate_stats: jobs handed to the helper and pieces it faulted in (tests) */
void vt__populate_stats(uint64_t *jobs, uint64_t *pieces);
/* vt__populate_fork_child: a fork child forgets the parent's helper, whatever it was doing (its
 * lock, its job, its piece: set afresh; the child's own helper starts when its windows are large
 * again). No prepare handler takes the helper's lock: a signal handler that exits inside fork()
 * (the writer's lock held by its prepare) waits for a piece at most, never for itself. */
void vt__populate_fork_child(void);
/* vt__populate_test_piece: called by the helper before each piece when set (tests) */
extern void (*vt__populate_test_piece)(void);

#ifdef VT_WRITER_TEST_HOOKS
/* vt__writer_test_before_hold: a record's call between its load of the current window and its
 * hold of it, in a build of writer.c for tests/unit/test_writer_seal.c alone (Makefile), which
 * defines it: a close or a switch made there is the race the seal check in in_block is for */
void vt__writer_test_before_hold(void);
/* vt__writer_test_before_store: between a record's check that its block's window takes it and
 * its store there (the window held): a switch and a close made there must wait for the store */
void vt__writer_test_before_store(void);
#endif

#endif
