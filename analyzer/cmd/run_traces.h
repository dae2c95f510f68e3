/* run_traces.h — what `vramtrace run` says of the traces its command wrote (run_traces.c). */
#ifndef VT_ANALYZER_RUN_TRACES_H
#define VT_ANALYZER_RUN_TRACES_H

#include <limits.h>

/* run_self_exe: this program's file (/proc/self/exe) into self; 0, or -1 when it cannot be read */
int run_self_exe(char self[PATH_MAX]);
/* run_print_traces: every trace the manifest lists, once, with its summary unless quiet, and
 * the processes that wrote none with why; ran: the command started; output: the trace name
 * given to the preload (said when the manifest could not be written: a full TMPDIR) */
void run_print_traces(const char *manifest, const char *output, int quiet, int ran);

#endif
