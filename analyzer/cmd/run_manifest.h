/* run_manifest.h — the list of traces `vramtrace run` gives the preload (VRAMTRACE_MANIFEST) read
 * back: its lines, then the lines a process with no file descriptor free left beside it as
 * symbolic links (include/vramtrace/env.h); run_manifest.c. */
#ifndef VT_ANALYZER_RUN_MANIFEST_H
#define VT_ANALYZER_RUN_MANIFEST_H

#include <stddef.h>
#include <stdio.h>

/* run_manifest: a reading of the list: open it with run_manifest_open, read run_manifest_next
 * until 0, close it with run_manifest_close. */
typedef struct run_manifest {
    const char *name;
    FILE *f;  /* the file's lines; NULL once read (or when it cannot be opened) */
    int mark; /* the next link to read, from 1 */
} run_manifest;

/* run_manifest_open: from the first line; 0, or -1 (errno) when the file cannot be opened */
int run_manifest_open(run_manifest *m, const char *name);
/* run_manifest_next: the next line into line (cap), without its newline: the file's whole lines
 * (one not ended yet is not there), then the links this user made; 1, or 0 at the end */
int run_manifest_next(run_manifest *m, char *line, size_t cap);
void run_manifest_close(run_manifest *m);
/* run_manifest_remove: the file and its links gone (run's end) */
void run_manifest_remove(const char *name);
/* run_manifest_path: a line that names a trace made its path into out: "\\" and "\n" undone
 * (env.h); 0, or -1 when it is not so escaped (out then holds it as written) or does not fit */
int run_manifest_path(const char *line, char *out, size_t cap);
/* run_manifest_lost: the list could not have taken a process's line, so its emptiness says
 * nothing of the run: the errno that keeps it from growing (a full TMPDIR, the file-size limit)
 * or, *by_link set, from taking a link beside it (a TMPDIR with no room or no links), found by
 * trying both; 0 when both can be written */
int run_manifest_lost(const char *name, int *by_link);
/* run_pass_up: a run inside another's (`vramtrace run -- vramtrace run -- CMD`): the lines this
 * run's list holds are added to the outer run's, so it lists them too (it had said "no CUDA
 * allocation was made") */
void run_pass_up(const char *manifest, const char *outer);

#endif
