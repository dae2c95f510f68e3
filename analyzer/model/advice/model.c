/* model.c — the model of a run (model.h): its configuration with one source for every value
 * (nanoGPT's defaults for nanoGPT's train.py only), what was trained, the measured peak beside
 * the basic and refined formulas where a transformer's formula applies, the OOM diagnosis and
 * the calibrated advice, computed once. Reasons: model_explain.c; printing: views/model_*.c. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "advice_speak.h" /* (and advice.h) */
#include "cfgsrc.h"
#include "config.h"
#include "formula.h"
#include "model_notes.h"
#include "model_oom.h"
#include "model_seq.h"
#include "model_script.h"
#include "model_cache.h"
#include "model_factored.h"
#include "model_first_forward.h"
#include "model_nanogpt.h"
#include "model_trace.h"
#include "scriptflags.h"
#include "trainargs.h"

/* heads_consistent: n_embd divisible by n_head; when not, the value the trace measured stays
 * and the other (an assumption or the program's) is dropped with a note. */
static void heads_consistent(nano_config *c)
{
    char err[300], msg[400];
    if (config_validate(c, err, sizeof err) == 0)
        return;
    config_value *h = &c->v[CFG_n_head];
    snprintf(msg, sizeof msg, "%.240s: the width %lld is kept (%s), heads are not used", err,
             c->v[CFG_n_embd].i, config_source_name(c->v[CFG_n_embd].src));
    config_note(c, msg);
    memset(h, 0, sizeof *h);
    h->src = CONFIG_SRC_UNKNOWN;
}

/* forwards_only: s is a run of forwards only: no training formula, no gradient or optimizer
 * state to predict (an evaluation that finished, or one that ran out of memory) */
static void forwards_only(model_result *m, gpt_shape *s)
{
    s->no_training = s->generic = 1;
    s->opt_set = 1, s->opt_bpp = 0;
    m->formula_ok = m->opt_assumed = m->opt_bound = m->opt_choice = 0;
}

/* most_state: the state counted where the run measured none the script's optimizers would make
 * (kinds: those it constructs, 1u << optim_kind; 0: none seen): with Adam among them, or none
 * seen, AdamW's 8 B (opt_set 0: assumed, said); else the most state of those (optim_kinds_bpp),
 * said with the kinds */
static void most_state(model_result *m, gpt_shape *s, unsigned kinds, int pb)
{
    if (!kinds || kinds & (1u << OPT_ADAM | 1u << OPT_OTHER)) {
        s->opt_set = 0, m->opt_assumed = 1;
        return;
    }
    s->opt_bpp = optim_kinds_bpp(&m->rec, kinds, pb);
    m->opt_choice = 1;
}

/* model_width_vocab: the program's width d (its argument or flag default) is not the sizes' (a
 * Mamba's in_proj, 2E×d, is E², read as d×d): V, the embedding's elements over the sizes' d, is
 * read again over the program's (or left unknown); the family's evidence says them */
static void model_width_vocab(model_result *m, const run_facts *f)
{
    const infer_value *id = f->inferred ? &f->inferred->v[INFER_n_embd] : NULL;
    config_value *cd = &m->cfg.v[CFG_n_embd], *V = &m->cfg.v[CFG_vocab_size];
    if (!id || !id->known || id->value <= 0 || cd->i <= 0 || cd->i == id->value ||
        (cd->src != CONFIG_SRC_ARG && cd->src != CONFIG_SRC_FILE && cd->src != CONFIG_SRC_FLAG))
        return;
    if (V->src == CONFIG_SRC_TRACE) {
        long long emb = V->i * id->value, d = cd->i; /* the embedding's elements, V×d as read */
        char val[32], where[200], err[200];
        snprintf(val, sizeof val, "%lld", emb / d);
        snprintf(where, sizeof where,
                 "V = %lld from the largest parameter, %lld×%lld (embedding / head)", emb / d,
                 emb / d, d);
        if (emb % d != 0 ||
            config_set(&m->cfg, "vocab_size", val, CONFIG_SRC_TRACE, where, err, sizeof err))
            memset(V, 0, sizeof *V), V->src = CONFIG_SRC_UNKNOWN;
    }
    char why[96];
    if (cd->src == CONFIG_SRC_FILE && cd->flag[0])
        snprintf(why, sizeof why, "%.40s's default", cd->flag);
    else
        snprintf(why, sizeof why, "%.40s %lld", cd->flag[0] ? cd->flag : "the program's", cd->i);
    if (config_known(&m->cfg, CFG_vocab_size))
        recognize_family_width(&m->rec, cd->i, V->i, why);
}

/* shape_of_run: what the recognition adds to the configuration's shape; whether a transformer's
 * formula applies (every size it needs known), else the measured scaling (generic). */
static void shape_of_run(model_result *m, const run_facts *f, int nanogpt)
{
    gpt_shape *s = &m->shape;
    const run_recognition *r = &m->rec;
    const nano_config *c = &m->cfg;
    model_family fam = nanogpt ? FAM_DECODER : r->family;
    const char *words = nanogpt ? family_words(fam) : family_text(r); /* (as far as told) */
    s->checkpointing = r->feat[FEATURE_CHECKPOINTING].state == FEAT_ON;
    s->patch_tokens = fam == FAM_VISION_TRANSFORMER;
    s->params16 = r->param_elem == 2;
    /* logits where the trace shows them or a recognized class (nanoGPT's GPT) makes them; none
     * where neither tells, in a first forward cut short (model_head.c builds with them too) */
    s->no_head = r->lm_head < 0 || (m->head_unknown = !m->head_assumed && model_head_unknown(r, f));
    if (f->no_training) { /* nothing to train: no formula of training, no state to predict */
        forwards_only(m, s);
        snprintf(m->formula_why, sizeof m->formula_why,
                 "%s: nothing was trained (forwards only: no backward pass, no optimizer step): "
                 "the training formulas do not apply; the measured breakdown explains the peak",
                 fam == FAM_UNKNOWN ? "the model is not recognized" : words);
        return;
    }
    int pb = model_trained_bytes(m); /* the optimizers' state: in the trained parameters' dtype */
    s->opt_set = 1, s->trained32 = s->params16 && pb == 4; /* (a kind's own size; fp32 LoRA) */
    if (r->optim == OPT_MOMENTUM || r->optim == OPT_ONE_STATE)
        s->opt_bpp = pb;
    else if (r->optim == OPT_NONE)
        s->opt_bpp = 0;
    else if (r->optim == OPT_ADAM)
        s->opt_bpp = 2 * pb;
    else if (r->steps_maybe_skipped)
        /* none made, its steps maybe all skipped by the GradScaler: what the script's kinds make
         * at its first step not skipped, as where no step ran (a ResNet-50's 2 skipped steps had
         * counted none, its sibling out of memory before its first step AdamW's 8 B); with none
         * seen (a Trainer's own AdamW, built in transformers), AdamW's, said */
        most_state(m, s, r->optim_kinds, pb);
    else if (r->optim_bpp >= 0)
        s->opt_bpp = r->optim_bpp;
    else if (r->optim == OPT_FACTORED || r->optim == OPT_EIGHT_BIT || r->optim == OPT_SGD) {
        /* named, not measured: at most 1 B (factored moments: 8/d B per weight of width d; a
         * convolution's 2·pb), 2 B (8-bit moments and their scales), 4 B (SGD: a momentum
         * buffer, when momentum is on) per parameter; said as a bound (optim_bound_bpp) */
        s->opt_bpp = optim_bound_bpp(r, pb);
        m->opt_bound = 1;
    } else
        most_state(m, s, r->optim_kinds, pb); /* not measured: the script's kinds, or AdamW */
    uint64_t P = m->params_trace || !r->trainable_lower ? model_params_at(m, f, pb) /* (else */
                                                        : f->cat_peak[CAT_PARAMETERS] / pb;
    if (r->trainable && P && r->trainable < P && !r->grads_cut) /* (a cut backward: all trained) */
        s->train_frac = (double)r->trainable / (double)P;
    if (r->trainable_union && P) /* (the gradients live at once: the largest step's set) */
        s->grads_frac = (double)f->cat_peak[CAT_GRADIENTS] / (double)pb / (double)P;
    else if (!r->trainable && r->feat[FEATURE_LORA].state == FEAT_ON) {
        /* LoRA, and no gradient measured (an OOM before the first backward): the frozen weights
         * get no gradient and no optimizer state; the adapters are counted at 1 % of the
         * weights, more than usual (ranks 8-64 of a model's width: 0.1-1 %) */
        s->train_frac = 0.01, m->lora_assumed = 1;
    }
    model_factored_state(m, f); /* (Adafactor named, not measured: its state from the sizes) */
    if (family_transformer(fam) &&
        model_frozen_forward(m, f, words, m->formula_why, sizeof m->formula_why)) {
        s->generic = 1; /* few weights train: the measured breakdown, scaled with B */
        if (f->has_oom && f->oom_frozen_forward) { /* lower bounds: no state counted (said) */
            s->none_seen_trained = 1;
            m->opt_assumed = m->opt_bound = m->opt_choice = 0;
        }
        return;
    }
    const char *missing = NULL;
    if (!family_transformer(fam))
        missing = NULL;
    else if (!config_known(c, CFG_batch_size))
        missing = "the micro-batch B";
    else if (!config_known(c, CFG_block_size))
        missing = fam != FAM_VISION_TRANSFORMER ? "the sequence length T"
                  : r->conv_stem                ? "the tokens T"
                                                : "the patch tokens T";
    else if (!config_known(c, CFG_n_layer))
        missing = "the number of blocks L";
    else if (!config_known(c, CFG_n_embd))
        missing = "the width d";
    else if (!config_known(c, CFG_vocab_size) && fam != FAM_VISION_TRANSFORMER)
        missing = "the vocabulary V";
    else if (!config_known(c, CFG_dtype))
        missing = "the compute precision (dtype)";
    else if (!config_known(c, CFG_compile))
        missing = "whether torch.compile ran";
    if (family_transformer(fam) && !missing) {
        m->formula_ok = 1;
        /* dropout masks the trace shows: counted by the block's bytes, and so by its words,
         * which model_gated_block writes (1-byte masks whatever the rate) */
        const infer_value *dm = f->inferred ? &f->inferred->v[INFER_dropout_masks] : NULL;
        int masks = !config_known(c, CFG_dropout) && dm && dm->known && dm->value;
        int dropout_before = s->dropout_on;
        if (masks)
            s->dropout_on = 1;
        model_gated_block(m, f, nanogpt);
        if (s->checkpointing) /* what the refined activations count then: the blocks' inputs */
            model_ckpt_block_note(m);
        /* transformers' GPT-2: its position table's n_positions rows whatever the run's T (at
         * T = 64 the parameters had been 123.70 M for the model's 124.44 M; formula.h) */
        const infer_result *ir = f->inferred;
        if (s->hf_gpt2 && ir && ir->v[INFER_position_rows].known &&
            !ir->v[INFER_token_type_rows].known)
            s->pos_rows = (uint64_t)ir->v[INFER_position_rows].value;
        if (model_nograd_forward(m, f, words, m->formula_why, sizeof m->formula_why)) {
            s->dropout_on = dropout_before;
            forwards_only(m, s); /* an evaluation's forward ran out of memory */
            return;
        }
        if (!s->H && m->rec.family_width_program) /* (a Mamba's: maybe no attention) */
            config_note_key(&m->cfg, CFG_n_head,
                            " unknown: the tensor sizes do not tell whether the blocks have an "
                            "attention; the refined formula counts no B·H·T log-sum-exp rows "
                            "(4·B·T·H bytes per block where there is one)");
        else if (!s->H) /* (the heads as the program names them: n_head is nanoGPT's key) */
            config_note_key(&m->cfg, CFG_n_head,
                            " unknown: the refined formula leaves out the attention's B·H·T "
                            "log-sum-exp rows (4·B·T·H bytes per block, a few MiB)");
        if (masks) {
            config_note(&m->cfg, "dropout's rate unknown, but the trace shows its masks (B·T·d "
                                 "bytes in each block): the refined formula counts them (2·B·T·d "
                                 "bytes per block)");
        } else if (!config_known(c, CFG_dropout))
            config_note(&m->cfg, "dropout unknown: the refined formula leaves out dropout masks "
                                 "(2·B·T·d bytes per block when dropout is on; they are in the "
                                 "measured activations if there are some)");
        return;
    }
    s->generic = 1;
    if (missing && !config_known(c, CFG_batch_size) && config_batch_flags(c)[0])
        snprintf(m->formula_why, sizeof m->formula_why,
                 "%s: the transformer formula needs the micro-batch B, which neither the trace "
                 "nor the program's batch flags (%s) tell",
                 words, config_batch_flags(c));
    else if (missing)
        snprintf(m->formula_why, sizeof m->formula_why,
                 "%s: the transformer formula needs %s, which neither the program nor the trace "
                 "gives",
                 words, missing);
    else
        snprintf(m->formula_why, sizeof m->formula_why,
                 "%s: the transformer formulas do not apply; the measured breakdown explains the "
                 "peak, and what-ifs scale what was measured with the micro-batch",
                 fam == FAM_UNKNOWN ? "the model is not recognized" : words);
}

int model_build_head(model_result *m, const run_facts *f, const model_opts *o, char *err,
                     size_t errlen, int assume_head)
{
    static const config_files none = {0, NULL, 0};
    memset(m, 0, sizeof *m), m->head_assumed = assume_head;
    config_init(&m->cfg);
    m->cfg.files = f->files ? f->files : &none; /* a trace's files: never opened */
    if (config_from_cmdline(&m->cfg, f->argc, f->argv, f->cwd, err, errlen) < 0)
        return -1;
    if (f->recog)
        m->rec = *f->recog;
    else
        m->rec.optim_bpp = -1;
    m->empty =
        f->peak_process == 0 && f->peak_reserved == 0 && cat_breakdown_total(&f->at_peak) == 0;
    if (m->empty && f->recog) /* a trace cut before its first allocation shows nothing off */
        memset(m->rec.feat, 0, sizeof m->rec.feat);
    char why[300] = "";
    int nanogpt = f->argv ? model_nanogpt_run(&m->cfg, f, why, sizeof why) : !f->recog;
    if (why[0])
        config_note(&m->cfg, why);
    if (nanogpt && m->rec.nanogpt) /* its configurator's run: the class GPT is nanoGPT's */
        snprintf(m->rec.family_where, sizeof m->rec.family_where, "%s", RECOGNIZE_NANOGPT_CLASS);
    if (nanogpt && m->rec.optim == OPT_UNKNOWN) { /* its configure_optimizers */
        m->rec.optim = OPT_ADAM;
        snprintf(m->rec.optim_class, sizeof m->rec.optim_class, "AdamW");
        snprintf(m->rec.optim_where, sizeof m->rec.optim_where,
                 "nanoGPT's train.py trains with AdamW (configure_optimizers)");
    }
    if (!nanogpt) {
        m->cfg.program = m->cfg.program == PROG_NANOGPT ? PROG_UNKNOWN : m->cfg.program;
        config_forget_defaults(&m->cfg);
    } else if (f->argv) { /* a traced run: its own script's defaults, not upstream's */
        config_nanogpt_script(&m->cfg, f->argc, f->argv);
    }
    /* a Trainer script's own TrainingArguments: after the command line (it wins), before the
     * trace's inferences (the script's literal is the program's value) */
    config_apply_trainer_args(&m->cfg, f->argc, f->argv);
    cfgsrc_apply_hf(&m->cfg, m->cfg.files);
    cfgsrc_apply_inferred(&m->cfg, f->inferred);
    config_script_batches(&m->cfg, f->argc, f->argv, f->inferred); /* (a batch flag's B·A) */
    char eval_flag[64] = "";
    uint64_t eval_b = model_eval_batch_flag(f, eval_flag, sizeof eval_flag);
    model_complete_tokens(&m->cfg, f, eval_b, eval_flag);
    model_batch_seen(&m->cfg, f);
    config_apply_script(&m->cfg, f->argc, f->argv);
    config_script_nominal(&m->cfg, f->argc, f->argv);  /* (YOLOv5's round(64 / B)) */
    config_script_multiple(&m->cfg, f->argc, f->argv); /* (GRPO's B % G == 0) */
    model_seq_flag(&m->cfg, f); /* (after the flags: a T its batches or blocks never reached) */
    model_width_vocab(m, f);
    model_cache_passes(&m->cfg, f); /* (a representation cache's: no B, no A) */
    model_step_passes(&m->cfg, f);  /* (a free that may end a pass, not a step: no A) */
    if (!nanogpt && f->inferred && f->inferred->v[INFER_params].known &&
        f->inferred->v[INFER_params].value > 0)
        m->params_trace = (uint64_t)f->inferred->v[INFER_params].value;
    if (m->params_trace && m->rec.trainable > m->params_trace) {
        /* more gradient elements than weights: what was counted as gradients is not only them
         * (a run recorded without Python frames: 132.76 M "of the 124.37 M"), not a count */
        m->rec.trainable = 0;
        m->rec.trainable_where[0] = '\0';
    }
    model_kept_not_told(m); /* (a frozen layer's copy kept for its input's gradient) */
    cfgsrc_versions(&m->cfg, m->cfg.files);
    heads_consistent(&m->cfg);
    if (config_overrides(&m->cfg, o ? o->noverrides : 0, o ? o->overrides : NULL,
                         o ? o->overrides_said : NULL, err, errlen) < 0 ||
        config_validate(&m->cfg, err, errlen) < 0)
        return -1;
    model_trace_dtype(&m->cfg, f, model_untyped_set(m, f));
    formula_shape_from_config(&m->cfg, &m->shape);
    model_trace_compile(m, f, nanogpt);
    optim_kind from_trace = m->rec.optim;
    if (f->argv)
        recognize_optim_cmdline(f->argc, f->argv, &m->rec); /* (where the trace names none) */
    optim_kind optim_before = m->rec.optim; /* what the trace and the command line said */
    if (f->argv)
        recognize_optim_default(&m->cfg, f->argc, f->argv, &m->rec);
    recognize_optim_script(m->cfg.files, f->t, &m->rec);
    shape_of_run(m, f, nanogpt);
    if (m->shape.no_training && optim_before == OPT_UNKNOWN && m->rec.optim_bpp < 0) {
        /* forwards only (an evaluation): the optimizer a script would train with is not this
         * run's; none is named from its source */
        m->rec.optim = optim_before, m->rec.optim_kinds = 0, m->rec.optim_choices[0] = '\0';
        snprintf(m->rec.optim_where, sizeof m->rec.optim_where, "%s", OPTIM_FORWARDS_ONLY);
    } else if (m->shape.no_training && from_trace == OPT_UNKNOWN && m->rec.optim_bpp < 0) {
        m->rec.optim = OPT_UNKNOWN, m->rec.optim_forwards_only = 1; /* its command line's, said */
        recognize_optim_cmdline(f->argc, f->argv, &m->rec);
    }
    m->shape.iteration0 = f->iterations == 0;
    m->measured = f->at_peak;
    if (f->has_at_tensors && cat_breakdown_total(&f->at_tensors) > 0) {
        /* the step's tensors where they peaked (the process peak can come later, in the
         * optimizer step, with the activations freed and the cache holding their place), with
         * the process peak's context, kernel code and external bytes and, as the cache, what
         * makes up the rest of the process peak */
        cat_breakdown b = f->at_tensors;
        static const category fixed[] = {CAT_CONTEXT, CAT_KERNEL_CODE, CAT_EXTERNAL};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            b.bytes[fixed[i]] = f->at_peak.bytes[fixed[i]];
        b.bytes[CAT_CACHE] = 0;
        uint64_t rest = cat_breakdown_total(&b);
        b.bytes[CAT_CACHE] = f->peak_process > rest ? f->peak_process - rest : 0;
        m->measured = b;
        m->measured_at_tensors = 1;
    }
    model_measured_at_oom(m, f);
    m->ema_measured = m->measured_at_tensors ? f->ema_at_tensors : f->ema_at_peak;
    if (m->ema_measured)
        snprintf(m->ema_said, sizeof m->ema_said, "an EMA copy of them (%.1f MiB, %.60s)",
                 (double)m->ema_measured / 1048576.0,
                 f->ema_words && *f->ema_words ? f->ema_words : "an EMA of the weights");
    if (m->shape.no_training) {
        m->shape.A = 1; /* no optimizer step: nothing to accumulate */
    } else if (!config_known(&m->cfg, CFG_gradient_accumulation_steps)) {
        /* not known: what-ifs change it by a factor (accum_unknown), and predictions keep a
         * step's gradients alive through the next forward, as any accumulation does (said) */
        m->shape.A = 2;
        m->accum_assumed = 1;
        int in_bwd = f->oom_phase && !strcmp(f->oom_phase, "backward"),
            in_fwd = f->oom_phase && !strcmp(f->oom_phase, "forward");
        int done = f->cache_passes ? 0 : f->backward_passes - in_bwd; /* completed micro-steps */
        if (f->has_oom && f->iterations == 0 && done >= 1 && (in_fwd || in_bwd) &&
            f->at_oom.bytes[CAT_GRADIENTS] > 0 && !optim_steps_unseen(&m->rec)) {
            /* a backward's gradients alive in the next micro-step, no optimizer step between
             * (not where a step may have run unseen, the gradients kept: plain SGD's) */
            char msg[240];
            snprintf(msg, sizeof msg,
                     " is at least %d: the gradients of %d completed backward pass%s were alive in "
                     "the %s that ran out of memory, no optimizer step between",
                     done + 1, done, done == 1 ? "" : "es", f->oom_phase);
            config_note_key(&m->cfg, CFG_gradient_accumulation_steps, msg);
        }
    }
    if (cat_breakdown_total(&m->measured) == 0 && f->peak_reserved > 0) {
        /* no breakdown: the peaks alone, as unclassified tensor bytes (a global calibration) */
        uint64_t alloc = f->peak_allocated && f->peak_allocated <= f->peak_reserved
                             ? f->peak_allocated
                             : f->peak_reserved;
        m->measured.bytes[CAT_UNKNOWN] = alloc;
        m->measured.bytes[CAT_CACHE] = f->peak_reserved - alloc;
        if (f->peak_process > f->peak_reserved)
            m->measured.bytes[CAT_CONTEXT] = f->peak_process - f->peak_reserved;
    }
    if (formula_attention_unfused(&m->shape, m->measured.bytes[CAT_ATTENTION]))
        m->shape.unfused_attention = 1;
    /* a trace that ends before the run's first optimizer step, with no OOM (its process killed,
     * or still running): what it measured is a step cut short, as an OOM's cut is, the formula
     * never scaled below it (a GPT-2 at B=16 killed in its first forward had been told it
     * "fits" in the 11.22 GiB measured so far; the whole run ran out of 12 GiB at 20.11) */
    m->cut_unstepped = f->truncated && !f->has_oom && f->iterations == 0;
    m->stopped = f->stopped;
    m->partial = f->has_oom || m->cut_unstepped;
    m->cut = model_oom_cut(f) || m->cut_unstepped; /* (by the OOM: model_oom.h) */
    m->forward_cut = m->cut && f->oom_phase && !strcmp(f->oom_phase, "forward") && !f->oom_passes;
    formula_documents(&m->shape, &m->docf);
    formula_documents_breakdown(&m->shape, &m->doc);
    model_frozen_beside(m, f);
    formula_refined(&m->shape, &m->refined);
    m->refined.bytes[CAT_PARAMETERS] += m->frozen_params * (uint64_t)formula_param_bytes(&m->shape);
    if (m->shape.iteration0 && m->measured.bytes[CAT_GRADIENTS] == 0)
        m->refined.bytes[CAT_GRADIENTS] = 0; /* before the first backward there is no .grad */
    if (!f->has_oom && f->peak_iter == 0 && m->measured.bytes[CAT_OPTIMIZER] == 0)
        m->refined.bytes[CAT_OPTIMIZER] = 0; /* the peak explained came before the first
                                              * optimizer step made any state */
    m->refined.bytes[CAT_CONTEXT] = FORMULA_CONTEXT_BYTES;
    double denom = (double)m->docf.act_elements * 2.0;
    if (denom > 0) {
        m->mult_act = (double)m->measured.bytes[CAT_ACTIVATIONS] / denom;
        m->mult_all = (double)(m->measured.bytes[CAT_ACTIVATIONS] + m->measured.bytes[CAT_LOGITS] +
                               m->measured.bytes[CAT_ATTENTION]) /
                      denom;
    }
    if (m->empty) {
        /* no allocation at all (a trace cut before the first one): nothing to explain or
         * advise, and said; never what-ifs of an empty run */
        m->formula_ok = 0;
        m->shape.generic = 1;
        snprintf(m->formula_why, sizeof m->formula_why,
                 "the trace holds no allocation (cut before the first one, or a run that used no "
                 "GPU memory): nothing to compare or advise");
        snprintf(m->advice_none, sizeof m->advice_none, "%s", m->formula_why);
        return 0;
    }
    if (model_peak_in_eval(m, f)) { /* (the explanations read it, the calibration keeps it) */
        m->eval_batch = model_eval_batch_flag(f, m->eval_flag, sizeof m->eval_flag);
        if (!m->eval_batch && f->peak_step_pass && f->step_pass_batch) /* (a rollout's own) */
            m->eval_batch = f->step_pass_batch,
            snprintf(m->eval_flag, sizeof m->eval_flag, "%s", f->step_pass_flag);
    }
    cat_breakdown meas = m->measured; /* the optimizer's state where another row counted it */
    model_trace_state_moved(m, f, &meas);
    model_explain(m, f);
    if (model_no_forward(m, f) || model_data_oom(m, f)) /* no advice (model_trace.h, model_oom.h) */
        return 0;
    if (o && o->target_card_bytes) {
        m->capacity = o->target_card_bytes;
        snprintf(m->capacity_name, sizeof m->capacity_name, "%s",
                 o->target_card_name ? o->target_card_name : "--card");
    } else if (f->card_bytes && !f->oom_device_decided) { /* (else: the device's, below) */
        m->capacity = f->card_bytes;
        snprintf(m->capacity_name, sizeof m->capacity_name, "%s (emulated)",
                 f->card_name && *f->card_name ? f->card_name : "card");
    } else if (f->device_total) {
        m->capacity = f->device_total;
        snprintf(m->capacity_name, sizeof m->capacity_name, "the traced device");
    }
    m->expandable_set =
        f->alloc_conf && strcasestr(f->alloc_conf, "expandable_segments:true") != NULL;
    if (cat_breakdown_total(&m->measured) > 0)
        advice_calibrate(&m->calib, &m->shape, &meas, m->partial, m->cut);
    else
        advice_calib_default(&m->calib, &m->shape);
    m->calib.expandable = m->expandable_set;
    m->calib.unstepped = m->cut_unstepped;
    model_cut_unstepped(m, f); /* (lower bounds where no formula tells the rest of the step) */
    model_caught(m, f);        /* (lower bounds: its peak's pass cut short by a caught OOM) */
    model_beside_unused(m, f); /* (lower bounds: a second model mostly not cast yet) */
    m->calib.weights_exact = f->tensor_mode; /* segments mix weights with other tensors */
    m->calib.grads_kept = !strcmp(m->rec.loop, "lightning"); /* (zero_grad after the forward) */
    if (f->has_at_step && m->calib.calibrated && !m->calib.global)
        m->calib.step = f->at_step; /* what-ifs need at least the step moved to their shape */
    m->calib.state_not_kept = model_state_not_kept(m, f);
    m->calib.state_ctor = m->rec.optim_ctor, m->calib.bwd_weight = f->bwd_weight;
    /* one step, its state made after the forward measured: a second step reserves what its step
     * taken again does (replay_again.c), where the simulation had the run's (model_second_step) */
    m->second_step = f->again_reserved && f->again_first == f->peak_reserved &&
                     m->calib.calibrated && !m->calib.partial &&
                     !m->calib.measured.bytes[CAT_OPTIMIZER] && m->calib.step.bytes[CAT_OPTIMIZER];
    m->calib.ema = m->ema_measured > f->ema_at_oom ? m->ema_measured : f->ema_at_oom;
    m->calib.packed = f->inferred ? f->inferred->packed_bytes : 0; /* (2 elements a byte) */
    m->calib.qstate = f->inferred ? f->inferred->qstate_bytes : 0; /* (their absmax: none) */
    model_eval_calib(m, f); /* (its evaluation's own batch) */
    advice_eval_train_ratios(&m->calib, f->cat_peak);
    model_kept_whole(m, f); /* (a frozen model beside, a checkpoint's copies) */
    model_kv_calib(m, f);   /* (the KV cache in the measured breakdown, less what stays) */
    m->calib.went_on = f->oom_went_on;
    model_went_on(m, f); /* (the micro-batch it went on with, measured: an anchor) */
    if (f->has_oom && cat_breakdown_total(&f->at_oom) > 0)
        model_oom_calibrate(m, f);
    else if (!f->has_oom && model_peak_after_forward(f) && strcmp(f->peak_phase, "eval"))
        if (advice_calib_after_forward(&m->calib, f->cat_peak) && f->iterations >= 2)
            advice_calib_state_unkept(&m->calib); /* (a forward after a step: the 2nd's) */
    gpt_shape steady = m->shape;
    steady.iteration0 = 0;
    steady.accum_unknown = !m->shape.no_training && advice_accum_unknown(&m->cfg);
    if (m->second_step) /* (the cache share a later step holds: at this shape, that step) */
        model_second_step(m, &steady, f->again_reserved);
    advice_predict(&m->calib, &steady, &m->current);
    if (f->has_oom) {
        uint64_t cap = f->oom_capacity ? f->oom_capacity : m->capacity;
        /* the cache then: what PyTorch released to retry (segment mode sees only that), or, with
         * the allocator's tensors, every reserved byte no tensor held at the failure */
        uint64_t cache = f->oom_cache;
        if (f->tensor_mode && f->at_oom.bytes[CAT_CACHE] > cache)
            cache = f->at_oom.bytes[CAT_CACHE];
        /* the steps before the failing one (one that failed in its optimizer step is counted) */
        int done = f->iterations -
                   (f->iterations > 0 && f->oom_phase && !strcmp(f->oom_phase, "optimizer"));
        m->cause = advice_oom_cause(&f->at_oom, f->oom_requested, cap, cache, f->oom_outside,
                                    f->oom_step_pass ? "step_pass" : f->oom_phase, done, m->why,
                                    sizeof m->why,
                                    m->shape.generic && !config_known(&m->cfg, CFG_batch_size) ? 3
                                    : m->shape.generic                                         ? 0
                                    : m->shape.patch_tokens                                    ? 2
                                                                                               : 1);
        /* what the step needs is at least what was live plus what it asked for */
        uint64_t need = cat_breakdown_total(&f->at_oom) + f->oom_requested;
        if (m->current.peak_bytes < need)
            m->current.peak_bytes = need;
        model_cause_cache(m, f, cap, cache); /* (fragmentation, or not: said) */
        /* weights, gradients, whole state over the card: no micro-batch fits (model_oom.h) */
        if (model_oom_state_cause(m, f, cap))
            m->cause = OOM_STATE;
        else if (m->cause == OOM_ACTIVATIONS &&
                 advice_copies_cause(&f->at_oom, f->copies_at_oom, f->oom_requested, cap, m->why,
                                     sizeof m->why))
            m->cause = OOM_COPIES;
        model_grads_cause(m, f, cap); /* (the weights and their gradients, no micro-batch's) */
        model_weights_lever(m, f);    /* (then what sizes the weights: the flags of their line) */
        /* a later step's forward failed with the state the first step made (5 % of the card or
         * more): that step's forward fit because it ran before the state existed */
        size_t w = strlen(m->why);
        if (m->cause == OOM_ACTIVATIONS && f->iterations > 0 && f->oom_phase &&
            !strcmp(f->oom_phase, "forward") && cap &&
            (double)f->at_oom.bytes[CAT_OPTIMIZER] >= 0.05 * (double)cap && w < sizeof m->why)
            snprintf(m->why + w, sizeof m->why - w,
                     "; the optimizer's state (%.2f GiB), made at the first step, was live too%s",
                     (double)f->at_oom.bytes[CAT_OPTIMIZER] / 1073741824.0,
                     m->cfg.t_first ? "" : ": that step's forward ran before it existed");
        w = strlen(m->why); /* (a warm-up of T: the failing step's T is not the first's) */
        if (m->cause == OOM_ACTIVATIONS && w < sizeof m->why)
            model_oom_act_why(m, f, w); /* (after passes of one forward; a warm-up's T) */
    }
    /* a run that ran out of memory does not fit its card; a larger one (report --card) is told
     * what its prediction says, as predict --from says it (it had been told to shrink, on an
     * 80 GiB card, a configuration predicted to need 20 GiB) */
    uint64_t oom_card = f->oom_capacity ? f->oom_capacity : m->capacity;
    int cur_fits = !f->has_oom ? advice_fits(m->current.peak_bytes, m->capacity, ADVICE_HEADROOM)
                   : m->capacity <= oom_card
                       ? 0
                       : advice_fits(m->current.required_bytes, m->capacity, ADVICE_HEADROOM);
    /* a run that completed its steps on this card is never told first to shrink (it fits); not
     * one whose peak came in a pass an error it caught cut short (its steps ran another way) */
    if (cur_fits == 0 && !f->has_oom && !f->caught_peak && f->iterations > 0 && m->capacity &&
        f->peak_process <= m->capacity) {
        /* ... once a forward ran with the optimizer's state (a second step): one step's forward
         * ran before the state existed, and the next one holds it (Llama 400M at B=4: its one
         * step fit in 10.51 GiB, a second step's forward ran out of 12) */
        if (f->iterations >= 2 || m->current.by_cat.bytes[CAT_OPTIMIZER] == 0) {
            m->tight = 1;
            cur_fits = 2;
        } else {
            m->next_step_grows = 1;
        }
    } else if (!f->has_oom && f->iterations == 1 && m->current.by_cat.bytes[CAT_OPTIMIZER] &&
               m->current.peak_bytes > f->peak_process + f->peak_process / 100) {
        m->next_step_grows = 1; /* (fits either way: why "needs" is > 1 % above its own peak) */
    }
    /* a peak late in a backward or in the optimizer step, the forward's activations freed by
     * then but a few bytes: the calibration scales those few (a formula's ratio of them ~0; no
     * formula: the batch-sized bytes), so a larger micro-batch would be predicted to cost next
     * to nothing more (a Llama at B=1, T=256: "largest micro-batch 6928"). None at all: the
     * formula's ratio stays 1, its growth the formula's. So too an OOM in its optimizer step
     * (Llama 400M, B=1, 6 GiB: "largest 1048576" on 80 GiB), but where not even 1 fits: that
     * is measured (its step's moment needs what it held at its failure whatever the B). */
    uint64_t act = m->measured.bytes[CAT_ACTIVATIONS], act_run = f->cat_peak[CAT_ACTIVATIONS];
    m->growth_unmeasured = !m->calib.after_forward && (!f->has_oom || m->calib.oom_in_step) &&
                           act_run > 0 && act < act_run / 4 && (act > 0 || m->shape.generic) &&
                           model_peak_after_forward(f);
    if (config_known(&m->cfg, CFG_batch_size)) {
        uint64_t lb = advice_largest_batch(&m->calib, &steady, m->capacity, ADVICE_HEADROOM);
        m->largest_unpredicted = advice_largest_unpredicted(m->growth_unmeasured, f->has_oom, lb);
        m->largest_batch = m->largest_unpredicted ? 0 : lb - lb % model_batch_per(&m->cfg);
    }
    model_largest_ran(m, f); /* (none keeps the headroom: the run's own ran) */
    if (m->largest_batch && !m->lower_bounds && (m->largest_batch != steady.B || f->has_oom))
        /* a micro-batch this run did not complete: its cache assumed (model.h) */
        m->largest_cache_most = advice_largest_cache(
            &m->calib, &steady, m->largest_batch, m->capacity, ADVICE_HEADROOM, &m->largest_cache);
    if (m->capacity && !m->lower_bounds) /* the next one (1 after 0): the cache may decide */
        m->next_cache_most = advice_next_cache(&m->calib, &steady, m->largest_batch, m->capacity,
                                               ADVICE_HEADROOM, &m->next_cache);
    /* after its allocator hit the card and went on (a run that ended out of memory did not run to
     * the end: on a larger card it is its prediction's, as predict --from says; a simulated BERT
     * at B=32 whose retry had once succeeded was told on an 80 GB card "it ran to the end on this
     * card" and a smaller micro-batch recommended, where its prediction fits with 81 % free) */
    if ((cur_fits == 1 || cur_fits == 2) && f->oom_recovered && !f->has_oom)
        cur_fits += 2;
    m->nitems = advice_candidates(&m->calib, &steady, m->capacity,
                                  f->has_oom && m->cause == OOM_FRAGMENTATION, m->expandable_set,
                                  cur_fits, m->items, ADVICE_MAX);
    model_carried(m, f); /* (a state carried across batches: the accumulation's words) */
    advice_speak(m->items, m->nitems, &m->cfg, &steady, &m->rec);
    model_advice_notes(m, f);
    model_unreached(m, f); /* (an evaluation pass the trace never reached: said) */
    return 0;
}
