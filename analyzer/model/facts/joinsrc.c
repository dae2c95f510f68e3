/* joinsrc.c — a tensor made by joining several along their first dimension, read from the line of
 * the recorded script that made it (joinsrc.h). */
#include "joinsrc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"

static int name_byte(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

static size_t skip_blank(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\\'))
        i++;
    return i;
}

/* close_of: the index of the bracket that closes the one at s[i] (n when none) */
static size_t close_of(const char *s, size_t i, size_t n)
{
    int depth = 0;
    for (; i < n; i++) {
        depth += s[i] == '(' || s[i] == '[' || s[i] == '{';
        depth -= s[i] == ')' || s[i] == ']' || s[i] == '}';
        if (!depth)
            return i;
    }
    return n;
}

/* items: how many items the literal list whose brackets are s[a] and s[b] holds at its own depth;
 * 0 for a comprehension or an unpacking (*parts: not counted) */
static int items(const char *s, size_t a, size_t b)
{
    int k = 0, depth = 0, empty = 1;
    for (size_t i = a + 1; i < b; i++) {
        char ch = s[i];
        depth += ch == '(' || ch == '[' || ch == '{';
        depth -= ch == ')' || ch == ']' || ch == '}';
        if (depth)
            continue;
        if (ch == ',') {
            k += !empty, empty = 1;
        } else if (ch == '*' && empty) {
            return 0;
        } else if (ch == 'f' && i + 4 < b && !memcmp(s + i, "for ", 4) && !name_byte(s[i - 1])) {
            return 0;
        } else if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\\') {
            empty = 0;
        }
    }
    return k + !empty;
}

/* dim_zero: the arguments after the list (from i to the call's close c) leave the dimension 0 */
static int dim_zero(const char *s, size_t i, size_t c)
{
    i = skip_blank(s, i, c);
    if (i == c)
        return 1; /* (no dim given: 0) */
    if (s[i] != ',')
        return 0;
    i = skip_blank(s, i + 1, c);
    if (i == c)
        return 1;
    if (!strncmp(s + i, "dim", 3) || !strncmp(s + i, "axis", 4)) {
        i += s[i] == 'd' ? 3 : 4;
        i = skip_blank(s, i, c);
        if (i == c || s[i] != '=')
            return 0;
        i = skip_blank(s, i + 1, c);
    }
    if (i >= c || s[i] != '0' || (i + 1 < c && name_byte(s[i + 1])))
        return 0;
    i = skip_blank(s, i + 1, c);
    return i == c || s[i] == ',';
}

int joinsrc_code(const char *code, size_t len, size_t *at, size_t *end)
{
    static const char *const calls[] = {"torch.cat(",    "torch.concat(",    "torch.concatenate(",
                                        "torch.vstack(", "torch.row_stack(", NULL};
    for (size_t i = 0; i < len; i++) {
        if (code[i] != 't' || (i && (name_byte(code[i - 1]) || code[i - 1] == '.')))
            continue;
        for (int k = 0; calls[k]; k++) {
            size_t n = strlen(calls[k]);
            if (i + n > len || memcmp(code + i, calls[k], n))
                continue;
            size_t open = i + n - 1, c = close_of(code, open, len);
            size_t a = skip_blank(code, open + 1, c);
            if (c >= len || a >= c || (code[a] != '[' && code[a] != '('))
                continue;
            size_t b = close_of(code, a, c);
            int m = b < c ? items(code, a, b) : 0;
            /* (vstack and row_stack join along the first dimension, and take no dim) */
            if (m >= 2 && (k >= 3 ? skip_blank(code, b + 1, c) == c : dim_zero(code, b + 1, c))) {
                *at = i, *end = c + 1;
                return m;
            }
        }
    }
    return 0;
}

/* recorded: the recorded script (a .py argument with contents) whose path, or name, is the code
 * object's file name; NULL none */
static const tables_file *recorded(const tables *t, const tables_code *cd)
{
    for (size_t i = 0; cd && i < tables_n_files(t); i++) {
        const tables_file *f = tables_file_at(t, i);
        size_t lf = cd->filename.len, lp = f ? f->path.len : 0, ln = f ? f->name.len : 0;
        const char *fn = cd->filename.s;
        if (!f || f->kind != VT_FILE_ARG || f->flags || !f->contents.len || ln < 3 ||
            memcmp(f->name.s + ln - 3, ".py", 3))
            continue;
        if ((lp && lf == lp && !memcmp(fn, f->path.s, lp)) ||
            (!lp && lf >= ln && !memcmp(fn + lf - ln, f->name.s, ln) &&
             (lf == ln || fn[lf - ln - 1] == '/')))
            return f;
    }
    return NULL;
}

/* moved_name: the name a logical line copies to the device (NAME.to( / NAME.cuda(): its start,
 * its length in *n; NULL none */
static const char *moved_name(const char *s, size_t a, size_t b, size_t *n)
{
    for (size_t i = a; i + 4 < b; i++) {
        if (s[i] != '.' ||
            (strncmp(s + i, ".to(", 4) && (i + 6 > b || strncmp(s + i, ".cuda(", 6))))
            continue;
        size_t j = i;
        while (j > a && name_byte(s[j - 1]))
            j--;
        if (j < i && !(s[j] >= '0' && s[j] <= '9') && (j == a || s[j - 1] != '.')) {
            *n = i - j;
            return s + j;
        }
    }
    return NULL;
}

/* binds: the logical line L assigns name (n bytes) alone: "name =" at its start */
static int binds(const char *s, const lline *L, const char *name, size_t n)
{
    size_t i = skip_blank(s, L->a, L->b);
    if (i + n > L->b || memcmp(s + i, name, n) || (i + n < L->b && name_byte(s[i + n])))
        return 0;
    i = skip_blank(s, i + n, L->b);
    return i + 1 < L->b && s[i] == '=' && s[i + 1] != '=';
}

/* join_at: the join on logical line j of c (or, for a copy to the device of a name, on the line
 * of its block that bound that name last before it): its count, *jl the line it is on */
static int join_at(const char *c, const lline *L, long j, size_t *at, size_t *end, long *jl)
{
    int k = joinsrc_code(c + L[j].a, L[j].b - L[j].a, at, end);
    if (k) {
        *jl = j;
        return k;
    }
    size_t n = 0;
    const char *name = moved_name(c, L[j].a, L[j].b, &n);
    for (long i = j - 1; name && i >= 0 && L[i].indent >= L[j].indent; i--)
        if (L[i].indent == L[j].indent && binds(c, &L[i], name, n)) {
            *jl = i;
            return joinsrc_code(c + L[i].a, L[i].b - L[i].a, at, end);
        }
    return 0;
}

/* receiver: the start of the name whose method is called at code[i] (input, of input.view()) */
static size_t receiver(const char *code, size_t i)
{
    while (i > 0 && (name_byte(code[i - 1]) || code[i - 1] == '.'))
        i--;
    return i;
}

int joinsrc_fold_code(const char *code, size_t len, size_t *at, size_t *end)
{
    static const char *const calls[] = {".view(", ".reshape(", ".flatten("};
    for (size_t i = 0; i < len; i++)
        for (size_t n = 0; n < sizeof calls / sizeof calls[0]; n++) {
            size_t cl = strlen(calls[n]), e, a;
            if (i + cl > len || memcmp(code + i, calls[n], cl))
                continue;
            e = close_of(code, i + cl - 1, len);
            a = skip_blank(code, i + cl, e);
            if (n == 2) { /* .flatten(0, 1): the first two dimensions made one */
                if (a + 1 < e && code[a] == '0' && code[skip_blank(code, a + 1, e)] == ',' &&
                    code[skip_blank(code, skip_blank(code, a + 1, e) + 1, e)] == '1')
                    return *at = receiver(code, i), *end = e + 1, 1;
                continue;
            }
            if (a < e && code[a] == '(') /* .view((-1, 3) + x.size()[-2:]) */
                a = skip_blank(code, a + 1, e);
            int folds = a + 1 < e && code[a] == '-' && code[a + 1] == '1' &&
                        (a + 2 >= e || !name_byte(code[a + 2]));
            for (size_t k = a, depth = 0; !folds && k < e; k++) { /* a product first: b * t */
                depth += code[k] == '(' || code[k] == '[';
                depth -= code[k] == ')' || code[k] == ']';
                if (!depth && code[k] == ',')
                    break;
                folds = !depth && code[k] == '*';
            }
            if (folds)
                return *at = receiver(code, i), *end = e + 1, 1;
        }
    return 0;
}

/* stack_line: of the innermost Python frame of st in a recorded script, its line's join count
 * (join_at) or, fold set, its fold (joinsrc_fold_code: 1); said, the call as written ("FILE:LINE
 * call(...)") */
static int stack_line(const tables *t, const tables_stack *st, int fold, char *said, size_t len)
{
    for (unsigned p = 0; st && p < st->n_python; p++) {
        tables_frame fr;
        tables_resolve_frame(t, st->frames[st->n_native + p], TABLES_FRAME_PYTHON, &fr);
        const tables_file *f = fr.line > 0 ? recorded(t, fr.code) : NULL;
        if (!f)
            continue;
        /* the innermost frame in a recorded script: its line made the tensor */
        char *c = pysrc_clean(f->contents.s, f->contents.len);
        lline *L = NULL;
        long nl = c ? pysrc_lines(c, f->contents.len, &L) : -1, j = 0, jl = 0;
        while (j < nl && !((uint32_t)fr.line >= L[j].first && (uint32_t)fr.line <= L[j].last))
            j++;
        size_t at = 0, end = 0;
        int k = j >= nl ? 0
                : fold  ? ((jl = j), joinsrc_fold_code(c + L[j].a, L[j].b - L[j].a, &at, &end))
                        : join_at(c, L, j, &at, &end, &jl);
        if (k && said && len) { /* (the call as written, strings and all, on one line) */
            const char *base = strrchr(f->name.s, '/');
            int w = snprintf(said, len, "%s:%u ", base ? base + 1 : f->name.s, L[jl].first);
            const char *src = f->contents.s + L[jl].a;
            for (size_t i = at; w > 0 && (size_t)w + 1 < len && i < end && i < at + 90; i++) {
                char ch = src[i] == '\n' || src[i] == '\t' ? ' ' : src[i];
                if (ch != ' ' || said[w - 1] != ' ')
                    said[w++] = ch;
            }
            if (w > 0 && (size_t)w < len)
                said[w] = '\0';
        }
        free(L);
        free(c);
        return k;
    }
    return 0;
}

int joinsrc_stack(const tables *t, const tables_stack *st, char *said, size_t len)
{
    return stack_line(t, st, 0, said, len);
}

int joinsrc_folds(const tables *t, const tables_stack *st, char *said, size_t len)
{
    return stack_line(t, st, 1, said, len);
}
