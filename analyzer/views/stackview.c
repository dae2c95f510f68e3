/* stackview.c — a recorded stack as people read it (stackview.h): the Python spine, CPython's
 * frames folded away, the operation's native frames below, runs of unnamed frames collapsed,
 * names made short (no C++ argument lists, no site-packages prefix). */
#include "stackview.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "symbolize.h"

static int starts(const char *s, const char *prefix)
{
    return s && !strncmp(s, prefix, strlen(prefix));
}

static const char *base_of(const tables_frame *f)
{
    return f->module && f->module->basename ? f->module->basename : "";
}

int stackview_interpreter(const tables_frame *f)
{
    if (f->kind != TABLES_FRAME_NATIVE)
        return 0;
    if (f->module)
        return starts(base_of(f), "libpython") || starts(base_of(f), "python");
    return starts(f->function, "_Py") || starts(f->function, "Py");
}

/* entry: the program's or a thread's first frames, kept as roots */
static int entry(const tables_frame *f)
{
    static const char *const names[] = {
        "_start", "main", "__libc_start_main", "clone", "clone3", "start_thread", NULL};
    for (const char *const *n = names; *n; n++)
        if (!strcmp(f->function, *n))
            return 1;
    return 0;
}

/* runtime: the C and C++ runtimes' frames that start a thread (clone, start_thread, the
 * std::thread trampoline): the thread's plumbing, not the operation */
static int runtime(const tables_frame *f)
{
    const char *b = base_of(f);
    return f->kind == TABLES_FRAME_NATIVE &&
           (starts(b, "libc.so") || starts(b, "libc-") || starts(b, "libpthread") ||
            starts(b, "libstdc++") || starts(b, "libgcc_s") || starts(b, "ld-linux"));
}

static int unnamed(const tables_frame *f)
{
    return f->kind == TABLES_FRAME_NATIVE && !f->function[0];
}

/* put: appends frame f (collapsing a run of unnamed frames of one module unless every) */
static void put(stackview_frame *out, size_t *n, const tables_frame *f, int every)
{
    stackview_frame *last = *n ? &out[*n - 1] : NULL;
    if (*n >= STACKVIEW_MAX)
        return;
    if (!every && last && last->f && unnamed(f) && unnamed(last->f) && f->module &&
        f->module == last->f->module) {
        last->run = last->run ? last->run + 1 : 2;
        return;
    }
    out[(*n)++] = (stackview_frame){f, NULL, 0};
}

static void mark(stackview_frame *out, size_t *n, const char *m, int every)
{
    if (!every && *n < STACKVIEW_MAX)
        out[(*n)++] = (stackview_frame){NULL, m, 0};
}

/* natives: fr[lo..hi) (innermost first, as recorded) appended outermost first; a run of
 * interpreter frames is one STACKVIEW_M_CPYTHON (entry frames kept), or left out (drop_py) */
static void natives(const tables_frame *fr, size_t lo, size_t hi, int drop_py, int every,
                    stackview_frame *out, size_t *n)
{
    int in_py = 0;
    for (size_t k = hi; k-- > lo;) {
        const tables_frame *f = &fr[k];
        if (stackview_interpreter(f) && !entry(f)) {
            if (!drop_py && !in_py)
                mark(out, n, STACKVIEW_M_CPYTHON, every);
            in_py = 1;
            if (every && !drop_py)
                put(out, n, f, every);
            continue;
        }
        in_py = 0;
        put(out, n, f, every);
    }
}

static size_t build_outer_first(tables *t, uint32_t stack_id, int every, stackview_frame *out)
{
    size_t nf = 0, n = 0, py_lo = 0, py_hi = 0;
    const tables_frame *fr = stack_id ? tables_resolve_stack(t, stack_id, &nf) : NULL;
    const tables_stack *st = stack_id ? tables_stack_get(t, stack_id) : NULL;
    const tables_config *cfg = tables_config_get(t);
    if (!fr || !nf)
        return 0;
    while (py_lo < nf && fr[py_lo].kind != TABLES_FRAME_PYTHON)
        py_lo++;
    for (size_t i = py_lo; i < nf; i++)
        if (fr[i].kind == TABLES_FRAME_PYTHON)
            py_hi = i + 1;
    /* cut: as many native frames as the capture keeps, and none is an entry frame */
    int cut = st && cfg && cfg->stack_depth && st->n_native >= cfg->stack_depth;
    for (size_t i = 0; cut && i < nf; i++)
        if (fr[i].kind == TABLES_FRAME_NATIVE && entry(&fr[i]))
            cut = 0;
    if (py_lo == nf) { /* no Python frame: the native stack as it is, CPython folded */
        if (cut)
            mark(out, &n, STACKVIEW_M_CUT, every);
        natives(fr, 0, nf, 0, every, out, &n);
        return n;
    }
    /* the spine's top is not the program's: said in every view, memory_viz's too (n is 0) */
    if (st && (st->flags & VT_STACKF_PY_CUT))
        out[n++] = (stackview_frame){NULL, STACKVIEW_M_PY_CUT, 0};
    for (size_t k = py_hi; k-- > py_lo;) /* the spine: the outermost Python frame first */
        put(out, &n, &fr[k], every);
    /* frames past the Python ones (py_hi..nf): the interpreter's and those between Python
     * frames, whose places the trace does not record: folded away. The native frames inside
     * the innermost interpreter frame (0..py_lo) are the operation's. When the native stack
     * holds no interpreter frame, it was cut, or it is another thread's (the capture lends the
     * main thread's Python frames to PyTorch's autograd threads). */
    size_t lo = 0, hi = py_lo;
    if (py_hi == nf && hi) {
        if (runtime(&fr[hi - 1])) { /* it starts in the C library: a thread's first frames */
            mark(out, &n, STACKVIEW_M_THREAD, every);
            while (!every && hi > lo && runtime(&fr[hi - 1]))
                hi--;
        } else if (cut)
            mark(out, &n, STACKVIEW_M_CUT, every);
    }
    natives(fr, lo, hi, 1, every, out, &n);
    return n;
}

size_t stackview_build(tables *t, uint32_t stack_id, int flags, stackview_frame *out)
{
    size_t n = build_outer_first(t, stack_id, (flags & STACKVIEW_EVERY_FRAME) != 0, out);
    if (flags & STACKVIEW_INNER_FIRST)
        for (size_t i = 0; i < n / 2; i++) {
            stackview_frame tmp = out[i];
            out[i] = out[n - 1 - i];
            out[n - 1 - i] = tmp;
        }
    return n;
}

/* args_len: the length of a demangled C++ name without its argument list (and what follows
 * it: " const", ...): the last top-level "(...)" is the arguments */
static size_t args_len(const char *fn)
{
    size_t len = strlen(fn), k = len;
    while (k && fn[k - 1] != ')')
        k--;
    if (!k || !strchr(fn, '('))
        return len;
    int depth = 0;
    for (size_t i = k; i-- > 0;) {
        if (fn[i] == ')')
            depth++;
        else if (fn[i] == '(' && --depth == 0)
            return i ? i : len;
    }
    return len;
}

const char *stackview_name(tables *t, const stackview_frame *v, char *buf, size_t len)
{
    const tables_frame *f = v->f;
    int most = len < INT_MAX ? (int)len : INT_MAX; /* (what fits: snprintf reads no further) */
    if (!f)
        snprintf(buf, len, "%s", v->marker ? v->marker : "?");
    else if (f->kind == TABLES_FRAME_PYTHON && f->code && f->line >= 0)
        snprintf(buf, len, "%.*s:%d %.*s", most, tables_short_file(t, f->file), f->line, most,
                 f->function);
    else if (f->kind == TABLES_FRAME_PYTHON && f->code)
        snprintf(buf, len, "%.*s:? %.*s", most, tables_short_file(t, f->file), most, f->function);
    else if (f->kind == TABLES_FRAME_PYTHON)
        tables_frame_text(f, buf, len);
    else if (f->function[0]) {
        size_t n = args_len(f->function);
        snprintf(buf, len, "%.*s", n < (size_t)most ? (int)n : most, f->function);
    } else if (f->module && v->run > 1)
        snprintf(buf, len, "%s (%u unnamed frames)", base_of(f), v->run);
    else if (f->module)
        snprintf(buf, len, "%s+0x%llx", base_of(f), (unsigned long long)f->module_offset);
    else
        snprintf(buf, len, "0x%llx", (unsigned long long)f->ip);
    return buf;
}

/* why: what keeps a module's frames unnamed, from tables_module_names */
static const char *why(int status)
{
    switch (status) {
    case SYMBOLIZE_NO_BUILD_ID:
        return "the trace recorded no build-id for them (an older vramtrace), so their files "
               "here cannot be checked and are not read";
    case SYMBOLIZE_NO_FILE:
        return "their files are not on this machine (the names the capture recorded are all "
               "there is)";
    case SYMBOLIZE_MISMATCH:
        return "this machine's files are other builds than the traced ones";
    case SYMBOLIZE_OFF:
        return "VRAMTRACE_SYMBOLIZE=0 keeps the recorded names";
    case SYMBOLIZE_NO_LIBDW:
        return "libdw (elfutils) could not be loaded here to read their files";
    default:
        return "no symbol of their files covers them";
    }
}

const char *stackview_unnamed_note(tables *t, const uint32_t *stacks, size_t n, char *buf,
                                   size_t len)
{
    enum { MODS = 64 };
    uint32_t mod[MODS];
    int status[MODS];
    size_t nm = 0, at = 0;
    buf[0] = '\0';
    stackview_frame v[STACKVIEW_MAX];
    for (size_t i = 0; i < n; i++) { /* the frames the views show */
        size_t nv = stackview_build(t, stacks[i], 0, v);
        for (size_t k = 0; k < nv; k++) {
            const tables_frame *f = v[k].f;
            if (!f || !unnamed(f) || !f->module)
                continue;
            size_t j = 0;
            while (j < nm && mod[j] != f->module->module_id)
                j++;
            if (j == nm && nm < MODS) {
                mod[nm] = f->module->module_id;
                status[nm++] = tables_module_names(t, f->module->module_id);
            }
        }
    }
    /* one clause per reason: "a.so, b.so and 3 more: why" */
    for (size_t j = 0; j < nm && at + 1 < len; j++) {
        int seen = 0, listed = 0, more = 0;
        for (size_t k = 0; k < j; k++)
            seen |= status[k] == status[j];
        if (seen)
            continue;
        at += (size_t)snprintf(buf + at, len - at, "%s", at ? "; " : "");
        for (size_t k = j; k < nm && at + 1 < len; k++) {
            if (status[k] != status[j])
                continue;
            if (listed == 3) {
                more++;
                continue;
            }
            const tables_module *m = tables_module_get(t, mod[k]);
            at += (size_t)snprintf(buf + at, len - at, "%s%s", listed ? ", " : "",
                                   m && m->basename ? m->basename : "?");
            listed++;
        }
        if (at + 1 < len && more)
            at += (size_t)snprintf(buf + at, len - at, " and %d more", more);
        if (at + 1 < len)
            at += (size_t)snprintf(buf + at, len - at, ": %s", why(status[j]));
    }
    if (at >= len)
        buf[len - 1] = '\0';
    return buf;
}
