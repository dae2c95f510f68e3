/* hashseed.c — the hash tables' seed (hashseed.h): drawn once per process. */
#include "hashseed.h"

#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

uint64_t hashseed_value;

/* parse_seed: s as plain decimal digits or 0x and hex digits, nothing before or after (no sign,
 * no space, no octal: strtoull took " -1" for 2^64-1 and "010" for 8); -1 when it is not one or
 * passes 2^64-1 */
static int parse_seed(const char *s, uint64_t *out)
{
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    unsigned base = hex ? 16 : 10;
    uint64_t v = 0;
    const char *p = s + (hex ? 2 : 0);
    if (!*p)
        return -1;
    for (; *p; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (hex && *p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a' + 10);
        else if (hex && *p >= 'A' && *p <= 'F')
            d = (unsigned)(*p - 'A' + 10);
        else
            return -1;
        if (v > (UINT64_MAX - d) / base)
            return -1;
        v = v * base + d;
    }
    *out = v;
    return 0;
}

void hashseed_init(void)
{
    const char *given = getenv("VRAMTRACE_HASH_SEED");
    if (given && *given) {
        uint64_t seed;
        if (parse_seed(given, &seed) == 0) {
            hashseed_value = seed;
            return;
        }
        fputs("vramtrace: VRAMTRACE_HASH_SEED=", stderr);
        escape_term_fputs(stderr, given, strlen(given));
        fputs(" is not a number from 0 to 2^64-1 (decimal digits, or 0x and hex digits); using a "
              "drawn seed\n",
              stderr);
    }
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        /* (no entropy yet, or no getrandom): the clock, the pid and where the stack is */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)getpid() << 16 ^
            (uint64_t)(uintptr_t)&ts;
    }
    hashseed_value = v;
}
