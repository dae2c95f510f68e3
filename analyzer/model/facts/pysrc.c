/* pysrc.c — a recorded Python script's source as code alone: its strings' and comments' bytes
 * blanked, cut into logical lines (pysrc.h), and where a find in it stands, for the readers of a
 * script's code (evalsrc.c, scriptpass.c, freezesrc.c, autocastsrc.c). */
#include "pysrc.h"

#include <stdlib.h>
#include <string.h>

/* ---- the sources cleaned last, and their lines ------------------------------------------------
 * A report reads a recorded script some ten times (evalsrc, optsrc, datasrc, castsrc, scriptpass,
 * joinsrc, ...), each cleaning it and cutting it into lines again: 5 % of a report's instructions
 * on a Llama 400M trace. The last MEMO_N sources are kept with their cleaned copies and lines,
 * found by their bytes (a compare is some thirty times cheaper than a cleaning), never by where
 * they lie; a source past MEMO_MAX is not kept. Each call still hands back a copy of its own. */
#define MEMO_N 4
#define MEMO_MAX ((size_t)4 << 20)

typedef struct memo {
    char *src;   /* a copy of the source's len bytes; NULL: an empty slot */
    char *clean; /* pysrc_clean of it (len bytes and a NUL) */
    size_t len;
    lline *lines; /* pysrc_lines of clean, nlines of them; NULL: not cut yet */
    long nlines;
} memo;

static memo g_memo[MEMO_N];
static unsigned g_memo_next;

static void memo_drop(memo *m)
{
    free(m->src), free(m->clean), free(m->lines);
    *m = (memo){0};
}

/* memo_keep: src's cleaned copy c (len bytes) kept in the next slot, in turn; nothing when memory
 * is short */
static void memo_keep(const char *src, const char *c, size_t len)
{
    if (len > MEMO_MAX)
        return;
    memo *m = &g_memo[g_memo_next++ % MEMO_N];
    memo_drop(m);
    m->src = malloc(len + 1);
    m->clean = m->src ? malloc(len + 1) : NULL;
    if (!m->clean) {
        memo_drop(m);
        return;
    }
    memcpy(m->src, src, len);
    memcpy(m->clean, c, len + 1);
    m->len = len;
}

/* clean_raw: pysrc_clean's own work */
static char *clean_raw(const char *src, size_t len);

char *pysrc_clean(const char *src, size_t len)
{
    for (int k = 0; k < MEMO_N; k++)
        if (g_memo[k].src && g_memo[k].len == len && !memcmp(g_memo[k].src, src, len)) {
            char *c = malloc(len + 1);
            if (c)
                memcpy(c, g_memo[k].clean, len + 1);
            return c;
        }
    char *c = clean_raw(src, len);
    if (c)
        memo_keep(src, c, len);
    return c;
}

/* clean_raw: src with the inside of string literals and comments blanked (newlines kept), so
 * that a search for code finds code only */
static char *clean_raw(const char *src, size_t len)
{
    char *c = malloc(len + 1);
    if (!c)
        return NULL;
    memcpy(c, src, len);
    c[len] = '\0';
    for (size_t i = 0; i < len;) {
        if (c[i] == '#') {
            while (i < len && c[i] != '\n')
                c[i++] = ' ';
            continue;
        }
        if (c[i] != '\'' && c[i] != '"') {
            i++;
            continue;
        }
        char q = c[i];
        int triple = i + 2 < len && c[i + 1] == q && c[i + 2] == q;
        i += triple ? 3 : 1;
        while (i < len) {
            if (c[i] == '\\' && i + 1 < len) {
                c[i] = ' ';
                if (c[i + 1] != '\n')
                    c[i + 1] = ' ';
                i += 2;
                continue;
            }
            if (c[i] == q && (!triple || (i + 2 < len && c[i + 1] == q && c[i + 2] == q))) {
                i += triple ? 3 : 1;
                break;
            }
            if (c[i] == '\n' && !triple) /* (a one-line string ends with its line) */
                break;
            if (c[i] != '\n')
                c[i] = ' ';
            i++;
        }
    }
    return c;
}

static long lines_raw(const char *c, size_t len, lline **out);

/* pysrc_lines: c's logical lines (pysrc.h), a kept cleaned source's copied */
long pysrc_lines(const char *c, size_t len, lline **out)
{
    memo *m = NULL;
    for (int k = 0; k < MEMO_N && !m; k++)
        if (g_memo[k].src && g_memo[k].len == len && !memcmp(g_memo[k].clean, c, len))
            m = &g_memo[k];
    if (m && m->lines) {
        size_t n = (size_t)m->nlines;
        lline *L = malloc((n ? n : 1) * sizeof *L);
        if (!L)
            return -1;
        memcpy(L, m->lines, n * sizeof *L);
        *out = L;
        return m->nlines;
    }
    long n = lines_raw(c, len, out);
    if (m && n >= 0 &&
        (m->lines = malloc(((size_t)n ? (size_t)n : 1) * sizeof *m->lines)) != NULL) {
        memcpy(m->lines, *out, (size_t)n * sizeof *m->lines);
        m->nlines = n;
    }
    return n;
}

/* lines_raw: c's logical lines (pysrc.h) */
static long lines_raw(const char *c, size_t len, lline **out)
{
    size_t cap = 256, n = 0, i = 0;
    uint32_t line = 1;
    lline *L = malloc(cap * sizeof *L);
    if (!L)
        return -1;
    while (i < len) {
        int indent = 0;
        while (i < len && (c[i] == ' ' || c[i] == '\t' || c[i] == '\f'))
            indent = c[i] == '\t' ? (indent / 8 + 1) * 8 : indent + (c[i] == ' '), i++;
        if (i >= len)
            break;
        if (c[i] == '\n' || c[i] == '\r') { /* blank (or a comment, blanked) */
            line += c[i++] == '\n';
            continue;
        }
        lline l = {line, line, indent, i, i};
        int depth = 0;
        char last = 0; /* the last byte that is not a blank */
        for (; i < len; i++) {
            char ch = c[i];
            if (ch == '(' || ch == '[' || ch == '{')
                depth++;
            else if ((ch == ')' || ch == ']' || ch == '}') && depth > 0)
                depth--;
            if (ch == '\n') {
                if (depth > 0 || last == '\\') {
                    line++, last = 0;
                    continue;
                }
                break;
            }
            if (ch != ' ' && ch != '\t' && ch != '\r')
                last = ch;
        }
        l.last = line, l.b = i;
        if (i < len) /* (past the newline) */
            i++, line++;
        if (n == cap) {
            lline *m = realloc(L, cap * 2 * sizeof *L);
            if (!m) {
                free(L);
                return -1;
            }
            L = m, cap *= 2;
        }
        L[n++] = l;
    }
    *out = L;
    return (long)n;
}

size_t pysrc_line_at(const char *c, size_t i)
{
    size_t line = 1;
    for (size_t q = 0; q < i; q++)
        line += c[q] == '\n';
    return line;
}

const char *pysrc_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return !path ? "" : slash ? slash + 1 : path;
}
