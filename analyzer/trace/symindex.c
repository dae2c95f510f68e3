/* symindex.c — a module's symbols sorted by address, answering as dwfl_module_addrinfo does
 * (symindex.h). libdwfl's rules (elfutils' dwfl_module_addrsym.c, __libdwfl_addrsym), which
 * this file follows rather than copies:
 *   - a symbol is eligible when it is named, defined (st_shndx not SHN_UNDEF), not a section,
 *     file or TLS symbol, and its address is at most the one asked;
 *   - the globals are walked first (the table's indices from first_global on), the locals only
 *     when no global with a size contains the address (and no sizeless global lies exactly on
 *     it);
 *   - among the symbols with a size that contain the address, walked in the table's order, a
 *     later one wins when it starts later or binds more strongly (global > weak > local), or,
 *     starting at the same address, when it is smaller and binds no less strongly or is no
 *     larger and binds more strongly;
 *   - with no such symbol, a sizeless label in the address's section may be named; that case
 *     is left to libdwfl (symindex_lookup returns 0), and so is a search the index cannot keep
 *     short (more than SX_WALK symbols to look at below the address).
 * A sizeless label is named only when it lies at the highest end of any eligible symbol below
 * the address (libdwfl's min_label): where no sizeless symbol lies there, the answer is none,
 * which the index gives itself. */
#include "symindex.h"

#include <stdlib.h>
#include <string.h>

#define SX_WALK                                                                                    \
    64             /* the most symbols a lookup looks at below the address before asking libdwfl   \
                    */
#define SX_CAND 16 /* the most symbols containing one address it keeps (aliases) */

/* one eligible symbol: its address (libdwfl's value: st_value, plus the bias where it applies),
 * size, name (libelf's string, valid while the module is open), index in libdwfl's table (the
 * order its walk meets symbols in) and binding's rank (3 global, 2 weak, 1 local, 0 other) */
typedef struct sx_ent {
    uint64_t value, size;
    const char *name;
    uint32_t ndx, bind;
} sx_ent;

/* one of libdwfl's two walks: its eligible symbols by (value, ndx), and the highest end
 * (value + size, saturated) of each prefix */
typedef struct sx_pass {
    sx_ent *e;
    uint64_t *end;
    size_t n;
} sx_pass;

struct symindex {
    sx_pass pass[2]; /* [0] the globals, walked first; [1] the locals (n 0: not walked) */
};

static uint32_t bind_rank(const GElf_Sym *sym)
{
    switch (GELF_ST_BIND(sym->st_info)) {
    case STB_GLOBAL:
        return 3;
    case STB_WEAK:
        return 2;
    case STB_LOCAL:
        return 1;
    default:
        return 0;
    }
}

static int by_value(const void *a, const void *b)
{
    const sx_ent *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

void symindex_free(symindex *x)
{
    if (!x)
        return;
    for (int p = 0; p < 2; p++) {
        free(x->pass[p].e);
        free(x->pass[p].end);
    }
    free(x);
}

/* fill: the eligible symbols of indices [from, to) into p; 0, -1 out of memory, -2 a symbol
 * whose address libdwfl resolved (not its value, nor its value plus the bias) */
static int fill(sx_pass *p, Dwfl_Module *mod, const symindex_fns *f, int from, int to)
{
    if (to <= from)
        return 0;
    if (!(p->e = malloc((size_t)(to - from) * sizeof *p->e)))
        return -1;
    for (int i = from; i < to; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        Elf *elf;
        Dwarf_Addr bias = 0;
        const char *name = f->getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias);
        if (!name || !name[0])
            continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if (sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS)
            continue;
        if (value != sym.st_value && value != sym.st_value + bias)
            return -2;
        p->e[p->n++] = (sx_ent){value, sym.st_size, name, (uint32_t)i, bind_rank(&sym)};
    }
    if (!p->n)
        return 0;
    qsort(p->e, p->n, sizeof *p->e, by_value);
    if (!(p->end = malloc(p->n * sizeof *p->end)))
        return -1;
    uint64_t hi = 0;
    for (size_t i = 0; i < p->n; i++) {
        uint64_t end = p->e[i].value + p->e[i].size;
        if (end < p->e[i].value)
            end = UINT64_MAX;
        hi = end > hi ? end : hi;
        p->end[i] = hi;
    }
    return 0;
}

symindex *symindex_build(Dwfl_Module *mod, const symindex_fns *f)
{
    int syments = f->getsymtab(mod), first = f->first_global(mod);
    if (syments < 0 || first < 0)
        return NULL;
    symindex *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    int rc = fill(&x->pass[0], mod, f, first == 0 ? 1 : first, syments);
    if (!rc && first > 1)
        rc = fill(&x->pass[1], mod, f, 1, first);
    if (rc) {
        symindex_free(x);
        return NULL;
    }
    return x;
}

/* upper: how many of p's symbols start at or below addr */
static size_t upper(const sx_pass *p, uint64_t addr)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->e[mid].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* walk: the winner among p's symbols with a size that contain addr (below: how many start at
 * or below it), as libdwfl's walk picks it; 1 with *win (NULL: none), 0 when the search would
 * be too long (libdwfl asked) */
static int walk(const sx_pass *p, size_t below, uint64_t addr, const sx_ent **win)
{
    const sx_ent *c[SX_CAND];
    size_t nc = 0, steps = 0;
    for (size_t i = below; i-- > 0 && p->end[i] > addr;) {
        if (++steps > SX_WALK)
            return 0;
        const sx_ent *e = &p->e[i];
        if (e->size && addr - e->value < e->size) {
            if (nc == SX_CAND)
                return 0;
            size_t k = nc++; /* kept in the table's order */
            for (; k && c[k - 1]->ndx > e->ndx; k--)
                c[k] = c[k - 1];
            c[k] = e;
        }
    }
    const sx_ent *w = NULL;
    for (size_t k = 0; k < nc; k++) {
        const sx_ent *e = c[k];
        if (!w || w->value < e->value || w->bind < e->bind)
            w = e;
        else if (w->value == e->value && ((w->size > e->size && w->bind <= e->bind) ||
                                          (w->size >= e->size && w->bind < e->bind)))
            w = e;
    }
    *win = w;
    return 1;
}

/* sizeless_at: one of p's first `below` symbols is a sizeless label at v */
static int sizeless_at(const sx_pass *p, size_t below, uint64_t v)
{
    for (size_t i = below; i-- > 0 && p->e[i].value >= v;)
        if (p->e[i].value == v && !p->e[i].size)
            return 1;
    return 0;
}

int symindex_lookup(const symindex *x, uint64_t addr, const char **name, uint64_t *off)
{
    *name = NULL;
    *off = 0;
    const sx_pass *g = &x->pass[0], *l = &x->pass[1];
    size_t bg = upper(g, addr), bl = upper(l, addr);
    const sx_ent *w = NULL;
    if (!walk(g, bg, addr, &w))
        return 0;
    if (!w && sizeless_at(g, bg, addr))
        return 0; /* a global label on the address: whether libdwfl walks the locals rests on
                   * its section */
    if (!w && !walk(l, bl, addr, &w))
        return 0;
    if (w) {
        *name = w->name;
        *off = addr - w->value;
        return 1;
    }
    /* no symbol with a size contains addr: a label at the highest end below it may be named */
    uint64_t top = bg ? g->end[bg - 1] : 0;
    if (bl && l->end[bl - 1] > top)
        top = l->end[bl - 1];
    if ((bg || bl) && (sizeless_at(g, bg, top) || sizeless_at(l, bl, top)))
        return 0;
    return 1;
}
