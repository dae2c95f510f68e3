/* escape.h — every string that comes from a trace is escaped before it reaches a terminal
 * (control characters, ESC, invalid UTF-8 -> \xNN) or an HTML page (&<>"' as entities, plus
 * the terminal rules), so a crafted trace cannot drive the terminal or inject markup. */
#ifndef VT_ANALYZER_ESCAPE_H
#define VT_ANALYZER_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* escape_term: writes s[0..len) into out (bufsz bytes, always NUL-terminated when bufsz>0,
 * cut at a whole escape) with bytes < 0x20, 0x7f, the C1 controls U+0080..U+009F, and bytes
 * that are not part of a valid UTF-8 sequence written as "\xNN", and a backslash as "\\".
 * Valid UTF-8 (including non-ASCII) passes through. Returns the length the full escape needs
 * (snprintf-like). */
size_t escape_term(const char *s, size_t len, char *out, size_t bufsz);

/* escape_html: like escape_term, and & < > " ' become &amp; &lt; &gt; &quot; &#39;. */
size_t escape_html(const char *s, size_t len, char *out, size_t bufsz);

/* escape_utf8: like escape_term but control characters pass through (for JSON output,
 * where the JSON encoder escapes them): the result is always valid UTF-8. */
size_t escape_utf8(const char *s, size_t len, char *out, size_t bufsz);

/* escape_term_dup / escape_html_dup / escape_utf8_dup: the same into a malloc'd string
 * (free it); NULL when out of memory. */
char *escape_term_dup(const char *s, size_t len);
char *escape_html_dup(const char *s, size_t len);
char *escape_utf8_dup(const char *s, size_t len);

/* escape_term_fputs / escape_html_fputs: escape and write to f. Return 0, or EOF when the
 * write failed. */
int escape_term_fputs(FILE *f, const char *s, size_t len);
int escape_html_fputs(FILE *f, const char *s, size_t len);

#endif
