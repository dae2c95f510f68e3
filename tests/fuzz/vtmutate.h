/* vtmutate.h — the structure-aware mutator of the trace fuzz targets (vtmutate.c): inputs are
 * changed as traces (records and their fields) and written back valid, so they reach the
 * replay, inference, recognition and advice rather than stopping in the reader. */
#ifndef VT_FUZZ_VTMUTATE_H
#define VT_FUZZ_VTMUTATE_H

#include <stddef.h>
#include <stdint.h>

/* vtmutate: LLVMFuzzerCustomMutator's contract: data holds size bytes and room for max; the
 * mutated input is written there and its size returned (<= max, > 0). */
size_t vtmutate(uint8_t *data, size_t size, size_t max, unsigned seed);

/* vtmutate_cross: LLVMFuzzerCustomCrossOver's contract: records of a and b mixed into out (at
 * most max bytes), a's header kept. Returns the size written, 0 when neither parses. */
size_t vtmutate_cross(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint8_t *out,
                      size_t max, unsigned seed);

#endif
