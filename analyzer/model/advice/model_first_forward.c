/* model_first_forward.c — what a run's first forward says when it is all the trace has of the
 * training (model_first_forward.h), for model_build: a forward that trained few weights or ran
 * under no_grad (the formula not applied), and one that ran out of memory: how far it had got,
 * and what the what-ifs make of it. */
#include "model_first_forward.h"

#include <stdio.h>
#include <string.h>

#include "formula.h"
#include "freezesrc.h"

/* known_size: configuration key k's value when known, else 0 */
static uint64_t known_size(const model_result *m, config_key k)
{
    return config_known(&m->cfg, k) ? (uint64_t)m->cfg.v[k].i : 0;
}

/* logits_length: the T of the logits at the end of a forward cut short (B the run's micro-batch):
 * an encoder-decoder's are over its decoder's positions, the second token batch the trace read
 * (infer.h second_tokens: B·T' looked up after the encoder's batch), said in why ("(T = 128, ...)
 * "); else the configuration's T (the first batch's, an encoder's), why left empty */
static uint64_t logits_length(const model_result *m, const run_facts *f, uint64_t B, char *why,
                              size_t n)
{
    const infer_value *s = f->inferred ? &f->inferred->second_tokens : NULL;
    uint64_t T = known_size(m, CFG_block_size);
    if (m->rec.family != FAM_ENCODER_DECODER || !s || !s->known || !B || s->value <= 0 ||
        (uint64_t)s->value % B || (uint64_t)s->value / B == T)
        return T;
    snprintf(why, n,
             "(T = %llu, the decoder's length, not the encoder's %llu: the second token batch "
             "looked up in the first forward, %lld tokens over B = %llu) ",
             (unsigned long long)((uint64_t)s->value / B), (unsigned long long)T,
             (long long)s->value, (unsigned long long)B);
    return (uint64_t)s->value / B;
}

/* first_forward_frozen: the run died in its first forward, whose weights' 16-bit copies were
 * freed after each use (autocast caches a copy, for the region, only of a weight that needs a
 * gradient; autograd keeps one only where a gradient flows through): replay.h's
 * oom_frozen_forward. Not LoRA: its frozen weights' copies are kept when a gradient flows through
 * to adapters below, and freed where none does yet. */
static int first_forward_frozen(const model_result *m, const run_facts *f)
{
    return f->has_oom && f->oom_frozen_forward && m->rec.feat[FEATURE_LORA].state != FEAT_ON;
}

int model_frozen_forward(const model_result *m, const run_facts *f, const char *family, char *why,
                         size_t n)
{
    const infer_value *fz = f->inferred ? &f->inferred->v[INFER_frozen_blocks] : NULL;
    uint64_t tr = m->rec.trainable, P = m->params_trace;
    if (first_forward_frozen(m, f)) {
        snprintf(why, n,
                 "%s: the run died in its first forward, which freed each weight's 16-bit copy "
                 "after use (autocast keeps a copy for the backward only of a weight that needs "
                 "a gradient): its weights were frozen, or no gradient was recorded, so it kept "
                 "no activations for a backward through them, as the transformer formula does "
                 "in every block",
                 family);
        return 1;
    }
    if (!tr || !P || tr * 10 >= P || m->rec.feat[FEATURE_LORA].state == FEAT_ON ||
        (fz && fz->known))
        return 0;
    snprintf(why, n,
             "%s: only %.2f M of its %.2f M weights train (%.1f %%, no adapters recognised as "
             "peft's; the rest frozen weights or buffers): the transformer formula, which trains "
             "them all "
             "and keeps what their gradients need, does not describe this run; the measured "
             "breakdown explains the peak",
             family, (double)tr / 1e6, (double)P / 1e6, 100.0 * (double)tr / (double)P);
    return 1;
}

void model_kept_not_told(model_result *m)
{
    char fz[100];
    recog_feature *ema = &m->rec.feat[FEATURE_EMA];
    if (!m->rec.trainable_by_kept || !freeze_src(m->cfg.files, fz, sizeof fz))
        return;
    m->rec.trainable = 0, m->rec.trainable_by_kept = 0, m->rec.trainable_where[0] = '\0';
    if (ema->state == FEAT_UNKNOWN && !strstr(ema->where, " repeat ")) /* (not a copy found) */
        snprintf(ema->where, sizeof ema->where, "%s",
                 "no code of an EMA of the weights ran (diffusers' EMAModel, timm's ModelEma, "
                 "AveragedModel, torch_ema)"),
            ema->state = FEAT_OFF;
}

/* trained_used: beside a frozen model (recognize's trainable_lower: its weights' copies freed
 * after each use, the trained ones' kept), the share of the trained model's weights whose copies
 * were kept at the failure: over its weights, less its token embedding (looked up, never cast;
 * counted among them where an untied head of its size was cast), not over the frozen model's
 * too (a student distilled from a 953 M teacher, out of memory in its loss after both forwards,
 * had been said to have died "after about 11 % of its blocks' weights had been used"); -1 where
 * no such model is known. */
static double trained_used(const model_result *m, const run_facts *f)
{
    uint64_t copies = f->at_oom.bytes[CAT_AUTOCAST], tr = m->rec.trainable, tab, gap;
    if (!m->rec.trainable_lower || first_forward_frozen(m, f) || !tr || tr > UINT64_MAX / 4)
        return -1;
    tr *= 4; /* (kept copies are of fp32 weights: trainable.c) */
    uint64_t V = known_size(m, CFG_vocab_size), d = known_size(m, CFG_n_embd);
    const infer_value *u = f->inferred ? &f->inferred->v[INFER_untied_head] : NULL;
    gap = tr > 2 * copies ? tr - 2 * copies : 0;
    if (u && u->known && u->value && V && d && !__builtin_mul_overflow(4 * V, d, &tab) &&
        tab < tr && gap + tab / 50 >= tab && gap <= tab + tab / 50)
        tr -= tab; /* the forward reached the head: the embedding alone uncast */
    return 2.0 * (double)copies / (double)tr;
}

int model_trained_all_used(const model_result *m, const run_facts *f)
{
    return f->has_oom && f->backward_passes == 0 && trained_used(m, f) >= 0.99;
}

const char *model_forward_cut_words(const model_result *m, const run_facts *f)
{
    return model_trained_all_used(m, f)
               ? "when the out-of-memory error came, after every layer of the model trained had "
                 "run: what they saved for the backward"
               : "when the out-of-memory error cut the forward short: the whole forward saves "
                 "more for the backward";
}

/* blocks_used: the share of the blocks' weights a first forward had used when it ran out of
 * memory (autocast casts each to 16 bits at its first use; the token embedding is looked up,
 * never cast, and the head that shares it, or its own V x d, is cast at the forward's end:
 * neither is a block's weight; nor is an EMA's copy of the weights, which the forward never
 * uses); 0 when the run shows no autocast copy. */
static double blocks_used(const model_result *m, const run_facts *f)
{
    if (m->rec.beside_unused) /* (the kept copies may be a share of the trained model's weights,
                               * the unused model's are among the rest: no share is told) */
        return 0;
    double own = trained_used(m, f);
    if (own >= 0)
        return own;
    /* the copies alive at the failure; a frozen forward's: all it made (each freed) */
    uint64_t copies =
                 first_forward_frozen(m, f) ? f->fwd0_copies_made : f->at_oom.bytes[CAT_AUTOCAST],
             params = f->at_oom.bytes[CAT_PARAMETERS];
    params = params > f->ema_at_oom ? params - f->ema_at_oom : 0; /* an EMA's copy: never cast */
    uint64_t fz = m->frozen_params * (uint64_t)formula_param_bytes(&m->shape); /* a teacher's */
    params = params > fz ? params - fz : 0;
    uint64_t V = known_size(m, CFG_vocab_size), d = known_size(m, CFG_n_embd), emb;
    const infer_value *u = f->inferred ? &f->inferred->v[INFER_untied_head] : NULL;
    uint64_t ntab = u && u->known && u->value ? 2 : 1; /* an untied head: V x d of its own */
    /* (the table may be most of the weights: XLM-R's 250002×768 is 192 M of its 278 M; taken
     * for half of them at most, its blocks' 85 M had passed for 26 % used where 85 % were) */
    if (V && d && !__builtin_mul_overflow(4 * ntab * V, d, &emb) && emb < params)
        params -= emb;
    return params ? 2.0 * (double)copies / (double)params : 0;
}

int model_nograd_forward(const model_result *m, const run_facts *f, const char *family, char *why,
                         size_t n)
{
    /* every block ran: each weight's copy made (autocast), or its logits made (fp32 too) */
    int ran = blocks_used(m, f) >= 0.99 || f->at_oom.bytes[CAT_LOGITS] > 0;
    /* (tensors exact: segments alone file a forward's tensors by the segment they forced) */
    if (!f->has_oom || !f->tensor_mode || f->backward_passes > 0 || !f->oom_phase ||
        strcmp(f->oom_phase, "forward") || f->oom_frozen_forward ||
        m->rec.feat[FEATURE_LORA].state == FEAT_ON || !ran)
        return 0;
    cat_breakdown ref;
    formula_refined(&m->shape, &ref);
    uint64_t kept = f->at_oom.bytes[CAT_ACTIVATIONS] + f->at_oom.bytes[CAT_ATTENTION],
             want = ref.bytes[CAT_ACTIVATIONS];
    if (!want || (double)kept >= 0.1 * (double)want)
        return 0;
    snprintf(why, n,
             "%s: the run died in its first forward after every block had run (its logits or "
             "its weights' 16-bit copies all made) with %.0f MiB of activations alive, %.2fx "
             "what a forward that keeps its blocks' activations for a backward holds by the "
             "formula: a forward under no_grad or through frozen weights (an evaluation, "
             "inference), to which no training formula applies",
             family, (double)kept / 1048576.0, (double)kept / (double)want);
    return 1;
}

/* lora_below: a first forward cut short after a share of its blocks had run, measured over them
 * at r of the refined formula, r below 1, is taken as it is where LoRA adapts every block of a
 * frozen base (peft's code ran): the formula's blocks train every weight and keep each one's input
 * for its gradient, a frozen weight keeps none, and every block keeps alike. The copies alive
 * that tell the share are at most the weights used (a frozen weight's before the first adapter
 * are freed), so r errs high, but for the block it was in. (Llama 400M with LoRA on q, k, v, o at
 * B=8, cut at 41 %: 0.90x over those blocks, the ratio held at 1 had B=4, A=2 predicted 9.52 GB of
 * tensors, +10.6 % over its run's max_memory_allocated, 8.61 GB.) Not a model frozen in part
 * (its first blocks frozen, the later trained ones keep the formula's). */
static int lora_below(const model_result *m, double r)
{
    return r < 1.0 && m->rec.feat[FEATURE_LORA].state == FEAT_ON;
}

/* forward_blocks_done: a transformer's first forward that ran out of memory after every block
 * had run (all their weights cast: at the head or the loss) kept its blocks' whole activations:
 * their ratio to the refined formula is a measurement, below 1 too (a LoRA run saves no input
 * of a frozen weight: Llama 400M with LoRA 0.87 of the formula at B=8, its B=4 run 0.87 with
 * its KV cache), not the lower bound of a forward cut short. One cut short after a share of
 * its blocks had run (0.2 to 0.99 of their weights used) kept the activations of those blocks
 * alone: measured over them, per block, they are the measurement (GPT-2 with HF's GELU at B=24, cut
 * at 56 %: 1.36x the whole forward's formula read as the ratio, B=6 predicted 2.61 GiB of
 * activations, its run measured 4.67; over the blocks that ran, 2.43x: 4.67). */
/* head_copy: a first forward that ran every block and died before its head's 16-bit copy was
 * made or measured (its logits not reached) makes it still: the head's V x d, where the formula's
 * copies hold one more (a simulated GPT-2 at B=4 out of memory casting its tied head: 162.0 MiB
 * of copies alive, B=4's and B=2's runs made 235.7; HF GPT-2 on the H100 out of memory at B=12 at
 * its logits, the copies it calibrates on without its head's: 162.2, B=6's and B=8's runs 235.6) */
/* head16: the head's V x d at 2 B (its 16-bit copy), 0 where V or d is not known */
static uint64_t head16(const model_result *m)
{
    uint64_t V = known_size(m, CFG_vocab_size), d = known_size(m, CFG_n_embd), head = 0;
    return V && d && !__builtin_mul_overflow(2 * V, d, &head) ? head : 0;
}

static void head_copy(model_result *m, uint64_t *cast)
{
    uint64_t head = head16(m);
    uint64_t gap = m->calib.refined.bytes[CAT_AUTOCAST] > *cast
                       ? m->calib.refined.bytes[CAT_AUTOCAST] - *cast
                       : 0;
    /* (a gap of less than 90 % of it is no head's: Llama 400M with LoRA, its copies 3 MiB under
     * the formula's where its B=4 run made what it had) */
    if (head && gap >= head / 10 * 9)
        *cast += head < gap ? head : gap;
}

static void forward_blocks_done(model_result *m, const run_facts *f)
{
    uint64_t meas = m->calib.measured.bytes[CAT_ACTIVATIONS],
             ref = m->calib.refined.bytes[CAT_ACTIVATIONS];
    double q = ref ? (double)meas / (double)ref : 1.0, frac = blocks_used(m, f);
    if (!meas || !m->calib.calibrated || m->calib.global)
        return;
    /* autocast's copies of the weights were made as far as the forward came: the whole forward
     * makes the formula's (GPT-2 medium cut at 32 %: 184.1 MiB, where its B=1 run kept 674.2) */
    uint64_t *cast = &m->calib.measured.bytes[CAT_AUTOCAST];
    if (frac < 0.99 && *cast && m->calib.refined.bytes[CAT_AUTOCAST] > *cast)
        *cast = m->calib.refined.bytes[CAT_AUTOCAST];
    else if (frac >= 0.99 && *cast && !f->at_oom.bytes[CAT_LOGITS])
        head_copy(m, cast);
    uint64_t unseen = f->inferred ? f->inferred->pos_rows_unseen : 0;
    if (frac >= 0.99 && q < 1.0)
        m->calib.ratio[CAT_ACTIVATIONS] = q; /* (advice_calibrate kept 1: a partial run's) */
    else if (unseen && frac < 0.99) {
        /* blocks over fewer tokens than the position embedding's rows: a stack the formula has
         * not may run over them all, holding more activations per weight than the blocks (an
         * MAE cut in its decoder's first blocks, after 95 % of the weights, had made 81 % of its
         * activations: half the batch predicted 2.81 GiB, run at 3.61): what was alive, scaled,
         * is a lower bound */
        m->calib.ratio[CAT_ACTIVATIONS] = q;
        m->calib.lower = m->lower_bounds = 1;
        snprintf(m->oom_forward, sizeof m->oom_forward,
                 "the run died in its first forward, after about %.0f %% of its blocks' weights "
                 "had been used (cast to 16 bits by autocast); its %llu-wide blocks saw %lld "
                 "tokens, fewer than its position embedding's %llu rows, so another stack (a "
                 "decoder over every position) may hold more activations per weight than they "
                 "do, and how much of its forward's activations had been made is not known: "
                 "what-ifs scale what was alive then; they are lower bounds, and none is "
                 "recommended (vramtrace fit measures)",
                 100.0 * frac, (unsigned long long)known_size(m, CFG_n_embd),
                 (long long)known_size(m, CFG_block_size), (unsigned long long)unseen);
    } else if (frac >= 0.2 && frac < 0.99 &&
               (q / frac > m->calib.ratio[CAT_ACTIVATIONS] || lora_below(m, q / frac))) {
        m->calib.ratio[CAT_ACTIVATIONS] = q / frac;
        snprintf(
            m->oom_forward, sizeof m->oom_forward,
            "the run died in its first forward, after about %.0f %% of its blocks' weights "
            "had been used (cast to 16 bits by autocast): its activations are measured over "
            "those blocks, %.2fx the refined formula's for them (%.2fx its whole forward's)%s; "
            "its autocast copies are the formula's for the whole forward",
            100.0 * frac, q / frac, q,
            lora_below(m, q / frac)
                ? ", below it: LoRA's frozen weights keep no input for a gradient "
                  "of their own, where the formula's blocks train every weight"
                : "");
    }
    size_t k = strlen(m->oom_forward);
    if (m->head_unknown) { /* no class: none counted, lower bounds (model_head.c) */
        /* no gradient yet tells which weights train, and the program freezes some: the lower
         * bounds count no gradient and no optimizer state (an encoder classifier with its
         * 250002×768 embeddings frozen, at 128, had B=64 told "at least 10.75 GiB", where its
         * run at 64 peaked at 8.64) */
        char fz[100] = "", none[300] = "";
        if (!m->rec.trainable && !m->rec.trainable_lower &&
            m->rec.feat[FEATURE_LORA].state != FEAT_ON && freeze_src(m->cfg.files, fz, sizeof fz)) {
            m->shape.none_seen_trained = fz[0] != '\0';
            m->opt_assumed = m->opt_bound = m->opt_choice = 0;
            snprintf(none, sizeof none,
                     ", with no gradient and no optimizer state (the program freezes weights, "
                     "%s, and no backward ran to tell which train: those that do add theirs)",
                     fz);
        }
        snprintf(m->oom_forward + k, sizeof m->oom_forward - k,
                 "%sno logits are counted at its end, not reached: whether it ends in an output "
                 "layer over its vocabulary (B·T×V logits, a language model's) is not known: "
                 "what-ifs count what it needs without one%s, and they are lower bounds, none "
                 "recommended (vramtrace fit measures)",
                 k ? "; " : "the run died in its first forward: ", none);
        m->lower_bounds = m->calib.lower = m->head_unknown;
    } else if (!m->shape.no_head && m->rec.lm_head == 0 && m->rec.family_by_sizes)
        snprintf(m->oom_forward + k, sizeof m->oom_forward - k,
                 "%sthe formula's logits at its end, not reached, are assumed (a language "
                 "model's): whether it ends in an output layer over its vocabulary is not known: "
                 "one without, an encoder or a classifier, needs less",
                 k ? "; " : "the run died in its first forward: ");
}

/* other_stack: the weights a first forward cut short had not reached hold, after the blocks
 * repeating the one it was in, at least a block's count of tensors that do not repeat it: another
 * stack of other blocks (an encoder-decoder cut in its encoder: its decoder's blocks hold
 * cross-attention and run over the decoder's own length, so they keep neither what the encoder's
 * did nor per weight as much: a T5 cut in its encoder's 11th block at B=16, every weight ahead
 * taken to keep what one of its casts kept, x2.99, had B=8 predicted 16.21 GiB, "does not fit"
 * on 8 GiB, where its run at B=8 held 7.29). The tail of a single stack (a final norm, a head:
 * fewer tensors than a block) is not one. Not a CNN's next stages (other sizes: they keep less,
 * at a lower resolution, and the count over them is too much, not too little). */
static int other_stack(const model_result *m, const fwd_ahead *a)
{
    return a->wperiod && a->other >= a->wperiod && m->rec.family != FAM_CONVNET;
}

/* layers_ahead: a first forward cut short whose weights' copies repeat in blocks (ahead.h): the
 * weights it had still to use, as many casts as the share of the weights made before the forward
 * it had not reached says, each keeping what a cast of its last complete block kept; a network
 * whose later layers keep less (a ResNet's) is over-counted, not under (ResNet-50 at B=320, cut
 * at 20 % of its blocks' weights: x1.22, B=128 predicted 5.82 GiB of tensors, measured 5.57;
 * T5-small at B=32, cut at 73 %: x1.31, its B=8 run x1.25). 1 when it applies: act_whole set;
 * 2 when another stack comes after the blocks (other_stack): act_whole covers its own stack's
 * blocks alone, and what follows is not known. */
static int layers_ahead(model_result *m, const run_facts *f, char *said, size_t n)
{
    const fwd_ahead *a = &f->oom_ahead;
    uint64_t A = f->at_oom.bytes[CAT_ACTIVATIONS];
    if (!f->has_oom_ahead || !A || !a->block_act || m->shape.none_seen_trained)
        return 0;
    if (other_stack(m, a)) {
        double more = (double)a->same / a->wperiod;
        char rest[400];
        m->calib.act_whole = 1.0 + (double)a->block_act * more / (double)A;
        if (a->same)
            snprintf(rest, sizeof rest,
                     "its activations are extrapolated over the rest of the stack of blocks it "
                     "was in (x%.2f: %.1f more blocks of %u weights repeating its last complete "
                     "block, each keeping what it kept, %.1f MiB); after them come %u weights "
                     "(%.1f MiB) that do not repeat its blocks",
                     m->calib.act_whole, more, a->wperiod, (double)a->block_act / 1048576.0,
                     a->other, (double)a->other_bytes / 1048576.0);
        else
            snprintf(rest, sizeof rest,
                     "its activations are not extrapolated: the %u weights (%.1f MiB) it had not "
                     "reached do not repeat its last repeated block of %u weights",
                     a->other, (double)a->other_bytes / 1048576.0, a->wperiod);
        snprintf(said, n,
                 "%s, which the forward never reached (as an encoder-decoder's decoder, with "
                 "cross-attention, over its own sequence length): what they keep, and the "
                 "logits at the end, are not known and not counted",
                 rest);
        return 2;
    }
    double more = (double)a->block_act / a->period * a->ahead;
    m->calib.act_whole = 1.0 + more / (double)A;
    snprintf(said, n,
             "its activations are extrapolated to the whole forward (x%.2f: about %.0f more "
             "weights' casts were to come, as %u made and %u of the %u tensors made before the "
             "forward not reached yet say, the layers not reached assumed to keep each what one "
             "cast of its last repeated block of %u kept, %.1f MiB; where later layers keep "
             "less%s, this counts too much)",
             m->calib.act_whole, a->ahead, a->casts, a->made - a->reached, a->made, a->period,
             (double)a->block_act / a->period / 1048576.0,
             m->rec.family == FAM_CONVNET ? ", as a CNN's at a lower resolution" : "");
    return 1;
}

/* logits_cast: a first forward out of memory casting its 16-bit logits to 32 bits (the loss's),
 * the head's output alive: the logits alive are 2 B and the failed request 4 B per element of the
 * formula's B·T×V (n), within 2 %. Their loss is not reached: the formula's logits are counted
 * whole, the request among them (a simulated T5 at B=8 on 7200 MiB: 62.8 MiB alive and 126 asked
 * for had been predict --from's B=8, where its run kept 376.5) */
static int logits_cast(const model_result *m, const run_facts *f, double n)
{
    double alive = (double)f->at_oom.bytes[CAT_LOGITS], req = (double)m->calib.oom_request;
    return n > 0 && alive >= 0.98 * 2 * n && alive <= 1.02 * 2 * n && req >= 0.98 * 4 * n &&
           req <= 1.02 * 4 * n;
}

/* model_oom_forward_share: the run died in its first forward. A transformer's formula applies:
 * forward_blocks_done. No formula: how far the forward had
 * got is said from autocast's 16-bit weight copies (made as each weight is used: 2 B per 4-B
 * parameter) when there are some. An encoder-decoder's blocks keep alike activations per weight,
 * so its activations are extrapolated to the whole forward by that share of its blocks' weights
 * (the token embedding and the head that shares it are no block's; T5-small at B=32, cut at 73 %:
 * B=8 predicted from what was alive 5.17 GiB, extrapolated by the share of all weights (53 %)
 * 8.05 GiB, by the blocks' 7.16, measured by a run at B=8 6.77); other
 * networks' are not spread like their weights (a ResNet's early, high-resolution layers hold
 * most activations and few weights): what-ifs scale what was alive, lower bounds. */
static void forward_share(model_result *m, const run_facts *f)
{
    /* no gradient yet tells which weights train, and the program freezes some (a frozen network
     * a gradient flows through to a trained part before it: textual inversion's UNet): the
     * lower bounds count no gradient and no optimizer state (AdamW's of every weight had put
     * them above what its smaller batches measured) */
    char fz[100] = "";
    if (!m->shape.none_seen_trained && !m->shape.no_training && !m->rec.trainable &&
        !m->rec.trainable_lower && m->rec.feat[FEATURE_LORA].state != FEAT_ON &&
        freeze_src(m->cfg.files, fz, sizeof fz)) {
        m->shape.none_seen_trained = 1;
        m->opt_assumed = m->opt_bound = m->opt_choice = 0;
    }
    double frac = blocks_used(m, f);
    char used[200] = "";
    if (frac >= 0.01 && frac < 0.99 && fz[0]) /* (frozen weights may be 16-bit: never cast) */
        snprintf(used, sizeof used,
                 ", after autocast had cast about %.0f %% of its blocks' weights to 16 bits (a "
                 "frozen model's weights already in 16 bits are never cast: how far it had got "
                 "is not known)",
                 100.0 * frac);
    else if (frac >= 0.01 && frac < 0.99)
        snprintf(used, sizeof used,
                 ", after about %.0f %% of its blocks' weights had been used (cast to "
                 "16 bits by autocast)",
                 100.0 * frac);
    else if (frac >= 0.99 && m->rec.trainable_lower) /* (its own weights: trained_used) */
        snprintf(used, sizeof used,
                 ", after the model it trains had used every weight it casts (their 16-bit "
                 "copies all kept): past its last layer");
    char act[600] = "";
    int ahead = used[0] ? layers_ahead(m, f, act, sizeof act) : 0;
    if (ahead == 2) { /* another stack not reached: lower bounds, no logits counted */
        snprintf(m->oom_forward, sizeof m->oom_forward,
                 "the run died in its first forward%s: %s: the what-ifs are lower bounds, none "
                 "recommended (vramtrace fit measures)",
                 used, act);
        m->calib.lower = m->lower_bounds = 1;
        return;
    }
    if (used[0] && !ahead && frac >= 0.2 && m->rec.family == FAM_ENCODER_DECODER &&
        !m->shape.none_seen_trained) {
        m->calib.act_whole = 1.0 / frac;
        snprintf(act, sizeof act,
                 "its activations are extrapolated to the whole forward (x%.2f, assuming the "
                 "blocks not reached keep as many per weight as those that ran; a decoder's "
                 "blocks, with cross-attention, may keep more)",
                 1.0 / frac);
    }
    /* a token model's logits at its end, not reached (none live at the failure): a
     * cross-entropy over B*T tokens' logits, 10 B each not shifted (an encoder-decoder's labels
     * aligned to the decoder's positions, as BERT's masked-LM loss; T5-small at B=8 kept 10.0), 12
     * shifted (a decoder's, the refined formula's; the sizes alone do not tell which: 12), 8
     * compiled. A GPT-2 recorded with native frames alone, cut at its 12th block at B=16, had B=8
     * predicted at 11.25 GiB, "fits" on 12 GiB, without them; its run at B=8 took 14.30 */
    char lg[560] = "";
    if (m->shape.no_head && !f->at_oom.bytes[CAT_LOGITS])
        /* the sizes alone, cut before the end: no class says it has a head, none seen */
        snprintf(lg, sizeof lg, "%s",
                 "; no logits are counted at its end, not reached: whether the model ends in an "
                 "output layer over its vocabulary (B·T×V logits, a language model's) is not "
                 "known");
    else if (m->rec.family == FAM_DECODER || m->rec.family == FAM_ENCODER ||
             m->rec.family == FAM_ENCODER_DECODER) {
        uint64_t B = known_size(m, CFG_batch_size), V = known_size(m, CFG_vocab_size);
        char tdec[200] = "";
        uint64_t T = logits_length(m, f, B, tdec, sizeof tdec);
        unsigned per = m->shape.compile ? 8 : m->rec.family == FAM_DECODER ? 12 : 10;
        double logits = (double)B * (double)T * (double)V * per;
        int cast = logits_cast(m, f, logits / per);
        if ((f->at_oom.bytes[CAT_LOGITS] == 0 || cast) && logits > 0 && logits < 1e18)
            m->calib.logits_whole = logits;
        if (cast)
            m->calib.oom_request = 0; /* (the logits' 32-bit copy: the formula counts it) */
        if (m->calib.logits_whole > 0)
            snprintf(lg, sizeof lg,
                     "; the logits at its end, %s, are assumed to take %u*B*T*V bytes "
                     "%s(what a cross-entropy over %s; not measured for this model%s)",
                     cast ? "reached (their 16-bit B·T×V alive, the failed request their "
                            "32-bit copy)"
                          : "not reached",
                     per, tdec,
                     per == 10 ? "logits not shifted keeps: BERT's masked-LM loss measured"
                     : m->rec.family_by_sizes
                         ? "shifted logits keeps, a decoder's: the sizes do not tell it from an "
                           "encoder, whose loss keeps 10"
                         : "shifted logits keeps, a causal language model's",
                     m->rec.lm_head == 0 ? "; whether it ends in an output layer over its "
                                           "vocabulary is not known: one without, an encoder or a "
                                           "classifier, needs less"
                                         : "");
        else if (!f->at_oom.bytes[CAT_LOGITS])
            snprintf(lg, sizeof lg, "%s",
                     "; the logits at its end, not reached, are not counted (V or T unknown)");
    }
    if (act[0]) { /* (logits not counted, none known: lower bounds, model_head.c) */
        snprintf(m->oom_forward, sizeof m->oom_forward,
                 "the run died in its first forward%s: %s%s%s (vramtrace fit measures)", used, act,
                 lg, m->head_unknown ? ": the what-ifs are lower bounds, none recommended" : "");
        if (m->head_unknown)
            m->lower_bounds = 1, m->calib.lower = 1;
        return;
    }
    char none[300] = "";
    if (fz[0])
        snprintf(none, sizeof none,
                 ", with no gradient and no optimizer state (the program freezes weights, %s, "
                 "and no backward ran to tell which train: those that do add theirs)",
                 fz);
    else if (m->shape.none_seen_trained)
        snprintf(none, sizeof none, "%s",
                 ", with no gradient and no optimizer state (every weight it had used was "
                 "frozen, its 16-bit copy freed after use; those it did not reach may train, "
                 "and add theirs)");
    snprintf(m->oom_forward, sizeof m->oom_forward,
             "the run died in its first forward%s: what-ifs scale what was alive then%s%s; the "
             "rest of its forward was not measured, so they are lower bounds%s (vramtrace fit "
             "measures)",
             used, none, lg,
             m->shape.no_training ? ""
                                  : ", and none is recommended: what the rest of the forward "
                                    "and the backward add is not known");
    m->lower_bounds = m->calib.lower = 1;
}

/* copies_ahead: autocast's 16-bit copies of the weights a first forward cut short had not
 * reached (ahead.h: half the size of each of a size it had cast; where the what-ifs are estimates,
 * those after the stack it was in and those of sizes it had not reached at all too: lower bounds
 * count the rest of its stack alone, the weights after it may not all run), and of its head's
 * V x d at its end where logits are counted there, not reached (the embedding it shares, looked
 * up and never cast before, or its own weight of that size, which ahead.h counts not), added to
 * the copies alive at the failure as the whole forward's (calib.fwd_whole): one copy per weight.
 * (A forward that freed each copy after use, through frozen weights, keeps no repeated block of
 * them alive: ahead.h measures none, and nothing is added.)
 * (A T5 with its head tied, cut in its decoder's fifth block at B=12: 241.9 MiB alive had been
 * B=8's, whose run made 425.1; T5-small cut at 73 % at B=32: 61.5 MiB, its B=8 run 115.4.) */
static void copies_ahead(model_result *m, const run_facts *f)
{
    const fwd_ahead *a = &f->oom_ahead;
    uint64_t live = f->at_oom.bytes[CAT_AUTOCAST], head = head16(m);
    if (!f->has_oom_ahead || !live)
        return;
    int est = !m->calib.lower;
    uint64_t more = a->cast_same + (est ? a->cast_other + a->cast_new : 0);
    /* (not where the copies alive hold one of the embedding again: the head cast already, out of
     * memory at its logits, whose size is not reached yet) */
    if (m->calib.logits_whole > 0 && head && a->cast_again < head / 10 * 9)
        more += head;
    else
        head = 0;
    uint64_t whole = live + more;
    /* (under 1 % of those alive: a final norm's weight of a bias's size, not a layer's) */
    if (more * 100 < live || whole <= m->calib.fwd_whole.bytes[CAT_AUTOCAST])
        return;
    m->calib.fwd_whole.bytes[CAT_AUTOCAST] = whole;
    size_t k = strlen(m->oom_forward);
    snprintf(m->oom_forward + k, sizeof m->oom_forward - k,
             "%sits autocast copies are taken whole: %.1f MiB alive, %.1f MiB with the weights "
             "not reached%s",
             k ? "; " : "the run died in its first forward: ", (double)live / 1048576.0,
             (double)whole / 1048576.0, head ? " and its head's V x d at its end" : "");
}

/* backward_workspaces: a first forward cut short ran no backward (nor had a first backward cut
 * before its first matrix product there, run_facts.oom_bwd_no_ws), which PyTorch runs on
 * autograd's device thread: its first matrix products get a cuBLAS handle's (and cuBLASLt's)
 * workspaces of their own, as large as the forward thread's, alive at the failure: taken twice
 * (H100, torch 2.11: each of ten programs out of memory in its first forward had 32 or 33 MiB,
 * its fitting run 64 to 66; the simulated T5 at B=12 32 MiB, had been B=8's, whose run had 64) */
static void backward_workspaces(model_result *m, const run_facts *f)
{
    uint64_t ws = f->at_oom.bytes[CAT_WORKSPACE];
    if (!ws || m->shape.no_training)
        return;
    if (2 * ws > m->calib.fwd_whole.bytes[CAT_WORKSPACE])
        m->calib.fwd_whole.bytes[CAT_WORKSPACE] = 2 * ws; /* (the failure's, predict_oom) */
    if (2 * ws > m->calib.fixed[CAT_WORKSPACE])
        m->calib.fixed[CAT_WORKSPACE] = 2 * ws; /* (the formula's moments) */
}

void model_oom_forward_share(model_result *m, const run_facts *f)
{
    /* its first backward, cut before its first matrix product made its thread's workspace
     * (BERT-base B=32: 33 MiB alive, its B=16 run 65) */
    if (f->oom_bwd_no_ws && f->oom_bwd == 1 && f->backward_passes == 1)
        backward_workspaces(m, f);
    if (f->backward_passes > 0 || !f->oom_phase || strcmp(f->oom_phase, "forward"))
        return;
    backward_workspaces(m, f);
    if (!m->shape.generic) {
        forward_blocks_done(m, f);
        return;
    }
    forward_share(m, f);
    copies_ahead(m, f);
}

int model_head_unknown(const run_recognition *r, const run_facts *f)
{
    return r->lm_head == 0 && r->family_by_sizes && f->has_oom && f->backward_passes == 0 &&
           f->oom_phase && !strcmp(f->oom_phase, "forward") && !f->at_oom.bytes[CAT_LOGITS];
}
