/* weights_copy.c — a copy of the weights among them, from their sizes (weights_copy.h). */
#include "weights_copy.h"

#include <stdlib.h>
#include <string.h>

/* mix: a 64-bit finaliser (splitmix64's): each size a symbol of the runs' hashes */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* hash_of: the polynomial hash of the run [i, i + k) of the symbols whose prefix hashes are h
 * (h[i] = the first i's) and powers of the base pw */
static uint64_t hash_of(const uint64_t *h, const uint64_t *pw, size_t i, size_t k)
{
    return h[i + k] - h[i] * pw[k];
}

/* primitive: the run [i, i + k) is no repeat of a shorter run (a run of whole blocks of one
 * model is: its block's tensors again and again) */
static int primitive(const uint64_t *h, const uint64_t *pw, size_t i, size_t k)
{
    for (size_t d = 1; d * d <= k; d++) /* (a period of the run divides k: each divisor pair) */
        if (k % d == 0 &&
            ((d < k && hash_of(h, pw, i, k - d) == hash_of(h, pw, i + d, k - d)) ||
             (d > 1 && hash_of(h, pw, i, k - k / d) == hash_of(h, pw, i + k / d, k - k / d))))
            return 0;
    return 1;
}

int weights_copy_find(const uint64_t *size, size_t n, weights_copy *out)
{
    memset(out, 0, sizeof *out);
    if (n < 2 || n > WEIGHTS_COPY_MAX)
        return 0;
    uint64_t *h = malloc((n + 1) * sizeof *h), *pw = malloc((n + 1) * sizeof *pw);
    uint64_t *by = malloc((n + 1) * sizeof *by);
    int found = -1;
    if (h && pw && by) {
        found = 0;
        h[0] = by[0] = 0, pw[0] = 1;
        for (size_t i = 0; i < n; i++) {
            h[i + 1] = h[i] * 0x100000001b3ull + mix(size[i]);
            pw[i + 1] = pw[i] * 0x100000001b3ull;
            by[i + 1] = by[i] + size[i];
        }
        /* the largest first: runs [m - k, m) and [m, m + k), the same sizes in the same order */
        for (size_t k = n / 2; k >= 1 && !found; k--)
            for (size_t m = k; m + k <= n && !found; m++) {
                uint64_t b = by[m] - by[m - k];
                if (b < by[n] / 4 || /* (both runs: half of the weights' bytes at least) */
                    hash_of(h, pw, m - k, k) != hash_of(h, pw, m, k) ||
                    !primitive(h, pw, m - k, k) || memcmp(size + m - k, size + m, k * sizeof *size))
                    continue;
                out->tensors = k;
                out->bytes = b;
                found = 1;
            }
    }
    free(h);
    free(pw);
    free(by);
    return found;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int weights_copy_reordered(const uint64_t *size, const uint8_t *deep, size_t n, weights_copy *out)
{
    memset(out, 0, sizeof *out);
    if (n < 2 || n > WEIGHTS_COPY_MAX)
        return 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += size[i];
    uint64_t *x = malloc(n * sizeof *x);
    if (!x)
        return -1;
    for (size_t m = 0, e; m < n; m = e) { /* each run [m, e) of a deepcopy's tensors */
        if (!deep[m]) {
            e = m + 1;
            continue;
        }
        for (e = m + 1; e < n && deep[e];)
            e++;
        size_t k = e - m, d = 0;
        if (k > m || k < out->tensors)
            continue;
        for (size_t i = m - k; i < m; i++)
            d += deep[i];
        uint64_t a = 0, b = 0;
        for (size_t i = 0; i < k; i++)
            a += size[m - k + i], b += size[m + i];
        if (d || a != b || a < total / 4) /* (both: half of the weights' bytes at least) */
            continue;
        memcpy(x, size + m - k, k * sizeof *x);
        qsort(x, k, sizeof *x, cmp_u64);
        uint64_t *y = malloc(k * sizeof *y);
        if (!y) {
            free(x);
            return -1;
        }
        memcpy(y, size + m, k * sizeof *y);
        qsort(y, k, sizeof *y, cmp_u64);
        if (!memcmp(x, y, k * sizeof *x))
            out->tensors = k, out->bytes = a, out->reordered = 1;
        free(y);
    }
    free(x);
    return out->tensors > 0;
}

typedef struct made_size {
    uint64_t event, size;
    uint8_t deep;
} made_size;

static int cmp_event(const void *a, const void *b)
{
    uint64_t x = ((const made_size *)a)->event, y = ((const made_size *)b)->event;
    return x < y ? -1 : x > y;
}

/* by_deepcopy: a Python frame of the stack is copy.py's deepcopy (the standard library's) */
static int by_deepcopy(const tables *t, uint32_t stack_id)
{
    const tables_stack *st = t ? tables_stack_get(t, stack_id) : NULL;
    for (unsigned i = 0; st && i < st->n_python; i++) {
        const tables_code *c = tables_code_get(t, VT_PYFRAME_CODE(st->frames[st->n_native + i]));
        size_t fl = c ? c->filename.len : 0;
        if (c && fl >= 8 && !memcmp(c->filename.s + fl - 8, "/copy.py", 8) &&
            c->qualname.len == 8 && !memcmp(c->qualname.s, "deepcopy", 8))
            return 1;
    }
    return 0;
}

int weights_copy_at(const replay_snapshot *s, const tables *t, weights_copy *out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; s && i < s->n; i++)
        n += s->items[i].category == CAT_PARAMETERS && s->items[i].tensor_api;
    if (n < 2 || n > WEIGHTS_COPY_MAX)
        return 0;
    made_size *m = malloc(n * sizeof *m);
    uint64_t *size = malloc(n * sizeof *size);
    uint8_t *deep = malloc(n);
    int rc = -1;
    if (m && size && deep) {
        size_t k = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->items[i].category == CAT_PARAMETERS && s->items[i].tensor_api)
                m[k].event = s->items[i].alloc_event, m[k].size = s->items[i].size,
                m[k++].deep = by_deepcopy(t, s->items[i].stack_id);
        qsort(m, n, sizeof *m, cmp_event);
        for (size_t i = 0; i < n; i++)
            size[i] = m[i].size, deep[i] = m[i].deep;
        rc = weights_copy_find(size, n, out);
        if (rc == 0)
            rc = weights_copy_reordered(size, deep, n, out);
    }
    free(m);
    free(size);
    free(deep);
    return rc;
}
