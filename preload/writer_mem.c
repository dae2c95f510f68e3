/* writer_mem.c — the packer's and the slot grid's memory from mmap (writer_mem.h says why):
 * each block a private anonymous mapping with its length in the 16 bytes before it. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "writer_mem.h"

#define HEAD 16u /* the mapping's length, before the block (keeps the block 16-byte aligned) */

void *vt__wm_alloc(size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    size_t len = n + HEAD;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memcpy(m, &len, sizeof len);
    return (char *)m + HEAD;
}

void *vt__wm_alloc_n(size_t k, size_t n)
{
    return n && k > SIZE_MAX / 2 / n ? NULL : vt__wm_alloc(k * n);
}

void *vt__wm_realloc(void *p, size_t n)
{
    if (!p)
        return vt__wm_alloc(n);
    if (n > SIZE_MAX / 2)
        return NULL;
    char *m = (char *)p - HEAD;
    size_t len;
    memcpy(&len, m, sizeof len);
    void *nm = mremap(m, len, n + HEAD, MREMAP_MAYMOVE);
    if (nm == MAP_FAILED)
        return NULL;
    len = n + HEAD;
    memcpy(nm, &len, sizeof len);
    return (char *)nm + HEAD;
}

void vt__wm_free(void *p)
{
    if (!p)
        return;
    char *m = (char *)p - HEAD;
    size_t len;
    memcpy(&len, m, sizeof len);
    munmap(m, len);
}

void *vt__wm_alloc_cb(void *opaque, size_t n)
{
    (void)opaque;
    return vt__wm_alloc(n);
}

void vt__wm_free_cb(void *opaque, void *p)
{
    (void)opaque;
    vt__wm_free(p);
}

/* swap: elements a and b (of any size) exchanged */
static void swap(char *a, char *b, size_t size)
{
    char tmp[256];
    for (size_t o = 0; o < size; o += sizeof tmp) {
        size_t k = size - o < sizeof tmp ? size - o : sizeof tmp;
        memcpy(tmp, a + o, k), memcpy(a + o, b + o, k), memcpy(b + o, tmp, k);
    }
}

/* small: base[0, n) sorted in place by insertion, stably (a few elements) */
static void small(char *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cmp(base + (j - 1) * size, base + j * size) > 0; j--)
            swap(base + (j - 1) * size, base + j * size, size);
}

void vt__wm_heapsort(void *base_, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    char *base = base_;
    if (n < 2)
        return;
    for (size_t end = n, start = n / 2;;) {
        if (start > 0) {
            start--;
        } else if (--end > 0) {
            swap(base, base + end * size, size);
        } else {
            return;
        }
        for (size_t r = start; 2 * r + 1 < end;) { /* sift down from start, within [0, end) */
            size_t c = 2 * r + 1;
            if (c + 1 < end && cmp(base + c * size, base + (c + 1) * size) < 0)
                c++;
            if (cmp(base + r * size, base + c * size) >= 0)
                break;
            swap(base + r * size, base + c * size, size);
            r = c;
        }
    }
}

void vt__wm_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n < 2 || !size)
        return;
    if (n <= 16) {
        small(base, n, size, cmp);
        return;
    }
    char *tmp = vt__wm_alloc_n(n, size);
    if (!tmp) {
        vt__wm_heapsort(base, n, size, cmp);
        return;
    }
    /* bottom-up merge: runs of w elements merged pairwise from src into dst, w doubling */
    char *src = base, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) /* (<= 0: the left run's first on a tie: stable) */
                if (cmp(src + i * size, src + j * size) <= 0)
                    memcpy(dst + k++ * size, src + i++ * size, size);
                else
                    memcpy(dst + k++ * size, src + j++ * size, size);
            memcpy(dst + k * size, src + i * size, (mid - i) * size);
            k += mid - i;
            memcpy(dst + k * size, src + j * size, (hi - j) * size);
        }
        char *t = src;
        src = dst, dst = t;
    }
    if (src != base)
        memcpy(base, src, n * size);
    vt__wm_free(tmp);
}
