/* evalsrc_flow.c — whether a no_grad block's outputs feed a later backward (evalsrc_flow.h): the
 * names it binds, followed through the assignments after it to a line that calls .backward(.
 * Lines are read as Python's simple statements: a top-level `=` (not `==`, `<=`, `>=`, `!=`,
 * `:=`) splits targets from the value; calls' keyword arguments are inside brackets. */
#include "evalsrc_flow.h"

#include <string.h>

#define NAMES 64    /* the names followed at once (more: the later ones are not) */
#define NAME_MAX 96 /* a name's bytes at most (a longer one is not followed) */

typedef struct names {
    char s[NAMES][NAME_MAX];
    size_t len[NAMES];
    int n;
} names;

static int ident(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* token: the dotted name that starts at c[i] (a letter or _ not after a name's byte or a dot:
 * `self.buf`, `x`), its end; i itself when none starts there */
static size_t token(const char *c, size_t a, size_t i, size_t b)
{
    if (i >= b || !ident(c[i]) || (c[i] >= '0' && c[i] <= '9') ||
        (i > a && (ident(c[i - 1]) || c[i - 1] == '.')))
        return i;
    size_t j = i;
    while (j < b && (ident(c[j]) || (c[j] == '.' && j + 1 < b && ident(c[j + 1]))))
        j++;
    return j;
}

/* find_at: which of the followed names c[a, a + len) is, or reads through (N.attr, N[...]) */
static int find_at(const names *t, const char *c, size_t a, size_t len)
{
    for (int k = 0; k < t->n; k++)
        if (len >= t->len[k] && !memcmp(c + a, t->s[k], t->len[k]) &&
            (len == t->len[k] || c[a + t->len[k]] == '.'))
            return k;
    return -1;
}

static void add(names *t, const char *c, size_t a, size_t len)
{
    if (t->n == NAMES || len >= NAME_MAX)
        return;
    for (int k = 0; k < t->n; k++)
        if (t->len[k] == len && !memcmp(t->s[k], c + a, len))
            return;
    memcpy(t->s[t->n], c + a, len);
    t->len[t->n++] = len;
}

/* drop: c[a, a + len) is bound anew (or deleted): it, and names read through it, no longer count */
static void drop(names *t, const char *c, size_t a, size_t len)
{
    for (int k = 0; k < t->n;)
        if (t->len[k] >= len && !memcmp(t->s[k], c + a, len) &&
            (t->len[k] == len || t->s[k][len] == '.')) {
            t->n--;
            memcpy(t->s[k], t->s[t->n], t->len[t->n]);
            t->len[k] = t->len[t->n];
        } else {
            k++;
        }
}

/* reads: a name in c[a, b) is a followed one (or reads through one) */
static int reads(const names *t, const char *c, size_t a, size_t b)
{
    for (size_t i = a; t->n && i < b;) {
        size_t j = token(c, a, i, b);
        if (j == i) {
            i++;
            continue;
        }
        if (find_at(t, c, i, j - i) >= 0)
            return 1;
        i = j;
    }
    return 0;
}

static int starts(const char *c, size_t a, size_t b, const char *word)
{
    size_t m = strlen(word);
    return b - a >= m && !memcmp(c + a, word, m);
}

/* top_eq: the first top-level `=` of an assignment in c[a, b) (not a comparison, nor `:=`), *aug
 * set where an operator precedes it (`+=`: its target read too); b when none */
static size_t top_eq(const char *c, size_t a, size_t b, int *aug)
{
    int depth = 0;
    *aug = 0;
    for (size_t i = a; i < b; i++) {
        char ch = c[i];
        depth += ch == '(' || ch == '[' || ch == '{';
        depth -= (ch == ')' || ch == ']' || ch == '}') && depth > 0;
        if (ch != '=' || depth)
            continue;
        if (i + 1 < b && c[i + 1] == '=') { /* == */
            i++;
            continue;
        }
        char p = i > a ? c[i - 1] : ' ';
        if (p == '=' || p == '!' || p == ':' ||
            ((p == '<' || p == '>') && (i < a + 2 || c[i - 2] != p)))
            continue; /* (a comparison or :=, but <<= and >>= assign) */
        *aug = strchr("+-*/%&|^@<>", p) != NULL;
        return i;
    }
    return b;
}

/* targets: the names an assignment's target c[a, b) binds (each of a tuple's, the bracket
 * grouping them transparent; an annotation after `:` none): set from the value (add) or bound anew
 * (drop); a subscripted one (`x[i] =`) is filled, never bound anew; a call's is none */
static void targets(names *t, const char *c, size_t a, size_t b, int set)
{
    size_t colon = a;
    for (int depth = 0; colon < b; colon++) { /* (x: int = ...) */
        depth += c[colon] == '(' || c[colon] == '[' || c[colon] == '{';
        depth -= (c[colon] == ')' || c[colon] == ']' || c[colon] == '}') && depth > 0;
        if (c[colon] == ':' && !depth)
            break;
    }
    b = colon;
    for (size_t i = a; i < b;) {
        size_t j = token(c, a, i, b);
        if (j == i) {
            if (c[i] == '[' && i > a && (ident(c[i - 1]) || c[i - 1] == ']' || c[i - 1] == ')'))
                for (int depth = 0; i < b; i++) { /* (a subscript's inside is read, not bound) */
                    depth += c[i] == '[';
                    depth -= c[i] == ']';
                    if (!depth)
                        break;
                }
            i++;
            continue;
        }
        size_t k = j;
        while (k < b && c[k] == ' ')
            k++;
        if (k < b && c[k] == '(') {
            i = j;
            continue;
        }
        if (set)
            add(t, c, i, j - i);
        else if (k >= b || c[k] != '[')
            drop(t, c, i, j - i);
        i = j;
    }
}

/* filled: the receiver of a call that fills it in place (x.append(...), x.copy_(...)) in c[a, b)
 * whose arguments read a followed name (any, when all), added */
static void filled(names *t, const char *c, size_t a, size_t b, int all)
{
    static const char *const fills[] = {".append(", ".extend(", ".insert(", ".add(",
                                        ".update(", ".copy_(",  ".put(",    NULL};
    for (int f = 0; fills[f]; f++)
        for (size_t i = a; i < b; i++) {
            size_t m = strlen(fills[f]);
            if (i + m > b || memcmp(c + i, fills[f], m))
                continue;
            size_t r = i;
            while (r > a && (ident(c[r - 1]) || c[r - 1] == '.'))
                r--;
            if (r < i && (all || reads(t, c, i + m, b)))
                add(t, c, r, i - r);
        }
}

/* line: one simple statement c[a, b) read in order. bind: the block's own (every name it binds
 * counts); else the lines after it (a name counts where its value reads one that counts) */
static void line(names *t, const char *c, size_t a, size_t b, int bind)
{
    if (starts(c, a, b, "del ")) {
        targets(t, c, a + 4, b, 0);
        return;
    }
    if (starts(c, a, b, "for ") || starts(c, a, b, "async for ")) {
        size_t f = c[a] == 'a' ? a + 10 : a + 4, in = f;
        while (in + 4 <= b && memcmp(c + in, " in ", 4))
            in++;
        if (in + 4 <= b)
            targets(t, c, f, in, bind || reads(t, c, in + 4, b));
        return;
    }
    if (starts(c, a, b, "with ") || starts(c, a, b, "async with ")) {
        for (size_t i = a; i + 4 <= b; i++)
            if (!memcmp(c + i, " as ", 4)) {
                size_t j = i + 4, k = j;
                while (k < b && (ident(c[k]) || c[k] == '.'))
                    k++;
                if (k > j)
                    targets(t, c, j, k, bind || reads(t, c, a, i));
            }
        return;
    }
    size_t eq[8]; /* a = b = value: each top-level = (an augmented one: its only) */
    int n = 0, aug = 0;
    for (size_t from = a, q; n < 8 && (q = top_eq(c, from, b, &aug)) < b; from = q + 1) {
        eq[n++] = q;
        if (aug)
            break;
    }
    if (!n) {
        filled(t, c, a, b, bind);
        return;
    }
    /* (x += v reads x: its operator's bytes are no name) */
    int set = bind || reads(t, c, eq[n - 1] + 1, b) || (aug && reads(t, c, a, eq[0]));
    for (int k = 0; k < n; k++)
        targets(t, c, k ? eq[k - 1] + 1 : a, eq[k], set);
}

/* walk: the lines [a, b) read in order after the block (at most EVALSRC_FLOW_LINES): 1 where one
 * that calls .backward( reads a followed name */
static int walk(names *t, const char *c, const lline *L, size_t a, size_t b)
{
    if (b > a + EVALSRC_FLOW_LINES)
        b = a + EVALSRC_FLOW_LINES;
    for (size_t j = a; j < b && t->n; j++) {
        const lline *l = &L[j];
        for (size_t i = l->a; i + 10 <= l->b; i++)
            if (!memcmp(c + i, ".backward(", 10) && reads(t, c, l->a, l->b))
                return 1;
        line(t, c, l->a, l->b, 0);
    }
    return 0;
}

int evalsrc_feeds_backward(const char *c, const lline *L, size_t w, int one, size_t e, size_t to,
                           size_t again)
{
    names t = {.n = 0};
    if (one) { /* (with ...: body) */
        size_t i = L[w].a;
        for (int depth = 0; i < L[w].b; i++) {
            depth += c[i] == '(' || c[i] == '[' || c[i] == '{';
            depth -= (c[i] == ')' || c[i] == ']' || c[i] == '}') && depth > 0;
            if (c[i] == ':' && !depth)
                break;
        }
        for (i++; i < L[w].b && c[i] == ' '; i++)
            ;
        line(&t, c, i, L[w].b, 1);
    } else {
        for (size_t j = w + 1; j < e; j++)
            line(&t, c, L[j].a, L[j].b, 1);
    }
    return walk(&t, c, L, e, to) || (again < w && walk(&t, c, L, again, w));
}
