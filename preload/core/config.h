/* config.h — config.c's interface: the VRAMTRACE_* environment variables (names in
 * include/vramtrace/env.h, documented in the README's table), parsed once into a vt__config.
 * config.c calls nothing else of the preload. */
#ifndef VT_PRELOAD_CONFIG_H
#define VT_PRELOAD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "attr.h"

/* the largest values the variables take (README's table) */
#define VT__STACK_DEPTH_MAX 128
#define VT__SAMPLE_MS_MAX 3600000u
#define VT__MAX_SIZE_MAX (1ull << 50)
#define VT__CARD_BYTES_MAX (1ull << 62) /* 4 EiB: the analyzer counts no more live bytes */

typedef struct vt__config {
    int disabled;        /* VRAMTRACE_DISABLE=1 */
    int stack_mode;      /* VT_STACKS_* bits, from VRAMTRACE_STACKS=none|native|python|all */
    int stack_depth;     /* VRAMTRACE_STACK_DEPTH, native frames, default 32, max 128 */
    uint64_t card_bytes; /* VRAMTRACE_CARD_BYTES, 0 = no emulation */
    char card_name[64];  /* VRAMTRACE_CARD_NAME */
    unsigned sample_ms;  /* VRAMTRACE_SAMPLE_MS, 0 = off */
    int free_stacks;     /* VRAMTRACE_FREE_STACKS=1: stacks on frees too */
    int torch_tracker;   /* VRAMTRACE_TORCH_TRACKER: 0 = do not attach, default 1 */
    uint64_t max_size;   /* VRAMTRACE_MAX_SIZE: bytes the trace file keeps to, 0 = no bound */
    int compress;        /* VRAMTRACE_COMPRESS: 1 = zstd chunks (the chunked layout), default:
                          * 1 when max_size is set, else 0 */
    char output[4096];   /* VRAMTRACE_OUTPUT template, default "vramtrace.%p.vt", %r expanded */
    int output_long;     /* it did not fit output (past 4095 bytes): no trace (writer.c) */
    char manifest[4096]; /* VRAMTRACE_MANIFEST: file to append each trace path to, "" = none
                          * (also for one too long: never the file its start names) */
    /* a fork child of a multithreaded parent (vt__config_fork_child): the dynamic loader's
     * lock may be held for ever, so nothing takes it (realsym.c walks the loaded objects
     * without it); native frames off, native_off_fork = 1 when they were asked for */
    int loader_unsafe;
    int native_off_fork;
} vt__config;

/* vt__config_get: the process's configuration, parsed on first call (no allocation) from the
 * VRAMTRACE_* variables as the process started (copied by a constructor: what the program does to
 * its environment after that moves no trace; RANK, for %r, is read then), errno kept. Inline: every
 * hook reads it several times (a call each had cost ~30 instructions an event); vt__config_g /
 * vt__config_loaded are config.c's, read only through here. */
extern __attribute__((visibility("hidden"))) vt__config vt__config_g;
extern __attribute__((visibility("hidden"))) int vt__config_loaded;
const vt__config *vt__config_load(void);
static inline const vt__config *vt__config_get(void)
{
    if (VT__LIKELY(__atomic_load_n(&vt__config_loaded, __ATOMIC_ACQUIRE)))
        return &vt__config_g;
    return vt__config_load();
}
/* vt__config_fork_child: called first in a fork child (core/record.c's handler) with whether
 * the parent had other threads: then loader_unsafe and native frames off, until an exec. */
void vt__config_fork_child(int parent_threaded);
/* vt__config_reload: re-reads the environment as it is now (tests). Not thread-safe. */
void vt__config_reload(void);
/* vt__config_setting_name: the name of the i-th settings variable (VRAMTRACE_...), NULL past
 * the last; vt__config_setting_env: its value as the process started (the one its settings
 * were read from, whatever the program set or cleared since), NULL if it was unset. */
const char *vt__config_setting_name(size_t i);
const char *vt__config_setting_env(size_t i);
/* vt__config_escape: s made safe to print (printable ASCII, a backslash doubled, any other
 * byte \xHH), cut with "..." to fit cap (>= 8). Returns out. */
char *vt__config_escape(const char *s, char *out, size_t cap);
/* vt__config_safe_name: `value` made a safe part of a file name into out (cap >= 2): at most
 * 16 characters of [A-Za-z0-9._-], anything else '_', a leading '.' made '_' (never "." or
 * ".."); NULL or empty gives def. Returns out. */
char *vt__config_safe_name(const char *value, const char *def, char *out, size_t cap);

#endif
