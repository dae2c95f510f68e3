/* pylines.c — CPython co_linetable decoding (pylines.h): the 3.10 format (byte pairs of
 * bytecode delta / line delta, -128 = no line) and the 3.11+ location table (entries of
 * 1..8 code units with a form code and varints). Mirrors what co_lines() reports. Each table
 * is decoded once into its ranges (a cache checked against the table's bytes, or the caller's
 * pylines_table). */
#include "pylines.h"
#include "hashseed.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int pylines_supported(unsigned major, unsigned minor)
{
    return major == 3 && minor >= 10 && minor <= 13;
}

/* A decoded table: the ranges [end[k-1], end[k]) of its entries in order, each with its line
 * (-1: none). Decoding stops at the first malformed entry: offsets from there on have no line,
 * as the entry-by-entry walk of co_lines() would say. */
typedef struct ranges {
    uint64_t *end;
    int32_t *line;
    size_t n, cap;
} ranges;

static inline bool push(ranges *r, uint64_t end, int line)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        uint64_t *e = realloc(r->end, cap * sizeof *e);
        if (e)
            r->end = e;
        int32_t *l = e ? realloc(r->line, cap * sizeof *l) : NULL;
        if (l)
            r->line = l;
        if (!e || !l)
            return false;
        r->cap = cap;
    }
    r->end[r->n] = end;
    r->line[r->n++] = line;
    return true;
}

/* decode_310: 3.10. Each pair (sdelta u8, ldelta s8) is a range [end, end + sdelta) whose
 * line is the running line plus ldelta (-128: no line, running line unchanged). */
static bool decode_310(const uint8_t *t, size_t len, int line, ranges *r)
{
    uint64_t end = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        end += t[i];
        int ldelta = (int8_t)t[i + 1];
        int cur = -1;
        if (ldelta != -128) {
            if (__builtin_add_overflow(line, ldelta, &line))
                return true; /* a line beyond int (a hostile table): malformed from here */
            cur = line;
        }
        if (!push(r, end, cur))
            return false;
    }
    return true;
}

/* varint: 6 bits per byte, bit 6 = more follows (never past end). *bad on overrun. */
static uint32_t varint(const uint8_t *t, size_t len, size_t *i, bool *bad)
{
    uint32_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (*i >= len) {
            *bad = true;
            return v;
        }
        uint8_t b = t[(*i)++];
        if (shift < 32)
            v |= (uint32_t)(b & 63) << shift;
        shift += 6;
        if (!(b & 64))
            return v;
    }
}

static int svarint(const uint8_t *t, size_t len, size_t *i, bool *bad)
{
    uint32_t u = varint(t, len, i, bad);
    return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

/* decode_311: 3.11-3.13. Entry header byte: bit 7 set, bits 3..6 form code, bits 0..2 code
 * units - 1. Code 15: no line; 14: long form (svarint line delta, 3 varints); 13: no
 * columns (svarint line delta); 10..12: one line, line delta code-10, 2 column bytes;
 * 0..9: short form, same line, 1 byte. */
static bool decode_311(const uint8_t *t, size_t len, int line, ranges *r)
{
    uint64_t end = 0;
    size_t i = 0;
    bool bad = false;
    while (i < len) {
        uint8_t h = t[i++];
        if (!(h & 0x80))
            return true; /* not an entry start: malformed from here */
        unsigned code = (h >> 3) & 15;
        end += 2u * ((h & 7u) + 1u);
        int delta = 0;
        switch (code) {
        case 15:
            break;
        case 14:
            delta = svarint(t, len, &i, &bad);
            varint(t, len, &i, &bad);
            varint(t, len, &i, &bad);
            varint(t, len, &i, &bad);
            break;
        case 13:
            delta = svarint(t, len, &i, &bad);
            break;
        case 10:
        case 11:
        case 12:
            delta = (int)code - 10;
            i += 2;
            break;
        default:
            i += 1;
            break;
        }
        if (bad || i > len || __builtin_add_overflow(line, delta, &line))
            return true; /* cut short, or a line beyond int (a hostile table): malformed */
        if (!push(r, end, code == 15 ? -1 : line))
            return false;
    }
    return true;
}

/* ---- the cache: each table decoded once ------------------------------------------------------
 * Keyed by where the table lies, its length, first line and format, and checked against a copy
 * of its bytes at every lookup (a table freed and another at the same address never answers
 * for it): a compare is some fifty times cheaper than decoding the table again. */
typedef struct entry {
    const uint8_t *key;
    size_t len;
    int first_line;
    int v310;
    uint8_t *copy;
    ranges r;
} entry;

#define CACHE_MAX_BYTES ((size_t)64 << 20) /* copies kept; past it tables are decoded each time */
static entry *g_cache;
static size_t g_cap, g_n, g_bytes;

static size_t slot_of(const uint8_t *p, size_t len, int first_line, size_t cap)
{
    /* seeded (hashseed.h): where a trace puts its line tables, their lengths and first lines
     * are its own choice */
    uint64_t k = (uint64_t)(uintptr_t)p ^ (uint64_t)len << 40 ^ (uint64_t)(uint32_t)first_line;
    return (size_t)hashseed_mix(k) & (cap - 1);
}

static bool same(const entry *e, const uint8_t *t, size_t len, int first_line, int v310)
{
    return e->key == t && e->len == len && e->first_line == first_line && e->v310 == v310 &&
           !memcmp(e->copy, t, len);
}

/* lookup: the line of offset in r (ranges in order; -1 past the last or in a range without). */
static int lookup(const ranges *r, uint32_t offset)
{
    size_t lo = 0, hi = r->n; /* the first range whose end lies past offset */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->end[mid] <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n ? r->line[lo] : -1;
}

/* RESERVE_MAX: the most entries sized ahead of decoding (a table of a byte an entry at most, two in
 * 3.10): past it push grows them as entries come, so that a hostile length sizes nothing */
#define RESERVE_MAX 4096

static bool decode(const uint8_t *t, size_t len, int first_line, int v310, ranges *r)
{
    size_t n = v310 ? len / 2 : len;
    n = n < 1 ? 1 : n > RESERVE_MAX ? RESERVE_MAX : n;
    r->end = malloc(n * sizeof *r->end);
    r->line = r->end ? malloc(n * sizeof *r->line) : NULL;
    if (!r->line)
        return false;
    r->cap = n;
    return v310 ? decode_310(t, len, first_line, r) : decode_311(t, len, first_line, r);
}

/* cached: the decoded ranges of the table, from the cache or decoded into it; NULL when memory
 * is short or the cache is full (the caller decodes on its own). */
static const ranges *cached(const uint8_t *t, size_t len, int first_line, int v310)
{
    if (g_cap) {
        for (size_t j = slot_of(t, len, first_line, g_cap); g_cache[j].copy;
             j = (j + 1) & (g_cap - 1))
            if (same(&g_cache[j], t, len, first_line, v310))
                return &g_cache[j].r;
    }
    if (g_bytes + len > CACHE_MAX_BYTES)
        return NULL;
    if ((g_n + 1) * 2 > g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 256;
        entry *n = calloc(cap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < g_cap; i++) {
            if (!g_cache[i].copy)
                continue;
            size_t j = slot_of(g_cache[i].key, g_cache[i].len, g_cache[i].first_line, cap);
            while (n[j].copy)
                j = (j + 1) & (cap - 1);
            n[j] = g_cache[i];
        }
        free(g_cache);
        g_cache = n;
        g_cap = cap;
    }
    entry e = {t, len, first_line, v310, malloc(len ? len : 1), {0}};
    if (!e.copy)
        return NULL;
    memcpy(e.copy, t, len);
    if (!decode(t, len, first_line, v310, &e.r)) {
        free(e.copy), free(e.r.end), free(e.r.line);
        return NULL;
    }
    size_t j = slot_of(t, len, first_line, g_cap);
    while (g_cache[j].copy)
        j = (j + 1) & (g_cap - 1);
    g_cache[j] = e;
    g_n++;
    g_bytes += len;
    return &g_cache[j].r;
}

struct pylines_table {
    ranges r;
};

pylines_table *pylines_decode(unsigned major, unsigned minor, const uint8_t *table, size_t len,
                              int first_line)
{
    if (!pylines_supported(major, minor) || !table)
        return NULL;
    pylines_table *p = calloc(1, sizeof *p);
    if (p && !decode(table, len, first_line, minor == 10, &p->r)) {
        pylines_table_free(p);
        return NULL;
    }
    return p;
}

int pylines_table_line(const pylines_table *p, uint32_t offset)
{
    int line = lookup(&p->r, offset);
    return line < 0 ? -1 : line;
}

void pylines_table_free(pylines_table *p)
{
    if (p)
        free(p->r.end), free(p->r.line), free(p);
}

int pylines_line(unsigned major, unsigned minor, const uint8_t *table, size_t len, int first_line,
                 uint32_t offset)
{
    if (!pylines_supported(major, minor) || !table)
        return -1;
    int v310 = minor == 10;
    const ranges *c = cached(table, len, first_line, v310);
    if (c) {
        int line = lookup(c, offset);
        return line < 0 ? -1 : line;
    }
    ranges r = {0};
    int line = decode(table, len, first_line, v310, &r) ? lookup(&r, offset) : -1;
    free(r.end);
    free(r.line);
    return line < 0 ? -1 : line;
}
