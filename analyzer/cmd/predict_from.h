/* predict_from.h — the run `vramtrace predict --from PATH` calibrates with (predict_from.c):
 * a trace, modelled as `vramtrace report` does, or the JSON `report --json` wrote. */
#ifndef VT_ANALYZER_PREDICT_FROM_H
#define VT_ANALYZER_PREDICT_FROM_H

#include <stdint.h>

#include "advice.h"
#include "config.h"

typedef struct predict_run {
    cat_breakdown measured; /* the peak by category */
    int partial;            /* the run ended in an OOM, or its trace before its first step */
    int cut;                /* before the measured step's peak (advice_calibrate) */
    int cut_unstepped;      /* the trace ends before the run's first optimizer step, no OOM (the
                             * process killed, or still running: model.h) */
    int stopped;            /* ADVICE_STOPPED_*: its capture stopped early, why */
    uint64_t cap;           /* its card (0: unknown) */
    char capname[80];
    model_calib calib; /* the report's own calibration (calibrated = 0: an older report's JSON) */
    gpt_shape shape;   /* the run's shape as the report recognized it */
    int has_shape;
    char model[224];  /* what was trained, in words, or "" */
    int lower_bounds; /* the report's what-ifs are lower bounds (died in its first forward): the
                       * predicted peaks too, and the largest micro-batch is at most lb */
    char forward_note[1536]; /* how a run that died in its first forward is extrapolated, or "" */
    char optim_note[800];    /* the report's note of an optimizer state not measured (AdamW's
                              * assumed, the most of the kinds the script constructs), or "" */
    int growth_unmeasured;   /* its tensors peaked after its forward's were freed: how the step
                              * grows with the micro-batch is not measured (no largest said) */
    int lora_assumed;        /* LoRA on and no gradient measured: the trained share assumed */
    int rest_untold;    /* the weights beyond trainable had no gradient in the run: frozen, or not
                         * reached by its steps (an expert no token was routed to): not told */
    uint64_t trainable; /* the run's trainable parameters, as the report counts them (0:
                         * unknown): the trained line's count at the run's own shape */
    unsigned trained_elem; /* their bytes an element (LoRA's fp32 adapters over 16-bit weights:
                            * 4); 0: the weights' own (model_trained_bytes) */
    int retried;    /* it completed after its allocator reached the card and released its cache */
    int caught;     /* its peak came in a pass an out-of-memory error cut short, which the program
                     * caught and went on from (lower_bounds: the rest of that pass not measured) */
    char targs[48]; /* the training-arguments call its switches go in (advice_targs), or "" */
    int largest_unpredicted; /* growth_unmeasured: no largest said, but where a run out of
                              * memory would not fit at 1 on the card asked of either (set by
                              * cmd_predict.c, as model.c for the report) */
    /* --from a report's JSON: the trace it names (run.file, escaped for the terminal; "" when
     * none), to say where a value the report lacked is given */
    int from_json;
    char trace[512];
    /* the report's note of an evaluation pass of the script the trace never reached, and the
     * largest's words for it (model.h unreached, unreached_short; JSON prediction.unreached_pass);
     * "" none */
    char unreached[600], unreached_short[160];
    uint64_t params;  /* the run's own count of its weights' elements, as the report infers it
                       * (a model no formula has: the formula's count would be its embedding's
                       * alone); 0: unknown */
    uint64_t untyped; /* the weights' bytes that take no gradient and whose dtype the trace does
                       * not give (model.h weights_untyped; JSON untyped_weight_bytes); 0: none */
    uint64_t cast16;  /* ... made on the program's lines that cast to 16 bits (JSON
                       * inferred.cast16_bytes); 0: none */
    uint64_t ran_batch, ran_peak; /* model.h largest_ran (JSON prediction.largest_batch_size_ran;
                                   * its peak 0 there): its own ran on its card; 0: not */
    int dtype_unknown; /* 1: what the run computes in is not known (its config's dtype; JSON
                        * config.dtype.source "unknown"): no weights' row says autocast */
} predict_run;

/* predict_from_load: reads path (a trace, or the JSON of `vramtrace report --json`): the run's
 * configuration into c (values the run gave or the trace showed: source "file", where "--from
 * PATH"; nanoGPT's defaults only for a nanoGPT run; unknown stays unknown), the rest into *run.
 * Returns 0, -1 with err, or -3 with err when path is no trace it can read nor a report's JSON
 * (empty, another kind of file, a malformed trace: exit 3, as every command says it). */
int predict_from_load(const char *path, nano_config *c, predict_run *run, char *err, size_t errlen);

/* predict_print_ran: where no micro-batch keeps the headroom, s is run's own configuration on its
 * own card (m: its measured shape) and that run ran it whole there (ran_batch): said, as the
 * report says it (model_ran.c), not "not even 1 fits"; 1 when said */
int predict_print_ran(const predict_run *run, const gpt_shape *s, const gpt_shape *m, uint64_t card,
                      const char *mb);
/* predict_run_as_ran: s is run's own configuration (m: its measured shape) on its own card, and
 * it completed after its allocator's retry: never recommended as it is (the report's row
 * "none"; it had been said beside another card too) */
int predict_run_as_ran(const predict_run *run, const gpt_shape *s, const gpt_shape *m,
                       uint64_t card);

/* predict_from_fixed: a what-if run's model cannot move, refused rather than answered with the
 * run's own numbers: with no formula (run->shape.generic: a ResNet, an evaluation, a frozen
 * backbone; its measured bytes scale with the micro-batch and the accumulation alone) a value of
 * c other than the run's (run_cfg: its configuration before the options), --checkpointing
 * (ckpt) where it had none, --no-flash (unfused); and the accumulation of a run of forwards
 * only. -1 with err naming the option, else 0. */
int predict_from_fixed(const predict_run *run, const nano_config *run_cfg, const nano_config *c,
                       int ckpt, int unfused, char *err, size_t errlen);

/* predict_weights_doc: the weights' row in the run's precision (run NULL: no traced run; its
 * dtype_unknown: the trace does not give it; untyped: bytes of weights that take no gradient,
 * whose dtype it does not give; cast16: bytes of those the program's lines cast to 16 bits, the
 * trained ones where they are twice its trainable count, within 1/64, and own (s is the run's
 * shape); calib.ema: an EMA copy beside them) */
void predict_weights_doc(const nano_config *c, const gpt_shape *s, const predict_run *run, int own,
                         char *out, size_t n);

#endif
