/* card.h — card.c's interface: card emulation (`vramtrace run --card 12GiB`). With
 * VRAMTRACE_CARD_BYTES set, the process behaves as if each device had that capacity. Calls
 * only config. Hooks reach it through call.h, never directly. */
#ifndef VT_PRELOAD_CARD_H
#define VT_PRELOAD_CARD_H

#include <stdint.h>

#include "config.h"

/* vt__card_enabled: a card is emulated (VRAMTRACE_CARD_BYTES); inline, asked on every event. */
static inline int vt__card_enabled(void)
{
    return vt__config_get()->card_bytes != 0;
}
/* vt__card_reserve: admission, atomic: 1 and `size` bytes counted as used on `device` when
 * they fit, else 0 and nothing changed (the caller returns the API's out-of-memory code
 * without calling the real function). Always 1 without emulation. Every 1 is followed by
 * vt__card_commit (the call succeeded) or vt__card_unreserve (it failed). */
int vt__card_reserve(int device, uint64_t size);
void vt__card_unreserve(int device, uint64_t size);
/* vt__card_commit / vt__card_release: account a successful allocation (replacing `reserved`
 * bytes reserved for it, 0 if none) / its release, keyed by (space, key) so a release finds
 * its size. */
void vt__card_commit(int device, int space, uint64_t key, uint64_t reserved, uint64_t size);
uint64_t vt__card_release(int space, uint64_t key);
/* vt__card_used: device bytes in use. */
uint64_t vt__card_used(int device);
/* vt__card_meminfo: rewrites (free, total) as the program should see them: total = the smaller
 * of the card and the device's total, free = the smaller of the device's free and the card less
 * what the process uses (so free <= total, and total - free is never more than is in use on a
 * card larger than the device: its device decides). */
void vt__card_meminfo(int device, uint64_t *free_b, uint64_t *total_b);
/* vt__card_fork_child: a fork child starts with no allocations of its own. */
void vt__card_fork_child(void);

#endif
