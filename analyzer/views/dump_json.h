/* dump_json.h — the JSON-lines rendering of a trace's records behind `vramtrace dump`
 * (dump_json.c): a header line, one line per record (each stack once, resolved on its own line;
 * events name it by id), a status line. The caller reads the file and keeps the tables
 * (cmd/cmd_dump.c). */
#ifndef VT_DUMP_JSON_H
#define VT_DUMP_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "reader.h"
#include "tables.h"

typedef struct dump_json dump_json;

/* dump_json_new: a renderer over t (not owned; the caller adds each record but STACK records to
 * t before rendering it: a stack is rendered from its record, never kept) writing to out;
 * resolve = STACK lines carry their resolved "frames". NULL when out of memory. */
dump_json *dump_json_new(tables *t, FILE *out, bool resolve);
/* dump_json_free: frees d; NULL is fine. */
void dump_json_free(dump_json *d);

/* dump_json_header: the {"type":"header",...} line of the file at path. 0, or -1 when an
 * allocation failed (then or before: mem.h). */
int dump_json_header(dump_json *d, const char *path, const vt_file_header *h);
/* dump_json_record: rec as one line (events by hand, the rest through cJSON). 0, or -1 when an
 * allocation failed (the line is then left out or incomplete: stop). */
int dump_json_record(dump_json *d, const reader_record *rec);
/* dump_json_status: the closing {"type":"status",...} line; offset and message only when st is
 * not READER_OK. 0, or -1 when an allocation failed. */
int dump_json_status(dump_json *d, reader_status st, uint64_t records, uint64_t offset,
                     const char *message);

#endif
