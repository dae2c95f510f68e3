/* summary.c — the one-paragraph summary after `vramtrace run` (summary.h): one quick pass
 * over the trace counting events and keeping a live map of device-space and VMM-handle
 * bytes for the peaks. The full analysis (categories, phases) is `vramtrace report`. */
#include "summary.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cards.h"
#include "commands.h"
#include "reader.h"

/* ---- live map: (space, addr) -> bytes, linear probing with backward-shift delete ------- */

typedef struct live_map {
    uint64_t *keys; /* addr ^ (space << 56); slot empty when size == 0 */
    uint64_t *sizes;
    size_t cap, n;
} live_map;

static size_t lm_slot(const live_map *m, uint64_t k)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return (size_t)(k >> 17) & (m->cap - 1);
}

/* lm_put: records k -> size (size > 0); an existing k is replaced and its old size
 * returned (0 if new). Returns UINT64_MAX when out of memory. */
static uint64_t lm_put(live_map *m, uint64_t k, uint64_t size)
{
    if ((m->n + 1) * 2 > m->cap) {
        live_map nm = {0};
        nm.cap = m->cap ? m->cap * 2 : 1024;
        nm.keys = calloc(nm.cap, 8);
        nm.sizes = calloc(nm.cap, 8);
        if (!nm.keys || !nm.sizes) {
            free(nm.keys);
            free(nm.sizes);
            return UINT64_MAX;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->sizes[i])
                lm_put(&nm, m->keys[i], m->sizes[i]);
        free(m->keys);
        free(m->sizes);
        *m = nm;
    }
    size_t i = lm_slot(m, k);
    while (m->sizes[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    uint64_t old = m->sizes[i];
    if (!old)
        m->n++;
    m->keys[i] = k;
    m->sizes[i] = size;
    return old;
}

/* lm_take: removes k and returns its size (0 if absent). */
static uint64_t lm_take(live_map *m, uint64_t k)
{
    if (!m->cap)
        return 0;
    size_t i = lm_slot(m, k);
    while (m->sizes[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    uint64_t old = m->sizes[i];
    if (!old)
        return 0;
    m->sizes[i] = 0;
    m->n--;
    for (size_t j = (i + 1) & (m->cap - 1); m->sizes[j]; j = (j + 1) & (m->cap - 1)) {
        size_t want = lm_slot(m, m->keys[j]);
        /* move j into the hole i if its home is not cyclically in (i, j] */
        if (((j - want) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
            m->keys[i] = m->keys[j];
            m->sizes[i] = m->sizes[j];
            m->sizes[j] = 0;
            i = j;
        }
    }
    return old;
}

/* ---- the pass ---------------------------------------------------------------------------- */

typedef struct summary_facts {
    uint64_t events, failed, reserved, process, peak_reserved, peak_process;
    uint64_t contexts, oom_requested;
    bool oom;
} summary_facts;

/* summary_event: applies one ALLOC/FREE to the live map and the peaks; false on ENOMEM. */
static bool summary_event(summary_facts *f, live_map *m, const reader_record *r)
{
    const reader_event *e = &r->u.ev;
    f->events++;
    if (e->failed || e->result) {
        f->failed++;
        return true;
    }
    int space = reader_api_space(e->api), kind = reader_api_kind(e->api);
    bool reserved = space == VT_SPACE_DEVICE || space == VT_SPACE_VMM_HANDLE;
    bool process = reserved || space == VT_SPACE_CONTEXT || space == VT_SPACE_MODULE ||
                   space == VT_SPACE_LIBRARY;
    if (!process)
        return true;
    uint64_t key = e->addr ^ ((uint64_t)space << 56);
    if (r->type == VT_REC_ALLOC && (kind == VT_KIND_ALLOC || kind == VT_KIND_CONTEXT ||
                                    kind == VT_KIND_LOAD)) {
        if (kind == VT_KIND_CONTEXT)
            f->contexts++;
        if (!e->size)
            return true;
        uint64_t old = lm_put(m, key, e->size);
        if (old == UINT64_MAX)
            return false;
        if (reserved)
            f->reserved += e->size - old;
        f->process += e->size - old;
    } else if (r->type == VT_REC_FREE && (kind == VT_KIND_FREE || kind == VT_KIND_UNCONTEXT ||
                                          kind == VT_KIND_UNLOAD)) {
        uint64_t old = lm_take(m, key);
        if (reserved)
            f->reserved -= old;
        f->process -= old;
    }
    if (f->reserved > f->peak_reserved)
        f->peak_reserved = f->reserved;
    if (f->process > f->peak_process)
        f->peak_process = f->process;
    return true;
}

int summary_print(FILE *out, const char *path)
{
    char msg[512];
    reader *r = reader_open(path, msg, sizeof msg);
    if (!r) {
        fprintf(stderr, "vramtrace: cannot read the trace %s\n", msg);
        return VT_EXIT_USAGE;
    }
    summary_facts f = {0};
    live_map m = {0};
    reader_record rec;
    int rc = VT_EXIT_OK;
    unsigned ended = 0; /* the trailer's VT_TRAILER_* flags */
    while (reader_next(r, &rec)) {
        if (rec.type == VT_REC_TRAILER)
            ended = rec.flags;
        if (rec.type == VT_REC_ALLOC || rec.type == VT_REC_FREE) {
            if (!summary_event(&f, &m, &rec)) {
                fprintf(stderr, "vramtrace: %s: out of memory while summarizing\n", path);
                rc = VT_EXIT_USAGE;
                break;
            }
        } else if (rec.type == VT_REC_OOM && !f.oom) {
            f.oom = true;
            f.oom_requested = rec.u.oom.requested;
        }
    }
    free(m.keys);
    free(m.sizes);
    reader_status st = reader_status_of(r);
    if (st == READER_MALFORMED || st == READER_IOERR) {
        fprintf(stderr, "vramtrace: %s: %s trace at byte %" PRIu64 ": %s\n", path,
                st == READER_MALFORMED ? "malformed" : "unreadable", reader_error_offset(r),
                reader_error_message(r));
        reader_close(r);
        return st == READER_MALFORMED ? VT_EXIT_MALFORMED : VT_EXIT_USAGE;
    }
    char pr[32], pp[32], oq[32];
    card_format_bytes(f.peak_reserved, pr, sizeof pr);
    card_format_bytes(f.peak_process, pp, sizeof pp);
    fprintf(out, "vramtrace: trace %s: %" PRIu64 " events (%" PRIu64 " failed), peak %s in "
                 "device allocations (%s with contexts and kernel images), %" PRIu64
                 " context%s, ",
            path, f.events, f.failed, pr, pp, f.contexts, f.contexts == 1 ? "" : "s");
    if (f.oom)
        fprintf(out, "OOM: yes (a request for %s failed), ",
                card_format_bytes(f.oom_requested, oq, sizeof oq));
    else
        fprintf(out, "OOM: no, ");
    if (st == READER_TRUNCATED)
        fprintf(out, "truncated (%s: the process did not stop cleanly; every complete record "
                     "was kept).\n",
                reader_error_message(r));
    else if (ended & (VT_TRAILER_DISK_FULL | VT_TRAILER_OUTPUT_ERROR))
        fprintf(out, "stopped early (%s; every record made before was kept).\n",
                ended & VT_TRAILER_DISK_FULL ? "disk full" : "writing the trace failed");
    else
        fprintf(out, "complete.\n");
    fprintf(out, "Run `vramtrace report %s` for categories, phases and advice.\n", path);
    reader_close(r);
    return rc;
}
