/* infer_weights.c — what the weights say (infer_pass.h): the parameters made before the first
 * temporary, the repeating block (L), the width d, biases, the vocabulary and whether the head
 * is tied, a gated MLP's width and grouped key / value; infer.c's pass gathers them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_pass.h"

void vt__set(infer_result *out, infer_key k, int64_t v, const char *fmt, ...)
{
    va_list ap;
    out->v[k].known = 1;
    out->v[k].value = v;
    va_start(ap, fmt);
    vsnprintf(out->v[k].where, sizeof out->v[k].where, fmt, ap);
    va_end(ap);
}

/* vt__infer_gated: a gated MLP (Llama, Mistral, Qwen: gate, up and down, three d×I matrices in
 * each block; no other transformer's block has three of a size that is a multiple of d, not d²:
 * GPT-2's and BERT's MLPs are two of 4d²), and grouped-query attention's key and value (two
 * d×w matrices, w < d) */
static void vt__infer_gated(const uint64_t *elems, size_t n, size_t lo, size_t per, size_t reps,
                            uint64_t d, infer_result *out)
{
    if (!d || reps < 2 || per < 7 || lo + per > n || d > (1u << 20))
        return;
    uint64_t I = 0, w = 0;
    for (size_t i = lo; i < lo + per; i++) {
        uint64_t s = elems[i];
        if (s % d || s == d || s == d * d)
            continue;
        size_t c = 0;
        for (size_t j = lo; j < lo + per; j++)
            c += elems[j] == s;
        if (c == 3)
            I = s / d;
        else if (c == 2 && s < d * d && s / d > w) /* the widest pair: LoRA's B of the key and
                                                    * value, w×r each, is a pair too (w·r/d) */
            w = s / d;
    }
    if (!I)
        return;
    vt__set(out, INFER_mlp_width, (int64_t)I,
            "I = %llu: three %llu×%llu matrices in each block (a gated MLP: gate, up, down)",
            (unsigned long long)I, (unsigned long long)d, (unsigned long long)I);
    if (w)
        vt__set(out, INFER_kv_width, (int64_t)w,
                "%llu: the key and value projections are %llu×%llu (grouped-query attention)",
                (unsigned long long)w, (unsigned long long)d, (unsigned long long)w);
}

/* vt__seen_before: elems[i] is among elems[from..i) (a size looked at already) */
static int vt__seen_before(const uint64_t *elems, size_t from, size_t i)
{
    while (from < i && elems[from] != elems[i])
        from++;
    return from < i;
}

/* vt__width: the width d of the weights elems[0..n) whose repeating blocks, reps of them, lie in
 * [lo, hi): the smallest size found at least once per block whose square is a parameter of the
 * blocks (an attention's d×d output projection; the token batch kept among the weights is
 * none), else (*d 0) whose square divides one (norm weights / biases are d elements,
 * projections k·d²; *d_div): a grouped key and value's biases (Qwen2: kv of them, kv < d, kv²
 * dividing d²) are no width. *dn, *dn_div: how many tensors of that size. */
static void vt__width(const uint64_t *elems, size_t n, size_t lo, size_t hi, size_t reps,
                      uint64_t *dp, size_t *dnp, uint64_t *d_divp, size_t *dn_divp)
{
    uint64_t d = 0, d_div = 0;
    size_t dn = 0, dn_div = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0, sq = 0, eq = 0;
        if (vt__seen_before(elems, 0, i)) /* a size seen before gives what it gave then */
            continue;
        uint64_t square; /* a parameter of 2^32 elements or more has no square to test */
        int big = __builtin_mul_overflow(elems[i], elems[i], &square);
        for (size_t j = 0; j < n; j++) {
            c += elems[j] == elems[i];
            /* (more than 4: a BatchNorm's int64 num_batches_tracked, 8 bytes in every block of
             * a CNN, is 2 or 4 elements at any reading, and had made a VGG16-BN a ViT of d = 2) */
            sq |= !big && elems[i] > 4 && elems[j] % square == 0;
            eq |= !big && elems[i] > 1 && elems[j] == square && j >= lo && j < hi;
        }
        if (!reps || c < reps || !sq) /* (reps 1: weights taken as one block) */
            continue;
        if (eq && (!d || elems[i] < d))
            d = elems[i], dn = c;
        if (!d_div || elems[i] < d_div)
            d_div = elems[i], dn_div = c;
    }
    *dp = d, *dnp = dn, *d_divp = d_div, *dn_divp = dn_div;
}

/* vt__trained: the block of per weights at elems[lo] got gradients: half or more of its sizes
 * (each counted once) are sizes the first backward made */
static int vt__trained(const vt__pass *p, const uint64_t *elems, size_t lo, size_t per)
{
    size_t distinct = 0, with = 0;
    for (size_t i = lo; i < lo + per; i++) {
        if (vt__seen_before(elems, lo, i))
            continue;
        distinct++;
        with += vt__grad_has(p, vt__mul(elems[i], vt__elem(p)));
    }
    return distinct && 2 * with >= distinct;
}

/* vt__infer_shape: L, d, biases, V, a tied or untied head and a gated MLP from the weights
 * elems[0..n) (the trained model's; frozen > 0: another model's frozen blocks, that many, lie
 * beside them, said; same: a second model of these very blocks, one of the two frozen); *lo,
 * *hi: its repeating blocks */
static void vt__infer_shape(const uint64_t *elems, size_t n, size_t frozen, int same, int by_copies,
                            size_t untold, infer_result *out, size_t *lo, size_t *hi)
{
    uint64_t maxel = 0;
    size_t maxi = 0;
    size_t per, reps;
    vt__block(elems, n, &per, &reps, lo);
    *hi = *lo + per * reps;
    if (reps >= 2 && frozen && same) {
        vt__set(out, INFER_frozen_blocks, (int64_t)frozen,
                "%zu blocks of a second model of the same shape after the first one's: one of "
                "the two is frozen if the gradients' elements are half the weights' (a "
                "reference model); the sizes do not say which",
                frozen);
        vt__set(out, INFER_n_layer, (int64_t)reps,
                "L = %zu: a block of %zu parameter tensors repeats %zu times, in each of two "
                "models of the same shape",
                reps, per, reps);
    } else if (reps >= 2 && frozen) {
        /* told by the first backward's gradients, or by the 16-bit copies alive at an
         * out-of-memory failure before any backward (by_copies; 2: the other model's weights
         * had none made, freed or not: it had not run, a teacher run after the student) */
        const char *none = by_copies == 2 ? "16-bit copies was made before the out-of-memory "
                                            "failure, in the first forward (not run yet)"
                           : by_copies    ? "16-bit copies was alive at the out-of-memory "
                                            "failure, in the first forward (a frozen weight's is "
                                            "freed after use)"
                                          : "sizes got a gradient in the first backward",
                   *trained = by_copies ? "its weights' 16-bit copies kept for a backward"
                                        : "its weights got gradients",
                   *beside = by_copies == 2
                                 ? "had no copy made before the failure (not run yet: whether "
                                   "they train is not known)"
                             : by_copies ? "had theirs freed after use (frozen: a teacher or a "
                                           "reference model)"
                                         : "got none (frozen: a teacher or a reference model)";
        vt__set(out, INFER_frozen_blocks, (int64_t)frozen,
                "%zu blocks of another model, before or after the trained one's %zu: none of "
                "their weights' %s",
                frozen, reps, none);
        vt__set(out, INFER_n_layer, (int64_t)reps,
                "L = %zu: a block of %zu parameter tensors repeats %zu times in the model trained "
                "(%s); another model's %zu blocks beside it %s",
                reps, per, reps, trained, frozen, beside);
    } else if (untold) {
        /* the only repeating blocks took no gradient, the weights trained beside them repeat
         * none (a student of one block beside its teacher's 12: L, d and V had been the
         * teacher's) */
        vt__set(out, INFER_frozen_blocks, (int64_t)untold,
                "%zu blocks of another model beside the trained one: none of their weights' %s; "
                "the weights trained repeat no block of their own (one block, or none): their "
                "layers are not known",
                untold,
                by_copies ? "16-bit copies was alive at the out-of-memory failure, in the first "
                            "forward"
                          : "sizes got a gradient in the first backward");
    } else if (reps >= 2)
        vt__set(out, INFER_n_layer, (int64_t)reps,
                "L = %zu: a block of %zu parameter tensors repeats %zu times", reps, per, reps);
    uint64_t d, d_div;
    size_t dn, dn_div;
    /* (no repeating block among the weights trained: they are taken as one for the width) */
    vt__width(elems, n, untold ? 0 : *lo, untold ? n : *hi, untold ? 1 : reps, &d, &dn, &d_div,
              &dn_div);
    for (size_t i = 0; i < n; i++)
        if (elems[i] > maxel)
            maxel = elems[i], maxi = i;
    if (!d)
        d = d_div, dn = dn_div;
    if (untold && d && d == d_div) {
        vt__set(out, INFER_n_embd, (int64_t)d,
                "d = %llu: the smallest size among the weights trained (no repeating block) "
                "whose square is one of them (a d×d projection)",
                (unsigned long long)d);
    } else if (d && d != d_div)
        vt__set(out, INFER_n_embd, (int64_t)d,
                "d = %llu: the smallest size in every block (%zu norm weights / biases) whose "
                "square is a block's parameter (d×d); %zu of %llu (key / value biases) only "
                "divide one",
                (unsigned long long)d, dn, dn_div, (unsigned long long)d_div);
    else if (d)
        vt__set(out, INFER_n_embd, (int64_t)d,
                "d = %llu: the smallest parameter size seen in "
                "every block (%zu norm weights / biases), d² divides the projections",
                (unsigned long long)d, dn);
    /* the vocabulary: the largest parameter of a multiple of d elements, outside the repeating
     * blocks (an MLP's 4·d×d inside them is not an embedding; a vision model has none; a frozen
     * teacher's untied 32000×1024 head before a Llama 160M student's 32000×768 embedding is no
     * V×d: it had left V unknown, and with it the student's L and d) */
    uint64_t allmax = maxel;
    if (d)
        maxel = 0, maxi = 0;
    for (size_t i = 0; d && i < n; i++)
        if (elems[i] % d == 0 && elems[i] > maxel)
            maxel = elems[i], maxi = i;
    /* ... and a token embedding comes first among the weights (the tied or untied head of
     * the same size may come last): a classifier's head, last alone, is not one */
    size_t first_max = maxi;
    for (size_t i = 0; i < n; i++)
        if (elems[i] == maxel) {
            first_max = i;
            break;
        }
    if (d && maxel % d == 0 && maxel / d > d && (maxi < *lo || maxi >= *hi) && first_max < 4) {
        vt__set(out, INFER_vocab_size, (int64_t)(maxel / d),
                "V = %llu from the largest parameter%s, %llu×%llu (embedding / head)",
                (unsigned long long)(maxel / d), maxel < allmax ? " of d's multiples" : "",
                (unsigned long long)(maxel / d), (unsigned long long)d);
        size_t nv = 0; /* the embedding, and a head of its own after the blocks */
        for (size_t i = 0; i < n; i++)
            nv += elems[i] == maxel;
        if (nv <= 2)
            vt__set(out, INFER_untied_head, nv == 2,
                    nv == 2 ? "the head is a %llu×%llu tensor of its own (untied)"
                            : "one %llu×%llu tensor: the head is tied to the embedding",
                    (unsigned long long)(maxel / d), (unsigned long long)d);
    }
    vt__infer_gated(elems, n, *lo, per, reps, d, out);
    vt__infer_bias(elems, n, *lo, per, reps, d, out); /* (infer_bias.c) */
    if (untold) /* (the weights trained are one block: an MLP's 4d×d is no position table) */
        *lo = 0, *hi = n;
}

/* vt__own_square: among the weights outside elems[lo..hi) whose sizes got a gradient, one is the
 * square of another's element count (a d×d projection beside a d-element norm) */
static int vt__own_square(const vt__pass *p, const uint64_t *elems, size_t n, size_t lo, size_t hi)
{
    unsigned e = vt__elem(p);
    for (size_t i = 0; i < n; i++) {
        uint64_t sq;
        if ((i >= lo && i < hi) || elems[i] < 2 || !vt__grad_has(p, vt__mul(elems[i], e)) ||
            __builtin_mul_overflow(elems[i], elems[i], &sq))
            continue;
        for (size_t j = 0; j < n; j++)
            if ((j < lo || j >= hi) && elems[j] == sq && vt__grad_has(p, vt__mul(sq, e)))
                return 1;
    }
    return 0;
}

/* vt__copies_made: the first forward made a 16-bit copy (half the bytes, by a dtype conversion)
 * of a weight size of the blocks elems[lo..lo + per·reps) that no weight outside them has (its
 * own: the other model's copies say nothing of these), freed since or not */
static int vt__copies_made(const vt__pass *p, const uint64_t *elems, size_t n, size_t lo,
                           size_t per, size_t reps)
{
    size_t hi = lo + per * reps;
    for (size_t i = lo; i < lo + per && i < n; i++) {
        uint64_t bytes = vt__mul(elems[i], vt__elem(p));
        int shared = 0;
        for (size_t j = 0; j < n && !shared; j++)
            shared = (j < lo || j >= hi) && elems[j] == elems[i];
        for (size_t k = 0; !shared && bytes && k < p->n; k++)
            if (p->t[k].early && p->t[k].cast && p->t[k].made == INFER_MADE_FORWARD &&
                2 * p->t[k].size == bytes)
                return 1;
    }
    return 0;
}

void vt__infer_params(const vt__pass *p, infer_result *out, uint64_t *elems, size_t *nelems,
                      size_t *lo, size_t *hi)
{
    uint64_t bytes = 0, packed = 0;
    size_t n = 0;
    unsigned e = vt__elem(p);
    unsigned char *pk = p->npacked ? malloc(p->n + 1) : NULL;
    for (size_t i = 0; i < p->n; i++) {
        const vt__tensor *x = &p->t[i];
        if (x->early && x->kept && !x->batch && !x->copy && x->packed && pk) {
            packed += x->size; /* (two 4-bit elements a byte: infer_packed.c) */
            pk[n] = 1, elems[n++] = 2 * x->size;
        } else if (x->early && x->kept && !x->batch && !x->copy && x->size % e == 0) {
            /* (cast to 16 bits: P counts them apart, vt__cast16_params; a packed weight's
             * quantization state is none: vt__find_qstate; the shape reads them as ever) */
            bytes += x->half || x->qstate ? 0 : x->size;
            if (pk)
                pk[n] = 0;
            elems[n++] = x->size / e;
        }
    }
    size_t all = n; /* (the tensors counted, the shape's after) */
    if (pk)         /* (the packed weights' quantization state repeats no layer of the model) */
        n = vt__packed_runs(elems, NULL, pk, n);
    free(pk);
    *nelems = n;
    if (all < 4)
        return;
    const char *when = p->at_oom   ? "at the out-of-memory failure"
                       : p->at_end ? "to the run's last allocation (it ran no backward)"
                                   : "after the first backward";
    /* P: the program's parameters plus its buffers' bytes / e (no dtypes in the trace; a buffer
     * is made and kept as a weight is): BERT's two int64 id rows of 512 add 2048, a Llama's two
     * fp32 rotary rows of 32 64, ResNet-50's BatchNorm statistics 53226 (infer_beyond.sh) */
    char pks[256] = "";
    out->packed_bytes = packed, out->qstate_bytes = packed ? p->qstate_bytes : 0;
    if (packed)
        snprintf(pks, sizeof pks,
                 "; %llu B of them packed two 4-bit elements a byte (each "
                 "dequantized to 4× its bytes in the forward)%s%.0llu%s",
                 (unsigned long long)packed, p->qstate_bytes ? ", not their absmax: " : "",
                 (unsigned long long)p->qstate_bytes, p->qstate_bytes ? " B" : "");
    if (e == 4) {
        vt__set(out, INFER_params, (int64_t)(bytes / 4 + 2 * packed),
                "%zu tensors allocated before the first temporary and alive %s, %llu B at 4 B "
                "each (fp32 assumed)%s",
                all, when, (unsigned long long)bytes, pks);
        vt__set(out, INFER_param_dtype_bytes, 4, "assumed: fp32 parameters (AMP keeps them fp32)");
    } else {
        uint64_t f32 = p->elem_fp32 < bytes ? p->elem_fp32 : 0; /* at 4 B: half the elements */
        char tail[96] = "";
        if (f32)
            snprintf(tail, sizeof tail, " and the trained adapters' %llu B at 4 B (fp32)",
                     (unsigned long long)f32);
        if (p->master_bytes) /* (the weights' copies are no parameters of the model) */
            snprintf(tail, sizeof tail,
                     ", not their fp32 master copies (%llu B) nor %llu B of further copies",
                     (unsigned long long)p->master_bytes, (unsigned long long)p->copies_bytes);
        vt__set(out, INFER_params, (int64_t)((bytes - f32) / e + f32 / 4 + 2 * packed),
                "%zu tensors allocated before the first temporary and alive %s, %llu B at %u B "
                "each (%s)%s%s",
                all, when, (unsigned long long)(bytes - f32), e,
                p->elem_head ? "16 bits assumed of all: a frozen head's logits are"
                             : "16-bit parameters",
                tail, pks);
        vt__set(out, INFER_param_dtype_bytes, e, "%s", p->elem_why);
        out->elem_by_sizes = p->elem_sizes, out->elem_by_head = p->elem_head;
        out->master_bytes = p->master_bytes, out->copies_bytes = p->copies_bytes;
        out->fp32_bytes = f32;
    }
    /* two models among the weights (a frozen teacher beside the student it distills into, a
     * frozen reference model): the shape is the trained one's, whose weights got gradients */
    size_t s0 = 0, s1 = n, frozen = 0, per, reps;
    int same = 0;
    vt__block(elems, n, &per, &reps, lo);
    *hi = *lo + per * reps;
    if (reps >= 2 && p->ngrad && !vt__trained(p, elems, *lo, per)) {
        size_t per2, reps2, lo2;
        vt__block(elems + *hi, n - *hi, &per2, &reps2, &lo2);
        if (reps2 >= 2 && per2 >= 4 && vt__trained(p, elems, *hi + lo2, per2))
            s0 = *hi, frozen = reps;
        vt__block(elems, *lo, &per2, &reps2, &lo2);
        if (!frozen && reps2 >= 2 && per2 >= 4 && vt__trained(p, elems, lo2, per2))
            s1 = *lo, frozen = reps;
    } else if (reps >= 2 && p->ngrad && *hi < n) {
        /* the same blocks again after them: a second model of the same shape (a frozen
         * reference model beside the policy trained; which one trains, sizes cannot say): the
         * first one's weights alone (its head is not the second one's embedding) */
        size_t per2, reps2, lo2;
        vt__block(elems + *hi, n - *hi, &per2, &reps2, &lo2);
        lo2 += *hi;
        if (reps2 == reps && per2 == per && lo2 >= *hi + *lo &&
            !memcmp(elems + lo2, elems + *lo, per * sizeof *elems))
            s1 = lo2 - *lo, frozen = reps, same = 1;
    }
    size_t untold = 0;
    if (reps >= 2 && p->ngrad && !frozen && !vt__trained(p, elems, *lo, per) &&
        vt__own_square(p, elems, n, *lo, *hi) &&
        (!p->grad_from_copies || vt__copies_made(p, elems, n, *lo, per, reps))) {
        /* the repeating blocks took no gradient (or, out of memory before any backward, had
         * their copies freed after use: not blocks the forward had yet to reach, a ResNet's)
         * and none beside them did, while the weights outside them that did hold a d×d matrix
         * of their own (a model with a block, not a probe's head nor LoRA's adapters): those
         * are the model trained, of no repeating block (kept alone) */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if ((i < *lo || i >= *hi) && vt__grad_has(p, vt__mul(elems[i], e)))
                elems[k++] = elems[i];
        s1 = k, untold = reps;
    }
    /* a teacher run after its student, the run out of memory in the student's forward: the
     * other model's weights had no copy made at all (not freed after use: not used) */
    int how = p->grad_from_copies;
    if (how && frozen && !same && !vt__copies_made(p, elems, n, *lo, per, reps))
        how = 2;
    if (s0 || s1 < n) { /* what follows reads the trained model's weights alone */
        memmove(elems, elems + s0, (s1 - s0) * sizeof *elems);
        *nelems = s1 - s0;
    }
    vt__infer_shape(elems, s1 - s0, frozen, same, how, untold, out, lo, hi);
}

/* vt__copies_of: the weights w[0..k) (sizes, in order) are copied whole at twice their bytes
 * right after them (up: the 16-bit weights first; else the fp32 ones first, their 16-bit copy
 * after): the fp32 copy's index, 0 when they are not */
static size_t vt__copies_of(const uint64_t *s, size_t n, int up)
{
    for (size_t k = 4; 2 * k <= n; k++) {
        if (up ? s[k] != 2 * s[0] : 2 * s[k] != s[0])
            continue;
        size_t i = 0;
        while (i < k && (up ? s[k + i] == 2 * s[i] : 2 * s[k + i] == s[i]))
            i++;
        if (i == k)
            return k; /* (the fp32 run: [k, 2k) up, [0, k) else) */
    }
    return 0;
}

/* vt__width_at: the width of the weights s[0..n) (their bytes) read at e B an element, 0 where
 * their repeating blocks have no d×d parameter (vt__width), and those blocks [*lo, *hi) as
 * indexes of s, *reps of them (el, ix: room for n) */
static uint64_t vt__width_at(const uint64_t *s, size_t n, unsigned e, uint64_t *el, size_t *ix,
                             size_t *lo, size_t *hi, size_t *nreps, int whole,
                             const unsigned char *pk)
{
    size_t m = 0, per, reps, at, dn;
    uint64_t d, dv;
    unsigned char *pm = pk ? malloc(n + 1) : NULL; /* (packed: 2 elements a byte at any e) */
    for (size_t i = 0; i < n; i++)
        if ((pm && pk[i]) || s[i] % e == 0) {
            if (pm)
                pm[m] = pk[i];
            ix[m] = i, el[m++] = pm && pk[i] ? 2 * s[i] : s[i] / e;
        }
    if (pm)
        m = vt__packed_runs(el, ix, pm, m);
    free(pm);
    vt__block(el, m, &per, &reps, &at);
    *nreps = reps;
    /* (whole: s is all the weights. Two or three runs that are the whole list: a model and
     * copies of it, a DQN's target network, not blocks after a stem: one model's sizes, which
     * can meet d and d² by chance at either reading: a CNN's 256-byte biases and 32-KiB kernel) */
    if (whole && at == 0 && per * reps == m && reps <= 3) {
        *lo = *hi = 0;
        return 0;
    }
    vt__width(el, m, at, at + per * reps, reps, &d, &dn, &dv, &dn);
    *lo = reps >= 2 ? ix[at] : 0, *hi = reps >= 2 ? ix[at + per * reps - 1] + 1 : 0;
    return d;
}

/* vt__trained_apart: the blocks s[lo..hi) that read 16-bit at width d took no gradient (neither
 * a norm's 2·d bytes nor a d×d projection's 2·d² among the first backward's tensors, or the
 * copies kept at an out-of-memory error), and the weights before or after them hold blocks of
 * their own that did, fp32 by their sizes: a frozen 16-bit model (an encoder cast to fp16,
 * diffusers' weight_dtype) beside the fp32 one trained, which the sizes of the longer run of
 * blocks had made "16-bit parameters" (AdamW's state then 4 B per trainable parameter, the
 * program's 8). A LoRA's 16-bit base has its adapters inside its blocks: no blocks apart. */
static int vt__trained_apart(const vt__pass *p, const uint64_t *s, size_t n, size_t lo, size_t hi,
                             uint64_t d, uint64_t *el, size_t *ix)
{
    if (!p->ngrad || vt__grad_has(p, vt__mul(d, 2)) || vt__grad_has(p, vt__mul(vt__mul(d, d), 2)))
        return 0;
    const size_t from[2] = {0, hi}, len[2] = {lo, n - hi};
    for (int k = 0; k < 2; k++) {
        size_t l, h, r;
        uint64_t d4 = vt__width_at(s + from[k], len[k], 4, el, ix, &l, &h, &r, 0, NULL);
        if (d4 && !vt__width_at(s + from[k], len[k], 2, el, ix, &l, &h, &r, 0, NULL) &&
            vt__grad_has(p, vt__mul(vt__mul(d4, d4), 4)))
            return 1;
    }
    return 0;
}

void vt__weights_dtype(vt__pass *p)
{
    if (p->dtype_read)
        return;
    p->dtype_read = 1;
    size_t n = 0;
    uint64_t *s = malloc((p->n + 1) * sizeof *s);
    size_t *at = malloc((p->n + 1) * sizeof *at);
    unsigned char *pk = p->npacked ? calloc(p->n + 1, 1) : NULL;
    if (!s || !at)
        goto out;
    for (size_t i = 0; i < p->n; i++) /* (not those cast to 16 bits: infer_pass_cast16) */
        if (p->t[i].early && p->t[i].kept && !p->t[i].batch && !p->t[i].half) {
            if (pk)
                pk[n] = (unsigned char)p->t[i].packed;
            at[n] = i, s[n++] = p->t[i].size;
        }
    /* fp32 master weights: the program's every weight, in order, and an fp32 copy of each at
     * twice its bytes (a mixed-precision loop of its own: its optimizer steps the copies); no
     * model's weights are their own doubles by chance. Copies of the fp32 ones after them, the
     * same sizes again (an EMA of the masters), are no parameters either. */
    int up = 1;
    size_t k = vt__copies_of(s, n, 1);
    if (!k)
        up = 0, k = vt__copies_of(s, n, 0);
    if (k) {
        size_t m0 = up ? k : 0, end = 2 * k; /* the masters' run, and where the copies end */
        for (size_t i = m0; i < m0 + k; i++)
            p->t[at[i]].copy = 1, p->master_bytes += s[i];
        for (int more = 1; more && end + k <= n;) {
            for (size_t i = 0; more && i < k; i++)
                more = s[end + i] == s[m0 + i];
            for (size_t i = 0; more && i < k; i++)
                p->t[at[end + i]].copy = 1, p->copies_bytes += s[end + i];
            end += more ? k : 0;
        }
        p->nmaster = k;
        if (!p->elem) {
            p->elem = 2, p->elem_sizes = 1;
            snprintf(p->elem_why, sizeof p->elem_why,
                     "16-bit parameters: each of the program's %zu weights has an fp32 copy of "
                     "twice its bytes %s it (master weights)",
                     k, up ? "made after" : "made before");
        }
        goto out;
    }
    if (p->elem)
        goto out;
    /* a transformer's blocks: d-element norms and d×d projections. Read at 4 B an element their
     * bytes have no d×d parameter where they are 16-bit (norms of d·2 B, projections of d²·2 B
     * read as d/2 and 2·(d/2)²), read at 2 B an fp32 model's have none (2d and 2d²): the reading
     * with one, the other without, is the weights' element size; both or neither say nothing */
    uint64_t *el = malloc((n + 1) * sizeof *el);
    size_t *ix = malloc((n + 1) * sizeof *ix), lo, hi, reps = 0, mats = 0;
    uint64_t d4 = el && ix ? vt__width_at(s, n, 4, el, ix, &lo, &hi, &reps, 1, pk) : 0,
             d2 = el && ix ? vt__width_at(s, n, 2, el, ix, &lo, &hi, &reps, 1, pk) : 0;
    if (d2 && !d4 && vt__trained_apart(p, s, n, lo, hi, d2, el, ix))
        d2 = 0; /* (a frozen 16-bit model's blocks: the one trained beside them reads fp32) */
    /* a transformer's block has two d×d matrices or more (its attention's and its MLP's: d×d
     * or k·d² at 2 B); one alone is no transformer's. A CNN's 1×1 convolutions that halve the
     * width (YOLOv5's C3, CSP blocks: c→c/2, c²/2 fp32 elements, 2c² B) with BatchNorms of c/2
     * channels (2c B), two of them side by side as its only run of like sizes, read at 2 B as
     * "c-element norms" and one "c×c projection" a block: an fp32 model had been "16-bit" (its
     * trainable count twice the program's, SGD's state "2 B per trainable parameter"), as had a
     * ResNet's task heads of one linear layer each */
    uint64_t sq2 = vt__mul(vt__mul(d2, d2), 2); /* (0: d2 0, or too large to be a width) */
    for (size_t i = lo; sq2 && i < hi; i++)     /* (a packed one's 16-bit bytes: 4× its own) */
        mats += s[i] && (pk && pk[i] ? 4 * s[i] : s[i]) % sq2 == 0;
    if (mats < 2 * reps)
        d2 = 0;
    free(el);
    free(ix);
    if (d2 && !d4) {
        p->elem = 2, p->elem_sizes = 1;
        snprintf(p->elem_why, sizeof p->elem_why,
                 "16-bit parameters: at 2 B an element each block has %llu-element norms and "
                 "%llu×%llu projections%s; at 4 B none is d×d",
                 (unsigned long long)d2, (unsigned long long)d2, (unsigned long long)d2,
                 p->npacked ? " (those packed 4-bit at 2 elements a byte)" : "");
    }
out:
    free(s);
    free(at);
    free(pk);
}

int vt__square_width(const vt__pass *p, int packed)
{
    size_t n = 0, lo, hi, reps;
    uint64_t *s = malloc((p->n + 1) * sizeof *s), *el = malloc((p->n + 1) * sizeof *el);
    size_t *ix = malloc((p->n + 1) * sizeof *ix);
    unsigned char *pk = packed ? malloc(p->n + 1) : NULL;
    int sq = 0;
    for (size_t i = 0; s && el && ix && (pk || !packed) && i < p->n; i++)
        if (p->t[i].early && p->t[i].kept && !p->t[i].batch && !p->t[i].half) {
            if (pk)
                pk[n] = (unsigned char)p->t[i].packed;
            s[n++] = p->t[i].size;
        }
    if (s && el && ix && n)
        sq = vt__width_at(s, n, 4, el, ix, &lo, &hi, &reps, 1, pk) ||
             vt__width_at(s, n, 2, el, ix, &lo, &hi, &reps, 1, pk);
    free(s), free(el), free(ix), free(pk);
    return sq;
}
