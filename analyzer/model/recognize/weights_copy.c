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

/* same_sizes: the runs [i, i + k) and [j, j + k) hold the same sizes in some order (both sorted
 * into x) */
static int same_sizes(const uint64_t *size, size_t i, size_t j, size_t k, uint64_t *x)
{
    memcpy(x, size + i, k * sizeof *x);
    memcpy(x + k, size + j, k * sizeof *x);
    qsort(x, k, sizeof *x, cmp_u64);
    qsort(x + k, k, sizeof *x, cmp_u64);
    return !memcmp(x, x + k, k * sizeof *x);
}

/* made_apart: no stack that made one of [j, j + k) made one of [i, i + k) (a copy is made by its
 * own code: clones in a loop, a deepcopy; one model's blocks, made by the same constructor or
 * .to(), are not) */
static int made_apart(const uint32_t *stack, size_t i, size_t j, size_t k, uint64_t *x)
{
    for (size_t t = 0; t < k; t++)
        x[t] = stack[i + t];
    qsort(x, k, sizeof *x, cmp_u64);
    for (size_t t = 0; t < k; t++) {
        uint64_t key = stack[j + t];
        if (bsearch(&key, x, k, sizeof *x, cmp_u64))
            return 0;
    }
    return 1;
}

/* prev_same_stack: for each i, the last j < i with stack[j] == stack[i] (SIZE_MAX: none), from
 * one sort of (stack, index) pairs in x's room (n of them): made_apart's first tensor told in one
 * look, so that a model's repeating blocks (windows of the same sizes rotated, made by the same
 * stacks) are not sorted at every offset (a LoRA Llama's report had taken 15 ms, 2.6 before) */
static size_t *prev_same_stack(const uint32_t *stack, size_t n, uint64_t *x)
{
    size_t *prev = malloc(n * sizeof *prev);
    if (!prev || !x) {
        free(prev);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = (uint64_t)stack[i] << 32 | i, prev[i] = SIZE_MAX;
    qsort(x, n, sizeof *x, cmp_u64);
    for (size_t t = 1; t < n; t++)
        if (x[t] >> 32 == x[t - 1] >> 32)
            prev[x[t] & 0xffffffffu] = (size_t)(x[t - 1] & 0xffffffffu);
    return prev;
}

int weights_copy_reordered(const uint64_t *size, const uint32_t *stack, const uint8_t *deep,
                           size_t n, weights_copy *out)
{
    memset(out, 0, sizeof *out);
    if (n < 2 || n > WEIGHTS_COPY_MAX || (!stack && !deep))
        return 0;
    /* prefix sums: bytes, their squares (modulo 2^64: runs of other sums hold no same sizes; a
     * cheap sieve before same_sizes sorts), deepcopy's tensors */
    uint64_t *by = malloc((n + 1) * sizeof *by), *sq = malloc((n + 1) * sizeof *sq);
    size_t *dp = malloc((n + 1) * sizeof *dp);
    uint64_t *x = malloc(n * sizeof *x);
    size_t *prev = stack ? prev_same_stack(stack, n, x) : NULL;
    int found = -1;
    if (by && sq && dp && x && (prev || !stack)) {
        found = 0;
        by[0] = sq[0] = 0, dp[0] = 0;
        for (size_t i = 0; i < n; i++) {
            by[i + 1] = by[i] + size[i];
            sq[i + 1] = sq[i] + size[i] * size[i];
            dp[i + 1] = dp[i] + (deep && deep[i]);
        }
        /* the largest first: runs [m - k, m) and [m, m + k) */
        for (size_t k = n / 2; k >= 1 && !found; k--)
            for (size_t m = k; m + k <= n && !found; m++) {
                uint64_t b = by[m] - by[m - k];
                if (b < by[n] / 4 || /* (as weights_copy_find: half of the bytes at least) */
                    b != by[m + k] - by[m] || sq[m] - sq[m - k] != sq[m + k] - sq[m])
                    continue;
                /* copy.deepcopy made all of the second run (as far as its tensors go) and none
                 * of the first: a deepcopy of a model of blocks alone (no copy in order: a
                 * repeat of a shorter run) too; else the sizes in another order, made by
                 * stacks apart (the same order is weights_copy_find's) */
                int by_deep =
                    dp[m + k] - dp[m] == k && dp[m] == dp[m - k] && (m + k == n || !deep[m + k]);
                int how = 0;
                if (by_deep && same_sizes(size, m - k, m, k, x))
                    how = WEIGHTS_COPY_DEEPCOPY;
                else if (stack && (prev[m] == SIZE_MAX || prev[m] < m - k) &&
                         memcmp(size + m - k, size + m, k * sizeof *size) &&
                         same_sizes(size, m - k, m, k, x) && made_apart(stack, m - k, m, k, x))
                    how = WEIGHTS_COPY_APART;
                if (!how)
                    continue;
                out->tensors = k, out->bytes = b, out->reordered = how;
                found = 1;
            }
    }
    free(by);
    free(sq);
    free(dp);
    free(x);
    free(prev);
    return found;
}

typedef struct made_size {
    uint64_t event, size;
    uint32_t stack;
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
    uint32_t *stack = malloc(n * sizeof *stack);
    uint8_t *deep = malloc(n);
    int rc = -1;
    if (m && size && stack && deep) {
        size_t k = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->items[i].category == CAT_PARAMETERS && s->items[i].tensor_api)
                m[k].event = s->items[i].alloc_event, m[k].size = s->items[i].size,
                m[k].stack = s->items[i].stack_id,
                m[k++].deep = by_deepcopy(t, s->items[i].stack_id);
        qsort(m, n, sizeof *m, cmp_event);
        for (size_t i = 0; i < n; i++)
            size[i] = m[i].size, stack[i] = m[i].stack, deep[i] = m[i].deep;
        rc = weights_copy_find(size, n, out);
        if (rc == 0)
            rc = weights_copy_reordered(size, stack, deep, n, out);
    }
    free(m);
    free(size);
    free(stack);
    free(deep);
    return rc;
}

/* beside_match: the run [a, a + k) matched in order against the tensors from l on, stepping by
 * dir (+1: the longer run after it, -1: before it, its matching from the ends), tensors of the
 * longer that match none skipped; their bytes into *extra; 1 where every one matched with at
 * most an eighth of the run's bytes skipped */
static int beside_match(const uint64_t *size, size_t n, size_t a, size_t k, size_t l, int dir,
                        uint64_t bytes, uint64_t *extra)
{
    uint64_t skip = 0;
    size_t j = dir > 0 ? a : a + k - 1, done = 0;
    for (size_t i = l; done < k && i<n; i = dir> 0 ? i + 1 : i - 1) {
        if (size[i] == size[j]) {
            done++;
            j = dir > 0 ? j + 1 : j - 1;
        } else if ((skip += size[i]) > bytes / 8) {
            return 0;
        }
        if (dir < 0 && i == 0)
            break;
    }
    *extra = skip;
    return done == k;
}

int weights_copy_beside(const uint64_t *size, size_t n, weights_copy *out, uint64_t *extra)
{
    memset(out, 0, sizeof *out);
    *extra = 0;
    if (n < 3 || n > WEIGHTS_COPY_MAX)
        return 0;
    uint64_t total = 0, head = 0, ex;
    for (size_t i = 0; i < n; i++)
        total += size[i];
    for (size_t m = 1; m < n; m++) {
        head += size[m - 1];
        uint64_t tail = total - head;
        /* the copy after its model ([m, n) against the tensors before m), or before it ([0, m)
         * against those from m on) */
        if (n - m >= 2 && beside_match(size, n, m, n - m, m - 1, -1, tail, &ex) && ex &&
            (2 * tail + ex) * 2 >= total && n - m > out->tensors)
            out->tensors = n - m, out->bytes = tail, *extra = ex;
        if (m >= 2 && beside_match(size, n, 0, m, m, 1, head, &ex) && ex &&
            (2 * head + ex) * 2 >= total && m > out->tensors)
            out->tensors = m, out->bytes = head, *extra = ex;
    }
    return out->tensors != 0;
}

int weights_copy_beside_at(const replay_snapshot *s, weights_copy *out, uint64_t *extra)
{
    memset(out, 0, sizeof *out);
    *extra = 0;
    size_t n = 0;
    for (size_t i = 0; s && i < s->n; i++)
        n += s->items[i].category == CAT_PARAMETERS && s->items[i].tensor_api;
    if (n < 3 || n > WEIGHTS_COPY_MAX)
        return 0;
    made_size *m = malloc(n * sizeof *m);
    uint64_t *size = malloc(n * sizeof *size);
    int rc = -1;
    if (m && size) {
        size_t k = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->items[i].category == CAT_PARAMETERS && s->items[i].tensor_api)
                m[k].event = s->items[i].alloc_event, m[k++].size = s->items[i].size;
        qsort(m, n, sizeof *m, cmp_event);
        for (size_t i = 0; i < n; i++)
            size[i] = m[i].size;
        rc = weights_copy_beside(size, n, out, extra);
    }
    free(m);
    free(size);
    return rc;
}
