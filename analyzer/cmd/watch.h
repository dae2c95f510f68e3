/* watch.h — what `run --watch` takes from cmd_watch.c. */
#ifndef VT_ANALYZER_WATCH_H
#define VT_ANALYZER_WATCH_H

#include <sys/types.h>

/* watch_child: shows the run of child pid from its trace (the first path the preload writes to
 * the manifest) until the child exits; reaps it (its wait status in *status). */
void watch_child(pid_t pid, const char *manifest, int *status);

#endif
