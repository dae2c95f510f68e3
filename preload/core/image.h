/* image.h — image.c's interface: the size of a kernel image handed to cuModuleLoadData,
 * cuModuleLoadDataEx, cuModuleLoadFatBinary or cuLibraryLoadData (the driver does not say
 * what a loaded module takes; the image's own size is the trace's estimate). Pure. */
#ifndef VT_PRELOAD_IMAGE_H
#define VT_PRELOAD_IMAGE_H

#include <stdint.h>

/* vt__image_size: bytes of an in-memory module image when they can be told: an ELF64 cubin
 * (the end of its section or program header table, whichever is later), a fatbin (header
 * size + payload size), a fatbin wrapper (the fatbin it points to, one level), else PTX text
 * (its length + 1, at most 64 MiB). NULL: 0. */
uint64_t vt__image_size(const void *image);

#endif
