/* symbolize.h — names and source lines for native frames, from the module files on this
 * machine (elfutils libdwfl): .symtab names (static functions included) and DWARF file:line,
 * used only when the file's GNU build-id equals the one recorded in the trace. The tables
 * (tables.c) call it once per distinct return address; the recorded dladdr name stays
 * whenever this finds nothing. */
#ifndef VT_ANALYZER_SYMBOLIZE_H
#define VT_ANALYZER_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct symbolize symbolize;

/* What symbolize_ip found: strings owned by the symbolize (valid until symbolize_free;
 * file only until the next symbolize_ip),
 * NULL when unknown. */
typedef struct symbolize_result {
    const char *name;    /* the symbol containing ip - 1 (mangled, as in .symtab) */
    uint64_t sym_offset; /* ip - the symbol's start (when name) */
    const char *file;    /* source file of ip - 1 (DWARF line table), as compiled */
    int line;            /* its line, 0 when unknown */
} symbolize_result;

/* Why a module cannot be used (symbolize_ip's negative results). */
enum symbolize_status {
    SYMBOLIZE_OK = 0,
    SYMBOLIZE_OFF = -1,         /* VRAMTRACE_SYMBOLIZE=0 */
    SYMBOLIZE_NO_BUILD_ID = -2, /* the file is there, but the trace recorded no build-id */
    SYMBOLIZE_NO_FILE = -3,     /* the file is missing (whatever the trace recorded), not a
                                 * regular file, or not an ELF object */
    SYMBOLIZE_MISMATCH = -4,    /* the file's build-id differs from the recorded one */
    SYMBOLIZE_NO_LIBDW = -5,    /* libdw (loaded when a file is first read) could not be, or
                                 * it crashed and is not called again (mem.h: mem_crash) */
};

/* symbolize_libdw_error: why libdw could not be loaded (dlerror's words) or is no longer used
 * ("it crashed (SIGSEGV)"), NULL when it was or was not needed yet. */
const char *symbolize_libdw_error(void);

/* symbolize_new: an empty symbolizer (modules are opened on first use, once each); NULL
 * when out of memory. Free with symbolize_free (NULL is fine). */
symbolize *symbolize_new(void);
void symbolize_free(symbolize *s);

/* symbolize_set_sources: whether symbolize_ip looks up file:line too (symbolize_new: yes); off,
 * names only and no module's DWARF is read (libdw decompresses all of a file's debug sections
 * when it first reads them: 45 ms of a 50 ms report whose trace named a libpython built with
 * them, or far more for a library built with -g, for names that come from its symbol table). */
void symbolize_set_sources(symbolize *s, bool on);
/* symbolize_set_index_after: a module's names come from an index of its symbols sorted by
 * address (symindex.h: libdwfl's answer, in a binary search) once n names were asked of it
 * (symbolize_new: SYMBOLIZE_INDEX_AFTER; UINT_MAX: never, libdwfl alone — the tests' reference) */
#define SYMBOLIZE_INDEX_AFTER 4u
void symbolize_set_index_after(symbolize *s, unsigned n);
/* symbolize_index_answers: how many names the indexes gave (the others were libdwfl's walk) */
uint64_t symbolize_index_answers(const symbolize *s);

/* symbolize_ip: resolves return address ip inside module module_id of the trace, loaded at
 * base (the MODULE record's base: the start of its first mapping) from path, whose
 * recorded build-id is build_id[0..build_id_len). The module is opened and checked the
 * first time its id is seen; later calls reuse that (a refused module stays refused).
 * out->file may point into s: valid until the next call.
 * Returns SYMBOLIZE_OK with *out filled (any field may still be unknown), or a negative
 * enum symbolize_status with *out all unknown. */
int symbolize_ip(symbolize *s, uint32_t module_id, const char *path, uint64_t base,
                 const uint8_t *build_id, size_t build_id_len, uint64_t ip, symbolize_result *out);

/* symbolize_module_status: why module_id's file could (SYMBOLIZE_OK) or could not be used (a
 * negative enum symbolize_status), as the first symbolize_ip on it found; SYMBOLIZE_UNTRIED when
 * no address of it was looked up. s may be NULL (nothing looked up yet). */
#define SYMBOLIZE_UNTRIED 1
int symbolize_module_status(const symbolize *s, uint32_t module_id);

#endif
