/* fit_subst.c — the placeholders of `vramtrace fit`'s command words (fit_subst.h): {B}, {A},
 * {I}, with optional defaults {B=N} / {A=N}, found in a word and filled in for a trial. The
 * search, trials and printing live in cmd_fit.c. */
#include "fit_subst.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fit_subst_scan(const char *w, fit_marks *m, char *err, size_t errlen)
{
    for (const char *p = strchr(w, '{'); p; p = strchr(p + 1, '{')) {
        if ((p[1] != 'B' && p[1] != 'A' && p[1] != 'I') || (p[2] != '}' && p[2] != '='))
            continue;
        m->has_b |= p[1] == 'B';
        m->has_a |= p[1] == 'A';
        m->has_i |= p[1] == 'I';
        if (p[2] == '}')
            continue;
        const char *close = strchr(p + 3, '}');
        if (!close) {
            snprintf(err, errlen, "%s: {%c= has no closing '}' (e.g. {%c=16})", w, p[1],
                     p[1] == 'I' ? 'B' : p[1]);
            return -1;
        }
        int len = (int)(close - p + 1);
        if (p[1] == 'I') {
            snprintf(err, errlen,
                     "%.*s: {I} takes no default: the iterations are --iters N (default 2)", len,
                     p);
            return -1;
        }
        char *end;
        errno = 0;
        long v = strtol(p + 3, &end, 10);
        if (end != close || end == p + 3 || errno || v < 1 || v > FIT_DEFAULT_MAX ||
            !isdigit((unsigned char)p[3])) {
            snprintf(err, errlen,
                     "%.*s: a default must be a whole number from 1 to %ld (e.g. {%c=16})", len, p,
                     FIT_DEFAULT_MAX, p[1]);
            return -1;
        }
        long *d = p[1] == 'B' ? &m->b0 : &m->a0;
        if (*d && *d != v) {
            snprintf(err, errlen, "{%c=%ld} and %.*s: two defaults for {%c}: give one", p[1], *d,
                     len, p, p[1]);
            return -1;
        }
        *d = v;
    }
    return 0;
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
