/* pylines.h — CPython line tables: the byte offset of an instruction in a code object's
 * bytecode -> its source line, from the raw co_linetable the tracer records (CODE records),
 * for CPython 3.10 (pairs of byte delta / line delta) and 3.11-3.13 (location table). */
#ifndef VT_ANALYZER_PYLINES_H
#define VT_ANALYZER_PYLINES_H

#include <stddef.h>
#include <stdint.h>

/* pylines_supported: 1 if line tables of Python major.minor can be decoded, else 0. */
int pylines_supported(unsigned major, unsigned minor);

/* pylines_line: the line of the instruction starting at byte offset `offset` of a code
 * object of Python major.minor with co_firstlineno first_line and co_linetable
 * table[0..len). Returns the line (>= 0), or -1 when the instruction has no line (None in
 * co_lines()), the offset lies past the table, the version is unsupported, or the table is
 * malformed (never reads outside table[0..len)). */
int pylines_line(unsigned major, unsigned minor, const uint8_t *table, size_t len, int first_line,
                 uint32_t offset);

/* pylines_table: a line table decoded once, for a caller that keeps the table's bytes as long as it
 * (the tables: one a code object), looked up with no check of those bytes (pylines_line compares
 * them at every lookup). pylines_decode: NULL when the version is unsupported, table is NULL or
 * memory ran out (pylines_line then answers on its own). pylines_table_line: pylines_line's
 * answer for offset. */
typedef struct pylines_table pylines_table;
pylines_table *pylines_decode(unsigned major, unsigned minor, const uint8_t *table, size_t len,
                              int first_line);
int pylines_table_line(const pylines_table *p, uint32_t offset);
void pylines_table_free(pylines_table *p);

#endif
