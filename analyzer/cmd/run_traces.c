/* run_traces.c — what `vramtrace run` says of the traces its command wrote: the manifest the
 * preload appended each trace's path to (or "!PID why" for a process that could not write one)
 * read back, each trace once with its one-paragraph summary (model/summary.c,
 * views/summary_text.c) and what the summary cannot say. */
#include "run_traces.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "exit_codes.h"
#include "mem.h"
#include "reader.h"
#include "summary.h"
#include "summary_text.h"
#include "vramtrace/env.h"
#include "vramtrace/trace_format.h"

/* run_self_exe (run_traces.h) */
int run_self_exe(char self[PATH_MAX])
{
    ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    return 0;
}

/* trace_notes: what the summary cannot say, from the trace's own records: output that stopped
 * at the file-size limit (TRAILER error EFBIG: not a full disk) and native frames left out
 * after a fork from a multithreaded parent (CONFIG flags). `shown` is the escaped path. */
static void trace_notes(const char *path, const char *shown, unsigned ended)
{
    reader *r = reader_open(path, NULL, 0);
    if (!r)
        return;
    int want_trailer = (ended & (VT_TRAILER_DISK_FULL | VT_TRAILER_OUTPUT_ERROR)) != 0;
    uint32_t config_flags = 0, error = 0;
    reader_record rec;
    while (reader_next(r, &rec)) {
        if (rec.type == VT_REC_CONFIG) {
            config_flags = rec.u.config.fixed.flags;
            if (!want_trailer)
                break;
        } else if (rec.type == VT_REC_TRAILER) {
            error = rec.u.trailer.error;
        }
    }
    reader_close(r);
    if (error == EFBIG)
        fprintf(stderr,
                "vramtrace: %s stopped at the process's file-size limit (ulimit -f), not on a "
                "full disk: the program went on untraced; `ulimit -f unlimited` for a whole "
                "trace\n",
                shown);
    if (config_flags & VT_CONFIG_NATIVE_OFF_FORK)
        fprintf(stderr,
                "vramtrace: %s has no native frames: its process was forked from a "
                "multithreaded parent, where unwinding could wait for ever on the loader's "
                "lock (Python frames are kept)\n",
                shown);
}

/* self_name: how the user runs this program again, for the summary's closing hint: `vramtrace`
 * when that name on PATH is this file, else this file's path (a fresh clone's build/vramtrace
 * is on no PATH), escaped for the terminal */
static void self_name(char *out, size_t len)
{
    char self[PATH_MAX], cand[PATH_MAX], real[PATH_MAX];
    snprintf(out, len, "vramtrace");
    if (run_self_exe(self) < 0)
        return;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t k = strcspn(p, ":");
        if (k && k < sizeof cand - 11) {
            snprintf(cand, sizeof cand, "%.*s/vramtrace", (int)k, p);
            if (realpath(cand, real) && !strcmp(real, self))
                return;
        }
        p += k + (p[k] == ':');
    }
    escape_term(self, strlen(self), out, len);
}

/* manifest_unwritable: 0 when a line can still be added to the manifest (it was empty: no
 * process wrote a trace), else the errno that kept it from growing (a full TMPDIR, the
 * file-size limit): then its emptiness says nothing of the run. One newline (a blank line: its
 * readers skip those), with SIGXFSZ ignored while it is written (the program has ended). */
static int manifest_unwritable(const char *manifest)
{
    int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct sigaction ign = {0}, old;
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &old);
    int err = write(fd, "\n", 1) == 1 ? 0 : errno ? errno : EIO;
    sigaction(SIGXFSZ, &old, NULL);
    close(fd);
    return err;
}

/* as_written: line, cut to cap, into out (a line the preload did not escape); -1 */
static int as_written(const char *line, char *out, size_t cap)
{
    size_t n = strnlen(line, cap - 1);
    memcpy(out, line, n);
    out[n] = '\0';
    return -1;
}

/* run_manifest_path (run_traces.h) */
int run_manifest_path(const char *line, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = line; *s; s++) {
        char c = *s;
        if (c == '\\') {
            if (s[1] != '\\' && s[1] != 'n')
                return as_written(line, out, cap);
            c = *++s == 'n' ? '\n' : '\\';
        }
        if (n + 1 >= cap)
            return as_written(line, out, cap);
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

/* run_print_traces (run_traces.h): every path in the manifest once, with its summary unless quiet;
 * the processes that could not write one ("!PID why", written by the preload) with the reason; ran:
 * the command started (else nothing is said of a trace it could not write). */
void run_print_traces(const char *manifest, const char *output, int quiet, int ran)
{
    FILE *f = fopen(manifest, "r");
    if (!f)
        return;
    /* (one line whole: env.h; its path escaped for the terminal takes up to 4 bytes a byte) */
    static char line[VT_MANIFEST_LINE_MAX + 2], path[VT_MANIFEST_LINE_MAX],
        shown[2 * VT_MANIFEST_LINE_MAX];
    char prog[PATH_MAX + 64];
    self_name(prog, sizeof prog);
    char seen[64][512];
    int nseen = 0, count = 0, failed = 0, any_failed = 0;
    while (fgets(line, sizeof line, f)) /* (a process that failed after listing its trace) */
        any_failed |= line[0] == '!';
    rewind(f);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0])
            continue;
        if (line[0] == '!') {
            escape_term(line, strlen(line), shown, sizeof shown);
            char *sp = strchr(shown, ' ');
            fprintf(stderr, "vramtrace: process %.*s wrote no trace: %s\n",
                    sp ? (int)(sp - shown - 1) : 0, shown + 1, sp ? sp + 1 : shown);
            failed++;
            continue;
        }
        run_manifest_path(line, path, sizeof path);
        escape_term(path, strlen(path), shown, sizeof shown);
        int dup = 0;
        for (int i = 0; i < nseen; i++)
            dup |= !strncmp(seen[i], path, sizeof seen[i] - 1);
        struct stat st; /* listed when made, removed when its process could not go on: said */
        if (dup || (any_failed && stat(path, &st) && errno == ENOENT))
            continue;
        if (nseen < 64)
            snprintf(seen[nseen++], sizeof seen[0], "%.500s", path);
        count++;
        run_summary sum;
        char err[600] = "";
        int ok = summary_read(path, &sum, err, sizeof err) == VT_EXIT_OK;
        if (ok && mem_failed()) { /* a summary built without something: not shown */
            ok = 0;
            snprintf(err, sizeof err, "out of memory while reading it");
        }
        if (quiet) {
            fprintf(stderr, "vramtrace: trace %s\n", shown);
        } else {
            fprintf(stderr, "\n");
            if (ok)
                summary_text(stderr, shown, &sum, prog);
            else
                fprintf(stderr, "vramtrace: cannot summarize the trace: %s\n", err);
        }
        if (ok)
            trace_notes(path, shown, sum.ended);
    }
    fclose(f);
    if (count || failed || !ran)
        return;
    int err = manifest_unwritable(manifest);
    if (!err) {
        fprintf(stderr, "vramtrace: no CUDA allocation was made, so no trace was written\n");
        return;
    }
    char shown_out[2 * PATH_MAX], shown_dir[2 * PATH_MAX];
    const char *out = output && *output ? output : "vramtrace.%p.vt";
    escape_term(out, strlen(out), shown_out, sizeof shown_out);
    escape_term(manifest, strlen(manifest), shown_dir, sizeof shown_dir);
    fprintf(stderr,
            "vramtrace: the list of this run's traces could not be written (%s: %s), so none is "
            "summarized here: a trace it wrote, if any, is named as %s%s\n",
            shown_dir,
            err == EFBIG ? "File too large (the file-size limit, ulimit -f)" : strerror(err),
            shown_out, strstr(out, "%p") ? " (%p: a process id)" : "");
}

/* run_pass_up: see run_traces.h. The lines as the preload wrote them (escaped), each appended
 * whole in one write (other processes of the outer run may be appending theirs). */
void run_pass_up(const char *manifest, const char *outer)
{
    FILE *f = fopen(manifest, "r");
    int fd = f ? open(outer, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK) : -1;
    static char line[VT_MANIFEST_LINE_MAX + 2];
    while (fd >= 0 && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (n && write(fd, line, n) != (ssize_t)n)
            break;
    }
    if (fd >= 0)
        close(fd);
    if (f)
        fclose(f);
}
