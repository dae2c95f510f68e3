/* model_oom.c — the run's out-of-memory error in its model (model_oom.h): whether it cut the
 * moment measured short, the what-ifs' calibration from the state at the failure, the state of a
 * first step cut short. Part of model_build (model.c). */
#include "model_oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "bytes_sat.h"
#include "formula.h"
#include "model_first_forward.h"
#include "model_seq.h"
#include "model_trace.h"

/* oom_in: the run's out-of-memory error came in that phase (phases.h's names) */
static int oom_in(const run_facts *f, const char *name)
{
    return f->oom_phase && !strcmp(f->oom_phase, name);
}

/* later_forward: the run ran out of memory in a forward after a backward that began after its
 * tensors peaked (a later micro-batch's forward: the moment measured is whole, its logits made;
 * the H100 Llama 160M at B=12, out of memory in its second micro-batch's forward, peaked at the
 * end of its first) */
static int later_forward(const run_facts *f)
{
    return oom_in(f, "forward") && f->oom_bwd > f->peak_bwd;
}

int model_oom_cut(const run_facts *f)
{
    return f->has_oom && !(f->oom_iter > f->peak_iter) && !later_forward(f);
}

uint64_t model_oom_whole_state(const model_result *m, const run_facts *f)
{
    double trained = (double)f->at_oom.bytes[CAT_GRADIENTS] / model_trained_bytes(m);
    return (uint64_t)(formula_opt_bpp(&m->shape) * trained);
}

/* forward_whole: the run died in a forward cut short (model_oom_cut) after an earlier forward of
 * its shape had completed (a backward ran before it): the activations and autocast copies that
 * forward would have held, at their largest over the run where above what was live at the
 * failure (calib.fwd_whole), said in m->oom_forward */
static void forward_whole(model_result *m, const run_facts *f)
{
    static const category whole[] = {CAT_ACTIVATIONS, CAT_AUTOCAST};
    if (!oom_in(f, "forward") || !f->backward_passes || !model_oom_cut(f) || !f->has_cat_peaks ||
        m->oom_forward[0] || f->oom_new_step) /* (no earlier forward was of its kind) */
        return;
    char said[200] = "";
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        category k = whole[i];
        uint64_t live = f->at_oom.bytes[k], most = f->cat_peak[k];
        if (most <= live)
            continue;
        m->calib.fwd_whole.bytes[k] = most;
        size_t n = strlen(said);
        snprintf(said + n, sizeof said - n, "%s%s %.1f MiB of %.1f", n ? ", " : "",
                 category_name(k), (double)live / 1048576.0, (double)most / 1048576.0);
    }
    if (said[0])
        snprintf(m->oom_forward, sizeof m->oom_forward,
                 "%s in a forward cut short after an earlier forward had completed: "
                 "what-ifs take it whole, at what an earlier forward held (%s live at the "
                 "failure)",
                 f->oom_went_on ? "the run ran out of memory (the program caught it and went on)"
                                : "the run died",
                 said);
}

/* backward_kept: advice_backward_kept's run (advice.h): lower bounds, said in m->oom_forward
 * where nothing else is. (Opacus's physical batch 192, 4.98 GiB of per-sample gradients at the
 * failure, had been told "recommended: micro-batch 192 → 128 ... 9.92 GiB: fits (17 %)", which
 * runs at 11.91 GiB, and "largest micro-batch that fits: 148", where 111 is.) */
static void backward_kept(model_result *m, const run_facts *f)
{
    uint64_t bw = f->at_oom.bytes[CAT_BACKWARD], act = f->at_oom.bytes[CAT_ACTIVATIONS];
    if (!oom_in(f, "backward") || !advice_backward_kept(&m->calib))
        return;
    m->lower_bounds = m->calib.lower = 1;
    if (!m->oom_forward[0])
        snprintf(m->oom_forward, sizeof m->oom_forward,
                 "the run died in a backward whose own tensors (not parameter gradients) were "
                 "%.1f MiB at the failure, at least half the activations still live (%.1f "
                 "MiB): a backward that keeps what it makes (per-sample gradients, as DP-SGD "
                 "keeps them for its clipping) had not finished, so what-ifs scale a part of "
                 "it and are lower bounds (vramtrace fit measures)",
                 (double)bw / 1048576.0, (double)act / 1048576.0);
}

/* new_step: the run died in a step of a kind no earlier step ran (run_facts' oom_new_step): what
 * was live at the failure is a part of that step, whose end no earlier step measured: lower
 * bounds, said in m->oom_forward. (A WGAN out of memory in its first generator step at batch 384,
 * after five critic steps, had been told "largest micro-batch that fits: 324", which runs out of
 * memory: its generator's backward and update had not come.) */
static void new_step(model_result *m, const run_facts *f)
{
    /* (not after backward passes of one forward: those "steps" were passes, passes_kept's) */
    if (!f->oom_new_step || f->oom_passes)
        return;
    m->lower_bounds = m->calib.lower = 1; /* (its end not measured) */
    snprintf(m->oom_forward, sizeof m->oom_forward,
             ADVICE_NEW_STEP_TEXT " (of the %.1f MiB it kept for its backward, most made at "
                                  "code first run in it, as a GAN's generator step after its "
                                  "critic's): what that step holds by its end was not measured, "
                                  "so what-ifs scale a part of it and are lower bounds (vramtrace "
                                  "fit measures)",
             (double)(f->at_oom.bytes[CAT_ACTIVATIONS] + f->at_oom.bytes[CAT_LOGITS] +
                      f->at_oom.bytes[CAT_ATTENTION]) /
                 1048576.0);
}

int model_oom_state_cause(model_result *m, const run_facts *f, uint64_t cap)
{
    /* (the backward's weight-sized tensors beside a state: an Adagrad's sums beside a table's
     * dense gradient; with no state, the weights and their gradients are model_grads_cause's) */
    uint64_t whole = model_oom_whole_state(m, f);
    uint64_t wsized =
        whole ? f->bwd_weight_oom + (f->oom_request_weight ? f->oom_requested : 0) : 0;
    return advice_state_cause(&f->at_oom, whole, wsized, cap, m->why, sizeof m->why);
}

/* passes_flag: the one command-line flag whose value is n (--tasks 24 beside 24 passes), "--flag n"
 * in out; 0: none, or more than one */
static int passes_flag(const run_facts *f, int n, char *out, size_t len)
{
    int found = 0;
    for (int i = 1; i < f->argc; i++) {
        const char *a = f->argv[i], *eq = strchr(a, '='), *v = eq ? eq + 1 : NULL;
        if (a[0] != '-' || a[1] != '-')
            continue;
        if (!v && i + 1 < f->argc)
            v = f->argv[i + 1];
        char *end;
        if (!v || strtol(v, &end, 10) != n || *end || end == v)
            continue;
        if (found++)
            return 0;
        snprintf(out, len, "%.*s %d", eq ? (int)(eq - a) : (int)strlen(a), a, n);
    }
    return found;
}

/* passes_kept: an OOM after the backward passes of one forward, outside a forward (run_facts
 * oom_passes): what the step made after its first pass and kept (per-pass copies of the
 * gradients) and the failed request, made there too, grow with the passes, not the micro-batch:
 * the what-ifs carry them as they are (as bytes of no category that scales), and the forward
 * was whole (PCGrad's 24 tasks, 6.50 GiB of copies counted as activations, had been told
 * "recommended: micro-batch 32 → 16 ... 8.05 GiB: fits" and "largest ... 23", both out of
 * memory when rerun) */
static void passes_kept(model_result *m, const run_facts *f)
{
    if (!f->oom_passes)
        return;
    static const category made[] = {CAT_ACTIVATIONS, CAT_TEMPORARIES, CAT_LOGITS};
    cat_breakdown *l = &m->calib.oom_live;
    uint64_t left = f->oom_passes_bytes;
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        uint64_t take = left < l->bytes[made[i]] ? left : l->bytes[made[i]];
        l->bytes[made[i]] -= take, l->bytes[CAT_UNKNOWN] += take, left -= take;
        m->calib.fwd_whole.bytes[made[i]] = 0;
    }
    l->bytes[CAT_UNKNOWN] += m->calib.oom_request;
    m->calib.passes_kept = f->oom_passes_bytes - left + m->calib.oom_request;
    m->calib.oom_request = 0;
    char flag[96], lever[240] = "";
    if (passes_flag(f, f->oom_passes, flag, sizeof flag))
        snprintf(lever, sizeof lever,
                 "; %s on the command line has their count (where it sets them, fewer passes "
                 "make less: vramtrace fit over it measures)",
                 flag);
    if (!m->oom_forward[0])
        snprintf(m->oom_forward, sizeof m->oom_forward,
                 "the run died after %d backward passes of one forward, in code outside a "
                 "forward: %.1f MiB it had made after its first pass (per-pass copies of the "
                 "gradients, as a multi-task step's PCGrad keeps one per task) and the %.1f MiB "
                 "it asked for grow with the passes, not the micro-batch: what-ifs keep them as "
                 "they are%s",
                 f->oom_passes, (double)f->oom_passes_bytes / 1048576.0,
                 (double)f->oom_requested / 1048576.0, lever);
}

uint64_t model_oom_passes_in(const model_result *m, const run_facts *f, uint64_t act)
{
    /* (the moment explained after the last pass began: PCGrad's copies had been "290.5 MiB per
     * sample ... the whole forward saves more") */
    if (!f->oom_passes || (!m->measured_at_oom && f->peak_bwd != f->oom_bwd))
        return 0;
    return f->oom_passes_bytes < act ? f->oom_passes_bytes : act;
}

void model_oom_act_why(model_result *m, const run_facts *f, size_t w)
{
    if (!f->oom_passes) {
        model_seq_cause(&m->cfg, m->why + w, sizeof m->why - w);
        return;
    }
    /* (it had been "activations 9296 MiB and logits/loss 0 MiB were live in the forward; they
     * grow with the micro-batch", 6.50 GiB of them PCGrad's per-task copies) */
    uint64_t a = f->at_oom.bytes[CAT_ACTIVATIONS] + f->at_oom.bytes[CAT_ATTENTION] +
                 f->at_oom.bytes[CAT_LOGITS] + f->at_oom.bytes[CAT_TEMPORARIES],
             p = f->oom_passes_bytes < a ? f->oom_passes_bytes : a;
    snprintf(m->why, sizeof m->why,
             "after %d backward passes of one forward, in code outside a forward: %.0f MiB it "
             "made after its first pass (per-pass copies of the gradients, as PCGrad keeps one "
             "per task: they grow with the passes, not the micro-batch) and %.0f MiB of the "
             "forward's activations, logits and temporaries (they grow with the micro-batch) were "
             "live",
             f->oom_passes, (double)p / 1048576.0, (double)(a - p) / 1048576.0);
}

void model_oom_calibrate(model_result *m, const run_facts *f)
{
    /* after the forward the state at the failure is the step's, unless the tensors peaked
     * in an earlier step after the first that ended (a GAN at B=1024 out of memory in its
     * 4th step's backward, its activations partly freed: 7.61 GiB of them then, 9.48 at its
     * peak before; B=944 had been predicted 9.26 GiB of tensors and took 10.06). Not the
     * first step's peak: a compiled run's holds its warm-up (HF GPT-2 at B=16) */
    int earlier = m->measured_at_tensors && f->peak_iter >= 1 && f->iterations > f->peak_iter;
    /* gradients alive in a forward (a later micro-batch of an accumulation, or Lightning's,
     * whose zero_grad comes after the forward) are no sign that the forward had ended: its
     * state is a lower bound, as any forward's (a simulated Llama 400M under Lightning at
     * B=4, A=2, out of memory 84 % into its second step's forward, had B=2, A=4 predicted
     * 8.68 GiB of tensors: its failure's, no logits; that run took 9.91) */
    int after_forward = (f->at_oom.bytes[CAT_GRADIENTS] > 0 && !oom_in(f, "forward")) ||
                        oom_in(f, "backward") || oom_in(f, "optimizer");
    advice_calibrate_oom(&m->calib, &f->at_oom, f->oom_requested, !earlier && after_forward);
    m->calib.kv_oom = f->kv_at_oom;
    m->calib.oom_in_step = oom_in(f, "optimizer");
    model_kv_kept(f, &m->calib.kv_oom);
    model_oom_forward_share(m, f);
    new_step(m, f);      /* (lower bounds: a step of a kind not run before) */
    forward_whole(m, f); /* (a later forward's: the share of none but the first's) */
    backward_kept(m, f); /* (lower bounds: a backward that keeps what it makes) */
    passes_kept(m, f);   /* (what a step made after its passes of one forward: kept) */
    m->calib.step_in_place = m->rec.sgd_bare;
    m->calib.bwd_weight_oom = f->bwd_weight_oom, m->calib.request_weight = f->oom_request_weight;
    /* a first backward cut short, the weights it had not reached costed as trained (grads_cut):
     * a failed request no larger than their gradients was one of them, costed there already (a
     * DLRM-like model out of memory making a table's gradient had it twice: tensors predicted
     * 4.90 GB, its run on a larger card took 4.36) */
    uint64_t unmade = bytes_diff(f->at_oom.bytes[CAT_PARAMETERS], f->at_oom.bytes[CAT_GRADIENTS]);
    if (m->rec.grads_cut && oom_in(f, "backward") && f->oom_requested <= unmade)
        m->calib.oom_request = 0;
    if (f->iterations == 0) /* the step it never reached: at least that, at any shape */
        advice_unreached_step(&m->calib, &m->shape);
    if (m->rec.state_cut) {
        /* the first step's state was being made: the what-ifs hold all of it (the failed
         * request was a piece of it, not a batch-sized tensor); the part made had let a
         * checkpointing what-if for Llama 400M at 6 GiB go under the weights, gradients and
         * state its own cause adds up */
        uint64_t whole = model_oom_whole_state(m, f);
        if (whole > m->calib.oom_live.bytes[CAT_OPTIMIZER]) {
            m->calib.oom_live.bytes[CAT_OPTIMIZER] = whole;
            m->calib.oom_request = 0;
        }
    }
}

void model_kept_whole(model_result *m, const run_facts *f)
{
    uint64_t copies = m->measured_at_tensors ? f->copies_at_tensors : f->copies_at_peak;
    copies = copies > f->copies_at_oom ? copies : f->copies_at_oom;
    uint64_t data = m->measured_at_tensors ? f->data_at_tensors : f->data_at_peak;
    m->calib.data = data > f->data_at_oom ? data : f->data_at_oom; /* (a replay buffer's) */
    if (!m->frozen_params && !copies)
        return;
    m->calib.frozen = m->frozen_params * (uint64_t)formula_param_bytes(&m->shape) + copies;
    uint64_t pm = m->calib.measured.bytes[CAT_PARAMETERS],
             pr = m->calib.refined.bytes[CAT_PARAMETERS];
    if (m->calib.calibrated && !m->calib.global && pr && pm > m->calib.frozen)
        m->calib.ratio[CAT_PARAMETERS] = (double)(pm - m->calib.frozen) / (double)pr;
}

/* own_oom: model_data_oom's run whose failing call drew or copied values onto the device on
 * its own line (f->oom_own), not data filled before training: the cause the program's request,
 * no advice, what the configuration needs at least, and the flags that line reads (ES's noise,
 * population_size / 2 x num_params floats drawn in its first generation, had been "the tensors
 * of one micro-batch" with 0 MiB of them, "--batch_size 128 ... 8.67 GiB: fits", which ran out
 * of memory at the same request) */
static int own_oom(model_result *m, const run_facts *f)
{
    const double gib = 1073741824.0;
    m->cause = OOM_OWN;
    uint64_t live = cat_breakdown_total(&f->at_oom), need = live + f->oom_requested;
    snprintf(m->why, sizeof m->why,
             "%.2f GiB requested at %s, the program's own line (values it drew or copied onto "
             "the device, outside a module's construction), beside %.2f GiB live; no forward "
             "the trace shows had run: no module's weight (a plain tensor of the program's may "
             "still hold weights it applies by a function of its own), nor a forward's tensor",
             (double)f->oom_requested / gib, f->oom_site && *f->oom_site ? f->oom_site : "a call",
             (double)live / gib);
    if (m->current.peak_bytes < need)
        m->current.peak_bytes = need;
    char flags[400], sized[640];
    int nflags = model_oom_line_flags(&m->cfg, f, flags, sizeof flags);
    if (nflags > 0) {
        /* (the first flag and its value, as vramtrace fit takes them: "--population_size") */
        int nn = (int)strcspn(flags, " "), nv = (int)strcspn(flags + nn + 2, ",");
        snprintf(sized, sizeof sized,
                 "that line reads %s: what sizes the request is among them (vramtrace fit "
                 "measures the largest value of one that fits: %.*s {B=%.*s})",
                 flags, nn, flags, nv, flags + nn + 2);
    } else /* (a line of another file: its flags are not read there) */
        snprintf(sized, sizeof sized, "what sizes the request is the program's: %s",
                 nflags ? "that line is not the recorded script's, whose flags alone are read"
                        : "no integer flag of the recorded script is read on that line, nor "
                          "through the names it reads (two assignments back)");
    snprintf(m->advice_none, sizeof m->advice_none,
             "the run ran out of memory at its own line's request before any forward the "
             "trace shows: nothing measured grows with a batch, so nothing here tells what "
             "another micro-batch needs; this configuration needs at least %.2f GiB (what was "
             "live and the request); %s",
             (double)need / gib, sized);
    return 1;
}

int model_data_oom(model_result *m, const run_facts *f)
{
    if (!f->has_oom || !(f->oom_data || f->oom_own) || f->phase_seen != 1u << PHASE_INIT)
        return 0;
    /* (memory outside PyTorch, or the cache in pieces, stay the cause where they are) */
    uint64_t cap = f->oom_capacity ? f->oom_capacity : f->card_bytes, cache = f->oom_cache;
    if (f->tensor_mode && f->at_oom.bytes[CAT_CACHE] > cache)
        cache = f->at_oom.bytes[CAT_CACHE];
    m->cause = advice_oom_cause(&f->at_oom, f->oom_requested, cap, cache, f->oom_outside,
                                f->oom_phase, 0, m->why, sizeof m->why, 0);
    if (m->cause != OOM_ACTIVATIONS)
        return 0;
    const double gib = 1073741824.0;
    if (!f->oom_data)
        return own_oom(m, f);
    m->cause = OOM_DATA;
    snprintf(m->why, sizeof m->why,
             "%.2f GiB requested at %s was data the program keeps on the device (storage its own "
             "line filled before training, where it makes no weight), beside %.2f GiB of such "
             "data live; no forward had run",
             (double)f->oom_requested / gib, f->oom_site && *f->oom_site ? f->oom_site : "a call",
             (double)f->data_at_oom / gib);
    uint64_t need = cat_breakdown_total(&f->at_oom) + f->oom_requested;
    if (m->current.peak_bytes < need)
        m->current.peak_bytes = need;
    /* the flag whose value the data's bytes are multiples of: what sizes it (a DQN's replay
     * buffer, --buffer-size entries of 28224 B, had been "what sizes the data ... is the
     * program's" with the flag on its command line) */
    /* (the data live, its tensors' own sizes: the request is rounded to the allocator's block) */
    char flag[64], sized[256];
    int dflt = 0;
    long long n = model_data_flag(&m->cfg, f, &f->data_at_oom, 1, flag, sizeof flag, &dflt);
    if (n)
        snprintf(sized, sizeof sized,
                 "%s (%lld, %s) sizes the data: the recorded script passes its value to the line "
                 "that made it, and the %.2f GiB of it live is %lld × %llu B",
                 flag, n, dflt ? "the script's default" : "on the command line",
                 (double)f->data_at_oom / gib, n,
                 (unsigned long long)(f->data_at_oom / (uint64_t)n));
    else
        snprintf(sized, sizeof sized,
                 "what sizes the data (a buffer's length, a dataset's) is the program's");
    snprintf(m->advice_none, sizeof m->advice_none,
             "the run ran out of memory making its own data before any forward: nothing measured "
             "grows with a batch, so nothing here tells what another micro-batch needs; this "
             "configuration needs at least %.2f GiB (what was live and the request); %s",
             (double)need / gib, sized);
    return 1;
}
