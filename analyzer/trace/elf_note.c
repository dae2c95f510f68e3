/* elf_note.c — the GNU build-id of an ELF file from its PT_NOTE segments (elf_note.h): the ELF
 * header, the program headers, then each note segment's notes, all bounded. */
#include "elf_note.h"

#include <elf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PHNUM_MAX 256           /* program headers looked at */
#define NOTE_SEG_MAX (1u << 16) /* bytes of a note segment read */

/* get: n bytes at off into buf, all of them or nothing (0 / -1) */
static int get(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* in_notes: the build-id among the notes of seg[0..n) (align: the segment's, 4 or 8: a note's
 * descriptor and the next note start at multiples of it), 0: none */
static size_t in_notes(const uint8_t *seg, size_t n, size_t align, uint8_t *out, size_t cap)
{
    size_t at = 0;
    while (at < n && n - at >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr h;
        memcpy(&h, seg + at, sizeof h);
        size_t name = at + sizeof h;
        if (h.n_namesz > n - name)
            return 0; /* a note past its segment: nothing after it can be trusted */
        size_t desc = (name + h.n_namesz + align - 1) & ~(align - 1);
        if (desc > n || h.n_descsz > n - desc)
            return 0;
        if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && !memcmp(seg + name, "GNU", 4)) {
            if (!h.n_descsz || h.n_descsz > cap)
                return 0;
            memcpy(out, seg + desc, h.n_descsz);
            return h.n_descsz;
        }
        at = (desc + h.n_descsz + align - 1) & ~(align - 1);
    }
    return 0;
}

size_t elf_note_build_id(int fd, uint8_t *out, size_t cap)
{
    Elf64_Ehdr e;
    struct stat st;
    if (fstat(fd, &st) || get(fd, &e, sizeof e, 0) || memcmp(e.e_ident, ELFMAG, SELFMAG) ||
        e.e_ident[EI_CLASS] != ELFCLASS64 || e.e_ident[EI_DATA] != ELFDATA2LSB ||
        e.e_phentsize != sizeof(Elf64_Phdr) || !e.e_phnum || e.e_phnum > PHNUM_MAX ||
        e.e_phoff > (uint64_t)st.st_size ||
        (uint64_t)e.e_phnum * sizeof(Elf64_Phdr) > (uint64_t)st.st_size - e.e_phoff)
        return 0;
    Elf64_Phdr ph[PHNUM_MAX];
    if (get(fd, ph, e.e_phnum * sizeof(Elf64_Phdr), e.e_phoff))
        return 0;
    static uint8_t seg[NOTE_SEG_MAX]; /* (one caller at a time: the analyzer has one thread) */
    for (unsigned i = 0; i < e.e_phnum; i++) {
        const Elf64_Phdr *p = &ph[i];
        if (p->p_type != PT_NOTE || !p->p_filesz || p->p_filesz > NOTE_SEG_MAX ||
            p->p_offset > (uint64_t)st.st_size || p->p_filesz > (uint64_t)st.st_size - p->p_offset)
            continue;
        if (get(fd, seg, (size_t)p->p_filesz, p->p_offset))
            continue;
        size_t n = in_notes(seg, (size_t)p->p_filesz, p->p_align == 8 ? 8 : 4, out, cap);
        if (n)
            return n;
    }
    return 0;
}
