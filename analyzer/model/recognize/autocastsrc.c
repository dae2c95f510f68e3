/* autocastsrc.c — which 16 bits a program's autocast computes in, from its recorded source: a
 * run with autocast's weight copies and no GradScaler had been said to be bfloat16 though its
 * script asked autocast for float16 and scaled its loss by hand (Megatron's, fairseq's way); the
 * trace's copies are 16-bit either way. */
#include <stdio.h>
#include <string.h>

#include "autocastsrc.h"
#include "scriptflags.h"
#include "vramtrace/trace_format.h"

/* call_end: the index past the ')' closing the call whose '(' is at s[i] (strings and comments
 * followed), len if it does not close */
static size_t call_end(const char *s, size_t i, size_t len)
{
    int depth = 0;
    while (i < len) {
        size_t j = scriptflags_skip_noncode(s, i, len);
        if (j != i) {
            i = j;
            continue;
        }
        if (s[i] == '(')
            depth++;
        else if (s[i] == ')' && --depth == 0)
            return i + 1;
        i++;
    }
    return len;
}

/* name_char: c may stand in a Python name before a word (one that ends there is no match) */
static int name_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* has: the text s[a..b) holds word w not inside a longer name ("float16" is not "bfloat16") */
static int has(const char *s, size_t a, size_t b, const char *w)
{
    size_t n = strlen(w);
    for (size_t i = a; i + n <= b; i++)
        if (!memcmp(s + i, w, n) && (i == a || !name_char(s[i - 1])))
            return 1;
    return 0;
}

/* call_dtype: what the autocast call s[a..b) names: 2 bfloat16, 1 float16, 0 nothing literal,
 * -1 a dtype given otherwise (a variable) */
static int call_dtype(const char *s, size_t a, size_t b)
{
    int bf = has(s, a, b, "bfloat16") || has(s, a, b, "bf16");
    int f16 = has(s, a, b, "float16") || has(s, a, b, "half") || has(s, a, b, "fp16");
    if (bf != f16)
        return bf ? 2 : 1;
    return bf || has(s, a, b, "dtype") ? -1 : 0;
}

int autocast_src_dtype(const config_files *fs, char *out, size_t n)
{
    static const char call[] = "autocast(";
    const size_t cl = sizeof call - 1;
    int seen = 0;
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
            for (; i < j; i++) /* (the lines a string spans) */
                line += s[i] == '\n';
            if (i >= cf->len)
                break;
            if (s[i] == '\n')
                line++;
            if (i + cl > cf->len || memcmp(s + i, call, cl) || (i > 0 && name_char(s[i - 1]))) {
                i++;
                continue;
            }
            size_t end = call_end(s, i + cl - 1, cf->len);
            int d = call_dtype(s, i, end);
            if (d < 0 || (seen && d && d != seen))
                return 0; /* a variable's dtype, or calls that disagree: not known */
            if (d && !seen) {
                seen = d;
                const char *name = !cf->name                ? ""
                                   : strrchr(cf->name, '/') ? strrchr(cf->name, '/') + 1
                                                            : cf->name;
                snprintf(out, n, "%.60s:%zu autocast(..., %s)", name, line,
                         d == 2 ? "bfloat16" : "float16");
            }
            for (; i < end; i++)
                line += s[i] == '\n';
        }
    }
    return seen;
}
