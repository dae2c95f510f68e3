/* tables_impl.h — private to tables.c and tables_resolve.c: the tables struct, its arena and
 * its hash maps (tables.h is the public interface; nothing else includes this). */
#ifndef VT_TABLES_IMPL_H
#define VT_TABLES_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"
#include "tables.h"

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} arena_block;

typedef struct map {
    uint64_t *keys;
    void **vals;
    size_t cap, n; /* cap is 0 or a power of two */
} map;

typedef struct plist {
    void **v;
    size_t n, cap;
} plist;

typedef struct resolved {
    size_t n;
    tables_frame *frames;
} resolved;

struct tables {
    arena_block *arena;
    map threads, stacks, codes, symbols, modules, devices, resolved;
    map native_frames,
        python_frames; /* raw -> a resolved frame that cannot change (tables_frame) */
    /* a string's hash (tables_str_key) -> the first symbol with that name / code object with
     * that file: a name or file recorded again shares its strings (its demangling done once, and
     * what is worked out from a name or file can be kept by its pointer: phases.c) */
    map sym_names, code_files;
    int files_apart; /* a code object's file is not in code_files (two files with one key) */
    map lines; /* code id -> its line table decoded (pylines_table), the first time it is read */
    plist thread_list, device_list, file_list;
    plist code_list; /* the code objects in the trace's order (the map's is the hash seed's) */
    tables_process *process;
    tables_config *config;
    vt_rec_pyinfo *pyinfo;
    symbolize *sym; /* created on the first native frame resolved */
};

/* tables_arena_alloc: n zeroed bytes, 8-aligned, from *head's blocks; NULL when out of memory. */
void *tables_arena_alloc(arena_block **head, size_t n);
/* tables_map_get: the value for key, NULL when absent. */
void *tables_map_get(const map *m, uint64_t key);
/* tables_map_put: inserts key -> val (val non-NULL, key not present). Returns 0 or -1 (ENOMEM). */
int tables_map_put(map *m, uint64_t key, void *val);
/* tables_str_key: the key of len bytes of s in sym_names / code_files. */
uint64_t tables_str_key(const char *s, uint32_t len);
/* tables_copy_str: an arena copy of len bytes of s with a NUL after them; false on ENOMEM. */
bool tables_copy_str(tables *t, const char *s, uint32_t len, tables_str *out);

#endif
