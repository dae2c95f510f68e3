/* datasrc.c — the lines of a recorded script where storage filled with a constant is the program's
 * data, not a weight (datasrc.h). */
#include "datasrc.h"

#include <stdlib.h>
#include <string.h>

#include "pysrc.h"

/* names_weight: [a, b) of the cleaned source names a word that makes or names a weight */
static int names_weight(const char *c, size_t a, size_t b)
{
    static const char *const words[] = {"requires_grad", "Parameter", "parameters", "forward"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t k = strlen(words[w]);
        for (size_t i = a; i + k <= b; i++)
            if (c[i] == words[w][0] && !memcmp(c + i, words[w], k))
                return 1;
    }
    return 0;
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
    long *open = nl > 0 ? malloc((size_t)nl * sizeof *open) : NULL;
    char *kind = nl > 0 ? malloc((size_t)nl * 2) : NULL, *names = kind ? kind + nl : NULL;
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
    long depth = 0;
    for (long i = 0; i < nl; i++) {
        while (depth && L[open[depth - 1]].indent >= L[i].indent)
            depth--;
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
        int ok = cls >= 0 ? plain && !names[cls] : fn >= 0 ? !names[fn] : !module_names;
        for (uint32_t ln = L[i].first; ok && ln <= L[i].last && ln < n; ln++)
            out[ln] |= bit, set++;
        int h = header(c, &L[i]);
        if (h) {
            kind[depth] = (char)h;
            names[depth] = (char)names_weight(c, L[i].a, L[block_end(L, nl, i)].b);
            open[depth++] = i;
        }
    }
out:
    free(kind);
    free(open);
    free(L);
    free(c);
    return set;
}
