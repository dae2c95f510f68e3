/* optim_own.c — optimizer classes a script writes itself (recognize.h): `class Lion(Optimizer):`,
 * SAM, a blockwise 8-bit AdamW of its own. Their names say nothing of their state, and their
 * `class NAME(` line is a definition, not a construction: a script that defines `class
 * AdamW8bit(Optimizer)` and constructs Lion(params) had been told "8-bit states (bitsandbytes) ...
 * AdamW8bit( in lowmem_optim_lm.py:33, the first of the script's 2 optimizers, all of this kind",
 * its Lion's 4 B per parameter counted as 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"
#include "recognize.h"

static int ident(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

int optim_defined_at(const char *s, size_t i)
{
    size_t j = i;
    while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '\t'))
        j--;
    if (j == i) /* (a keyword and its name are apart) */
        return 0;
    static const char *const kw[] = {"class", "def"};
    for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++) {
        size_t m = strlen(kw[k]);
        if (j >= m && !memcmp(s + j - m, kw[k], m) && (j == m || !ident(s[j - m - 1])))
            return 1;
    }
    return 0;
}

int optim_own_classes(const char *s, size_t len, char names[][48], int max)
{
    int n = 0;
    for (size_t i = 0; i + 6 < len && n < max; i++) {
        if (memcmp(s + i, "class", 5) || (i > 0 && ident(s[i - 1])) ||
            (s[i + 5] != ' ' && s[i + 5] != '\t'))
            continue;
        size_t a = i + 5;
        while (a < len && (s[a] == ' ' || s[a] == '\t'))
            a++;
        size_t b = a;
        while (b < len && ident(s[b]))
            b++;
        if (b == a || b - a >= 48 || b >= len || s[b] != '(')
            continue;
        size_t e = b; /* its bases, to the ')' of its line */
        while (e < len && s[e] != ')' && s[e] != '\n')
            e++;
        const char *o = memmem(s + b, e - b, "Optimizer", 9);
        if (!o)
            continue;
        memcpy(names[n], s + a, b - a);
        names[n++][b - a] = '\0';
    }
    return n;
}

int optim_own_at(const char *s, size_t len, size_t i, char names[][48], int k, size_t *n)
{
    if (i > 0 && ident(s[i - 1]))
        return -1;
    for (int j = 0; j < k; j++) {
        size_t m = strlen(names[j]);
        if (s[i] == names[j][0] && i + m < len && !memcmp(s + i, names[j], m) && s[i + m] == '(' &&
            !optim_defined_at(s, i)) {
            *n = m;
            return j;
        }
    }
    return -1;
}

/* own_ran: whether the script's own class name (defined in c, the cleaned source of file) ran:
 * a Python code object of the trace (on a recorded stack) of file's name that is one of its
 * methods (qualname "NAME.step", or under Python 3.10, a bare function name, one whose first line
 * lies in its body). A state measured under a library optimizer's code has the class that drives
 * it on that state's stacks (SAM.step calls the base optimizer's). 1 ran, 0 not (frames were
 * recorded and none is its), -1 not known (no frames) */
static int own_ran(const tables *t, const char *file, const char *c, size_t len, const char *name)
{
    size_t pos = 0;
    const tables_code *code;
    if (!t || !tables_code_next(t, &pos))
        return -1;
    size_t m = strlen(name), first = 0, last = 0;
    for (size_t i = 0; i + 6 + m < len && !first; i++) /* its `class NAME(` line and body */
        if (!memcmp(c + i, "class", 5) && (i == 0 || c[i - 1] == '\n')) {
            size_t a = i + 5;
            while (a < len && (c[a] == ' ' || c[a] == '\t'))
                a++;
            if (a + m < len && !memcmp(c + a, name, m) && !ident(c[a + m]))
                first = pysrc_line_at(c, i), last = first;
        }
    for (size_t i = 0, line = 1; first && i < len; i++) /* ... to the next line at column 0 */
        if (c[i] == '\n' && ++line > first && i + 1 < len && c[i + 1] != '\n' && c[i + 1] != ' ' &&
            c[i + 1] != '\t' && c[i + 1] != '\r')
            break;
        else if (c[i] == '\n' && line > first)
            last = line;
    const char *base = pysrc_name(file);
    pos = 0;
    while ((code = tables_code_next(t, &pos))) {
        const char *f = code->filename.s, *q = code->qualname.s;
        size_t fl = f ? strlen(f) : 0, bl = strlen(base);
        if (!q || !bl || fl < bl || strcmp(f + fl - bl, base) || (fl > bl && f[fl - bl - 1] != '/'))
            continue;
        if ((!strncmp(q, name, m) && q[m] == '.') ||
            (!strchr(q, '.') && code->first_line > first && code->first_line <= last))
            return 1;
    }
    return 0;
}

void optim_own_wraps(const config_files *fs, const tables *t, run_recognition *r)
{
    if (r->optim_bpp < 0 || !r->optim_class[0] || !fs)
        return;
    char said[160] = ""; /* the script's own classes constructed: "SAM( line 102", ... */
    char one[96] = "";   /* the first: "SAM (constructed at line 102)" */
    int nsaid = 0;
    unsigned seen = 0;
    for (int f = 0; f < fs->n; f++) {
        const config_recfile *cf = &fs->f[f];
        if (cf->kind != VT_FILE_ARG || cf->flags || !cf->data)
            continue;
        char owns[8][48];
        int nown = optim_own_classes(cf->data, cf->len, owns, 8);
        /* its constructions found in its code alone (pysrc.h): a comment's or a docstring's
         * SAM( is none */
        char *c = nown ? pysrc_clean(cf->data, cf->len) : NULL;
        if (nown && !c)
            return; /* (out of memory: nothing said) */
        size_t n = 0;
        seen = 0;
        for (size_t i = 0; nown && i < cf->len; i++) {
            int o = optim_own_at(c, cf->len, i, owns, nown, &n);
            if (o < 0 || seen & 1u << o)
                continue;
            seen |= 1u << o;
            if (!own_ran(t, cf->name ? cf->name : "", c, cf->len, owns[o]))
                continue; /* (a branch that never ran: no method of its on the stacks) */
            size_t line = pysrc_line_at(c, i);
            if (!nsaid)
                snprintf(one, sizeof one, "%s (constructed at line %zu)", owns[o], line);
            size_t w = strlen(said);
            snprintf(said + w, sizeof said - w, "%s%s( line %zu", nsaid++ ? ", " : "", owns[o],
                     line);
        }
        free(c);
    }
    if (!nsaid)
        return;
    size_t w = strlen(r->optim_where);
    double own = r->trainable ? (double)r->optim_own / (double)r->trainable : 0;
    if (r->optim_own && nsaid == 1) /* (counted: optim.c) */
        snprintf(r->optim_where + w, sizeof r->optim_where - w,
                 "; the script's own %s drives it, and %llu B of this state are the copies of "
                 "the weights that class keeps (%.2f B per trainable parameter)",
                 one, (unsigned long long)r->optim_own, own);
    else if (r->optim_own)
        snprintf(r->optim_where + w, sizeof r->optim_where - w,
                 "; the script's own classes (%s) may drive it, and %llu B of this state are "
                 "copies of the weights one of them keeps (%.2f B per trainable parameter)",
                 said, (unsigned long long)r->optim_own, own);
    else if (nsaid == 1)
        snprintf(r->optim_where + w, sizeof r->optim_where - w,
                 "; the script's own %s drives it: what that class keeps outside the step, if "
                 "anything (as SAM's copy of the weights), is not in this count",
                 one);
    else
        snprintf(
            r->optim_where + w, sizeof r->optim_where - w,
            "; the script's own classes (%s) may drive it: what they keep outside the step (as "
            "SAM's weight copy) is not in this count",
            said);
}

void optim_none_elsewhere(run_recognition *r, unsigned kinds, const char *where)
{
    if (!kinds || kinds & (1u << OPT_SGD))
        return; /* (SGD constructed, or nothing found: plain SGD may be what ran) */
    r->optim_off_device = 1;
    /* the first construction, its file by its base name: "Adam( in train.py:87" */
    const char *in = strstr(where, "( in "), *slash = in ? strrchr(in, '/') : NULL;
    int k = in && in - where < 48 ? (int)(in - where) + 5 : 0; /* ("NAME( in ") */
    snprintf(r->optim_source, sizeof r->optim_source,
             "%.*s%.60s%s, no SGD: any state it keeps is off the device", k, where,
             slash ? slash + 1
             : in  ? in + 5
                   : where,
             kinds & (kinds - 1) ? " and more kinds" : "");
    size_t w = strlen(r->optim_where);
    snprintf(r->optim_where + w, sizeof r->optim_where - w,
             "; the script constructs %s (on the host, as ZeRO-Offload's, or none)",
             r->optim_source);
}
