/* pylines.c — CPython co_linetable decoding (pylines.h): the 3.10 format (byte pairs of
 * bytecode delta / line delta, -128 = no line) and the 3.11+ location table (entries of
 * 1..8 code units with a form code and varints). Mirrors what co_lines() reports. */
#include "pylines.h"

#include <stdbool.h>

int pylines_supported(unsigned major, unsigned minor)
{
    return major == 3 && minor >= 10 && minor <= 13;
}

/* line_310: 3.10. Each pair (sdelta u8, ldelta s8) is a range [end, end + sdelta) whose
 * line is the running line plus ldelta (-128: no line, running line unchanged). */
static int line_310(const uint8_t *t, size_t len, int line, uint32_t offset)
{
    uint64_t end = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        uint64_t start = end;
        end += t[i];
        int ldelta = (int8_t)t[i + 1];
        int cur = -1;
        if (ldelta != -128) {
            if (__builtin_add_overflow(line, ldelta, &line))
                return -1; /* a line beyond int (a hostile table): malformed */
            cur = line;
        }
        if (offset >= start && offset < end)
            return cur;
    }
    return -1;
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

/* line_311: 3.11-3.13. Entry header byte: bit 7 set, bits 3..6 form code, bits 0..2 code
 * units - 1. Code 15: no line; 14: long form (svarint line delta, 3 varints); 13: no
 * columns (svarint line delta); 10..12: one line, line delta code-10, 2 column bytes;
 * 0..9: short form, same line, 1 byte. */
static int line_311(const uint8_t *t, size_t len, int line, uint32_t offset)
{
    uint64_t end = 0;
    size_t i = 0;
    bool bad = false;
    while (i < len) {
        uint8_t h = t[i++];
        if (!(h & 0x80))
            return -1; /* not an entry start: malformed */
        unsigned code = (h >> 3) & 15;
        uint64_t start = end;
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
            return -1; /* cut short, or a line beyond int (a hostile table): malformed */
        if (offset >= start && offset < end)
            return code == 15 ? -1 : line;
    }
    return -1;
}

int pylines_line(unsigned major, unsigned minor, const uint8_t *table, size_t len, int first_line,
                 uint32_t offset)
{
    if (!pylines_supported(major, minor) || !table)
        return -1;
    int line = minor == 10 ? line_310(table, len, first_line, offset)
                           : line_311(table, len, first_line, offset);
    return line < 0 ? -1 : line;
}
