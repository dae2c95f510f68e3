/* hashseed.c — the hash tables' seed (hashseed.h): drawn once per process. */
#include "hashseed.h"

#include "escape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

uint64_t hashseed_value;

void hashseed_init(void)
{
    const char *given = getenv("VRAMTRACE_HASH_SEED");
    if (given && *given) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(given, &end, 0);
        if (!errno && !*end && given[0] != '-') {
            hashseed_value = (uint64_t)v;
            return;
        }
        fputs("vramtrace: VRAMTRACE_HASH_SEED=", stderr);
        escape_term_fputs(stderr, given, strlen(given));
        fputs(" is not a number from 0 to 2^64-1; using a drawn seed\n", stderr);
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
