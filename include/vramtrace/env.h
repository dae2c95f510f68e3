/* env.h — the environment both halves agree on: the VRAMTRACE_* variables `vramtrace run`
 * sets and the preload reads (documented in the README's table), and the names
 * of the stack modes. Nothing else; the trace format is trace_format.h. */
#ifndef VRAMTRACE_ENV_H
#define VRAMTRACE_ENV_H

/* The variables `vramtrace run` sets and the preload reads, each name defined once here
 * (what each holds: the README's table). */
#define VT_ENV_DISABLE "VRAMTRACE_DISABLE"
#define VT_ENV_OUTPUT "VRAMTRACE_OUTPUT"
#define VT_ENV_STACKS "VRAMTRACE_STACKS"
#define VT_ENV_STACK_DEPTH "VRAMTRACE_STACK_DEPTH"
#define VT_ENV_CARD_BYTES "VRAMTRACE_CARD_BYTES"
#define VT_ENV_CARD_NAME "VRAMTRACE_CARD_NAME"
#define VT_ENV_SAMPLE_MS "VRAMTRACE_SAMPLE_MS"
#define VT_ENV_FREE_STACKS "VRAMTRACE_FREE_STACKS"
#define VT_ENV_MANIFEST "VRAMTRACE_MANIFEST"
#define VT_ENV_PRELOAD "VRAMTRACE_PRELOAD"
#define VT_ENV_TORCH_TRACKER "VRAMTRACE_TORCH_TRACKER"
#define VT_ENV_MAX_SIZE "VRAMTRACE_MAX_SIZE"
#define VT_ENV_COMPRESS "VRAMTRACE_COMPRESS"

/* VRAMTRACE_MANIFEST's lines, one a trace: its absolute path with each backslash written "\\"
 * and each newline "\n" (a name may hold both: a raw one had been read as two lines, another
 * file); or "!PID why" for a process that wrote none (why printable, escaped); or "?PID why"
 * for a trace written that cannot be named (a relative name where the working directory cannot
 * be named, getcwd failing; a name past the line). At most
 * VT_MANIFEST_LINE_MAX bytes with the newline: a directory and a name, escaped. */
#define VT_MANIFEST_LINE_MAX 16800
/* Where the preload has no file descriptor free to open the manifest (EMFILE, ENFILE: `ulimit
 * -n 4`, the trace in the last one), the line is a symbolic link beside it instead, MANIFEST.1,
 * .2, ... (the first free, at most VT_MANIFEST_LINKS), whose target is the line without its
 * newline; or, for a trace whose line is too long for a link, "?PID why": a trace written that
 * cannot be named. `vramtrace run` reads the links after the manifest's lines (a line had been
 * lost, and run said "no CUDA allocation was made" beside the whole trace). */
#define VT_MANIFEST_LINKS 256

/* VRAMTRACE_MAX_SIZE: the smallest bound a chunked trace takes (32 slots of 256 KiB) */
#define VT_MAX_SIZE_MIN (8ull << 20)

/* Stack modes: X(name, VT_STACKS_* bits of trace_format.h, expanded where it is included).
 * The preload and `vramtrace run --stacks` accept exactly these names; the preload warns once
 * and uses "all" otherwise. */
#define VT_STACKS_NAME_ALL "all"
#define VT_STACKS_NAME_NATIVE "native"
#define VT_STACKS_NAME_PYTHON "python"
#define VT_STACKS_NAME_NONE "none"
/* clang-format off */
#define VT_STACK_MODES(X)                                                                          \
    X(VT_STACKS_NAME_ALL, VT_STACKS_NATIVE | VT_STACKS_PYTHON)                                     \
    X(VT_STACKS_NAME_NATIVE, VT_STACKS_NATIVE)                                                     \
    X(VT_STACKS_NAME_PYTHON, VT_STACKS_PYTHON)                                                     \
    X(VT_STACKS_NAME_NONE, VT_STACKS_NONE)
/* clang-format on */

#endif /* VRAMTRACE_ENV_H */
