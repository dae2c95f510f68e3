/* model_oomflag.c — the flags the line of a failing call reads (model_oom.h): where a request of
 * the program's own before any forward ran out of memory (a population's noise drawn on the
 * device), what sizes it is the program's, and the recorded script tells which of its integer
 * flags that line reads, directly or through the names it reads. Nothing is executed. */
#include "model_oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"
#include "scriptflags.h"

/* names followed back from the failing line (half -> a.population_size) */
#define OOMFLAG_DEPTH 2

static int name_byte(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* reads_attr: the code [a, b) of c reads ".dest" as a whole attribute (args.population_size) */
static int reads_attr(const char *c, size_t a, size_t b, const char *dest)
{
    size_t n = strlen(dest);
    for (size_t i = a; n && i + n < b; i++)
        if (c[i] == '.' && !strncmp(c + i + 1, dest, n) && !name_byte(c[i + 1 + n]))
            return 1;
    return 0;
}

/* assigned: the logical line's code is "name = ..." (not "=="): the start of its value, else 0 */
static size_t assigned(const char *c, const lline *l, const char *name, size_t n)
{
    size_t i = l->a;
    while (i < l->b && (c[i] == ' ' || c[i] == '\t'))
        i++;
    if (i + n >= l->b || strncmp(c + i, name, n) || name_byte(c[i + n]))
        return 0;
    i += n;
    while (i < l->b && c[i] == ' ')
        i++;
    return i + 1 < l->b && c[i] == '=' && c[i + 1] != '=' ? i + 1 : 0;
}

/* reads_via: the code [a, b) of c (logical line k's) reads .dest, or a name that the nearest
 * earlier line assigning it set from code that does (depth names back); the first such name
 * and its line into via */
static int reads_via(const char *c, const lline *L, long k, size_t a, size_t b, const char *dest,
                     int depth, char *via, size_t vlen)
{
    if (reads_attr(c, a, b, dest))
        return 1;
    for (size_t i = a; depth > 0 && i < b;) {
        if (!name_byte(c[i])) {
            i++;
            continue;
        }
        size_t s = i, e;
        while (i < b && name_byte(c[i]))
            i++;
        for (e = i; e < b && c[e] == ' ';)
            e++;
        /* (a number, an attribute, a keyword argument's name (device="cuda"): no name it reads) */
        char name[48];
        if ((c[s] >= '0' && c[s] <= '9') || (s > a && c[s - 1] == '.') ||
            (e + 1 < b && c[e] == '=' && c[e + 1] != '=') || i - s >= sizeof name)
            continue;
        memcpy(name, c + s, i - s);
        name[i - s] = '\0';
        for (long j = k - 1; j >= 0; j--) {
            size_t v = assigned(c, &L[j], name, i - s);
            if (!v)
                continue;
            if (reads_via(c, L, j, v, L[j].b, dest, depth - 1, via, vlen)) {
                snprintf(via, vlen, "%s, line %u", name, L[j].first); /* (the outermost's) */
                return 1;
            }
            break; /* (the nearest assignment decides) */
        }
    }
    return 0;
}

/* flag_dest: the name the program reads a flag's value by (dest=, else its first long option
 * with '-' as '_'); "" when none */
static void flag_dest(const script_flag *fl, char *d, size_t len)
{
    d[0] = '\0';
    if (fl->dest[0]) {
        snprintf(d, len, "%s", fl->dest);
        return;
    }
    for (int j = 0; j < fl->nnames && !d[0]; j++)
        if (!strncmp(fl->names[j], "--", 2))
            snprintf(d, len, "%s", fl->names[j] + 2);
    for (char *p = d; *p; p++)
        if (*p == '-')
            *p = '_';
}

/* site_line: the line of site ("path/x.py:79 func") when its file is the script's (name), else 0 */
static unsigned site_line(const char *site, const char *name)
{
    const char *py = site ? strstr(site, ".py:") : NULL;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!py || !base || !*base)
        return 0;
    size_t n = strlen(base), upto = (size_t)(py + 3 - site);
    if (upto < n || strncmp(site + upto - n, base, n) || (upto > n && site[upto - n - 1] != '/'))
        return 0;
    return (unsigned)strtoul(py + 4, NULL, 10);
}

int model_line_flags(const nano_config *c, const run_facts *f, const char *site, int depth,
                     char *out, size_t len)
{
    out[0] = '\0';
    const config_recfile *rf = config_recorded_script(c, f->argc, f->argv);
    unsigned line = rf ? site_line(site, rf->name) : 0;
    if (!line)
        return -1;
    char *src = pysrc_clean(rf->data, rf->len);
    lline *L = NULL;
    long nl = src ? pysrc_lines(src, rf->len, &L) : -1;
    script_flag *fl = nl > 0 ? malloc(SCRIPT_FLAGS_MAX * sizeof *fl) : NULL;
    int nf = fl ? scriptflags_parse(rf->data, rf->len, fl, SCRIPT_FLAGS_MAX) : 0, found = 0;
    long k = -1;
    for (long i = 0; i < nl && k < 0; i++)
        if (L[i].first <= line && line <= L[i].last)
            k = i;
    size_t a = k >= 0 ? L[k].a : 0; /* (the value of "x = ...": not the name it binds) */
    for (size_t i = a; k >= 0 && i < L[k].b && src[i] != '(' && src[i] != '['; i++)
        if (src[i] == '=' && src[i + 1] != '=' && !strchr("<>!=", src[i - 1])) {
            a = i + 1;
            break;
        }
    for (int i = 0; k >= 0 && i < nf; i++) {
        char dest[48], via[96] = "", val[40];
        flag_dest(&fl[i], dest, sizeof dest);
        const char *v = NULL;
        int eq = 0, given = scriptflags_given_value(&fl[i], f->argc, f->argv, &v, &eq);
        char *end = NULL;
        long long x = given && v ? strtoll(v, &end, 10) : fl[i].def;
        /* (an integer's: a count or a size, not a rate nor a name) */
        if (!dest[0] || (given ? !v || !end || *end || end == v : !fl[i].has_default))
            continue;
        if ((!depth && x < 2) || !reads_via(src, L, k, a, L[k].b, dest, depth, via, sizeof via))
            continue; /* (a weight's line: a count or a width, 2 or more, read there) */
        snprintf(val, sizeof val, "%lld", x);
        const char *nm = fl[i].names[0]; /* (its long spelling where it has one) */
        for (int j = 0; j < fl[i].nnames; j++)
            nm = !strncmp(fl[i].names[j], "--", 2) ? fl[i].names[j] : nm;
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s (%s, %s%s%s)", found ? " and " : "", nm, val,
                 given ? "on the command line" : "the script's default", via[0] ? "; through " : "",
                 via);
        found++;
    }
    free(fl);
    free(L);
    free(src);
    return found;
}

int model_oom_line_flags(const nano_config *c, const run_facts *f, char *out, size_t len)
{
    return model_line_flags(c, f, f->oom_site, OOMFLAG_DEPTH, out, len);
}

void model_weights_lever(model_result *m, const run_facts *f)
{
    char flags[400];
    size_t w = strlen(m->why);
    if ((m->cause != OOM_STATE && m->cause != OOM_GRADIENTS) || !f->params_site ||
        model_line_flags(&m->cfg, f, f->params_site, 0, flags, sizeof flags) <= 0)
        return;
    /* (the site's line and function, not its directory: "kge.py:95 main") */
    const char *site = f->params_site, *py = strstr(site, ".py:");
    for (const char *s = site; py && s < py; s++)
        if (*s == '/')
            site = s + 1;
    int k = snprintf(m->why + w, sizeof m->why - w,
                     "; the weights were made at %s, a line that reads %s: what sizes them may "
                     "be among them (vramtrace fit measures the largest value of one that fits, "
                     "{B} in its place)",
                     site, flags);
    if (k < 0 || (size_t)k >= sizeof m->why - w)
        m->why[w] = '\0'; /* (no room for all of it: not said, rather than cut) */
}
