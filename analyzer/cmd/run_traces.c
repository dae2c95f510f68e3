/* run_traces.c — what `vramtrace run` says of the traces its command wrote: the manifest the
 * preload appended each trace's path to (or "!PID why" for a process that could not write one;
 * run_manifest.c reads it) read back, each trace once with its one-paragraph summary
 * (model/summary.c, views/summary_text.c) and what the summary cannot say. */
#include "run_traces.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cards.h"
#include "escape.h"
#include "exit_codes.h"
#include "mem.h"
#include "reader.h"
#include "run_manifest.h"
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

/* card_over_device: `run --card` larger than the device the trace's first DEVICE record names:
 * the device refuses what does not fit it, the card never does; said once. */
static void card_over_device(const char *shown, uint64_t card, const char *name,
                             const reader_device *d)
{
    char cb[32], db[32], dev[256];
    card_format_bytes(card, cb, sizeof cb);
    card_format_bytes(d->fixed.total_bytes, db, sizeof db);
    escape_term(d->name.p ? d->name.p : "", d->name.p ? d->name.len : 0, dev, sizeof dev);
    fprintf(stderr,
            "vramtrace: %s: the card asked, %s (%s), is larger than device %u (%s, %s): the "
            "device's own memory decided what fit, not the card; give a --card no larger than "
            "the device to emulate one\n",
            shown, *name ? name : cb, cb, d->fixed.ordinal, dev, db);
}

/* trace_notes: what the summary cannot say, from the trace's own records: output that stopped
 * at the file-size limit (TRAILER error EFBIG: not a full disk), native frames left out after a
 * fork from a multithreaded parent (CONFIG flags) and an emulated card larger than the device
 * (CONFIG and the first DEVICE record). `shown` is the escaped path. */
static void trace_notes(const char *path, const char *shown, unsigned ended)
{
    reader *r = reader_open(path, NULL, 0);
    if (!r)
        return;
    int want_trailer = (ended & (VT_TRAILER_DISK_FULL | VT_TRAILER_OUTPUT_ERROR)) != 0;
    uint32_t config_flags = 0, error = 0;
    uint64_t card = 0; /* (CONFIG's: then the first DEVICE record is wanted) */
    char name[256] = "";
    reader_record rec;
    while (reader_next(r, &rec)) {
        if (rec.type == VT_REC_CONFIG) {
            config_flags = rec.u.config.fixed.flags;
            card = rec.u.config.fixed.card_bytes;
            if (card && rec.u.config.card.p) /* (escaped: the trace's string) */
                escape_term(rec.u.config.card.p, rec.u.config.card.len, name, sizeof name);
            if (!want_trailer && !card)
                break;
        } else if (rec.type == VT_REC_DEVICE && card) {
            if (rec.u.device.fixed.total_bytes && card > rec.u.device.fixed.total_bytes)
                card_over_device(shown, card, name, &rec.u.device);
            card = 0;
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

/* given_output: the trace name given to the preload (its default where none was);
 * shown_output: the same, escaped for the terminal */
static const char *given_output(const char *output)
{
    return output && *output ? output : "vramtrace.%p.vt";
}

static const char *shown_output(const char *output)
{
    static char shown[4 * PATH_MAX];
    const char *out = given_output(output);
    escape_term(out, strlen(out), shown, sizeof shown);
    return shown;
}

/* run_print_traces (run_traces.h): every path in the manifest once, with its summary unless quiet;
 * the processes that could not write one ("!PID why", written by the preload) with the reason; ran:
 * the command started (else nothing is said of a trace it could not write). */
void run_print_traces(const char *manifest, const char *output, int quiet, int ran)
{
    run_manifest m;
    if (run_manifest_open(&m, manifest) < 0)
        return;
    /* (one line whole: env.h; its path escaped for the terminal takes up to 4 bytes a byte) */
    static char line[VT_MANIFEST_LINE_MAX + 2], path[VT_MANIFEST_LINE_MAX],
        shown[2 * VT_MANIFEST_LINE_MAX];
    char prog[PATH_MAX + 64];
    self_name(prog, sizeof prog);
    char seen[64][512];
    int nseen = 0, count = 0, failed = 0, any_failed = 0;
    while (run_manifest_next(&m, line, sizeof line)) /* (a process that failed after listing */
        any_failed |= line[0] == '!';                /* its trace) */
    run_manifest_close(&m);
    run_manifest_open(&m, manifest);
    while (run_manifest_next(&m, line, sizeof line)) {
        if (!line[0])
            continue;
        if (line[0] == '!' || line[0] == '?') { /* ("?": written, its name too long to list) */
            escape_term(line, strlen(line), shown, sizeof shown);
            char *sp = strchr(shown, ' ');
            fprintf(stderr, "vramtrace: process %.*s %s: %s%s%s%s\n",
                    sp ? (int)(sp - shown - 1) : 0, shown + 1,
                    line[0] == '!' ? "wrote no trace" : "wrote a trace it could not list",
                    sp ? sp + 1 : shown, line[0] == '?' ? " (it is named as " : "",
                    line[0] == '?' ? shown_output(output) : "", line[0] == '?' ? ")" : "");
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
    run_manifest_close(&m);
    if (count || failed || !ran)
        return;
    int by_link = 0, err = run_manifest_lost(manifest, &by_link);
    if (!err) {
        fprintf(stderr, "vramtrace: no CUDA allocation was made, so no trace was written\n");
        return;
    }
    char shown_dir[2 * PATH_MAX];
    const char *out = given_output(output);
    escape_term(manifest, strlen(manifest), shown_dir, sizeof shown_dir);
    fprintf(stderr,
            "vramtrace: the list of this run's traces could not be written (%s%s: %s), so none "
            "is summarized here: a trace it wrote, if any, is named as %s%s\n",
            shown_dir,
            by_link ? ", a link beside it for a process with no file descriptor free" : "",
            err == EFBIG ? "File too large (the file-size limit, ulimit -f)" : strerror(err),
            shown_output(output), strstr(out, "%p") ? " (%p: a process id)" : "");
}
