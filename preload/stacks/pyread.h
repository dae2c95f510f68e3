/* pyread.h — raw reads of the calling thread's own Python objects (pyframes.c's walk,
 * pycodes.h's fingerprints): that thread is inside our hook, so what it holds is frozen while
 * we read it; no pointer is followed before plausible() says it could be one. */
#ifndef VT_PRELOAD_PYREAD_H
#define VT_PRELOAD_PYREAD_H

#include <stdint.h>
#include <string.h>

static inline uint64_t rd_ptr(uint64_t base, uint32_t off)
{
    uint64_t v;
    memcpy(&v, (const void *)(uintptr_t)(base + off), sizeof v);
    return v;
}
static inline int32_t rd_i32(uint64_t base, uint32_t off)
{
    int32_t v;
    memcpy(&v, (const void *)(uintptr_t)(base + off), sizeof v);
    return v;
}
static inline uint32_t rd_u32(uint64_t base, uint32_t off)
{
    uint32_t v;
    memcpy(&v, (const void *)(uintptr_t)(base + off), sizeof v);
    return v;
}
static inline int plausible(uint64_t p)
{
    /* 4096 <= p < 2^56, 8-aligned: without branches (asked several times a frame) */
    return (p - 4096 < (1ull << 56) - 4096) & ((p & 7) == 0);
}

/* word_at: the 8 bytes at p (8-aligned, so the load cannot cross a page) with only the first
 * n of them kept (n < 8: bytes past an object's contents are masked out). */
static inline uint64_t word_at(uint64_t p, uint64_t n)
{
    uint64_t w = rd_ptr(p, 0); /* (n == 0 too: the word holds the contents' terminator) */
    return n >= 8 ? w : w & ((1ull << (8 * n)) - 1); /* little-endian; n == 0: 0 */
}

#endif
