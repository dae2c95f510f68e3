/* scriptpass.c — an evaluation pass a training script would run, and a state it carries from one
 * batch to the next, read from its recorded source. Interface: scriptpass.h. */
#include "scriptpass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalsrc.h"
#include "pysrc.h"
#include "phases.h"

#define NONE ((size_t)-1)
#define CARRIED_NEAR 200 /* the most lines between a state's detach and the call it feeds */

typedef struct src {
    char *c;    /* the source with strings' and comments' bytes blanked (pysrc_clean) */
    lline *L;   /* its logical lines (pysrc_lines) */
    size_t n;   /* their count */
    size_t *p;  /* p[i]: the line whose block holds line i (the nearest before it indented less);
                   NONE */
    size_t *e;  /* e[i]: the line after the block line i opens */
    size_t *bw; /* bw[i]: how many of the lines before line i call .backward( (n + 1 of them) */
    size_t *dd, ndd; /* the defs whose blocks call .detach (scriptpass_carried's) */
} src;

static int ident(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* has: needle in c[a, b) at or after a, its index, else NONE */
static size_t has(const char *c, size_t a, size_t b, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = a; i + m <= b; i++)
        if (c[i] == needle[0] && !memcmp(c + i, needle, m))
            return i;
    return NONE;
}

static void src_free(src *s)
{
    free(s->c), free(s->L), free(s->p), free(s->e), free(s->bw), free(s->dd);
    memset(s, 0, sizeof *s);
}

/* src_make: s from text[0, len); 0, -1 out of memory */
static int src_make(src *s, const char *text, size_t len)
{
    memset(s, 0, sizeof *s);
    long n = (s->c = pysrc_clean(text, len)) ? pysrc_lines(s->c, len, &s->L) : -1;
    if (n < 0) {
        src_free(s);
        return -1;
    }
    s->n = (size_t)n;
    const char *c = s->c;
    s->p = malloc((s->n + 1) * sizeof *s->p);
    s->e = malloc((s->n + 1) * sizeof *s->e);
    s->bw = malloc((s->n + 1) * sizeof *s->bw);
    size_t *stk = malloc((s->n + 1) * sizeof *stk), top = 0;
    if (!s->L || !s->p || !s->e || !s->bw || !stk) {
        free(stk);
        src_free(s);
        return -1;
    }
    for (size_t i = 0; i < s->n; i++) { /* (the blocks still open, innermost last) */
        while (top && s->L[stk[top - 1]].indent >= s->L[i].indent)
            s->e[stk[--top]] = i;
        s->p[i] = top ? stk[top - 1] : NONE;
        stk[top++] = i;
    }
    while (top)
        s->e[stk[--top]] = s->n;
    free(stk);
    s->bw[0] = 0;
    for (size_t i = 0; i < s->n; i++)
        s->bw[i + 1] = s->bw[i] + (has(c, s->L[i].a, s->L[i].b, ".backward(") != NONE);
    return 0;
}

/* word: the name w (wl bytes) as a whole name in c[a, b) (not an attribute: no '.' before it),
 * the first at or after a; NONE */
static size_t word(const char *c, size_t a, size_t b, const char *w, size_t wl)
{
    for (size_t i = a; i + wl <= b; i++)
        if (!memcmp(c + i, w, wl) && (i == a || (!ident(c[i - 1]) && c[i - 1] != '.')) &&
            (i + wl == b || !ident(c[i + wl])))
            return i;
    return NONE;
}

static int starts(const src *s, size_t i, const char *w)
{
    size_t m = strlen(w);
    return s->L[i].b - s->L[i].a >= m && !memcmp(s->c + s->L[i].a, w, m);
}

/* def_name: line i is a def: its name's bytes [*na, *nb) */
static int def_name(const src *s, size_t i, size_t *na, size_t *nb)
{
    size_t a = s->L[i].a;
    if (starts(s, i, "async def "))
        a += 6;
    else if (!starts(s, i, "def "))
        return 0;
    for (a += 4; a < s->L[i].b && s->c[a] == ' '; a++)
        ;
    size_t b = a;
    while (b < s->L[i].b && ident(s->c[b]))
        b++;
    *na = a, *nb = b;
    return b > a;
}

/* encl: the nearest line holding line i whose text starts with one of words; NONE */
static size_t encl(const src *s, size_t i, const char *const *words)
{
    for (size_t q = s->p[i]; q != NONE; q = s->p[q])
        for (int k = 0; words[k]; k++)
            if (starts(s, q, words[k]))
                return q;
    return NONE;
}

static const char *const k_defs[] = {"def ", "async def ", NULL};
static const char *const k_loops[] = {"for ", "while ", "async for ", NULL};

/* def_around: the name of the def that holds physical line at (a def line: its own), into def
 * (dn bytes); "" where none */
static void def_around(const src *s, uint32_t at, char *def, size_t dn)
{
    size_t i = 0, na, nb;
    while (i < s->n && s->L[i].last < at)
        i++;
    if (i == s->n || s->L[i].first > at)
        return;
    size_t q = def_name(s, i, &na, &nb) ? i : encl(s, i, k_defs);
    if (q != NONE && def_name(s, q, &na, &nb))
        snprintf(def, dn, "%.*s", (int)(nb - na), s->c + na);
}

uint32_t scriptpass_eval(const char *text, size_t len, char *name, size_t n, char *def, size_t dn)
{
    if (n)
        name[0] = '\0';
    if (dn)
        def[0] = '\0';
    size_t nl = 2;
    for (size_t i = 0; i < len; i++)
        nl += text[i] == '\n';
    uint8_t *m = malloc(nl);
    uint32_t at = 0;
    if (m && evalsrc_lines(text, len, m, nl))
        for (size_t l = 1; l < nl && !at; l++)
            at = m[l] == 1 ? (uint32_t)l : 0;
    free(m);
    src s;
    if (src_make(&s, text, len) < 0)
        return at;
    if (at)
        def_around(&s, at, def, dn);
    else if (has(s.c, 0, len, ".backward(") != NONE)
        for (size_t i = 0; i < s.n && !at; i++) {
            size_t na, nb;
            char fn[80];
            if (!def_name(&s, i, &na, &nb) || nb - na >= sizeof fn)
                continue;
            memcpy(fn, s.c + na, nb - na);
            fn[nb - na] = '\0';
            if (!phases_eval_function(fn))
                continue;
            /* called: name( elsewhere than its def (self.validation_step( counts) */
            for (size_t k = 0; k < s.n && !at; k++)
                for (size_t w = s.L[k].a;
                     k != i && (w = word(s.c, w, s.L[k].b, fn, nb - na)) != NONE && !at; w++) {
                    size_t x = w + (nb - na);
                    while (x < s.L[k].b && s.c[x] == ' ')
                        x++;
                    if (x < s.L[k].b && s.c[x] == '(')
                        at = s.L[i].first, snprintf(name, n, "%s", fn);
                }
        }
    src_free(&s);
    return at;
}

/* assigned: line i is `targets = value` (one '=' at depth 0, not ==, <=, +=, ...): the '='s
 * index, else NONE */
static size_t assigned(const src *s, size_t i)
{
    const char *c = s->c;
    int depth = 0;
    for (size_t k = s->L[i].a; k < s->L[i].b; k++) {
        depth += c[k] == '(' || c[k] == '[' || c[k] == '{';
        depth -= (c[k] == ')' || c[k] == ']' || c[k] == '}') && depth > 0;
        if (c[k] != '=' || depth)
            continue;
        if (k + 1 < s->L[i].b && c[k + 1] == '=')
            return NONE;
        if (k > s->L[i].a && strchr("=!<>+-*/%&|^@:", c[k - 1]))
            return NONE;
        return k;
    }
    return NONE;
}

/* detaches: c[a, b) calls .detach( / .detach_(, or a def of the script whose block does */
static int detaches(const src *s, size_t a, size_t b)
{
    if (has(s->c, a, b, ".detach(") != NONE || has(s->c, a, b, ".detach_(") != NONE)
        return 1;
    for (size_t k = 0; k < s->ndd; k++) {
        size_t na, nb, i = s->dd[k];
        def_name(s, i, &na, &nb);
        for (size_t w = a; (w = word(s->c, w, b, s->c + na, nb - na)) != NONE; w++)
            if (w + (nb - na) < b && s->c[w + (nb - na)] == '(')
                return 1;
    }
    return 0;
}

/* in_call: the name w (wl bytes) inside the brackets of a call in c[a, b) */
static int in_call(const char *c, size_t a, size_t b, const char *w, size_t wl)
{
    for (size_t k = a; (k = word(c, k, b, w, wl)) != NONE; k++) {
        int depth = 0;
        for (size_t j = a; j < k; j++)
            depth += c[j] == '(', depth -= c[j] == ')' && depth > 0;
        if (depth > 0)
            return 1;
    }
    return 0;
}

uint32_t scriptpass_carried(const char *text, size_t len, char *name, size_t n)
{
    if (n)
        name[0] = '\0';
    src s;
    if (src_make(&s, text, len) < 0)
        return 0;
    uint32_t at = 0;
    const char *c = s.c;
    if (!(s.dd = malloc((s.n + 1) * sizeof *s.dd))) {
        src_free(&s);
        return 0;
    }
    /* the defs that detach, once (each an ancestor of its lines: a def's block is walked once
     * per def that holds it) */
    for (size_t i = 0; i < s.n; i++) {
        size_t na, nb;
        if (def_name(&s, i, &na, &nb) && has(c, s.L[i].a, s.L[s.e[i] - 1].b, ".detach") != NONE)
            s.dd[s.ndd++] = i;
    }
    for (size_t i = 0; i < s.n && !at; i++) {
        size_t eq = assigned(&s, i), lp = encl(&s, i, k_loops), fn = encl(&s, i, k_defs);
        if (eq == NONE || lp == NONE || fn == NONE ||
            s.bw[s.e[fn]] == s.bw[fn] || /* (no .backward( in the function) */
            !detaches(&s, eq + 1, s.L[i].b))
            continue;
        /* each name the line binds that its value reads */
        for (size_t t = s.L[i].a; t < eq && !at;) {
            if (!ident(c[t]) || (t > s.L[i].a && (ident(c[t - 1]) || c[t - 1] == '.'))) {
                t++;
                continue;
            }
            size_t te = t;
            while (te < eq && ident(c[te]))
                te++;
            size_t wl = te - t;
            if ((te < eq && (c[te] == '.' || c[te] == '[')) ||
                word(c, eq + 1, s.L[i].b, c + t, wl) == NONE) {
                t = te;
                continue;
            }
            /* another line of the same loop binds it from a call that takes it, no detach
             * (within CARRIED_NEAR lines of it: the work stays linear in a long loop) */
            size_t k0 = i > lp + CARRIED_NEAR ? i - CARRIED_NEAR : lp + 1;
            size_t k1 = s.e[lp] - i > CARRIED_NEAR ? i + CARRIED_NEAR : s.e[lp];
            for (size_t k = k0; k < k1 && !at; k++) {
                size_t ek = assigned(&s, k);
                if (k == i || ek == NONE || encl(&s, k, k_loops) != lp ||
                    word(c, s.L[k].a, ek, c + t, wl) == NONE ||
                    !in_call(c, ek + 1, s.L[k].b, c + t, wl) || detaches(&s, ek + 1, s.L[k].b))
                    continue;
                at = s.L[i].first;
                snprintf(name, n, "%.*s", (int)wl, c + t);
            }
            t = te;
        }
    }
    src_free(&s);
    return at;
}
