/* reader_decode.h — private to reader.c and reader_decode.c: decoding one framed record's
 * payload into reader_record.u, and the little-endian loads both use (reader.h is public). */
#ifndef VT_READER_DECODE_H
#define VT_READER_DECODE_H

#include <stdint.h>
#include <string.h>

#include "reader.h"

static inline uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* reader_decode: fills rec->u from rec->payload / payload_len (type already size-checked by
 * the framing). Returns NULL, or a static text saying why the record is malformed. */
const char *reader_decode(reader_record *rec);

#endif
