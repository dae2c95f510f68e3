/* infer.c — the model and the step from the trace's own tensors (infer.h): parameters are
 * the tensors allocated before the first backward and alive to the end; layers from the
 * repeating block in their allocation order; width, vocabulary; B·T from the logits. */
#include "infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
#define VT_INFER_NAME(k, doc) #k,
    VT_INFER_KEYS(VT_INFER_NAME)
#undef VT_INFER_NAME
};

/* One tensor as the pass sees it. */
typedef struct vt__tensor {
    uint64_t addr, size;
    int early; /* allocated before the first backward */
    int live;
    int kept; /* alive right after the first backward (or at an OOM before it) */
} vt__tensor;

typedef struct vt__pass {
    vt__tensor *t;
    size_t n, cap;
    int seen_backward;
    int snapped;     /* kept is set */
    int at_oom;      /* ... at an out-of-memory failure before the first backward */
    uint64_t oom_bt; /* then: B·T of the token batch found there (vt__trim_oom), 0 = none */
} vt__pass;

static int vt__push(vt__pass *p, uint64_t addr, uint64_t size)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        vt__tensor *t = realloc(p->t, cap * sizeof *t);
        if (!t)
            return -1;
        p->t = t;
        p->cap = cap;
    }
    p->t[p->n++] = (vt__tensor){addr, size, !p->seen_backward, 1, 0};
    return 0;
}

/* vt__free: the newest live tensor at addr dies (searching back; early tensors are few and
 * recent frees are near the end). Only the early ones matter, so later ones are not kept. */
static void vt__free(vt__pass *p, uint64_t addr)
{
    for (size_t i = p->n; i-- > 0;)
        if (p->t[i].live && p->t[i].addr == addr) {
            p->t[i].live = 0;
            return;
        }
}

/* vt__snap: parameters are the prefix of allocations before the first tensor that died (the
 * forward's first temporary), those still alive now: after the first backward, or at an
 * out-of-memory failure that came before any (at_oom; vt__trim_oom then cuts the forward's first
 * tensors, still alive there, off that prefix). */
static void vt__snap(vt__pass *p, int at_oom)
{
    p->snapped = 1;
    p->at_oom = at_oom;
    size_t i = 0;
    while (i < p->n && p->t[i].live)
        p->t[i].kept = 1, i++;
}

static void vt__set(infer_result *out, infer_key k, int64_t v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static void vt__set(infer_result *out, infer_key k, int64_t v, const char *fmt, ...)
{
    va_list ap;
    out->v[k].known = 1;
    out->v[k].value = v;
    va_start(ap, fmt);
    vsnprintf(out->v[k].where, sizeof out->v[k].where, fmt, ap);
    va_end(ap);
}

/* vt__block: the longest run of a repeating size pattern in seq (period up to 64); *period
 * *repeats and where it *start(s); 0 when nothing repeats. */
static void vt__block(const uint64_t *seq, size_t n, size_t *period, size_t *repeats, size_t *start)
{
    size_t best = 0;
    *period = *repeats = *start = 0;
    for (size_t p = 2; p <= 64 && p < n; p++)
        for (size_t s = 0; s + p < n; s++) {
            size_t k = 0;
            while (s + k + p < n && seq[s + k] == seq[s + k + p])
                k++;
            size_t r = 1 + k / p;
            if (r >= 2 && r * p > best) {
                best = r * p;
                *period = p;
                *repeats = r;
                *start = s;
            }
        }
}

static void vt__infer_params(const vt__pass *p, infer_result *out, uint64_t *elems, size_t *nelems,
                             size_t *lo, size_t *hi)
{
    uint64_t bytes = 0, maxel = 0;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->t[i].early && p->t[i].kept && p->t[i].size % 4 == 0) {
            bytes += p->t[i].size;
            elems[n++] = p->t[i].size / 4;
        }
    *nelems = n;
    if (n < 4)
        return;
    vt__set(out, INFER_params, (int64_t)(bytes / 4),
            "%zu tensors allocated before the first temporary and alive %s, %llu B at 4 B each "
            "(fp32 master weights assumed)",
            n, p->at_oom ? "at the out-of-memory failure" : "after the first backward",
            (unsigned long long)bytes);
    vt__set(out, INFER_param_dtype_bytes, 4, "assumed: fp32 parameters (AMP keeps them fp32)");
    size_t per, reps;
    vt__block(elems, n, &per, &reps, lo);
    *hi = *lo + per * reps;
    if (reps >= 2)
        vt__set(out, INFER_n_layer, (int64_t)reps,
                "L = %zu: a block of %zu parameter tensors repeats %zu times", reps, per, reps);
    /* width: the smallest size found at least once per block whose square divides some
     * parameter (norm weights / biases are d elements, projections k·d²) */
    uint64_t d = 0;
    size_t dn = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0, sq = 0;
        if (elems[i] > maxel)
            maxel = elems[i];
        for (size_t j = 0; j < n; j++) {
            c += elems[j] == elems[i];
            sq |= elems[i] > 1 && elems[j] % (elems[i] * elems[i]) == 0;
        }
        if (reps >= 2 && c >= reps && sq && (!d || elems[i] < d)) {
            d = elems[i];
            dn = c;
        }
    }
    if (d)
        vt__set(out, INFER_n_embd, (int64_t)d,
                "d = %llu: the smallest parameter size seen in "
                "every block (%zu norm weights / biases), d² divides the projections",
                (unsigned long long)d, dn);
    /* biases: a block's d-sized tensors are its two norms' weights, plus with biases the norms'
     * biases and the two output projections' (6: nanoGPT bias=True, Hugging Face GPT-2) */
    size_t nd = 0;
    for (size_t i = *lo; d && reps >= 2 && i < *lo + per && i < n; i++)
        nd += elems[i] == d;
    if (nd == 2 || nd >= 4)
        vt__set(out, INFER_bias, nd >= 4, "bias %s: %zu tensors of d elements in each block (%s)",
                nd >= 4 ? "True" : "False", nd,
                nd >= 4 ? "norm weights, norm and projection biases" : "the norms' weights only");
    if (d && maxel % d == 0 && maxel / d > d)
        vt__set(out, INFER_vocab_size, (int64_t)(maxel / d),
                "V = %llu from the largest parameter, %llu×%llu (embedding / head)",
                (unsigned long long)(maxel / d), (unsigned long long)(maxel / d),
                (unsigned long long)d);
}

/* B·T from the logits: the largest tensor of the first forward is B·T·V elements (2 or 4 B);
 * the int64 token input of B·T·8 B, allocated earlier, decides which. */
static void vt__infer_tokens(const vt__pass *p, const uint64_t *elems, size_t nelems, size_t lo,
                             size_t hi, infer_result *out)
{
    if (!out->v[INFER_vocab_size].known)
        return;
    uint64_t V = (uint64_t)out->v[INFER_vocab_size].value, d = (uint64_t)out->v[INFER_n_embd].value;
    uint64_t logits = 0;
    size_t li = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->t[i].early && !p->t[i].kept && p->t[i].size > logits && p->t[i].size % V == 0)
            logits = p->t[i].size, li = i;
    /* 2- or 4-byte logits: the one whose int64 input (B·T·8 B) comes first before them */
    uint64_t bt = 0;
    int dt = 0;
    size_t at = li;
    for (int b = 2; b <= 4; b += 2) {
        if (!logits || logits % (V * b))
            continue;
        uint64_t n = logits / (V * b);
        if (p->at_oom && n != p->oom_bt)
            continue; /* died in the forward: only logits of the batch found there count */
        for (size_t i = 0; i < at; i++)
            if (p->t[i].early && p->t[i].size == n * 8) {
                bt = n, dt = b, at = i;
                break;
            }
    }
    if (!bt)
        return;
    /* the position ids follow the last input-sized tensor before the logits */
    for (size_t i = at; i < li; i++)
        if (p->t[i].early && p->t[i].size == bt * 8)
            at = i;
    /* T: the position embedding T×d (a parameter outside the repeating block) when there
     * is one, else the position ids: the first smaller int64-sized tensor after the input
     * whose size divides it (arange(T)) */
    uint64_t T = 0;
    int wpe = 0;
    for (size_t i = 0; d && i < nelems && !T; i++) {
        uint64_t rows = elems[i] / d;
        if (elems[i] % d == 0 && rows != d && rows != V && rows >= 2 && bt % rows == 0 &&
            elems[i] * 4 != bt * 8 && (i < lo || i >= hi))
            T = rows, wpe = 1;
    }
    for (size_t i = at + 1; i < p->n && !T; i++) {
        uint64_t s = p->t[i].size;
        if (p->t[i].early && s < bt * 8 && s >= 64 && s % 8 == 0 && (bt * 8) % s == 0)
            T = s / 8;
    }
    if (T) {
        vt__set(out, INFER_block_size, (int64_t)T,
                wpe ? "T = %llu from the position embedding %llu×d"
                    : "T = %llu from the position ids (%llu int64 after the input)",
                (unsigned long long)T, (unsigned long long)T);
        vt__set(out, INFER_batch_size, (int64_t)(bt / T),
                "B·T = %llu from the int64 input tensor and the %d-byte logits B·T×%llu",
                (unsigned long long)bt, dt, (unsigned long long)V);
    }
}

/* vt__trim_oom: at an OOM in the first forward the prefix can also hold the token batch and the
 * forward's first outputs (alive there). The batch is the int64 tensor of B·T·8 bytes whose
 * embedding lookup, B·T·d elements of 2 or 4 bytes, comes soon after it: the prefix ends before
 * the batch. No such pair: the prefix is not trusted (nothing inferred), never guessed. */
#define VT_OOM_TAIL_MAX 16
static void vt__trim_oom(vt__pass *p, uint64_t *elems)
{
    infer_result tmp;
    size_t n = 0, lo = 0, hi = 0, kept = 0;
    memset(&tmp, 0, sizeof tmp);
    vt__infer_params(p, &tmp, elems, &n, &lo, &hi);
    while (kept < p->n && p->t[kept].kept)
        kept++;
    uint64_t d = tmp.v[INFER_n_embd].known ? (uint64_t)tmp.v[INFER_n_embd].value : 0;
    size_t cut = kept;
    /* from the end: the batch comes after the weights, and only a few of the forward's tensors
     * (before its first temporary died) follow it */
    for (size_t i = kept; d && i-- > 0 && kept - i <= VT_OOM_TAIL_MAX && cut == kept;) {
        uint64_t bt = p->t[i].size / 8;
        if (!bt || p->t[i].size % 8)
            continue;
        for (size_t j = i + 1; j < p->n && j <= i + VT_OOM_TAIL_MAX; j++)
            if (p->t[j].size == bt * d * 4 || p->t[j].size == bt * d * 2) {
                cut = i;
                break;
            }
    }
    p->oom_bt = cut < kept ? p->t[cut].size / 8 : 0;
    for (size_t i = cut == kept ? 0 : cut; i < kept; i++)
        p->t[i].kept = 0;
}

int infer_model(const char *path, infer_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    reader *r = reader_open(path, err, errlen);
    if (!r)
        return -1;
    vt__pass p = {0};
    reader_record rec;
    int rc = 0;
    while (rc == 0 && reader_next(r, &rec)) {
        if (rec.type == VT_REC_ALLOC && rec.u.ev.api == VT_API_torchAlloc && !rec.u.ev.failed) {
            if (rec.u.ev.backward)
                p.seen_backward = 1;
            else if (p.seen_backward && !p.snapped)
                vt__snap(&p, 0); /* the first backward is over: what lives outlived it */
            if (!p.seen_backward)
                rc = vt__push(&p, rec.u.ev.addr, rec.u.ev.size);
        } else if (rec.type == VT_REC_ALLOC && !p.snapped &&
                   (rec.u.ev.api == VT_API_torchOom ||
                    (rec.u.ev.failed && reader_api_kind(rec.u.ev.api) == VT_KIND_ALLOC))) {
            vt__snap(&p, 1); /* out of memory in the first forward or backward */
        } else if (rec.type == VT_REC_FREE && rec.u.ev.api == VT_API_torchFree) {
            vt__free(&p, rec.u.ev.addr);
        }
    }
    reader_close(r);
    if (rc) {
        free(p.t);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    uint64_t *elems = malloc((p.n + 1) * sizeof *elems);
    if (elems && p.at_oom)
        vt__trim_oom(&p, elems);
    if (elems) {
        size_t n = 0, lo = 0, hi = 0;
        vt__infer_params(&p, out, elems, &n, &lo, &hi);
        vt__infer_tokens(&p, elems, n, lo, hi, out);
    }
    free(elems);
    free(p.t);
    return 0;
}

const char *infer_key_name(infer_key k)
{
    return (unsigned)k < INFER_COUNT ? names[k] : "?";
}
