/* run_preload.h — which libvramtrace.so `vramtrace run` preloads (run_preload.c). */
#ifndef VT_ANALYZER_RUN_PRELOAD_H
#define VT_ANALYZER_RUN_PRELOAD_H

#include <stddef.h>

/* run_find_preload: libvramtrace.so beside this binary, or ../lib/vramtrace/ (installed), or
 * $VRAMTRACE_PRELOAD, which must be a library the loader would preload into this machine's
 * programs. 0 and the path in out; -1 (errno: not found, not readable); -2 with why (not such a
 * library, or a path LD_PRELOAD cannot hold, with a space or a colon: the loader would skip it
 * with a line of its own and the program run untraced). */
int run_find_preload(char *out, size_t len, const char **why);

#endif
