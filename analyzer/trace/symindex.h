/* symindex.h — one module's symbols sorted by address (symindex.c), answering what libdwfl's
 * dwfl_module_addrinfo answers — the same symbol, by its rules — in a binary search where
 * libdwfl walks every symbol of the module for each address (elfutils 0.188: a report on a
 * simulated GPT-2 run spent 93M of its 355M instructions in 68 such walks over libpython's
 * 16,542 symbols; a module of 290k symbols costs ~17M instructions an address). Where its
 * rules hinge on a label without a size (an assembly symbol), the index does not answer and
 * libdwfl is asked, so every answer is libdwfl's own. */
#ifndef VT_ANALYZER_SYMINDEX_H
#define VT_ANALYZER_SYMINDEX_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

typedef struct symindex symindex;

/* The libdwfl functions the index reads the table with (loaded at run time: symbolize.c). */
typedef struct symindex_fns {
    int (*getsymtab)(Dwfl_Module *);
    int (*first_global)(Dwfl_Module *);
    const char *(*getsym_info)(Dwfl_Module *, int, GElf_Sym *, GElf_Addr *, GElf_Word *, Elf **,
                               Dwarf_Addr *);
} symindex_fns;

/* symindex_build: mod's table, sorted; NULL when out of memory (mem.h notes it) or when the
 * table is not one the index can answer for (a symbol whose address libdwfl resolved other
 * than as its value plus the bias: function descriptors, a Thumb bit): libdwfl is asked then. */
symindex *symindex_build(Dwfl_Module *mod, const symindex_fns *f);
void symindex_free(symindex *x);

/* symindex_lookup: the symbol dwfl_module_addrinfo(mod, addr) would name: 1 with *name (NULL:
 * none) and *off (addr - its address), or 0: ask libdwfl (its answer rests on a sizeless
 * label, which the index does not judge). */
int symindex_lookup(const symindex *x, uint64_t addr, const char **name, uint64_t *off);

#endif
