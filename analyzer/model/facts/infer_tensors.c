/* infer_tensors.c — the inference pass's list of tensors (infer_pass.h): pushed in event order,
 * freed by the freed allocation's event or else by address (a count of live tensors at each
 * address says when there is one to search for), copied and freed with the pass; an evaluation
 * before the first training forward at a batch of its own left out of it. What the list says is
 * infer.c's and the infer_*.c files'. */
#include <stdlib.h>
#include <string.h>

#include "hashseed.h"
#include "infer_pass.h"

/* live_slot: addr's slot in at_addr: where it is, else the empty one its probe ends at */
static size_t live_slot(const vt__pass *p, uint64_t addr)
{
    size_t j = (size_t)hashseed_mix(addr) & (p->at_cap - 1);
    while (p->at_addr[j] && p->at_addr[j] != addr)
        j = (j + 1) & (p->at_cap - 1);
    return j;
}

/* slot_at: addr's slot (addr not 0), made when `make`; SIZE_MAX when addr was never met (or,
 * making, out of memory). */
static size_t slot_at(vt__pass *p, uint64_t addr, int make)
{
    if (make && 2 * (p->at_n + 1) > p->at_cap) { /* kept at most half full */
        size_t cap = p->at_cap ? 2 * p->at_cap : 1024, old = p->at_cap;
        uint64_t *a = calloc(cap, sizeof *a), *oa = p->at_addr;
        uint32_t *l = calloc(cap, sizeof *l), *ol = p->at_live;
        uint32_t *k = calloc(cap, sizeof *k), *ok = p->at_last;
        if (!a || !l || !k) {
            free(a);
            free(l);
            free(k);
            return SIZE_MAX;
        }
        p->at_addr = a, p->at_live = l, p->at_last = k, p->at_cap = cap;
        for (size_t i = 0; i < old; i++)
            if (oa[i]) {
                size_t j = live_slot(p, oa[i]);
                a[j] = oa[i], l[j] = ol[i], k[j] = ok[i];
            }
        free(oa);
        free(ol);
        free(ok);
    }
    if (!p->at_cap)
        return SIZE_MAX;
    size_t j = live_slot(p, addr);
    if (!p->at_addr[j]) {
        if (!make)
            return SIZE_MAX;
        p->at_addr[j] = addr;
        p->at_n++;
    }
    return j;
}

/* live_at: the count of live tensors at addr, made (0 first) when `make`; NULL when addr
 * was never met (or, making, out of memory). */
static uint32_t *live_at(vt__pass *p, uint64_t addr, int make)
{
    if (!addr)
        return &p->at_live0;
    size_t j = slot_at(p, addr, make);
    return j == SIZE_MAX ? NULL : &p->at_live[j];
}

int vt__push(vt__pass *p, uint64_t addr, uint64_t size, uint64_t event, int made, uint32_t stack)
{
    size_t j = addr ? slot_at(p, addr, 1) : SIZE_MAX;
    if (addr && j == SIZE_MAX)
        return -1;
    uint32_t *live = addr ? &p->at_live[j] : &p->at_live0;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        vt__tensor *t = realloc(p->t, cap * sizeof *t);
        if (!t)
            return -1;
        p->t = t;
        p->cap = cap;
    }
    int softmax = (made & INFER_MADE_SOFTMAX) != 0;
    made &= ~INFER_MADE_SOFTMAX;
    p->t[p->n++] =
        (vt__tensor){.addr = addr,
                     .size = size,
                     .event = event,
                     .early = !p->seen_backward,
                     .live = 1,
                     .made = made & ~(INFER_MADE_ATTENTION | INFER_MADE_DROPOUT | INFER_MADE_CAST |
                                      INFER_MADE_INPUT | INFER_MADE_INIT | INFER_MADE_WORKSPACE |
                                      INFER_MADE_EVAL | INFER_MADE_DATA | INFER_MADE_OPTIM),
                     /* (no weight: the weights' lists leave it out) */
                     .batch = (made & (INFER_MADE_DATA | INFER_MADE_OPTIM)) != 0,
                     .data = (made & INFER_MADE_DATA) != 0,
                     .init = (made & INFER_MADE_INIT) != 0,
                     .input = (made & INFER_MADE_INPUT) && !(made & INFER_MADE_WORKSPACE),
                     .stack = stack,
                     .attention = (made & INFER_MADE_ATTENTION) != 0,
                     .dropout = (made & INFER_MADE_DROPOUT) != 0,
                     .cast = (made & INFER_MADE_CAST) != 0,
                     .workspace = (made & INFER_MADE_WORKSPACE) != 0,
                     .eval = (made & INFER_MADE_EVAL) != 0,
                     .softmax = softmax};
    ++*live;
    if (addr)
        p->at_last[j] = p->n < UINT32_MAX ? (uint32_t)p->n : 0;
    p->seen_forward |= p->t[p->n - 1].made == INFER_MADE_FORWARD;
    return 0;
}

/* vt__free (infer_pass.h): the freed allocation's tensor is the newest pushed at addr (the
 * usual: the address's table slot names it), else, the tensors being kept in event order, found
 * by a binary search; else the count at addr says whether a search back can find one. (The
 * search had been every free's: 33.5M of the 355.5M instructions of a report on a simulated
 * GPT-2 run, 117,187 tensors.) */
size_t vt__free(vt__pass *p, uint64_t addr, uint64_t event)
{
    size_t j = addr && event ? slot_at(p, addr, 0) : SIZE_MAX;
    if (j != SIZE_MAX && p->at_last[j]) {
        /* (an index moved by a tensor taken out of the list before it, infer.c, names another
         * tensor or none: the search below finds it then; events are the tensors' own) */
        size_t k = p->at_last[j] - 1;
        if (k < p->n && p->t[k].event == event && p->t[k].addr == addr && p->t[k].live) {
            p->t[k].live = 0;
            --p->at_live[j];
            return k;
        }
    }
    size_t lo = 0, hi = p->n;
    while (event && lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->t[mid].event < event)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (event && lo < p->n && p->t[lo].event == event && p->t[lo].addr == addr && p->t[lo].live) {
        p->t[lo].live = 0; /* the replay's newest at addr: no newer one here is live either */
        --*live_at(p, addr, 0);
        return lo;
    }
    uint32_t *live = live_at(p, addr, 0);
    for (size_t i = live && *live ? p->n : 0; i-- > 0;)
        if (p->t[i].live && p->t[i].addr == addr) {
            p->t[i].live = 0;
            --*live;
            return i;
        }
    return p->n;
}

int vt__tensors_copy(vt__pass *c, const vt__pass *p)
{
    c->t = malloc((p->n ? p->n : 1) * sizeof *c->t);
    c->at_addr = p->at_cap ? malloc(p->at_cap * sizeof *c->at_addr) : NULL;
    c->at_live = p->at_cap ? malloc(p->at_cap * sizeof *c->at_live) : NULL;
    c->at_last = p->at_cap ? malloc(p->at_cap * sizeof *c->at_last) : NULL;
    if (!c->t || (p->at_cap && (!c->at_addr || !c->at_live || !c->at_last))) {
        free(c->t);
        free(c->at_addr);
        free(c->at_live);
        free(c->at_last);
        return -1;
    }
    if (p->n)
        memcpy(c->t, p->t, p->n * sizeof *c->t);
    c->cap = p->n ? p->n : 1;
    if (p->at_cap) {
        memcpy(c->at_addr, p->at_addr, p->at_cap * sizeof *c->at_addr);
        memcpy(c->at_live, p->at_live, p->at_cap * sizeof *c->at_live);
        memcpy(c->at_last, p->at_last, p->at_cap * sizeof *c->at_last);
    }
    return 0;
}

void vt__tensors_free(vt__pass *p)
{
    free(p->t);
    free(p->at_addr);
    free(p->at_live);
    free(p->at_last);
}

/* vt__drop_evaluation (infer_pass.h): a run that trains reads its first training forward. An
 * evaluation before it (Lightning's sanity check: two validation batches before any training step)
 * whose batch is not the training's (its first input another size than the first one after it) is
 * left out: every tensor up to its last one that did not outlive it; its logits at a validation
 * batch of 16 had made B·T 4 times a training batch of 4's (a GPT-2: "T = 4096", "H = 3"). An
 * evaluation of the training's own batch (nanoGPT's estimate_loss at iteration 0) stays: the same
 * tokens, and its eager forward reads where a compiled training forward may not. */
void vt__drop_evaluation(vt__pass *p)
{
    size_t last = p->n; /* the evaluation's last tensor before any backward */
    int train = 0;      /* a training forward's tensor before any backward */
    for (size_t i = 0; i < p->n && p->t[i].early; i++) {
        if (p->t[i].eval)
            last = i;
        train |= p->t[i].made == INFER_MADE_FORWARD && !p->t[i].eval;
    }
    if (last == p->n || !train) /* (an evaluation run: its forwards are the ones to read) */
        return;
    uint64_t in_eval = 0, in_train = 0; /* the first input before its last tensor, and after */
    for (size_t i = 0; i < p->n && p->t[i].early; i++) {
        if (!p->t[i].input || p->t[i].eval)
            continue;
        uint64_t *first = i < last ? &in_eval : &in_train;
        if (!*first)
            *first = p->t[i].size;
    }
    if (!in_eval || !in_train || in_eval == in_train)
        return;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!(i <= last && !p->t[i].live && !p->t[i].kept && !p->t[i].init))
            p->t[k++] = p->t[i];
    p->n = k; /* (vt__trim_oom and vt__find_images find their indexes in what is left) */
}
