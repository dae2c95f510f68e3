/* autocastsrc.c — which 16 bits a program's autocast computes in, from its recorded source: a
 * run with autocast's weight copies and no GradScaler had been said to be bfloat16 though its
 * script asked autocast for float16 and scaled its loss by hand (Megatron's, fairseq's way); the
 * trace's copies are 16-bit either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autocastsrc.h"
#include "pysrc.h"
#include "vramtrace/trace_format.h"

/* call_end: the index past the ')' closing the call whose '(' is at c[i] (c: a cleaned source,
 * pysrc.h, whose strings and comments hold no bracket), len if it does not close */
static size_t call_end(const char *c, size_t i, size_t len)
{
    for (int depth = 0; i < len; i++)
        if (c[i] == '(')
            depth++;
        else if (c[i] == ')' && --depth == 0)
            return i + 1;
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
        /* its calls found in its code alone (pysrc.h); the dtype a call names read from the
         * source itself, strings included (getattr(torch, "bfloat16")) */
        const char *s = cf->data;
        char *c = pysrc_clean(s, cf->len);
        if (!c)
            return 0; /* (out of memory: not known) */
        for (size_t i = 0; i + cl <= cf->len; i++) {
            if (memcmp(c + i, call, cl) || (i > 0 && name_char(c[i - 1])))
                continue;
            size_t end = call_end(c, i + cl - 1, cf->len);
            int d = call_dtype(s, i, end);
            if (d < 0 || (seen && d && d != seen)) {
                free(c);
                return 0; /* a variable's dtype, or calls that disagree: not known */
            }
            if (d && !seen) {
                seen = d;
                snprintf(out, n, "%.60s:%zu autocast(..., %s)", pysrc_name(cf->name),
                         pysrc_line_at(c, i), d == 2 ? "bfloat16" : "float16");
            }
            i = end - 1; /* (past the call: an autocast( in its arguments is no other call) */
        }
        free(c);
    }
    return seen;
}
