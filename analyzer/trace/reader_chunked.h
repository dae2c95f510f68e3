/* reader_chunked.h — private to reader.c and reader_chunked.c: a chunked trace (trace_format.h,
 * CHUNKED LAYOUT) read as the plain trace it stands for, as bytes (reader.h is public; what a
 * command may want to say about the layout is reader_layout in reader.h). */
#ifndef VT_READER_CHUNKED_H
#define VT_READER_CHUNKED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "reader.h"

typedef struct chunked chunked;

/* chunked_detect: whether the record at header_size of fd is a SLOT (the chunked layout). */
int chunked_detect(int fd, uint64_t header_size);
/* chunked_open: walks the slot grid of the file fd (fsize bytes, header hdr): every SLOT and
 * CHUNK header checked; summary_only: the logical trace keeps the first raw slot's records, the
 * definitions (META) and the summaries. NULL with msg (why it is malformed, or out of memory). */
chunked *chunked_open(int fd, uint64_t fsize, const vt_file_header *hdr, int summary_only,
                      char *msg, size_t len);
/* chunked_read: the next bytes of the logical trace (its header first) into buf; 0 at its end,
 * -1 when a chunk is malformed or unreadable (chunked_error says why). */
ssize_t chunked_read(chunked *c, void *buf, size_t n);
/* chunked_rewind: back to the logical trace's first byte. 0. */
int chunked_rewind(chunked *c);
const char *chunked_error(const chunked *c);
const chunked_info *chunked_get_info(const chunked *c);
void chunked_close(chunked *c);

#endif
