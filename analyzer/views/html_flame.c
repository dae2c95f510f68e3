/* html_flame.c — the icicle of the HTML page (html_parts.h): the folded stacks at the peak
 * (flame.c, read as people read a stack by stackview.c) made into a trie, written pre-order
 * into the page's JSON data block with every frame name through jsonw.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "html_parts.h"
#include "jsonw.h"
#include "stackview.h"

/* ---- the icicle: a trie of the folded stacks at the peak, frames outermost first ---- */
typedef struct fnode {
    int32_t parent, child, next, cat; /* cat: a leaf's category, else -1 */
    uint32_t name;
    uint64_t value;
    int32_t out; /* index in the page's node list, -1 when too small to show */
} fnode;

typedef struct ftree {
    fnode *n;
    size_t len, cap;
    char **names;
    size_t nnames, capnames;
    uint32_t *hash; /* name index + 1 by string hash */
    size_t caphash;
    int oom;
} ftree;

static uint32_t intern(ftree *t, const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = s; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    if ((t->nnames + 1) * 2 > t->caphash) {
        size_t nc = t->caphash ? t->caphash * 2 : 4096;
        uint32_t *nh = calloc(nc, sizeof *nh);
        if (!nh) {
            t->oom = 1;
            return 0;
        }
        for (size_t i = 0; i < t->nnames; i++) {
            uint64_t g = 1469598103934665603ull;
            for (const char *p = t->names[i]; *p; p++)
                g = (g ^ (unsigned char)*p) * 1099511628211ull;
            size_t j = g & (nc - 1);
            while (nh[j])
                j = (j + 1) & (nc - 1);
            nh[j] = (uint32_t)i + 1;
        }
        free(t->hash);
        t->hash = nh;
        t->caphash = nc;
    }
    size_t j = h & (t->caphash - 1);
    for (; t->hash[j]; j = (j + 1) & (t->caphash - 1))
        if (!strcmp(t->names[t->hash[j] - 1], s))
            return t->hash[j] - 1;
    if (t->nnames == t->capnames) {
        size_t nc = t->capnames ? t->capnames * 2 : 1024;
        char **nn = realloc(t->names, nc * sizeof *nn);
        if (!nn) {
            t->oom = 1;
            return 0;
        }
        t->names = nn;
        t->capnames = nc;
    }
    if (!(t->names[t->nnames] = strdup(s))) {
        t->oom = 1;
        return 0;
    }
    t->hash[j] = (uint32_t)++t->nnames;
    return (uint32_t)t->nnames - 1;
}

/* child: the child of parent named name (category cat for a leaf), made when missing */
static int32_t child(ftree *t, int32_t parent, uint32_t name, int32_t cat)
{
    for (int32_t c = t->n[parent].child; c >= 0; c = t->n[c].next)
        if (t->n[c].name == name && t->n[c].cat == cat)
            return c;
    if (t->len == t->cap) {
        size_t nc = t->cap * 2;
        fnode *nn = realloc(t->n, nc * sizeof *nn);
        if (!nn) {
            t->oom = 1;
            return parent;
        }
        t->n = nn;
        t->cap = nc;
    }
    t->n[t->len] = (fnode){parent, -1, t->n[parent].child, cat, name, 0, -1};
    t->n[parent].child = (int32_t)t->len;
    return (int32_t)t->len++;
}

static void tree_build(ftree *t, replay_result *r)
{
    size_t nrows = 0;
    flame_row *rows = flame_rows(&r->at_peak, &nrows);
    stackview_frame *v = malloc(STACKVIEW_MAX * sizeof *v);
    char buf[1024], leaf[64];
    t->cap = 1024;
    t->n = malloc(t->cap * sizeof *t->n);
    if (!rows || !t->n || !v) {
        t->oom = 1;
        free(rows);
        free(v);
        return;
    }
    t->n[0] = (fnode){-1, -1, -1, -1, intern(t, "all"), 0, -1};
    t->len = 1;
    for (size_t i = 0; i < nrows && !t->oom; i++) {
        size_t nv = stackview_build(r->t, rows[i].stack_id, 0, v); /* outermost first */
        int32_t at = 0;
        t->n[0].value += rows[i].bytes;
        if (!nv)
            at = child(t, at, intern(t, "[no stack]"), -1), t->n[at].value += rows[i].bytes;
        for (size_t k = 0; k < nv && !t->oom; k++) {
            at = child(t, at, intern(t, stackview_name(r->t, &v[k], buf, sizeof buf)), -1);
            t->n[at].value += rows[i].bytes;
        }
        snprintf(leaf, sizeof leaf, "[%s]", category_name((category)rows[i].category));
        at = child(t, at, intern(t, leaf), rows[i].category);
        t->n[at].value += rows[i].bytes;
    }
    free(rows);
    free(v);
}

/* a left-out leaf's bytes, under the nearest shown node (its out) */
typedef struct fsmall {
    int32_t at, cat;
    uint64_t value;
} fsmall;

static int cmp_small(const void *a, const void *b)
{
    const fsmall *x = a, *y = b;
    return x->at != y->at ? (x->at > y->at) - (x->at < y->at)
                          : (x->cat > y->cat) - (x->cat < y->cat);
}

/* emit_small: what emit left out, as one leaf per shown node and category ("[activations: 12
 * smaller stacks]"): every node's children still add up to it, every category's bytes are drawn */
static void emit_small(FILE *out, ftree *t, int32_t *k)
{
    fsmall *v = malloc(t->len * sizeof *v);
    size_t n = 0;
    if (!v)
        return;
    for (size_t i = 1; i < t->len; i++) {
        if (t->n[i].cat < 0 || t->n[i].out >= 0)
            continue;
        int32_t a = t->n[i].parent;
        while (t->n[a].out < 0) /* the root is always shown */
            a = t->n[a].parent;
        v[n++] = (fsmall){t->n[a].out, t->n[i].cat, t->n[i].value};
    }
    qsort(v, n, sizeof *v, cmp_small);
    char name[96];
    for (size_t i = 0, j; i < n; i = j) {
        uint64_t bytes = 0;
        for (j = i; j < n && v[j].at == v[i].at && v[j].cat == v[i].cat; j++)
            bytes += v[j].value;
        snprintf(name, sizeof name, "[%s: %zu smaller stack%s]", category_name((category)v[i].cat),
                 j - i, j - i == 1 ? "" : "s");
        uint32_t id = intern(t, name);
        if (t->oom)
            break;
        fprintf(out, ",[%d,%u,%" PRIu64 ",%d]", v[i].at, id, bytes, v[i].cat);
        (*k)++;
    }
    free(v);
}

/* emit: the tree from its root (pre-order, so a parent precedes its children), nodes under
 * min bytes left out (emit_small then draws their bytes) */
static void emit(FILE *out, ftree *t, uint64_t min, int32_t *k)
{
    int32_t *stack = malloc((t->len + 1) * sizeof *stack); /* every node is pushed once */
    size_t sp = 0;
    if (!stack)
        return;
    stack[sp++] = 0;
    while (sp) {
        int32_t c = stack[--sp];
        fnode *n = &t->n[c];
        if (c && n->value < min)
            continue;
        n->out = (*k)++;
        fprintf(out, "%s[%d,%u,%" PRIu64 ",%d]", n->out ? "," : "", c ? t->n[n->parent].out : -1,
                n->name, n->value, n->cat);
        for (int32_t ch = n->child; ch >= 0; ch = t->n[ch].next)
            stack[sp++] = ch;
    }
    free(stack);
    emit_small(out, t, k);
}

void html_flame_data(FILE *out, replay_result *r)
{
    ftree t = {0};
    int32_t k = 0;
    tree_build(&t, r);
    fputs(",\"flame\":{\"nodes\":[", out);
    if (!t.oom)
        emit(out, &t, t.n[0].value / 4000 + 1, &k);
    fputs("],\"names\":[", out);
    for (size_t i = 0; i < t.nnames; i++) {
        fputs(i ? "," : "", out);
        jsonw_cstr(out, t.names[i]);
        free(t.names[i]);
    }
    fputs("]}", out);
    free(t.names);
    free(t.hash);
    free(t.n);
}
