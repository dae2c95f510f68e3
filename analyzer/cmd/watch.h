/* watch.h — watching a trace being written (watching.c), for cmd_watch.c and cmd_run.c. */
#ifndef VT_ANALYZER_WATCH_H
#define VT_ANALYZER_WATCH_H

#include <stdint.h>
#include <sys/types.h>

/* watch_child: shows the run of child pid from its trace (the first path the preload writes to
 * the manifest) until the child exits, and where that trace ends at an exec, the trace of the
 * new image (the manifest's next trace of the same pid); reaps it (its wait status in *status).
 * watch_child.c */
void watch_child(pid_t pid, const char *manifest, int *status);
/* watch_loop: shows path every interval seconds until its trace ends, the child (when > 0)
 * exits (then *reaped = 1, its status in *status), or once; plain: one line per refresh even on
 * a terminal. *exec_pid (when not NULL): the pid that wrote it when it ended at an exec, else 0.
 * The exit code (VT_EXIT_*). */
int watch_loop(const char *path, double interval, int once, int plain, pid_t child, int *status,
               int *reaped, uint32_t *exec_pid);

#endif
