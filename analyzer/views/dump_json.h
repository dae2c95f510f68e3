/* dump_json.h — the JSON-lines rendering of a trace's records behind `vramtrace dump`
 * (dump_json.c): a header line, one line per record (events with resolved stacks), a status
 * line, all on stdout. The caller reads the file and keeps the tables (cmd/cmd_dump.c). */
#ifndef VT_DUMP_JSON_H
#define VT_DUMP_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "reader.h"
#include "tables.h"

typedef struct dump_json dump_json;

/* dump_json_new: a renderer over t (not owned; the caller adds each record to t before
 * rendering it); resolve = events carry their resolved "stack". NULL when out of memory. */
dump_json *dump_json_new(tables *t, bool resolve);
/* dump_json_free: frees d and its cache of stack texts; NULL is fine. */
void dump_json_free(dump_json *d);

/* dump_json_header: the {"type":"header",...} line of the file at path. 0, or -1 (ENOMEM). */
int dump_json_header(const char *path, const vt_file_header *h);
/* dump_json_record: rec as one line (events by hand, the rest through cJSON). 0, or -1
 * (ENOMEM). */
int dump_json_record(dump_json *d, const reader_record *rec);
/* dump_json_status: the closing {"type":"status",...} line; offset and message only when st is
 * not READER_OK. 0, or -1 (ENOMEM). */
int dump_json_status(reader_status st, uint64_t records, uint64_t offset, const char *message);

#endif
