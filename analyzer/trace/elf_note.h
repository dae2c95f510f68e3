/* elf_note.h — the GNU build-id of an ELF file on this machine, read from its note segments
 * with plain reads: what symbolize.c compares with a trace's before it loads libdw for a file
 * (a trace from another machine names this machine's libc and libstdc++, of other builds). */
#ifndef VT_ANALYZER_ELF_NOTE_H
#define VT_ANALYZER_ELF_NOTE_H

#include <stddef.h>
#include <stdint.h>

/* elf_note_build_id: the NT_GNU_BUILD_ID note of the 64-bit little-endian ELF file open at fd
 * (read with pread: fd's offset is left alone) into out (cap bytes); its length, or 0 when none
 * was found this way (not such an ELF file, no note segment holding one, a note longer than cap,
 * a read error). Every length and offset in the file is checked against the file and the bounds
 * here: a hostile file reads as "none". */
size_t elf_note_build_id(int fd, uint8_t *out, size_t cap);

#endif
