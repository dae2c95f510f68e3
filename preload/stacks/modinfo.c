/* modinfo.c — the GNU build-id of a loaded ELF object, read once per module from its PT_NOTE
 * segments already mapped in memory (dl_iterate_phdr), for the MODULE record; the analyzer
 * symbolizes a module's file only when its build-id matches (analyzer/trace/symbolize.c). */
#include "modinfo.h"

#include <elf.h>
#include <link.h>
#include <string.h>

size_t vt__note_build_id(const uint8_t *p, size_t n, size_t align, uint8_t *out, size_t cap)
{
    if (align != 8)
        align = 4;
    size_t at = 0;
    while (at <= n && n - at >= 12) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, p + at, 4);
        memcpy(&descsz, p + at + 4, 4);
        memcpy(&type, p + at + 8, 4);
        size_t name_at = at + 12;
        size_t desc_at = name_at + (((size_t)namesz + align - 1) & ~(align - 1));
        size_t next = desc_at + (((size_t)descsz + align - 1) & ~(align - 1));
        if (desc_at < name_at || desc_at > n || descsz > n - desc_at || next < desc_at)
            return 0;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_at, "GNU", 4)) {
            size_t len = descsz < cap ? descsz : cap;
            memcpy(out, p + desc_at, len);
            return len;
        }
        at = next;
    }
    return 0;
}

typedef struct find_arg {
    uintptr_t addr;
    vt__modinfo *out;
    int found;
} find_arg;

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    find_arg *a = data;
    int inside = 0;
    for (int i = 0; i < info->dlpi_phnum && !inside; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        inside = ph->p_type == PT_LOAD && a->addr >= lo && a->addr - lo < ph->p_memsz;
    }
    if (!inside)
        return 0;
    a->found = 1;
    /* the first object dl_iterate_phdr reports, with an empty name, is the program */
    a->out->is_main = !info->dlpi_name || !info->dlpi_name[0];
    for (int i = 0; i < info->dlpi_phnum && !a->out->build_id_len; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        a->out->build_id_len = (uint32_t)vt__note_build_id(p, ph->p_memsz, ph->p_align,
                                                           a->out->build_id, VT__BUILD_ID_MAX);
    }
    return 1;
}

int vt__modinfo_get(uint64_t addr, vt__modinfo *out)
{
    memset(out, 0, sizeof *out);
    find_arg a = {(uintptr_t)addr, out, 0};
    dl_iterate_phdr(find_object, &a);
    return a.found ? 0 : -1;
}
