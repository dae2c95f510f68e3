/* config.c — the preload's configuration: the VRAMTRACE_* environment variables, parsed once
 * (no allocation) into a vt__config. The README's table documents every variable.
 * Interface: config.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "vramtrace/trace_format.h"

static vt__config g_config;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* env_u64: an unsigned decimal value of `name`, or def when unset or not a number. */
static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    return (end && *end == '\0') ? (uint64_t)v : def;
}

/* env_flag: 1 when `name` is set to a non-empty value other than "0". */
static int env_flag(const char *name)
{
    const char *s = getenv(name);
    return s && *s && strcmp(s, "0") != 0;
}

/* parse_stacks: VRAMTRACE_STACKS value -> VT_STACKS_* bits; unknown -> native + Python. */
static int parse_stacks(const char *s)
{
    if (!s || !*s || !strcmp(s, "all"))
        return VT_STACKS_NATIVE | VT_STACKS_PYTHON;
    if (!strcmp(s, "none"))
        return VT_STACKS_NONE;
    if (!strcmp(s, "native"))
        return VT_STACKS_NATIVE;
    if (!strcmp(s, "python"))
        return VT_STACKS_PYTHON;
    return VT_STACKS_NATIVE | VT_STACKS_PYTHON;
}

static void copy_env(char *dst, size_t cap, const char *name, const char *def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        s = def;
    size_t n = strlen(s);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static void config_load(void)
{
    vt__config *c = &g_config;
    c->disabled = env_flag("VRAMTRACE_DISABLE");
    c->stack_mode = parse_stacks(getenv("VRAMTRACE_STACKS"));
    uint64_t depth = env_u64("VRAMTRACE_STACK_DEPTH", 32);
    c->stack_depth = depth < 1 ? 1 : depth > 128 ? 128 : (int)depth;
    c->card_bytes = env_u64("VRAMTRACE_CARD_BYTES", 0);
    copy_env(c->card_name, sizeof c->card_name, "VRAMTRACE_CARD_NAME", "");
    uint64_t ms = env_u64("VRAMTRACE_SAMPLE_MS", 0);
    c->sample_ms = ms > 3600000 ? 3600000 : (unsigned)ms;
    c->free_stacks = env_flag("VRAMTRACE_FREE_STACKS");
    copy_env(c->output, sizeof c->output, "VRAMTRACE_OUTPUT", "vramtrace.%p.vt");
    copy_env(c->manifest, sizeof c->manifest, "VRAMTRACE_MANIFEST", "");
}

static int g_loaded;

static void config_load_once(void)
{
    config_load();
    __atomic_store_n(&g_loaded, 1, __ATOMIC_RELEASE);
}

const vt__config *vt__config_get(void)
{
    if (VT__UNLIKELY(!__atomic_load_n(&g_loaded, __ATOMIC_ACQUIRE)))
        pthread_once(&g_once, config_load_once);
    return &g_config;
}

void vt__config_reload(void)
{
    config_load();
}
