/* run_traces.h — what `vramtrace run` says of the traces its command wrote (run_traces.c). */
#ifndef VT_ANALYZER_RUN_TRACES_H
#define VT_ANALYZER_RUN_TRACES_H

#include <limits.h>
#include <stddef.h>

/* run_self_exe: this program's file (/proc/self/exe) into self; 0, or -1 when it cannot be read */
int run_self_exe(char self[PATH_MAX]);
/* run_manifest_path: a manifest line (without its newline) that names a trace made its path into
 * out: "\\" and "\n" undone (include/vramtrace/env.h); 0, or -1 when it is not so escaped
 * (out then holds it as written) or does not fit cap */
int run_manifest_path(const char *line, char *out, size_t cap);
/* run_print_traces: every trace the manifest lists, once, with its summary unless quiet, and
 * the processes that wrote none with why; ran: the command started; output: the trace name
 * given to the preload (said when the manifest could not be written: a full TMPDIR) */
void run_print_traces(const char *manifest, const char *output, int quiet, int ran);
/* run_pass_up: a run inside another's (`vramtrace run -- vramtrace run -- CMD`): the traces the
 * manifest lists are listed in the outer run's too (it had said "no CUDA allocation was made") */
void run_pass_up(const char *manifest, const char *outer);

#endif
