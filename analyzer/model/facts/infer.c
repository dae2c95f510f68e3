/* infer.c — the model and the step from the trace's own tensors (infer.h): parameters are
 * the tensors allocated before the first backward and alive to the end; layers from the
 * repeating block in their allocation order; width, vocabulary (B·T, T and B: infer_tokens.c). */
#include "infer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
#define VT_INFER_NAME(k, doc) #k,
    VT_INFER_KEYS(VT_INFER_NAME)
#undef VT_INFER_NAME
};

#include "infer_pass.h"

/* vt__snap: parameters are the prefix of allocations before the first tensor that died (the
 * forward's first temporary), those still alive now: after the first backward, or at an
 * out-of-memory failure that came before any (at_oom; vt__trim_oom then cuts the forward's first
 * tensors, still alive there, off that prefix). */
/* vt__kept_copies: an out-of-memory failure before any backward has no gradient's sizes to tell
 * the weights trained; autocast's 16-bit copies alive then stand for them (a copy is kept, for
 * the backward, only of a weight that needs a gradient; a frozen one's is freed after use): of
 * fp32 weights, twice a copy's size is its weight's (a student distilled from a frozen teacher,
 * out of memory in its own first forward after the teacher's: the teacher's copies were freed) */
static void vt__kept_copies(vt__pass *p)
{
    if (vt__elem(p) != 4)
        return;
    for (size_t i = 0; i < p->n; i++)
        if (p->t[i].oom_live && p->t[i].cast && p->t[i].made == INFER_MADE_FORWARD &&
            p->t[i].size <= UINT64_MAX / 2)
            vt__grad_add(p, 2 * p->t[i].size);
    p->grad_from_copies = p->ngrad > 0;
}

static void vt__snap(vt__pass *p, int at_oom)
{
    vt__grads_kept(p);
    p->snapped = 1;
    p->at_oom = at_oom;
    size_t i = 0;
    while (i < p->n && p->t[i].live)
        p->t[i].kept = 1, i++;
    for (i = 0; at_oom && i < p->n; i++)
        p->t[i].oom_live = p->t[i].live;
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
     * (before its first temporary died) follow it. The last such pair can be the forward's
     * position ids, T int64 looked up as T×d (BERT's 512 after its batch of 32·512 and its
     * targets): the int64 tensors right before it with a lookup of as many or more indices
     * (B·T >= T) are the batch and its targets, and the prefix ends before the first of them;
     * so is a batch whose own lookup sits between (GPT-2 looks its tokens up before it makes
     * the position ids). Only that unbroken run: a weight further back can pass for indices.
     * The first pair is looked for among the last VT_OOM_TAIL_MAX; its run, however far back it
     * goes (an fp32 forward keeps more before its first temporary: GPT-2 medium's position ids
     * were the 16th from the end, its batch's lookup the 17th). */
    for (size_t i = kept; d && i-- > 0 && (cut < kept || kept - i <= VT_OOM_TAIL_MAX);) {
        uint64_t bt = vt__looked_up(p, i, d);
        if (cut == kept) {
            if (bt)
                cut = i;
            continue;
        }
        int next = i + 1 == cut || (bt && vt__embeds(p, i, bt, d) + 1 == cut);
        if (bt && next && bt >= p->t[cut].size / 8) {
            cut = i;
            continue;
        }
        uint64_t before = i ? vt__looked_up(p, i - 1, d) : 0; /* i: the lookup of a batch at i-1 */
        if (!(i + 1 == cut && before && vt__embeds(p, i - 1, before, d) == i))
            break;
    }
    p->oom_bt = cut < kept ? p->t[cut].size / 8 : 0;
    p->oom_at = cut;
    /* the vocabulary among the weights before the batch (the forward's tensors after it, at a
     * large B·T, can be larger than the embedding: Llama-160M at B=32) */
    if (cut < kept && !tmp.v[INFER_vocab_size].known) {
        for (size_t i = cut; i < kept; i++)
            p->t[i].kept = 0;
        memset(&tmp, 0, sizeof tmp);
        vt__infer_params(p, &tmp, elems, &n, &lo, &hi);
        for (size_t i = cut; i < kept; i++)
            p->t[i].kept = 1;
    }
    /* no token batch (no vocabulary among the weights, or none found): an image batch and its
     * labels, or the program's first input (a GAN's unlabelled images: a BatchNorm's statistics
     * among the weights, 2048 B, had passed for 256 token ids), end the weights' prefix instead */
    if ((cut == kept || !tmp.v[INFER_vocab_size].known) && vt__find_images(p)) {
        cut = kept, p->oom_bt = 0;
        for (size_t i = 0; i < kept; i++)
            if (p->t[i].batch) {
                cut = i;
                break;
            }
    }
    for (size_t i = cut == kept ? 0 : cut; i < kept; i++)
        p->t[i].kept = 0;
}

/* vt__infer_dropout: dropout is on when its forward made 1-byte masks of B·T·d in the first
 * forward, one in each block at least (its output, B·T·d of 2 or 4 bytes, is no mask); p > 0
 * whatever its rate, which no size says. Its absence says nothing (no native frames recorded). */
static void vt__infer_dropout(const vt__pass *p, infer_result *out)
{
    const infer_value *N = &out->v[INFER_tokens], *d = &out->v[INFER_n_embd],
                      *L = &out->v[INFER_n_layer];
    uint64_t mask = N->known && d->known ? vt__mul((uint64_t)N->value, (uint64_t)d->value) : 0;
    size_t c = 0, need = L->known && L->value >= 2 ? (size_t)L->value : 2;
    for (size_t i = 0; mask && i < p->n; i++)
        c += p->t[i].dropout && p->t[i].early && !p->t[i].kept && p->t[i].size == mask;
    if (mask && c >= need)
        vt__set(out, INFER_dropout_masks, 1,
                "dropout on: %zu masks of B·T·d = %llu bytes made by its forward "
                "(native_dropout) in the first forward; its rate is not in the trace",
                c, (unsigned long long)mask);
}

/* vt__less_gone: P less what the first backward kept and the loop freed before its second, with
 * an allocation after (not the program's exit): the step's own tensors made before the first
 * forward (the HF Trainer's 4-byte running loss), no weights; the token batch at the end of the
 * prefix is left out already (vt__infer_tokens). */
static void vt__less_gone(const vt__pass *p, infer_result *out)
{
    infer_value *pv = &out->v[INFER_params];
    uint64_t bt = out->v[INFER_tokens].known ? (uint64_t)out->v[INFER_tokens].value : 0, bytes = 0;
    size_t end, from = vt__batch_from(p, bt, &end), k = 0;
    for (size_t i = 0; i < from; i++) {
        const vt__tensor *x = &p->t[i];
        if (x->early && x->kept && !x->batch && x->size % vt__elem(p) == 0 && x->gone &&
            x->gone < p->last_alloc)
            bytes += x->size, k++;
    }
    if (!k || !pv->known || (uint64_t)pv->value <= bytes / vt__elem(p))
        return;
    pv->value -= (int64_t)(bytes / vt__elem(p));
    size_t w = strlen(pv->where);
    snprintf(pv->where + w, sizeof pv->where - w,
             ", less %zu per-step tensor%s freed before the second backward (%llu B)", k,
             k == 1 ? "" : "s", (unsigned long long)bytes);
}

/* vt__cast16_params: P with the weights made by casts to 16 bits (infer_pass_cast16) at 2 B an
 * element beside the others (vt__infer_params counts those alone): a ControlNet script's fp16
 * U-Net, VAE and text encoder had been counted at 4 B, as fp32, beside the fp32 ControlNet */
static void vt__cast16_params(const vt__pass *p, infer_result *out)
{
    uint64_t half = 0, rest = 0;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        const vt__tensor *x = &p->t[i];
        if (x->early && x->kept && !x->batch && !x->copy)
            *(x->half ? &half : &rest) += x->size, k += (size_t)x->half;
    }
    infer_value *pv = &out->v[INFER_params];
    if (!half || !pv->known)
        return;
    vt__set(out, INFER_cast16_bytes, (int64_t)half,
            "%llu B of weights made on the program's lines that cast to 16 bits (%s): 2 B an "
            "element",
            (unsigned long long)half, p->cast_where);
    snprintf(out->cast16_where, sizeof out->cast16_where, "%s", p->cast_where);
    if (!rest) { /* all of them */
        pv->value = (int64_t)(half / 2);
        char *comma = strstr(pv->where, ", ");
        if (comma)
            snprintf(comma, sizeof pv->where - (size_t)(comma - pv->where),
                     ", %llu B at 2 B each (made by casts to 16 bits: %s)",
                     (unsigned long long)half, p->cast_where);
        vt__set(out, INFER_param_dtype_bytes, 2,
                "16-bit parameters: made by casts to 16 bits on the program's lines (%s)",
                p->cast_where);
        return;
    }
    pv->value += (int64_t)(half / 2);
    size_t w = strlen(pv->where);
    snprintf(pv->where + w, sizeof pv->where - w,
             "; %zu of them, %llu B, at 2 B each: made by casts to 16 bits (%s)", k,
             (unsigned long long)half, p->cast_where);
}

/* infer_params_less (infer.h): P less an EMA's copy of the weights (from the report, which sees
 * the stacks) */
void infer_params_less(infer_result *r, uint64_t bytes, const char *what)
{
    infer_value *pv = &r->v[INFER_params];
    const infer_value *ev = &r->v[INFER_param_dtype_bytes];
    uint64_t less = bytes / (ev->known && ev->value == 2 ? 2 : 4); /* per element, as P counts */
    if (!pv->known || !less || (uint64_t)pv->value <= less)
        return;
    pv->value -= (int64_t)less;
    char tail[120];
    int n = snprintf(tail, sizeof tail, ", less the EMA copy (%llu B, %s)",
                     (unsigned long long)bytes, what && *what ? what : "an EMA");
    size_t w = strlen(pv->where);
    char *comma = strchr(pv->where, ',');
    if (n > 0 && w + (size_t)n >= sizeof pv->where && comma) /* too long: the count's bytes go */
        w = (size_t)(comma - pv->where);
    snprintf(pv->where + w, sizeof pv->where - w, "%s", tail);
}

/* ---- the pass: fed by the replay (infer_pass_event), or by infer_model's own reader ---------- */
struct infer_pass {
    vt__pass p;
    int oom; /* out of memory: nothing inferred */
};

void infer_pass_unmade(infer_pass *p, int on)
{
    if (p)
        p->p.unmade = on;
}

infer_pass *infer_pass_new(void)
{
    return calloc(1, sizeof(infer_pass));
}

void infer_pass_free(infer_pass *ip)
{
    if (ip)
        vt__tensors_free(&ip->p);
    free(ip);
}

void infer_pass_event(infer_pass *ip, uint64_t event, int is_alloc, const reader_event *ev,
                      uint64_t freed_event)
{
    infer_pass_event_made(ip, event, is_alloc, ev, freed_event, INFER_MADE_UNKNOWN);
}

/* tensor_made / tensor_freed: an API that makes or frees one tensor: PyTorch's allocator tracker's,
 * or the stream-ordered allocator's (its cudaMallocAsync backend, `run --tensors`) */
static int tensor_made(unsigned api)
{
    return api == VT_API_torchAlloc || api == VT_API_cudaMallocAsync ||
           api == VT_API_cudaMallocFromPoolAsync || api == VT_API_cuMemAllocAsync ||
           api == VT_API_cuMemAllocFromPoolAsync;
}
static int tensor_freed(unsigned api)
{
    return api == VT_API_torchFree || api == VT_API_cudaFreeAsync || api == VT_API_cuMemFreeAsync;
}

/* vt__cast_of: c, the tensor made last, is w's dtype cast (made under a module's .to(), .cuda()
 * or construction, half or twice w's size, alive) */
static int vt__cast_of(const vt__tensor *c, const vt__tensor *w)
{
    return c != w && c->init && c->live && (c->size * 2 == w->size || w->size * 2 == c->size);
}

void infer_pass_event_made(infer_pass *ip, uint64_t event, int is_alloc, const reader_event *ev,
                           uint64_t freed_event, int made)
{
    vt__pass *p = &ip->p;
    if (p->watch_done || ip->oom)
        return; /* the second backward began: nothing later counts */
    if (is_alloc && tensor_made(ev->api) && !ev->failed && p->tentative) {
        /* a tensor made after the failed call: PyTorch recovered (no OutOfMemoryError) */
        for (size_t i = 0; i < p->n; i++)
            p->t[i].kept = p->t[i].oom_live = 0;
        p->snapped = p->at_oom = p->tentative = 0;
        p->oom_size = 0;
    }
    if (!is_alloc && p->seen_backward && !p->snapped && !p->bwd_over && !ev->backward &&
        tensor_freed(ev->api)) { /* the first backward is over (infer_finish, if nothing follows) */
        size_t k = 0;
        while (k < p->n && p->t[k].live)
            k++;
        p->bwd_over = k + 1;
    }
    if (p->snapped && p->seen_backward) {
        /* after the first backward: which of the tensors it kept the loop frees before the next
         * one (its own per-step tensors: a running loss made before the first forward) */
        if (is_alloc && tensor_made(ev->api) && !ev->failed) {
            if (ev->backward)
                p->watch_done = 1;
            else
                p->last_alloc = event;
        } else if (!is_alloc && tensor_freed(ev->api)) {
            size_t i = vt__free(p, ev->addr, freed_event);
            if (i < p->n && p->t[i].kept)
                p->t[i].gone = event;
        }
        return;
    }
    if (is_alloc && tensor_made(ev->api) && !ev->failed) {
        if (ev->backward)
            p->seen_backward = 1, vt__grad_add(p, ev->size), vt__bwd_made(p, ev->addr, ev->size);
        else if (p->seen_backward && !p->snapped)
            vt__snap(p, 0); /* the first backward is over: what lives outlived it */
        if (!p->seen_backward) {
            if (vt__push(p, ev->addr, ev->size, event, made, ev->stack_id))
                ip->oom = 1;
            p->last_early = event;
        }
    } else if (is_alloc && (!p->snapped || p->tentative) &&
               (ev->api == VT_API_torchOom ||
                (ev->failed && reader_api_kind(ev->api) == VT_KIND_ALLOC))) {
        if (!p->snapped) { /* out of memory in the first forward or backward */
            vt__snap(p, 1);
            p->oom_size = ev->size;
        }
        p->tentative = ev->api != VT_API_torchOom; /* PyTorch's error confirms it */
    } else if (!is_alloc && tensor_freed(ev->api)) {
        if (ev->backward && p->seen_backward)
            vt__bwd_freed(p, ev->addr);
        size_t i = vt__free(p, ev->addr, freed_event);
        if (i + 1 < p->n && !p->seen_backward && p->t[i].init && !p->seen_forward &&
            vt__cast_of(&p->t[p->n - 1], &p->t[i])) {
            /* a weight replaced before the first forward by its cast (model.cuda().bfloat16():
             * each fp32 weight freed as its 16-bit copy is made): none of the run's, nor a gap
             * in the weights kept from the first (the 16-bit ones had not been read at all); a
             * temporary of a module's construction freed so (DDP's) still ends them */
            vt__tensor *c = &p->t[p->n - 1];
            if (c->size * 2 == p->t[i].size)
                c->was_stack = p->t[i].stack ? p->t[i].stack : UINT32_MAX;
            memmove(&p->t[i], &p->t[i + 1], (p->n - i - 1) * sizeof *p->t);
            p->n--;
        } else if (i < p->n && !p->seen_backward) {
            p->t[i].freed = event;
        }
    }
}

int infer_pass_done(const infer_pass *ip)
{
    return (ip->p.snapped && ip->p.seen_backward && ip->p.watch_done) || ip->oom;
}

infer_pass *infer_pass_copy(const infer_pass *ip)
{
    infer_pass *c = ip && !ip->oom ? malloc(sizeof *c) : NULL;
    if (!c)
        return NULL;
    *c = *ip;
    if (vt__tensors_copy(&c->p, &ip->p) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

void infer_pass_params16(infer_pass *ip, const char *why, uint64_t fp32)
{
    if (!ip)
        return;
    ip->p.elem = 2;
    ip->p.elem_fp32 = fp32;
    snprintf(ip->p.elem_why, sizeof ip->p.elem_why, "%s", why ? why : "");
}

size_t infer_pass_cast16(infer_pass *ip, int (*pick)(void *ctx, uint32_t stack), void *ctx)
{
    size_t k = 0;
    uint32_t last = 0;
    int was = 0;
    for (size_t i = 0; ip && i < ip->p.n; i++) {
        vt__tensor *x = &ip->p.t[i];
        if (!x->early || x->batch || !x->init || !x->stack) /* (a weight: made by a module's
                                                             * __init__, .to(), .half()) */
            continue;
        if (x->stack != last) /* (a model's weights come in runs of one stack) */
            last = x->stack, was = pick(ctx, x->stack);
        x->half = was;
        k += (size_t)was;
    }
    return k;
}

uint64_t infer_pass_narrowed(const infer_pass *ip, int (*pick)(void *ctx, uint32_t stack),
                             void *ctx)
{
    uint64_t b = 0;
    for (size_t i = 0; ip && i < ip->p.n; i++) {
        const vt__tensor *x = &ip->p.t[i];
        if (x->early && x->kept && x->was_stack && x->was_stack != UINT32_MAX &&
            pick(ctx, x->was_stack))
            b += x->size;
    }
    return b;
}

void infer_pass_cast16_where(infer_pass *ip, const char *where)
{
    if (ip)
        snprintf(ip->p.cast_where, sizeof ip->p.cast_where, "%s", where ? where : "");
}

void infer_pass_head16(infer_pass *ip)
{
    if (ip)
        ip->p.elem_head = 1;
}

int infer_pass_grad_has(const infer_pass *ip, uint64_t size)
{
    return ip && vt__grad_has(&ip->p, size);
}

int infer_finish_without(infer_pass *ip, int (*drop)(void *ctx, uint32_t stack), void *ctx,
                         infer_result *out, size_t *ndropped, uint64_t *dropped_bytes)
{
    vt__pass *p = &ip->p;
    size_t k = 0;
    *ndropped = 0, *dropped_bytes = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->t[i].early && p->t[i].stack && drop(ctx, p->t[i].stack)) {
            ++*ndropped, *dropped_bytes += p->t[i].size;
            continue;
        }
        p->t[k++] = p->t[i];
    }
    p->n = k; /* (vt__trim_oom and vt__find_images find their indexes in what is left) */
    return infer_finish(ip, out);
}

int infer_finish(infer_pass *ip, infer_result *out)
{
    memset(out, 0, sizeof *out);
    vt__pass *p = &ip->p;
    if (ip->oom)
        return -1;
    vt__drop_evaluation(p);
    if (!p->snapped && !p->seen_backward && p->n) {
        /* no backward and no failure (an evaluation or inference run): the weights are the
         * prefix kept to the run's last allocation, freed at the program's exit if at all, up
         * to the first temporary that died before it (none: a run cut in its first forward,
         * whose weights nothing tells from its tensors), or the first tensor a forward made (no
         * weight: a run cut in its first forward keeps its first outputs alive to the end; BERT's
         * position ids and embedding lookup had joined its weights, the ids then no positions) */
        size_t k = 0;
        while (k < p->n && (p->t[k].live || p->t[k].freed > p->last_early) &&
               p->t[k].made != INFER_MADE_FORWARD)
            k++;
        p->snapped = p->at_end = k < p->n;
        for (size_t i = 0; p->snapped && i < k; i++)
            p->t[i].kept = 1;
    }
    if (!p->snapped && p->seen_backward && p->bwd_over) { /* the run exited after its backward */
        p->snapped = 1;
        for (size_t i = 0; i + 1 < p->bwd_over; i++)
            p->t[i].kept = 1;
    }
    /* (the sizes need no weight: again at the end, after the memsets) */
    vt__fwd_sizes(p, out);
    if (!p->snapped) /* the weights were never told from the rest */
        return 0;
    uint64_t *elems = malloc((p->n + 1) * sizeof *elems);
    if (!elems)
        return -1;
    if (!p->packed_read) { /* (4-bit weights: 2 elements a byte) */
        vt__find_packed(p);
        /* ... where, read so, the weights' blocks have d-element norms beside d×d projections,
         * and read at 2 or 4 B an element they have none (a GPT-2 at B·T = 4·d has activations
         * of 4× its projections' bytes) */
        if (p->npacked && (vt__square_width(p, 0) || !vt__square_width(p, 1))) {
            for (size_t i = 0; i < p->n; i++)
                p->t[i].packed = 0;
            p->npacked = 0, p->packed_bytes = 0;
        }
        vt__find_qstate(p); /* (their absmax and its constants: no parameters) */
    }
    if (p->at_oom)
        vt__trim_oom(p, elems);
    if (p->at_oom && !p->ngrad)
        vt__kept_copies(p);
    size_t n = 0, lo = 0, hi = 0;
    vt__weights_dtype(p);
    vt__infer_params(p, out, elems, &n, &lo, &hi);
    /* no token embedding among the weights: an image batch may sit among them instead */
    if (!out->v[INFER_vocab_size].known) {
        if (vt__find_images(p)) {
            memset(out, 0, sizeof *out);
            vt__infer_params(p, out, elems, &n, &lo, &hi);
        }
    }
    vt__cast16_params(p, out);
    vt__infer_tokens(p, elems, n, lo, hi, out);
    vt__infer_dropout(p, out);
    vt__less_gone(p, out);
    vt__infer_images(p, elems, n, lo, hi, out);
    vt__infer_heads(p, out);
    vt__train_tokens(p, out); /* (after a rollout's no-grad pass: the updates' own forward) */
    if ((p->img_b || (p->inputs && !out->v[INFER_vocab_size].known)) &&
        !out->v[INFER_block_size].known) {
        /* images (or inputs that are no tokens: a GAN's unlabelled images and latent) and no
         * patch tokens: no transformer's blocks, width or vocabulary to say (a convolutional
         * network's repeating sizes are not those) */
        static const infer_key drop[] = {INFER_n_layer, INFER_n_embd, INFER_n_head, INFER_bias,
                                         INFER_vocab_size};
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
            memset(&out->v[drop[i]], 0, sizeof out->v[drop[i]]);
    }
    for (size_t i = 0; p->grad_from_copies && i < p->n; i++) /* (what trains, by its copies) */
        if (p->t[i].early && p->t[i].kept && !p->t[i].batch && !p->t[i].copy && !p->t[i].half &&
            !p->t[i].qstate && vt__grad_has(p, p->t[i].size)) /* (autocast copies fp32 ones) */
            out->trained_by_copies += p->t[i].size;
    vt__infer_factored(elems, n, out);
    vt__fwd_sizes(p, out);
    free(elems);
    return 0;
}

int infer_model(const char *path, infer_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    reader *r = reader_open(path, err, errlen);
    if (!r)
        return -1;
    infer_pass *ip = infer_pass_new();
    reader_record rec;
    uint64_t event = 0;
    while (ip && !ip->oom && reader_next(r, &rec))
        if (rec.type == VT_REC_ALLOC || rec.type == VT_REC_FREE)
            infer_pass_event(ip, ++event, rec.type == VT_REC_ALLOC, &rec.u.ev, 0);
    reader_close(r);
    int rc = ip ? infer_finish(ip, out) : -1;
    infer_pass_free(ip);
    if (rc)
        snprintf(err, errlen, "%s: out of memory", path);
    return rc;
}

const char *infer_key_name(infer_key k)
{
    return (unsigned)k < INFER_COUNT ? names[k] : "?";
}
