/* replay.h — replaying one trace: live sets, the three levels (allocated / reserved /
 * process), their peaks, phases and iterations, the OOM, and what was live at the peak and
 * at the OOM with each allocation's lifetime. One streaming pass; memory grows with the
 * live set and the distinct stacks, never with the trace's length. */
#ifndef VT_ANALYZER_REPLAY_H
#define VT_ANALYZER_REPLAY_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "blocks.h"
#include "categories.h"
#include "evalsrc.h"
#include "growth.h"
#include "infer.h"
#include "phases.h"
#include "reader.h"
#include "tables.h"
#include "timeline.h"

/* One allocation alive at a snapshot (the peak, the OOM). */
typedef struct live_item {
    uint64_t addr, size, time_ns;
    uint32_t stack_id;
    uint32_t iter_alloc, iter_free;
    uint32_t bwd_alloc, bwd_free; /* backward passes begun before the alloc / the free */
    uint8_t api, space, device, layer;
    uint8_t phase_alloc, phase_free; /* phase_free = PHASE_COUNT: never freed */
    uint8_t loss_site, tensor_api;
    uint8_t to_copy;   /* made by a dtype conversion (_to_copy) */
    uint8_t workspace; /* under cuBLAS's handle / workspace */
    uint8_t attention; /* under a fused attention kernel */
    uint8_t input;     /* made / copied onto the device by the program's own code */
    uint8_t after_oom; /* freed while an out-of-memory error unwound the step */
    uint8_t category;
    uint8_t rule;
    uint8_t oom_released;  /* freed by the allocator between the OOM's failures: its cache */
    uint8_t torch_segment; /* a segment PyTorch's allocator tracker reported (tensor+segment):
                            * its size in a classified snapshot is what its tensors leave unused */
    uint8_t outlived_step; /* freed after a gradient that came after it (zero_grad): it outlived
                            * the optimizer step that made it */
    uint64_t free_event;   /* the event that freed it (0: not freed) */
    uint64_t alloc_event;  /* the event that allocated it */
} live_item;
_Static_assert(sizeof(live_item) == 80, "a snapshot's item: 80 bytes");

typedef struct replay_snapshot {
    uint64_t event; /* index of the event after which it was taken */
    uint64_t time_ns;
    live_item *items; /* malloc'ed */
    size_t n;
    cat_breakdown by_cat;
} replay_snapshot;

/* the first out-of-memory error the program caught and went on from (replay_result.caught) */
typedef struct replay_oom_caught_first {
    uint64_t time_ns, requested, event;
    uint32_t stack, iter, bwd; /* (iter, bwd: the steps and backward passes begun then) */
    uint8_t phase, emulated;
} replay_oom_caught_first;

typedef struct replay_result {
    char path[4096];
    tables *t;               /* owned: process, threads, stacks... */
    phases_memo site_memo;   /* what each code object's file said, for replay_site_text */
    evalsrc eval_src;        /* the recorded scripts' inline evaluations (evalsrc.h) */
    reader_status status;    /* ok / truncated (malformed stops the replay) */
    char status_msg[256];    /* the status, or why it is truncated ("no trailer", ...) */
    int tensor_mode;         /* per-tensor events were seen (cudaMallocAsync backend) */
    int segment_mode;        /* caching-allocator segments (cudaMalloc / cuMemCreate) seen */
    int allocator_mode;      /* tensors from PyTorch's allocator tracker (inside the segments):
                              * its first tensor, or a segment it named, came */
    int tracker_note;        /* the last torchTrackerNote's code (VT_TRACKER_*), 0 = none */
    uint64_t tracker_detail; /* its addr: the layout (ATTACHED), a count (DROPPED) */
    uint64_t n_events, n_failed, unknown_frees;
    uint64_t n_failed_frees;          /* frees the driver refused (n_failed: allocations) */
    uint64_t n_failed_frees_shutdown; /* of them, refused as the driver shut down (result 4:
                                       * CUDA_ERROR_DEINITIALIZED / cudaErrorCudartUnloading) */
    uint64_t n_contexts;              /* CUDA contexts created (primary retains, cuCtxCreate) */
    uint64_t n_implausible; /* allocations not counted: the live total would pass 2^62 B */
    /* physical handles (cuMemCreate) released or left without ever being mapped: never
     * counted, as PyTorch's reserved memory does not count them (replay_vmm.c) */
    uint64_t vmm_unmapped_handles, vmm_unmapped_bytes;
    uint64_t end_ns;
    uint16_t ended;     /* the TRAILER's header.flags: VT_TRAILER_* (0 = plain exit) */
    uint16_t lost_why;  /* the TRAILER's VT_TRAILER_LOSSES bits: why run_dropped were lost */
    uint32_t end_error; /* the TRAILER's error: the errno that stopped the output (EFBIG:
                         * `ulimit -f`), 0 none or not said (older writers) */
    /* peaks of the three levels (bytes, time) */
    uint64_t peak_allocated, peak_reserved, peak_process;
    /* a run of one step, its step taken again through the caching allocator's default rules
     * (replay_again.c; 0: not done): the reserved peak of the simulated run as traced (what the
     * trace's is where the rules are the run's), and of the two steps */
    uint64_t again_first, again_reserved;
    uint64_t t_allocated, t_reserved, t_process;
    /* the allocated peak in PyTorch's blocks (blocks.c; allocator mode): what
     * torch.cuda.max_memory_allocated() counts — each request rounded up (512 B), plus the
     * remainders the allocator does not split off; blocks_basis = its rules (BLOCKS_BASIS_*;
     * NONE: not computed); blocks_unplaced = tensors counted as their rounded size only */
    uint64_t peak_allocated_blocks, t_allocated_blocks, blocks_unplaced;
    blocks_basis blocks_basis;
    uint64_t phase_peak[PHASE_COUNT];       /* process level while in each phase */
    uint64_t phase_peak_event[PHASE_COUNT]; /* the allocation that set it (0: none, or a level
                                             * before a gradient's free: the optimizer's) */
    uint8_t peak_phase;                     /* the phase of the event that made the process peak */
    uint32_t peak_bwd, peak_iter;           /* backward passes / optimizer steps begun before it */
    uint8_t tensors_phase;                  /* the same for the allocated (tensor) peak */
    uint32_t tensors_bwd, tensors_iter;
    uint32_t iterations; /* optimizer steps: contiguous optimizer stretches */
    uint32_t oom_iter;   /* the optimizer steps begun when the OOM (has_oom's) began: a run that
                          * caught it and trained on has more iterations than that */
    uint32_t oom_bwd;    /* ... and the backward passes */
    int oom_new_step;    /* 1: it came in a step of a kind no earlier step ran (its forward's
                          * activations mostly made at code first run in it: replay_oom.h) */
    /* the union of the gradient sets the run's steps read (gradsets.h: by their sizes), and the
     * distinct sets (2 or more: steps of different weights); 0: not measured */
    uint64_t grad_union;
    unsigned grad_sets;
    int grad_union_lower;     /* 1: a lower bound (sets sharing sizes, each size counted once) */
    uint32_t backward_passes; /* backward passes begun */
    uint32_t backward_ended;  /* ... that ended (the main thread's next allocation came after),
                               * none an OOM cut short */
    /* autocast's 16-bit weight copies of the first forward (before any backward pass or
     * optimizer step): bytes made, and of them bytes freed within that forward (a copy of a
     * frozen weight: autocast keeps one only of a weight that needs a gradient, for the region;
     * an OOM's unwinding not counted) */
    uint64_t fwd0_copies_made, fwd0_copies_freed;
    /* optim_ctor_bytes: tensors an optimizer's constructor made (stack_facts.opt_init: Adagrad's
     * sums), classified as its state: state made before any step */
    uint64_t optim_ctor_bytes;
    uint32_t fwd0_copies_since_free; /* copies made after the last one freed (a frozen forward
                                      * that failed: those of the op it failed in, 1 or 2) */
    int oom_frozen_forward; /* the OOM came in such a first forward, every copy made before the
                             * failing op's freed: it kept nothing for a backward (its tensors
                             * alive then were in use: classify.c's frozen_oom) */
    uint32_t accum;         /* backward passes before each optimizer step when every step of the
                             * run had the same number (gradient accumulation); 0 = not so */
    uint32_t accum_steps;   /* the optimizer steps that showed it */
    uint32_t cache_passes;  /* a representation cache's backward passes per step (repcache.h:
                             * the first made no weight's gradient; accum 0 then), or those begun
                             * before an OOM in the first step; 0: not so */
    uint64_t vocab;         /* vocabulary inferred from the parameters (0 = none) */
    int op_frames; /* an allocation's native frames reached an ATen operator (stack_facts.op): a
                    * cast, a workspace, a fused kernel could be told (not with Python frames
                    * alone, or native ones cut short by --depth) */
    /* category_peaks: each category's largest live bytes over the whole run and when
     * (tensor mode; has_cat_peaks = 0 when not computed) */
    int has_cat_peaks;
    /* optimizer state (made in a step, kept past it) was freed before the next backward began:
     * the program keeps its state off the device between steps (classify_input.state_left) */
    int state_left;
    const char *cat_peaks_lost; /* tensor mode, but not computed: why (a static string) */
    uint64_t cat_peak[CAT_COUNT], cat_peak_ns[CAT_COUNT];
    uint64_t cat_window; /* the records the sweep's window grew to hold (a power of two; 0: none) */
    replay_snapshot at_peak;    /* live at the process peak */
    replay_snapshot at_tensors; /* live at the allocated (tensor) peak (tensor modes; its
                                 * event 0 when there is none): where the activations are */
    /* live at the tensors' largest in an optimizer step (tensor modes; event 0: no step
     * allocated): the weights, their gradients, the optimizer's state and temporaries, which a
     * smaller micro-batch leaves as they are (a ResNet-50 at B=1 peaks there, at B=128 not) */
    replay_snapshot at_step;
    uint64_t peak_step; /* the tensors' bytes then */
    /* the tensors' largest outside evaluation passes (tensor modes): what the training held at
     * once, beside an evaluation whose own batch peaked above it */
    uint64_t peak_train;
    /* OOM: the last failed out-of-memory allocation the program did not recover from */
    int has_oom;
    int oom_pytorch_pattern; /* fail, cached segments released, fail again */
    int oom_emulated;
    uint64_t oom_requested, oom_capacity, oom_time_ns, oom_cache_released;
    uint64_t oom_last_event; /* the last failure of the OOM's retry sequence */
    uint32_t oom_stack;
    uint8_t oom_phase;
    replay_snapshot at_oom; /* live at the first failure of that OOM */
    /* live at the trace's end (replay_keep_end only; else empty): the state PyTorch's snapshot
     * gives after the last action of its device_traces */
    replay_snapshot at_end;
    int end_kept;              /* at_end was taken (replay_keep_end set, and its memory had) */
    uint64_t oom_seen_event;   /* the event of the latest OOM's first failure, as the replay met
                                * it (0: none; the timeline keeps that moment) */
    uint64_t file_bytes;       /* size of the file, for progress */
    unsigned minor;            /* the trace format's minor version (its header) */
    int has_inferred;          /* inferred is filled (0: memory ran short) */
    infer_result inferred;     /* what the tensors say of the model (infer.h), from this pass */
    infer_pass *inferred_from; /* the tensors it came from (infer_pass_copy; NULL: none kept), for
                                * infer_finish_without */
    timeline *tl;              /* owned: for the visual views (NULL when out of memory) */
    /* growth across steps (growth.h): the live bytes at each step end, what grows */
    growth growth;
    /* a chunked trace (1.3: run --max-size / --compress): its layout, and what its writer
     * dropped (a SNAPSHOT read: the events before it are gone, the live set given instead) */
    int chunked;
    chunked_info layout;
    uint64_t run_events;    /* the TRAILER's count of the run's events (0: no trailer) */
    uint64_t oom_recovered; /* out-of-memory failures the run went on from (PyTorch released its
                             * cache and the same request succeeded) */
    /* out-of-memory errors the program caught and went on from (a backward pass or an optimizer
     * step began after one, or another request failed: a smaller batch's retry, accelerate's
     * find_executable_batch_size, a loop that skips a batch), and the first of them */
    uint32_t oom_caught;
    replay_oom_caught_first caught;
    int oom_went_on; /* has_oom's error is one of them: the program went on after it
                      * (0 without has_oom) */
    /* what the program went on with after the last of them of its training (not an
     * evaluation's), from that error's first failure to the trace's end (replay_went_on.c;
     * went_on_event 0: none): the tokens of its batch (B·T: the token batch the first forward's
     * stack made again, 0 not found) and its micro-batch (over the inferred T; 0 unknown); its
     * tensors' largest outside evaluation passes, the reserved and process levels at their
     * largest as those rose (what its steps held); the optimizer steps begun after it; the
     * segments reserved before the error that its steps never used (blocks_epoch_unused: the
     * failed attempt's cache kept through them; 0: none, or not known) */
    uint64_t went_on_event, went_on_tokens, went_on_batch;
    uint64_t went_on_seq; /* its T where its position ids show another than the first forward's
                           * (went_on_batch 0 then: not a batch of the first forward's T) */
    uint64_t went_on_tensors, went_on_reserved, went_on_process, went_on_unused;
    uint32_t went_on_steps;
    /* the first forward's micro-batch where the run's OOM is a later attempt's at another, which
     * the inference's B became (the trace ended in it: replay_went_on.c); 0: none */
    uint64_t oom_first_batch;
    uint64_t run_dropped;    /* the TRAILER's events lost (capture could not keep them) */
    uint64_t dropped_events; /* events of the run no longer in the file */
    uint64_t dropped_from_ns, dropped_to_ns;
    uint64_t snapshot_ns;     /* the moment the replay starts again from (0: none) */
    uint64_t snapshot_allocs; /* allocations alive then, replayed from the snapshot */
    uint64_t snapshot_events; /* of n_events, the snapshots' allocations (not the run's events) */
    uint64_t missing_events;  /* the run's events (its trailer) neither in the file nor dropped
                               * before a snapshot: the disk, the file-size limit or a live set
                               * too large for the bound kept them out */
    /* the tensors at their largest without those of transformers' KV cache (bytes, time): what
     * use_cache=False leaves at least (from the first KV tensor on; before it, peak_allocated) */
    uint64_t tensors_no_kv_peak, t_tensors_no_kv;
    /* the KV cache's tensors: made; their inputs freed right after the copies (no larger than
     * its copy: a Llama's keys after the rotary embedding, its values; GPT-2's keys and values
     * stay views of a tensor kept); the copies the backward freed (the attention kept them, not
     * a cast of them). Where the attention kept the copies and their inputs went, the attention
     * would keep the inputs without the cache (replay_kv_replaced) */
    uint64_t kv_made_bytes, kv_replaced_bytes, kv_backward_bytes;
    /* the cache's tensors freed right after a larger copy of them was made (replay_kv.h): a
     * later forward extended the cache, as a generation's decoding steps do, so it is read */
    uint64_t kv_read_bytes;
    /* the steps counted by a gradient's free alone (zero_grad after a backward, no allocation
     * under an optimizer's frames) before the first step that allocated under them, when one
     * came after a backward: such a free may be a pass's end inside one step, not a step (SAM's
     * first_step frees the gradients between the two passes of its step); 0: none (last: the
     * per-event fields keep their offsets) */
    uint32_t free_steps_first;
    /* the gradient frees after a backward pass (steps counted) that another backward pass of the
     * same forward followed, no forward between them (retain_graph: PCGrad's per-task passes
     * free the gradients with zero_grad between them): such a free may end no step, or one the
     * trace cannot tell from it; 0: none */
    uint32_t free_steps_shared;
    uint32_t oom_fwd_bwd; /* the backward passes begun when a forward's own frames last allocated
                           * before the OOM (has_oom's): fewer than oom_bwd, none since a pass */
} replay_result;

/* replay_missing_events: a chunked trace's events not in its file (no room for them within the
 * bound, on the disk or under the file-size limit); replay_made_events: every event the run made,
 * kept and lost (its trailer's counts); replay_lost_events: those not in the trace and not
 * dropped by design (a bounded trace's windows, before a snapshot): the missing ones and those
 * the capture could not store (the trailer's n_dropped) */
/* why the optimizer steps of a run with free_steps_first are not known (the reports' words) */
#define STEPS_PASSES_WHY                                                                           \
    "a backward pass's gradients were freed, and another backward pass ran, before the "           \
    "optimizer's first step that allocated: a step of two passes frees them so between its "       \
    "passes (SAM's first_step), a free that ends no step"

/* ... and of a run with free_steps_shared */
#define STEPS_SHARED_WHY                                                                           \
    "a backward pass's gradients were freed, and another backward pass of the same forward ran "   \
    "(no forward between them): a free between the passes of one step (a multi-task step's "       \
    "per-task passes, as PCGrad's), or a step the trace cannot tell from one"

/* replay_steps_unsure: the run's steps were counted by gradient frees that need not have ended one
 * (free_steps_first, free_steps_shared; tensor mode): how many optimizer steps ran is not known;
 * replay_steps_why: why, in the reports' words (NULL: known) */
static inline int replay_steps_unsure(const replay_result *r)
{
    return (r->free_steps_first || r->free_steps_shared) && r->tensor_mode;
}
static inline const char *replay_steps_why(const replay_result *r)
{
    return !replay_steps_unsure(r) ? NULL
           : r->free_steps_shared  ? STEPS_SHARED_WHY
                                   : STEPS_PASSES_WHY;
}

static inline uint64_t replay_missing_events(const replay_result *r)
{
    return r->chunked ? r->missing_events : 0;
}

static inline uint64_t replay_made_events(const replay_result *r)
{
    return r->run_events + r->run_dropped;
}

static inline uint64_t replay_lost_events(const replay_result *r)
{
    return r->run_dropped + replay_missing_events(r);
}

/* REPLAY_LIVE_MAX: the most bytes ever counted live at once (checked sums). */
#define REPLAY_LIVE_MAX ((uint64_t)1 << 62)

/* replay_progress: when set (a TTY on stderr), long replays print their progress there. */
extern int replay_progress;
/* replay_keep_end: set it (before the replay) to keep what is live at the trace's end as
 * at_end (export --memory-viz: PyTorch's snapshot is the state after its trace's last action) */
extern int replay_keep_end;
/* replay_read_ahead: when set, every replay reads events ahead of the one it applies (its ring,
 * which prefetches what they touch) from its first event on, where one whose live set stays small
 * applies each as it is read (a test's: the two give the same results) */
extern int replay_read_ahead;

/* replay_file: replays path into *out (zeroed first). Returns 0 (ok or truncated: see
 * out->status), 2 (cannot open: message in err) or 3 (malformed: message in err; out holds
 * what was read before). Free with replay_free in every case. */
int replay_file(const char *path, replay_result *out, char *err, size_t errlen);
/* replay_stream: the same from a stream the caller opened (and closes), whose first nhead bytes
 * it already read into head (reader_open_stream): a FIFO or a pipe is read this once. */
int replay_stream(FILE *fp, const char *path, const void *head, size_t nhead, replay_result *out,
                  char *err, size_t errlen);
void replay_free(replay_result *r);

/* replay_same_lines: stacks a and b ran the same Python code at the same lines, frame by frame
 * (the program's batch made again: a Trainer's retry through accelerate's search is another
 * bytecode offset of the same line, its native frames another path through the interpreter) */
int replay_same_lines(tables *t, uint32_t a, uint32_t b);

/* replay_oom_in_step: r ran out of memory inside an optimizer step, which r->iterations counts
 * (begun, not completed: the header's "(out of memory in it)", diff's "inside its first
 * optimizer step", the state cut in it) */
static inline int replay_oom_in_step(const replay_result *r)
{
    return r->has_oom && r->oom_phase == PHASE_OPTIMIZER && r->iterations;
}

/* replay_kv_replaced: the share (0 to 1) of the KV cache's bytes whose copies replaced their
 * inputs as what the attention keeps for its backward (the less of kv_replaced_bytes and
 * kv_backward_bytes, of kv_made_bytes): what use_cache=False would not save of them */
static inline double replay_kv_replaced(const replay_result *r)
{
    uint64_t kept =
        r->kv_replaced_bytes < r->kv_backward_bytes ? r->kv_replaced_bytes : r->kv_backward_bytes;
    return !r->kv_made_bytes || !kept ? 0.0
           : kept >= r->kv_made_bytes ? 1.0
                                      : (double)kept / (double)r->kv_made_bytes;
}

/* replay_capture_stopped: why the capture stopped before the program did, as its trailer says:
 * VT_TRAILER_DISK_FULL or else VT_TRAILER_OUTPUT_ERROR; 0: it did not (a cut file has no
 * trailer) */
static inline unsigned replay_capture_stopped(const replay_result *r)
{
    return r->ended & VT_TRAILER_DISK_FULL ? VT_TRAILER_DISK_FULL
                                           : r->ended & VT_TRAILER_OUTPUT_ERROR;
}
/* replay_stop_words: why the capture stopped early, in words, from the trailer's flags (ended)
 * and error: "the process's file-size limit, ulimit -f" (DISK_FULL whose error is EFBIG: never
 * a full disk), "disk full", or "writing the trace failed" */
static inline const char *replay_stop_words(unsigned ended, uint32_t error)
{
    return !(ended & VT_TRAILER_DISK_FULL) ? "writing the trace failed"
           : error == EFBIG                ? "the process's file-size limit, ulimit -f"
                                           : "disk full";
}
/* replay_in_caught: a moment (its event, phase, the backward passes and steps begun before it)
 * came in the pass the first caught OOM cut short (the same forward, backward or step, before it;
 * a forward after a backward counts the backward passes it does): what it measured is of that
 * attempt, not of what the program went on with; replay_peak_in_caught:
 * the peak the advice explains did (the tensors' in tensor modes, else the process peak) */
static inline int replay_in_caught(const replay_result *r, uint64_t event, uint8_t ph, uint32_t bwd,
                                   uint32_t iter)
{
    return r->oom_caught && event <= r->caught.event && ph == r->caught.phase &&
           bwd == r->caught.bwd && iter == r->caught.iter;
}

static inline int replay_peak_in_caught(const replay_result *r)
{
    return r->tensor_mode
               ? replay_in_caught(r, r->at_tensors.event, r->tensors_phase, r->tensors_bwd,
                                  r->tensors_iter)
               : replay_in_caught(r, r->at_peak.event, r->peak_phase, r->peak_bwd, r->peak_iter);
}

/* replay_stopped_early: the trace ends before the program did: the file cut (killed, or still
 * running) or the capture stopped on a full disk or a failed write (its trailer says so, the file
 * whole): what the run did after its last event is not measured (a GPT-2 medium stopped by
 * `ulimit -f 72` inside its first forward had been told "needs ~2.58 GiB", where the same bytes
 * cut say ~29.58 with the forward's rest extrapolated) */
static inline int replay_stopped_early(const replay_result *r)
{
    return r->status == READER_TRUNCATED || replay_capture_stopped(r);
}

/* replay_kv_unmeasured: the share replay_kv_replaced takes is not measured: some of the KV
 * cache's copies replaced their inputs, but no backward pass ended in the run (an OOM in its
 * first forward or backward, a cut), the whole of which shows how many of them the attention
 * keeps (kv_backward_bytes: a backward under way frees them as it goes, t5small_b8_fit cut inside
 * its first had said "makes none", then 17 % kept, where the whole run keeps 50 %): taken as
 * none, so what use_cache=False saves is at most the cache. (A run whose backward kept none, a
 * Llama's, measured it: 0; an optimizer step came after a backward that ended.) */
static inline int replay_kv_unmeasured(const replay_result *r)
{
    return r->kv_made_bytes && r->kv_replaced_bytes && !r->backward_ended && !r->iterations;
}

/* replay_steps_run: the optimizer steps the run began: iterations, or where events were dropped
 * (a bounded trace) its per-step summaries' count, when more (diff had said "after 3589 optimizer
 * steps" of a run that made 10000) */
static inline unsigned replay_steps_run(const replay_result *r)
{
    return r->dropped_events && r->growth.from_records && r->growth.opt_steps > r->iterations
               ? r->growth.opt_steps
               : r->iterations;
}

/* replay_site_text: "file:line function" of the site a report names for stack_id (escaped
 * for a terminal when term), into buf; a stack with no Python frame: its operation
 * (replay_native_text, and " at file:line" where its debug info gives one); "(no stack)" when
 * there is none. */
const char *replay_site_text(replay_result *r, uint32_t stack_id, char *buf, size_t len);
/* replay_site_text_in: the same from tables t alone (watch, which has no replay); memo: what each
 * code object's file said, kept (NULL: looked at anew) */
const char *replay_site_text_in(tables *t, phases_memo *memo, uint32_t stack_id, char *buf,
                                size_t len);
/* replay_native_text: the native frame that names the operation of stack_id — the innermost
 * "at::_ops::" symbol, else "at::native::" (allocation primitives named "empty" skipped), else
 * the innermost native symbol outside PyTorch's caching allocator — as "name (module)" without
 * arguments, escaped for a terminal; "" when the stack has no named native frame. */
const char *replay_native_text(replay_result *r, uint32_t stack_id, char *buf, size_t len);

#endif
