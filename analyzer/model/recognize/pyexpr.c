/* pyexpr.c — a tiny evaluator for the Python expressions of nanoGPT config files (pyexpr.h):
 * literals, + - * / // % ** and parentheses with Python's int/float rules, string
 * concatenation, names through a caller's lookup. Anything else is "not a literal". */
#include "pyexpr.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p;
    pyexpr_lookup lookup; /* names (NULL: none) */
    void *ctx;
    int depth;       /* nesting of parse_unary, bounded by PYEXPR_MAX_DEPTH */
    const char *why; /* the first refusal with a reason */
} parser;

static const char WHY_INT[] = "an integer beyond 64 bits (Python's are unbounded; not evaluated)";
static const char WHY_ZERO[] = "division by zero";
static const char WHY_FLOAT[] = "a float that is not finite (overflow or 1e999)";
static const char WHY_DEPTH[] = "nested more than 100 levels deep";
static const char WHY_COMPLEX[] = "a negative number to a fractional power (complex in Python)";

/* pv_err: the "not an expression we evaluate" value. */
static pyval pv_err(void)
{
    pyval v = {PYV_ERR, 0, 0, "", NULL};
    return v;
}

/* pv_fail: a refusal with a reason, kept in the parser (the first one wins). */
static pyval pv_fail(parser *ps, const char *why)
{
    if (ps && !ps->why)
        ps->why = why;
    pyval v = pv_err();
    v.why = why;
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
        if (!end || *end)
            return pv_err();
        if (errno == ERANGE && (!isfloat || isinf(v.f)))
            return pv_fail(ps, isfloat ? WHY_FLOAT : WHY_INT);
        if (errno == ERANGE)
            v.f = 0; /* underflow: Python gives 0.0 too */
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
            long long r = 1, base = a.i, e = b.i;
            if (base == 0 || base == 1)
                r = e == 0 ? 1 : base;
            else if (base == -1)
                r = e % 2 ? -1 : 1;
            else /* |base| >= 2: at most 63 squarings before the overflow check fires */
                for (; e; e >>= 1) {
                    if ((e & 1) && __builtin_mul_overflow(r, base, &r))
                        return pv_fail(ps, WHY_INT);
                    if ((e >> 1) && __builtin_mul_overflow(base, base, &base))
                        return pv_fail(ps, WHY_INT);
                }
            a.k = PYV_INT;
            a.i = r;
        } else {
            double x = pyexpr_num(a), y = pyexpr_num(b);
            if (x == 0 && y < 0)
                return pv_fail(ps, WHY_ZERO); /* ZeroDivisionError in Python */
            if (x < 0 && y != floor(y))
                return pv_fail(ps, WHY_COMPLEX);
            a.f = pow(x, y);
            a.k = PYV_FLOAT;
            if (!isfinite(a.f))
                return pv_fail(ps, WHY_FLOAT);
        }
    }
    return a;
}

/* parse_unary: ('-' | '+') unary | power. */
static pyval parse_unary_at(parser *ps)
{
    skip_ws(ps);
    if (*ps->p == '-' || *ps->p == '+') {
        int neg = *ps->p == '-';
        ps->p++;
        pyval v = parse_unary(ps);
        if (!pyexpr_numeric(v))
            return v.why ? v : pv_err();
        if (v.k == PYV_BOOL)
            v.k = PYV_INT;
        if (neg) {
            if (v.k == PYV_INT && __builtin_sub_overflow(0, v.i, &v.i))
                return pv_fail(ps, WHY_INT);
            v.f = -v.f;
        }
        return v;
    }
    return parse_power(ps);
}

/* parse_unary: every recursion of the grammar passes here, so the depth is bounded here. */
static pyval parse_unary(parser *ps)
{
    if (ps->depth >= PYEXPR_MAX_DEPTH)
        return pv_fail(ps, WHY_DEPTH);
    ps->depth++;
    pyval v = parse_unary_at(ps);
    ps->depth--;
    return v;
}

/* int_floordiv: Python's a // b and a % b for b != 0 (floor, sign of the divisor);
 * -1 when the quotient does not fit (LLONG_MIN // -1). */
static int int_floordiv(long long a, long long b, long long *q, long long *r)
{
    if (a == LLONG_MIN && b == -1)
        return -1;
    *q = a / b;
    *r = a % b;
    if (*r != 0 && ((*r < 0) != (b < 0))) {
        (*q)--;
        *r += b;
    }
    return 0;
}

/* binop: applies + - * / // % to two values with Python's int/float rules. */
static pyval binop(parser *ps, pyval a, pyval b, const char *op)
{
    if (a.k == PYV_ERR)
        return a;
    if (b.k == PYV_ERR)
        return b;
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
            return pv_fail(ps, WHY_ZERO);
        r.k = PYV_FLOAT;
        r.f = pyexpr_num(a) / pyexpr_num(b);
    } else if (!strcmp(op, "//") || !strcmp(op, "%")) {
        if (pyexpr_num(b) == 0)
            return pv_fail(ps, WHY_ZERO);
        if (fl) {
            double q = floor(pyexpr_num(a) / pyexpr_num(b));
            r.k = PYV_FLOAT;
            r.f = op[1] ? q : pyexpr_num(a) - q * pyexpr_num(b);
        } else {
            long long q, m;
            if (int_floordiv(a.i, b.i, &q, &m) < 0)
                return pv_fail(ps, WHY_INT);
            r.k = PYV_INT;
            r.i = op[1] ? q : m;
        }
    } else if (fl) {
        r.k = PYV_FLOAT;
        r.f = op[0] == '+'   ? pyexpr_num(a) + pyexpr_num(b)
              : op[0] == '-' ? pyexpr_num(a) - pyexpr_num(b)
                             : pyexpr_num(a) * pyexpr_num(b);
    } else {
        r.k = PYV_INT;
        int ovf = op[0] == '+'   ? __builtin_add_overflow(a.i, b.i, &r.i)
                  : op[0] == '-' ? __builtin_sub_overflow(a.i, b.i, &r.i)
                                 : __builtin_mul_overflow(a.i, b.i, &r.i);
        if (ovf)
            return pv_fail(ps, WHY_INT);
    }
    if (r.k == PYV_FLOAT && !isfinite(r.f))
        return pv_fail(ps, WHY_FLOAT);
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
        a = binop(ps, a, parse_unary(ps), op);
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
        a = binop(ps, a, parse_term(ps), c == '+' ? "+" : "-");
    }
}

pyval pyexpr_eval(const char *text, pyexpr_lookup lookup, void *ctx)
{
    parser ps = {text, lookup, ctx, 0, NULL};
    pyval v = parse_expr(&ps);
    skip_ws(&ps);
    while (*ps.p == '\r' || *ps.p == '\n' || *ps.p == ' ')
        ps.p++;
    if (v.k != PYV_ERR && *ps.p)
        v = pv_err();
    if (v.k == PYV_ERR)
        v.why = ps.why; /* a refusal with a reason anywhere in the expression */
    return v;
}
