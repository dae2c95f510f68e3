/* writer_mem.h — memory for the chunked layout's packer (writer_pack*.c) and slot grid
 * (writer_slots.c), taken straight from mmap, never from malloc (writer_mem.c). A bounded trace
 * is ended at the program's exit or exec by packing what is left, also when exit() is called
 * from a signal handler that interrupted the program's own malloc: malloc's lock is held by the
 * thread that ends the trace, and one malloc, realloc, free or qsort there (glibc's qsort
 * allocates) waited for it for ever. Each block is its own mapping (pages: for the packer's few
 * tables and buffers, grown by doubling, and a step's lists). */
#ifndef VT_PRELOAD_WRITER_MEM_H
#define VT_PRELOAD_WRITER_MEM_H

#include <stddef.h>

/* vt__wm_alloc: n bytes, zeroed, 16-byte aligned; NULL when the kernel gives none.
 * vt__wm_alloc_n: k * n bytes (NULL when that overflows). */
void *vt__wm_alloc(size_t n);
void *vt__wm_alloc_n(size_t k, size_t n);
/* vt__wm_realloc: p (from vt__wm_alloc, or NULL) grown or shrunk to n bytes, its contents
 * kept; NULL, p untouched, when the kernel gives none. What growth adds is zero only where the
 * block was never longer (a shrink keeps the rest of its last page as it was): callers zero it. */
void *vt__wm_realloc(void *p, size_t n);
/* vt__wm_free: p given back (NULL: nothing). */
void vt__wm_free(void *p);
/* vt__wm_alloc_cb / vt__wm_free_cb: the same as callbacks with an opaque first argument
 * (ignored): zstd's ZSTD_customMem */
void *vt__wm_alloc_cb(void *opaque, size_t n);
void vt__wm_free_cb(void *opaque, void *p);
/* vt__wm_sort: qsort's contract without malloc, stable (equal elements keep their order, as
 * glibc's merge sort keeps them: the same STEP records): a merge through a vt__wm_alloc'd buffer;
 * where none can be mapped, an in-place heapsort (equal elements may then change places). */
void vt__wm_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* vt__wm_heapsort: vt__wm_sort's fallback: in place, no memory, n log n, not stable */
void vt__wm_heapsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
