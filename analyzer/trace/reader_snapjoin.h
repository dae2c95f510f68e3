/* reader_snapjoin.h — private to reader_chunked.c and reader_snapjoin.c: the live set a reader
 * of a chunked trace handed out before a gap, joined to the snapshot after it. */
#ifndef VT_READER_SNAPJOIN_H
#define VT_READER_SNAPJOIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct snapjoin snapjoin;

/* snapjoin_new / snapjoin_free: an empty set (NULL when out of memory). */
snapjoin *snapjoin_new(void);
void snapjoin_free(snapjoin *j);
/* snapjoin_records: the records b[0, len) were handed out: their allocations and frees. */
void snapjoin_records(snapjoin *j, const uint8_t *b, size_t len);
/* snapjoin_merge: the snapshot snap[0, len) (a SNAPSHOT record, then ALLOC records) joined to
 * what was handed out, into *out (malloc'ed, *out_len bytes): the SNAPSHOT record (n_allocs: the
 * records after it), a FREE at its time for each allocation handed out that is not in it, then
 * its ALLOC records of allocations not handed out (one handed out with the same key and time is
 * the same allocation: left as it is). The set is the snapshot's after it. 0, or -1 (out of
 * memory, or not a snapshot). */
int snapjoin_merge(snapjoin *j, const uint8_t *snap, size_t len, uint8_t **out, size_t *out_len);

#endif
