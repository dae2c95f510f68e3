/* image.c — kernel-image sizing for the module-load hooks: how many bytes an in-memory
 * cubin (ELF), fatbin, fatbin wrapper or PTX text holds. Interface: image.h. */
#include <elf.h>
#include <string.h>

#include "image.h"

#define VT__FATBIN_MAGIC 0xBA55ED50u   /* u32 magic, u16 version, u16 header size, u64 size */
#define VT__FATBIN_WRAPPER 0x466243b1u /* {u32 magic, u32 version, data*, filename*} */
#define VT__PTX_MAX (64u << 20)

static uint64_t image_size(const void *image, int depth)
{
    if (!image)
        return 0;
    const unsigned char *b = image;
    if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F' && b[4] == ELFCLASS64) {
        const Elf64_Ehdr *e = image;
        uint64_t sh = e->e_shoff + (uint64_t)e->e_shnum * e->e_shentsize;
        uint64_t ph = e->e_phoff + (uint64_t)e->e_phnum * e->e_phentsize;
        return sh > ph ? sh : ph;
    }
    uint32_t magic;
    memcpy(&magic, b, 4);
    if (magic == VT__FATBIN_MAGIC) {
        uint16_t hdr;
        uint64_t size;
        memcpy(&hdr, b + 6, 2);
        memcpy(&size, b + 8, 8);
        return (uint64_t)hdr + size;
    }
    if (magic == VT__FATBIN_WRAPPER) {
        const void *inner;
        memcpy(&inner, b + 8, sizeof inner);
        return depth == 0 && inner != image ? image_size(inner, depth + 1) : 0;
    }
    return strnlen((const char *)image, VT__PTX_MAX) + 1; /* PTX */
}

uint64_t vt__image_size(const void *image)
{
    return image_size(image, 0);
}
