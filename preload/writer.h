/* writer.h — the writer's interface beyond core/output.h (writer.c, writer_window.c,
 * writer_end.c): the system-call seam (tests inject failures), fork and exec hooks, and the
 * append used while the file is being opened. */
#ifndef VT_PRELOAD_WRITER_H
#define VT_PRELOAD_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The system calls the writer makes, replaceable by tests (ENOSPC, failing mmap, ...).
 * fallocate returns 0 or an errno value (posix_fallocate's convention). */
typedef struct vt__sys {
    int (*open)(const char *path, int flags, mode_t mode);
    int (*fallocate)(int fd, off_t off, off_t len);
    void *(*mmap)(size_t len, int fd, off_t off);
    int (*munmap)(void *p, size_t len);
    int (*ftruncate)(int fd, off_t len);
    int (*close)(int fd);
} vt__sys;
extern vt__sys vt__sys_ops;

/* vt__writer_append_locked: appends a record of up to three parts while the file is being
 * opened (from the vt__writer_on_open callback; other threads wait until it is open). 0 or -1. */
int vt__writer_append_locked(uint16_t type, uint16_t flags, const void *p1, size_t n1,
                             const void *p2, size_t n2, const void *p3, size_t n3);
/* vt__writer_on_open: registers the function that writes the first records (the PROCESS
 * record, procinfo.c) each time a file is opened, after the header; it may call only
 * vt__writer_append_locked. The writer knows nothing above it: the caller registers itself. */
void vt__writer_on_open(void (*first_records)(void));
/* vt__encode_strings: (u32 len, bytes) per string into buf; bytes used, 0 if cap too small. */
size_t vt__encode_strings(char *buf, size_t cap, const char *const *strs, const uint32_t *lens,
                          int nstrs);

void vt__writer_fork_prepare(void);
void vt__writer_fork_parent(void);
void vt__writer_fork_child(void);
/* vt__populate_alone: the helper thread that faults the next window in (writer_populate.c) runs
 * and is the only thread besides the caller: it never takes the loader's lock, so a fork child
 * of such a process may walk the loaded objects as one of a single-threaded process does */
int vt__populate_alone(void);
/* vt__writer_exec_prepare: before an exec (hooks/hook_exec.c; inside a hook on the same thread
 * vt__writer_exec_interrupted, below): ends the trace with an EXEC trailer, the file cut after it.
 * vt__writer_exec_failed: the exec returned; the trailer is taken back and tracing goes on in
 * the same file. Both do nothing in a process (vfork child) that does not own the trace. */
void vt__writer_exec_prepare(void);
void vt__writer_exec_failed(void);
/* vt__writer_exec_interrupted: vt__writer_exec_prepare for an exec from a signal handler that
 * interrupted a hook on this thread: the trailer only where that cannot hang or misplace it,
 * else the trace is left cut, said once (writer_end.c interrupted_lock). */
void vt__writer_exec_interrupted(void);
/* vt__writer_rec_max: the largest record the trace takes (the format's bound, or what a slot of
 * a chunked trace holds): strings are cut to fit it rather than the record dropped. */
size_t vt__writer_rec_max(void);
/* vt__writer_path: the trace file's path, NULL before the first event. */
const char *vt__writer_path(void);
void vt__writer_counts(uint64_t *events, uint64_t *dropped);
void vt__writer_note_truncated_stack(void);
void vt__writer_reset_for_tests(void);

#endif
