/* cards.h — GPU card presets and size parsing ("12GiB", "rtx4070", "11.5G").
 * Used by `run --card`, `report --card`, `predict --card` and the advice. */
#ifndef VT_ANALYZER_CARDS_H
#define VT_ANALYZER_CARDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct card_spec {
    char name[64];  /* preset name, or the size as given */
    uint64_t bytes; /* usable capacity in bytes */
} card_spec;

/* card_parse: a preset (rtx4070 = 12282 MiB, rtx3060-12gb, rtx4090, a100-40gb, a100-80gb,
 * h100-80gb) or a size with a unit (card_parse_size; a bare number is refused: "13: a size
 * needs a unit ..."; decimals allowed). Returns 0, or -1 with a message in err. */
int card_parse(const char *s, card_spec *out, char *err, size_t errlen);
/* card_parse_size: the size part of card_parse alone: a number and a unit, binary (B, KiB,
 * MiB, GiB, TiB; also Ki/K, Mi/M, Gi/G, Ti/T) or decimal (KB, MB, GB, TB), any case, e.g.
 * "12GiB" -> 12<<30, "12GB" -> 12e9; a decimal number (no hex, no exponent). Returns 0,
 * CARD_SIZE_NO_UNIT for a bare number ("13": bytes or GiB? refused), CARD_SIZE_TOO_LARGE past
 * 2^62 bytes, CARD_SIZE_FRACTION for a part of a byte ("0.5B"), or -1 (not a size). */
enum { CARD_SIZE_NO_UNIT = -2, CARD_SIZE_TOO_LARGE = -3, CARD_SIZE_FRACTION = -4 };
int card_parse_size(const char *s, uint64_t *out);
/* card_format_bytes: "11.99 GiB" / "512.0 MiB" / "4.0 KiB" / "12 B" into buf; returns buf. */
char *card_format_bytes(uint64_t bytes, char *buf, size_t len);
/* card_presets_help: one line listing the presets, for --help texts. */
const char *card_presets_help(void);

#endif
