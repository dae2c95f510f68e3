/* fit_subst.c — the placeholders of `vramtrace fit`'s command words (fit_subst.h): {B}, {A},
 * {I}, with optional defaults {B=N} / {A=N}, found in a word and filled in for a trial. The
 * search, trials and printing live in cmd_fit.c. */
#include "fit_subst.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fit_subst_scan(const char *w, long *b0, long *a0, int *has_a, int *has_i)
{
    for (const char *p = strchr(w, '{'); p; p = strchr(p + 1, '{')) {
        if ((p[1] != 'B' && p[1] != 'A' && p[1] != 'I') || (p[2] != '}' && p[2] != '='))
            continue;
        long v = p[2] == '=' ? strtol(p + 3, NULL, 10) : 0;
        if (p[1] == 'B' && !*b0 && v > 0)
            *b0 = v;
        if (p[1] == 'A') {
            *has_a = 1;
            if (!*a0 && v > 0)
                *a0 = v;
        }
        if (p[1] == 'I')
            *has_i = 1;
    }
}

char *fit_subst(const char *w, long b, long a, long iters)
{
    size_t cap = strlen(w) + 1, n = 0;
    for (const char *p = strchr(w, '{'); p; p = strchr(p + 1, '{'))
        cap += 24; /* a number never needs more than its placeholder plus 24 */
    char *out = malloc(cap);
    while (out && *w) {
        const char *close = w[0] == '{' && w[1] && strchr("BAI", w[1]) ? strchr(w, '}') : NULL;
        if (close && (w[2] == '}' || w[2] == '=')) {
            long v = w[1] == 'B' ? b : w[1] == 'A' ? a : iters;
            n += (size_t)snprintf(out + n, cap - n, "%ld", v);
            w = close + 1;
            continue;
        }
        out[n++] = *w++;
    }
    if (out)
        out[n] = '\0';
    return out;
}
