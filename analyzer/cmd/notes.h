/* notes.h — the messages every command shares: the warnings a replayed trace calls for (cut
 * short, stopped early, implausible sizes), a file written with its path on stdout, and the
 * system's reason when writing it failed. Printed only from cmd/ (commands.h). */
#ifndef VT_ANALYZER_NOTES_H
#define VT_ANALYZER_NOTES_H

#include <stdio.h>

#include "replay.h"

/* notes_trace: on stderr, "vramtrace CMD: warning: PATH is truncated (why ...); DOING every
 * complete record" for a trace without its end, the same for one that stopped early (disk
 * full, a failed write), the allocations not counted because of an implausible size, and a
 * trace with no allocation of PyTorch's (cut before the first, or too short): nothing to
 * diagnose or advise. */
void notes_trace(const char *cmd, const replay_result *r, const char *doing);
/* notes_stopped: notes_trace's warning for a trace whose capture stopped early (its trailer's
 * flags ended and error: a full disk, the file-size limit, a failed write; lost: events made
 * before it are missing), nothing otherwise */
void notes_stopped(const char *cmd, const char *path, unsigned ended, int error, int lost,
                   const char *doing);
/* notes_truncated: notes_trace's warning for a trace without its end, why the reader's reason
 * ("no trailer" when NULL or ""): `dump`, which replays nothing, says it so too. */
void notes_truncated(const char *cmd, const char *path, const char *why, const char *doing);
/* notes_implausible: "vramtrace CMD: warning: PATH: N allocations not counted (they would make
 * more than 4 EiB live at once: not a real run)" when n (notes_trace's, and watch's own count) */
void notes_implausible(const char *cmd, const char *path, uint64_t n);

/* notes_error: "vramtrace CMD: MSG" on stderr, MSG escaped for the terminal (the reader's
 * messages name the file as given, and a shell pattern may match any name). */
void notes_error(const char *cmd, const char *msg);
/* notes_output_free: 0 when path may be written as an output; VT_EXIT_USAGE after "vramtrace
 * CMD: PATH is a vramtrace trace: not overwritten ..." when it is one (a trace given as the
 * output, the one being read too: `report --html a.vt b.vt`), or after "PATH: cannot create it:
 * REASON" when no file can be made there (its directory missing or read-only). Commands ask
 * before reading, for every output, so that none is written when one cannot be. */
int notes_output_free(const char *cmd, const char *path);

/* notes_stdout_data: set when an output of this command goes to standard output ("-"): the
 * "wrote FILE" lines of the others go to stderr then */
extern int notes_stdout_data;
/* notes_write: creates path (never over a trace: notes_output_free), runs write(f, arg) into it and
 * closes it; on success prints "wrote PATH (WHAT, SIZE)" on stdout; "-" is standard output (the
 * output alone). A new or regular file is written beside its name and renamed over it once whole
 * (a failed write leaves what was there; a device, FIFO or link is written in place). Returns 0,
 * or VT_EXIT_USAGE
 * after "vramtrace CMD: PATH: cannot create it: REASON" / "cannot write it: REASON" (the system's:
 * "Is a directory", "No space left on device"; "out of memory" when write failed without one). */
int notes_write(const char *cmd, const char *path, const char *what,
                int (*write)(FILE *f, void *arg), void *arg);

/* notes_open_read: path opened for reading, or NULL with "WHATPATH: REASON" in err (the
 * system's reason; a directory is refused with "Is a directory", which fopen lets through). */
FILE *notes_open_read(const char *what, const char *path, char *err, size_t errlen);

/* notes_stdout_error: 0 when stdout took everything (flushed), else -1 after "vramtrace CMD:
 * cannot write the output: REASON" on stderr. io_err: the view already saw a failed write. */
int notes_stdout_error(const char *cmd, int io_err);

#endif
