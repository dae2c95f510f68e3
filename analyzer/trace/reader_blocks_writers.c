/* reader_blocks_writers.c — each writer's latest block (reader_blocks_writers.h). Keys are the
 * trace's writer numbers: hashed under the process's seed (hashseed.h). */
#include "reader_blocks_writers.h"

#include <stdlib.h>

#include "hashseed.h"

wlast *writers_at(const writers *w, uint32_t writer)
{
    size_t mask = w->cap - 1, j = (size_t)hashseed_mix(writer) & mask;
    while (w->e[j].used && w->e[j].writer != writer)
        j = (j + 1) & mask;
    return &w->e[j];
}

wlast *writers_get(writers *w, uint32_t writer)
{
    if ((w->n + 1) * 2 > w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 64, oc = w->cap;
        wlast *n = calloc(nc, sizeof *n), *o = w->e;
        if (!n)
            return NULL;
        w->e = n, w->cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (o[i].used)
                *writers_at(w, o[i].writer) = o[i];
        free(o);
    }
    wlast *e = writers_at(w, writer);
    if (!e->used)
        *e = (wlast){0, writer, 1, 0}, w->n++;
    return e;
}

void writers_free(writers *w)
{
    free(w->e);
    w->e = NULL;
    w->n = w->cap = 0;
}
