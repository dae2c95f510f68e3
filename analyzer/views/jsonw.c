/* jsonw.c — JSON string literals (jsonw.h); the UTF-8 repair is escape_utf8 (trace/escape.c). */
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
