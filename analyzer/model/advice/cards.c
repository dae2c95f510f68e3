/* cards.c — GPU card presets and size parsing for `--card` (cards.h).
 * A card is a usable capacity in bytes: a preset name (as nvidia-smi shows the card's total)
 * or a size with a unit. Formatting of byte counts for all reports lives here too. */
#include "cards.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024ull * 1024ull)

/* X(name, usable MiB, aliases separated by '|', what it is) — the one preset list. */
#define VT_CARD_PRESETS(X)                                                                         \
    X("rtx4070", 12282, "4070|rtx4070-12gb", "RTX 4070 12 GB, as nvidia-smi shows it")             \
    X("rtx3060-12gb", 12288, "rtx3060|3060", "RTX 3060 12 GB")                                     \
    X("rtx4090", 24576, "4090|rtx4090-24gb", "RTX 4090 24 GB")                                     \
    X("a100-40gb", 40960, "a100-40|a10040gb", "A100 40 GB")                                        \
    X("a100-80gb", 81920, "a100|a100-80|a10080gb", "A100 80 GB")                                   \
    X("h100-80gb", 81559, "h100|h100-80|h10080gb", "H100 80 GB HBM3")

typedef struct card_preset {
    const char *name;
    uint64_t mib;
    const char *aliases;
    const char *doc;
} card_preset;

static const card_preset presets[] = {
#define VT_CARD_ROW(n, m, a, d) {n, m, a, d},
    VT_CARD_PRESETS(VT_CARD_ROW)
#undef VT_CARD_ROW
};

/* norm: lower-cases s into buf dropping '_' and ' ' and mapping them to nothing, so
 * "RTX_4070" and "rtx4070" compare equal. buf gets at most len-1 characters. */
static void norm(const char *s, char *buf, size_t len)
{
    size_t j = 0;
    for (; *s && j + 1 < len; s++) {
        if (*s == '_' || *s == ' ')
            continue;
        buf[j++] = (char)tolower((unsigned char)*s);
    }
    buf[j] = '\0';
}

/* alias_match: 1 when the normalized name n equals one of the '|'-separated aliases. */
static int alias_match(const char *aliases, const char *n)
{
    size_t nl = strlen(n);
    const char *p = aliases;
    while (*p) {
        const char *e = strchr(p, '|');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == nl && strncmp(p, n, l) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* The units of a size, one list: X(spelling, bytes). Binary: B, KiB..TiB (also Ki.., K..);
 * decimal: KB, MB, GB, TB (as disk makers count). Compared case-insensitively. */
/* clang-format off */
#define VT_SIZE_UNITS(X)                                                                           \
    X("b", 1.0)                                                                                    \
    X("kib", 0x1p10)                                                                               \
    X("ki", 0x1p10)                                                                                \
    X("k", 0x1p10)                                                                                 \
    X("mib", 0x1p20)                                                                               \
    X("mi", 0x1p20)                                                                                \
    X("m", 0x1p20)                                                                                 \
    X("gib", 0x1p30)                                                                               \
    X("gi", 0x1p30)                                                                                \
    X("g", 0x1p30)                                                                                 \
    X("tib", 0x1p40)                                                                               \
    X("ti", 0x1p40)                                                                                \
    X("t", 0x1p40)                                                                                 \
    X("kb", 1e3)                                                                                   \
    X("mb", 1e6)                                                                                   \
    X("gb", 1e9)                                                                                   \
    X("tb", 1e12)
/* clang-format on */

int card_parse_size(const char *s, uint64_t *out)
{
    if (!s || !out)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    /* a decimal number: digits with at most one point (strtod alone took 0x10GiB for 16 GiB
     * and 1e3GiB) */
    const char *d = s;
    int digits = 0;
    while (isdigit((unsigned char)*d))
        d++, digits++;
    if (*d == '.')
        for (d++; isdigit((unsigned char)*d); d++)
            digits++;
    if (!digits)
        return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (errno || end != d || !(v >= 0) || !isfinite(v)) /* (strtod read on: 0x10, 1e3) */
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    char unit[8];
    size_t ul = 0;
    for (; *end && !isspace((unsigned char)*end); end++) {
        if (ul + 1 >= sizeof unit)
            return -1;
        unit[ul++] = (char)tolower((unsigned char)*end);
    }
    unit[ul] = '\0';
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    if (!ul) /* "13": bytes? GiB? A size must say. */
        return CARD_SIZE_NO_UNIT;
    double mult = 0;
#define VT_UNIT_MATCH(name, bytes)                                                                 \
    if (!mult && !strcmp(unit, name))                                                              \
        mult = bytes;
    VT_SIZE_UNITS(VT_UNIT_MATCH)
#undef VT_UNIT_MATCH
    if (!mult)
        return -1;
    double b = v * mult;
    if (b > 4611686018427387904.0) /* 2^62 B: 4 EiB (as VRAMTRACE_CARD_BYTES at most) */
        return CARD_SIZE_TOO_LARGE;
    if (fabs(b - (double)llround(b)) > 1e-3) /* "0.5B" was 1 byte */
        return CARD_SIZE_FRACTION;
    *out = (uint64_t)llround(b);
    return 0;
}

int card_parse(const char *s, card_spec *out, char *err, size_t errlen)
{
    if (!s || !*s || !out) {
        if (err && errlen)
            snprintf(err, errlen,
                     "empty card (give a preset such as rtx4070 or a size such as 12GiB)");
        return -1;
    }
    char n[64];
    norm(s, n, sizeof n);
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        if (!strcmp(n, presets[i].name) || alias_match(presets[i].aliases, n)) {
            snprintf(out->name, sizeof out->name, "%s", presets[i].name);
            out->bytes = presets[i].mib * MIB;
            return 0;
        }
    }
    uint64_t b = 0;
    int sr = card_parse_size(s, &b);
    if (sr && *s == '-' && card_parse_size(s + 1, &b) != -1) { /* "-1GiB": a size, below 0 */
        if (err && errlen)
            snprintf(err, errlen, "card size '%s' is negative (give a positive size such as 12GiB)",
                     s);
        return -1;
    }
    if (sr == CARD_SIZE_NO_UNIT) {
        if (err && errlen)
            snprintf(err, errlen, "%s: a size needs a unit (e.g. 12GiB, 12288MiB) or a card name",
                     s);
        return -1;
    }
    if (sr == CARD_SIZE_TOO_LARGE || sr == CARD_SIZE_FRACTION) {
        if (err && errlen)
            snprintf(err, errlen,
                     sr == CARD_SIZE_TOO_LARGE
                         ? "card size '%s' is too large (at most 2^62 bytes, 4194304TiB)"
                         : "card size '%s' is not a whole number of bytes",
                     s);
        return -1;
    }
    if (sr == 0) {
        if (b == 0) {
            if (err && errlen)
                snprintf(err, errlen, "card size '%s' is zero (give a positive size such as 12GiB)",
                         s);
            return -1;
        }
        snprintf(out->name, sizeof out->name, "%s", s);
        out->bytes = b;
        return 0;
    }
    if (err && errlen)
        snprintf(err, errlen,
                 "unknown card '%s' (presets: %s; or a size such as 12GiB, 12288MiB, 11.5G)", s,
                 card_presets_help());
    return -1;
}

char *card_format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (!buf || !len)
        return buf;
    if (bytes < 1024) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    int u = 0;
    while (v >= 1024.0 && u < 3) {
        v /= 1024.0;
        u++;
    }
    /* GiB and above get two decimals ("11.99 GiB"), smaller units one. */
    snprintf(buf, len, u >= 2 ? "%.2f %s" : "%.1f %s", v, units[u]);
    return buf;
}

const char *card_presets_help(void)
{
    return "rtx4070 (12282 MiB), rtx3060-12gb (12288 MiB), rtx4090 (24 GiB), a100-40gb (40 GiB), "
           "a100-80gb (80 GiB), h100-80gb (81559 MiB)";
}
