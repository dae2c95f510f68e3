/* writer_file.c — the trace file's name and creation, and what `vramtrace run` is told of it:
 * the output template expanded, the file made O_EXCL|O_NOFOLLOW|O_CLOEXEC 0600 (never over
 * another file, never a directory, device or FIFO), the manifest's line (the file, or why there
 * is none; a link beside the manifest where no descriptor is free: include/vramtrace/env.h), and
 * the mark of the process that opened it. writer.c opens the trace with them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/quietio.h"
#include "vramtrace/env.h"
#include "writer.h"
#include "writer_internal.h"

/* expand_path: the output template with %p (pid) and %% replaced; %r is already $RANK in
 * safe file-name characters (core/config.c expands it when it reads the template). */
void vt__wfile_expand(const char *tmpl, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = tmpl; *s && n + 24 < cap; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            n += (size_t)snprintf(out + n, cap - n, "%d", (int)getpid());
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

/* create_file: O_EXCL; an existing file gets ".1", ".2", ... (never overwritten). A name that
 * is a directory, a device, a FIFO or a socket is not a trace file: refused (-1, *why set),
 * never written beside as NAME.1. */
int vt__wfile_create(const char *base, const char **why)
{
    int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    for (int i = 0; i < 1000; i++) {
        if (i == 0)
            snprintf(vt__ws.path, sizeof vt__ws.path, "%s", base);
        else
            snprintf(vt__ws.path, sizeof vt__ws.path, "%.4096s.%d", base, i);
        int fd = vt__sys_ops.open(vt__ws.path, flags, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        struct stat st;
        /* what the name is, through a symbolic link (never followed to write: a link to a file
         * or to nothing gets NAME.1 beside it, but one to a directory, a device or a FIFO is
         * refused as that is) */
        if (i == 0 && !stat(vt__ws.path, &st) && !S_ISREG(st.st_mode)) {
            *why = S_ISDIR(st.st_mode) ? "is a directory (the output is a file name, e.g. "
                                         "DIR/vramtrace.%p.vt)"
                                       : "exists and is not a regular file (a device, FIFO or "
                                         "socket)";
            return -1;
        }
    }
    return -1;
}

/* manifest_link: line (without its newline) as a link beside the manifest, MANIFEST.N, the
 * first N free (env.h): no descriptor needed. 0, or -1 with errno. */
static int manifest_link(const char *manifest, const char *line)
{
    char name[4096 + 16];
    for (int k = 1; k <= VT_MANIFEST_LINKS; k++) {
        snprintf(name, sizeof name, "%s.%d", manifest, k);
        if (!symlink(line, name))
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* manifest_line: appends line (n bytes, its newline last) to the manifest `vramtrace run` reads,
 * or where no descriptor is free (the trace may hold the last one) leaves it as a link beside it
 * (no signal, no error: the trace is what matters). */
static void manifest_line(const char *manifest, char *line, size_t n)
{
    vt__quiet q;
    vt__quiet_begin(&q);
    int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        if (write(fd, line, n) != (ssize_t)n) {
            /* the trace still exists; `vramtrace run` just will not list it */
        }
        close(fd);
    } else if (errno == EMFILE || errno == ENFILE) {
        line[n - 1] = '\0'; /* (a link's target: the line without its newline) */
        if (manifest_link(manifest, line) < 0 && errno == ENAMETOOLONG && line[0] != '!') {
            char lost[128]; /* (a name too long for a link: the trace said, unnamed) */
            snprintf(lost, sizeof lost,
                     "?%d no file descriptor was free to list it, and its name is too long to "
                     "note otherwise",
                     (int)getpid());
            manifest_link(manifest, lost);
        }
        line[n - 1] = '\n';
    }
    vt__quiet_end(&q);
}

/* put_escaped: s after out[0..n) with each backslash "\\" and newline "\n" (env.h: one line a
 * trace); the new length, or cap when it does not fit */
static size_t put_escaped(char *out, size_t n, size_t cap, const char *s)
{
    for (; *s; s++) {
        int esc = *s == '\\' || *s == '\n';
        if (n + 1 + esc > cap)
            return cap;
        if (esc)
            out[n++] = '\\';
        out[n++] = *s == '\n' ? 'n' : *s;
    }
    return n;
}

void vt__wfile_manifest(const char *manifest)
{
    if (!manifest[0])
        return;
    static char line[VT_MANIFEST_LINE_MAX]; /* (open_locked's: vt__ws.lock is held) */
    size_t cap = sizeof line - 1, n = 0;    /* (room for the newline) */
    const char *lost = NULL;                /* why the trace is written and not named */
    if (vt__ws.path[0] != '/') {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) /* (it had listed "/NAME": another file, or none) */
            lost = "its working directory could not be named, so neither can its relative name";
        else if ((n = put_escaped(line, 0, cap, cwd)) < cap)
            line[n++] = '/';
    }
    if (!lost && (n = put_escaped(line, n, cap, vt__ws.path)) >= cap)
        lost = "its name is too long to list"; /* (it had been left out in silence) */
    if (lost)
        n = (size_t)snprintf(line, sizeof line, "?%d %s", (int)getpid(), lost);
    line[n++] = '\n';
    manifest_line(manifest, line, n);
}

/* note_failure: no trace could be made: the warning on stderr, and for `vramtrace run` a
 * manifest line "!PID why" (escaped), so it says why there is no trace instead of "no CUDA
 * allocation was made". */
void vt__wfile_failure(const char *manifest, const char *what, const char *why)
{
    vt__writer_warn_once_why(what, why);
    if (!manifest[0])
        return;
    char line[1400], esc[1100];
    vt__config_escape(vt__ws.path[0] ? vt__ws.path : "(trace file)", esc, sizeof esc);
    int n = snprintf(line, sizeof line, "!%d %s %s: %s\n", (int)getpid(), what, esc, why);
    if (n > 0 && (size_t)n < sizeof line)
        manifest_line(manifest, line, (size_t)n);
}

/* mark_owner: this process opened the file (vt__ws.owner: writer_internal.h) */
void vt__wfile_mark_owner(void)
{
#ifdef MADV_WIPEONFORK
    if (!vt__ws.owner) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED && !madvise(p, 4096, MADV_WIPEONFORK))
            vt__ws.owner = p;
        else if (p != MAP_FAILED)
            munmap(p, 4096);
    }
#endif
    if (vt__ws.owner)
        *vt__ws.owner = 1;
}
