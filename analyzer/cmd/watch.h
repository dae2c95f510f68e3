/* watch.h — watching a trace being written (watching.c), for cmd_watch.c and cmd_run.c. */
#ifndef VT_ANALYZER_WATCH_H
#define VT_ANALYZER_WATCH_H

#include <sys/types.h>

/* watch_child: shows the run of child pid from its trace (the first path the preload writes to
 * the manifest) until the child exits; reaps it (its wait status in *status). */
void watch_child(pid_t pid, const char *manifest, int *status);
/* watch_loop: shows path every interval seconds until its trace ends, the child (when > 0)
 * exits (then *reaped = 1, its status in *status), or once; plain: one line per refresh even on
 * a terminal. The exit code (VT_EXIT_*). */
int watch_loop(const char *path, double interval, int once, int plain, pid_t child, int *status,
               int *reaped);

#endif
