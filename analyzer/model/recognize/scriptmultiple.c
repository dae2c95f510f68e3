/* scriptmultiple.c — a micro-batch the recorded script requires to be a multiple of another of
 * its flags (scriptflags.h config_script_multiple): its batch flag's value taken modulo that
 * flag's (assert B % G == 0) or divided by it (B // G prompts, each repeated G times: GRPO's
 * --num_generations), read through the namespace (args.batch % args.groups) or through names
 * the script binds to them (B, G = args.batch, args.groups). Advice then offers only such
 * micro-batches, and says the groups stay whole. Nothing is executed: the text is read as
 * written. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"
#include "scriptflags.h"

#define NAMES_MAX 8 /* names a script binds to one flag's value */

static int ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* a flag's value as the code reads it: ".dest" after a name, or a bare name bound to it */
typedef struct reader {
    char dest[64];
    char alias[NAMES_MAX][48];
    int n;
} reader;

/* word_at: the dotted name that starts at c[i] (letters, digits, '_', '.') and its length */
static size_t word_at(const char *c, size_t i, size_t len)
{
    size_t k = i;
    while (k < len && (ident_char(c[k]) || c[k] == '.'))
        k++;
    return k - i;
}

/* reads: the dotted name w (l bytes) is r's value: x.dest, or one of its bound names */
static int reads(const reader *r, const char *w, size_t l)
{
    size_t dl = strlen(r->dest);
    if (l > dl + 1 && w[l - dl - 1] == '.' && !strncmp(w + l - dl, r->dest, dl) &&
        ident_char(w[0]) && !isdigit((unsigned char)w[0]))
        return 1;
    for (int k = 0; k < r->n; k++)
        if (strlen(r->alias[k]) == l && !strncmp(r->alias[k], w, l))
            return 1;
    return 0;
}

/* bind: a logical line "a, b = x.p, x.q" (names on the left, as many dotted names on the right)
 * binds each left name read by r to it */
static void bind(reader *r, const char *c, const lline *ln)
{
    const char *eq = NULL;
    for (size_t i = ln->a; i < ln->b; i++)
        if (c[i] == '=' && (i + 1 >= ln->b || c[i + 1] != '=') && i > ln->a &&
            !strchr("=!<>+-*/%&|^:", c[i - 1])) {
            eq = c + i;
            break;
        }
    if (!eq)
        return;
    const char *l = c + ln->a, *rt = eq + 1, *end = c + ln->b;
    for (;;) {
        while (l < eq && (*l == ' ' || *l == '(' || *l == '['))
            l++;
        while (rt < end && (*rt == ' ' || *rt == '(' || *rt == '['))
            rt++;
        size_t ll = word_at(l, 0, (size_t)(eq - l)), rl = word_at(rt, 0, (size_t)(end - rt));
        if (!ll || !rl || memchr(l, '.', ll))
            return;
        if (reads(r, rt, rl) && r->n < NAMES_MAX && ll < sizeof r->alias[0] &&
            !(strlen(r->dest) == rl && !strncmp(r->dest, rt, rl)))
            snprintf(r->alias[r->n++], sizeof r->alias[0], "%.*s", (int)ll, l);
        l += ll, rt += rl;
        while (l < eq && (*l == ' ' || *l == ')' || *l == ']'))
            l++;
        while (rt < end && (*rt == ' ' || *rt == ')' || *rt == ']'))
            rt++;
        if (l >= eq || *l != ',' || rt >= end || *rt != ',')
            return;
        l++, rt++;
    }
}

/* value_of: the command line's value of fl, else its integer default; 0 where neither */
static long long value_of(const script_flag *fl, int argc, const char *const *argv)
{
    const char *v;
    int eq;
    if (scriptflags_given_value(fl, argc, argv, &v, &eq) > 0) {
        char *e;
        long long x = v ? strtoll(v, &e, 10) : 0;
        return v && !*e ? x : 0;
    }
    return fl->has_default ? fl->def : 0;
}

static const char *long_name(const script_flag *fl)
{
    for (int m = 0; m < fl->nnames; m++)
        if (!strncmp(fl->names[m], "--", 2))
            return fl->names[m];
    return fl->names[0];
}

/* found: in c's lines, the batch's reader b taken modulo or divided by r's ("B % G",
 * "args.batch // args.groups"): the byte where, else 0 */
static size_t found(const char *c, const lline *ln, long nl, const reader *b, const reader *r)
{
    for (long k = 0; k < nl; k++)
        for (size_t i = ln[k].a; i < ln[k].b; i++) {
            if (!ident_char(c[i]) || (i > ln[k].a && (ident_char(c[i - 1]) || c[i - 1] == '.')))
                continue;
            size_t w = word_at(c, i, ln[k].b), j = i + w;
            if (!reads(b, c + i, w))
                continue;
            while (j < ln[k].b && c[j] == ' ')
                j++;
            if (j >= ln[k].b || (c[j] != '%' && c[j] != '/'))
                continue;
            j += c[j] == '/' && j + 1 < ln[k].b && c[j + 1] == '/' ? 2 : 1;
            if (c[j - 1] == '/' && c[j - 2] != '/')
                continue; /* (a true division: not a count of groups) */
            if (j < ln[k].b && c[j] == '=')
                continue; /* (%=, //=) */
            while (j < ln[k].b && c[j] == ' ')
                j++;
            size_t v = word_at(c, j, ln[k].b);
            if (v && reads(r, c + j, v) && (j + v >= ln[k].b || c[j + v] != '('))
                return i;
        }
    return 0;
}

void config_script_multiple(nano_config *c, int argc, const char *const *argv)
{
    const config_recfile *f = config_recorded_script(c, argc, argv);
    const config_value *bv = &c->v[CFG_batch_size];
    c->batch_multiple[0] = '\0', c->batch_multiple_v = 0, c->batch_multiple_where[0] = '\0';
    if (!f || !f->len || c->batch_global[0] || bv->i <= 1)
        return; /* (a batch flag read as B·A: its division is the accumulation's) */
    script_flag *fl = malloc(SCRIPT_FLAGS_MAX * sizeof *fl);
    char *code = pysrc_clean(f->data, f->len);
    lline *ln = NULL;
    long nl = code ? pysrc_lines(code, f->len, &ln) : -1;
    int n = fl && nl > 0 ? scriptflags_parse(f->data, f->len, fl, SCRIPT_FLAGS_MAX) : 0, bi = -1;
    for (int i = 0; i < n && bi < 0; i++)
        for (int j = 0; j < fl[i].nnames && bi < 0; j++)
            if (config_flag_key(fl[i].names[j]) == CFG_batch_size &&
                value_of(&fl[i], argc, argv) == bv->i)
                bi = i;
    reader b = {0};
    if (bi >= 0) {
        config_flag_name(fl[bi].dest[0] ? fl[bi].dest : long_name(&fl[bi]), b.dest, sizeof b.dest);
        for (long k = 0; k < nl; k++)
            bind(&b, code, &ln[k]);
    }
    for (int i = 0; bi >= 0 && i < n; i++) {
        int key = -1;
        for (int j = 0; j < fl[i].nnames && key < 0; j++)
            key = config_flag_key(fl[i].names[j]);
        long long g = i == bi || key >= 0 ? 0 : value_of(&fl[i], argc, argv);
        reader r = {0};
        config_flag_name(fl[i].dest[0] ? fl[i].dest : long_name(&fl[i]), r.dest, sizeof r.dest);
        /* (a count of devices splits the batch: data parallelism, not groups) */
        if (g <= 1 || bv->i % g || scriptflags_names_device(r.dest))
            continue;
        for (long k = 0; k < nl; k++)
            bind(&r, code, &ln[k]);
        size_t at = found(code, ln, nl, &b, &r);
        if (!at)
            continue;
        size_t e = at;
        while (e < f->len && code[e] != '\n' && (ident_char(code[e]) || strchr(" .%/", code[e])))
            e++;
        while (e > at && code[e - 1] == ' ')
            e--;
        snprintf(c->batch_multiple, sizeof c->batch_multiple, "%s", long_name(&fl[i]));
        c->batch_multiple_v = g;
        snprintf(c->batch_multiple_where, sizeof c->batch_multiple_where,
                 "%.40s:%zu: ", pysrc_name(f->name), pysrc_line_at(code, at));
        size_t w = strlen(c->batch_multiple_where);
        snprintf(c->batch_multiple_where + w, sizeof c->batch_multiple_where - w, "%.*s",
                 (int)(e - at < 60 ? e - at : 60), f->data + at);
        config_value *cb = &c->v[CFG_batch_size];
        w = strlen(cb->where);
        snprintf(cb->where + w, sizeof cb->where - w, "; a multiple of %s %lld (%s)",
                 c->batch_multiple, g, c->batch_multiple_where);
        break;
    }
    free(ln);
    free(code);
    free(fl);
}
