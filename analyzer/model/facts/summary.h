/* summary.h — what the one-paragraph summary after `vramtrace run` says, taken from the one
 * replay (replay.c), so it agrees with `vramtrace report`; printed by views/summary_text.c. */
#ifndef VT_ANALYZER_SUMMARY_H
#define VT_ANALYZER_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"

typedef struct run_summary {
    uint64_t events, failed;        /* allocation and free events; failed allocations */
    uint64_t failed_frees;          /* failed frees */
    uint64_t failed_frees_shutdown; /* of them, refused as the driver shut down */
    uint64_t peak_reserved;         /* the report's "reserved (allocator)" peak */
    uint64_t peak_process;          /* the report's "process (all device)" peak */
    uint64_t contexts;              /* CUDA contexts created */
    uint64_t lost, made;            /* events the capture could not store, all the run made */
    uint64_t missing;               /* a chunked trace's events not in its file (disk full) */
    int oom;                        /* the run ended in an out-of-memory error (report: OOM) */
    uint64_t oom_requested;         /* bytes the failing call asked for */
    uint32_t oom_caught;            /* errors the program caught and went on from (replay.h) */
    int oom_went_on;                /* the OOM (oom) is the last of them */
    uint64_t caught_requested;      /* the first one's request */
    int truncated;                  /* no trailer: the process did not stop cleanly */
    char truncated_why[256];
    unsigned ended;     /* the trailer's VT_TRAILER_* flags (disk full, ...); 0 = plain exit */
    uint32_t end_error; /* the trailer's error (EFBIG: the file-size limit), 0 none */
    unsigned lost_why;  /* the trailer's VT_TRAILER_LOSSES bits: why `lost` were */
} run_summary;

/* summary_of_replay: the summary of a replayed trace. */
void summary_of_replay(const replay_result *r, run_summary *s);

/* summary_read: replays path and summarizes it into *s. Returns 0, or VT_EXIT_USAGE (cannot
 * open, out of memory) / VT_EXIT_MALFORMED with the reason in err. Prints nothing. */
int summary_read(const char *path, run_summary *s, char *err, size_t errlen);

#endif
