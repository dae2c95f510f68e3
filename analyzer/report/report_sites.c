/* report_sites.c — the allocation sites at the peak (report.h): (category, site text) over the
 * allocations live at the peak. Items are grouped by (category, stack) first, so each stack's
 * text is made once; texts are merged through a hash (different stacks often share a site), and
 * a site's native op is that of the stack that gave it the most bytes, named when a view shows
 * the site (report_site_native: a report shows a few of some hundred). */
#include <stdlib.h>
#include <string.h>

#include "hashseed.h"
#include "report.h"

/* cmp_site: most bytes first; ties by category, then site text (a stable, documented order) */
static int cmp_site(const void *a, const void *b)
{
    const report_site *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->category != y->category)
        return x->category < y->category ? -1 : 1;
    return strcmp(x->text, y->text);
}

typedef struct group_key {
    uint8_t category;
    uint32_t stack;
    uint64_t size;
} group_key;

static int cmp_key(const void *a, const void *b)
{
    const group_key *x = a, *y = b;
    if (x->category != y->category)
        return x->category < y->category ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack ? 1 : 0;
}

/* sort_keys: k[0..n) in cmp_key's order, by radix on (category, stack): five byte-wide passes,
 * those where every key has the same byte skipped (a snapshot holds ~100k items: qsort's calls
 * to cmp_key were 7 % of a report on 1M events). qsort when the buffer cannot be had. */
/* digit: key k's byte of a radix pass: passes 0-3 the stack's bytes, low first; 4 the category */
static inline unsigned digit(const group_key *k, int pass)
{
    return pass == 4 ? k->category : k->stack >> (8 * pass) & 255;
}

static void sort_keys(group_key *k, size_t n)
{
    group_key *tmp = n > 1 ? malloc(n * sizeof *tmp) : NULL;
    if (!tmp) {
        if (n > 1)
            qsort(k, n, sizeof *k, cmp_key);
        return;
    }
    group_key *src = k, *dst = tmp;
    for (int pass = 0; pass < 5; pass++) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[digit(&src[i], pass)]++;
        if (count[digit(&src[0], pass)] == n) /* one value of this byte: the order stands */
            continue;
        size_t at = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[digit(&src[i], pass)]++] = src[i];
        group_key *t = src;
        src = dst, dst = t;
    }
    if (src != k)
        memcpy(k, src, n * sizeof *k);
    free(tmp);
}

int report_sites(report_ctx *c)
{
    replay_result *r = &c->runs[0];
    size_t items = r->at_peak.n;
    group_key *keys = malloc((items + 1) * sizeof *keys);
    if (!keys)
        return -1;
    for (size_t i = 0; i < items; i++)
        keys[i] = (group_key){(uint8_t)r->at_peak.items[i].category, r->at_peak.items[i].stack_id,
                              r->at_peak.items[i].size};
    sort_keys(keys, items);
    size_t ngroups = 0;
    for (size_t i = 0; i < items; i++)
        ngroups += i == 0 || keys[i].category != keys[i - 1].category ||
                   keys[i].stack != keys[i - 1].stack;
    size_t n = 0, hcap = 16;
    while (hcap < 2 * ngroups + 2)
        hcap *= 2;
    report_site *s = malloc((ngroups + 1) * sizeof *s); /* (each filled as it is first met) */
    uint32_t *slot = calloc(hcap, sizeof *slot);        /* index + 1 into s, 0 = empty */
    /* per site, the stack that gave it the most bytes: its native op is the one named */
    struct biggest {
        uint64_t bytes;
        uint32_t stack;
    } *big = calloc(ngroups + 1, sizeof *big);
    /* per stack, a site its text went to (a stack's groups in other categories have its text:
     * replay_site_text once a stack, not once a group; 13,448 texts for 5,000 stacks, 4 % of
     * the report on vtgen's default mode) */
    struct seen {
        uint32_t stack, site; /* site: index + 1 into s, 0 = empty */
    } *seen = calloc(hcap, sizeof *seen);
    if (!s || !slot || !big || !seen) {
        free(keys), free(s), free(slot), free(big), free(seen);
        return -1;
    }
    size_t cur = 0;
    uint64_t group = 0; /* the bytes of the current (category, stack) group */
    for (size_t i = 0; i < items; i++) {
        if (i == 0 || keys[i].category != keys[i - 1].category ||
            keys[i].stack != keys[i - 1].stack) {
            if (i && group > big[cur].bytes) /* the group that ended, against its site's best */
                big[cur] = (struct biggest){group, keys[i - 1].stack};
            group = 0;
            char text[512];
            size_t m = (size_t)hashseed_mix(keys[i].stack) & (hcap - 1); /* (seeded: hashseed.h) */
            while (seen[m].site && seen[m].stack != keys[i].stack)
                m = (m + 1) & (hcap - 1);
            if (seen[m].site) {
                const char *t = s[seen[m].site - 1].text;
                memcpy(text, t, strlen(t) + 1);
            } else {
                replay_site_text(r, keys[i].stack, text, sizeof text);
            }
            /* seeded: names a trace chose cannot be made to share a slot (hashseed.h) */
            uint64_t h = hashseed_text(text, keys[i].category * 0x9e3779b97f4a7c15ull);
            size_t j = (size_t)h & (hcap - 1);
            while (slot[j] && !(s[slot[j] - 1].category == keys[i].category &&
                                !strcmp(s[slot[j] - 1].text, text)))
                j = (j + 1) & (hcap - 1);
            if (!slot[j]) {
                report_site *q = &s[n];
                q->category = keys[i].category;
                q->bytes = q->count = 0;
                q->stack = 0;
                q->native_done = 0;
                q->native[0] = '\0';
                _Static_assert(sizeof text == sizeof q->text, "a site's text is copied whole");
                memcpy(q->text, text, strlen(text) + 1);
                slot[j] = (uint32_t)++n;
            }
            cur = slot[j] - 1;
            seen[m] = (struct seen){keys[i].stack, slot[j]};
        }
        group += keys[i].size;
        s[cur].bytes += keys[i].size;
        s[cur].count++;
    }
    if (items && group > big[cur].bytes)
        big[cur] = (struct biggest){group, keys[items - 1].stack};
    for (size_t k = 0; k < n; k++)
        s[k].stack = big[k].stack;
    free(keys);
    free(slot);
    free(big);
    free(seen);
    qsort(s, n, sizeof *s, cmp_site);
    c->sites = s;
    c->nsites = n;
    return 0;
}

const char *report_site_native(const report_ctx *c, size_t i)
{
    report_site *s = &c->sites[i];
    if (!s->native_done) {
        replay_native_text(&c->runs[0], s->stack, s->native, sizeof s->native);
        s->native_done = 1;
    }
    return s->native;
}
