/* modinfo.h — facts about a loaded ELF object for its MODULE record (modinfo.c): its GNU
 * build-id, read from memory, and whether it is the main program. */
#ifndef VT_PRELOAD_MODINFO_H
#define VT_PRELOAD_MODINFO_H

#include <stddef.h>
#include <stdint.h>

#define VT__BUILD_ID_MAX 64

typedef struct vt__modinfo {
    uint8_t build_id[VT__BUILD_ID_MAX];
    uint32_t build_id_len; /* 0: the object has no NT_GNU_BUILD_ID note */
    int is_main;           /* the program itself (dladdr names it by argv[0]) */
} vt__modinfo;

/* vt__modinfo_get: the object loaded at addr (any address inside one of its PT_LOAD
 * segments). Reads the PT_NOTE segments in memory through dl_iterate_phdr: no file access,
 * no allocation. Returns 0, or -1 (and *out zeroed) when no loaded object contains addr. */
int vt__modinfo_get(uint64_t addr, vt__modinfo *out);

/* vt__note_build_id: the NT_GNU_BUILD_ID descriptor in the notes at p[0..n) (aligned as
 * align, 4 or 8) into out (at most cap bytes); its length, 0 when there is none. Exposed
 * for the unit tests. */
size_t vt__note_build_id(const uint8_t *p, size_t n, size_t align, uint8_t *out, size_t cap);

#endif
