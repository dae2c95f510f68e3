/* advice_speak.c — the advice in the traced program's language: nanoGPT's --key=value, the
 * flags another program's command line used (config_value.flag / flag_sep), else plain words
 * and no command line (advice.h); and predict's recommendation that keeps the effective batch,
 * in the same words; a prediction's moment as JSON names it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "advice.h"
#include "advice_speak.h"

/* add: appends to out (len bytes, holding *n); 0 when it does not fit. */
static int add(char *out, size_t len, size_t *n, const char *text)
{
    size_t l = strlen(text);
    if (*n + l >= len)
        return 0;
    memcpy(out + *n, text, l + 1);
    *n += l;
    return 1;
}

/* global_piece: the micro-batch b through the script's optimizer-batch flag (cfg->batch_global:
 * it carries B·A, the script divides it by its accumulation's flag), A the new accumulation
 * where keys change it, else the run's; into piece, "" where B·A stays the run's */
static void global_piece(const nano_config *cfg, int n, const int *keys, const uint64_t *vals,
                         uint64_t b, int used, char *piece, size_t len)
{
    uint64_t a = (uint64_t)cfg->v[CFG_gradient_accumulation_steps].i;
    for (int j = 0; j < n; j++)
        if (keys[j] == CFG_gradient_accumulation_steps)
            a = vals[j];
    piece[0] = '\0';
    if (b * a != (uint64_t)cfg->batch_global_v)
        snprintf(piece, len, "%s%s %llu", used ? " " : "", cfg->batch_global,
                 (unsigned long long)(b * a));
}

/* split_piece: a split logical batch's flag (cfg->batch_split) at micro-batch b and
 * accumulation a (a factor of the run's where its A is not known: A then 1), its value the run's
 * logical batch scaled by b·a over the run's B·A, into piece ("" where it stays the run's); 0
 * where that is no whole batch */
static int split_piece(const nano_config *cfg, uint64_t b, uint64_t a, int used, char *piece,
                       size_t len)
{
    uint64_t G = (uint64_t)cfg->batch_global_v, B = (uint64_t)cfg->v[CFG_batch_size].i,
             A = (uint64_t)cfg->v[CFG_gradient_accumulation_steps].i, num, den;
    piece[0] = '\0';
    if (!B || !A || __builtin_mul_overflow(G, b * a, &num) || (den = B * A, num % den))
        return 0;
    if (num / den != G)
        snprintf(piece, len, "%s%s %llu", used ? " " : "", cfg->batch_global,
                 (unsigned long long)(num / den));
    return 1;
}

int advice_flags(const nano_config *cfg, int n, const int *keys, const uint64_t *vals, char *out,
                 size_t len)
{
    size_t used = 0;
    int ok = len > 0;
    if (ok)
        out[0] = '\0';
    /* a split logical batch (batch_split): A is the logical batch over B, carried by its flag */
    int split = cfg->batch_split && cfg->batch_global[0];
    for (int i = 0; ok && i < n; i++) /* every knob carried by something */
        ok = cfg->v[keys[i]].flag[0] != '\0' ||
             (keys[i] == CFG_batch_size && cfg->batch_global[0]) ||
             (keys[i] == CFG_gradient_accumulation_steps && split);
    char piece[128];
    /* the micro-batch and accumulation the logical batch's flag is spelled with */
    uint64_t split_b = (uint64_t)cfg->v[CFG_batch_size].i,
             split_a = (uint64_t)cfg->v[CFG_gradient_accumulation_steps].i;
    for (int i = 0; ok && split && i < n; i++)
        if (keys[i] == CFG_batch_size)
            split_b = vals[i];
        else if (keys[i] == CFG_gradient_accumulation_steps)
            split_a = vals[i];
    for (int i = 0; ok && i < n; i++) { /* the command line's flags first */
        const config_value *cv = &cfg->v[keys[i]];
        if (split && keys[i] == CFG_gradient_accumulation_steps)
            continue; /* (the logical batch's piece, after them) */
        if (keys[i] == CFG_batch_size && !cv->flag[0]) { /* (batch_global) */
            global_piece(cfg, n, keys, vals, vals[i], used != 0, piece, sizeof piece);
            ok = add(out, len, &used, piece);
            continue;
        }
        if (cv->flag_sep == '(')
            continue;
        uint64_t per = keys[i] == CFG_batch_size && cfg->batch_per > 1 ? cfg->batch_per : 1;
        if (vals[i] % per) { /* (sequences no whole number of the flag's samples make) */
            ok = 0;
            break;
        }
        snprintf(piece, sizeof piece, "%s%s%c%llu", used ? " " : "", cv->flag,
                 cv->flag_sep == '=' ? '=' : ' ', (unsigned long long)(vals[i] / per));
        ok = add(out, len, &used, piece);
    }
    if (ok && split) /* the logical batch, B·A, where it changes */
        ok = split_piece(cfg, split_b, split_a, used != 0, piece, sizeof piece) &&
             add(out, len, &used, piece);
    for (int i = 0; ok && i < n; i++) { /* then each call once: Call(a=1, b=2) */
        const config_value *cv = &cfg->v[keys[i]];
        int seen = cv->flag_sep != '(';
        for (int j = 0; !seen && j < i; j++)
            seen = cfg->v[keys[j]].flag_sep == '(' && !strcmp(cfg->v[keys[j]].call, cv->call);
        if (seen)
            continue;
        snprintf(piece, sizeof piece, "%s%s(", used ? "; " : "", cv->call);
        ok = add(out, len, &used, piece);
        for (int j = i, first = 1; ok && j < n; j++) {
            const config_value *cj = &cfg->v[keys[j]];
            if (cj->flag_sep != '(' || strcmp(cj->call, cv->call))
                continue;
            snprintf(piece, sizeof piece, "%s%s=%llu", first ? "" : ", ", cj->flag,
                     (unsigned long long)vals[j]);
            ok = add(out, len, &used, piece);
            first = 0;
        }
        ok = ok && add(out, len, &used, ")");
    }
    if (!ok && len > 0)
        out[0] = '\0';
    return ok;
}

int advice_flag_of(const nano_config *cfg, int key, uint64_t v, char *out, size_t len)
{
    return advice_flags(cfg, 1, &key, &v, out, len);
}

int advice_accum_unknown(const nano_config *cfg)
{
    config_source src = cfg->v[CFG_gradient_accumulation_steps].src;
    return src == CONFIG_SRC_UNKNOWN ||
           ((cfg->program != PROG_NANOGPT || cfg->nfiles_missing) && src == CONFIG_SRC_DEFAULT);
}

/* speak_accum: a change of B (and A by a factor) when the run's A is unknown. */
static void speak_accum(advice_item *it, const gpt_shape *cur)
{
    const gpt_shape *s = &it->shape;
    unsigned long long f = cur->A ? (unsigned long long)(s->A / cur->A) : 1;
    if (s->A != cur->A) {
        snprintf(it->change, sizeof it->change,
                 "micro-batch %llu \u2192 %llu, %llu\u00d7 the accumulation steps",
                 (unsigned long long)cur->B, (unsigned long long)s->B, f);
        snprintf(it->note, sizeof it->note,
                 "same effective batch, same final model: %llu\u00d7 as many micro-steps per "
                 "optimizer step (the run's own accumulation is not known; usually slower, not "
                 "measured here)",
                 f);
    } else {
        snprintf(it->change, sizeof it->change, "micro-batch %llu \u2192 %llu",
                 (unsigned long long)cur->B, (unsigned long long)s->B);
        snprintf(it->note, sizeof it->note,
                 "effective batch %llu/%llu of the run's (accumulation unchanged): noisier "
                 "gradients (the learning rate may need retuning; not measured here)",
                 (unsigned long long)s->B, (unsigned long long)cur->B);
    }
}

static void advice_speak_program(advice_item *items, int n, const nano_config *cfg,
                                 const gpt_shape *cur, const run_recognition *rec);

const char *advice_targs(const nano_config *cfg, const char *loop)
{
    return cfg->targs_call[0]                    ? cfg->targs_call
           : loop && !strcmp(loop, "hf_trainer") ? "TrainingArguments"
                                                 : NULL;
}

/* accum_code_change: a change of the accumulation (s against cur) in a script whose argparse
 * flags were read and hold none for it (and no training-arguments call carries it): the
 * micro-batch's flag, where it changes, and the accumulation as the code change it is (out, len
 * bytes); 0 when that cannot be said (the micro-batch has no flag either). */
static int accum_code_change(const nano_config *cfg, const gpt_shape *s, const gpt_shape *cur,
                             const char *targs, char *out, size_t len)
{
    if (targs || !cfg->script_read[0] || cfg->v[CFG_gradient_accumulation_steps].flag[0] ||
        s->A == cur->A || cfg->batch_split)
        return 0; /* (a split logical batch: its flag carries A, or nothing can be said) */
    char b[64] = "", how[64];
    if (s->B != cur->B && !advice_flag_of(cfg, CFG_batch_size, s->B, b, sizeof b))
        return 0;
    if (cur->accum_unknown)
        snprintf(how, sizeof how, "%llu\u00d7 as many micro-batches",
                 (unsigned long long)(cur->A ? s->A / cur->A : s->A));
    else
        snprintf(how, sizeof how, "%llu micro-batches", (unsigned long long)s->A);
    const char *own = cfg->v[CFG_gradient_accumulation_steps].unplaced; /* (--update-freq) */
    int w = own[0]
                ? snprintf(out, len,
                           "%s%s(%sgradients accumulated over %s before each optimizer "
                           "step, by a code change or by %.40s's own %s, which vramtrace "
                           "does not read as the accumulation)",
                           b, b[0] ? " " : "", b[0] ? "besides: " : "", how, cfg->script_read, own)
                : snprintf(out, len,
                           "%s%s(code change%s: gradients accumulated over %s before each "
                           "optimizer step; %.40s defines no flag for it)",
                           b, b[0] ? " " : "", b[0] ? " besides" : "", how, cfg->script_read);
    return w > 0 && (size_t)w < len; /* (cut short: not said) */
}

/* own_accum: micro-batch b of a program that sets its accumulation from its micro-batch itself
 * (formula_accum_own: YOLOv5's max(round(64 / B), 1)): its flag and the words that say the
 * program makes that count itself, into out; 0 where that cannot be said (no such program, no
 * flag). It had been told a code change its script defines no flag for, the run's count kept. */
static int own_accum(const nano_config *cfg, const gpt_shape *cur, uint64_t b, char *out,
                     size_t len)
{
    uint64_t a = formula_accum_own(cur, b);
    char f[96];
    if (!a || !advice_flag_of(cfg, CFG_batch_size, b, f, sizeof f))
        return 0;
    int w = snprintf(out, len,
                     "%s (%.40s sets its accumulation from the batch itself: max(round(%llu / "
                     "%llu), %llu) = %llu micro-batches per optimizer step, nothing else to "
                     "change)",
                     f, cfg->script_read[0] ? cfg->script_read : "the program",
                     (unsigned long long)cur->nbs, (unsigned long long)b,
                     (unsigned long long)cur->nbs_floor, (unsigned long long)a);
    return w > 0 && (size_t)w < len;
}

/* same_model_as: of a what-if that changes the micro-batch, the note's "same final model" said
 * otherwise (fmt, printf's; the rest of the note kept after it); nothing where the note does not
 * say it or the micro-batch stays. The four readings below are its callers. */
static void same_model_as(advice_item *it, const gpt_shape *cur, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void same_model_as(advice_item *it, const gpt_shape *cur, const char *fmt, ...)
{
    char *p = strstr(it->note, "same final model");
    if (!p || it->shape.B == cur->B)
        return;
    char rest[200], said[sizeof it->note];
    snprintf(rest, sizeof rest, "%s", p + strlen("same final model"));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(said, sizeof said, fmt, ap);
    va_end(ap);
    snprintf(p, sizeof it->note - (size_t)(p - it->note), "%s%s", said, rest);
}

/* batch_statistics: a smaller micro-batch changes BatchNorm's statistics: "same final model"
 * is not true of such a network; said instead. Of a model with no language model's loss (lm:
 * rec.lm_head != 1) the loss may not score each sample alone either (samples_alone): said
 * with it (SimCLR's NT-Xent, whose negatives are the micro-batch's, had been told only
 * "BatchNorm's statistics over micro-batches of 128 (the final model can differ)") */
static void batch_statistics(advice_item *it, const gpt_shape *cur, int lm)
{
    same_model_as(it, cur,
                  lm ? "BatchNorm's statistics over micro-batches of %llu (the final model can "
                       "differ)"
                     : "BatchNorm's statistics over micro-batches of %llu (the final model can "
                       "differ, as it can where the loss is not of each sample alone: a "
                       "contrastive loss's in-batch negatives, a batch mixed with itself)",
                  (unsigned long long)it->shape.B);
}

/* samples_alone: the same gradients from smaller micro-batches hold where the loss is a mean over
 * samples each scored alone: a language model's over its tokens (logits over its vocabulary, seen
 * or its class's); of any other model the trace cannot tell (a contrastive loss scores each image
 * against the batch's other texts, mixup mixes a batch with itself: smaller micro-batches are
 * another run), so "same final model" is said with that condition */
static void samples_alone(advice_item *it, const gpt_shape *cur)
{
    same_model_as(it, cur, "%s",
                  "the same final model where the loss scores each sample alone (not a "
                  "contrastive loss's in-batch negatives, nor a batch mixed with itself)");
}

/* carried: a state the program carries from batch to batch (truncated BPTT: a recurrent
 * model's hidden state, one row per stream of the batch, detached and fed back): a smaller
 * micro-batch carries fewer rows of it, and accumulating micro-batches needs a state kept for
 * each, so "same final model" (or its hedge for a loss that scores each sample alone) is not
 * true of it: said instead */
static void carried(advice_item *it, const gpt_shape *cur, const char *where)
{
    same_model_as(it, cur,
                  "not the same final model: the program carries a state from one batch to the "
                  "next (%s: detached, then passed back to the model): micro-batches of %llu are "
                  "not the batch of %llu whose rows it carries on, and accumulating them needs a "
                  "state kept for each (another run)",
                  where, (unsigned long long)it->shape.B, (unsigned long long)cur->B);
}

/* whole_groups: a program that takes micro-batches of whole groups alone (cfg->batch_multiple:
 * GRPO's completions of one prompt, whose rewards are normalized within the group): "same final
 * model" holds because each micro-batch keeps its groups whole, said with it */
static void whole_groups(advice_item *it, const gpt_shape *cur, const nano_config *cfg)
{
    same_model_as(it, cur,
                  "same final model: each micro-batch of %llu holds whole groups of %s %lld (%s)",
                  (unsigned long long)it->shape.B, cfg->batch_multiple, cfg->batch_multiple_v,
                  cfg->batch_multiple_where);
}

void advice_speak(advice_item *items, int n, const nano_config *cfg, const gpt_shape *cur,
                  const run_recognition *rec)
{
    advice_speak_program(items, n, cfg, cur, rec);
    for (int i = 0; rec && i < n; i++)
        if (rec->carried[0])
            carried(&items[i], cur, rec->carried);
        else if (rec->batchnorm)
            batch_statistics(&items[i], cur, rec->lm_head == 1);
        else if (cfg->batch_multiple[0] && cur->B_multiple > 1) /* (its loss: the groups') */
            whole_groups(&items[i], cur, cfg);
        else if (rec->lm_head != 1)
            samples_alone(&items[i], cur);
}

static void advice_speak_program(advice_item *items, int n, const nano_config *cfg,
                                 const gpt_shape *cur, const run_recognition *rec)
{
    if (cfg->program == PROG_NANOGPT) {
        /* nanoGPT's flags, but its accumulation (in a config file the trace did not record) is
         * not known: the factor in words, the micro-batch as a flag */
        for (int i = 0; cur->accum_unknown && i < n; i++) {
            advice_item *it = &items[i];
            if (it->shape.B == cur->B && it->shape.A == cur->A)
                continue;
            speak_accum(it, cur);
            if (it->shape.A != cur->A)
                it->cmdline[0] = '\0';
            else /* not the assumed accumulation as if it were the run's */
                snprintf(it->cmdline, sizeof it->cmdline, "--batch_size=%llu",
                         (unsigned long long)it->shape.B);
        }
        return;
    }
    const char *targs = advice_targs(cfg, rec ? rec->loop : NULL);
    for (int i = 0; i < n; i++) {
        advice_item *it = &items[i];
        const gpt_shape *s = &it->shape;
        if (s->eval_B) /* (the evaluation's own flag, as the run spelled it) */
            continue;
        /* a code change: nanoGPT's names (GPT.forward, Block) mean nothing in another program */
        if (s->checkpointing && !cur->checkpointing) {
            if (cfg->ckpt_flag[0]) /* the script's own switch */
                snprintf(it->cmdline, sizeof it->cmdline, "%s", cfg->ckpt_flag);
            else if (targs)
                snprintf(it->cmdline, sizeof it->cmdline, "%s(gradient_checkpointing=True)", targs);
            else
                snprintf(it->cmdline, sizeof it->cmdline, "%s",
                         rec && rec->huggingface
                             ? "(code change: model.gradient_checkpointing_enable() before "
                               "training)"
                         : rec && rec->family_width_program /* (a Mamba's: no transformer) */
                             ? "(code change: torch.utils.checkpoint.checkpoint around each "
                               "repeating block in the model's forward)"
                             : "(code change: torch.utils.checkpoint.checkpoint around each "
                               "transformer block in the model's forward)");
            continue;
        }
        /* autocast: the precision switch of the loop the program uses, else a code change */
        if (s->dtype_bytes != cur->dtype_bytes) {
            if (cfg->amp_flag[0]) /* the script's own flag ("--amp bf16") */
                snprintf(it->cmdline, sizeof it->cmdline, "%s", cfg->amp_flag);
            else if (targs)
                snprintf(it->cmdline, sizeof it->cmdline, "%s(bf16=True)", targs);
            else if (rec && !strcmp(rec->loop, "lightning"))
                snprintf(it->cmdline, sizeof it->cmdline, "Trainer(precision=\"bf16-mixed\")");
            else
                snprintf(it->cmdline, sizeof it->cmdline,
                         "(code change: the forward and the loss under torch.autocast(\"cuda\", "
                         "dtype=torch.bfloat16))");
            continue;
        }
        /* another optimizer: the Trainer's own name for it, else the code change */
        if (s->opt_bpp != cur->opt_bpp || s->opt_set != cur->opt_set) {
            if (targs)
                snprintf(it->cmdline, sizeof it->cmdline, "%s(optim=\"adamw_bnb_8bit\")", targs);
            continue;
        }
        /* the KV cache off: the script's own switch (--no-cache), else the code change */
        if (s->no_kv_cache && !cur->no_kv_cache) {
            if (cfg->nocache_flag[0])
                snprintf(it->cmdline, sizeof it->cmdline, "%s", cfg->nocache_flag);
            continue;
        }
        /* no change or an environment variable: the same in every program */
        if (!it->cmdline[0] || it->cmdline[0] == '(' || !strncmp(it->cmdline, "PYTORCH_", 8))
            continue;
        char a[sizeof it->cmdline] = "";
        int keys[2];
        uint64_t vals[2];
        int nk = 0, ok = 1;
        if ((s->B != cur->B || s->A != cur->A) && cur->accum_unknown) {
            speak_accum(it, cur);
            if (s->A != cur->A && cfg->batch_split) { /* (the logical batch's flag: A x f) */
                keys[0] = CFG_batch_size, vals[0] = s->B;
                keys[1] = CFG_gradient_accumulation_steps, vals[1] = cur->A ? s->A / cur->A : 1;
                ok = advice_flags(cfg, 2, keys, vals, a, sizeof a);
            } else if (s->A != cur->A) /* no flag carried A: words only, or the code change */
                ok = accum_code_change(cfg, s, cur, targs, a, sizeof a);
            else
                ok = advice_flag_of(cfg, CFG_batch_size, s->B, a, sizeof a);
        } else if (s->B != cur->B || s->A != cur->A) {
            if (s->A != cur->A)
                snprintf(it->change, sizeof it->change,
                         "micro-batch %llu \u2192 %llu, accumulation %llu \u2192 %llu",
                         (unsigned long long)cur->B, (unsigned long long)s->B,
                         (unsigned long long)cur->A, (unsigned long long)s->A);
            else
                snprintf(it->change, sizeof it->change, "%s %llu \u2192 %llu",
                         cur->no_training ? "batch" : "micro-batch", (unsigned long long)cur->B,
                         (unsigned long long)s->B);
            if (s->B != cur->B)
                keys[nk] = CFG_batch_size, vals[nk++] = s->B;
            if (s->A != cur->A)
                keys[nk] = CFG_gradient_accumulation_steps, vals[nk++] = s->A;
            if (s->B != cur->B && s->A == formula_accum_own(cur, s->B))
                ok = own_accum(cfg, cur, s->B, a, sizeof a); /* (its own count at s->B) */
            else
                ok = advice_flags(cfg, nk, keys, vals, a, sizeof a) ||
                     accum_code_change(cfg, s, cur, targs, a, sizeof a);
        } else if (s->T != cur->T) {
            snprintf(it->change, sizeof it->change, "%s %llu \u2192 %llu",
                     rec && rec->family == FAM_ENCODER ? "sequence length" : "context length",
                     (unsigned long long)cur->T, (unsigned long long)s->T);
            if (rec && rec->family == FAM_ENCODER)
                snprintf(it->note, sizeof it->note,
                         "sequences of %llu tokens instead of %llu: activations and logits "
                         "halve, the model sees shorter texts",
                         (unsigned long long)s->T, (unsigned long long)cur->T);
            ok = advice_flag_of(cfg, CFG_block_size, s->T, a, sizeof a);
        } else if (s->L != cur->L) {
            snprintf(it->change, sizeof it->change, "%s blocks %llu \u2192 %llu",
                     rec && rec->family_width_program ? "repeating" : "transformer",
                     (unsigned long long)cur->L, (unsigned long long)s->L);
            ok = advice_flag_of(cfg, CFG_n_layer, s->L, a, sizeof a);
        } else if (s->d != cur->d) {
            snprintf(it->change, sizeof it->change, "model width %llu \u2192 %llu (%llu heads)",
                     (unsigned long long)cur->d, (unsigned long long)s->d,
                     (unsigned long long)s->H);
            keys[0] = CFG_n_embd, vals[0] = s->d, keys[1] = CFG_n_head, vals[1] = s->H;
            ok = advice_flags(cfg, 2, keys, vals, a, sizeof a);
        } else if (s->compile != cur->compile) {
            const char *f = cfg->v[CFG_compile].flag;
            snprintf(it->change, sizeof it->change, "without torch.compile%s%s%s",
                     f[0] ? " (drop " : "", f, f[0] ? ")" : "");
            ok = 0;
        } else {
            ok = 0;
        }
        if (ok)
            snprintf(it->cmdline, sizeof it->cmdline, "%s", a);
        else
            it->cmdline[0] = '\0';
    }
}

int advice_keep_effective(const gpt_shape *s, uint64_t lb, uint64_t *b, uint64_t *a)
{
    uint64_t eff;
    if (!lb || s->A == 0 || __builtin_mul_overflow(s->B, s->A, &eff))
        return 0;
    if (s->accum_unknown) /* A is not known: B' divides B, A' = A * B / B' whatever A is */
        eff = s->B;
    int follows = formula_accum_own(s, s->B) == s->A; /* (not another A given to predict) */
    for (uint64_t k = lb < eff ? lb : eff, own; k >= 1; k--)
        if (s->B_multiple > 1 && k % s->B_multiple) /* (not a batch the program takes) */
            continue;
        else if (follows && (own = formula_accum_own(s, k)) != 0) { /* (the program's count at k) */
            if (own * k == eff) {
                *b = k, *a = own;
                return 1;
            }
        } else if (eff % k == 0) {
            *b = k;
            *a = s->accum_unknown ? s->A * (eff / k) : eff / k;
            return 1;
        }
    return 0;
}

void advice_batch_flags(const nano_config *c, const gpt_shape *s, uint64_t b, uint64_t a,
                        const char *targs, char *out, size_t len)
{
    out[0] = '\0';
    if (c->program == PROG_NANOGPT) {
        if (s->accum_unknown) /* only the factor is known: words for A */
            snprintf(out, len, "--batch_size=%llu", (unsigned long long)b);
        else
            snprintf(out, len, "--batch_size=%llu --gradient_accumulation_steps=%llu",
                     (unsigned long long)b, (unsigned long long)a);
        return;
    }
    int keys[2] = {CFG_batch_size, CFG_gradient_accumulation_steps};
    uint64_t vals[2] = {b, a};
    /* the accumulation only where it changes (and is known): else the micro-batch alone */
    int two = !s->accum_unknown && a != s->A;
    if ((b != s->B || a != s->A) && a == formula_accum_own(s, b) && own_accum(c, s, b, out, len))
        return; /* (a count the program sets itself at b: its batch flag alone) */
    gpt_shape to = *s;
    to.B = b, to.A = a;
    /* an argparse script with no flag for it: its micro-batch flag and the code change, as the
     * report's what-ifs say it */
    if (!advice_flags(c, two ? 2 : 1, keys, vals, out, len) && two &&
        !accum_code_change(c, &to, s, targs, out, len))
        out[0] = '\0';
}

/* the moment a prediction is of, named as JSON names it */
const char *advice_moment_key(int moment)
{
    return moment == PREDICT_AT_OPTIMIZER_STEP ? "optimizer_step"
           : moment == PREDICT_AT_BACKWARD_END ? "backward_end"
           : moment == PREDICT_AT_EVALUATION   ? "evaluation"
           : moment == PREDICT_AT_MEASURED     ? "measured"
                                               : "step_peak";
}

/* advice_cmdline_split: cl (an advice_item's cmdline, as the report's "change:" line says it)
 * as the arguments to give the program (args: "--batch-size 8", an environment setting
 * "NAME=VALUE", or "") and the change to make in its code (code: "" when none). The texts above
 * write: arguments; a call the script makes ("TrainingArguments(...)", "Trainer(...)"), alone
 * or after arguments and "; " (advice_flags); a code change in parentheses, alone or after the
 * arguments that go with it (accum_code_change: "(code change: ...)", "(besides: ...)",
 * "(gradients accumulated ...)"); or a note in parentheses after the arguments that says nothing
 * else is to change (own_accum: no code change). Each cut to its buffer's size. */
void advice_cmdline_split(const char *cl, char *args, size_t alen, char *code, size_t clen)
{
    static const char *const lead[] = {"code change besides: ", "code change: ", "besides: "};
    size_t n = strlen(cl), id = strspn(cl, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789_.");
    const char *semi = strstr(cl, "; "), *paren = cl[0] == '(' ? cl : strstr(cl, " (");
    snprintf(args, alen, "%s", cl);
    code[0] = '\0';
    if (id && cl[id] == '(') { /* a call in the script */
        args[0] = '\0';
        snprintf(code, clen, "%s", cl);
    } else if (semi && (!paren || semi < paren)) { /* arguments, then the calls */
        snprintf(args, alen, "%.*s", (int)(semi - cl), cl);
        snprintf(code, clen, "%s", semi + 2);
    } else if (paren && n && cl[n - 1] == ')') { /* arguments, then words in parentheses */
        snprintf(args, alen, "%.*s", (int)(paren - cl), cl);
        const char *c = paren + (paren == cl ? 1 : 2);
        size_t i = 0;
        while (i < sizeof lead / sizeof *lead && strncmp(c, lead[i], strlen(lead[i])))
            i++;
        if (i < sizeof lead / sizeof *lead)
            c += strlen(lead[i]);
        else if (strncmp(c, "gradients accumulated", 21))
            return; /* (a note: nothing else to change) */
        snprintf(code, clen, "%.*s", (int)(cl + n - 1 - c), c);
    }
}
