/* card.c — card emulation (`vramtrace run --card 12GiB`): the process behaves as if each
 * device had VRAMTRACE_CARD_BYTES. Device usage = contexts + live device allocations (linear,
 * async, managed, VMM physical handles, kernel images) + reservations of calls in flight, kept
 * with a lock-protected open-addressing map (space, key) -> (device, size) so a release finds
 * its size. Interface: card.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "card.h"
#include "config.h"

#define MAX_DEV 64

typedef struct slot {
    uint64_t key; /* 0 = empty, UINT64_MAX = deleted */
    uint32_t space;
    int32_t device;
    uint64_t size;
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *g_map;
static uint64_t g_cap, g_fill;
static uint64_t g_used[MAX_DEV];

static uint64_t hash(int space, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)space << 56)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* grow: rehashes the live entries into a table sized for them (tombstones dropped), doubling
 * only when the live entries fill more than a quarter; g_fill becomes the live count. Caller
 * holds g_lock. Result 0, or -1 (table unchanged) when out of memory. */
static int grow(void)
{
    uint64_t live = 0;
    for (uint64_t i = 0; i < g_cap; i++)
        live += g_map[i].key && g_map[i].key != UINT64_MAX;
    uint64_t ncap = g_cap ? g_cap : 4096;
    while (live * 4 >= ncap)
        ncap *= 2;
    slot *n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    for (uint64_t i = 0; i < g_cap; i++) {
        slot *s = &g_map[i];
        if (!s->key || s->key == UINT64_MAX)
            continue;
        uint64_t j = hash((int)s->space, s->key) & (ncap - 1);
        while (n[j].key)
            j = (j + 1) & (ncap - 1);
        n[j] = *s;
    }
    free(g_map);
    g_map = n;
    g_cap = ncap;
    g_fill = live;
    return 0;
}

/* find: the slot holding (space, key), or NULL. Caller holds g_lock. */
static slot *find(int space, uint64_t key)
{
    if (!g_cap)
        return NULL;
    for (uint64_t j = hash(space, key) & (g_cap - 1); g_map[j].key; j = (j + 1) & (g_cap - 1))
        if (g_map[j].key == key && g_map[j].space == (uint32_t)space)
            return &g_map[j];
    return NULL;
}

/* fits: used + size stays within cap (no wrap). Caller holds g_lock. */
static int fits(int d, uint64_t size, uint64_t cap)
{
    return g_used[d] + size <= cap && g_used[d] + size >= g_used[d];
}

/* vt__card_reserve: the check and the claim are one step under the lock, so the bytes of
 * allocations in flight count: threads racing for the last bytes never pass the card. */
int vt__card_reserve(int device, uint64_t size)
{
    uint64_t cap = vt__config_get()->card_bytes;
    if (!cap)
        return 1;
    int d = device < 0 || device >= MAX_DEV ? 0 : device;
    pthread_mutex_lock(&g_lock);
    int ok = fits(d, size, cap);
    if (ok)
        g_used[d] += size;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

void vt__card_unreserve(int device, uint64_t size)
{
    int d = device < 0 || device >= MAX_DEV ? 0 : device;
    pthread_mutex_lock(&g_lock);
    g_used[d] -= size <= g_used[d] ? size : g_used[d];
    pthread_mutex_unlock(&g_lock);
}

/* vt__card_commit: the reservation becomes the entry; an entry already present for
 * (space, key) — its release was never seen — is replaced, so the key is counted once. Keys 0
 * and UINT64_MAX are not accounted (their reservation is dropped). */
void vt__card_commit(int device, int space, uint64_t key, uint64_t reserved, uint64_t size)
{
    int d = device < 0 || device >= MAX_DEV ? 0 : device;
    pthread_mutex_lock(&g_lock);
    g_used[d] -= reserved <= g_used[d] ? reserved : g_used[d];
    if (!key || key == UINT64_MAX) {
        pthread_mutex_unlock(&g_lock);
        return;
    }
    slot *old = find(space, key);
    if (old) {
        g_used[old->device] -= old->size;
        old->device = d;
        old->size = size;
        g_used[d] += size;
        pthread_mutex_unlock(&g_lock);
        return;
    }
    if ((g_fill + 1) * 4 >= g_cap * 3 && grow() < 0) {
        g_used[d] += size; /* cannot remember it: counted, never released (conservative) */
        pthread_mutex_unlock(&g_lock);
        return;
    }
    uint64_t j = hash(space, key) & (g_cap - 1);
    while (g_map[j].key && g_map[j].key != UINT64_MAX)
        j = (j + 1) & (g_cap - 1);
    if (!g_map[j].key)
        g_fill++;
    g_map[j] = (slot){key, (uint32_t)space, d, size};
    g_used[d] += size;
    pthread_mutex_unlock(&g_lock);
}

/* vt__card_release: the size committed for (space, key), now no longer in use; 0 if unknown. */
uint64_t vt__card_release(int space, uint64_t key)
{
    uint64_t size = 0;
    pthread_mutex_lock(&g_lock);
    slot *s = find(space, key);
    if (s) {
        size = s->size;
        g_used[s->device] -= size;
        s->key = UINT64_MAX;
    }
    pthread_mutex_unlock(&g_lock);
    return size;
}

uint64_t vt__card_used(int device)
{
    int d = device < 0 || device >= MAX_DEV ? 0 : device;
    pthread_mutex_lock(&g_lock);
    uint64_t u = g_used[d];
    pthread_mutex_unlock(&g_lock);
    return u;
}

void vt__card_meminfo(int device, uint64_t *free_b, uint64_t *total_b)
{
    uint64_t cap = vt__config_get()->card_bytes;
    if (!cap)
        return;
    uint64_t used = vt__card_used(device);
    uint64_t f = used < cap ? cap - used : 0;
    if (*free_b < f)
        f = *free_b; /* never more than the real card has free */
    *free_b = f;
    if (cap < *total_b) /* a card larger than the device: the device's total (its free is) */
        *total_b = cap;
}

void vt__card_fork_child(void)
{
    pthread_mutex_init(&g_lock, NULL);
    free(g_map);
    g_map = NULL;
    g_cap = g_fill = 0;
    for (int i = 0; i < MAX_DEV; i++)
        g_used[i] = 0;
}

__attribute__((constructor)) static void vt__card_init(void)
{
    pthread_atfork(NULL, NULL, vt__card_fork_child);
}
