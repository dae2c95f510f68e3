/* optsrc.c — the body lines of the program's own optimizer classes (optsrc.h). */
#include "optsrc.h"

#include <stdlib.h>
#include <string.h>

#include "pysrc.h"

static int name_byte(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* optimizer_class: L is a class header whose bases (its parenthesis) name Optimizer as a whole
 * name, alone or after a dot */
static int optimizer_class(const char *c, const lline *l)
{
    const char *p = c + l->a;
    size_t n = l->b - l->a;
    if (n < 7 || memcmp(p, "class", 5) || (p[5] != ' ' && p[5] != '\t'))
        return 0;
    const char *o = memchr(p, '(', n), *e = o ? memchr(o, ')', (size_t)(p + n - o)) : NULL;
    for (const char *q = o; e && q + 9 <= e; q++)
        if (!memcmp(q, "Optimizer", 9) && !name_byte(q[9]) && (q[-1] == '.' || !name_byte(q[-1])))
            return 1;
    return 0;
}

size_t optsrc_lines(const char *src, size_t len, uint8_t *out, size_t n, uint8_t bit)
{
    char *c = pysrc_clean(src, len);
    lline *L = NULL;
    long nl = c ? pysrc_lines(c, len, &L) : -1;
    size_t set = 0;
    for (long i = 0; i < nl; i++) {
        if (!optimizer_class(c, &L[i]))
            continue;
        /* its body: the logical lines after it indented deeper */
        for (long j = i + 1; j < nl && L[j].indent > L[i].indent; j++)
            for (uint32_t ln = L[j].first; ln <= L[j].last && ln < n; ln++)
                out[ln] |= bit, set++;
    }
    free(L);
    free(c);
    return set;
}
