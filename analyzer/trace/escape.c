/* escape.c — escaping of strings from traces for terminals, HTML and JSON (escape.h).
 * One walker decodes UTF-8 strictly (no overlongs, no surrogates, <= U+10FFFF) and hands
 * each unit to the mode's rules. */
#include "escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum esc_mode { ESC_TERM, ESC_HTML, ESC_UTF8 };

/* utf8_len: length of the valid UTF-8 sequence at s[0..n) (2..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* emit: appends piece[0..n) to out if it fits whole (keeping room for the NUL); counts it
 * in *need either way; once a piece did not fit, nothing more is written. */
static void emit(const char *piece, size_t n, char *out, size_t bufsz, size_t *need, bool *full)
{
    if (!*full && bufsz && *need + n < bufsz) {
        memcpy(out + *need, piece, n);
        out[*need + n] = 0;
    } else {
        *full = true;
    }
    *need += n;
}

/* emit_run: n one-byte pieces at once, as emit would one by one: those that fit. */
static void emit_run(const char *run, size_t n, char *out, size_t bufsz, size_t *need, bool *full)
{
    size_t room = !*full && bufsz && *need + 1 < bufsz ? bufsz - 1 - *need : 0;
    size_t k = n < room ? n : room;
    if (k) {
        memcpy(out + *need, run, k);
        out[*need + k] = 0;
    }
    if (k < n)
        *full = true;
    *need += n;
}

/* plain: a byte every mode copies as it is (printable ASCII but the ones some mode escapes). */
static inline bool plain(unsigned c)
{
    return c >= 0x20 && c < 0x7f && c != '\\' && c != '&' && c != '<' && c != '>' && c != '"' &&
           c != '\'';
}

static size_t escape_mode(const char *s, size_t len, char *out, size_t bufsz, int mode)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t need = 0;
    bool full = false;
    char hex[8];
    if (bufsz)
        out[0] = 0;
    for (size_t i = 0; i < len;) {
        unsigned c = u[i];
        if (plain(c)) {
            size_t j = i + 1;
            while (j < len && plain(u[j]))
                j++;
            emit_run(s + i, j - i, out, bufsz, &need, &full);
            i = j;
            continue;
        }
        if (c >= 0x80) {
            size_t l = utf8_len(u + i, len - i);
            /* U+0080..U+009F: C1 controls (U+009B is a CSI to some terminals): escaped as
             * bytes, but for JSON */
            if (l == 2 && c == 0xc2 && u[i + 1] < 0xa0 && mode != ESC_UTF8)
                l = 0;
            if (l) {
                emit(s + i, l, out, bufsz, &need, &full);
                i += l;
                continue;
            }
        } else if (mode == ESC_HTML && strchr("&<>\"'", (int)c) && c) {
            const char *ent = c == '&'   ? "&amp;"
                              : c == '<' ? "&lt;"
                              : c == '>' ? "&gt;"
                              : c == '"' ? "&quot;"
                                         : "&#39;";
            emit(ent, strlen(ent), out, bufsz, &need, &full);
            i++;
            continue;
        } else if (c == '\\' && mode != ESC_UTF8) {
            emit("\\\\", 2, out, bufsz, &need, &full);
            i++;
            continue;
        } else if ((c >= 0x20 && c != 0x7f) || (mode == ESC_UTF8 && c != 0)) {
            emit(s + i, 1, out, bufsz, &need, &full);
            i++;
            continue;
        }
        static const char digits[] = "0123456789abcdef";
        hex[0] = '\\', hex[1] = 'x', hex[2] = digits[c >> 4], hex[3] = digits[c & 15];
        emit(hex, 4, out, bufsz, &need, &full);
        i++;
    }
    return need;
}

size_t escape_term(const char *s, size_t len, char *out, size_t bufsz)
{
    return escape_mode(s, len, out, bufsz, ESC_TERM);
}

size_t escape_html(const char *s, size_t len, char *out, size_t bufsz)
{
    return escape_mode(s, len, out, bufsz, ESC_HTML);
}

size_t escape_utf8(const char *s, size_t len, char *out, size_t bufsz)
{
    return escape_mode(s, len, out, bufsz, ESC_UTF8);
}

/* escape_dup: the escape into a malloc'd string of the exact size, NULL on ENOMEM. */
static char *escape_dup(const char *s, size_t len, int mode)
{
    size_t need = escape_mode(s, len, NULL, 0, mode);
    char *out = malloc(need + 1);
    if (out)
        escape_mode(s, len, out, need + 1, mode);
    return out;
}

char *escape_term_dup(const char *s, size_t len)
{
    return escape_dup(s, len, ESC_TERM);
}
char *escape_html_dup(const char *s, size_t len)
{
    return escape_dup(s, len, ESC_HTML);
}
char *escape_utf8_dup(const char *s, size_t len)
{
    return escape_dup(s, len, ESC_UTF8);
}

/* escape_fputs: escapes through a stack buffer when it fits, else a heap copy. */
static int escape_fputs(FILE *f, const char *s, size_t len, int mode)
{
    char small[1024];
    size_t need = escape_mode(s, len, small, sizeof small, mode);
    if (need < sizeof small)
        return fwrite(small, 1, need, f) == need ? 0 : EOF;
    char *big = escape_dup(s, len, mode);
    if (!big)
        return EOF;
    int rc = fwrite(big, 1, need, f) == need ? 0 : EOF;
    free(big);
    return rc;
}

int escape_term_fputs(FILE *f, const char *s, size_t len)
{
    return escape_fputs(f, s, len, ESC_TERM);
}
int escape_html_fputs(FILE *f, const char *s, size_t len)
{
    return escape_fputs(f, s, len, ESC_HTML);
}
