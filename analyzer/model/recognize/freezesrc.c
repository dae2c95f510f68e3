/* freezesrc.c — whether a program freezes weights, from its recorded source: a textual inversion
 * (a frozen fp16 UNet after a trained token embedding) out of memory in its first forward had
 * been costed AdamW's state and a gradient for every weight, 4.49 GiB where its one trained table
 * makes 0.28, and its lower bounds had exceeded what its own smaller batches measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freezesrc.h"
#include "pysrc.h"
#include "vramtrace/trace_format.h"

/* freeze_at: the length of the freeze written at s[i] (".requires_grad_(False)",
 * ".requires_grad = False", spaces allowed around its parts), else 0 */
static size_t freeze_at(const char *s, size_t i, size_t len)
{
    static const char attr[] = ".requires_grad";
    const size_t al = sizeof attr - 1;
    if (i + al > len || memcmp(s + i, attr, al))
        return 0;
    size_t j = i + al;
    int call = j < len && s[j] == '_';
    j += call;
    while (j < len && s[j] == ' ')
        j++;
    if (j >= len || s[j] != (call ? '(' : '=')) /* (== False: its second '=' is no False) */
        return 0;
    j++;
    while (j < len && s[j] == ' ')
        j++;
    if (j + 5 > len || memcmp(s + j, "False", 5))
        return 0;
    j += 5;
    if (call) {
        while (j < len && s[j] == ' ')
            j++;
        if (j >= len || s[j] != ')')
            return 0;
        j++;
    } else if (j < len && (s[j] == '_' || (s[j] >= 'a' && s[j] <= 'z') ||
                           (s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= '0' && s[j] <= '9'))) {
        return 0; /* (a longer name: False_x) */
    }
    return j - i;
}

/* kw: logical line l of the cleaned source c begins with keyword w and a space or ':' */
static int kw(const char *c, const lline *l, const char *w)
{
    size_t n = strlen(w);
    return l->b - l->a > n && !memcmp(c + l->a, w, n) && (c[l->a + n] == ' ' || c[l->a + n] == ':');
}

/* unconditional: a statement whose enclosing block headers are L[open[0..depth)] runs whenever
 * its function (or the script) does: no if, elif, else or while encloses it up to its def (a
 * --freeze-backbone branch that the run may not have taken says nothing of it) */
static int unconditional(const char *c, const lline *L, const long *open, long depth)
{
    for (long k = depth - 1; k >= 0; k--) {
        const lline *h = &L[open[k]];
        if (kw(c, h, "def") || kw(c, h, "async") || kw(c, h, "class"))
            return 1;
        if (kw(c, h, "if") || kw(c, h, "elif") || kw(c, h, "else") || kw(c, h, "while"))
            return 0;
    }
    return 1;
}

/* freeze_in: freeze_src of one recorded script (its code: pysrc's cleaned source, its logical
 * lines and their blocks, as datasrc.c and evalsrc.c read them) */
static int freeze_in(const config_recfile *cf, char *out, size_t n)
{
    char *c = pysrc_clean(cf->data, cf->len);
    lline *L = NULL;
    long nl = c ? pysrc_lines(c, cf->len, &L) : -1;
    long *open = nl > 0 ? malloc((size_t)nl * sizeof *open) : NULL; /* the enclosing headers */
    int found = 0;
    for (long i = 0, depth = 0; open && i < nl && !found; i++) {
        while (depth && L[open[depth - 1]].indent >= L[i].indent)
            depth--;
        for (size_t j = L[i].a; j < L[i].b && !found; j++) {
            if (!freeze_at(c, j, L[i].b) || !unconditional(c, L, open, depth))
                continue;
            size_t line = L[i].first;
            for (size_t q = L[i].a; q < j; q++) /* (its physical line) */
                line += c[q] == '\n';
            snprintf(out, n, "%.60s:%zu %s", pysrc_name(cf->name), line,
                     c[j + 14] == '_' ? "requires_grad_(False)" : "requires_grad = False");
            found = 1;
        }
        if (i + 1 < nl && L[i + 1].indent > L[i].indent) /* (a block's header) */
            open[depth++] = i;
    }
    free(open);
    free(L);
    free(c);
    return found;
}

int freeze_src(const config_files *fs, char *out, size_t n)
{
    if (n)
        out[0] = '\0';
    for (int f = 0; fs && f < fs->n; f++) {
        const config_recfile *cf = &fs->f[f];
        if (cf->kind == VT_FILE_ARG && !cf->flags && cf->data && freeze_in(cf, out, n))
            return 1;
    }
    return 0;
}
