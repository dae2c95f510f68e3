/* argfiles.h — the FILE records: config files named on the command line, recorded while the
 * trace opens (argfiles.c); called by procinfo.c right after the PROCESS record. */
#ifndef VT_PRELOAD_ARGFILES_H
#define VT_PRELOAD_ARGFILES_H

/* vt__write_argfiles_locked: for argv[1..argc-1] (the process's command line; cwd for
 * relative names) appends one FILE record per named config file (trace_format.h, FILE: which
 * files, bounds), then PyTorch's torch/version.py when PyTorch is loaded. Only from the writer's
 * on-open callback (vt__writer_append_locked). */
void vt__write_argfiles_locked(int argc, const char *const *argv, const char *cwd);

#endif
