/* report_text.c — the human report: run, mode, peaks, the category table at the peak with
 * bars, top sites per category, per-phase peaks, ranks, then the model's sections (formula,
 * OOM diagnosis, advice). Every string from a trace is escaped before it is printed. */
#include <stdio.h>
#include <string.h>

#include "cards.h"
#include "catpeaks.h"
#include "escape.h"
#include "model_views.h"
#include "growth_view.h"
#include "report_views.h"

static const char *B(const report_ctx *c)
{
    return c->color ? "\033[1m" : "";
}
static const char *N(const report_ctx *c)
{
    return c->color ? "\033[0m" : "";
}

static char *human(uint64_t b, char *buf, size_t len)
{
    return card_format_bytes(b, buf, len);
}

static double secs(uint64_t ns)
{
    return (double)ns / 1e9;
}

const char *report_tracker_text(const replay_result *r)
{
    if (!r->tracker_note || r->tracker_note == VT_TRACKER_ATTACHED)
        return NULL; /* the mode says it */
    if (r->tracker_note == VT_TRACKER_OTHER_ALLOCATOR && r->tensor_mode && !r->allocator_mode)
        return NULL; /* --tensors: the cudaMallocAsync backend, as asked */
    switch (r->tracker_note) {
#define VT_TRACKER_TEXT(name, code, text)                                                          \
    case code:                                                                                     \
        return "PyTorch's allocator trace hooks not used: " text;
        VT_TRACKER_NOTES(VT_TRACKER_TEXT)
#undef VT_TRACKER_TEXT
    default:
        return "PyTorch's allocator trace hooks not used (a reason this build does not know)";
    }
}

/* the native frames a stack holds unless --depth says fewer (preload/core/config.c) */
#define DEPTH_DEFAULT 32
#define RECORD_ALL "record with --stacks all, the default, to tell them"
#define NOT_TOLD                                                                                   \
    "autocast's 16-bit copies of weights, cuBLAS workspaces, fused attention's buffers and "       \
    "dropout masks are not told from the other tensors (counted as activations or temporaries)"

const char *report_stacks_text(const replay_result *r, char *buf, size_t n)
{
    const tables_config *cf = tables_config_get(r->t);
    if (!cf)
        return NULL;
    if (tables_no_python(r->t))
        snprintf(buf, n,
                 "%s: no Python frames, so an allocation's category and phase rest on the order "
                 "of events and the autograd thread alone (an optimizer's state may be counted "
                 "as activations); " RECORD_ALL,
                 cf->stack_mode & VT_STACKS_NATIVE ? "native only" : "none");
    else if (!(cf->stack_mode & VT_STACKS_NATIVE) && r->tensor_mode)
        snprintf(buf, n, "python only: no native frames, so " NOT_TOLD "; " RECORD_ALL);
    else if (!r->op_frames && r->tensor_mode && cf->stack_depth && cf->stack_depth < DEPTH_DEFAULT)
        snprintf(buf, n,
                 "native frames cut at --depth %u: none reached an ATen operator, so " NOT_TOLD
                 "; record with --depth %d, the default, or more",
                 cf->stack_depth, DEPTH_DEFAULT);
    else
        return NULL;
    return buf;
}

const char *report_steps_noun(const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    if (replay_steps_unsure(r))
        return r->iterations == 1 ? "gradient free or optimizer step after a backward pass"
                                  : "gradient frees or optimizer steps after a backward pass";
    return report_opt_steps(c) == 1 ? "optimizer step" : "optimizer steps";
}

const char *report_steps_hedge(const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    /* (SAM's 2 steps of 2 passes each had been "4 optimizer steps") */
    static char unsure[400]; /* (one report at a time) */
    if (replay_steps_unsure(r)) {
        snprintf(unsure, sizeof unsure, " (how many optimizer steps ran is not known: %s)",
                 replay_steps_why(r));
        return unsure;
    }
    static char split[200]; /* (one report at a time) */
    const nano_config *cf = c->model ? &c->model->cfg : NULL;
    if (cf && cf->split_on) { /* (Opacus's 2 steps of 4 physical batches had been "8") */
        snprintf(split, sizeof split,
                 " (%u gradient frees after a backward pass, one per physical batch: %lld "
                 "physical batches of the logical batch %s %lld make each optimizer step)",
                 r->iterations, cf->v[CFG_gradient_accumulation_steps].i, cf->batch_global,
                 cf->batch_global_v);
        return split;
    }
    /* a trace whose events were dropped (bounded): its per-step summaries count the run's (it
     * said "2 optimizer steps" where its growth section said 3, the run's) */
    static char kept[96]; /* (one report at a time) */
    if (replay_steps_run(r) > r->iterations) {
        snprintf(kept, sizeof kept, " in the events kept (the run made %u: its per-step summaries)",
                 replay_steps_run(r));
        return kept;
    }
    if (replay_oom_in_step(r))
        return r->iterations == 1 ? " (out of memory in it)" : " (out of memory in the last)";
    /* steps that leave no trace (plain SGD's, its gradients zeroed in place): none seen, not
     * none run (a run of 2 had said "0 optimizer steps") */
    if (c->model && !r->iterations && optim_steps_unseen(&c->model->rec))
        return " seen (how many ran is not known: " OPTIM_UNSEEN_WHY ")";
    /* (OpenAI ES's own Adam's 2 updates, under no backward, had been "0 optimizer steps") */
    if (c->model && !r->iterations && c->model->no_forward)
        return " seen (" NO_PASS_STEPS ")";
    return c->model && c->model->rec.steps_maybe_skipped && c->runs[0].iterations
               ? " (gradients freed after each; the GradScaler may have skipped them: see "
                 "optimizer)"
               : "";
}

const char *report_failed_text(uint64_t allocs, uint64_t frees, uint64_t shutdown, char *buf,
                               size_t n)
{
    /* (the frees after a semicolon: "all refused at the exit" had read as the allocations' too,
     * where those were the run's out-of-memory errors) */
    int k = snprintf(buf, n, "%llu failed allocation%s", (unsigned long long)allocs,
                     allocs == 1 ? "" : "s");
    if (!frees || k < 0 || (size_t)k >= n)
        return buf;
    if (shutdown == frees)
        snprintf(buf + k, n - (size_t)k,
                 "; %llu free%s refused as the driver shut down at the exit",
                 (unsigned long long)frees, frees == 1 ? "" : "s");
    else if (shutdown)
        snprintf(buf + k, n - (size_t)k,
                 "; %llu failed free%s, %llu of them refused as the driver shut down at the exit",
                 (unsigned long long)frees, frees == 1 ? "" : "s", (unsigned long long)shutdown);
    else
        snprintf(buf + k, n - (size_t)k, "; %llu failed free%s", (unsigned long long)frees,
                 frees == 1 ? "" : "s");
    return buf;
}

/* lost_why_text: why the capture could not store them (the trailer's VT_TRAILER_LOSSES), as
 * " (A; B)", or "" when it says none */
static const char *lost_why_text(unsigned why, char *buf, size_t n)
{
    static const struct {
        unsigned bit;
        const char *text;
    } reasons[] = {
        {VT_TRAILER_LOST_IN_HOOK, "made by a signal handler that interrupted the tracer's own "
                                  "work inside a hook on the same thread"},
        {VT_TRAILER_NO_HELPER, "the bounded trace's packing thread could not start (ulimit -u "
                               "or pthread_create refused): the program's threads packed it"},
    };
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0] && k < n; i++)
        if (why & reasons[i].bit) {
            int w = snprintf(buf + k, n - k, "%s%s", k ? "; " : " (", reasons[i].text);
            k = w < 0 ? n : k + (size_t)w;
        }
    if (k && k + 1 < n)
        snprintf(buf + k, n - k, ")");
    return buf;
}

const char *report_lost_text(uint64_t lost, uint64_t missing, uint64_t made, unsigned why,
                             char *buf, size_t n)
{
    const char *not_in =
        why & VT_TRAILER_DISK_FULL
            ? "not in the file (no room for them on the disk or under the file-size limit)"
        : why & VT_TRAILER_OUTPUT_ERROR
            ? "not in the file (writing the trace failed: a window the tracer could not map or "
              "write, out of memory or address space under `ulimit -v`; its warning on stderr "
              "named the error)"
            : "not in the file (no room for them within the bound, on the disk or under the "
              "file-size limit)";
    char reason[320];
    lost_why_text(why, reason, sizeof reason);
    if (lost && missing)
        snprintf(buf, n,
                 "; %llu of the run's %llu events lost: %llu the capture could not store%s, %llu "
                 "%s",
                 (unsigned long long)(lost + missing), (unsigned long long)made,
                 (unsigned long long)lost, reason, (unsigned long long)missing, not_in);
    else if (lost) /* (the trailer's n_dropped: a trace cut before its trailer cannot say) */
        snprintf(buf, n, "; %llu of the run's %llu events lost: the capture could not store them%s",
                 (unsigned long long)lost, (unsigned long long)made, reason);
    else if (missing)
        snprintf(buf, n, "; %llu of the run's %llu events lost: %s", (unsigned long long)missing,
                 (unsigned long long)made, not_in);
    else if (n)
        buf[0] = 0;
    return buf;
}

const char *report_caught_text(const replay_result *r, char *buf, size_t n)
{
    if (!r->oom_caught)
        return NULL;
    char req[32], peak[96] = "";
    if (replay_peak_in_caught(r))
        snprintf(peak, sizeof peak,
                 "; the %s peak below came in the same pass, before the error "
                 "cut it short",
                 r->tensor_mode ? "allocated" : "process");
    snprintf(buf, n,
             "the program went on after %u out-of-memory error%s it caught: the first at %.3f s, "
             "a request of %s during %s%s%s",
             r->oom_caught, r->oom_caught == 1 ? "" : "s", secs(r->caught.time_ns),
             human(r->caught.requested, req, sizeof req), phase_name(r->caught.phase), peak,
             !r->has_oom          ? ""
             : !r->oom_went_on    ? "; nothing came after the last, below"
             : r->oom_caught == 1 ? "; it is the OOM below: the run did not end in it"
             : r->at_oom.event == r->caught.event
                 ? "; the OOM below is the first of them: the run did not end in it"
                 : "; the OOM below is one of them: the run did not end in it");
    size_t k = strlen(buf);
    if (r->went_on_event && r->oom_went_on && k < n) { /* (what it went on with, measured) */
        char b[128] = "", tens[64] = "", t[32], p[32];
        if (r->went_on_batch)
            snprintf(b, sizeof b, " at micro-batch %llu (%llu tokens)",
                     (unsigned long long)r->went_on_batch, (unsigned long long)r->went_on_tokens);
        else if (r->went_on_tokens && r->went_on_seq)
            snprintf(b, sizeof b,
                     " with a batch of %llu tokens (%llu a sample, by its position ids)",
                     (unsigned long long)r->went_on_tokens, (unsigned long long)r->went_on_seq);
        else if (r->went_on_tokens)
            snprintf(b, sizeof b, " with a batch of %llu tokens",
                     (unsigned long long)r->went_on_tokens);
        if (r->went_on_tensors)
            snprintf(tens, sizeof tens, " its tensors peaked at %s,",
                     human(r->went_on_tensors, t, sizeof t));
        snprintf(buf + k, n - k, "; it went on%s for %u optimizer step%s:%s the process held %s", b,
                 r->went_on_steps, r->went_on_steps == 1 ? "" : "s", tens,
                 human(r->went_on_process, p, sizeof p));
    }
    return buf;
}

const char *report_mode_text(const replay_result *r)
{
    if (r->allocator_mode && r->segment_mode)
        return "tensor+segment: PyTorch's caching allocator with its trace hooks: every tensor "
               "(allocated) and every segment (reserved) is exact";
    if (r->tensor_mode && r->segment_mode)
        return "mixed: per-tensor (cudaMallocAsync) and segment allocations both seen";
    if (r->tensor_mode)
        return "tensor mode: one event per tensor (PyTorch's cudaMallocAsync backend): live "
               "tensors "
               "are exact; the pool's own cache is not visible";
    if (r->segment_mode)
        return "segment mode: PyTorch's caching allocator (one cudaMalloc / cuMemCreate per "
               "segment): "
               "each segment is counted under the phase that forced it to grow; tensor-level "
               "'allocated' is not visible (run with --tensors for exact tensors)";
    return "no allocator segments or tensors seen (only contexts, kernels or other memory)";
}

static void print_run(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    const tables_process *p = tables_process_get(r->t);
    fprintf(out, "%svramtrace report%s  %s", B(c), N(c), "");
    escape_term_fputs(out, r->path, strlen(r->path));
    fprintf(out, "  (%s)\n", reader_status_name(r->status));
    if (p) {
        fprintf(out, "  run      ");
        for (uint32_t i = 0; i < p->argc && i < 64; i++) {
            escape_term_fputs(out, p->argv[i].s, p->argv[i].len);
            fputc(i + 1 < p->argc ? ' ' : '\n', out);
        }
        if (!p->argc)
            fputc('\n', out);
        const char *rank = tables_env(r->t, "RANK");
        fprintf(out, "  process  pid %u, rank %s, host ", p->pid, rank ? rank : "-");
        escape_term_fputs(out, p->host.s, p->host.len);
        fputc('\n', out);
    }
    if (c->nruns > 1)
        fprintf(out,
                "  ranks    %d files: this one in full (%s), every one in \"Per rank / process\"\n",
                c->nruns, report_full_rank_text(c));
    char b1[32];
    for (size_t i = 0; i < tables_n_devices(r->t); i++) {
        const tables_device *d = tables_device_at(r->t, i);
        fprintf(out, "  device   %u: ", d->ordinal);
        escape_term_fputs(out, d->name.s, d->name.len);
        fprintf(out, ", %s, compute capability %u.%u\n", human(d->total_bytes, b1, sizeof b1),
                d->cc_major, d->cc_minor);
    }
    if (c->facts.card_bytes) {
        fprintf(out, "  card     emulated: ");
        escape_term_fputs(out, c->facts.card_name, strlen(c->facts.card_name));
        fprintf(out, " (%s)\n", human(c->facts.card_bytes, b1, sizeof b1));
    }
    fprintf(out, "  mode     %s\n", report_mode_text(r));
    char sn[480];
    if (report_stacks_text(r, sn, sizeof sn))
        fprintf(out, "  stacks   %s\n", sn);
    if (report_tracker_text(r))
        fprintf(out, "  tracker  %s\n", report_tracker_text(r));
    char fails[REPORT_FAILED_LEN], lost[REPORT_LOST_LEN];
    report_failed_text(r->n_failed, r->n_failed_frees, r->n_failed_frees_shutdown, fails,
                       sizeof fails);
    report_lost_text(r->run_dropped, replay_missing_events(r), replay_made_events(r),
                     r->lost_why | r->ended, lost, sizeof lost);
    if (r->tensor_mode)
        fprintf(out, "  events   %llu (%s%s), %u %s%s, %.2f s traced\n",
                (unsigned long long)r->n_events, fails, lost, report_opt_steps(c),
                report_steps_noun(c), report_steps_hedge(c), secs(r->end_ns));
    else /* a step that reserves no new segment leaves no event */
        fprintf(out,
                "  events   %llu (%s%s), %u optimizer step%s that grew the cache, %.2f s "
                "traced\n",
                (unsigned long long)r->n_events, fails, lost, r->iterations,
                r->iterations == 1 ? "" : "s", secs(r->end_ns));
    char caught[REPORT_CAUGHT_LEN];
    if (report_caught_text(r, caught, sizeof caught))
        fprintf(out, "  oom      %s\n", caught);
}

static void print_peaks(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    char b[32];
    fprintf(out, "\n%sPeaks%s\n", B(c), N(c));
    if (r->tensor_mode)
        fprintf(out, "  allocated (tensors)      %12s  at %8.3f s\n",
                human(r->peak_allocated, b, sizeof b), secs(r->t_allocated));
    else
        fprintf(out, "  allocated (tensors)      %12s  (not visible in segment mode)\n", "-");
    if (r->blocks_basis != BLOCKS_BASIS_NONE) { /* emulated (blocks.c) */
        char note[160] = "";
        if (r->blocks_basis == BLOCKS_BASIS_APPROXIMATE)
            snprintf(note, sizeof note, "; approximate: %s", blocks_basis_text(r->blocks_basis));
        else if (r->blocks_unplaced)
            snprintf(note, sizeof note,
                     "; %llu tensors outside the traced segments counted rounded",
                     (unsigned long long)r->blocks_unplaced);
        fprintf(out,
                "  allocated (blocks)       %12s  at %8.3f s  "
                "PyTorch's max_memory_allocated counts blocks%s\n",
                human(r->peak_allocated_blocks, b, sizeof b), secs(r->t_allocated_blocks), note);
    }
    fprintf(out, "  reserved (allocator)     %12s  at %8.3f s\n",
            human(r->peak_reserved, b, sizeof b), secs(r->t_reserved));
    if (r->vmm_unmapped_handles) /* expandable segments: an expansion that could not be made */
        fprintf(out,
                "    not counted: %s in %llu physical chunks created and released without being "
                "mapped (an expansion that failed when the device was full; PyTorch does not "
                "count them as reserved either)\n",
                human(r->vmm_unmapped_bytes, b, sizeof b),
                (unsigned long long)r->vmm_unmapped_handles);
    fprintf(out, "  process (all device)     %12s  at %8.3f s\n",
            human(r->peak_process, b, sizeof b), secs(r->t_process));
}

const char *report_cache_text(const replay_result *r, char *buf, size_t n)
{
    const cat_breakdown *bd = &r->at_peak.by_cat;
    uint64_t total = cat_breakdown_total(bd), cache = bd->bytes[CAT_CACHE];
    if (!r->tensor_mode || !r->at_tensors.n || !total || cache < total / 4 || !r->peak_allocated)
        return NULL;
    int big = -1; /* the tensors' largest category at their peak */
    for (int k = 0; k < CAT_COUNT; k++)
        if (k != CAT_CACHE && k != CAT_CONTEXT && k != CAT_KERNEL_CODE && k != CAT_EXTERNAL &&
            k != CAT_UNKNOWN && r->at_tensors.by_cat.bytes[k] &&
            (big < 0 || r->at_tensors.by_cat.bytes[k] > r->at_tensors.by_cat.bytes[big]))
            big = k;
    char b1[32], b2[32], b3[32], of[96] = "", then[96] = "";
    if (big >= 0)
        snprintf(of, sizeof of, " (%s %s of it)", category_name((category)big),
                 human(r->at_tensors.by_cat.bytes[big], b2, sizeof b2));
    /* what came after the tensors' peak: the reserved memory's own peak, where it came later (the
     * process peak may come later still: a kernel image, memory outside PyTorch) */
    if (r->t_reserved > r->t_allocated)
        snprintf(then, sizeof then,
                 ", and the reserved memory grew after that, to its peak at %.3f s",
                 secs(r->t_reserved));
    else if (r->t_allocated < r->t_process)
        snprintf(then, sizeof then, ", and the process's memory grew after that, to this peak");
    else if (r->t_allocated > r->t_process)
        snprintf(then, sizeof then, ", inside what was reserved by then");
    snprintf(buf, n,
             "allocator cache: reserved memory no tensor held at this moment, which PyTorch keeps "
             "for reuse (%s here); the tensors peaked at %.3f s with %s%s%s",
             human(cache, b3, sizeof b3), secs(r->t_allocated),
             human(r->peak_allocated, b1, sizeof b1), of, then);
    return buf;
}

static void print_categories(FILE *out, const report_ctx *c, const cat_breakdown *bd,
                             uint64_t total, const char *title, int note)
{
    char b[32];
    fprintf(out, "\n%s%s%s\n", B(c), title, N(c));
    fprintf(out, "  %-18s %12s %7s\n", "category", "bytes", "share");
    for (int i = 0; i < CAT_COUNT; i++) {
        uint64_t v = bd->bytes[i];
        if (!v && i != CAT_UNKNOWN)
            continue;
        double share = total ? 100.0 * (double)v / (double)total : 0.0;
        int bar = (int)(share / 2.5 + 0.5);
        fprintf(out, "  %-18s %12s %6.1f%%  ", category_name((category)i), human(v, b, sizeof b),
                share);
        for (int k = 0; k < bar; k++)
            fputc('#', out);
        fputc('\n', out);
    }
    fprintf(out, "  %-18s %12s %6.1f%%\n", "total", human(total, b, sizeof b), total ? 100.0 : 0.0);
    char why[400];
    if (note && report_cache_text(&c->runs[0], why, sizeof why))
        fprintf(out, "  (%s)\n", why);
    if (note && !c->runs[0].tensor_mode && c->runs[0].segment_mode)
        fprintf(out, "  (segment mode: each row is the segments the allocator reserved while that "
                     "phase ran, not\n"
                     "   tensors of that kind; gradients, optimizer state and saved activations "
                     "are told apart\n"
                     "   only with tensor events: run with --tensors)\n");
}

/* print_category_peaks: each category's largest live bytes over the run (tensor mode), e.g.
 * the optimizer's state when the process peak came before the first step. */
static void print_category_peaks(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    char b[32];
    if (r->cat_peaks_lost)
        fprintf(out, "\n%sLargest live bytes of each category over the run%s: not computed (%s)\n",
                B(c), N(c), r->cat_peaks_lost);
    if (!r->has_cat_peaks)
        return;
    fprintf(out, "\n%sLargest live bytes of each category over the run%s\n", B(c), N(c));
    fprintf(out, "  %-18s %12s %10s\n", "category", "peak", "at");
    for (int i = 0; i < CAT_COUNT; i++) {
        if (!r->cat_peak[i])
            continue;
        fprintf(out, "  %-18s %12s %8.3f s\n", category_name((category)i),
                human(r->cat_peak[i], b, sizeof b), secs(r->cat_peak_ns[i]));
    }
}

const char *report_full_rank_text(const report_ctx *c)
{
    return c->full_oom ? "the first that ran out of memory" : "the first given";
}

const char *report_sites_heading(const replay_result *r)
{
    const tables_config *cf = tables_config_get(r->t);
    return !tables_no_python(r->t)             ? "Python file:line function, the native op below"
           : cf->stack_mode & VT_STACKS_NATIVE ? "the native op: no Python frames were recorded"
                                               : "none: no stacks were recorded";
}

static void print_sites(FILE *out, const report_ctx *c)
{
    char b[32];
    if (!c->top || !c->nsites)
        return;
    fprintf(out, "\n%sTop allocation sites at the peak%s (%s)\n", B(c), N(c),
            report_sites_heading(&c->runs[0]));
    for (int cat = 0; cat < CAT_COUNT; cat++) {
        int shown = 0;
        for (size_t i = 0; i < c->nsites && shown < c->top; i++) {
            if (c->sites[i].category != cat)
                continue;
            if (!shown)
                fprintf(out, "  %s\n", category_name((category)cat));
            fprintf(out, "    %12s  %5u x  %s\n", human(c->sites[i].bytes, b, sizeof b),
                    c->sites[i].count, c->sites[i].text);
            const char *native = report_site_native(c, i);
            if (native[0] && /* (the site itself, with its file:line: said once) */
                strncmp(native, c->sites[i].text, strlen(native)))
                fprintf(out, "    %12s           via %s\n", "", native);
            shown++;
        }
    }
}

/* print_modules: where the activations come from, by module, at a moment (top 12; the rest
 * summed, nothing hidden). */
static void print_modules(FILE *out, const report_ctx *c, const report_module *m, size_t n,
                          uint64_t total, const char *when)
{
    char b[32];
    if (!n || !total)
        return;
    char said[64]; /* the categories it counts that hold bytes at that moment */
    report_modules_cats(m, n, NULL, 0, said, sizeof said);
    fprintf(out,
            "\n%sWhere the activations come from%s (%s live %s, by the nn.Module whose "
            "forward made them)\n",
            B(c), N(c), *said ? said : "tensors", when);
    fprintf(out, "  %12s %6s %7s  %s\n", "bytes", "share", "tensors", "module");
    uint64_t rest = 0, nrest = 0;
    for (size_t i = 0; i < n; i++) {
        if (i >= 12) {
            rest += m[i].bytes;
            nrest += m[i].count;
            continue;
        }
        fprintf(out, "  %12s %5.1f%% %7llu  ", human(m[i].bytes, b, sizeof b),
                100.0 * (double)m[i].bytes / (double)total, (unsigned long long)m[i].count);
        escape_term_fputs(out, m[i].text, strlen(m[i].text));
        fputc('\n', out);
    }
    if (rest)
        fprintf(out, "  %12s %5.1f%% %7llu  (%zu more modules)\n", human(rest, b, sizeof b),
                100.0 * (double)rest / (double)total, (unsigned long long)nrest, n - 12);
}

static void print_phases(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    char b[32];
    fprintf(out, "\n%sPeak by phase%s (process level while in the phase%s)\n", B(c), N(c),
            r->dropped_events || r->missing_events
                ? "; over the events the file holds: a phase's peak in what was dropped is not seen"
                : "");
    for (int p = 0; p < PHASE_COUNT; p++)
        if (r->phase_peak[p])
            fprintf(out, "  %-10s %12s\n", phase_name(p), human(r->phase_peak[p], b, sizeof b));
    /* (OpenAI ES's 2 generations of 512 functional forwards had been "init" alone, unsaid) */
    if (c->model && c->model->no_forward)
        fputs("  (init holds every allocation: no forward of a module, backward or optimizer step "
              "on any stack tells the setup from a loop that applies its model by a function of "
              "its own)\n",
              out);
}

static void print_ranks(FILE *out, const report_ctx *c)
{
    char b1[32], b2[32];
    if (c->nruns < 2)
        return;
    fprintf(out, "\n%sPer rank / process%s\n", B(c), N(c));
    fprintf(out, "  %-6s %-8s %12s %12s %-5s %s\n", "rank", "pid", "reserved", "process", "OOM",
            "file");
    for (int i = 0; i < c->nruns; i++) {
        const replay_result *r = &c->runs[i];
        const tables_process *p = tables_process_get(r->t);
        const char *rank = tables_env(r->t, "RANK");
        fprintf(out, "  %-6s %-8u %12s %12s %-5s ", rank ? rank : "-", p ? p->pid : 0,
                human(r->peak_reserved, b1, sizeof b1), human(r->peak_process, b2, sizeof b2),
                r->has_oom ? "yes" : "no");
        escape_term_fputs(out, r->path, strlen(r->path));
        fputc('\n', out);
    }
}

int report_text(FILE *out, const report_ctx *c)
{
    const replay_result *r = &c->runs[0];
    print_run(out, c);
    print_peaks(out, c);
    print_categories(out, c, &r->at_peak.by_cat, cat_breakdown_total(&r->at_peak.by_cat),
                     "Every byte at the process peak, by category", 1);
    if (r->has_oom)
        print_categories(out, c, &r->at_oom.by_cat, cat_breakdown_total(&r->at_oom.by_cat),
                         "Live when the out-of-memory allocation failed", 0);
    print_category_peaks(out, c);
    print_sites(out, c);
    if (!r->tensor_mode && r->segment_mode)
        fprintf(out,
                "\n%sWhere the activations come from%s: by module needs tensor events "
                "(segment mode sees the allocator's segments only; run with --tensors)\n",
                B(c), N(c));
    char when[96];
    snprintf(when, sizeof when, "at the %s peak (%.3f s)",
             c->mod_peak_is_tensors ? "allocated" : "process", secs(c->mod_peak_ns));
    print_modules(out, c, c->mod_peak, c->nmod_peak, c->mod_peak_total, when);
    if (r->has_oom)
        print_modules(out, c, c->mod_oom, c->nmod_oom, c->mod_oom_total,
                      "when the out-of-memory allocation failed");
    print_phases(out, c);
    growth_text(out, c, B(c), N(c));
    print_ranks(out, c);
    fputc('\n', out);
    model_text(out, c->model, &c->facts, c->color);
    return 0;
}
