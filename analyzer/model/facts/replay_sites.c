/* replay_sites.c — how a report names a stack of the replay: the program's site
 * ("file:line function") and the native operation ("at::_ops::mm (libtorch_cpu.so)"),
 * escaped for a terminal. The stacks are tables.c's; the phases' site rule is phases.c's.
 * A stack's frames are looked at one at a time (tables_frame_of), in the order
 * tables_resolve_stack gives them, without resolving the whole stack into one array. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "hashseed.h"
#include "replay.h"

/* site_frame: the frame phases_site names of stack id (into buf unless the tables keep it), NULL
 * when none (phases_site_step's walk over its Python frames, which reads their files alone: the
 * frame named is the only one whose line is looked up; the native frames keep their order
 * around the Python ones). */
static const tables_frame *site_frame(tables *t, uint32_t id, tables_frame *buf, phases_memo *memo)
{
    const tables_stack *st = id ? tables_stack_get(t, id) : NULL;
    if (!st)
        return NULL;
    unsigned total = st->n_native + st->n_python;
    phases_site_walk w = PHASES_SITE_WALK_INIT;
    w.memo = memo;
    for (unsigned i = st->n_native; i < total; i++)
        if (phases_site_step(&w, tables_code_frame(t, st->frames[i], buf), (long)i))
            return tables_frame_of(t, st->frames[w.pick], TABLES_FRAME_PYTHON, buf);
    if (w.first_py >= 0)
        return tables_frame_of(t, st->frames[w.first_py], TABLES_FRAME_PYTHON, buf);
    return NULL;
}

static const char *native_text(tables *t, uint32_t stack_id, char *buf, size_t len,
                               int with_source);

const char *replay_site_text(replay_result *r, uint32_t stack_id, char *buf, size_t len)
{
    return replay_site_text_in(r->t, &r->site_memo, stack_id, buf, len);
}

const char *replay_site_text_in(tables *t, phases_memo *memo, uint32_t stack_id, char *buf,
                                size_t len)
{
    tables_frame fb;
    const tables_frame *f = stack_id ? site_frame(t, stack_id, &fb, memo) : NULL;
    /* no Python frame: the operation the native frames name (replay_native_text's), not the
     * innermost frame, which is the allocator's own (its trace hook, its malloc) for every
     * tensor */
    if (!f && stack_id && native_text(t, stack_id, buf, len, 1)[0])
        return buf;
    if (!f) {
        snprintf(buf, len, "%s", stack_id ? "(no named frame)" : "(no stack)");
        return buf;
    }
    char raw[1024];
    size_t m = tables_frame_label(t, f, raw, sizeof raw);
    escape_term(raw, m < sizeof raw ? m : sizeof raw - 1, buf, len);
    return buf;
}

/* allocator_frame: f is in PyTorch's caching allocator's library (its malloc, its trace hook)
 * or this tool's: no operation of the program, the innermost frames of every tensor (a CUDA
 * runtime call is one: cudaMalloc, the context's cudaFree) */
static int allocator_frame(const tables_frame *f)
{
    static const char *const libs[] = {"libc10_cuda.", "libvramtrace."};
    const char *b = f->module ? f->module->basename : NULL;
    for (size_t i = 0; b && i < sizeof libs / sizeof libs[0]; i++)
        if (!strncmp(b, libs[i], strlen(libs[i])))
            return 1;
    return 0;
}

/* what native_pick reads in a frame's name, looked at once for each name a stack holds (a
 * crafted stack of 65,535 frames on one 8 MiB name had been read three times a frame: report
 * ran for minutes); a name is the tables' own, the same pointer in every frame of its symbol */
enum { PICK_EMPTY = 1, PICK_OP = 2, PICK_NATIVE = 4 };
typedef struct pick_seen {
    const char *fn;
    unsigned bits;
} pick_seen;

static unsigned name_bits(const char *fn)
{
    if (strstr(fn, "empty")) /* the allocation primitive itself names no operation */
        return PICK_EMPTY;
    return (strstr(fn, "at::_ops::") ? PICK_OP : 0u) |
           (strstr(fn, "at::native::") ? PICK_NATIVE : 0u);
}

/* pick_bits: name_bits of fn, from seen[0..cap) (cap a power of two, at least twice the names
 * put in it) when fn was looked at before */
static unsigned pick_bits(pick_seen *seen, size_t cap, const char *fn)
{
    size_t j = (size_t)hashseed_mix((uintptr_t)fn) & (cap - 1);
    while (seen[j].fn && seen[j].fn != fn)
        j = (j + 1) & (cap - 1);
    if (!seen[j].fn)
        seen[j] = (pick_seen){fn, name_bits(fn)};
    return seen[j].bits;
}

/* native_pick: the native frame that names stack id's operation, innermost first: an
 * at::_ops:: one, else an at::native:: one, else any with a symbol outside the allocator's
 * libraries (allocator_frame; one in them where none is), skipping the allocation primitive
 * (empty*) for the first two; its index among the native frames, or -1. */
static long native_pick(tables *t, const tables_stack *st)
{
    long op = -1, native = -1, any = -1, inner = -1;
    tables_frame fb;
    pick_seen few[128] = {{0}}, *seen = few;
    size_t cap = sizeof few / sizeof few[0];
    while (cap < 2 * (size_t)st->n_native)
        cap *= 2;
    if (cap > sizeof few / sizeof few[0] && !(seen = calloc(cap, sizeof *seen)))
        return -1; /* (out of memory: mem.h says so) */
    for (unsigned i = 0; i < st->n_native && op < 0; i++) {
        const tables_frame *f = tables_frame_of(t, st->frames[i], TABLES_FRAME_NATIVE, &fb);
        const char *fn = f->function;
        if (!fn || !fn[0])
            continue;
        if (inner < 0)
            inner = (long)i;
        if (any < 0 && !allocator_frame(f))
            any = (long)i;
        unsigned b = pick_bits(seen, cap, fn);
        if (b & PICK_OP)
            op = (long)i;
        if (native < 0 && (b & PICK_NATIVE))
            native = (long)i;
    }
    if (seen != few)
        free(seen);
    return op >= 0 ? op : native >= 0 ? native : any >= 0 ? any : inner;
}

/* native_text: replay_native_text, with the frame's file:line from debug info when with_source
 * (the site of a stack without Python frames: the program's own function, where it was) */
static const char *native_text(tables *t, uint32_t stack_id, char *buf, size_t len, int with_source)
{
    const tables_stack *st = stack_id ? tables_stack_get(t, stack_id) : NULL;
    long pick = st ? native_pick(t, st) : -1;
    buf[0] = '\0';
    if (pick < 0)
        return buf;
    tables_frame fb;
    const tables_frame *f = tables_frame_of(t, st->frames[pick], TABLES_FRAME_NATIVE, &fb);
    const char *fn = f->function;
    const char *paren = memchr(fn, '(', strnlen(fn, 401)); /* the name without its arguments */
    size_t fl = paren ? (size_t)(paren - fn) : strnlen(fn, 401);
    char raw[768];
    int n = snprintf(raw, sizeof raw, "%.*s (%s)", (int)(fl < 400 ? fl : 400), fn,
                     f->module ? f->module->basename : "?");
    int line;
    const char *src = with_source ? tables_frame_source(t, f, &line) : ""; /* (debug info) */
    if (n > 0 && (size_t)n < sizeof raw && src[0])
        snprintf(raw + n, sizeof raw - (size_t)n, line > 0 ? " at %.200s:%d" : " at %.200s", src,
                 line);
    escape_term(raw, strlen(raw), buf, len);
    return buf;
}

const char *replay_native_text(replay_result *r, uint32_t stack_id, char *buf, size_t len)
{
    return native_text(r->t, stack_id, buf, len, 0);
}
