/* report_modules.c — where the activations come from (report.h): the bytes of activations,
 * logits/loss and attention live at the allocated (tensor) peak and at an out-of-memory failure,
 * grouped by the nn.Module whose forward made them (model/facts/modules.c), from the stacks
 * already captured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules.h"
#include "hashseed.h"
#include "report.h"

/* batch_cat: the categories that grow with the batch and that a module's forward makes. */
static int batch_cat(int c)
{
    return c == CAT_ACTIVATIONS || c == CAT_LOGITS || c == CAT_ATTENTION;
}

static int cmp_module(const void *a, const void *b)
{
    const report_module *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return strcmp(x->text, y->text);
}

/* code_classes: modules_frame_class of each code object, by code id (the bit 0x80: known), kept
 * over the stacks of both snapshots: a stack's module reads its Python frames' qualnames and
 * files alone, and the stacks at a peak share most of their frames (g_compile_b8_12gib: 219
 * stacks, 4,959 frames, a few hundred code objects) */
typedef struct code_classes {
    tables *t;
    const tables_stack *st;
    uint8_t *cls; /* NULL: none kept (out of memory); an id past n is worked out each time */
    size_t n;
} code_classes;

static const tables_frame *stack_frame(const void *ctx, size_t i, tables_frame *buf)
{
    const code_classes *k = ctx;
    return tables_code_frame(k->t, k->st->frames[k->st->n_native + i], buf);
}

static unsigned stack_class(const void *ctx, size_t i)
{
    const code_classes *k = ctx;
    uint32_t id = VT_PYFRAME_CODE(k->st->frames[k->st->n_native + i]);
    if (k->cls && id < k->n && k->cls[id])
        return k->cls[id] & 0x7f;
    tables_frame f;
    unsigned c = modules_frame_class(stack_frame(ctx, i, &f));
    if (k->cls && id < k->n)
        k->cls[id] = (uint8_t)(c | 0x80);
    return c;
}

/* module_text: the module of stack id (modules_of_frames over its Python frames, looked up
 * without their lines); "(no stack)" for none or an unknown one. */
static void module_text(code_classes *k, uint32_t id, char *text, size_t len)
{
    const tables_stack *st = id ? tables_stack_get(k->t, id) : NULL;
    if (!st) {
        snprintf(text, len, "(no stack)");
        return;
    }
    k->st = st;
    modules_frames fr = {stack_class, stack_frame, k};
    modules_of_frames(&fr, st->n_python, text, len);
}

/* group: the items of snap in the batch categories, by module. *out (malloc'ed, sorted by bytes)
 * and *n; 0, or -1 out of memory. */
static int group(code_classes *k, const replay_snapshot *snap, report_module **out, size_t *n,
                 uint64_t *total)
{
    *out = NULL;
    *n = *total = 0;
    size_t cap = 0;
    report_module *m = NULL;
    /* one module text per stack: each stack's group, by stack id + 1 (open addressing, at most
     * half full: stacks repeat over the items) */
    size_t hcap = 16;
    while (hcap < 2 * snap->n)
        hcap *= 2;
    struct {
        uint64_t key; /* stack id + 1; 0: empty */
        size_t j;
    } *seen = calloc(hcap, sizeof *seen);
    /* each module text's group (index + 1; 0: empty), by the text: a trace of many stacks each
     * with its own module text is no walk over the groups per stack */
    uint32_t *named = calloc(hcap, sizeof *named);
    if (!seen || !named) {
        free(seen), free(named);
        return -1;
    }
    for (size_t i = 0; i < snap->n; i++) {
        const live_item *it = &snap->items[i];
        if (!batch_cat(it->category))
            continue;
        uint64_t key = (uint64_t)it->stack_id + 1;
        size_t h = (size_t)hashseed_mix(key) & (hcap - 1); /* (the trace's ids: seeded) */
        while (seen[h].key && seen[h].key != key)
            h = (h + 1) & (hcap - 1);
        if (!seen[h].key) {
            char text[256];
            module_text(k, it->stack_id, text, sizeof text);
            size_t t = (size_t)hashseed_text(text, 0) & (hcap - 1);
            while (named[t] && strcmp(m[named[t] - 1].text, text))
                t = (t + 1) & (hcap - 1);
            size_t j = named[t] ? named[t] - 1 : *n;
            if (j == *n) {
                if (*n == cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    report_module *g = realloc(m, nc * sizeof *g);
                    if (!g)
                        goto oom;
                    m = g;
                    cap = nc;
                }
                memset(&m[*n], 0, sizeof m[*n]);
                snprintf(m[*n].text, sizeof m[*n].text, "%s", text);
                named[t] = (uint32_t)++(*n);
            }
            seen[h].key = key;
            seen[h].j = j;
        }
        report_module *g = &m[seen[h].j];
        g->bytes += it->size;
        g->count++;
        g->by_cat[it->category] += it->size;
        *total += it->size;
    }
    free(seen);
    free(named);
    if (*n)
        qsort(m, *n, sizeof *m, cmp_module);
    *out = m;
    return 0;
oom:
    free(seen);
    free(named);
    free(m);
    *n = 0;
    return -1;
}

int report_modules(report_ctx *c)
{
    replay_result *r = &c->runs[0];
    c->mod_peak_ns = r->at_peak.time_ns; /* (the process peak's, as peak "process" says) */
    if (!r->tensor_mode) /* segments are not tensors: a segment's module says little */
        return 0;
    /* at the allocated (tensor) peak: where the activations are; the process peak can come
     * later, when the backward has freed most of them and the cache holds the rest */
    const replay_snapshot *at = r->at_tensors.n ? &r->at_tensors : &r->at_peak;
    c->mod_peak_ns = at->time_ns;
    c->mod_peak_is_tensors = at == &r->at_tensors;
    /* (ids beyond twice the code objects' count, a corrupt trace's, are not kept: phases.c) */
    code_classes k = {r->t, NULL, NULL, 2 * tables_n_codes(r->t) + 1024};
    k.cls = calloc(k.n, 1);
    int rc = group(&k, at, &c->mod_peak, &c->nmod_peak, &c->mod_peak_total);
    if (rc == 0 && r->has_oom)
        rc = group(&k, &r->at_oom, &c->mod_oom, &c->nmod_oom, &c->mod_oom_total);
    free(k.cls);
    return rc;
}

const char *report_modules_cats(const report_module *m, size_t n, const report_module *m2,
                                size_t n2, char *buf, size_t len)
{
    static const category cats[] = {CAT_ACTIVATIONS, CAT_LOGITS, CAT_ATTENTION};
    const char *said[3];
    int k = 0;
    for (int j = 0; j < 3; j++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += m[i].by_cat[cats[j]];
        for (size_t i = 0; i < n2; i++)
            sum += m2[i].by_cat[cats[j]];
        if (sum)
            said[k++] = category_name(cats[j]);
    }
    size_t at = 0;
    buf[0] = 0;
    for (int j = 0; j < k && at < len; j++) {
        int w = snprintf(buf + at, len - at, "%s%s",
                         j == 0       ? ""
                         : j == k - 1 ? " and "
                                      : ", ",
                         said[j]);
        at += w > 0 ? (size_t)w : 0;
    }
    return buf;
}
