/* report.h — the one report structure of a traced run, built once from its replay
 * (report.c): facts, allocation sites at the peak, the model. The views (views/) render it;
 * `vramtrace report` and `predict --from TRACE` build it. */
#ifndef VT_ANALYZER_REPORT_H
#define VT_ANALYZER_REPORT_H

#include <stdio.h>

#include "exit_codes.h"
#include "model.h"
#include "replay.h"

/* One allocation site at the peak: bytes per (category, site). */
typedef struct report_site {
    int category;
    uint64_t bytes;
    uint32_t count;
    char text[512];   /* escaped for a terminal */
    uint32_t stack;   /* the stack that gave it the most bytes: its native op is the one named */
    int native_done;  /* native is made (report_site_native) */
    char native[256]; /* the native op below it ("at::native::..." first), escaped; "" if none */
} report_site;

/* One module's share of the batch-sized bytes (activations, logits/loss, attention) live at a
 * moment: the nn.Module whose forward made them (modules.h). */
typedef struct report_module {
    char text[256]; /* "GPT2MLP.forward", raw from the trace (escape before printing) */
    uint64_t bytes, count;
    uint64_t by_cat[CAT_COUNT];
} report_module;

/* Growth across steps (report_growth.c): what grew step after step, and when it reaches the
 * card at that rate. */
#define REPORT_GROWTH_SITES 5
typedef struct report_growth_site {
    char text[512];   /* the site, escaped for a terminal */
    char native[256]; /* the native op below it, escaped; "" if none */
    char caller[512]; /* the traced script's innermost frame on its stack, escaped; "" if none
                       * or the site itself */
    uint32_t stack;
    const char *phase; /* the phase that made its first bytes ("forward", ...) */
    int in_forward;    /* 1: made under a module's forward (activations, the graph saving them) */
    uint32_t since_step, n_up;
    uint64_t bytes_since, bytes_last;
    double rate; /* bytes per step */
} report_growth_site;
/* why a growth section shows no site: its steps ran into the trace's end (no step end seen),
 * too few step ends for the rule (growth.h, growth_can_tell), or nothing grows */
enum { REPORT_GROWTH_SHOWN, REPORT_GROWTH_NO_END, REPORT_GROWTH_TOO_FEW, REPORT_GROWTH_NONE };
typedef struct report_growth {
    uint32_t steps, opt_steps;   /* steps seen; of them, with optimizer allocations */
    uint32_t passes, iterations; /* the replay's backward passes and optimizer steps (0: none) */
    int no_opt_step;             /* 1: the replay saw no optimizer step in the run */
    int steps_unseen;            /* 1: ... where steps may have run unseen (optim_steps_unseen) */
    int steps_passes; /* 1: a gradient's free need not have ended a step (free_steps_first) */
    int passes_split; /* 1: ... the steps may be passes of one forward's step (free_steps_shared) */
    int split; /* 1: iterations are the gradient frees over A (report_opt_steps): of the growth's
                * steps, which ended in an optimizer step is not known */
    int from_records; /* 1: the trace's STEP records (a chunked trace), 0: the replay */
    int tensors;      /* 1: tensor bytes, 0: device bytes (segment mode) */
    report_growth_site sites[REPORT_GROWTH_SITES];
    int nsites, nmore;    /* shown; more that grow too */
    double rate;          /* every growing stack's bytes per step together */
    double secs_per_step; /* 0: unknown */
    uint32_t secs_steps;  /* the steps it was timed over */
    uint64_t capacity;    /* the card the ETA is against (0: unknown) */
    char capacity_name[80];
    uint64_t last_peak;      /* the process's highest bytes during the last step */
    uint64_t last_live;      /* live at the end of step last_live_step */
    uint32_t last_live_step; /* the last step that ended before the trace's end (the trace's
                              * end itself when none did: its only step ran into it) */
    uint32_t timed_steps;    /* the steps that ended before the trace's end */
    uint32_t step_ends;      /* the step ends compared for growth (growth_step_ends) */
    uint32_t ends_needed;    /* the fewest that can show growth (GROWTH_MIN_STEP_ENDS) */
    int can_tell;            /* 1: step_ends >= ends_needed (fewer can show no growth) */
    int quiet;               /* no growing site, and why (REPORT_GROWTH_*): every view says it */
    int reaches;             /* 1: steps_to_card is an estimate */
    double steps_to_card, secs_to_card;
    uint32_t at_step; /* the step it reaches the card at */
    uint32_t oom_steps, first_oom_step;
} report_growth;

typedef struct report_ctx {
    replay_result *runs; /* one per file; runs[0] is the one reported in full */
    int nruns;
    int full_oom;    /* several files: runs[0] is the first that ran out of memory, where the first
                      * file did not (cmd_report: its configuration is what failed) */
    run_facts facts; /* for runs[0] */
    model_opts opts;
    report_site *sites; /* sorted by bytes, descending */
    size_t nsites;
    int top; /* sites shown per category */
    int color;
    const char *argv_store[512];
    config_recfile files_store[VT_FILE_MAX_COUNT]; /* the recorded config files (facts.files) */
    config_files files;
    infer_result inferred; /* facts.inferred */
    run_recognition recog; /* facts.recog: what was trained and what was on */
    /* where the activations come from, by module, at the peak and at the OOM (report_modules) */
    report_module *mod_peak, *mod_oom;
    size_t nmod_peak, nmod_oom;
    uint64_t mod_peak_total, mod_oom_total;
    uint64_t mod_peak_ns;    /* the moment of mod_peak */
    int mod_peak_is_tensors; /* 1: the allocated (tensor) peak, 0: the process peak */
    char site_oom[512];
    model_result *model;  /* built by report_build */
    report_growth growth; /* runs[0]'s growth across steps (report_growth.c) */
    uint64_t adapters16;  /* LoRA adapters peft made fp32 that the program cast to 16 bits before
                           * training, their bytes at the moment kept (report_params16); 0 none */
} report_ctx;

/* report_build: from c->runs (replayed) and c->opts, fills the facts and sites of runs[0] and
 * builds the model once. Returns 0, or -1 with the reason in err (out of memory, invalid
 * configuration). Prints nothing. */
int report_build(report_ctx *c, char *err, size_t errlen);
/* report_sites: c->sites from runs[0]'s snapshot at the peak (report_sites.c). 0, or -1 out of
 * memory. */
int report_sites(report_ctx *c);
/* report_site_native: c->sites[i].native, made the first time a view asks for it (a report shows
 * a few sites of some hundred): what views read. */
const char *report_site_native(const report_ctx *c, size_t i);
/* report_modules: c->mod_peak (at the allocated peak: runs[0].at_tensors, else at the process
 * peak) and mod_oom from runs[0]'s snapshots (report_modules.c). 0, or -1 out of memory. */
int report_modules(report_ctx *c);
/* report_modules_cats: the categories by module counts that hold bytes in m[0..n) and m2[0..n2)
 * (a CNN's: no attention, no logits/loss of a vocabulary), joined in words into buf
 * ("activations and logits/loss"); "" when none does. Both views name them so. */
const char *report_modules_cats(const report_module *m, size_t n, const report_module *m2,
                                size_t n2, char *buf, size_t len);
/* report_step_pass: what c's run (its replay r) holds of a no-grad pass whose outputs the step
 * uses (a rollout under model.eval(): evalsrc.h's 2), into c->facts: whether the tensors' peak
 * was made in one, its batch flag, and no attention heads read from a training forward's
 * log-sum-exp rows over such a pass's token batch (report_pass.c) */
void report_step_pass(report_ctx *c, replay_result *r);
/* report_batch_now: the batch at the moment snap holds, as its inputs show it (report_batch.c):
 * *tokens, the B·T of the token batch the first forward's batch line made again (ir's
 * tokens_stack, or the same Python lines), *images, the B of its image batch; the newest of each
 * live there, 0 where none is. */
void report_batch_now(const replay_result *r, const replay_snapshot *snap, const infer_result *ir,
                      uint64_t *tokens, uint64_t *images);
/* report_images_folded: ir's image size not known where the forward's first tensor was made on
 * a line of the program that folds the batch's leading dimensions (joinsrc_folds: a video
 * model's B clips viewed as B·T frames), B's words the samples' */
void report_images_folded(const replay_result *r, infer_result *ir);
/* report_tokens_joined: f->tokens_joined and its words, where ir's token batch (not an
 * evaluation's) was made on a line of a recorded script that joins tensors along their first
 * dimension (joinsrc.h; report_batch.c) */
void report_tokens_joined(const replay_result *r, const infer_result *ir, run_facts *f);
/* report_params16: runs[0]'s parameters read again at 2 B an element where its first forward
 * says they are 16-bit (c->inferred redone; report_params16.c): the bytes per element of what
 * trains (2 or 4), 0 where nothing changed. */
unsigned report_params16(report_ctx *c, replay_result *r, const run_facts *f);
/* report_cast16: runs[0]'s weights made on lines of its recorded scripts that cast to 16 bits
 * (evalsrc_cast16; by a variable, where the run computes in 16 bits) counted at 2 B an element,
 * the others as before (c->inferred redone: infer.h's INFER_cast16_bytes); nothing where none is */
void report_cast16(report_ctx *c, replay_result *r, const run_facts *f);
/* report_data: f's data_at_peak / data_at_tensors / data_at_oom and oom_data from r's snapshots
 * (report_data.c: the program's data kept on the device among the inputs) */
void report_data(replay_result *r, run_facts *f);
/* report_grads: f's oom_weight / oom_weight_n from r's OOM snapshot (report_grads.c) */
void report_grads(const replay_result *r, run_facts *f);
/* report_weight_sized: of snapshot s, the bytes of the backward's tensors the size of a weight
 * live beside them (a parameter of that size, 1 MiB or more: an embedding table's dense
 * gradient, made whole whatever the micro-batch), and in *asked whether extra (a request, 0:
 * none) is of such a size too, as the caching allocator rounds it (report_grads.c) */
uint64_t report_weight_sized(const replay_snapshot *s, uint64_t extra, int *asked);
/* report_oom_passes: f's oom_passes / oom_passes_bytes from r (report_passes.c) */
void report_oom_passes(const replay_result *r, run_facts *f);
/* report_growth: c->growth from runs[0]'s replay and the model's card (report_growth.c). */
void report_growth_fill(report_ctx *c);
/* report_opt_steps: the optimizer steps the reports say the run took: r->iterations, or where a
 * logical batch is split into physical ones whose every backward pass ended in a gradient free
 * (nano_config.split_on), those frees over A */
unsigned report_opt_steps(const report_ctx *c);
/* report_of_trace: replays path into a fresh c (top 3, no overrides) and builds the report.
 * Returns 0, or an exit code (VT_EXIT_USAGE, VT_EXIT_MALFORMED) with err; report_free(c) after
 * either. */
int report_of_trace(const char *path, report_ctx *c, char *err, size_t errlen);
/* report_of_stream: the same from a stream the caller opened (and closes), whose first nhead
 * bytes it already read into head (replay_stream): a FIFO or a pipe is read this once. */
int report_of_stream(FILE *fp, const char *path, const void *head, size_t nhead, report_ctx *c,
                     char *err, size_t errlen);
/* report_free: the runs, sites and model of c. */
void report_free(report_ctx *c);

#endif
