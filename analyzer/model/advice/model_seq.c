/* model_seq.c — T, not B, where the tokens per step changed during the run (model_seq.h). The
 * trace keeps the token batch of each forward (B·T int64) and the activations (B·T·d); neither
 * separates B from T. What does: the batch flag, where it ran the first forward and divides the
 * later tokens (a micro-batch ramp's flag is its later steps', not its first's); without it, both
 * readings are said. */
#include "model_seq.h"

#include <stdio.h>
#include <string.h>

/* set_from_trace: v's value from the trace, where said; the flag that carried nothing */
static void set_from_trace(config_value *v, long long i, const char *where)
{
    v->i = i;
    v->src = CONFIG_SRC_TRACE;
    v->flag[0] = '\0';
    v->flag_sep = 0;
    v->call[0] = '\0';
    snprintf(v->where, sizeof v->where, "%.*s", (int)sizeof v->where - 1, where);
}

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
    set_from_trace(&c->v[CFG_block_size], tn, where);
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
    set_from_trace(t, now / B, where);
    return 1;
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
