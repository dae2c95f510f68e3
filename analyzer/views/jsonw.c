/* jsonw.c — JSON strings of a trace's bytes (jsonw.h): literals written by hand and cJSON
 * strings; the UTF-8 repair is escape_utf8 (trace/escape.c). */
#include "jsonw.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "mem.h"

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
        else if (jsonw_c1((const char *)p))
            fprintf(out, "\\u%04x", *++p);
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

/* ---- jsonw_print: cJSON_PrintUnformatted's text, without its per-number sprintf + sscanf ---- */

typedef struct outbuf {
    char *p;
    size_t n, cap;
    int failed; /* out of memory, or an item cJSON cannot print */
} outbuf;

/* put_grow: put's slow way, the buffer grown first */
static void put_grow(outbuf *b, const char *s, size_t len)
{
    if (b->failed)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
}

static inline void put(outbuf *b, const char *s, size_t len)
{
    if (b->n + len + 1 > b->cap || b->failed) {
        put_grow(b, s, len);
        return;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
}

/* put_string: s quoted as cJSON quotes it (", \ and \b \f \n \r \t by letter, other bytes below
 * 32 as \u00XX, the rest as they are); NULL as "" */
static void put_string(outbuf *b, const char *s)
{
    put(b, "\"", 1);
    const char *run = s ? s : "";
    const char *q = run;
    for (; *q; q++) {
        unsigned char ch = (unsigned char)*q;
        if (ch >= 32 && ch != '"' && ch != '\\')
            continue;
        put(b, run, (size_t)(q - run));
        char esc[8];
        const char *letter = ch == '"'    ? "\""
                             : ch == '\\' ? "\\"
                             : ch == '\b' ? "b"
                             : ch == '\f' ? "f"
                             : ch == '\n' ? "n"
                             : ch == '\r' ? "r"
                             : ch == '\t' ? "t"
                                          : NULL;
        int len = letter ? snprintf(esc, sizeof esc, "\\%s", letter)
                         : snprintf(esc, sizeof esc, "\\u%04x", ch);
        put(b, esc, (size_t)len);
        run = q + 1;
    }
    put(b, run, (size_t)(q - run));
    put(b, "\"", 1);
}

/* the cJSON linked: from 1.7.16 on it prints a whole number that fits an int as that int ("%d"),
 * so -0 as "0"; 1.7.15 and before with "%1.15g", "-0" (Debian 12: 1.7.15; Ubuntu 24.04: 1.7.17) */
#define JSONW_CJSON_VERSION                                                                        \
    (CJSON_VERSION_MAJOR * 10000 + CJSON_VERSION_MINOR * 100 + CJSON_VERSION_PATCH)
#define JSONW_MINUS_ZERO (JSONW_CJSON_VERSION < 10716)

/* put_number: d as cJSON prints it: NaN and infinities as null; a whole number below 10^15 in
 * its digits (what "%1.15g" gives it, without the formatter); else "%1.15g" when it
 * reads back as d (cJSON's tolerance), "%1.17g" when not; the locale's decimal point as '.' */
static void put_number(outbuf *b, double d)
{
    char num[32];
    int len;
    if (isnan(d) || isinf(d)) {
        put(b, "null", 4);
        return;
    }
    if (d == floor(d) && fabs(d) < 1e15) {
        long long v = (long long)d;
        unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
        char *e = num + sizeof num, *q = e;
        do
            *--q = (char)('0' + u % 10);
        while (u /= 10);
        if (signbit(d) && (v != 0 || JSONW_MINUS_ZERO)) /* (-0 as the cJSON linked writes it) */
            *--q = '-';
        put(b, q, (size_t)(e - q));
        return;
    }
    len = snprintf(num, sizeof num, "%1.15g", d);
    double test = strtod(num, NULL);
    double most = fabs(test) > fabs(d) ? fabs(test) : fabs(d);
    if (!(fabs(test - d) <= most * DBL_EPSILON))
        len = snprintf(num, sizeof num, "%1.17g", d);
    if (len < 0 || len > 25) { /* cJSON's buffer: the print fails */
        b->failed = 1;
        return;
    }
    char point = *localeconv()->decimal_point;
    for (int i = 0; i < len; i++)
        if (num[i] == point)
            num[i] = '.';
    put(b, num, (size_t)len);
}

static void put_item(outbuf *b, const cJSON *it)
{
    switch (it->type & 0xFF) {
    case cJSON_NULL:
        put(b, "null", 4);
        return;
    case cJSON_False:
        put(b, "false", 5);
        return;
    case cJSON_True:
        put(b, "true", 4);
        return;
    case cJSON_Number:
        put_number(b, it->valuedouble);
        return;
    case cJSON_Raw:
        if (!it->valuestring)
            b->failed = 1;
        else
            put(b, it->valuestring, strlen(it->valuestring));
        return;
    case cJSON_String:
        put_string(b, it->valuestring);
        return;
    case cJSON_Array:
    case cJSON_Object: {
        int obj = (it->type & 0xFF) == cJSON_Object;
        put(b, obj ? "{" : "[", 1);
        for (const cJSON *c = it->child; c && !b->failed; c = c->next) {
            if (obj) {
                put_string(b, c->string);
                put(b, ":", 1);
            }
            put_item(b, c);
            if (c->next)
                put(b, ",", 1);
        }
        put(b, obj ? "}" : "]", 1);
        return;
    }
    default:
        b->failed = 1;
    }
}

char *jsonw_print(const cJSON *item)
{
    outbuf b = {0};
    if (!item)
        return NULL;
    put_item(&b, item);
    put(&b, "", 0);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    b.p[b.n] = '\0';
    return b.p;
}

void jsonw_fputs(const char *text, FILE *out)
{
    const char *run = text;
    for (const char *q = strchr(text, 0xc2); q; q = strchr(q + 1, 0xc2)) {
        if (!jsonw_c1(q)) /* (a character past U+009F, or no second byte) */
            continue;
        fwrite(run, 1, (size_t)(q - run), out);
        fprintf(out, "\\u%04x", (unsigned char)q[1]);
        run = q + 2;
        q++;
    }
    fputs(run, out);
}

/* ---- the arena of jsonw_arena_begin: blocks of ARENA_BLOCK bytes (a larger request a block of
 * its own), each after the one before in a list; pointers handed out 16-byte aligned ---- */
#define ARENA_BLOCK ((size_t)64 << 10)

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} arena_block;

static arena_block *g_arena;

static void *arena_malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    arena_block *b = g_arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
        arena_block *nb = malloc(sizeof *nb + cap); /* (a failure noted: mem.h) */
        if (!nb)
            return NULL;
        nb->used = 0, nb->cap = cap;
        if (b && cap != ARENA_BLOCK) { /* (a large one behind the current block) */
            nb->next = b->next, b->next = nb;
            nb->used = cap;
            return nb->data;
        }
        nb->next = b;
        g_arena = b = nb;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

/* arena_free: nothing for the arena's own; what cJSON made before the arena began, freed */
static void arena_free(void *p)
{
    for (const arena_block *b = g_arena; b; b = b->next)
        if ((const unsigned char *)p >= b->data && (const unsigned char *)p < b->data + b->cap)
            return;
    mem_free(p);
}

void jsonw_arena_begin(void)
{
    cJSON_Hooks h = {arena_malloc, arena_free};
    cJSON_InitHooks(&h);
}

void jsonw_arena_end(void)
{
    cJSON_Hooks h = {mem_malloc, mem_free};
    cJSON_InitHooks(&h);
    for (arena_block *b = g_arena, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    g_arena = NULL;
}
