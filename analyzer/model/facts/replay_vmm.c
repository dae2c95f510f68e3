/* replay_vmm.c — physical memory handles (cuMemCreate) counted from their first cuMemMap, as
 * PyTorch counts reserved memory under expandable segments: its ExpandableSegment::map creates
 * every handle of an expansion first and, when one cannot be created (the card is full),
 * releases those made so far without ever mapping them. A handle waits here from its creation
 * to its first map (then the replay counts it, with its creation's stack) or to its release
 * (never counted: r->vmm_unmapped_*). Part of the one replay (replay_state.h). */
#include <stdlib.h>

#include "replay_state.h"

int replay_vmm_hold(state *s, const reader_event *ev)
{
    if (s->nvmm == s->capvmm) {
        size_t cap = s->capvmm ? s->capvmm * 2 : 64;
        reader_event *p = realloc(s->vmm, cap * sizeof *p);
        if (!p)
            return -1; /* counted at its creation instead (mem.h remembers the failure) */
        s->vmm = p;
        s->capvmm = cap;
    }
    s->vmm[s->nvmm++] = *ev;
    return 0;
}

/* find: the held handle h (the newest with that value), or -1 */
static long find(const state *s, uint64_t h)
{
    for (size_t i = s->nvmm; i-- > 0;)
        if (s->vmm[i].addr == h)
            return (long)i;
    return -1;
}

int replay_vmm_take(state *s, uint64_t h, reader_event *out)
{
    long i = find(s, h);
    if (i < 0)
        return 0;
    *out = s->vmm[i];
    s->vmm[i] = s->vmm[--s->nvmm];
    return 1;
}

int replay_vmm_release(state *s, uint64_t h)
{
    long i = find(s, h);
    if (i < 0)
        return 0;
    s->r->vmm_unmapped_handles++;
    s->r->vmm_unmapped_bytes += s->vmm[i].size;
    s->vmm[i] = s->vmm[--s->nvmm];
    return 1;
}

void replay_vmm_end(state *s)
{
    for (size_t i = 0; i < s->nvmm; i++) { /* created, never mapped nor released */
        s->r->vmm_unmapped_handles++;
        s->r->vmm_unmapped_bytes += s->vmm[i].size;
    }
    free(s->vmm);
    s->vmm = NULL;
    s->nvmm = s->capvmm = 0;
}
