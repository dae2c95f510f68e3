/* notes.c — messages every command shares (notes.h): a trace's warnings, the path of a file
 * written, the system's reason when a write fails. */
#include "notes.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "exit_codes.h"
#include "vramtrace/trace_format.h"

static void path_fputs(FILE *out, const char *path)
{
    escape_term_fputs(out, path, strlen(path));
}

void notes_error(const char *cmd, const char *msg)
{
    fprintf(stderr, "vramtrace %s: ", cmd);
    path_fputs(stderr, msg); /* (a file name in it may hold terminal escapes) */
    fputc('\n', stderr);
}

void notes_implausible(const char *cmd, const char *path, uint64_t n)
{
    if (!n)
        return;
    fprintf(stderr, "vramtrace %s: warning: ", cmd);
    path_fputs(stderr, path);
    fprintf(stderr,
            ": %llu allocations not counted (they would make more than 4 EiB live at once: "
            "not a real run)\n",
            (unsigned long long)n);
}

void notes_truncated(const char *cmd, const char *path, const char *why, const char *doing)
{
    fprintf(stderr, "vramtrace %s: warning: ", cmd);
    path_fputs(stderr, path);
    fprintf(stderr, " is truncated (");
    path_fputs(stderr, why && *why ? why : "no trailer");
    fprintf(stderr, ": the process was killed or is still running); %s every complete record\n",
            doing);
}

void notes_stopped(const char *cmd, const char *path, unsigned ended, int error, int lost,
                   const char *doing)
{
    if (!(ended & (VT_TRAILER_DISK_FULL | VT_TRAILER_OUTPUT_ERROR)))
        return;
    fprintf(stderr, "vramtrace %s: warning: ", cmd);
    path_fputs(stderr, path);
    fprintf(stderr, " stopped early (%s: tracing stopped, the program went on); %s %s\n",
            replay_stop_words(ended, error), doing,
            lost ? "what the file kept (events made before it are missing)"
                 : "every record made before");
}

void notes_trace(const char *cmd, const replay_result *r, const char *doing)
{
    notes_implausible(cmd, r->path, r->n_implausible);
    if (r->status == READER_TRUNCATED) {
        notes_truncated(cmd, r->path, r->status_msg, doing);
    } else {
        notes_stopped(cmd, r->path, r->ended, r->end_error, replay_lost_events(r) != 0, doing);
    }
    if (!r->tensor_mode && !r->segment_mode) { /* a trace cut before it, or a tiny one */
        fprintf(stderr, "vramtrace %s: warning: ", cmd);
        path_fputs(stderr, r->path);
        fprintf(stderr,
                " holds no allocation of PyTorch's (%llu events%s): too short to diagnose or "
                "advise; trace a run that reaches its first training step\n",
                (unsigned long long)r->n_events,
                r->status == READER_TRUNCATED ? ", cut before the first one" : "");
    }
}

static const char *reason(int e)
{
    return e ? strerror(e) : "out of memory";
}

/* in_place: path is written where it is (a device, a FIFO, a link: what it names; a file with
 * other hard links or another owner, which a rename would part from them), not through a file
 * beside it renamed over it; a new name or a plain regular file is not */
static int in_place(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 &&
           (!S_ISREG(st.st_mode) || st.st_nlink > 1 || st.st_uid != geteuid());
}

/* beside: a new file in path's directory, named after it (".NAME.XXXXXX" into tmp), with the
 * mode a new file there would get (that of the file it replaces); -1 with errno when none can
 * be made */
static int beside(const char *path, char *tmp, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    int n = snprintf(tmp, len, "%.*s.%s.XXXXXX", (int)dir, path, slash ? slash + 1 : path);
    if (n < 0 || (size_t)n >= len)
        return errno = ENAMETOOLONG, -1;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, stat(path, &st) == 0 ? st.st_mode & 07777 : 0666 & ~mask);
    return fd;
}

/* plan: how path is written: 1 through a file beside it (its descriptor in *fd, its name in
 * tmp), 0 in place (in_place; or no file can be made beside it, a name too long or a directory
 * not writable, but the file itself can be written or made, as before), -1 with errno when
 * neither */
static int plan(const char *path, char *tmp, size_t len, int *fd)
{
    *fd = -1;
    tmp[0] = '\0';
    if (in_place(path))
        return 0;
    if ((*fd = beside(path, tmp, len)) >= 0)
        return 1;
    int e = errno;
    struct stat st;
    tmp[0] = '\0';
    int exists = stat(path, &st) == 0;
    if (exists && S_ISREG(st.st_mode) && access(path, W_OK) == 0)
        return 0;
    int made = exists ? -1 : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (made >= 0) /* (a new name one byte short of the longest: made there, as it was) */
        return close(made), unlink(path), 0;
    errno = e;
    return -1;
}

/* the file being written beside its name: taken away if a signal ends the command (Ctrl-C, a
 * kill) before it is renamed; SIGXFSZ is ignored meanwhile, so a write past ulimit -f fails with
 * EFBIG and is said, instead of killing the command with the file half written */
static char g_tmp[4096];
static void drop_tmp(int sig)
{
    if (g_tmp[0])
        unlink(g_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* output_free: notes_output_free, probe: whether a file can be made there is asked too (not
 * by notes_write, whose own creation says it) */
static int output_free(const char *cmd, const char *path, int probe)
{
    if (!strcmp(path, "-")) /* standard output */
        return 0;
    if (!*path) { /* (as run -o says it) */
        fprintf(stderr, "vramtrace %s: an output's file name is empty\n", cmd);
        return VT_EXIT_USAGE;
    }
    struct stat st;
    char head[VT_MAGIC_LEN], tmp[4096];
    int fd = -1; /* it can be made there: asked before anything is read or written */
    if (probe && plan(path, tmp, sizeof tmp, &fd) < 0) {
        int e = errno;
        fprintf(stderr, "vramtrace %s: ", cmd);
        path_fputs(stderr, path);
        fprintf(stderr, ": cannot create it: %s\n", strerror(e));
        return VT_EXIT_USAGE;
    }
    if (fd >= 0)
        close(fd), unlink(tmp);
    if (stat(path, &st) || !S_ISREG(st.st_mode)) /* new, or a device / FIFO: written as asked */
        return 0;
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0; /* unreadable: creating it says why, if it fails */
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    if (n != (ssize_t)sizeof head || memcmp(head, VT_MAGIC, VT_MAGIC_LEN))
        return 0;
    fprintf(stderr, "vramtrace %s: ", cmd);
    path_fputs(stderr, path);
    fprintf(stderr, " is a vramtrace trace: not overwritten (an output needs a file name of its "
                    "own, right after its option: --html OUT.html, --perfetto OUT.json)\n");
    return VT_EXIT_USAGE;
}

int notes_output_free(const char *cmd, const char *path)
{
    return output_free(cmd, path, 1);
}

int notes_stdout_data;

int notes_write(const char *cmd, const char *path, const char *what,
                int (*write)(FILE *f, void *arg), void *arg)
{
    int dash = !strcmp(path, "-"); /* standard output: the output alone, no "wrote" line */
    if (output_free(cmd, path, 0))
        return VT_EXIT_USAGE;
    /* a file is written beside its name and renamed over it once whole: a failed write (a full
     * disk, ulimit -f) leaves no half page and the file that was there as it was */
    char tmp[4096] = "";
    int fd = -1;
    if (!dash)
        plan(path, tmp, sizeof tmp, &fd);
    FILE *f = dash ? stdout : fd >= 0 ? fdopen(fd, "wb") : fopen(path, "wb");
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd), unlink(tmp);
        fprintf(stderr, "vramtrace %s: ", cmd);
        path_fputs(stderr, path);
        fprintf(stderr, ": cannot create it: %s\n", strerror(e));
        return VT_EXIT_USAGE;
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, drop = {.sa_handler = drop_tmp}, old[4];
    static const int sigs[4] = {SIGXFSZ, SIGINT, SIGTERM, SIGHUP};
    snprintf(g_tmp, sizeof g_tmp, "%s", tmp);
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], i ? &drop : &ign, &old[i]);
    errno = 0;
    int rc = write(f, arg), e = ferror(f) ? errno : 0;
    if (!e && fflush(f))
        e = errno, rc = -1;
    if (!dash && fclose(f) && !rc)
        e = errno, rc = -1;
    if (!rc && !e && tmp[0] && rename(tmp, path))
        e = errno, rc = -1;
    if ((rc || e) && tmp[0])
        unlink(tmp); /* (what was there stays) */
    g_tmp[0] = '\0';
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &old[i], NULL);
    if (rc || e) {
        fprintf(stderr, "vramtrace %s: ", cmd);
        if (dash) {
            fprintf(stderr, "cannot write the %s to standard output: %s\n", what, reason(e));
        } else {
            path_fputs(stderr, path);
            fprintf(stderr, ": cannot write it: %s\n", reason(e));
        }
        return VT_EXIT_USAGE;
    }
    if (dash)
        return 0;
    struct stat st;
    double kib = stat(path, &st) == 0 ? (double)st.st_size / 1024.0 : 0;
    FILE *o = notes_stdout_data ? stderr : stdout; /* (another output goes to stdout) */
    fputs("wrote ", o);
    path_fputs(o, path);
    if (kib >= 1024)
        fprintf(o, " (%s, %.1f MiB)\n", what, kib / 1024);
    else if (kib >= 1) /* (under a KiB: its bytes, never "0 KiB" for a file of 465 B) */
        fprintf(o, " (%s, %.0f KiB)\n", what, kib);
    else
        fprintf(o, " (%s, %.0f B)\n", what, kib * 1024);
    return 0;
}

FILE *notes_open_read(const char *what, const char *path, char *err, size_t errlen)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    int e = f ? 0 : errno;
    if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
        e = EISDIR;
    if (!e)
        return f;
    if (f)
        fclose(f);
    snprintf(err, errlen, "%s%s: %s", what, path, strerror(e));
    return NULL;
}

int notes_stdout_error(const char *cmd, int io_err)
{
    int e;
    if (ferror(stdout)) { /* a write failed: its reason ("No space left on device", ...) */
        /* errno may be a later call's by now: the unwritten rest, tried again, says it; with
         * nothing left to try, the errno of the failed write, if the command kept it */
        int last = errno;
        clearerr(stdout);
        errno = 0;
        e = fflush(stdout) && errno ? errno : last ? last : EIO;
    } else if (io_err) /* the view could not build what it writes */
        e = 0;
    else if (fflush(stdout))
        e = errno;
    else
        return 0;
    fprintf(stderr, "vramtrace %s: cannot write the output: %s\n", cmd, reason(e));
    return -1;
}
