/* jsonw.h — JSON string literals for the hand-streamed outputs (perfetto.c, html.c): a trace's
 * bytes made valid UTF-8 first (trace/escape.h), then quoted with '<', '>' and '&' written as
 * \u escapes, so a literal is also inert inside an HTML <script> element. */
#ifndef VT_ANALYZER_JSONW_H
#define VT_ANALYZER_JSONW_H

#include <stddef.h>
#include <stdio.h>

/* jsonw_str: writes s[0..len) as one JSON string literal (quotes included). Returns 0, or
 * -1 when out of memory or the write failed. */
int jsonw_str(FILE *out, const char *s, size_t len);
/* jsonw_cstr: the same for a NUL-terminated string. */
int jsonw_cstr(FILE *out, const char *s);

#endif
