/* jsonw.c — JSON strings of a trace's bytes (jsonw.h): literals written by hand and cJSON
 * strings; the UTF-8 repair is escape_utf8 (trace/escape.c). */
#include "jsonw.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"

int jsonw_str(FILE *out, const char *s, size_t len)
{
    char *u = escape_utf8_dup(s, len);
    if (!u)
        return -1;
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)u; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
    free(u);
    return ferror(out) ? -1 : 0;
}

int jsonw_cstr(FILE *out, const char *s)
{
    return jsonw_str(out, s, strlen(s));
}

cJSON *jsonw_item(const char *s, size_t len)
{
    char small[512]; /* most strings: no copy on the heap */
    if (escape_utf8(s, len, small, sizeof small) < sizeof small)
        return cJSON_CreateString(small);
    char *big = escape_utf8_dup(s, len);
    cJSON *it = big ? cJSON_CreateString(big) : NULL;
    free(big);
    return it;
}

void jsonw_add(cJSON *o, const char *key, const char *s, size_t len)
{
    cJSON *it = jsonw_item(s, len);
    if (it && !cJSON_AddItemToObject(o, key, it)) /* the key's copy failed: not o's to free */
        cJSON_Delete(it);
}

void jsonw_add_c(cJSON *o, const char *key, const char *s)
{
    jsonw_add(o, key, s ? s : "", s ? strlen(s) : 0);
}
