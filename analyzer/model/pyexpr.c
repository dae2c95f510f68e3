/* pyexpr.c — a tiny evaluator for the Python expressions of nanoGPT config files (pyexpr.h):
 * literals, + - * / // % ** and parentheses with Python's int/float rules, string
 * concatenation, names through a caller's lookup. Anything else is "not a literal". */
#include "pyexpr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p;
    pyexpr_lookup lookup; /* names (NULL: none) */
    void *ctx;
} parser;

/* pv_err: the "not an expression we evaluate" value. */
static pyval pv_err(void)
{
    pyval v = {PYV_ERR, 0, 0, ""};
    return v;
}

/* skip_ws: past blanks and tabs. */
static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

double pyexpr_num(pyval v)
{
    return v.k == PYV_FLOAT ? v.f : (double)v.i;
}

int pyexpr_numeric(pyval v)
{
    return v.k == PYV_INT || v.k == PYV_FLOAT || v.k == PYV_BOOL;
}

static pyval parse_expr(parser *ps);

/* parse_atom: number, string, True/False/None, a name's value (lookup), or (expr). */
static pyval parse_atom(parser *ps)
{
    skip_ws(ps);
    const char *p = ps->p;
    pyval v = pv_err();
    if (*p == '(') {
        ps->p++;
        v = parse_expr(ps);
        skip_ws(ps);
        if (*ps->p != ')')
            return pv_err();
        ps->p++;
        return v;
    }
    if (*p == '\'' || *p == '"') {
        char q = *p++;
        size_t n = 0;
        while (*p && *p != q) {
            if (n + 1 >= sizeof v.s)
                return pv_err();
            v.s[n++] = *p++;
        }
        if (*p != q)
            return pv_err();
        v.s[n] = '\0';
        v.k = PYV_STR;
        ps->p = p + 1;
        return v;
    }
    if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        char num[64];
        size_t n = 0;
        int isfloat = 0;
        while (isalnum((unsigned char)*p) || *p == '.' || *p == '_' ||
               ((*p == '-' || *p == '+') && n > 0 && (num[n - 1] == 'e' || num[n - 1] == 'E'))) {
            if (*p == '.' || *p == 'e' || *p == 'E')
                isfloat = 1;
            if (*p != '_') {
                if (n + 1 >= sizeof num)
                    return pv_err();
                num[n++] = *p;
            }
            p++;
        }
        num[n] = '\0';
        char *end = NULL;
        errno = 0;
        if (isfloat) {
            v.f = strtod(num, &end);
            v.k = PYV_FLOAT;
        } else {
            v.i = strtoll(num, &end, 10);
            v.k = PYV_INT;
        }
        if (errno || !end || *end)
            return pv_err();
        ps->p = p;
        return v;
    }
    if (isalpha((unsigned char)*p) || *p == '_') {
        char id[48];
        size_t n = 0;
        while (isalnum((unsigned char)*p) || *p == '_') {
            if (n + 1 >= sizeof id)
                return pv_err();
            id[n++] = *p++;
        }
        id[n] = '\0';
        ps->p = p;
        if (!strcmp(id, "True") || !strcmp(id, "False")) {
            v.k = PYV_BOOL;
            v.i = id[0] == 'T';
            return v;
        }
        if (!strcmp(id, "None")) {
            v.k = PYV_NONE;
            return v;
        }
        if (ps->lookup && ps->lookup(ps->ctx, id, &v) == 0)
            return v;
        return pv_err(); /* a call, a module, an unknown name: not a literal */
    }
    return pv_err();
}

static pyval parse_unary(parser *ps);

/* parse_power: atom ['**' unary] (right-associative, binds tighter than unary minus on
 * its left, as in Python). */
static pyval parse_power(parser *ps)
{
    pyval a = parse_atom(ps);
    skip_ws(ps);
    if (a.k != PYV_ERR && ps->p[0] == '*' && ps->p[1] == '*') {
        ps->p += 2;
        pyval b = parse_unary(ps);
        if (!pyexpr_numeric(a) || !pyexpr_numeric(b))
            return pv_err();
        if (a.k != PYV_FLOAT && b.k != PYV_FLOAT && b.i >= 0) {
            long long r = 1;
            for (long long i = 0; i < b.i && i < 64; i++)
                r *= a.i;
            a.k = PYV_INT;
            a.i = r;
        } else {
            a.f = pow(pyexpr_num(a), pyexpr_num(b));
            a.k = PYV_FLOAT;
        }
    }
    return a;
}

/* parse_unary: ('-' | '+') unary | power. */
static pyval parse_unary(parser *ps)
{
    skip_ws(ps);
    if (*ps->p == '-' || *ps->p == '+') {
        int neg = *ps->p == '-';
        ps->p++;
        pyval v = parse_unary(ps);
        if (!pyexpr_numeric(v))
            return pv_err();
        if (v.k == PYV_BOOL)
            v.k = PYV_INT;
        if (neg) {
            v.i = -v.i;
            v.f = -v.f;
        }
        return v;
    }
    return parse_power(ps);
}

/* binop: applies + - * / // % to two values with Python's int/float rules. */
static pyval binop(pyval a, pyval b, const char *op)
{
    if (a.k == PYV_STR && b.k == PYV_STR && !strcmp(op, "+")) {
        if (strlen(a.s) + strlen(b.s) >= sizeof a.s)
            return pv_err();
        strcat(a.s, b.s);
        return a;
    }
    if (!pyexpr_numeric(a) || !pyexpr_numeric(b))
        return pv_err();
    pyval r = pv_err();
    int fl = a.k == PYV_FLOAT || b.k == PYV_FLOAT;
    if (!strcmp(op, "/")) {
        if (pyexpr_num(b) == 0)
            return pv_err();
        r.k = PYV_FLOAT;
        r.f = pyexpr_num(a) / pyexpr_num(b);
    } else if (!strcmp(op, "//") || !strcmp(op, "%")) {
        if (pyexpr_num(b) == 0)
            return pv_err();
        double q = floor(pyexpr_num(a) / pyexpr_num(b));
        if (fl) {
            r.k = PYV_FLOAT;
            r.f = op[1] ? q : pyexpr_num(a) - q * pyexpr_num(b);
        } else {
            r.k = PYV_INT;
            r.i = op[1] ? (long long)q : a.i - (long long)q * b.i;
        }
    } else if (fl) {
        r.k = PYV_FLOAT;
        r.f = op[0] == '+'   ? pyexpr_num(a) + pyexpr_num(b)
              : op[0] == '-' ? pyexpr_num(a) - pyexpr_num(b)
                             : pyexpr_num(a) * pyexpr_num(b);
    } else {
        r.k = PYV_INT;
        r.i = op[0] == '+' ? a.i + b.i : op[0] == '-' ? a.i - b.i : a.i * b.i;
    }
    return r;
}

/* parse_term: unary (('*' | '/' | '//' | '%') unary)*. */
static pyval parse_term(parser *ps)
{
    pyval a = parse_unary(ps);
    for (;;) {
        skip_ws(ps);
        const char *p = ps->p;
        const char *op = NULL;
        if (p[0] == '/' && p[1] == '/')
            op = "//";
        else if (p[0] == '*' && p[1] != '*')
            op = "*";
        else if (p[0] == '/')
            op = "/";
        else if (p[0] == '%')
            op = "%";
        if (!op || a.k == PYV_ERR)
            return a;
        ps->p += strlen(op);
        a = binop(a, parse_unary(ps), op);
    }
}

/* parse_expr: term (('+' | '-') term)*. */
static pyval parse_expr(parser *ps)
{
    pyval a = parse_term(ps);
    for (;;) {
        skip_ws(ps);
        char c = *ps->p;
        if ((c != '+' && c != '-') || a.k == PYV_ERR)
            return a;
        ps->p++;
        a = binop(a, parse_term(ps), c == '+' ? "+" : "-");
    }
}

pyval pyexpr_eval(const char *text, pyexpr_lookup lookup, void *ctx)
{
    parser ps = {text, lookup, ctx};
    pyval v = parse_expr(&ps);
    skip_ws(&ps);
    while (*ps.p == '\r' || *ps.p == '\n' || *ps.p == ' ')
        ps.p++;
    return *ps.p ? pv_err() : v;
}
