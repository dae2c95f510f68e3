/* scriptnbs.c — a recorded script that sets its gradient accumulation from its micro-batch
 * itself: YOLOv5's train.py (nbs = 64, its nominal batch; accumulate = max(round(nbs /
 * batch_size), 1)) accumulates round(64 / B) micro-batches at whatever --batch-size it is given,
 * so a smaller one needs no code change: the program's own count at it (config_script_nominal,
 * scriptflags.h; advice says it). The expression is read from the script's code as written,
 * nothing executed, and taken only where it gives the trace's A at the run's B. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"
#include "scriptflags.h"

static int ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

static size_t skip_sp(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* path_at: an identifier path at s[i] (nbs, opt.batch_size): its end, the start of its last
 * name in *last, its dots in *dots; i where none starts there */
static size_t path_at(const char *s, size_t i, size_t len, size_t *last, int *dots)
{
    size_t j = i;
    *dots = 0, *last = i;
    while (j < len && (isalpha((unsigned char)s[j]) || s[j] == '_')) {
        *last = j;
        while (j < len && ident_char(s[j]))
            j++;
        if (j + 1 < len && s[j] == '.' && (isalpha((unsigned char)s[j + 1]) || s[j + 1] == '_'))
            j++, ++*dots;
        else
            break;
    }
    return j;
}

/* int_at: an integer literal at s[i] (not a float's, not a name's start): its value into *v, its
 * end; i where none */
static size_t int_at(const char *s, size_t i, size_t len, long long *v)
{
    size_t j = i;
    long long x = 0;
    while (j < len && isdigit((unsigned char)s[j]) && x < 1000000000)
        x = x * 10 + (s[j++] - '0');
    if (j == i || (j < len && (ident_char(s[j]) || s[j] == '.')))
        return i;
    *v = x;
    return j;
}

/* assigned: the integer literal every top-level or indented `name = N` of code assigns (YOLOv5's
 * nbs = 64); 0 where none or where two differ */
static long long assigned(const char *code, size_t len, const char *name, size_t nl)
{
    long long v = 0;
    for (size_t i = 0; i + nl < len; i++) {
        if (strncmp(code + i, name, nl) ||
            (i > 0 && code[i - 1] != '\n' && code[i - 1] != ' ' && code[i - 1] != '\t'))
            continue;
        size_t a = i;
        while (a > 0 && (code[a - 1] == ' ' || code[a - 1] == '\t'))
            a--;
        size_t j = skip_sp(code, i + nl, len);
        long long x;
        if ((a > 0 && code[a - 1] != '\n') || j >= len || code[j] != '=' ||
            (j + 1 < len && code[j + 1] == '='))
            continue;
        size_t e = int_at(code, skip_sp(code, j + 1, len), len, &x);
        if (e == skip_sp(code, j + 1, len) ||
            ((e = skip_sp(code, e, len)) < len && code[e] != '\n'))
            return 0; /* (another value: not one literal) */
        if (v && v != x)
            return 0;
        v = x;
    }
    return v;
}

/* flag_value: the value of the script's flag read as x.name (its dest): the command line's, else
 * its integer default; 0 where no flag has that name */
static long long flag_value(const script_flag *fl, int n, const char *name, int argc,
                            const char *const *argv)
{
    char k[64];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < fl[i].nnames; j++) {
            config_flag_name(fl[i].names[j], k, sizeof k);
            if (strcmp(k, name) && strcmp(fl[i].dest, name))
                continue;
            const char *v;
            int eq;
            if (scriptflags_given_value(&fl[i], argc, argv, &v, &eq) > 0)
                return v ? strtoll(v, NULL, 10) : 0;
            return fl[i].has_default ? fl[i].def : 0;
        }
    return 0;
}

/* nominal: at code[i] "round(" of max(round(N / B), K) or max(K, round(N / B)) whose B is the
 * batch flag read as x.bdest or as a name of its own (YOLOv5's batch_size = opt.batch_size): N
 * (a literal, a name assigned one, a flag) into *nbs, K into *floor, the max's span into *a, *b;
 * 0 where it is no such expression */
static int nominal(const char *code, size_t len, size_t i, const char *bdest, const script_flag *fl,
                   int n, int argc, const char *const *argv, long long *nbs, long long *floor,
                   size_t *a, size_t *b, size_t *nl)
{
    size_t j = skip_sp(code, i + 6, len), last, e;
    int dots;
    long long N = 0, K = 0;
    *nl = 0; /* (N's name's length where it is no literal) */
    if ((e = int_at(code, j, len, &N)) == j) {
        if ((e = path_at(code, j, len, &last, &dots)) == j)
            return 0;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(e - last), code + last);
        N = dots ? flag_value(fl, n, name, argc, argv) : assigned(code, len, name, e - last);
        *nl = e - j;
    }
    j = skip_sp(code, e, len);
    if (N <= 0 || j + 1 >= len || code[j] != '/' || code[j + 1] == '/' || code[j + 1] == '=')
        return 0;
    j = skip_sp(code, j + 1, len);
    if ((e = path_at(code, j, len, &last, &dots)) == j || e - last != strlen(bdest) ||
        strncmp(code + last, bdest, e - last))
        return 0;
    j = skip_sp(code, e, len);
    if (j >= len || code[j] != ')')
        return 0;
    size_t end = skip_sp(code, j + 1, len), k = i; /* (the max around it) */
    while (k > 0 && (code[k - 1] == ' ' || code[k - 1] == '\t'))
        k--;
    if (end < len && code[end] == ',' && k >= 4 && code[k - 1] == '(' &&
        !strncmp(code + k - 4, "max(", 4) && (k == 4 || !ident_char(code[k - 5]))) {
        size_t x = skip_sp(code, end + 1, len);
        if ((e = int_at(code, x, len, &K)) == x || (e = skip_sp(code, e, len)) >= len ||
            code[e] != ')')
            return 0;
        *a = k - 4, *b = e + 1;
    } else if (end < len && code[end] == ')' && k > 0 && code[k - 1] == ',') {
        size_t x = k - 1; /* max(K, round(...)) */
        while (x > 0 && (code[x - 1] == ' ' || code[x - 1] == '\t'))
            x--;
        size_t d = x;
        while (d > 0 && isdigit((unsigned char)code[d - 1]))
            d--;
        size_t o = d;
        while (o > 0 && (code[o - 1] == ' ' || code[o - 1] == '\t'))
            o--;
        if (d == x || o < 4 || strncmp(code + o - 4, "max(", 4) ||
            (o > 4 && ident_char(code[o - 5])) || int_at(code, d, len, &K) != x)
            return 0;
        *a = o - 4, *b = end + 1;
    } else {
        return 0; /* (no floor: a count of 0 is not ruled out) */
    }
    if (K < 1 || K > 1 << 20)
        return 0;
    *nbs = N, *floor = K;
    return 1;
}

void config_script_nominal(nano_config *c, int argc, const char *const *argv)
{
    config_value *bv = &c->v[CFG_batch_size], *av = &c->v[CFG_gradient_accumulation_steps];
    const config_recfile *f = config_recorded_script(c, argc, argv);
    if (!f || !f->len || c->batch_global[0] || bv->i <= 0 ||
        (bv->src != CONFIG_SRC_ARG && bv->src != CONFIG_SRC_FILE && bv->src != CONFIG_SRC_TRACE) ||
        (av->src != CONFIG_SRC_UNKNOWN && av->src != CONFIG_SRC_TRACE))
        return; /* (an accumulation the program's flag gives: that flag is the one) */
    script_flag *fl = malloc(SCRIPT_FLAGS_MAX * sizeof *fl);
    char *code = pysrc_clean(f->data, f->len);
    int n = fl && code ? scriptflags_parse(f->data, f->len, fl, SCRIPT_FLAGS_MAX) : 0;
    for (int bi = 0; bi < n; bi++) {
        int key = -1;
        for (int j = 0; j < fl[bi].nnames && key < 0; j++)
            key = config_flag_key(fl[bi].names[j]);
        if (key != CFG_batch_size)
            continue;
        const char *bflag = fl[bi].names[0];
        for (int m = 0; m < fl[bi].nnames; m++)
            if (!strncmp(fl[bi].names[m], "--", 2))
                bflag = fl[bi].names[m];
        char bdest[64];
        if (fl[bi].dest[0])
            snprintf(bdest, sizeof bdest, "%s", fl[bi].dest);
        else
            config_flag_name(bflag, bdest, sizeof bdest);
        for (size_t i = 0; i + 6 < f->len; i++) {
            long long N, K;
            size_t a, b, nl;
            if (strncmp(code + i, "round(", 6) || (i > 0 && ident_char(code[i - 1])) ||
                !nominal(code, f->len, i, bdest, fl, n, argc, argv, &N, &K, &a, &b, &nl))
                continue;
            long long B = bv->i, q = N / B, r = N % B; /* (Python's round: half to even) */
            long long A = q + (2 * r > B || (2 * r == B && (q & 1)));
            if (A < K)
                A = K;
            if (av->src == CONFIG_SRC_TRACE && av->i != A)
                continue; /* (not what the trace shows: another count, or not this one) */
            int no = (int)pysrc_line_at(f->data, i);
            char by[240], nv[64] = "";
            if (nl) /* (N's value where it is a name: a flag's, or assigned) */
                snprintf(nv, sizeof nv, ", %.*s %lld", (int)(nl < 40 ? nl : 40),
                         f->data + skip_sp(code, i + 6, f->len), N);
            snprintf(by, sizeof by,
                     "%.40s:%d sets it from %.40s itself: %.*s = %lld at %.40s %lld%s",
                     pysrc_name(f->name), no, bflag, (int)(b - a < 90 ? b - a : 90), f->data + a, A,
                     bflag, B, nv);
            if (av->src == CONFIG_SRC_TRACE) {
                size_t w = strlen(av->where);
                snprintf(av->where + w, sizeof av->where - w, "; %s", by);
            } else {
                av->i = A, av->src = CONFIG_SRC_FILE;
                snprintf(av->where, sizeof av->where, "A = %lld: %s", A, by);
            }
            c->accum_nbs = N, c->accum_nbs_floor = K;
            free(fl);
            free(code);
            return;
        }
    }
    free(fl);
    free(code);
}
