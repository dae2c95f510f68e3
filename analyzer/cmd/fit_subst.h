/* fit_subst.h — `vramtrace fit`'s placeholders in CMD's words (fit_subst.c): {B} the
 * micro-batch, {A} the accumulation steps, {I} the iterations; {B=N} / {A=N} give defaults. */
#ifndef VT_FIT_SUBST_H
#define VT_FIT_SUBST_H

#include <stddef.h>

#define FIT_DEFAULT_MAX (1L << 30) /* the largest default {B=N} / {A=N} */

/* What the words of CMD mark: the {B=N} / {A=N} defaults (0 if none) and which placeholders
 * appear. */
typedef struct fit_marks {
    long b0, a0;
    int has_b, has_a, has_i;
} fit_marks;

/* fit_subst_scan: adds the placeholders of word w to *m. 0, or -1 with why in err when one is
 * not used as written: a default that is not a whole number from 1 to FIT_DEFAULT_MAX ({B=abc},
 * {B=0}), one without its closing '}', a default for {I} (the iterations are --iters), or a
 * second default for {B} or {A} that differs from the first. */
int fit_subst_scan(const char *w, fit_marks *m, char *err, size_t errlen);

/* fit_subst: w with {B..}, {A..}, {I} replaced by b, a, iters; malloc'ed (the caller frees),
 * NULL when out of memory. */
char *fit_subst(const char *w, long b, long a, long iters);

#endif
