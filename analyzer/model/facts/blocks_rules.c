/* blocks_rules.c — the settings of PyTorch's caching allocator that change its block sizes
 * (PYTORCH_CUDA_ALLOC_CONF), read from a run's recorded value, and the names of what the
 * emulation's sizes rest on (blocks.h). */
#include <string.h>
#include <strings.h>

#include "blocks.h"

static const char *const basis_keys[] = {
#define X(name, key, text) key,
    BLOCKS_BASES(X)
#undef X
};
static const char *const basis_texts[] = {
#define X(name, key, text) text,
    BLOCKS_BASES(X)
#undef X
};

const char *blocks_basis_key(blocks_basis b)
{
    return b < BLOCKS_BASIS_COUNT ? basis_keys[b] : "?";
}

const char *blocks_basis_text(blocks_basis b)
{
    return b < BLOCKS_BASIS_COUNT ? basis_texts[b] : "?";
}

/* ---- the rules ----------------------------------------------------------------------------- */

/* opt_is: the option at p (up to ',' or the end) is "key:"; *val gets what follows the ':'. */
static int opt_is(const char *p, size_t len, const char *key, const char **val, size_t *vlen)
{
    size_t k = strlen(key);
    if (len <= k || strncasecmp(p, key, k) || p[k] != ':')
        return 0;
    *val = p + k + 1;
    *vlen = len - k - 1;
    return 1;
}

static uint64_t opt_number(const char *v, size_t n)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n && v[i] >= '0' && v[i] <= '9'; i++)
        x = x * 10 + (uint64_t)(v[i] - '0');
    return x;
}

blocks_rules blocks_rules_parse(const char *conf)
{
    blocks_rules rl = {.max_split = UINT64_MAX, .basis = BLOCKS_BASIS_DEFAULT};
    int approx = 0;
    for (const char *p = conf; p && *p;) {
        size_t len = strcspn(p, ",");
        while (len && (*p == ' ' || *p == '\t'))
            p++, len--;
        const char *v;
        size_t vl;
        if (opt_is(p, len, "expandable_segments", &v, &vl))
            rl.expandable = vl >= 4 && !strncasecmp(v, "true", 4);
        else if (opt_is(p, len, "backend", &v, &vl))
            rl.async = vl >= 15 && !strncasecmp(v, "cudaMallocAsync", 15);
        else if (opt_is(p, len, "max_split_size_mb", &v, &vl)) {
            uint64_t mb = opt_number(v, vl);
            rl.max_split = mb && mb < (UINT64_MAX >> 20) ? mb << 20 : UINT64_MAX;
        } else if (opt_is(p, len, "roundup_power2_divisions", &v, &vl)) {
            const char *close = strchr(p, ']');
            if (vl && v[0] == '[') /* a per-size list, up to ']' past the commas inside it */
                approx = 1, len = close ? (size_t)(close - p) + 1 : strlen(p);
            else
                rl.divisions = (unsigned)opt_number(v, vl);
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (approx)
        rl.basis = BLOCKS_BASIS_APPROXIMATE;
    else if (rl.async)
        rl.basis = BLOCKS_BASIS_ASYNC;
    else if (rl.divisions > 1 || (rl.max_split != UINT64_MAX && !rl.expandable))
        rl.basis = BLOCKS_BASIS_CONFIGURED;
    else if (rl.expandable)
        rl.basis = BLOCKS_BASIS_EXPANDABLE;
    return rl;
}
