/* flame.c — folded stacks of a snapshot (flame.h). Frames come as people read them from
 * stackview.c (on the tables' resolver, trace/tables.c); what is live comes from the replay
 * (model/replay.c). */
#include "flame.h"

#include <stdlib.h>
#include <string.h>

#include "categories.h"
#include "escape.h"
#include "mem.h"
#include "stackview.h"

/* sat_add: a + b, or UINT64_MAX when it would wrap (a crafted trace's sizes) */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int flame_cmp(const void *a, const void *b)
{
    const flame_row *x = a, *y = b;
    if (x->stack_id != y->stack_id)
        return x->stack_id < y->stack_id ? -1 : 1;
    return (int)x->category - (int)y->category;
}

/* flame_put: s as a terminal may show it (escape.h: controls and invalid bytes as \xNN, valid
 * UTF-8 kept: a non-ASCII name stays readable), the folded format's separator ';' made '_'. */
static void flame_put(FILE *out, const char *s)
{
    char buf[4 * 1024 + 1]; /* stackview_name's 1024 bytes, each escaped as at most 4 */
    escape_term(s, strlen(s), buf, sizeof buf);
    for (char *p = buf; *p; p++)
        fputc(*p == ';' ? '_' : *p, out);
}

flame_row *flame_rows(const replay_snapshot *snap, size_t *n_out)
{
    flame_row *rows = calloc(snap->n + 1, sizeof *rows);
    size_t n = 0;
    *n_out = 0;
    if (!rows)
        return NULL;
    for (size_t i = 0; i < snap->n; i++)
        rows[i] =
            (flame_row){snap->items[i].stack_id, snap->items[i].category, snap->items[i].size};
    qsort(rows, snap->n, sizeof *rows, flame_cmp);
    for (size_t i = 0; i < snap->n; i++) {
        if (n && rows[n - 1].stack_id == rows[i].stack_id &&
            rows[n - 1].category == rows[i].category)
            rows[n - 1].bytes = sat_add(rows[n - 1].bytes, rows[i].bytes);
        else if (rows[i].bytes)
            rows[n++] = rows[i];
    }
    *n_out = n;
    return rows;
}

uint64_t flame_write(FILE *out, replay_result *r, const replay_snapshot *snap, int *io_err)
{
    size_t n = 0;
    uint64_t total = 0;
    char buf[1024];
    flame_row *rows = flame_rows(snap, &n);
    stackview_frame *v = malloc(STACKVIEW_MAX * sizeof *v);
    if (!rows || !v) {
        free(rows);
        free(v);
        *io_err = 1;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        size_t nv = stackview_build(r->t, rows[i].stack_id, 0, v);
        if (!nv)
            fputs("[no stack];", out);
        for (size_t k = 0; k < nv; k++) {
            flame_put(out, stackview_name(r->t, &v[k], buf, sizeof buf));
            fputc(';', out);
        }
        fprintf(out, "[%s] %llu\n", category_key((category)rows[i].category),
                (unsigned long long)rows[i].bytes);
        total = sat_add(total, rows[i].bytes);
    }
    free(rows);
    free(v);
    if (ferror(out) || mem_failed()) /* a frame not resolved for want of memory: not an answer */
        *io_err = 1;
    return total;
}

const char *flame_note(replay_result *r, const replay_snapshot *snap, char *buf, size_t len)
{
    size_t n = 0;
    flame_row *rows = flame_rows(snap, &n);
    uint32_t *ids = calloc(n + 1, sizeof *ids);
    buf[0] = '\0';
    for (size_t i = 0; rows && ids && i < n; i++)
        ids[i] = rows[i].stack_id;
    if (rows && ids)
        stackview_unnamed_note(r->t, ids, n, buf, len);
    free(rows);
    free(ids);
    return buf;
}

int flame_all(const replay_result *r, replay_snapshot *out)
{
    const timeline *tl = r->tl;
    memset(out, 0, sizeof *out);
    if (!tl || !timeline_totals || tl->totals_lost ||
        !(out->items = calloc(tl->ntotals + 1, sizeof *out->items)))
        return -1;
    for (size_t i = 0; i < tl->captotals; i++) {
        const timeline_total *t = &tl->totals[i];
        if (t->bytes)
            out->items[out->n++] =
                (live_item){.size = t->bytes, .stack_id = t->stack_id, .category = t->category};
    }
    return 0;
}
