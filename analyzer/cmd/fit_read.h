/* fit_read.h — what `vramtrace fit` reads of one trial (fit_read.c): its traces, and the
 * sequence length its command line gives. cmd_fit.c runs the trials and decides what they mean. */
#ifndef VT_FIT_READ_H
#define VT_FIT_READ_H

#include "fit_job.h"

/* fit_read_traces: replays every trace in dir (a trial's directory) into t: its peak or its
 * out-of-memory error, steps, backward passes, accumulation, the micro-batch and the sequence
 * length its trace shows, the card. A trace that cannot be read is said (notes_error) and
 * skipped. Returns the number of traces read. */
int fit_read_traces(const char *dir, fit_trial *t);

/* fit_seq_flag: the sequence length the trial's command line (argv[0..argc): its script and
 * flags) gives by a flag vramtrace reads as T (--max_seq_length 512), into t->seq_flag and
 * t->seq_name; none: 0 and "" */
void fit_seq_flag(int argc, char *const *argv, fit_trial *t);

#endif
