/* bytes_sat.h — byte counts summed and compared without overflow: a hostile trace's sizes reach
 * 2^64, and a report, a prediction or a diff must say a held value, never wrap or trap. */
#ifndef VT_BYTES_SAT_H
#define VT_BYTES_SAT_H

#include <stdint.h>

/* bytes_add: a + b, at most UINT64_MAX */
static inline uint64_t bytes_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* bytes_diff: a - b as a signed count, held within +-INT64_MAX (never INT64_MIN, whose
 * magnitude a caller could not print) */
static inline int64_t bytes_diff(uint64_t a, uint64_t b)
{
    uint64_t d = a >= b ? a - b : b - a;
    int64_t m = d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
    return a >= b ? m : -m;
}

#endif
