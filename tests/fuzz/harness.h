/* harness.h — what the trace fuzz targets share (harness.c): the input as a file (a memfd
 * behind a /proc/self/fd path), the commands' output sent nowhere, a command run as main runs
 * it, and the structure-aware mutator hooked in (vtmutate.h). */
#ifndef VT_FUZZ_HARNESS_H
#define VT_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

/* harness_file: data written to the target's one memfd; returns its path (valid for the run). */
const char *harness_file(const uint8_t *data, size_t size);

/* harness_cmd: fn (a cmd_* of commands.h) run with the NULL-terminated words as its argv
 * (argv[0] first), stdout and stderr going to /dev/null; its exit code. An exit code that no
 * command returns (not 0-3) aborts: the fuzzer reports it as a crash. */
int harness_cmd(int (*fn)(int, char **), ...);

#endif
