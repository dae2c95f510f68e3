/* infer_tokens.c — the token batch (infer_pass.h): which int64 tensor is the program's B·T
 * tokens (the one its embedding lookup follows), T from the position ids or a position embedding,
 * B from the two; the weights, layers and width are infer.c's and infer_weights.c's. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "infer_pass.h"

/* vt__batch_from: where the run of B·T·8-byte tensors that ends the kept prefix begins (the token
 * batch and its targets the training loop kept alive; *end: the prefix's end), *end when none.
 * A copy of the weights ends it (an EMA of fp32 master weights whose last norm's weight and bias,
 * 512 fp32 each, are the size of 256 int64 tokens: counted as three more batches). The program's
 * own inputs its stacks tell (made or copied onto the device by its line, outside a module's
 * __init__ or .to()) are of the run whatever their size: a retriever's query and passage token
 * batches, B×32 and 8B×128 int64, before its targets arange(B) (the batch read) had been
 * counted as weights, 294912 elements over the program's 217780224. */
size_t vt__batch_from(const vt__pass *p, uint64_t bt, size_t *end)
{
    size_t e = 0, from;
    while (e < p->n && p->t[e].kept)
        e++;
    for (from = e;
         bt && from > 0 && !p->t[from - 1].copy &&
         (p->t[from - 1].size == bt * 8 || (p->t[from - 1].input && !p->t[from - 1].init));)
        from--;
    *end = e;
    return from;
}

/* vt__embeds: the index after i of the embedding lookup of n tokens of width d (n·d elements of
 * 2 or 4 bytes within VT_EMBED_GAP allocations), or 0 when there is none. */
size_t vt__embeds(const vt__pass *p, size_t i, uint64_t n, uint64_t d)
{
    uint64_t two, four;
    if (!d || __builtin_mul_overflow(n, d * 2, &two) || __builtin_mul_overflow(n, d * 4, &four))
        return 0;
    for (size_t j = i + 1; j < p->n && j <= i + VT_EMBED_GAP; j++)
        if (p->t[j].early && (p->t[j].size == two || p->t[j].size == four))
            return j;
    return 0;
}

/* vt__token_batch: N = B·T, the int64 token batch of the first forward: an int64-sized tensor
 * (N·8 B; kept alive by the training loop or not), whose embedding lookup, N·d elements of 2 or 4
 * bytes, comes within a few allocations after it, put on the device by the loop (a tensor a
 * module's forward made is none: BERT's ones(B, T) fp32 attention mask, B·T·4 bytes, has the size
 * of a batch of half its tokens), nor a module's weight (vt__input_may: BERT's 2×d token-type
 * table, 6144 B, had passed for 768 tokens in a trace cut before the logits, T = 48 where the
 * run had 512), nor a copy of the weights (an fp32 master bias of 4096 elements, 16384 B, before
 * the next master weight of 2048×1024 16-bit elements' bytes had been 2048 tokens). *at its
 * index. 0 when there is none (no token input: an image model). */
static uint64_t vt__token_batch(const vt__pass *p, uint64_t d, uint64_t V, size_t *at)
{
    if (p->at_oom && p->oom_bt) {
        *at = p->oom_at; /* not the first tensor of its size: that can be a weight or buffer */
        return p->oom_bt;
    }
    /* the logits, when the vocabulary is known: the largest tensor of the first forward that
     * is a multiple of V, N·V of 2 or 4 bytes, with its int64 batch of N·8 bytes before it */
    size_t li = p->n;
    /* (not autocast's 16-bit copy of the V×d head over fp32 weights: 2·V·d B, larger than the
     * fp32 logits when B·T < d / 2, GPT-2 at B=1, T=64) */
    uint64_t head16 = vt__elem(p) == 4 ? vt__mul(vt__mul(V, d), 2) : 0;
    for (size_t i = 0; V && i < p->n; i++)
        if (p->t[i].early && !p->t[i].kept && !p->t[i].workspace && p->t[i].size % V == 0 &&
            p->t[i].size != head16 && (li == p->n || p->t[i].size > p->t[li].size))
            li = i;
    /* eager keeps an fp32 copy (4 B, the largest), compile the 16-bit logits (2 B): first the
     * batch whose embedding lookup follows it (eager), then any batch before the logits */
    for (int pass = 0; li < p->n && pass < 2; pass++)
        for (int k = 0; k < 2; k++) {
            uint64_t b = (pass == 0) == (k == 0) ? 4 : 2, vb = vt__mul(V, b);
            if (!vb || p->t[li].size % vb)
                continue;
            uint64_t n = p->t[li].size / vb;
            for (size_t i = 0; i < li; i++)
                if (p->t[i].early && p->t[i].size == n * 8 && p->t[i].made != INFER_MADE_FORWARD &&
                    vt__input_may(&p->t[i]) && !p->t[i].copy &&
                    (pass == 1 || vt__embeds(p, i, n, d))) {
                    *at = i;
                    return n;
                }
        }
    /* a token batch is looked up in an embedding: no vocabulary, no tokens (an image model).
     * With no logits to say its size (a run cut in its first forward) and no stack to tell a
     * weight from the program's batch, none: two weights in a row pass for a batch and its
     * lookup (--stacks none: GPT-2's 4·d fp32 MLP bias before the next block's d×d weight had
     * been 1536 tokens; after the blocks, BERT's 3072-byte head bias before a forward tensor
     * had been 384, T = 24) */
    for (size_t i = 0; d && V && !p->unmade && i < p->n; i++) {
        if (!p->t[i].early || p->t[i].size % 8 || p->t[i].size < 16 ||
            p->t[i].made == INFER_MADE_FORWARD || !vt__input_may(&p->t[i]) || p->t[i].copy)
            continue;
        uint64_t n = p->t[i].size / 8;
        if (!vt__embeds(p, i, n, d))
            continue;
        *at = i;
        return n;
    }
    return 0;
}

/* vt__lm_logits: whether the model makes logits over its vocabulary at all (INFER_lm_logits).
 * Made (1): the logits found (dt: their bytes per element), or the allocation an out-of-memory
 * error refused in the first forward was B·T×V. None (0): the first forward ended (a backward
 * followed) and none of its tensors is made of V-element rows: an encoder classifier's V×d
 * table (XLM-R's 250002×768) is looked up, never an output layer (its head 768×3), and no
 * B·T×V logits were made. Any tensor of V-element rows, kept ones too (a compiled run's 16-bit
 * logits the loop holds), but the weights and the program's batch (kept, made outside a
 * forward), leaves it unknown; so does a run recorded without Python frames (a weight is not
 * told from the rest) and a forward cut by an error. */
static void vt__lm_logits(const vt__pass *p, uint64_t bt, uint64_t V, int dt, infer_result *out)
{
    uint64_t btv = vt__mul(bt, V), btv2 = vt__mul(btv, 2), btv4 = vt__mul(btv, 4);
    if (!btv4)
        return;
    if (dt) {
        vt__set(out, INFER_lm_logits, 1, "B·T×V logits in the first forward");
        return;
    }
    if (p->at_oom && !p->seen_backward && (p->oom_size == btv2 || p->oom_size == btv4)) {
        vt__set(out, INFER_lm_logits, 1,
                "the allocation that failed in the first forward, %llu B, is B·T×V logits",
                (unsigned long long)p->oom_size);
        return;
    }
    if (!p->seen_backward || p->unmade)
        return;
    for (size_t i = 0; i < p->n; i++)
        if (p->t[i].early && !p->t[i].workspace && p->t[i].size >= 2 * V && p->t[i].size % V == 0 &&
            !(p->t[i].kept && p->t[i].made != INFER_MADE_FORWARD))
            return;
    vt__set(out, INFER_lm_logits, 0,
            "no tensor of the first forward, which a backward followed, is made of %llu-element "
            "rows: no B·T×V logits, the %llu×d table an input embedding only",
            (unsigned long long)V, (unsigned long long)V);
    infer_value *u = &out->v[INFER_untied_head];
    if (u->known && !u->value) /* no head: none tied to the embedding either */
        memset(u, 0, sizeof *u);
}

/* set_in: v known, its value and where (printf-style), as vt__set does a key's */
static void set_in(infer_value *v, int64_t value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_in(infer_value *v, int64_t value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    v->known = 1, v->value = value;
    vsnprintf(v->where, sizeof v->where, fmt, ap);
    va_end(ap);
}

/* second_tokens: out->second_tokens (infer.h): a second int64 batch of the program's, n = B·T'
 * tokens (another count than the first batch's bt), whose embedding lookup (n·d elements of 2 or 4
 * bytes, made by a forward) comes after the first batch's (at emb): a T5's decoder input, B×128
 * beside its encoder's B×512, looked up when the encoder has run (its labels, the same size, are
 * never looked up: either says n). Of the candidates (put on the device before that lookup) the
 * one looked up first. */
static void second_tokens(const vt__pass *p, size_t at, size_t emb, uint64_t bt, uint64_t d,
                          infer_result *out)
{
    size_t best = p->n, bi = 0;
    if (!emb || !d)
        return;
    for (size_t i = 0; i < p->n; i++) {
        const vt__tensor *t = &p->t[i];
        uint64_t n = t->size / 8;
        /* (the program's own inputs where its stack says so: without Python frames every
         * weight could pass for one) */
        if (i >= emb || i == at || !t->early || t->size % 8 || n == bt || n < 2 || t->copy ||
            t->made == INFER_MADE_FORWARD || t->made == INFER_MADE_UNKNOWN || !vt__input_may(t) ||
            (best < p->n && p->t[bi].size == t->size))
            continue;
        for (size_t j = emb + 1; j < p->n && j < best; j++)
            if (p->t[j].early && p->t[j].made == INFER_MADE_FORWARD && !p->t[j].cast &&
                (p->t[j].size == vt__mul(n, d * 2) || p->t[j].size == vt__mul(n, d * 4))) {
                best = j, bi = i;
                break;
            }
    }
    if (best == p->n)
        return;
    uint64_t n = p->t[bi].size / 8;
    set_in(&out->second_tokens, (int64_t)n,
           "B·T' = %llu: a second int64 token batch (%llu B) looked up (B·T'×d) after the first "
           "batch's lookup in the first forward",
           (unsigned long long)n, (unsigned long long)n * 8);
}

/* B·T from the token batch; T from the positions (arange(T) int64 between the batch and a few
 * allocations after its embedding lookup: nanoGPT's pos, transformers' cache_position), else from a
 * position embedding whose rows divide B·T (a model's maximum context, said so); the logits (B·T×V,
 * 2 or 4 B) confirm. */
void vt__infer_tokens(const vt__pass *p, const uint64_t *elems, size_t nelems, size_t lo, size_t hi,
                      infer_result *out)
{
    if (!out->v[INFER_n_embd].known || p->img_b)
        return; /* an image batch: no tokens */
    uint64_t d = (uint64_t)out->v[INFER_n_embd].value;
    uint64_t V = out->v[INFER_vocab_size].known ? (uint64_t)out->v[INFER_vocab_size].value : 0;
    size_t at = 0;
    uint64_t bt = vt__token_batch(p, d, V, &at);
    if (!bt)
        return;
    /* the logits: the largest tensor of the first forward, B·T·V of 2 or 4 bytes */
    int dt = 0, half = 0;
    size_t li = p->n;
    uint64_t btv = vt__mul(bt, V), btv2 = vt__mul(btv, 2), btv4 = vt__mul(btv, 4);
    for (size_t i = at; btv4 && i < p->n; i++) {
        uint64_t s = p->t[i].size;
        if (!p->t[i].early || p->t[i].kept || s % V)
            continue;
        half |= s == btv2;
        if ((s == btv2 || s == btv4) && (li == p->n || s > p->t[li].size))
            li = i, dt = (int)(s / btv);
    }
    if (dt)
        vt__set(out, INFER_logits_dtype_bytes, half ? 2 : 4,
                half ? "16-bit logits B·T×V in the first forward (16-bit compute)"
                     : "the logits B·T×V of the first forward are fp32 only");
    vt__lm_logits(p, bt, V, dt, out);
    /* the token batch (and targets) the training loop kept alive end the parameters' prefix:
     * the program made them after the model. Only that last run of B·T·8-byte tensors (and the
     * program's own inputs among them, vt__batch_from) is left out: one of that size among the
     * weights is the model's (LoRA's rank-8 adapters of 8×1024 fp32 are 32768 B, as a batch of
     * 4·1024 int64 tokens is) */
    uint64_t batch_bytes = 0, other = 0;
    size_t end, from = vt__batch_from(p, bt, &end);
    for (size_t i = from; i < end; i++)
        if (!p->t[i].batch) { /* (data: counted out already) */
            batch_bytes += p->t[i].size;
            other += p->t[i].size != bt * 8;
        }
    infer_value *pv = &out->v[INFER_params];
    if (batch_bytes && pv->known && (uint64_t)pv->value * vt__elem(p) > batch_bytes) {
        pv->value -= (int64_t)(batch_bytes / vt__elem(p));
        size_t w = strlen(pv->where);
        snprintf(pv->where + w, sizeof pv->where - w, ", less the token batch%s (%llu B)",
                 other ? " and the program's other inputs kept beside it" : "",
                 (unsigned long long)batch_bytes);
    }
    size_t emb = vt__embeds(p, at, bt, d), stop = emb ? emb + 4 : at;
    second_tokens(p, at, emb, bt, d, out);
    /* an evaluation's batch (the loop's copy onto the device is no evaluation's: its lookup is) */
    out->tokens_eval = p->t[at].eval || (emb && p->t[emb].eval);
    out->tokens_stack = p->t[at].stack;
    out->tokens_lookup_stack = emb ? p->t[emb].stack : 0;
    vt__set(out, INFER_tokens, (int64_t)bt,
            "B·T = %llu: the int64 token batch (%llu B) before its embedding lookup%s%s",
            (unsigned long long)bt, (unsigned long long)bt * 8, dt ? ", and the logits B·T×V" : "",
            out->tokens_eval ? INFER_TOKENS_EVAL_SAID : "");
    /* T: arange(T) int64 after the batch (before the logits when there are some); as large as
     * the batch at B = 1 when the model's forward made it (not the loop's targets), within a
     * position embedding's rows where the model has one (an encoder's zeros(B, T) of token
     * types is no arange). (Made in a forward where the stack says: a Trainer's mask of the
     * batch's tokens, B·T bools, made before it, has the size of arange(B·T / 8); the rotary
     * positions' fp32 copy, T·4 bytes, that of arange(T / 2) after it. Where no stack says
     * who made it, none is read as the position ids: a stackless Trainer's GPT-2 had T = 512.
     * A cast is none: autocast's fp32 copy of a 16-bit norm's 2048 weights, 8192 B, had been
     * arange(1024).) */
    uint64_t T = 0, tmax = UINT64_MAX, tmin = UINT64_MAX;
    int how = 0, ntables = 0;
    /* a language model's position (and token type) tables come before its blocks, as its
     * embedding does; a table after them is a head's (a classifier's 2×d weight had been "the
     * trace's T = 2 from the position embedding 2×d") */
    size_t tables_end = hi > lo ? lo : nelems;
    for (size_t i = 0; i < tables_end; i++) {
        uint64_t rows = vt__pos_rows(elems, i, d, V, bt, lo, hi, vt__elem(p));
        if (rows) {
            tmax = tmax == UINT64_MAX || rows > tmax ? rows : tmax;
            tmin = rows < tmin ? rows : tmin;
            ntables++;
        }
    }
    /* the tables outside the blocks: one, a position embedding; two, BERT's positions and token
     * types (the smaller); more, not told apart */
    if (ntables == 1 || ntables == 2)
        vt__set(out, INFER_position_rows, (int64_t)tmax,
                "a %llu×d embedding outside the blocks, %s", (unsigned long long)tmax,
                ntables == 1 ? "the only one beside the vocabulary's" : "the larger of two");
    if (ntables == 2)
        vt__set(out, INFER_token_type_rows, (int64_t)tmin,
                "a %llu×d embedding outside the blocks, the smaller of two",
                (unsigned long long)tmin);
    for (size_t i = at + 1; i < p->n && i < li && i <= stop && !T; i++) {
        uint64_t s = p->t[i].size;
        if (emb && i > emb && s >= p->t[emb].size && !p->t[i].cast)
            break; /* the first block began (a norm's output): its fp32 rstd, B·T·4 bytes, is no
                    * arange(2·T) (an RMSNorm's at B = 4 had been read as T = 4096 for 2048) */
        int b1 = s == bt * 8 && p->t[i].made == INFER_MADE_FORWARD && bt <= tmax;
        if (p->t[i].early && !p->t[i].kept && !p->t[i].cast && (s < bt * 8 || b1) && s >= 64 &&
            s % 8 == 0 && (bt * 8) % s == 0 && p->t[i].made != INFER_MADE_ELSEWHERE && !p->unmade)
            T = s / 8, how = 1;
    }
    /* else a position embedding (T_max×d, outside the repeating block) whose rows divide B·T */
    for (size_t i = 0; !T && i < tables_end; i++) {
        uint64_t rows = vt__pos_rows(elems, i, d, V, bt, lo, hi, vt__elem(p));
        if (rows && bt % rows == 0)
            T = rows, how = 2;
    }
    if (!T)
        return;
    vt__set(out, INFER_block_size, (int64_t)T,
            how == 1 ? "T = %llu from the position ids (arange(T): %llu int64 after the batch)"
                     : "T = %llu from the position embedding %llu×d (the model's maximum context, "
                       "taken as the run's: it divides B·T)",
            (unsigned long long)T, (unsigned long long)T);
    vt__set(out, INFER_batch_size, (int64_t)(bt / T), "B = %llu: B·T = %llu over T = %llu",
            (unsigned long long)(bt / T), (unsigned long long)bt, (unsigned long long)T);
}

/* vt__looked_up: n when tensor i could be n int64 indices, their embedding lookup soon after
 * it (vt__embeds); else 0. A fused attention kernel's output is no index: its log-sum-exp rows,
 * B·H·T fp32, have the size of B·H·T/2 int64, whose lookup of d 2-byte elements each is the
 * size of an fp32 GPT-2's first MLP output after it, B·T·4d·4 B, when H = 16 (GPT-2 medium). */
uint64_t vt__looked_up(const vt__pass *p, size_t i, uint64_t d)
{
    uint64_t n = p->t[i].size / 8;
    return n && p->t[i].size % 8 == 0 && !p->t[i].attention && vt__embeds(p, i, n, d) ? n : 0;
}

void vt__train_tokens(const vt__pass *p, infer_result *out)
{
    const infer_value *dv = &out->v[INFER_n_embd], *vv = &out->v[INFER_vocab_size],
                      *lg = &out->v[INFER_logits_dtype_bytes];
    if ((!out->tokens_eval && out->v[INFER_tokens].known) || !dv->known || !vv->known ||
        dv->value <= 0 || vv->value <= 0)
        return;
    uint64_t d = (uint64_t)dv->value, V = (uint64_t)vv->value;
    size_t e = p->n, end = 0; /* the pass's last tensor before any backward, the first not early */
    while (end < p->n && p->t[end].early)
        e = p->t[end].eval ? end : e, end++;
    if (e == p->n)
        return;
    /* the forward's logits: the largest of its tensors made of V-element rows (not a weight's:
     * none is made after the pass) */
    size_t li = p->n;
    for (size_t i = e + 1; i < end; i++)
        if (!p->t[i].eval && !p->t[i].kept && !p->t[i].workspace && p->t[i].size % V == 0 &&
            p->t[i].size / V >= 2 && (li == p->n || p->t[i].size > p->t[li].size))
            li = i;
    if (li == p->n)
        return;
    /* 4 bytes an element where the 16-bit logits (half its size) are beside it: their fp32 copy
     * (eager); else the element the first reading's logits had */
    uint64_t L = p->t[li].size, b = 0;
    for (size_t i = e + 1; i < li && !b; i++)
        b = !p->t[i].eval && p->t[i].size * 2 == L ? 4 : 0;
    if (!b && lg->known && (lg->value == 2 || lg->value == 4))
        b = (uint64_t)lg->value;
    if (!b || L % vt__mul(V, b))
        return;
    uint64_t n = L / (V * b);
    size_t emb = 0; /* its embedding lookup before them: n·d elements of 2 or 4 bytes */
    for (size_t i = e + 1; i < li && !emb; i++)
        emb = !p->t[i].eval &&
                      (p->t[i].size == vt__mul(n, d * 2) || p->t[i].size == vt__mul(n, d * 4))
                  ? i
                  : 0;
    if (!emb)
        return;
    set_in(&out->train_tokens, (int64_t)n,
           "B·T = %llu: the logits B·T×V (%llu B) of the first training forward after the "
           "no-grad pass, its embedding lookup of B·T×d before them (its token batch a slice of "
           "another tensor: none of its own)",
           (unsigned long long)n, (unsigned long long)L);
    out->train_after_stack = p->t[e].stack;
    vt__train_heads(p, e + 1, n, out);
}
