/* evalsrc.c — an evaluation written inline in a training loop (model.eval(); with
 * torch.no_grad(): ... inside main), read from the recorded script: the lines of such blocks, and
 * whether a stack passes through one. Interface: evalsrc.h. */
#include "evalsrc.h"

#include <stdlib.h>
#include <string.h>

#include "evalsrc_flow.h"
#include "namewords.h"
#include "pysrc.h" /* (lline: a logical line of the cleaned source) */

/* find: needle in c[a, b), its index, else (size_t)-1 */
static size_t find(const char *c, size_t a, size_t b, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = a; i + m <= b; i++)
        if (c[i] == needle[0] && !memcmp(c + i, needle, m))
            return i;
    return (size_t)-1;
}

static int starts(const char *c, const lline *l, const char *word)
{
    size_t m = strlen(word);
    return l->b - l->a >= m && !memcmp(c + l->a, word, m);
}

/* inline_body: the header line l has code after its colon (with x: y = f()) */
static int inline_body(const char *c, const lline *l)
{
    int depth = 0;
    for (size_t i = l->a; i < l->b; i++) {
        char ch = c[i];
        depth += ch == '(' || ch == '[' || ch == '{';
        depth -= (ch == ')' || ch == ']' || ch == '}') && depth > 0;
        if (ch == ':' && !depth && (i + 1 >= l->b || c[i + 1] != '=')) {
            for (i++; i < l->b; i++)
                if (c[i] != ' ' && c[i] != '\t' && c[i] != '\r')
                    return 1;
            return 0;
        }
    }
    return 0;
}

static int ident(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* names_pass: the def at line d is named, word for word, like a pass that makes outputs without
 * training (sample, generate, evaluate, validate, predict, infer; not update_parameters, an EMA's
 * no_grad update of the weights, nor sample_t, a step's noise drawn under no_grad: the callers'
 * rule below) */
static int names_pass(const char *c, const lline *l, size_t *na, size_t *nb)
{
    size_t a = find(c, l->a, l->b, "def ");
    if (a == (size_t)-1)
        return 0;
    a += 4;
    while (a < l->b && c[a] == ' ')
        a++;
    size_t b = a;
    while (b < l->b && ident(c[b]))
        b++;
    *na = a, *nb = b;
    /* (namewords.h, not its short forms: a def's "val" is often a value's, "gen" a generator's) */
    return (namewords_kinds(c + a, b - a, "_", 0) &
            (NW_SAMPLE | NW_GEN | NW_EVAL | NW_PREDICT | NW_INFER)) != 0;
}

/* What one pass over the logical lines records, so that each block is answered from tables: the
 * work grows with the script's size times a log, not with a block's lines times its function's
 * (asked line by line, 3,400 no_grad blocks in one function took ~10 minutes a report). */
#define NONE ((size_t)-1)
typedef struct scan {
    const char *c;
    const lline *L;
    size_t n;
    size_t *par; /* par[i]: the line whose block holds line i (the nearest before it indented less);
                    n none */
    size_t *end; /* end[i]: the line after the block line i opens (the first after it not deeper) */
    size_t *fn;  /* fn[i]: the def around line i (its nearest ancestor that is one); n none */
    size_t *bw;  /* bw[i]: how many of the lines before line i call .backward( (n + 1 of them) */
    size_t *prev; /* prev[i]: the line before i at its indentation in its block; NONE */
    /* of the receivers R of the .eval() calls in a line, the nearest lines that call R.train(
     * (trains_back: R goes back to training): tp, 1 + the last one at or before it (0: none), ts,
     * the first one after it (NONE: none); s_: over it and the lines before it at its
     * indentation in its block (prev's chain); b_: over the lines of the block it opens */
    size_t *tp, *ts, *stp, *sts, *btp, *bts;
    size_t *stack;
} scan;

static int is_def(const char *c, const lline *l)
{
    return starts(c, l, "def ") || starts(c, l, "async def ");
}

/* backward: a line in [from, to) calls .backward( */
static int backward(const scan *s, size_t from, size_t to)
{
    return from < to && s->bw[to] > s->bw[from];
}

/* fn_end: the line after the function around line i (the file's end when none) */
static size_t fn_end(const scan *s, size_t i)
{
    return s->fn[i] == s->n ? s->n : s->end[s->fn[i]];
}

/* trains: the receivers of the .eval() calls in lines whose nearest R.train( lines are tp, ts
 * (scan's) include one sent back to training in the function [fa, fe) that holds those lines */
static int trains(size_t tp, size_t ts, size_t fa, size_t fe)
{
    return tp > fa || ts < fe;
}

/* a receiver: the run of name characters and dots before c[at], within [a, at) */
static size_t receiver(const char *c, size_t a, size_t at)
{
    size_t r = at;
    while (r > a && (ident(c[r - 1]) || c[r - 1] == '.'))
        r--;
    return r;
}

typedef struct recv {
    size_t a, len, line;
} recv;
static const char *g_sort_c; /* (qsort's comparator has no context argument) */

static int recv_cmp3(const char *c, const recv *x, size_t a, size_t len, size_t line)
{
    if (x->len != len)
        return x->len < len ? -1 : 1;
    int k = memcmp(c + x->a, c + a, len);
    if (k)
        return k;
    return x->line < line ? -1 : x->line > line;
}

static int recv_cmp(const void *x, const void *y)
{
    const recv *b = y;
    return recv_cmp3(g_sort_c, x, b->a, b->len, b->line);
}

/* trains_table: every R.train( call (R of at most 120 bytes: a longer .eval() receiver is not
 * looked up), sorted by R, then line; their count, -1 out of memory */
static long trains_table(const scan *s, recv **out)
{
    size_t cap = 64, m = 0;
    recv *v = malloc(cap * sizeof *v);
    if (!v)
        return -1;
    for (size_t j = 0; j < s->n; j++)
        for (size_t at = s->L[j].a; (at = find(s->c, at, s->L[j].b, ".train(")) != NONE; at++) {
            size_t r = receiver(s->c, s->L[j].a, at);
            if (r == at || at - r > 120)
                continue;
            if (m == cap) {
                recv *w = realloc(v, cap * 2 * sizeof *v);
                if (!w) {
                    free(v);
                    return -1;
                }
                v = w, cap *= 2;
            }
            v[m++] = (recv){r, at - r, j};
        }
    g_sort_c = s->c;
    qsort(v, m, sizeof *v, recv_cmp);
    *out = v;
    return (long)m;
}

/* eval_trains: tp and ts of line j (scan's), from the table of R.train( calls */
static void eval_trains(scan *s, const recv *v, size_t m, size_t j)
{
    const lline *l = &s->L[j];
    s->tp[j] = 0, s->ts[j] = NONE;
    for (size_t at = l->a; (at = find(s->c, at, l->b, ".eval()")) != NONE; at++) {
        size_t r = receiver(s->c, l->a, at), lo = 0, hi = m;
        if (r == at || at - r > 120)
            continue;
        while (lo < hi) { /* the first call of R on a line after j, or the first of a later R */
            size_t mid = lo + (hi - lo) / 2;
            if (recv_cmp3(s->c, &v[mid], r, at - r, j + 1) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < m && v[lo].len == at - r && !memcmp(s->c + v[lo].a, s->c + r, at - r) &&
            v[lo].line < s->ts[j])
            s->ts[j] = v[lo].line;
        if (lo > 0 && v[lo - 1].len == at - r && !memcmp(s->c + v[lo - 1].a, s->c + r, at - r) &&
            v[lo - 1].line + 1 > s->tp[j])
            s->tp[j] = v[lo - 1].line + 1;
    }
}

/* close: line j's block ends at line i (n: the file's end); what it holds joins its parent's */
static void close_block(scan *s, size_t j, size_t i)
{
    s->end[j] = i;
    size_t p = s->par[j];
    if (p == s->n)
        return;
    size_t tp = s->tp[j] > s->btp[j] ? s->tp[j] : s->btp[j];
    size_t ts = s->ts[j] < s->bts[j] ? s->ts[j] : s->bts[j];
    if (tp > s->btp[p])
        s->btp[p] = tp;
    if (ts < s->bts[p])
        s->bts[p] = ts;
}

/* scan_make: the tables of the logical lines L[0, n) of c; 0, -1 out of memory */
static int scan_make(scan *s, const char *c, const lline *L, size_t n)
{
    memset(s, 0, sizeof *s);
    s->c = c, s->L = L, s->n = n;
    size_t **cols[] = {&s->par, &s->end, &s->fn,  &s->prev, &s->tp,   &s->ts,
                       &s->stp, &s->sts, &s->btp, &s->bts,  &s->stack};
    size_t k = sizeof cols / sizeof cols[0];
    size_t *mem = malloc(((k + 1) * n + 1) * sizeof *mem); /* (bw, last, holds n + 1) */
    if (!mem)
        return -1;
    for (size_t i = 0; i < k; i++)
        *cols[i] = mem + i * n;
    s->bw = mem + k * n;
    recv *v = NULL;
    long m = trains_table(s, &v);
    if (m < 0) {
        free(mem);
        return -1;
    }
    s->bw[0] = 0;
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        s->bw[i + 1] = s->bw[i] + (find(c, L[i].a, L[i].b, ".backward(") != NONE);
        eval_trains(s, v, (size_t)m, i);
        s->btp[i] = 0, s->bts[i] = NONE, s->prev[i] = NONE;
        for (; top && L[s->stack[top - 1]].indent >= L[i].indent; top--) {
            size_t j = s->stack[top - 1];
            if (L[j].indent == L[i].indent)
                s->prev[i] = j;
            close_block(s, j, i);
        }
        size_t p = top ? s->stack[top - 1] : n;
        s->par[i] = p;
        s->fn[i] = p == n ? n : is_def(c, &L[p]) ? p : s->fn[p];
        size_t q = s->prev[i];
        s->stp[i] = q != NONE && s->stp[q] > s->tp[i] ? s->stp[q] : s->tp[i];
        s->sts[i] = q != NONE && s->sts[q] < s->ts[i] ? s->sts[q] : s->ts[i];
        s->stack[top++] = i;
    }
    while (top)
        close_block(s, s->stack[--top], n);
    free(v);
    return 0;
}

static void scan_free(scan *s)
{
    free(s->par); /* (the first column: the whole block) */
    memset(s, 0, sizeof *s);
}

/* inline_eval: the with-block at line w is an inline evaluation (evalsrc.h's rules): 1, 2 where
 * its outputs feed the step, else 0 */
static int inline_eval(const scan *s, size_t w)
{
    const char *c = s->c;
    const lline *h = &s->L[w];
    size_t n = s->n, colon = find(c, h->a, h->b, ":");
    size_t hb = colon == NONE ? h->b : colon;
    if (!starts(c, h, "with ") && !starts(c, h, "with(") && !starts(c, h, "async with "))
        return 0;
    if (find(c, h->a, hb, "no_grad(") == NONE && find(c, h->a, hb, "inference_mode(") == NONE &&
        find(c, h->a, hb, "set_grad_enabled(False)") == NONE)
        return 0;
    int one = inline_body(c, h);
    size_t e = one ? w + 1 : s->end[w];
    size_t p = s->par[w], pe = p == n ? n : s->end[p];
    /* the function around it (the file when none) */
    size_t f = s->fn[w], fa = f == n ? 0 : f + 1, fe = fn_end(s, w);
    /* no backward in it; one elsewhere in the function */
    if (backward(s, one ? w : w + 1, e) || !backward(s, fa, fe))
        return 0;
    /* model.eval() before it in its block, or in it, that the function sends back to training */
    size_t q = s->prev[w];
    if (!(q != NONE && trains(s->stp[q], s->sts[q], fa, fe)) &&
        !(one ? trains(s->tp[w], s->ts[w], fa, fe) : trains(s->btp[w], s->bts[w], fa, fe)))
        return 0;
    /* and what it computes feeds no backward after it: a rollout the step trains on is a pass
     * of the step's (PPO's, collected under model.eval() and no_grad, had been an evaluation),
     * the same where the steps that train on it come in the block around it (a PPO iteration's
     * rollout, then its updates: that pass had been read as the training's forward) */
    if (backward(s, e, fe) && evalsrc_feeds_backward(c, s->L, w, one, e, fe, w))
        return 2;
    /* or the next iteration's steps train on it: a loop around it (in the function; an outer
     * one too, the rollout's own steps in an inner loop) whose body before it has a backward that
     * reads what it bound (a rollout collected at the end of the loop's body for the next
     * iteration's updates had been an evaluation) */
    for (size_t lp = s->par[w]; lp != n && lp != f; lp = s->par[lp])
        if ((starts(c, &s->L[lp], "for ") || starts(c, &s->L[lp], "async for ") ||
             starts(c, &s->L[lp], "while ")) &&
            backward(s, lp + 1, w) &&
            evalsrc_feeds_backward(c, s->L, w, one, e, s->end[lp], lp + 1))
            return 2;
    /* else, a backward after it in the block around it: the step's (a forward before it) */
    return backward(s, e, pe) ? 0 : 1;
}

/* a def that may be a pass of its own, and what its name's calls say */
typedef struct pass {
    size_t a, len, line; /* its name's bytes, its line */
    size_t calls, after; /* the first of its name's (sorted): the lines' calls name( of that name
                          * and those with a .backward( after them; each: those on its own line */
    size_t own, own_after;
} pass;

static int pass_cmp(const void *x, const void *y)
{
    const pass *p = x, *q = y;
    if (p->len != q->len)
        return p->len < q->len ? -1 : 1;
    return memcmp(g_sort_c + p->a, g_sort_c + q->a, p->len);
}

/* no_grad_passes: the defs decorated @torch.no_grad() / @torch.inference_mode() that are passes
 * of their own in a program that trains: named like one (names_pass), no .backward( in them,
 * called somewhere and, at every call, no .backward( after the call in the function around it (a
 * noise sampler under no_grad that the step calls before its backward is the step's); is[d] set
 * for each; -1 out of memory */
static int no_grad_passes(const scan *s, uint8_t *is)
{
    const char *c = s->c;
    const lline *L = s->L;
    size_t n = s->n, np = 0;
    if (!backward(s, 0, n))
        return 0;
    pass *P = malloc(n * sizeof *P);
    size_t *at = malloc(n * sizeof *at); /* by line: its def's index in P, NONE */
    if (!P || !at) {
        free(P), free(at);
        return -1;
    }
    for (size_t d = 0; d < n; d++) {
        const lline *h = &L[d];
        size_t na, nb;
        at[d] = NONE;
        if (!is_def(c, h) || !names_pass(c, h, &na, &nb) || nb - na + 2 > 80)
            continue;
        int dec = 0;
        for (size_t j = d; j-- > 0 && L[j].indent == h->indent && starts(c, &L[j], "@");)
            dec |= find(c, L[j].a, L[j].b, "no_grad(") != NONE ||
                   find(c, L[j].a, L[j].b, "inference_mode(") != NONE;
        if (dec && !backward(s, d, s->end[d]))
            P[np++] = (pass){na, nb - na, d, 0, 0, 0, 0};
    }
    g_sort_c = c;
    qsort(P, np, sizeof *P, pass_cmp);
    for (size_t i = 0; i < np; i++)
        at[P[i].line] = i;
    /* each call name( (a whole name: nothing of one just before it) counts for every def of that
     * name but one on its own line */
    for (size_t k = 0; np && k < n; k++) {
        size_t after = backward(s, k, fn_end(s, k));
        for (size_t i = L[k].a; i < L[k].b;) {
            if (!ident(c[i])) {
                i++;
                continue;
            }
            size_t a = i;
            while (i < L[k].b && ident(c[i]))
                i++;
            if (i >= L[k].b || c[i] != '(')
                continue;
            pass key = {a, i - a, 0, 0, 0, 0, 0};
            size_t lo = 0, hi = np;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (pass_cmp(&P[mid], &key) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == np || pass_cmp(&P[lo], &key))
                continue;
            P[lo].calls++, P[lo].after += after;
            if (at[k] != NONE && !pass_cmp(&P[at[k]], &key))
                P[at[k]].own++, P[at[k]].own_after += after;
        }
    }
    for (size_t i = 0, first = 0; i < np; i++) {
        if (pass_cmp(&P[i], &P[first]))
            first = i;
        if (P[first].calls > P[i].own && P[first].after == P[i].own_after)
            is[P[i].line] = 1;
    }
    free(P);
    free(at);
    return 0;
}

size_t evalsrc_lines(const char *src, size_t len, uint8_t *out, size_t nout)
{
    memset(out, 0, nout);
    char *c = pysrc_clean(src, len);
    lline *L = NULL;
    long nl = c ? pysrc_lines(c, len, &L) : -1;
    scan s;
    uint8_t *ispass = nl > 0 ? calloc((size_t)nl, 1) : NULL;
    if (!ispass || scan_make(&s, c, L, (size_t)nl) < 0) {
        free(ispass), free(L), free(c);
        return 0;
    }
    size_t set = 0, n = (size_t)nl;
    uint32_t done =
        0; /* the lines up to it are set (blocks come in order, each inside or after the last) */
    if (no_grad_passes(&s, ispass) == 0)
        for (size_t w = 0; w < n; w++) {
            uint32_t from, to;
            uint8_t v = 1;
            if (ispass[w]) {
                from = L[w].first, to = L[s.end[w] - 1].last;
            } else if ((v = (uint8_t)inline_eval(&s, w)) != 0) {
                int one = inline_body(c, &L[w]);
                size_t e = one ? w + 1 : s.end[w];
                from = one ? L[w].first : L[w + 1 < e ? w + 1 : w].first, to = L[e - 1].last;
            } else
                continue;
            for (uint32_t l = from > done ? from : done + 1; l <= to && l < nout; l++)
                set += !out[l], out[l] = v;
            if (to > done)
                done = to;
        }
    scan_free(&s);
    free(ispass);
    free(L);
    free(c);
    return set;
}
