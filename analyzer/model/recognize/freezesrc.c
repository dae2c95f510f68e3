/* freezesrc.c — whether a program freezes weights, from its recorded source: a textual inversion
 * (a frozen fp16 UNet after a trained token embedding) out of memory in its first forward had
 * been costed AdamW's state and a gradient for every weight, 4.49 GiB where its one trained table
 * makes 0.28, and its lower bounds had exceeded what its own smaller batches measured. */
#include <stdio.h>
#include <string.h>

#include "freezesrc.h"
#include "scriptflags.h"
#include "vramtrace/trace_format.h"

/* freeze_at: the length of the freeze written at s[i] (".requires_grad_(False)",
 * ".requires_grad = False", spaces allowed around its parts), else 0 */
static size_t freeze_at(const char *s, size_t i, size_t len)
{
    static const char attr[] = ".requires_grad";
    const size_t al = sizeof attr - 1;
    if (i + al > len || memcmp(s + i, attr, al))
        return 0;
    size_t j = i + al;
    int call = j < len && s[j] == '_';
    j += call;
    while (j < len && s[j] == ' ')
        j++;
    if (j >= len || s[j] != (call ? '(' : '=')) /* (== False: its second '=' is no False) */
        return 0;
    j++;
    while (j < len && s[j] == ' ')
        j++;
    if (j + 5 > len || memcmp(s + j, "False", 5))
        return 0;
    j += 5;
    if (call) {
        while (j < len && s[j] == ' ')
            j++;
        if (j >= len || s[j] != ')')
            return 0;
        j++;
    } else if (j < len && (s[j] == '_' || (s[j] >= 'a' && s[j] <= 'z') ||
                           (s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= '0' && s[j] <= '9'))) {
        return 0; /* (a longer name: False_x) */
    }
    return j - i;
}

/* indent_of: the spaces before line start a of s (tabs as one), -1 for a blank or comment line */
static int indent_of(const char *s, size_t a, size_t len)
{
    int n = 0;
    while (a < len && (s[a] == ' ' || s[a] == '\t'))
        a++, n++;
    return a >= len || s[a] == '\n' || s[a] == '#' ? -1 : n;
}

/* starts: line text at s[a] (its indentation skipped) begins with keyword w and a space or ':' */
static int starts(const char *s, size_t a, size_t len, const char *w)
{
    while (a < len && (s[a] == ' ' || s[a] == '\t'))
        a++;
    size_t n = strlen(w);
    return a + n < len && !memcmp(s + a, w, n) && (s[a + n] == ' ' || s[a + n] == ':');
}

/* unconditional: the statement at s[i] runs whenever its function (or the script) does: no
 * if, elif, else or while encloses it up to its def (a --freeze-backbone branch that the run
 * may not have taken says nothing of it) */
static int unconditional(const char *s, size_t i)
{
    size_t a = i;
    while (a > 0 && s[a - 1] != '\n')
        a--;
    int ind = indent_of(s, a, i + 1);
    while (a > 0 && ind > 0) {
        size_t b = a - 1; /* the previous line: [b0, b) */
        while (b > 0 && s[b - 1] != '\n')
            b--;
        a = b;
        int k = indent_of(s, a, i);
        if (k < 0 || k >= ind)
            continue;
        ind = k; /* an enclosing block's header */
        if (starts(s, a, i, "def") || starts(s, a, i, "class"))
            return 1;
        if (starts(s, a, i, "if") || starts(s, a, i, "elif") || starts(s, a, i, "else") ||
            starts(s, a, i, "while"))
            return 0;
    }
    return 1;
}

int freeze_src(const config_files *fs, char *out, size_t n)
{
    if (n)
        out[0] = '\0';
    for (int f = 0; fs && f < fs->n; f++) {
        const config_recfile *cf = &fs->f[f];
        if (cf->kind != VT_FILE_ARG || cf->flags || !cf->data)
            continue;
        const char *s = cf->data;
        size_t line = 1;
        for (size_t i = 0; i < cf->len;) {
            size_t j = scriptflags_skip_noncode(s, i, cf->len);
            for (; i < j; i++) /* (the lines a string or comment spans) */
                line += s[i] == '\n';
            if (i >= cf->len)
                break;
            size_t k = freeze_at(s, i, cf->len);
            if (!k || !unconditional(s, i)) {
                line += s[i] == '\n';
                i++;
                continue;
            }
            const char *name = !cf->name                ? ""
                               : strrchr(cf->name, '/') ? strrchr(cf->name, '/') + 1
                                                        : cf->name;
            snprintf(out, n, "%.60s:%zu %s", name, line,
                     s[i + 14] == '_' ? "requires_grad_(False)" : "requires_grad = False");
            return 1;
        }
    }
    return 0;
}
