/* model_seq.c — T, not B, where the tokens per step changed during the run (model_seq.h). The
 * trace keeps the token batch of each forward (B·T int64) and the activations (B·T·d); neither
 * separates B from T. What does: the batch flag, where it ran the first forward and divides the
 * later tokens (a micro-batch ramp's flag is its later steps', not its first's); without it, both
 * readings are said. */
#include "model_seq.h"
#include "model_trace.h"

#include <stdio.h>
#include <string.h>

int model_seq_changed(nano_config *c, const run_facts *f, long long n, long long T)
{
    config_value *b = &c->v[CFG_batch_size];
    long long now = (long long)f->tokens_now;
    /* (more tokens than the first forward's: fewer, at the flag's first batch, are as likely a
     * last batch cut short, drop_last=False, as a shorter T, and stay the batch's reading) */
    if (n <= 0 || T <= 0 || b->i <= 0 || n != b->i * T || now <= n || now % b->i)
        return 0;
    long long tn = now / b->i;
    char where[448];
    size_t w = strlen(b->where);
    snprintf(b->where + w, sizeof b->where - w,
             "; the trace agrees: %lld in its first forward (its token batch, %lld tokens over T "
             "= %lld) and at the moment explained (%lld tokens over T = %lld): T changed during "
             "the run, not the micro-batch",
             b->i, n, T, now, tn);
    snprintf(where, sizeof where,
             "T = %lld: B·T = %lld tokens in the token batch at the moment explained over the "
             "micro-batch %lld; T changed during the run: %lld in its first forward (%lld tokens "
             "over the same micro-batch)",
             tn, now, b->i, T, n);
    config_from_trace(&c->v[CFG_block_size], tn, where);
    c->t_first = T, c->t_first_tokens = n, c->t_now_tokens = now;
    return 1;
}

int model_seq_short(nano_config *c, const run_facts *f)
{
    const infer_result *ir = f->inferred;
    const config_value *b = &c->v[CFG_batch_size];
    config_value *t = &c->v[CFG_block_size];
    long long B = b->i, T = t->i, now = (long long)f->tokens_now;
    if (!ir || !ir->v[INFER_tokens].known || ir->tokens_eval || t->src != CONFIG_SRC_ARG ||
        T <= 0 || B <= 0 || f->has_oom || f->oom_recovered || f->oom_first_batch)
        return 0;
    long long n = ir->v[INFER_tokens].value;
    /* (a count T divides may be whole samples of T, the flag not the micro-batch: not read) */
    if (n <= 0 || now <= 0 || n % B || now % B || n % T == 0 || now % T == 0 || n >= B * T ||
        now >= B * T)
        return 0;
    char flag[96], where[448];
    snprintf(flag, sizeof flag, "%.60s%c%lld", t->flag[0] ? t->flag : "the flag",
             t->flag_sep == '=' ? '=' : ' ', T);
    snprintf(where, sizeof where,
             "T = %lld: B·T = %lld tokens in the token batch at the moment explained over the "
             "micro-batch %lld; %s is a length the run's batches did not reach (%lld in its "
             "first forward: %lld tokens)",
             now / B, now, B, flag, n / B, n);
    config_from_trace(t, now / B, where);
    return 1;
}

/* elem_sizes: the bytes of an activation element (*kd) and of a softmax's (*ks) where the trace
 * tells the precision: autocast's 16-bit weight copies (its softmax fp32), 16-bit weights with no
 * copy (pure 16-bit), no copy of fp32 weights (fp32); 0 where it does not (no Python frames, a
 * compiled forward, a copy too small to be a d×d weight's) */
static int elem_sizes(const run_facts *f, long long d, long long *kd, long long *ks)
{
    const infer_value *pe = &f->inferred->v[INFER_param_dtype_bytes];
    uint64_t copies = f->cat_peak[CAT_AUTOCAST], matrix = 2 * (uint64_t)d * (uint64_t)d;
    if (!f->has_cat_peaks || !f->casts_visible || f->compile_frames != MODEL_COMPILE_NOT_SEEN ||
        (copies && copies < matrix))
        return 0;
    if (copies || f->grad_scaler)
        *kd = 2, *ks = 4;
    else
        *kd = *ks = pe->known && pe->value == 2 ? 2 : 4;
    return 1;
}

int model_seq_encoder(nano_config *c, const run_facts *f)
{
    const infer_result *ir = f->inferred;
    config_value *b = &c->v[CFG_batch_size], *t = &c->v[CFG_block_size];
    long long B = b->i, T = t->i, d = c->v[CFG_n_embd].i, H = c->v[CFG_n_head].i, kd, ks;
    if (!ir || ir->v[INFER_tokens].known || !ir->nfwd_sizes || c->batch_per > 1 ||
        (t->src != CONFIG_SRC_ARG && t->src != CONFIG_SRC_FILE) ||
        (b->src != CONFIG_SRC_ARG && b->src != CONFIG_SRC_FILE) || B <= 0 || T <= 0 || d <= 0 ||
        H <= 0 || !elem_sizes(f, d, &kd, &ks))
        return 0;
    const struct infer_fwd_size *w = NULL;
    for (int i = 0; i < ir->nfwd_sizes; i++) {
        const struct infer_fwd_size *z = &ir->fwd_sizes[i];
        if ((long long)z->size == B * T * d * kd) /* (the flag's T ran: the trace agrees) */
            return 0;
        if (!w && z->n >= 2 && z->size % (uint64_t)(d * kd) == 0)
            w = z; /* (the most made size d divides: the blocks' d-wide tensors) */
    }
    long long N = w ? (long long)(w->size / (uint64_t)(d * kd)) : 0, Tp = 0;
    const struct infer_fwd_size *sm = NULL;
    for (int i = 0; N > 0 && N != B * T && !sm && i < ir->nfwd_sizes; i++) {
        const struct infer_fwd_size *z = &ir->fwd_sizes[i];
        uint64_t row = (uint64_t)(N * H * ks);
        if (!z->softmax || z->size % row)
            continue;
        Tp = (long long)(z->size / row); /* S·H·T'·T' over S·T'·H */
        if (Tp >= 2 && N % Tp == 0 && (N / Tp) % B == 0)
            sm = z;
    }
    if (!sm)
        return 0;
    long long S = N / Tp, k = S / B;
    char flag[96], where[640];
    snprintf(flag, sizeof flag, "%.60s%c%lld", t->flag[0] ? t->flag : "the flag",
             t->flag_sep == '=' ? '=' : ' ', T);
    snprintf(where, sizeof where,
             "T = %lld tokens a sequence in the width-%lld blocks: a softmax over S·H·T·T scores "
             "(%llu B, %u of them in the first forward; H = %lld) over their %lld tokens (%llu B "
             "tensors, %u of them): %lld sequences of %lld; %s is a length they never saw (no "
             "tensor of B·T = %lld × %lld tokens)",
             Tp, d, (unsigned long long)sm->size, sm->softmax, H, N, (unsigned long long)w->size,
             w->n, S, Tp, flag, B, T);
    config_from_trace(t, Tp, where);
    c->t_blocks = 1;
    if (k > 1) { /* (each sample of the flag k sequences: B in sequences, the formulas' unit) */
        char fl[sizeof b->flag], said[96], sep = b->flag_sep;
        snprintf(fl, sizeof fl, "%s", b->flag);
        snprintf(said, sizeof said, "%.60s%c%lld", fl[0] ? fl : "the flag", sep == '=' ? '=' : ' ',
                 B);
        snprintf(c->batch_other, sizeof c->batch_other, "%s", fl);
        c->batch_other_v = B;
        snprintf(where, sizeof where,
                 "B = %lld sequences: %lld \u00d7 %s, the sequences the width-%lld blocks saw in "
                 "the first forward (%lld tokens over T = %lld): the flag is the micro-batch, each "
                 "of its samples %lld sequences in the forward",
                 S, k, said, d, N, Tp, k);
        config_from_trace(b, S, where);
        snprintf(b->flag, sizeof b->flag, "%s", fl); /* (the what-ifs spelled through it, / k) */
        b->flag_sep = sep;
        c->batch_per = (int)k;
    }
    return 1;
}

void model_seq_flag(nano_config *c, const run_facts *f)
{
    /* a longest T its batches never reached */
    model_seq_short(c, f);
    /* ... or a length the blocks never saw: T and B from their own tensors */
    model_seq_encoder(c, f);
}

int model_seq_either(nano_config *c, const run_facts *f, long long n, long long T)
{
    config_value *b = &c->v[CFG_batch_size];
    long long now = (long long)f->tokens_now;
    if (n <= 0 || T <= 0 || b->i <= 0 || n % b->i || n >= now)
        return 0;
    size_t w = strlen(b->where);
    snprintf(b->where + w, sizeof b->where - w,
             "; the tokens per step changed during the run: %lld in its first forward (its token "
             "batch), %lld at the moment explained: its micro-batch (%lld, then %lld at T = %lld) "
             "or its T (%lld, then %lld at the micro-batch %lld) changed, and the trace does not "
             "tell which",
             n, now, n / T, b->i, T, n / b->i, T, b->i);
    return 1;
}

void model_seq_unknown(nano_config *c, const run_facts *f)
{
    const infer_result *ir = f->inferred;
    config_value *b = &c->v[CFG_batch_size], *t = &c->v[CFG_block_size];
    /* (an out-of-memory error the program caught and went on from, or a later attempt's: its
     * batch is read with the attempt's own position ids, replay_went_on.c) */
    if (!ir || !ir->v[INFER_tokens].known || ir->tokens_eval || b->src != CONFIG_SRC_TRACE ||
        t->src == CONFIG_SRC_UNKNOWN || t->i <= 0 || b->i <= 0 || f->oom_recovered ||
        f->oom_went_on || f->oom_first_batch)
        return;
    long long n = ir->v[INFER_tokens].value, now = (long long)f->tokens_now, T = t->i, b0 = b->i;
    if (n != b0 * T || now <= 0 || now == n)
        return;
    char readings[160] = "", where[360];
    int k = 0;
    if (now % T == 0)
        k += snprintf(readings, sizeof readings, "B = %lld at T = %lld", now / T, T);
    if (now % b0 == 0)
        snprintf(readings + k, sizeof readings - (size_t)k, "%sT = %lld at B = %lld",
                 k ? ", or " : "", now / b0, b0);
    snprintf(where, sizeof where,
             "%lld in its first forward (its token batch, %lld tokens over T = %lld), and at the "
             "moment explained the token batch holds %lld: the micro-batch or T changed during "
             "the run (%s), and the trace does not tell which",
             b0, n, T, now, readings[0] ? readings : "neither divides them");
    char was[128];
    size_t wn = strcspn(t->where, "(:");
    while (wn > 0 && t->where[wn - 1] == ' ')
        wn--;
    snprintf(was, sizeof was, "%.*s", (int)wn, t->where);
    memset(b, 0, sizeof *b); /* (as config_forget_defaults leaves a key: no value to scale) */
    b->src = CONFIG_SRC_UNKNOWN;
    snprintf(b->where, sizeof b->where, "%s", where);
    memset(t, 0, sizeof *t);
    t->src = CONFIG_SRC_UNKNOWN;
    snprintf(t->where, sizeof t->where,
             "%.100s in its first forward; the moment explained's token batch holds "
             "%lld tokens (%s), and no batch flag tells whether its micro-batch or its T changed",
             was, now, readings[0] ? readings : "neither divides them");
}

void model_seq_cause(const nano_config *c, char *out, size_t len)
{
    const config_value *b = &c->v[CFG_batch_size], *t = &c->v[CFG_block_size];
    out[0] = '\0';
    if (!c->t_first || t->i <= 0 || t->i == c->t_first)
        return;
    char said[200];
    int k = snprintf(said, sizeof said,
                     "; T changed during the run: %lld at the failure, %lld in the first forward, "
                     "the micro-batch %lld in both (token batches of %lld and %lld)",
                     t->i, c->t_first, b->i, c->t_now_tokens, c->t_first_tokens);
    if (k > 0 && (size_t)k < len) /* (whole or not at all) */
        memcpy(out, said, (size_t)k + 1);
}
