/* pickle.c — pickle protocol 2 opcodes (pickle.h); opcode values from CPython's
 * Lib/pickletools.py. */
#include "pickle.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"

static void u32le(FILE *out, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        fputc((int)(v >> (8 * i)) & 0xff, out);
}

void pickle_begin(FILE *out)
{
    fputs("\x80\x02", out);
}
void pickle_end(FILE *out)
{
    fputc('.', out);
}
void pickle_dict(FILE *out)
{
    fputs("}(", out);
} /* EMPTY_DICT MARK */
void pickle_close_dict(FILE *out)
{
    fputc('u', out);
} /* SETITEMS */
void pickle_list(FILE *out)
{
    fputs("](", out);
} /* EMPTY_LIST MARK */
void pickle_close_list(FILE *out)
{
    fputc('e', out);
} /* APPENDS */
void pickle_none(FILE *out)
{
    fputc('N', out);
}
void pickle_bool(FILE *out, int v)
{
    fputc(v ? 0x88 : 0x89, out);
} /* NEWTRUE / NEWFALSE */

void pickle_str(FILE *out, const char *s, size_t len)
{
    char *u = escape_utf8_dup(s, len);
    size_t n = u ? strlen(u) : 0;
    fputc('X', out); /* BINUNICODE: u32 length, UTF-8 */
    u32le(out, (uint32_t)n);
    if (n)
        fwrite(u, 1, n, out);
    free(u);
}

void pickle_cstr(FILE *out, const char *s)
{
    pickle_str(out, s, strlen(s));
}

void pickle_int(FILE *out, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        fputc('J', out); /* BININT: i32 */
        u32le(out, (uint32_t)(int32_t)v);
        return;
    }
    fputs("\x8a\x08", out); /* LONG1, 8 bytes two's complement */
    for (int i = 0; i < 8; i++)
        fputc((int)((uint64_t)v >> (8 * i)) & 0xff, out);
}

void pickle_uint(FILE *out, uint64_t v)
{
    if (v <= INT64_MAX) {
        pickle_int(out, (int64_t)v);
        return;
    }
    fputs("\x8a\x09", out); /* LONG1, 9 bytes: a zero byte keeps it positive */
    for (int i = 0; i < 8; i++)
        fputc((int)(v >> (8 * i)) & 0xff, out);
    fputc(0, out);
}

void pickle_put(FILE *out, uint32_t i)
{
    fputc('r', out); /* LONG_BINPUT */
    u32le(out, i);
}

void pickle_get(FILE *out, uint32_t i)
{
    fputc('j', out); /* LONG_BINGET */
    u32le(out, i);
}
