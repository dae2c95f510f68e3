/* evalsrc.c — an evaluation written inline in a training loop (model.eval(); with
 * torch.no_grad(): ... inside main), read from the recorded script: the lines of such blocks, and
 * whether a stack passes through one. Interface: evalsrc.h. */
#include "evalsrc.h"

#include <stdlib.h>
#include <string.h>

/* a logical line of the source: its physical lines [first, last] (1-based), the indentation of
 * its first, its code's bytes [a, b) in the cleaned copy (strings' and comments' bytes blanked) */
typedef struct lline {
    uint32_t first, last;
    int indent;
    size_t a, b;
} lline;

/* clean: src with the inside of string literals and comments blanked (newlines kept), so that a
 * search for code finds code only */
static char *clean(const char *src, size_t len)
{
    char *c = malloc(len + 1);
    if (!c)
        return NULL;
    memcpy(c, src, len);
    c[len] = '\0';
    for (size_t i = 0; i < len;) {
        if (c[i] == '#') {
            while (i < len && c[i] != '\n')
                c[i++] = ' ';
            continue;
        }
        if (c[i] != '\'' && c[i] != '"') {
            i++;
            continue;
        }
        char q = c[i];
        int triple = i + 2 < len && c[i + 1] == q && c[i + 2] == q;
        i += triple ? 3 : 1;
        while (i < len) {
            if (c[i] == '\\' && i + 1 < len) {
                c[i] = ' ';
                if (c[i + 1] != '\n')
                    c[i + 1] = ' ';
                i += 2;
                continue;
            }
            if (c[i] == q && (!triple || (i + 2 < len && c[i + 1] == q && c[i + 2] == q))) {
                i += triple ? 3 : 1;
                break;
            }
            if (c[i] == '\n' && !triple) /* (a one-line string ends with its line) */
                break;
            if (c[i] != '\n')
                c[i] = ' ';
            i++;
        }
    }
    return c;
}

/* logical_lines: c's logical lines (brackets and backslashes join physical ones; blank ones
 * skipped) into *out; their count, or -1 out of memory */
static long logical_lines(const char *c, size_t len, lline **out)
{
    size_t cap = 256, n = 0, i = 0;
    uint32_t line = 1;
    lline *L = malloc(cap * sizeof *L);
    if (!L)
        return -1;
    while (i < len) {
        int indent = 0;
        while (i < len && (c[i] == ' ' || c[i] == '\t' || c[i] == '\f'))
            indent = c[i] == '\t' ? (indent / 8 + 1) * 8 : indent + (c[i] == ' '), i++;
        if (i >= len)
            break;
        if (c[i] == '\n' || c[i] == '\r') { /* blank (or a comment, blanked) */
            line += c[i++] == '\n';
            continue;
        }
        lline l = {line, line, indent, i, i};
        int depth = 0;
        char last = 0; /* the last byte that is not a blank */
        for (; i < len; i++) {
            char ch = c[i];
            if (ch == '(' || ch == '[' || ch == '{')
                depth++;
            else if ((ch == ')' || ch == ']' || ch == '}') && depth > 0)
                depth--;
            if (ch == '\n') {
                if (depth > 0 || last == '\\') {
                    line++, last = 0;
                    continue;
                }
                break;
            }
            if (ch != ' ' && ch != '\t' && ch != '\r')
                last = ch;
        }
        l.last = line, l.b = i;
        if (i < len) /* (past the newline) */
            i++, line++;
        if (n == cap) {
            lline *m = realloc(L, cap * 2 * sizeof *L);
            if (!m) {
                free(L);
                return -1;
            }
            L = m, cap *= 2;
        }
        L[n++] = l;
    }
    *out = L;
    return (long)n;
}

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

/* body_end: the logical line after the block that line i opens (the first one not indented
 * deeper) */
static size_t body_end(const lline *L, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && L[j].indent > L[i].indent)
        j++;
    return j;
}

/* parent: the line whose block holds line i (the nearest one before it indented less), n: none */
static size_t parent(const lline *L, size_t n, size_t i)
{
    for (size_t j = i; j-- > 0;)
        if (L[j].indent < L[i].indent)
            return j;
    return n;
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

/* any: needle in the logical lines [from, to) */
static int any(const char *c, const lline *L, size_t from, size_t to, const char *needle)
{
    for (size_t j = from; j < to; j++)
        if (find(c, L[j].a, L[j].b, needle) != (size_t)-1)
            return 1;
    return 0;
}

static int ident(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* trains_back: a .eval() call in line l whose receiver (model, self.model) is sent back to
 * training (R.train() in the lines [from, to)) */
static int trains_back(const char *c, const lline *l, const lline *L, size_t from, size_t to)
{
    for (size_t at = l->a; (at = find(c, at, l->b, ".eval()")) != (size_t)-1; at++) {
        size_t r = at;
        while (r > l->a && (ident(c[r - 1]) || c[r - 1] == '.'))
            r--;
        if (r == at || at - r > 120)
            continue;
        char want[136];
        memcpy(want, c + r, at - r);
        memcpy(want + (at - r), ".train(", 8);
        for (size_t j = from; j < to; j++)
            for (size_t k = L[j].a; (k = find(c, k, L[j].b, want)) != (size_t)-1; k++)
                if (k == L[j].a || (!ident(c[k - 1]) && c[k - 1] != '.'))
                    return 1;
    }
    return 0;
}

/* inline_eval: the with-block at line w is an inline evaluation (evalsrc.h's rules) */
static int inline_eval(const char *c, const lline *L, size_t n, size_t w)
{
    const lline *h = &L[w];
    size_t colon = find(c, h->a, h->b, ":");
    size_t hb = colon == (size_t)-1 ? h->b : colon;
    if (!starts(c, h, "with ") && !starts(c, h, "with(") && !starts(c, h, "async with "))
        return 0;
    if (find(c, h->a, hb, "no_grad(") == (size_t)-1 &&
        find(c, h->a, hb, "inference_mode(") == (size_t)-1 &&
        find(c, h->a, hb, "set_grad_enabled(False)") == (size_t)-1)
        return 0;
    int one = inline_body(c, h);
    size_t e = one ? w + 1 : body_end(L, n, w);
    size_t p = parent(L, n, w);
    size_t pa = p == n ? 0 : p + 1, pe = p == n ? n : body_end(L, n, p);
    /* the function around it (the file when none) */
    size_t fcur = w, f = n;
    while ((f = parent(L, n, fcur)) != n && !starts(c, &L[f], "def ") &&
           !starts(c, &L[f], "async def "))
        fcur = f;
    size_t fa = f == n ? 0 : f + 1, fe = f == n ? n : body_end(L, n, f);
    /* no backward in it, nor after it in the block around it; one elsewhere in the function */
    if ((one ? any(c, L, w, w + 1, ".backward(") : any(c, L, w + 1, e, ".backward(")) ||
        any(c, L, e, pe, ".backward(") || !any(c, L, fa, fe, ".backward("))
        return 0;
    /* model.eval() before it in its block, or in it, that the function sends back to training */
    for (size_t j = pa; j < w; j++)
        if (L[j].indent == h->indent && trains_back(c, &L[j], L, fa, fe))
            return 1;
    for (size_t j = one ? w : w + 1; j < e; j++)
        if (trains_back(c, &L[j], L, fa, fe))
            return 1;
    return 0;
}

/* names_pass: the def at line d is named, word for word, like a pass that makes outputs without
 * training (sample, generate, evaluate, validate, predict, infer; not update_parameters, an EMA's
 * no_grad update of the weights, nor sample_t, a step's noise drawn under no_grad: the callers'
 * rule below) */
static int names_pass(const char *c, const lline *l, size_t *na, size_t *nb)
{
    static const char *const words[] = {"sample",     "sampling", "samples",   "generate",
                                        "generation", "evaluate", "eval",      "validate",
                                        "validation", "predict",  "inference", NULL};
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
    for (size_t w = a; w < b;) {
        size_t n = 0;
        while (w + n < b && c[w + n] != '_')
            n++;
        for (int i = 0; words[i]; i++)
            if (n == strlen(words[i]) && !memcmp(c + w, words[i], n))
                return 1;
        w += n + 1;
    }
    return 0;
}

/* no_grad_pass: the def at line d, decorated @torch.no_grad() / @torch.inference_mode(), is a
 * pass of its own in a program that trains: named like one (names_pass), no .backward( in it,
 * called somewhere and, at every call, no .backward( after the call in the function around it
 * (a noise sampler under no_grad that the step calls before its backward is the step's) */
static int no_grad_pass(const char *c, const lline *L, size_t n, size_t d)
{
    const lline *h = &L[d];
    size_t na, nb;
    if ((!starts(c, h, "def ") && !starts(c, h, "async def ")) || !names_pass(c, h, &na, &nb))
        return 0;
    int dec = 0;
    for (size_t j = d; j-- > 0 && L[j].indent == h->indent && starts(c, &L[j], "@");)
        dec |= find(c, L[j].a, L[j].b, "no_grad(") != (size_t)-1 ||
               find(c, L[j].a, L[j].b, "inference_mode(") != (size_t)-1;
    size_t e = body_end(L, n, d);
    if (!dec || any(c, L, d, e, ".backward(") || !any(c, L, 0, n, ".backward("))
        return 0;
    char call[80];
    if (nb - na + 2 > sizeof call)
        return 0;
    memcpy(call, c + na, nb - na);
    memcpy(call + (nb - na), "(", 2);
    int calls = 0;
    for (size_t k = 0; k < n; k++) {
        if (k == d)
            continue;
        for (size_t at = L[k].a; (at = find(c, at, L[k].b, call)) != (size_t)-1; at++) {
            if (at > L[k].a && ident(c[at - 1]))
                continue;
            size_t fcur = k, f;
            while ((f = parent(L, n, fcur)) != n && !starts(c, &L[f], "def ") &&
                   !starts(c, &L[f], "async def "))
                fcur = f;
            size_t fe = f == n ? n : body_end(L, n, f);
            if (any(c, L, k, fe, ".backward("))
                return 0;
            calls++;
        }
    }
    return calls > 0;
}

size_t evalsrc_lines(const char *src, size_t len, uint8_t *out, size_t nout)
{
    memset(out, 0, nout);
    char *c = clean(src, len);
    lline *L = NULL;
    long nl = c ? logical_lines(c, len, &L) : -1;
    size_t set = 0;
    for (size_t w = 0; nl > 0 && w < (size_t)nl; w++) {
        if (no_grad_pass(c, L, (size_t)nl, w)) {
            size_t e = body_end(L, (size_t)nl, w);
            for (uint32_t l = L[w].first; l <= L[e - 1].last && l < nout; l++)
                set += !out[l], out[l] = 1;
            continue;
        }
        if (!inline_eval(c, L, (size_t)nl, w))
            continue;
        int one = inline_body(c, &L[w]);
        size_t e = one ? w + 1 : body_end(L, (size_t)nl, w);
        uint32_t from = one ? L[w].first : L[w + 1 < e ? w + 1 : w].first, to = L[e - 1].last;
        for (uint32_t l = from; l <= to && l < nout; l++)
            set += !out[l], out[l] = 1;
    }
    free(L);
    free(c);
    return set;
}

void evalsrc_free(evalsrc *e)
{
    for (int i = 0; i < e->n; i++)
        free(e->f[i].line);
    free(e->code);
    memset(e, 0, sizeof *e);
}

/* build: the recorded scripts' inline evaluations, anew when the tables hold more FILE records */
static void build(evalsrc *e, const tables *t)
{
    size_t nf = tables_n_files(t);
    if (nf == e->nfiles_seen)
        return;
    evalsrc_free(e);
    e->nfiles_seen = nf;
    for (size_t i = 0; i < nf && e->n < (int)(sizeof e->f / sizeof e->f[0]); i++) {
        const tables_file *f = tables_file_at(t, i);
        size_t ln = f ? f->name.len : 0;
        if (!f || f->kind != VT_FILE_ARG || f->flags || !f->contents.len || ln < 3 ||
            memcmp(f->name.s + ln - 3, ".py", 3))
            continue;
        size_t lines = 2;
        for (uint32_t k = 0; k < f->contents.len; k++)
            lines += f->contents.s[k] == '\n';
        uint8_t *m = malloc(lines);
        if (!m)
            continue;
        if (!evalsrc_lines(f->contents.s, f->contents.len, m, lines)) {
            free(m);
            continue;
        }
        e->f[e->n].path = f->path.s, e->f[e->n].name = f->name.s;
        e->f[e->n].line = m, e->f[e->n++].nlines = lines;
    }
}

/* file_of: which recorded script code_id's code object is in: its index, -1 none */
static int file_of(evalsrc *e, const tables *t, uint32_t code_id)
{
    if (code_id < e->ncode && e->code[code_id])
        return e->code[code_id] == 255 ? -1 : e->code[code_id] - 1;
    const tables_code *cd = tables_code_get(t, code_id);
    if (!cd) /* (not known yet: asked again) */
        return -1;
    int k = -1;
    for (int i = 0; i < e->n && k < 0; i++) {
        const char *fn = cd->filename.s, *p = e->f[i].path, *nm = e->f[i].name;
        size_t lf = cd->filename.len, lp = p ? strlen(p) : 0, ln = nm ? strlen(nm) : 0;
        if ((lp && lf == lp && !memcmp(fn, p, lp)) ||
            (!lp && ln && lf >= ln && !memcmp(fn + lf - ln, nm, ln) &&
             (lf == ln || fn[lf - ln - 1] == '/')))
            k = i;
    }
    if (code_id >= e->ncode && code_id <= 2 * tables_n_codes(t) + 1024) {
        size_t n = e->ncode ? e->ncode : 256;
        while (n <= code_id)
            n *= 2;
        uint8_t *m = realloc(e->code, n);
        if (m) {
            memset(m + e->ncode, 0, n - e->ncode);
            e->code = m, e->ncode = n;
        }
    }
    if (code_id < e->ncode)
        e->code[code_id] = k < 0 ? 255 : (uint8_t)(k + 1);
    return k;
}

static int on_line(const evalsrc *e, int k, int line)
{
    return k >= 0 && line > 0 && (size_t)line < e->f[k].nlines && e->f[k].line[line];
}

int evalsrc_stack(evalsrc *e, tables *t, const tables_stack *st)
{
    build(e, t);
    if (!e->n)
        return 0;
    for (unsigned i = 0; i < st->n_python; i++) {
        uint64_t raw = st->frames[st->n_native + i];
        int k = file_of(e, t, VT_PYFRAME_CODE(raw));
        if (k < 0)
            continue;
        tables_frame fr;
        tables_resolve_frame(t, raw, TABLES_FRAME_PYTHON, &fr);
        if (on_line(e, k, fr.line))
            return 1;
    }
    return 0;
}

int evalsrc_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n)
{
    build(e, t);
    for (size_t i = 0; e->n && i < n; i++)
        if (f[i].kind == TABLES_FRAME_PYTHON && on_line(e, file_of(e, t, f[i].code_id), f[i].line))
            return 1;
    return 0;
}
