/* watch_child.c — `run --watch`: the run of run's command followed from its trace, and on across
 * its execs: a trace that ends at an exec (its trailer says so) is followed by the new image's, the
 * manifest's next trace written by the same pid. `run --watch` had stopped at the first image's
 * end ("(ended)") and shown nothing of the rest of the run (a wrapper that execs the training). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "escape.h"
#include "reader.h"
#include "run_signals.h"
#include "run_manifest.h"
#include "vramtrace/env.h"
#include "vramtrace/trace_format.h"
#include "watch.h"

/* manifest_line: the list's line n (from 0: run_manifest.h) into out, a trace's path unescaped,
 * "!" for a line that names none; 0 when it is not there yet */
static int manifest_line(const char *manifest, int n, char *out, size_t cap)
{
    run_manifest m;
    if (run_manifest_open(&m, manifest) < 0)
        return 0;
    static char line[VT_MANIFEST_LINE_MAX + 2];
    int k = 0, found = 0;
    while (!found && run_manifest_next(&m, line, sizeof line))
        if (k++ == n) {
            if (line[0] != '!' && line[0] != '?')
                run_manifest_path(line, out, cap);
            else if (cap) /* (said as none: what it says is not read here) */
                snprintf(out, cap, "!");
            found = 1;
        }
    run_manifest_close(&m);
    return found;
}

/* trace_pid: the pid of path's PROCESS record (the first after the header); 0 when it is not
 * written yet or path is no trace */
static uint32_t trace_pid(const char *path)
{
    char msg[512];
    reader *rd = reader_open(path, msg, sizeof msg);
    if (!rd)
        return 0;
    reader_record rec;
    uint32_t pid = 0;
    for (int i = 0; !pid && i < 4 && reader_next(rd, &rec); i++)
        if (rec.type == VT_REC_PROCESS)
            pid = rec.u.process.fixed.pid;
    reader_close(rd);
    return pid;
}

/* next_trace: the trace to follow: the manifest's first line (a "!" line: none, as before), or
 * after an exec by exec_pid the first later line that is a trace of exec_pid (*at: its line) */
static int next_trace(const char *manifest, uint32_t exec_pid, int *at, char *path, size_t cap)
{
    if (!exec_pid)
        return manifest_line(manifest, 0, path, cap) && path[0] != '!';
    for (int n = *at + 1; manifest_line(manifest, n, path, cap); n++)
        if (path[0] != '!' && trace_pid(path) == exec_pid) {
            *at = n;
            return 1;
        }
    return 0;
}

/* watch_child: see watch.h */
void watch_child(pid_t pid, const char *manifest, int *status)
{
    static char path[VT_MANIFEST_LINE_MAX]; /* (a directory and a name: env.h) */
    int reaped = 0, at = 0;
    uint32_t exec_pid = 0;
    /* (not `while (!reaped)`: a watch that fell behind finds the program ended after an exec,
     * its later images' traces written, and shows each of them, as it does of a live run) */
    for (;;) {
        if (!next_trace(manifest, exec_pid, &at, path, sizeof path)) {
            if (reaped)
                break; /* the run ended: no later image's trace */
            pid_t p = run_signals_reap(pid, status, WNOHANG);
            reaped = p == pid || (p < 0 && errno != EINTR);
            struct timespec ts = {0, 200000000L};
            if (!reaped)
                nanosleep(&ts, NULL);
            continue;
        }
        if (exec_pid) {
            static char shown[4 * VT_MANIFEST_LINE_MAX]; /* (a name is the program's: escaped) */
            escape_term(path, strlen(path), shown, sizeof shown);
            fprintf(stderr,
                    "vramtrace watch: the program exec'd; following its new image's trace %s\n",
                    shown);
        }
        watch_loop(path, 1.0, 0, 0, pid, status, &reaped, &exec_pid);
        if (!exec_pid)
            break;
    }
    while (!reaped && run_signals_reap(pid, status, 0) < 0 && errno == EINTR) {
    }
}
