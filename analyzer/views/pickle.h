/* pickle.h — a minimal writer of Python pickle protocol 2 streams (dicts, lists, str, int,
 * bool, None, memo put/get) for memviz.c; Python's pickle.load reads them. The caller emits
 * the opcodes in order, like a stack machine: open a container, push items, close it. */
#ifndef VT_ANALYZER_PICKLE_H
#define VT_ANALYZER_PICKLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* pickle_begin / pickle_end: PROTO 2 / STOP. */
void pickle_begin(FILE *out);
void pickle_end(FILE *out);
/* pickle_dict / pickle_list: an empty dict or list, then a MARK: push key, value, key,
 * value... (dict) or items (list), then pickle_close_dict / pickle_close_list. */
void pickle_dict(FILE *out);
void pickle_close_dict(FILE *out);
void pickle_list(FILE *out);
void pickle_close_list(FILE *out);
/* pickle_str: s[0..len) made valid UTF-8 (trace/escape.h), as a str. pickle_cstr: the same
 * for a NUL-terminated string. */
void pickle_str(FILE *out, const char *s, size_t len);
void pickle_cstr(FILE *out, const char *s);
/* pickle_int / pickle_uint: an int of any size. */
void pickle_int(FILE *out, int64_t v);
void pickle_uint(FILE *out, uint64_t v);
void pickle_bool(FILE *out, int v);
void pickle_none(FILE *out);
/* pickle_put / pickle_get: store the object on top of the stack in memo slot i / push it again. */
void pickle_put(FILE *out, uint32_t i);
void pickle_get(FILE *out, uint32_t i);

#endif
