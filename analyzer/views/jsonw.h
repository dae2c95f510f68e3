/* jsonw.h — JSON strings of a trace's bytes, made valid UTF-8 first (trace/escape.h): literals
 * for the hand-streamed outputs (perfetto.c, html.c), quoted with '<', '>' and '&' written as
 * \u escapes, so a literal is also inert inside an HTML <script> element; and cJSON strings for
 * the documents built with cJSON (report --json, predict --json). */
#ifndef VT_ANALYZER_JSONW_H
#define VT_ANALYZER_JSONW_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* jsonw_str: writes s[0..len) as one JSON string literal (quotes included). Returns 0, or
 * -1 when out of memory or the write failed. */
int jsonw_str(FILE *out, const char *s, size_t len);
/* jsonw_cstr: the same for a NUL-terminated string. */
int jsonw_cstr(FILE *out, const char *s);

/* jsonw_item: a cJSON string of s[0..len) made valid UTF-8 (invalid bytes as \xNN, as dump
 * writes them), for every string a trace's bytes may reach: an argument, a file name, a note
 * quoting one. NULL (as cJSON_CreateString) when out of memory. */
cJSON *jsonw_item(const char *s, size_t len);
/* jsonw_add / jsonw_add_c: jsonw_item added to o under key (jsonw_add_c: a NUL-terminated s,
 * NULL as ""); nothing when out of memory (cJSON's own Add* alike). */
void jsonw_add(cJSON *o, const char *key, const char *s, size_t len);
void jsonw_add_c(cJSON *o, const char *key, const char *s);
/* jsonw_print: item as cJSON_PrintUnformatted prints it, byte for byte, made faster (a report
 * holds some 2,000 numbers: cJSON formats each with sprintf and reads it back with sscanf);
 * malloc'ed, NULL where cJSON's print would fail (out of memory, an item it cannot print). */
char *jsonw_print(const cJSON *item);
/* jsonw_c1: p starts a C1 control (U+0080..U+009F, UTF-8 0xC2 0x80..0x9F): JSON lets it
 * through, every JSON writer here escapes it as \u0080..\u009f (U+009B is a CSI to some
 * terminals); its second byte is p[1] */
static inline int jsonw_c1(const char *p)
{
    return (unsigned char)p[0] == 0xc2 && (unsigned char)p[1] >= 0x80 &&
           (unsigned char)p[1] <= 0x9f;
}
/* jsonw_fputs: JSON text onto out as it is, but for U+0080..U+009F (C1 controls, which a trace's
 * strings may hold and JSON lets through: U+009B is a CSI to some terminals), written as
 * \u0080..\u009f: the same value, nothing for a terminal to act on. */
void jsonw_fputs(const char *text, FILE *out);

/* jsonw_arena_begin / jsonw_arena_end: between them, cJSON takes its memory from an arena that
 * jsonw_arena_end releases whole (cJSON_Delete frees nothing of it): a document built, printed
 * and dropped at once (report --json: some 5,000 nodes and keys, whose mallocs and frees one by
 * one had been 2 % of a report's instructions). A failed allocation is noted as any (mem.h);
 * cJSON's hooks are mem_malloc / mem_free after it, as main sets them. Not nested. */
void jsonw_arena_begin(void);
void jsonw_arena_end(void);

#endif
