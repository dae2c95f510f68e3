/* report_views.h — the views of the one report (report/report.h): text (report_text.c) and
 * JSON (report_json.c). They only render a built report_ctx; they never compute. */
#ifndef VT_ANALYZER_REPORT_VIEWS_H
#define VT_ANALYZER_REPORT_VIEWS_H

#include <stdio.h>

#include "report.h"

/* VT_REPORT_SCHEMA_VERSION: "schema_version" of `report --json` (README, `vramtrace report`).
 * 1: the first numbered schema (mode, run, peak, categories, config, advice as documented).
 * 2 (2026-12-07): growth.optimizer_steps may be null (a count not known: a step of two passes);
 * recognized.family names what the text says where the evidence does not tell a decoder from an
 * encoder (transformer, transformer_language_model, language_model, conv_stem_transformer), where
 * 1 had said decoder_transformer or vision_transformer. */
#define VT_REPORT_SCHEMA_VERSION 2

/* report_text / report_json: the report of c (report_build done) to out. 0, or -1 when the
 * output could not be made (out of memory). */
int report_text(FILE *out, const report_ctx *c);
int report_json(FILE *out, const report_ctx *c);
/* report_tracker_text: why PyTorch's allocator tracker was not used (a torchTrackerNote in
 * the trace), or NULL when it was, or when the trace says nothing about it. */
const char *report_tracker_text(const replay_result *r);
/* report_failed_text: the failed calls among the events, as counted ("0 failed allocations",
 * "1 failed allocation; 23 failed frees": frees only when some failed, and how many of them the
 * driver refused as it shut down, at the process's exit); buf. */
const char *report_failed_text(uint64_t allocs, uint64_t frees, uint64_t shutdown, char *buf,
                               size_t n);
/* REPORT_FAILED_LEN: a buffer report_failed_text fills whole, at any counts (148 characters at
 * three of 2^64-1) */
#define REPORT_FAILED_LEN 160
/* report_caught_text: the out-of-memory errors the program caught and went on from, in words
 * (NULL when none): the first one's moment, request and phase, and whether the process peak came
 * in the pass it cut short, and what the program went on with (its micro-batch, steps, peaks) */
const char *report_caught_text(const replay_result *r, char *buf, size_t n);
#define REPORT_CAUGHT_LEN 512
/* report_lost_text: what the capture lost, to follow report_failed_text in the events'
 * parentheses ("; 779189 of the run's 907861 events lost: the capture could not store them"),
 * or "" when it lost nothing; lost: the trailer's n_dropped, missing: a chunked trace's events
 * not in its file (a full disk, the file-size limit), made: the events the run made, kept and
 * lost (text, page and run's summary say it alike); why: the trailer's flags, its
 * VT_TRAILER_LOSSES bits said after "could not store them" ("(made by a signal handler ...)"),
 * its end's (VT_TRAILER_FLAGS) tell why the missing ones are not in the file (the disk or the
 * file-size limit; writing failed: a window the tracer could not map under `ulimit -v` had been
 * said "no room ... on the disk"); buf (REPORT_LOST_LEN). */
const char *report_lost_text(uint64_t lost, uint64_t missing, uint64_t made, unsigned why,
                             char *buf, size_t n);
#define REPORT_LOST_LEN 768
/* report_stacks_text: what the run's stacks cannot tell, when they lack Python frames, native
 * ones, or native ones reaching an operator (--depth cut them short); buf, or NULL when the
 * stacks tell it all. */
const char *report_stacks_text(const replay_result *r, char *buf, size_t n);
/* report_cache_text: where the allocator cache is a quarter or more of the process peak (tensor
 * modes): what it is, and the tensors' own peak, its largest category then, and whether the
 * reserved memory grew after it, so that a table of mostly cache is not read as the run's
 * tensors (a simulated ResNet-50: 87.8 % cache at its optimizer step, its 5.22 GiB of
 * activations freed by then); buf, or NULL where it does not apply. */
const char *report_cache_text(const replay_result *r, char *buf, size_t n);
/* report_mode_text: one line saying what the capture mode means. */
const char *report_mode_text(const replay_result *r);
/* report_full_rank_text: which of several files is reported in full (cmd_report's choice) */
const char *report_full_rank_text(const report_ctx *c);
/* report_sites_heading: what a site of r's is named by: its Python site, the native operation
 * where r has no Python frames, nothing where it has no stack */
const char *report_sites_heading(const replay_result *r);
/* report_steps_hedge: what the optimizer steps counted may not be (a GradScaler that may have
 * skipped them), to follow "N optimizer steps", or "". */
const char *report_steps_hedge(const report_ctx *c);
/* report_steps_noun: what the count of optimizer steps (report_opt_steps) counts, to follow the
 * number: "optimizer step(s)", or "gradient free(s) after a backward pass" where a free need not
 * have ended a step (replay.h free_steps_first; report_steps_hedge says why). */
const char *report_steps_noun(const report_ctx *c);

#endif
