/* pysrc.h — a recorded Python script's source as code alone (pysrc.c): its strings' and comments'
 * bytes blanked, and its logical lines, which the readers of a script's loop walk (evalsrc.c's
 * inline evaluations, scriptpass.c's passes and carried state), and where a find stands in it
 * (the readers of a script's calls: freezesrc.c, autocastsrc.c). Nothing is executed. */
#ifndef VT_ANALYZER_PYSRC_H
#define VT_ANALYZER_PYSRC_H

#include <stddef.h>
#include <stdint.h>

/* a logical line of a cleaned source (strings' and comments' bytes blanked): its physical lines
 * [first, last] (1-based), the indentation of its first, its code's bytes [a, b) */
typedef struct lline {
    uint32_t first, last;
    int indent;
    size_t a, b;
} lline;

/* pysrc_clean: a copy of src (len bytes, NUL-terminated) with the inside of string literals and
 * comments blanked, newlines kept, so that a search for code finds code only; NULL out of memory.
 * The caller frees it. */
char *pysrc_clean(const char *src, size_t len);
/* pysrc_lines: c's logical lines (brackets and backslashes join physical ones; blank ones
 * skipped) into *out (the caller frees it); their count, or -1 out of memory */
long pysrc_lines(const char *c, size_t len, lline **out);
/* pysrc_line_at: the physical line (1-based) of byte i of a source or its cleaned copy (the
 * same newlines): where a reader's find is cited ("train.py:47") */
size_t pysrc_line_at(const char *c, size_t i);
/* pysrc_name: a recorded script's path as a report cites it, its folders left out ("" for none) */
const char *pysrc_name(const char *path);

#endif
