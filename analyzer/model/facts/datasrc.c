/* datasrc.c — the lines of a recorded script where storage filled with a constant is the program's
 * data, not a weight (datasrc.h). */
#include "datasrc.h"

#include <stdlib.h>
#include <string.h>

#include "pysrc.h"

/* freezes: c + i, after "requires_grad", turns a gradient off (requires_grad_(False),
 * requires_grad = False): a weight frozen (a target network's), none made */
static int freezes(const char *c, size_t i, size_t b)
{
    if (i < b && c[i] == '_')
        i++;
    while (i < b && (c[i] == ' ' || c[i] == '(' || c[i] == '='))
        i++;
    return i + 5 <= b && !memcmp(c + i, "False", 5);
}

/* names_weight: what [a, b) of the cleaned source names: 1 a word that makes a weight
 * (requires_grad, but where it turns a gradient off; Parameter; forward), 2 a model's parameters
 * (the words' bits) */
static int names_weight(const char *c, size_t a, size_t b)
{
    static const char *const words[] = {"requires_grad", "Parameter", "forward", "parameters"};
    int m = 0;
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t k = strlen(words[w]);
        for (size_t i = a; i + k <= b && !(m & (w < 3 ? 1 : 2)); i++)
            if (c[i] == words[w][0] && !memcmp(c + i, words[w], k) && (w || !freezes(c, i + k, b)))
                m |= w < 3 ? 1 : 2;
    }
    return m;
}

/* header: 'c' a class header, 'd' a def's, 0 neither (decorators are lines of their own) */
static int header(const char *c, const lline *l)
{
    const char *p = c + l->a;
    size_t n = l->b - l->a;
    if (n > 6 && !memcmp(p, "class", 5) && (p[5] == ' ' || p[5] == '\t'))
        return 'c';
    if (n > 4 && !memcmp(p, "def", 3) && (p[3] == ' ' || p[3] == '\t'))
        return 'd';
    if (n > 10 && !memcmp(p, "async", 5) && (p[5] == ' ' || p[5] == '\t'))
        return header(c, &(lline){l->first, l->last, l->indent, l->a + 6, l->b}) == 'd' ? 'd' : 0;
    return 0;
}

/* plain_class: a class header whose bases are none or object alone */
static int plain_class(const char *c, const lline *l)
{
    const char *p = memchr(c + l->a, '(', l->b - l->a), *q = memchr(c + l->a, ':', l->b - l->a);
    if (!p || (q && q < p))
        return 1;
    const char *e = memchr(p, ')', (size_t)(c + l->b - p));
    if (!e)
        return 0;
    p++;
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\\'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == ','))
        e--;
    return e == p || (e - p == 6 && !memcmp(p, "object", 6));
}

/* block_end: the last logical line of the block whose header is L[i] */
static long block_end(const lline *L, long nl, long i)
{
    long j = i;
    while (j + 1 < nl && L[j + 1].indent > L[i].indent)
        j++;
    return j;
}

size_t datasrc_lines(const char *src, size_t len, uint8_t *out, size_t n, uint8_t bit)
{
    char *c = pysrc_clean(src, len);
    lline *L = NULL;
    long nl = c ? pysrc_lines(c, len, &L) : -1;
    size_t set = 0;
    /* the enclosing headers: their lines, kinds and whether their blocks name a weight */
    long *open = nl > 0 ? malloc((size_t)nl * 2 * sizeof *open) : NULL, *blk = open ? open + nl : 0;
    char *kind = nl > 0 ? malloc((size_t)nl * 3) : NULL, *names = kind ? kind + nl : NULL;
    char *bpar = kind ? kind + 2 * nl : NULL;
    if (!open || !kind)
        goto out;
    /* the module's own lines: outside every function and class */
    int module_names = 0;
    for (long i = 0; i < nl; i++) {
        if (header(c, &L[i])) {
            i = block_end(L, nl, i);
            continue;
        }
        module_names |= names_weight(c, L[i].a, L[i].b);
    }
    long depth = 0, nb = 0;
    for (long i = 0; i < nl; i++) {
        while (depth && L[open[depth - 1]].indent >= L[i].indent)
            depth--;
        /* a model's parameters named on the line, or on a header of a block it lies in, below
         * its function's (for p in model.parameters(): m[p] = torch.zeros_like(p)): a weight's
         * storage; elsewhere in a function (main's Adam(model.parameters()) beside a replay
         * buffer's torch.zeros(...)) they say nothing of the line */
        while (nb && L[blk[nb - 1]].indent >= L[i].indent)
            nb--;
        int par = (names_weight(c, L[i].a, L[i].b) & 2) || (nb && bpar[nb - 1]);
        /* the scope that decides: the outermost class, else the innermost function, else the
         * module's own lines */
        long cls = -1, fn = -1;
        int plain = 1;
        for (long k = 0; k < depth; k++) {
            if (kind[k] == 'c') {
                if (cls < 0)
                    cls = k;
                plain &= plain_class(c, &L[open[k]]);
            } else {
                fn = k;
            }
        }
        int ok = cls >= 0  ? plain && !names[cls]
                 : fn >= 0 ? !(names[fn] & 1) && !par
                           : !(module_names & 1) && !par;
        for (uint32_t ln = L[i].first; ok && ln <= L[i].last && ln < n; ln++)
            out[ln] |= bit, set++;
        int h = header(c, &L[i]);
        if (h) {
            kind[depth] = (char)h;
            names[depth] = (char)names_weight(c, L[i].a, L[block_end(L, nl, i)].b);
            open[depth++] = i;
        }
        if (i + 1 < nl && L[i + 1].indent > L[i].indent) /* (a block's header) */
            blk[nb] = i, bpar[nb++] = (char)(!h && par);
    }
out:
    free(kind);
    free(open);
    free(L);
    free(c);
    return set;
}

/* ---- what reaches the storage a line made --------------------------------------------------- */

static int name_start(char ch)
{
    return ch == '_' || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

static int name_byte(char ch)
{
    return name_start(ch) || (ch >= '0' && ch <= '9');
}

/* line_at: the logical line of L (nl of them) holding physical line ln, -1 none */
static long line_at(const lline *L, long nl, uint32_t ln)
{
    for (long i = 0; i < nl; i++)
        if (L[i].first <= ln && ln <= L[i].last)
            return i;
    return -1;
}

/* has_name: [a, b) of c reads the name w (wn bytes) whole */
static int has_name(const char *c, size_t a, size_t b, const char *w, size_t wn)
{
    for (size_t i = a; i + wn <= b; i++)
        if (!memcmp(c + i, w, wn) && (i == a || !name_byte(c[i - 1])) &&
            (i + wn == b || !name_byte(c[i + wn])))
            return 1;
    return 0;
}

/* put_names: each name [a, b) of c reads (a number's letters are none), between spaces into out */
static int put_names(const char *c, size_t a, size_t b, char *out, size_t n, size_t *at)
{
    int k = 0;
    for (size_t i = a; i < b;) {
        if (!name_byte(c[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < b && name_byte(c[j]))
            j++;
        if (name_start(c[i]) && *at + (j - i) + 2 < n) {
            if (!*at)
                out[(*at)++] = ' ';
            memcpy(out + *at, c + i, j - i);
            *at += j - i;
            out[(*at)++] = ' ';
            out[*at] = '\0';
            k++;
        }
        i = j;
    }
    return k;
}

/* close_of: the index of the bracket closing the one at c[o], b when none before b */
static size_t close_of(const char *c, size_t o, size_t b)
{
    int depth = 0;
    for (size_t i = o; i < b; i++) {
        depth += c[i] == '(' || c[i] == '[' || c[i] == '{';
        depth -= c[i] == ')' || c[i] == ']' || c[i] == '}';
        if (!depth)
            return i;
    }
    return b;
}

/* next_arg: the end of the argument that starts at i (a comma at depth 0, or e) */
static size_t next_arg(const char *c, size_t i, size_t e)
{
    int depth = 0;
    for (; i < e; i++) {
        depth += c[i] == '(' || c[i] == '[' || c[i] == '{';
        depth -= c[i] == ')' || c[i] == ']' || c[i] == '}';
        if (!depth && c[i] == ',')
            break;
    }
    return i;
}

static size_t skip_blank(const char *c, size_t i, size_t e)
{
    while (i < e && (c[i] == ' ' || c[i] == '\t' || c[i] == '\n' || c[i] == '\\'))
        i++;
    return i;
}

#define DATASRC_PARAMS 16

int datasrc_reaching(const char *src, size_t len, uint32_t line, const char *fn, uint32_t call_line,
                     char *out, size_t n)
{
    char *c = pysrc_clean(src, len);
    lline *L = NULL;
    long nl = c ? pysrc_lines(c, len, &L) : -1, i0 = nl > 0 ? line_at(L, nl, line) : -1;
    size_t at = 0;
    int k = 0;
    if (n)
        out[0] = '\0';
    if (i0 < 0 || !n)
        goto out;
    k = put_names(c, L[i0].a, L[i0].b, out, n, &at);
    /* the function holding the line: its def's parameters (self / cls of a method left out) */
    const char *dot = fn ? strrchr(fn, '.') : NULL, *fname = dot ? dot + 1 : fn;
    long kc = call_line && fname && *fname ? line_at(L, nl, call_line) : -1;
    if (kc < 0)
        goto out;
    long d = -1;
    int ind = L[i0].indent;
    size_t fl = strlen(fname);
    for (long j = i0 - 1; j >= 0 && d < 0; j--) {
        if (L[j].indent >= ind)
            continue;
        ind = L[j].indent;
        int h = header(c, &L[j]);
        if (!h)
            continue;
        const char *p = c + L[j].a + (c[L[j].a] == 'a' ? 6 : 0) + 4; /* ("async def", "def") */
        while (*p == ' ' || *p == '\t')
            p++;
        if (h != 'd' || strncmp(p, fname, fl) || name_byte(p[fl]))
            break; /* (another function or a class holds it) */
        d = j;
    }
    if (d < 0)
        goto out;
    char par[DATASRC_PARAMS][48];
    int np = 0, npos = DATASRC_PARAMS; /* (positional ones: those before a * or **) */
    const char *po = memchr(c + L[d].a, '(', L[d].b - L[d].a);
    if (!po)
        goto out;
    size_t pe = close_of(c, (size_t)(po - c), L[d].b);
    for (size_t i = (size_t)(po - c) + 1; i < pe && np < DATASRC_PARAMS;) {
        size_t s = skip_blank(c, i, pe), e = next_arg(c, s, pe), q = s;
        if (s < e && c[s] == '*' && npos == DATASRC_PARAMS)
            npos = np;
        while (q < e && c[q] == '*')
            q++;
        size_t r = q;
        while (r < e && name_byte(c[r]))
            r++;
        if (r > q && r - q < sizeof par[0] &&
            !(np == 0 && dot &&
              ((r - q == 4 && !memcmp(c + q, "self", 4)) ||
               (r - q == 3 && !memcmp(c + q, "cls", 3))))) {
            memcpy(par[np], c + q, r - q);
            par[np++][r - q] = '\0';
        }
        i = e + 1;
    }
    /* the call: the class's name for its __init__ (the object made), else the function's */
    char callee[64];
    const char *cs = fname;
    size_t cn = fl;
    if (dot && !strcmp(fname, "__init__")) {
        const char *b = dot;
        while (b > fn && b[-1] != '.')
            b--;
        cs = b, cn = (size_t)(dot - b);
    }
    if (!cn || cn >= sizeof callee)
        goto out;
    memcpy(callee, cs, cn);
    callee[cn] = '\0';
    for (size_t i = L[kc].a; i + cn < L[kc].b; i++) {
        if (memcmp(c + i, callee, cn) || (i > L[kc].a && name_byte(c[i - 1])))
            continue;
        size_t o = skip_blank(c, i + cn, L[kc].b);
        if (o >= L[kc].b || c[o] != '(')
            continue;
        size_t ce = close_of(c, o, L[kc].b);
        int pos = 0;
        for (size_t a = o + 1; a < ce;) {
            size_t s = skip_blank(c, a, ce), e = next_arg(c, s, ce), q = s;
            while (q < e && name_byte(c[q]))
                q++;
            size_t eq = skip_blank(c, q, e);
            const char *pname = NULL;
            size_t pn = 0;
            if (q > s && eq < e && c[eq] == '=' && (eq + 1 >= e || c[eq + 1] != '=')) {
                pname = c + s, pn = q - s, s = eq + 1; /* keyword: name=expr */
            } else if (s < e && c[s] == '*') {
                pos = DATASRC_PARAMS; /* (*args: the rest's places not known) */
            } else {
                if (pos < npos && pos < np)
                    pname = par[pos], pn = strlen(par[pos]);
                pos += pos < DATASRC_PARAMS;
            }
            if (pname && has_name(c, L[i0].a, L[i0].b, pname, pn))
                k += put_names(c, s, e, out, n, &at);
            a = e + 1;
        }
        break;
    }
out:
    free(L);
    free(c);
    return k;
}
