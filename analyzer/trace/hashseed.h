/* hashseed.h — the seed of the analyzer's hash tables keyed by what a trace names (addresses,
 * sizes, instruction pointers). A trace file is input from anyone: with a fixed hash function,
 * addresses chosen to collide make every lookup walk one long probe (a crafted 100k-event trace
 * took 25 times as long, the time growing with the square of the live set). A seed drawn per
 * process makes such addresses unknowable; what the analyzer prints never depends on a table's
 * order (tests/integration/hash_seed.sh holds every output equal under two seeds). */
#ifndef VT_ANALYZER_HASHSEED_H
#define VT_ANALYZER_HASHSEED_H

#include <stdint.h>

/* the seed: 0 until hashseed_init (unit tests and fuzz targets run unseeded) */
extern uint64_t hashseed_value;

/* hashseed_init: draws the seed (getrandom), or takes VRAMTRACE_HASH_SEED (a number, decimal
 * or 0x hex: tests that compare outputs under chosen seeds; anything else is said on stderr and
 * a seed drawn). Once, before any table is made. */
void hashseed_init(void);

/* hashseed_mix: splitmix64's finalizer of x under the seed: every bit of x and of the seed
 * reaches the low bits a table uses. */
static inline uint64_t hashseed_mix(uint64_t x)
{
    uint64_t h = x ^ hashseed_value;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* hashseed_fold: a cheaper seeded hash, for the table each event of a trace looks in (the
 * replay's live set: 3 instructions where hashseed_mix takes 9): x under the seed times 2^64 over
 * the golden ratio (multiply-shift: the product's top bits depend on every bit below them, and
 * keys in arithmetic progression, as allocators place them, spread evenly), its bytes reversed so
 * that those top bits are the low bits a table uses. Without the seed, which keys share a slot is
 * not known; under seed 0 it is undone by tests/python/collide.py's unfold. (A drawn odd
 * multiplier instead of the seed's xor had left some seeds' slots unevenly used on vtgen's
 * addresses, the instructions an event moving by up to 2 % between runs.) */
static inline uint64_t hashseed_fold(uint64_t x)
{
    return __builtin_bswap64((x ^ hashseed_value) * 0x9e3779b97f4a7c15ull);
}

/* hashseed_text: a string's hash under the seed (FNV-1a from a seeded start, salt mixed in,
 * then hashseed_mix: a name's last bytes alone cannot choose the low bits a table uses). */
static inline uint64_t hashseed_text(const char *s, uint64_t salt)
{
    uint64_t h = hashseed_value ^ salt;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return hashseed_mix(h);
}

#endif
