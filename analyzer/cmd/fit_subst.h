/* fit_subst.h — `vramtrace fit`'s placeholders in CMD's words (fit_subst.c): {B} the
 * micro-batch, {A} the accumulation steps, {I} the iterations; {B=N} / {A=N} give defaults. */
#ifndef VT_FIT_SUBST_H
#define VT_FIT_SUBST_H

/* fit_subst_scan: notes the placeholders of word w: sets *b0 / *a0 to a {B=N} / {A=N} default
 * when still 0 and N > 0, *has_a when {A..} appears, *has_i when {I} appears. */
void fit_subst_scan(const char *w, long *b0, long *a0, int *has_a, int *has_i);

/* fit_subst: w with {B..}, {A..}, {I} replaced by b, a, iters; malloc'ed (the caller frees),
 * NULL when out of memory. */
char *fit_subst(const char *w, long b, long a, long iters);

#endif
