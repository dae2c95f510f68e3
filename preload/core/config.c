/* config.c — the preload's configuration: the VRAMTRACE_* environment variables, parsed once
 * (no allocation) into a vt__config. The README's table documents every variable.
 * A value that is not one the variable takes (a number out of its range, a flag other than 0 or
 * 1, an unknown stack mode) is the default with one warning, the value escaped; %r of the
 * output template becomes $RANK in safe file-name characters. A value past its room is never
 * cut in silence: an output name is refused (output_long: writer.c says so), a manifest name is
 * none, a card name keeps its whole characters that fit, each with a warning. Interface:
 * config.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "quietio.h"
#include "vramtrace/env.h"
#include "vramtrace/trace_format.h"

vt__config vt__config_g; /* (config.h: read through vt__config_get) */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* The settings' variables as the process started (env_take, from a constructor, before main):
 * read at the first CUDA call, they were whatever the program had left of its environment by
 * then (a launcher that cleared it traced into ./vramtrace.PID.vt, unlisted, run saying no CUDA
 * allocation was made). Copied, not pointed to: a program may write over its first environment
 * (setproctitle). SNAP_CAP is past every field's room, so a value too long is still said so. */
#define SNAP_CAP 4200
static const char *const snap_names[] = {
    VT_ENV_DISABLE,   VT_ENV_STACKS,    VT_ENV_STACK_DEPTH, VT_ENV_CARD_BYTES,
    VT_ENV_CARD_NAME, VT_ENV_SAMPLE_MS, VT_ENV_FREE_STACKS, VT_ENV_TORCH_TRACKER,
    VT_ENV_MAX_SIZE,  VT_ENV_COMPRESS,  VT_ENV_OUTPUT,      VT_ENV_MANIFEST,
};
#define NSNAP (sizeof snap_names / sizeof snap_names[0])
static char snap_val[NSNAP][SNAP_CAP];
static unsigned char snap_set[NSNAP];
static int snap_taken;

static void env_take(void)
{
    for (size_t i = 0; i < NSNAP; i++) {
        const char *v = getenv(snap_names[i]);
        snap_set[i] = v != NULL;
        size_t n = v ? strnlen(v, SNAP_CAP - 1) : 0;
        memcpy(snap_val[i], v ? v : "", n);
        snap_val[i][n] = '\0';
    }
    snap_taken = 1;
}

/* env: a setting's value as the process started (getenv before that) */
static const char *env(const char *name)
{
    for (size_t i = 0; snap_taken && i < NSNAP; i++)
        if (!strcmp(snap_names[i], name))
            return snap_set[i] ? snap_val[i] : NULL;
    return getenv(name);
}

const char *vt__config_setting_name(size_t i)
{
    return i < NSNAP ? snap_names[i] : NULL;
}

const char *vt__config_setting_env(size_t i)
{
    return i < NSNAP ? env(snap_names[i]) : NULL;
}

/* vt__config_escape: s made safe to print into out (cap >= 8): printable ASCII as is, a
 * backslash doubled, every other byte \xHH (no escape code from the environment reaches a
 * terminal); cut with "..." past cap. Returns out. */
char *vt__config_escape(const char *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        size_t need = c == '\\' ? 2 : c >= 0x20 && c < 0x7f ? 1 : 4;
        if (n + need + 4 > cap) {
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }
        if (c == '\\') {
            out[n++] = '\\';
            out[n++] = '\\';
        } else if (need == 1) {
            out[n++] = (char)c;
        } else {
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
    return out;
}

/* warn: one line on stderr for a value that is not used (config_load runs once per process),
 * the value escaped; never a signal (a closed stderr pipe). */
static void warn(const char *name, const char *value, const char *expected, const char *def)
{
    char esc[200];
    vt__quiet_stderr("vramtrace: %s=%s is not %s; using %s\n", name,
                     vt__config_escape(value, esc, sizeof esc), expected, def);
}

/* env_u64: the value of `name`, a plain decimal number in [min, max]; def when unset or empty;
 * def and one warning when it is anything else (a sign, letters, spaces, out of the range,
 * past 2^64). */
static uint64_t env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max,
                        const char *def_text)
{
    const char *s = env(name);
    if (!s || !*s)
        return def;
    uint64_t v = 0;
    int ok = 1;
    for (const char *p = s; *p && ok; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            ok = 0;
        else
            v = v * 10 + d;
    }
    if (ok && v >= min && v <= max)
        return v;
    char expected[96];
    snprintf(expected, sizeof expected, "a whole number from %llu to %llu", (unsigned long long)min,
             (unsigned long long)max);
    warn(name, s, expected, def_text);
    return def;
}

/* env_flag: `name` set to 1 or 0; def when unset or empty; def and one warning for anything
 * else ("false", "yes", "01": a value that does not say 0 or 1 is never guessed). */
static int env_flag(const char *name, int def)
{
    const char *s = env(name);
    if (!s || !*s)
        return def;
    if (!strcmp(s, "0") || !strcmp(s, "1"))
        return s[0] == '1';
    warn(name, s, "0 or 1", def ? "1" : "0");
    return def;
}

/* parse_stacks: VRAMTRACE_STACKS value -> VT_STACKS_* bits; unset -> all; a name that is not
 * a stack mode (include/vramtrace/env.h) -> all, with one warning. */
static int parse_stacks(const char *s)
{
    if (!s || !*s)
        return VT_STACKS_NATIVE | VT_STACKS_PYTHON;
#define VT_STACK_MODE_MATCH(name, bits)                                                            \
    if (!strcmp(s, name))                                                                          \
        return bits;
    VT_STACK_MODES(VT_STACK_MODE_MATCH)
#undef VT_STACK_MODE_MATCH
    warn(VT_ENV_STACKS, s, "all, native, python or none", VT_STACKS_NAME_ALL);
    return VT_STACKS_NATIVE | VT_STACKS_PYTHON;
}

/* copy_env: the value of name (def when unset or empty) into dst; 0, or -1 when it does not fit
 * cap: then dst holds its first bytes that do (a whole UTF-8 character last) and the caller
 * says so (a value cut in silence had named another file). */
static int copy_env(char *dst, size_t cap, const char *name, const char *def)
{
    const char *s = env(name);
    if (!s || !*s)
        s = def;
    size_t n = strlen(s);
    int cut = n >= cap;
    if (cut)
        for (n = cap - 1; n && ((unsigned char)s[n] & 0xc0) == 0x80;)
            n--; /* (s[n], the first byte left out, is not inside a character) */
    memcpy(dst, s, n);
    dst[n] = '\0';
    return cut ? -1 : 0;
}

/* safe_name_char: what a value spliced into a file name may hold as is. */
static int safe_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

/* vt__config_safe_name: `value` made a safe part of a file name into out (cap >= 2): at most
 * 16 characters of [A-Za-z0-9._-], anything else '_', and a leading '.' '_' (so never "." or
 * ".."); an empty value gives def. Returns out. */
char *vt__config_safe_name(const char *value, const char *def, char *out, size_t cap)
{
    const char *s = value && *value ? value : def;
    size_t n = 0;
    for (; s[n] && n < 16 && n + 1 < cap; n++)
        out[n] = safe_name_char(s[n]) ? s[n] : '_';
    out[n] = '\0';
    if (out[0] == '.')
        out[0] = '_';
    return out;
}

/* expand_rank: the output template with each %r replaced by $RANK made safe (or "0"); %% is
 * kept for the writer, which expands %p and %%. So RANK=../../x names a file, not a place.
 * 0, or -1 when the name does not fit cap. */
static int expand_rank(char *tmpl, size_t cap)
{
    char rank[17], out[sizeof vt__config_g.output];
    vt__config_safe_name(getenv("RANK"), "0", rank, sizeof rank);
    size_t n = 0, rl = strlen(rank);
    for (const char *s = tmpl; *s; s++) {
        int r = s[0] == '%' && s[1] == 'r', pct = s[0] == '%' && s[1] == '%';
        size_t need = r ? rl : pct ? 2 : 1;
        if (n + need >= sizeof out || n + need >= cap)
            return -1;
        memcpy(out + n, r ? rank : s, need); /* $RANK, %% kept for the writer, or a character */
        n += need;
        s += r || pct;
    }
    out[n] = '\0';
    snprintf(tmpl, cap, "%s", out);
    return 0;
}

/* set in a fork child of a multithreaded parent (vt__config_fork_child); inherited by its own
 * children, ended by an exec (a new image starts with it clear) */
static int g_fork_threaded;

/* apply_fork: in such a child the dynamic loader's lock may be held for ever by a thread that
 * is not there: nothing may take it (loader_unsafe), so native frames are off; the trace says
 * so (CONFIG: the NATIVE bit clear, VT_CONFIG_NATIVE_OFF_FORK). */
static void apply_fork(vt__config *c)
{
    if (!g_fork_threaded)
        return;
    c->loader_unsafe = 1;
    if (c->stack_mode & VT_STACKS_NATIVE) {
        c->stack_mode &= ~VT_STACKS_NATIVE;
        c->native_off_fork = 1;
    }
}

static void config_load(void)
{
    vt__config *c = &vt__config_g;
    c->disabled = env_flag(VT_ENV_DISABLE, 0);
    c->stack_mode = parse_stacks(env(VT_ENV_STACKS));
    c->stack_depth = (int)env_u64(VT_ENV_STACK_DEPTH, 32, 1, VT__STACK_DEPTH_MAX, "32");
    c->card_bytes = env_u64(VT_ENV_CARD_BYTES, 0, 0, VT__CARD_BYTES_MAX, "0 (no emulated card)");
    if (copy_env(c->card_name, sizeof c->card_name, VT_ENV_CARD_NAME, "") < 0)
        warn(VT_ENV_CARD_NAME, env(VT_ENV_CARD_NAME), "a name of at most 63 bytes",
             "its first characters that fit");
    c->sample_ms = (unsigned)env_u64(VT_ENV_SAMPLE_MS, 0, 0, VT__SAMPLE_MS_MAX, "0 (no sampler)");
    c->free_stacks = env_flag(VT_ENV_FREE_STACKS, 0);
    c->torch_tracker = env_flag(VT_ENV_TORCH_TRACKER, 1);
    c->max_size = env_u64(VT_ENV_MAX_SIZE, 0, 0, VT__MAX_SIZE_MAX, "0 (no bound)");
    if (c->max_size && c->max_size < VT_MAX_SIZE_MIN) { /* run refuses less; set by hand: */
        char min[32];                                   /* the smallest bound, said */
        snprintf(min, sizeof min, "%llu (the smallest bound)", (unsigned long long)VT_MAX_SIZE_MIN);
        warn(VT_ENV_MAX_SIZE, env(VT_ENV_MAX_SIZE), "0 or at least the smallest bound", min);
        c->max_size = VT_MAX_SIZE_MIN;
    }
    c->compress = env_flag(VT_ENV_COMPRESS, c->max_size ? 1 : 0);
    c->output_long = copy_env(c->output, sizeof c->output, VT_ENV_OUTPUT, "vramtrace.%p.vt") < 0 ||
                     expand_rank(c->output, sizeof c->output) < 0;
    if (copy_env(c->manifest, sizeof c->manifest, VT_ENV_MANIFEST, "") < 0) {
        warn(VT_ENV_MANIFEST, env(VT_ENV_MANIFEST), "a file name of at most 4095 bytes",
             "none (no trace is listed)");
        c->manifest[0] = '\0';
    }
    apply_fork(c);
}

int vt__config_loaded; /* (config.h) */

struct vt__stderr_id vt__stderr_id; /* (quietio.h) */

/* the program's stderr as the process starts, before any constructor of ours may warn */
__attribute__((constructor(101))) static void vt__config_stderr_init(void)
{
    vt__stderr_take();
    env_take();
}

/* vt__config_fork_child: see config.h. Applied now if the settings are loaded, else when they
 * are (never pthread_once from a fork handler). */
void vt__config_fork_child(int parent_threaded)
{
    if (!parent_threaded)
        return;
    g_fork_threaded = 1;
    if (__atomic_load_n(&vt__config_loaded, __ATOMIC_ACQUIRE))
        apply_fork(&vt__config_g);
}

static void config_load_once(void)
{
    config_load();
    __atomic_store_n(&vt__config_loaded, 1, __ATOMIC_RELEASE);
}

/* vt__config_load: see config.h (the caller's errno is kept: the hooks' guard relies on it). */
const vt__config *vt__config_load(void)
{
    int e = errno;
    pthread_once(&g_once, config_load_once);
    errno = e;
    return &vt__config_g;
}

void vt__config_reload(void)
{
    env_take(); /* (the tests' setenv: the environment as it is now) */
    config_load();
}
