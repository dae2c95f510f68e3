/* livemap.c — the replay's live set (livemap.h): open addressing, linear probing,
 * backward-shift deletion, 64-byte entries on 64-byte boundaries. */
#include "livemap.h"

#include <stdlib.h>
#include <string.h>

static int grow(livemap *m)
{
    uint64_t ncap = m->cap ? m->cap * 2 : 1024;
    /* 64-byte entries on 64-byte boundaries: one cache line per probe */
    livemap_entry *n = aligned_alloc(64, ncap * sizeof *n);
    if (!n)
        return -1;
    memset(n, 0, ncap * sizeof *n);
    for (uint64_t i = 0; i < m->cap; i++) {
        if (!m->e[i].used)
            continue;
        uint64_t j = m->e[i].hash & (ncap - 1);
        while (n[j].used)
            j = (j + 1) & (ncap - 1);
        n[j] = m->e[i];
    }
    free(m->e);
    m->e = n;
    m->cap = ncap;
    return 0;
}

livemap_entry *livemap_find(livemap *m, uint64_t addr, unsigned space)
{
    if (!m->cap)
        return NULL;
    for (uint64_t j = livemap_mix(addr, space) & (m->cap - 1); m->e[j].used;
         j = (j + 1) & (m->cap - 1))
        if (m->e[j].addr == addr && m->e[j].space == space)
            return &m->e[j];
    return NULL;
}

livemap_entry *livemap_put(livemap *m, uint64_t addr, unsigned space, int *replaced)
{
    *replaced = 0;
    if ((m->n + 1) * 2 >= m->cap && grow(m) < 0)
        return NULL;
    uint32_t h = (uint32_t)livemap_mix(addr, space);
    uint64_t j = h & (m->cap - 1);
    for (; m->e[j].used; j = (j + 1) & (m->cap - 1))
        if (m->e[j].addr == addr && m->e[j].space == space) {
            *replaced = 1;
            return &m->e[j];
        }
    m->n++;
    memset(&m->e[j], 0, sizeof m->e[j]);
    m->e[j].hash = h;
    m->e[j].used = 1;
    m->e[j].addr = addr;
    m->e[j].space = (uint8_t)space;
    return &m->e[j];
}

void livemap_del(livemap *m, livemap_entry *e)
{
    uint64_t i = (uint64_t)(e - m->e), mask = m->cap - 1;
    m->e[i].used = 0;
    m->n--;
    for (uint64_t j = (i + 1) & mask; m->e[j].used; j = (j + 1) & mask) {
        uint64_t home = m->e[j].hash & mask;
        /* move j back to i if its home is not in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->e[i] = m->e[j];
            m->e[j].used = 0;
            i = j;
        }
    }
}
