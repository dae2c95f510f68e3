/* reader_snapjoin.c — where a chunked trace's events were dropped, the live set the reader
 * handed out before the gap is joined to the snapshot after it (reader_chunked.c uses it): what
 * was alive before and is no longer is freed (a FREE record at the snapshot's time), what is new
 * is allocated (its ALLOC record from the snapshot), and what is the same allocation on both
 * sides (same key, same time) is left alone, so a parameter keeps its one lifetime. Pairing is
 * the format's: (space, addr); PyTorch's segments by address (trace_format.h, SNAPSHOT). */
#include "reader_snapjoin.h"

#include <stdlib.h>
#include <string.h>

#include "hashseed.h"
#include "reader.h"

#define SP_TORCH_SEG 100 /* torchSegmentAlloc .. torchSegmentFree */
#define SP_TORCH_MAP 101 /* torchSegmentMap .. torchSegmentUnmap */

typedef struct jent {
    uint64_t addr, tt, size;
    uint16_t flags; /* the ALLOC's header flags (api, device) */
    uint8_t space, used, mark;
} jent;

struct snapjoin {
    jent *tab;
    size_t cap, n;
};

static uint64_t mix(uint64_t addr, unsigned space)
{
    return hashseed_mix(addr ^ ((uint64_t)space << 56));
}

static jent *find(snapjoin *j, uint64_t addr, unsigned space)
{
    for (size_t i = j->cap ? mix(addr, space) & (j->cap - 1) : 0; j->cap;
         i = (i + 1) & (j->cap - 1))
        if (!j->tab[i].used)
            return NULL;
        else if (j->tab[i].addr == addr && j->tab[i].space == space)
            return &j->tab[i];
    return NULL;
}

static void erase(snapjoin *j, jent *e)
{
    size_t i = (size_t)(e - j->tab), k = i;
    j->tab[i].used = 0;
    j->n--;
    for (;;) { /* backward shift, as writer_pack_live.c's */
        k = (k + 1) & (j->cap - 1);
        if (!j->tab[k].used)
            return;
        size_t h = mix(j->tab[k].addr, j->tab[k].space) & (j->cap - 1);
        if ((k > i && (h <= i || h > k)) || (k < i && h <= i && h > k)) {
            j->tab[i] = j->tab[k];
            j->tab[k].used = 0;
            i = k;
        }
    }
}

static jent *put(snapjoin *j, uint64_t addr, unsigned space)
{
    jent *e = find(j, addr, space);
    if (e)
        return e;
    if ((j->n + 1) * 4 > j->cap * 3) {
        size_t ncap = j->cap ? j->cap * 2 : 4096;
        jent *nt = calloc(ncap, sizeof *nt);
        if (!nt)
            return NULL;
        for (size_t i = 0; i < j->cap; i++) {
            if (!j->tab[i].used)
                continue;
            size_t k = mix(j->tab[i].addr, j->tab[i].space) & (ncap - 1);
            while (nt[k].used)
                k = (k + 1) & (ncap - 1);
            nt[k] = j->tab[i];
        }
        free(j->tab);
        j->tab = nt;
        j->cap = ncap;
    }
    size_t i = mix(addr, space) & (j->cap - 1);
    while (j->tab[i].used)
        i = (i + 1) & (j->cap - 1);
    j->n++;
    j->tab[i] = (jent){addr, 0, 0, 0, (uint8_t)space, 1, 0};
    return &j->tab[i];
}

snapjoin *snapjoin_new(void)
{
    return calloc(1, sizeof(snapjoin));
}

void snapjoin_free(snapjoin *j)
{
    if (j)
        free(j->tab);
    free(j);
}

/* key: the pairing key of an ALLOC / FREE record (header + payload at r), or 0 when it pairs
 * with nothing; *del: it ends an allocation */
static int key(const uint8_t *r, uint64_t *addr, unsigned *space, int *del)
{
    uint16_t type, flags;
    memcpy(&type, r, 2);
    memcpy(&flags, r + 2, 2);
    unsigned api = VT_EVF_API(flags);
    memcpy(addr, r + 16, 8);
    *space = (unsigned)reader_api_space(api);
    *del = type == VT_REC_FREE;
    if (flags & VT_EVF_FAILED)
        return 0;
    if (api == VT_API_torchSegmentAlloc || api == VT_API_torchSegmentFree)
        *space = SP_TORCH_SEG, *del = api == VT_API_torchSegmentFree;
    else if (api == VT_API_torchSegmentMap || api == VT_API_torchSegmentUnmap)
        *space = SP_TORCH_MAP, *del = api == VT_API_torchSegmentUnmap;
    else if (type == VT_REC_ALLOC) {
        int kind = reader_api_kind(api);
        if (*space == VT_SPACE_NONE || kind == VT_KIND_RETAIN || kind == VT_KIND_INFO ||
            kind == VT_KIND_TRIM || kind == VT_KIND_OTHER || !*addr)
            return 0;
    }
    return 1;
}

void snapjoin_records(snapjoin *j, const uint8_t *b, size_t len)
{
    for (size_t at = 0; at + 24 <= len;) {
        uint16_t type;
        uint32_t size;
        memcpy(&type, b + at, 2);
        memcpy(&size, b + at + 4, 4);
        if (size < 8 || size > len - at)
            return;
        uint64_t addr;
        unsigned space;
        int del;
        if ((type == VT_REC_ALLOC || type == VT_REC_FREE) && key(b + at, &addr, &space, &del)) {
            if (del) {
                jent *e = find(j, addr, space);
                if (e)
                    erase(j, e);
            } else if (type == VT_REC_ALLOC && size >= VT_ALLOC_REC_SIZE) {
                jent *e = put(j, addr, space);
                if (e) {
                    memcpy(&e->tt, b + at + 8, 8);
                    memcpy(&e->size, b + at + 24, 8);
                    memcpy(&e->flags, b + at + 2, 2);
                }
            }
        }
        at += size;
    }
}

/* the FREE that ends e: its API by space (PyTorch's segments: their own ALLOC-shaped records) */
static size_t free_of(const jent *e, uint64_t tt, uint8_t *out)
{
    static const uint8_t api_of[] = {
        [VT_SPACE_DEVICE] = VT_API_cudaFree,
        [VT_SPACE_MANAGED] = VT_API_cudaFree,
        [VT_SPACE_HOST] = VT_API_cudaFreeHost,
        [VT_SPACE_HOSTREG] = VT_API_cudaHostUnregister,
        [VT_SPACE_VMM_HANDLE] = VT_API_cuMemRelease,
        [VT_SPACE_VMM_VA] = VT_API_cuMemUnmap,
        [VT_SPACE_VA_RANGE] = VT_API_cuMemAddressFree,
        [VT_SPACE_MODULE] = VT_API_cuModuleUnload,
        [VT_SPACE_LIBRARY] = VT_API_cuLibraryUnload,
        [VT_SPACE_TENSOR] = VT_API_torchFree,
    };
    unsigned dev = VT_EVF_DEVICE(e->flags);
    if (e->space == SP_TORCH_SEG || e->space == SP_TORCH_MAP) {
        vt_rec_alloc a = {tt, e->addr, e->size, 0, 0, 0};
        uint16_t f = VT_EVF_MAKE(
            e->space == SP_TORCH_SEG ? VT_API_torchSegmentFree : VT_API_torchSegmentUnmap, dev);
        uint64_t h =
            (uint64_t)VT_REC_ALLOC | ((uint64_t)f << 16) | ((uint64_t)VT_ALLOC_REC_SIZE << 32);
        memcpy(out, &h, 8);
        memcpy(out + 8, &a, sizeof a);
        return VT_ALLOC_REC_SIZE;
    }
    unsigned api = e->space < sizeof api_of ? api_of[e->space] : 0;
    if (!api)
        return 0; /* a context: nothing frees it */
    vt_rec_free fr = {tt, e->addr};
    uint64_t h = (uint64_t)VT_REC_FREE | ((uint64_t)VT_EVF_MAKE(api, dev) << 16) |
                 ((uint64_t)VT_FREE_REC_SIZE << 32);
    memcpy(out, &h, 8);
    memcpy(out + 8, &fr, sizeof fr);
    return VT_FREE_REC_SIZE;
}

/* cmp_age: handed-out allocations by time, then key */
static int cmp_age(const void *a, const void *b)
{
    const jent *x = *(const jent *const *)a, *y = *(const jent *const *)b;
    if (x->tt != y->tt)
        return x->tt < y->tt ? -1 : 1;
    if (x->space != y->space)
        return x->space < y->space ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int snapjoin_merge(snapjoin *j, const uint8_t *snap, size_t len, uint8_t **out, size_t *out_len)
{
    size_t head = 8 + sizeof(vt_rec_snapshot);
    uint16_t type;
    uint32_t first;
    if (len < head)
        return -1;
    memcpy(&type, snap, 2);
    memcpy(&first, snap + 4, 4);
    /* its first record must be the SNAPSHOT (appended fields, if any, are skipped): a SNAP chunk
     * without one had its first ALLOC records read as the snapshot's fields and the rest from
     * the middle of a record, every allocation of the snapshot lost and the live set emptied */
    if (type != VT_REC_SNAPSHOT || first < head || first > len)
        return -1;
    vt_rec_snapshot s;
    memcpy(&s, snap + 8, sizeof s);
    /* room: the snapshot's records, and a FREE (at most 40 bytes) for each handed-out one */
    uint8_t *o = malloc(len + j->n * VT_ALLOC_REC_SIZE + 8);
    if (!o)
        return -1;
    size_t at = first, n = head, records = 0;
    for (size_t i = 0; i < j->cap; i++)
        j->tab[i].mark = 0;
    while (at + 8 <= len) { /* the snapshot's allocations: new ones out, the same ones marked */
        uint32_t size;
        memcpy(&size, snap + at + 4, 4);
        if (size < 8 || size > len - at)
            break;
        uint64_t addr, tt;
        unsigned space;
        int del;
        jent *e = NULL;
        if (size >= VT_ALLOC_REC_SIZE && key(snap + at, &addr, &space, &del) && !del) {
            memcpy(&tt, snap + at + 8, 8);
            e = find(j, addr, space);
            if (e && e->tt != tt)
                e = NULL; /* another allocation at that key: the old one is freed below */
        }
        if (e) {
            e->mark = 1;
        } else {
            memcpy(o + n, snap + at, size);
            n += size;
            records++;
        }
        at += size;
    }
    size_t nalloc = n - head;
    uint8_t *frees = malloc(j->n * VT_ALLOC_REC_SIZE + 8);
    size_t nf = 0;
    if (!frees) {
        free(o);
        return -1;
    }
    /* what was alive and is not in the snapshot ends: oldest first (the table's order is the
     * hash seed's, which differs from run to run) */
    const jent **ends = malloc((j->n ? j->n : 1) * sizeof *ends);
    if (!ends) {
        free(frees);
        free(o);
        return -1;
    }
    size_t nends = 0;
    for (size_t i = 0; i < j->cap; i++)
        if (j->tab[i].used && !j->tab[i].mark)
            ends[nends++] = &j->tab[i];
    qsort(ends, nends, sizeof *ends, cmp_age);
    for (size_t i = 0; i < nends; i++) {
        size_t k = free_of(ends[i], s.tt, frees + nf);
        nf += k;
        records += k > 0;
    }
    free(ends);
    memmove(o + head + nf, o + head, nalloc); /* frees first: an address may be reused */
    memcpy(o + head, frees, nf);
    free(frees);
    s.n_allocs = records;
    uint64_t h = (uint64_t)VT_REC_SNAPSHOT | ((uint64_t)head << 32);
    memcpy(o, &h, 8);
    memcpy(o + 8, &s, sizeof s);
    /* from here on the handed-out set is the snapshot's */
    for (size_t i = 0; i < j->cap; i++)
        j->tab[i].used = 0;
    j->n = 0;
    snapjoin_records(j, snap + first, len - first);
    *out = o;
    *out_len = head + nf + nalloc;
    return 0;
}
