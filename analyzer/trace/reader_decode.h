/* reader_decode.h — private to the reader's files (reader.c, reader_decode.c, reader_chunked.c)
 * and its fuzz targets: decoding one framed record's payload into reader_record.u, and the
 * little-endian loads they use (reader.h is public). */
#ifndef VT_READER_DECODE_H
#define VT_READER_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "reader.h"

/* reader_size_ok: whether a record of this type can have this size (reader.c frames by it) */
bool reader_size_ok(unsigned type, uint32_t size);

static inline uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

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

_Static_assert(offsetof(reader_event, device) == offsetof(reader_event, api) + 1 &&
                   offsetof(reader_event, failed) == offsetof(reader_event, api) + 2 &&
                   offsetof(reader_event, backward) == offsetof(reader_event, api) + 3 &&
                   offsetof(reader_event, emulated) == offsetof(reader_event, api) + 4 &&
                   offsetof(reader_event, addr) >= offsetof(reader_event, api) + 8 &&
                   VT_EVF_FAILED == 0x1000u && VT_EVF_BACKWARD == 0x2000u &&
                   VT_EVF_EMULATED == 0x4000u,
               "reader_decode_flags's one store");

/* reader_decode_flags: the time, thread and flags of an event; the api, device and the three
 * flags' bools (five bytes side by side) in one word, stored at once with the three bytes after
 * them (has_aux, has_ext, padding: the caller sets the first two): 12 instructions an event
 * fewer than a shift, a mask and a store each */
static inline void reader_decode_flags(uint16_t flags, uint64_t tt, reader_event *e)
{
    e->time_ns = VT_TT_NS(tt);
    e->thread = VT_TT_THREAD(tt);
    e->flags = flags;
    uint64_t f = flags;
    /* (the three flags' bits 12-14 to bits 16, 24 and 32 by one multiply, its other products
     * masked off: no two of the nine land on one bit, so none carries; 5 instructions an
     * event fewer than a shift and a mask each) */
    uint64_t w = (f & 0xfffu) | ((f & (VT_EVF_FAILED | VT_EVF_BACKWARD | VT_EVF_EMULATED)) *
                                     (1u << 4 | 1u << 11 | 1u << 18) &
                                 (1ull << 16 | 1ull << 24 | 1ull << 32));
    /* (api, device: VT_EVF_API, VT_EVF_DEVICE) */
    memcpy((char *)e + offsetof(reader_event, api), &w, sizeof w);
}

/* reader_decode_alloc40 / reader_decode_free24: an ALLOC record of 40 bytes / a FREE record of 24
 * (their common sizes; flags: the header's, p: the payload) into *e, the payload's length a
 * constant: its tests folded (reader_next_event's common records) */
static inline void reader_decode_alloc40(uint16_t flags, const uint8_t *p, reader_event *e)
{
    uint16_t s16;
    int16_t r16;
    reader_decode_flags(flags, rd64(p), e);
    e->addr = rd64(p + 8);
    e->size = rd64(p + 16);
    e->stack_id = rd32(p + 24);
    memcpy(&s16, p + 28, 2);
    memcpy(&r16, p + 30, 2);
    e->stream = s16;
    e->result = r16;
    e->has_aux = false, e->aux = 0; /* (the 48-byte form has one) */
    e->has_ext = false;
}
static inline void reader_decode_free24(uint16_t flags, const uint8_t *p, reader_event *e)
{
    reader_decode_flags(flags, rd64(p), e);
    e->addr = rd64(p + 8);
    e->size = 0, e->aux = 0;
    e->has_aux = false, e->has_ext = false; /* (the 32-byte form has a stack) */
    e->stack_id = 0, e->stream = 0, e->result = 0;
}

/* reader_decode_event_to: reader_decode of an ALLOC or FREE record of any size (it cannot be
 * malformed once framed) into *e: the common size's decoding, and what a longer one adds (an
 * ALLOC's aux, a FREE's stack, stream and result) */
static inline void reader_decode_event_to(const reader_record *rec, reader_event *e)
{
    const uint8_t *p = rec->payload;
    uint32_t n = rec->payload_len;
    if (rec->type == VT_REC_ALLOC) {
        reader_decode_alloc40(rec->flags, p, e);
        if (n >= 40)
            e->has_aux = true, e->aux = rd64(p + 32);
        return;
    }
    reader_decode_free24(rec->flags, p, e);
    if (n >= 24) {
        uint16_t s16;
        int16_t r16;
        e->has_ext = true;
        e->stack_id = rd32(p + 16);
        memcpy(&s16, p + 20, 2);
        memcpy(&r16, p + 22, 2);
        e->stream = s16;
        e->result = r16;
    }
}

/* reader_decode_event: the same into rec->u.ev */
static inline void reader_decode_event(reader_record *rec)
{
    reader_decode_event_to(rec, &rec->u.ev);
}

/* reader_decode: fills rec->u from rec->payload / payload_len (type already size-checked by
 * the framing). Returns NULL, or a static text saying why the record is malformed. */
const char *reader_decode(reader_record *rec);

/* reader_partial_ok: whether the `have` bytes present of a record cut by EOF (b: from its
 * header h) are consistent with its header (a writer cut mid-record) rather than a corrupt
 * size (reader_decode.c) */
bool reader_partial_ok(const vt_rec_header *h, const uint8_t *b, size_t have);

#endif
