/* pysrc.c — a recorded Python script's source as code alone: its strings' and comments' bytes
 * blanked, cut into logical lines (pysrc.h), and where a find in it stands, for the readers of a
 * script's code (evalsrc.c, scriptpass.c, freezesrc.c, autocastsrc.c). */
#include "pysrc.h"

#include <stdlib.h>
#include <string.h>

/* pysrc_clean: src with the inside of string literals and comments blanked (newlines kept), so that
 * a search for code finds code only */
char *pysrc_clean(const char *src, size_t len)
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

/* pysrc_lines: c's logical lines (pysrc.h) */
long pysrc_lines(const char *c, size_t len, lline **out)
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
