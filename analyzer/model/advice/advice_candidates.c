/* advice_candidates.c — the documents' list of fixes for a run, best first (formula.md §4):
 * each a shape changed from the current one (micro-batch with or without accumulation, context,
 * blocks, checkpointing, compile, the allocator's settings), predicted by advice.c, with the
 * words of its trade-off. Interface: advice.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "advice.h"
#include "bytes_sat.h"
#include "cards.h"

/* predict_shape: s's prediction (an evaluation's own batch: advice_predict_eval's) */
static void predict_shape(const model_calib *c, const gpt_shape *s, prediction *p)
{
    if (s->eval_B) /* (another evaluation batch) */
        advice_predict_eval(c, s, p);
    else
        advice_predict(c, s, p);
}

/* add: predicts s and appends one item; returns the new count. */
static int add(advice_item *items, int n, int max, const model_calib *c, const gpt_shape *s,
               uint64_t capacity, const char *change, const char *cmdline, const char *note)
{
    if (n >= max)
        return n;
    advice_item *it = &items[n];
    memset(it, 0, sizeof *it);
    snprintf(it->change, sizeof it->change, "%s", change);
    snprintf(it->cmdline, sizeof it->cmdline, "%s", cmdline);
    snprintf(it->note, sizeof it->note, "%s", note);
    it->shape = *s;
    prediction p;
    predict_shape(c, s, &p);
    it->predicted_peak = p.peak_bytes;
    it->predicted_reserved = p.reserved_bytes;
    it->predicted_tensors = p.tensor_bytes;
    it->required = p.required_bytes;
    it->moment = p.moment;
    if (p.kv_floor) { /* (kv_floor) the run's own moment without its cache says more */
        char b[32], more[128];
        snprintf(more, sizeof more,
                 "; its tensors predicted at least the %s of other tensors the run held at once",
                 card_format_bytes(c->no_kv_tensors, b, sizeof b));
        size_t used = strlen(it->note);
        if (used + strlen(more) < sizeof it->note)
            memcpy(it->note + used, more, strlen(more) + 1);
    }
    it->fits = advice_fits(p.required_bytes, capacity, ADVICE_HEADROOM);
    it->cache_limit = advice_cache_limit(&p, capacity, ADVICE_HEADROOM, &it->cache_assumed);
    /* one that fits by less than the cache it assumes again: the most with which it would (a
     * student beside its teacher, with checkpointing: "fits (1.63 GiB left, 14 %)" at 1.68 GiB
     * of cache assumed; its run held 2.89 and kept 3.6 % free) */
    if (it->fits == 1 && !c->lower)
        it->cache_limit = advice_fit_cache(&p, capacity, ADVICE_HEADROOM, &it->cache_assumed);
    /* held: a card size from a trace can be anything up to 2^64 - 1 */
    it->headroom_bytes = bytes_diff(capacity, p.required_bytes);
    return n + 1;
}

/* peak_now: the peak predicted for s as it is (what an item's saving is weighed against) */
static uint64_t peak_now(const model_calib *c, const gpt_shape *s)
{
    prediction p;
    predict_shape(c, s, &p);
    return p.required_bytes;
}

/* knob_item: one item changing a single nanoGPT key to value (change "key=value", command
 * line "--key=value"); s is the shape with that change. Returns the new count. */
static int knob_item(advice_item *items, int n, int max, const model_calib *c, const gpt_shape *s,
                     uint64_t capacity, const char *key, uint64_t value, const char *note)
{
    char change[128], cmd[160];
    snprintf(change, sizeof change, "%s=%llu", key, (unsigned long long)value);
    snprintf(cmd, sizeof cmd, "--%s=%llu", key, (unsigned long long)value);
    return add(items, n, max, c, s, capacity, change, cmd, note);
}

/* batch_item: B, A -> one item with the documents' wording of the trade-off. */
static int batch_item(advice_item *items, int n, int max, const model_calib *c,
                      const gpt_shape *cur, uint64_t B, uint64_t A, uint64_t capacity)
{
    if (cur->B_multiple > 1 && B % cur->B_multiple)
        return n; /* (a batch the program refuses: its groups, GRPO's completions of a prompt) */
    uint64_t own = formula_accum_own(cur, B); /* (YOLOv5's round(64 / B): not a choice) */
    for (int i = 0; own && i < n; i++)
        if (items[i].shape.B == B && items[i].shape.A == own && !items[i].shape.eval_B)
            return n; /* (the same run: its micro-batch is all that changes) */
    gpt_shape s = *cur;
    s.B = B;
    s.A = A = own ? own : A;
    char change[128], cmd[160], note[240];
    snprintf(change, sizeof change, "batch_size=%llu, gradient_accumulation_steps=%llu",
             (unsigned long long)B, (unsigned long long)A);
    snprintf(cmd, sizeof cmd, "--batch_size=%llu --gradient_accumulation_steps=%llu",
             (unsigned long long)B, (unsigned long long)A);
    uint64_t eff = cur->B * cur->A, neff = B * A;
    if (cur->no_training) /* forwards only: no gradient to be noisier, no step to take */
        snprintf(note, sizeof note,
                 "a batch of %llu instead of %llu: the same outputs, in more forward passes",
                 (unsigned long long)B, (unsigned long long)cur->B);
    else if (neff == eff)
        snprintf(note, sizeof note,
                 "same effective batch %llu, same final model; %llu micro-steps per optimizer "
                 "step instead of %llu%s (smaller kernels: usually slower, not measured here)",
                 (unsigned long long)eff, (unsigned long long)A, (unsigned long long)cur->A,
                 own ? ", the count the program sets itself at this micro-batch" : "");
    else if (own) /* (its own count: an effective batch near its nominal one, not the run's) */
        snprintf(note, sizeof note,
                 "effective batch %llu instead of %llu: the program accumulates %llu micro-steps "
                 "itself at this micro-batch (round(%llu / %llu)); the learning rate may need "
                 "retuning (not measured here)",
                 (unsigned long long)neff, (unsigned long long)eff, (unsigned long long)A,
                 (unsigned long long)cur->nbs, (unsigned long long)B);
    else
        snprintf(note, sizeof note,
                 "effective batch %llu instead of %llu: noisier gradients (the learning rate may "
                 "need retuning; not measured here)",
                 (unsigned long long)neff, (unsigned long long)eff);
    return add(items, n, max, c, &s, capacity, change, cmd, note);
}

/* same_model: how much of what is trained an option keeps, more is better: 2 the same model on
 * the same data, exactly (use_cache=False, expandable segments, checkpointing), 1 the same model
 * on shorter sequences or with an approximate optimizer (8-bit AdamW), 0 a new model (fewer
 * blocks, a narrower width). */
static int same_model(const gpt_shape *s, const gpt_shape *cur)
{
    if (s->L != cur->L || s->d != cur->d || s->H != cur->H)
        return 0;
    return s->T != cur->T || formula_opt_bpp(s) != formula_opt_bpp(cur) ? 1 : 2;
}

int advice_candidates(const model_calib *c, const gpt_shape *cur, uint64_t capacity,
                      int fragmentation, int expandable_set, int current_fits, advice_item *items,
                      int max)
{
    int n = 0;
    char change[128], cmd[160], note[200];
    /* the row "none" by current_fits (advice.h); 1: by whether the what-ifs are lower bounds */
    static const char *const keep_row[] = {
        NULL, NULL,
        "it ran to the end on this card, with less than " ADVICE_HEADROOM_PCT_TEXT
        " % free: it fits; the other options that fit add margin",
        "it ran to the end on this card, but " ADVICE_RETRY_TEXT
        ": the headroom above is after that release; an option with a lower peak adds margin",
        "it ran to the end on this card, with less than " ADVICE_HEADROOM_PCT_TEXT
        " % free, after " ADVICE_RETRY_TEXT ": it fits, tightly; the other options that fit add "
        "margin"};
    if (current_fits >= 1 && current_fits <= 4)
        n = add(items, n, max, c, cur, capacity, "none (keep the current configuration)", "",
                current_fits > 1 ? keep_row[current_fits]
                : c->lower       ? "the current configuration may fit the card with the stated "
                                   "headroom (what it needs is a lower bound: vramtrace fit "
                                   "measures)"
                                 : "the current configuration fits the card with the stated "
                                   "headroom");
    int none_row = n; /* 1: items[0] is the run itself */
    if (n)            /* the run itself: its cache was measured, not assumed */
        items[0].cache_limit = 0;
    int first_batch = n;
    /* half and quarter the micro-batch with 2x / 4x the accumulation: the same effective batch
     * only when they divide it (the largest divisor that fits comes next either way) */
    if (cur->B >= 2 && cur->B % 2 == 0 && !cur->no_training)
        n = batch_item(items, n, max, c, cur, cur->B / 2, cur->A * 2, capacity);
    if (cur->B >= 4 && cur->B % 4 == 0 && !cur->no_training)
        n = batch_item(items, n, max, c, cur, cur->B / 4, cur->A * 4, capacity);
    /* the largest micro-batch that fits and keeps the effective batch (B' divides B*A) */
    uint64_t eff;
    if (capacity > 0 && cur->B >= 2 && cur->no_training) {
        /* forwards only: no effective batch to keep, the largest batch that fits */
        uint64_t top = advice_largest_batch(c, cur, capacity, ADVICE_HEADROOM);
        /* (lower bounds: the largest "may fit" by what was not measured; half the batch is
         * offered, as a training run's divisors are: a GPT-2 evaluation out of memory at 24 had
         * been recommended 20, its runs at 16 and 18 measured that 20 would not fit) */
        if (top >= 1 && top < cur->B && top != cur->B / 2 && !c->lower)
            n = batch_item(items, n, max, c, cur, top, cur->A, capacity);
    } else if (capacity > 0 && cur->B >= 2 && !__builtin_mul_overflow(cur->B, cur->A, &eff)) {
        if (cur->accum_unknown) /* B' divides B: A' = A * B / B' whatever A really is */
            eff = cur->B;
        /* start at the largest batch that fits (a binary search): the walk down to a divisor
         * of B*A is bounded by it (at most 2^20 steps), not by B */
        uint64_t top = advice_largest_batch(c, cur, capacity, ADVICE_HEADROOM);
        for (uint64_t b = top < cur->B - 1 ? top : cur->B - 1; b >= 1; b--) {
            uint64_t own = formula_accum_own(cur, b); /* (the program's count at b) */
            if ((own ? own * b != eff : eff % b != 0) ||
                (cur->B_multiple > 1 && b % cur->B_multiple))
                continue;
            uint64_t a = own ? own : cur->accum_unknown ? cur->A * (eff / b) : eff / b;
            gpt_shape s = *cur;
            s.B = b;
            s.A = a;
            prediction p;
            advice_predict(c, &s, &p);
            if (advice_fits(p.required_bytes, capacity, ADVICE_HEADROOM) == 1) {
                if ((b != cur->B / 2 || cur->B % 2) && (b != cur->B / 4 || cur->B % 4))
                    n = batch_item(items, n, max, c, cur, b, a, capacity);
                break;
            }
        }
    }
    if (cur->B >= 2)
        n = batch_item(items, n, max, c, cur, cur->B / 2, cur->A, capacity);
    int last_batch = n;
    if (cur->T >= 64 && !cur->generic && !cur->patch_tokens) {
        gpt_shape s = *cur;
        s.T = cur->T / 2;
        snprintf(note, sizeof note,
                 "context of %llu tokens instead of %llu: activations and logits halve, "
                 "the model sees less context",
                 (unsigned long long)s.T, (unsigned long long)cur->T);
        n = knob_item(items, n, max, c, &s, capacity, "block_size", s.T, note);
    }
    /* most weights frozen (LoRA, a linear probe): they are a pretrained model's, so a smaller
     * shape is another pretrained model to adapt, not this one trained smaller */
    const char *base = formula_train_frac(cur) < 0.5 ? "; most weights are frozen: another, "
                                                       "smaller pretrained model to adapt"
                                                     : "";
    if (cur->L >= 4 && !cur->generic) {
        gpt_shape s = *cur;
        s.L = cur->L * 3 / 4;
        snprintf(note, sizeof note,
                 "smaller model (%llu instead of %llu blocks): less capacity, "
                 "a new model, not the same run%s",
                 (unsigned long long)s.L, (unsigned long long)cur->L, base);
        n = knob_item(items, n, max, c, &s, capacity, "n_layer", s.L, note);
    }
    /* narrower at the same head size (768 -> 512 with 8 heads of 64, as the documents say); with
     * grouped key / value the heads a multiple of the key / value heads, which stay (16 heads
     * over 4 of 64 -> 8 heads, not 10) */
    uint64_t hd = cur->H ? cur->d / cur->H : 0, d2 = hd ? cur->d * 2 / 3 / hd * hd : 0;
    uint64_t kvh = hd && formula_kv_grouped(cur) ? cur->kv / hd : 1;
    if (kvh > 1)
        d2 = d2 / (hd * kvh) * (hd * kvh);
    if (!cur->generic && d2 >= hd && d2 < cur->d && hd > 0) {
        gpt_shape s = *cur;
        s.d = d2;
        s.H = d2 / hd;
        snprintf(change, sizeof change, "n_embd=%llu, n_head=%llu", (unsigned long long)d2,
                 (unsigned long long)s.H);
        snprintf(cmd, sizeof cmd, "--n_embd=%llu --n_head=%llu", (unsigned long long)d2,
                 (unsigned long long)s.H);
        snprintf(note, sizeof note,
                 "narrower model (width %llu instead of %llu): less capacity, a new model%s",
                 (unsigned long long)d2, (unsigned long long)cur->d, base);
        n = add(items, n, max, c, &s, capacity, change, cmd, note);
    }
    uint64_t need = peak_now(c, cur); /* (what the options below are weighed against) */
    if (cur->compile && !cur->generic) {
        gpt_shape s = *cur;
        s.compile = 0;
        int k = add(items, n, max, c, &s, capacity, "compile=False", "--compile=False",
                    "no torch.compile warm-up or compiled kernels; eager "
                    "keeps more activations per step and runs slower");
        /* eager's need beside the run's: a way to fit only where it is less */
        if (k > n && items[n].required > need) {
            char b[32];
            snprintf(items[n].note, sizeof items[n].note,
                     "eager keeps more activations per step than compiled code: %s more than "
                     "the current configuration needs, and slower; keep torch.compile",
                     card_format_bytes(items[n].required - need, b, sizeof b));
        }
        n = k;
    }
    if (cur->dtype_bytes >= 4 && !cur->generic && !formula_params16(cur)) {
        gpt_shape s = *cur; /* fp32 training: autocast's 16-bit compute */
        s.dtype_bytes = 2;
        n = add(items, n, max, c, &s, capacity, "bf16 mixed precision (autocast)",
                "--dtype=bfloat16",
                "weights, gradients and the optimizer's state stay fp32; most activations 16-bit, "
                "and a 16-bit copy of each matrix weight in the forward (bfloat16 needs compute "
                "capability 8.0 or newer; older GPUs: float16 with a GradScaler)");
    }
    /* AdamW's two moments (recognized, not assumed: the run's optimizer is AdamW) in 8 bits,
     * where they save at least 1 % of the peak predicted now, or of the card where that peak is
     * over it (not LoRA's: its adapters' 12 MiB of state would shrink by 9 MiB beside a 9.96 GiB
     * peak; against the peak alone, a run far over the card had lost it: Llama 160M at B=128,
     * 0.75 GiB against 1 % of 134.55 GiB) */
    uint64_t weigh = need;
    if (capacity && capacity < weigh)
        weigh = capacity;
    if (cur->opt_set && !cur->generic &&
        formula_opt_bpp(cur) >= 2.0 * formula_param_bytes(cur) - 0.01 &&
        (formula_opt_bpp(cur) - 2.0) * formula_trained(cur) >= 0.01 * (double)weigh) {
        gpt_shape s = *cur;
        s.opt_set = 1, s.opt_bpp = 2.0;
        snprintf(note, sizeof note,
                 "AdamW's two moments in 8 bits (bitsandbytes; a scale per block of 2,048): 2 B of "
                 "state per trainable parameter instead of %.0f; not measured on a GPU by "
                 "vramtrace",
                 formula_opt_bpp(cur));
        n = add(items, n, max, c, &s, capacity, "8-bit AdamW",
                "(code change: bitsandbytes.optim.AdamW8bit for torch.optim.AdamW)", note);
    }
    if (!cur->checkpointing && !cur->generic) {
        gpt_shape s = *cur;
        s.checkpointing = 1;
        /* (with the KV cache the run filled not made: transformers turns use_cache off under
         * checkpointing in training; advice.c's predictions leave it out) */
        int kv = cat_breakdown_total(&c->kv) > 0 || cat_breakdown_total(&c->kv_oom) > 0;
        n = add(items, n, max, c, &s, capacity, "activation checkpointing",
                "(code change: torch.utils.checkpoint.checkpoint around each Block in GPT.forward)",
                kv ? "keeps only block inputs and recomputes the forward in backward: ~25-35 % "
                     "slower; no KV cache either (transformers turns use_cache off under "
                     "checkpointing in training)"
                   : "keeps only block inputs and recomputes the forward in backward: ~25-35 % "
                     "slower");
    }
    if (!cur->no_kv_cache &&
        (cat_breakdown_total(&c->kv) > 0 || cat_breakdown_total(&c->kv_oom) > 0)) {
        gpt_shape s = *cur;
        s.no_kv_cache = 1;
        if (cur->no_training)
            n = add(items, n, max, c, &s, capacity, "use_cache=False",
                    "(code change: model.config.use_cache = False)",
                    "its copies of each block's keys and values are not made; a forward's loss "
                    "never reads them, only generation does (a later forward given "
                    "past_key_values): a generate() loop without them recomputes every earlier "
                    "token, much slower");
        else if (c->kv_read) /* (a generation reads its cache: GRPO's rollouts) */
            n = add(items, n, max, c, &s, capacity, "use_cache=False in the training forward",
                    "(code change: use_cache=False in the training forward's call, not in the "
                    "generation's)",
                    "a training forward never reads the KV cache it makes: its copies of each "
                    "block's keys and values are not made there; this run's later forwards "
                    "extended a cache (a generation's, whose new tokens read it): kept, since "
                    "without it each new token recomputes every earlier one");
        else {
            int had = n;
            n = add(items, n, max, c, &s, capacity, "use_cache=False",
                    "(code change: model.config.use_cache = False before training)",
                    "transformers' KV cache is never read in training: its copies of each "
                    "block's keys and values are not made; no speed cost");
            /* (what the attention keeps in the copies' stead not measured in full: what a
             * backward under way freed so far taken, none before it) */
            static const char all[] = "; its peak the least it can be: the run ended before its "
                                      "first backward pass did, which shows how much of the "
                                      "cache the attention keeps";
            size_t used = n > had ? strlen(items[n - 1].note) : 0;
            if (n > had && c->kv_unmeasured && used + sizeof all <= sizeof items[n - 1].note)
                memcpy(items[n - 1].note + used, all, sizeof all);
        }
    }
    if (fragmentation && !expandable_set) {
        model_calib c2 = *c;
        c2.expandable = 1;
        /* no fragmentation in that configuration: the failure's unused cache is not needed */
        c2.oom_live.bytes[CAT_CACHE] = 0;
        double f = advice_cache_floor(cur, 1);
        if (c2.cache_fraction > f)
            c2.cache_fraction = f;
        n = add(
            items, n, max, &c2, cur, capacity, "expandable_segments:True",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "lets the caching allocator grow segments instead of splitting them; no speed cost");
    }
    /* the evaluation's own batch, where the run peaked in it: the largest below it that fits
     * (beside a run that completed, lowering its peak by 1 % at least: the bar below) */
    int eval_item = -1;
    uint64_t eb = advice_eval_largest(
        c, cur, capacity, ADVICE_HEADROOM,
        none_row ? items[0].predicted_peak - items[0].predicted_peak / 100 : UINT64_MAX);
    if (eb) {
        gpt_shape s = *cur;
        s.eval_B = eb;
        size_t k = strcspn(c->eval_flag, " =");
        const char *w = advice_pass_word(c->eval_flag);
        /* (a rollout's batch is what the updates train on: a smaller one changes the training;
         * the pass the trace shows feeding the step, or a flag that names a rollout) */
        int feeds = c->eval_feeds || !strcmp(w, "rollout") || !strcmp(w, "no-grad");
        snprintf(change, sizeof change, "%s batch %llu \u2192 %llu", w,
                 (unsigned long long)c->eval_batch, (unsigned long long)eb);
        snprintf(cmd, sizeof cmd, "%.*s %llu", (int)k, c->eval_flag, (unsigned long long)eb);
        eval_item = n;
        n = add(items, n, max, c, &s, capacity, change, k ? cmd : "",
                feeds ? "not the training as it ran: the steps train on that pass's outputs, "
                        "fewer of them each time; an upper bound: as if none of that pass's "
                        "tensors reused the training's cached blocks (a larger batch may fit: "
                        "vramtrace fit measures)"
                      : "the training as it ran, its evaluation's results the same in more "
                        "passes of fewer samples; an upper bound: as if none of the "
                        "evaluation's tensors reused the training's cached blocks (a larger "
                        "batch may fit: vramtrace fit measures)");
    }
    /* recommended: the current configuration when it fits with the headroom; else the largest
     * micro-batch that fits and keeps the effective batch (the same final model), else the
     * largest that fits (earliest wins ties); else the option that fits and changes least what
     * is trained (same_model), earliest among equals; else none (an option that does not fit,
     * or whose fit is unknown, is never called recommended: a run that completed with less than
     * the headroom free is told it fits, and the option that restores the headroom is the
     * recommended one, as predict says) */
    int rec = -1;
    /* a training run's lower bounds recommend nothing, its own configuration neither: they say
     * it may fit, no more (a trace cut in its first forward had been told "keep the current
     * configuration") */
    int bounds_only = c->lower && !cur->no_training;
    if (current_fits == 1 && !bounds_only) {
        rec = 0;
    } else if (!c->eval_cut && !bounds_only) {
        /* (an evaluation cut short, or a training run's first forward with no formula to tell
         * how far it had got: lower bounds, none recommended. A simulated UNet out of memory
         * half-way through its forward at B=48 A=2 had been recommended 32 A=3, "at least 9.60
         * GiB: may fit": its run took 11.01 GiB of tensors and ran out of memory, as did half
         * the batch, 24 A=4, at 11.34; 16 fitted at 9.18) */
        /* beside a run that completed (the row "none"), an option must lower its peak by 1 % at
         * least: one that fits at the same peak adds no margin (a BERT whose peak was its
         * evaluation's own batch, after an allocator retry, had been told to halve its
         * micro-batch, predicted at that same peak: the run it recommended retried too) */
        uint64_t bar =
            none_row ? items[0].predicted_peak - items[0].predicted_peak / 100 : UINT64_MAX;
        /* first the evaluation's own batch: nothing trained changes, and its prediction is an
         * upper bound (a GPT-2 evaluating 16 beside a micro-batch of 4, told use_cache=False at
         * 10.96 GiB, measured 11.44 after a retry; an evaluation of 4 predicted 10.94, took 7.75)
         */
        if (eval_item >= 0 && items[eval_item].fits == 1 && items[eval_item].predicted_peak <= bar)
            rec = eval_item;
        for (int keep = 1; keep >= 0 && rec < 0; keep--)
            for (int i = first_batch; i < last_batch; i++)
                if (items[i].fits == 1 && items[i].predicted_peak <= bar &&
                    (!keep || items[i].shape.B * items[i].shape.A == cur->B * cur->A) &&
                    (rec < 0 || items[i].shape.B > items[rec].shape.B))
                    rec = i;
        for (int i = last_batch; rec < 0 && i < n; i++)
            if (items[i].fits == 1 && items[i].predicted_peak <= bar)
                rec = i;
        for (int i = rec + 1; rec >= last_batch && i < n; i++)
            if (items[i].fits == 1 && items[i].predicted_peak <= bar &&
                same_model(&items[i].shape, cur) > same_model(&items[rec].shape, cur))
                rec = i;
    }
    if (rec >= 0) {
        advice_item r = items[rec];
        memmove(&items[1], &items[0], (size_t)rec * sizeof items[0]);
        items[0] = r;
        items[0].recommended = 1;
    }
    return n;
}
