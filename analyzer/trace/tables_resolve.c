/* tables_resolve.c — turns a trace's raw frames into readable ones (tables.h): a native ip
 * to symbol / module / source line (symbolized on first use), a Python frame to code object and
 * line (pylines.c), a stack id to one innermost-first frame list; tables.c builds the tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "pylines.h"
#include "tables_impl.h"

/* ---- resolver ---------------------------------------------------------------------------- */

/* code_line: the line of offset in code c, its line table decoded the first time (kept in the
 * tables' lines, a cache: the tables hold the table's bytes as long as its decoding) */
static int code_line(const tables *t, const tables_code *c, uint32_t offset)
{
    map *lines = (map *)&t->lines;
    pylines_table *p = tables_map_get(lines, c->code_id);
    if (!p &&
        (p = pylines_decode(t->pyinfo->major, t->pyinfo->minor, c->linetable, c->linetable_len,
                            (int)c->first_line)) != NULL &&
        tables_map_put(lines, c->code_id, p) < 0) {
        pylines_table_free(p);
        p = NULL;
    }
    return p ? pylines_table_line(p, offset)
             : pylines_line(t->pyinfo->major, t->pyinfo->minor, c->linetable, c->linetable_len,
                            (int)c->first_line, offset);
}

void tables_resolve_frame(const tables *t, uint64_t raw, int kind, tables_frame *f)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->raw = raw;
    f->line = -1;
    f->function = "";
    f->file = "";
    if (kind == TABLES_FRAME_PYTHON) {
        f->code_id = VT_PYFRAME_CODE(raw);
        f->byte_offset = VT_PYFRAME_OFFSET(raw);
        f->code = tables_code_get(t, f->code_id);
        if (f->code) {
            f->function = f->code->qualname.s;
            f->file = f->code->filename.s;
            if (t->pyinfo)
                f->line = code_line(t, f->code, f->byte_offset);
        }
        return;
    }
    f->ip = raw;
    f->sym = tables_symbol_get(t, raw);
    if (f->sym) {
        f->module = f->sym->module_id ? tables_module_get(t, f->sym->module_id) : NULL;
        f->module_offset = f->sym->offset;
        f->sym_offset = f->sym->name.len ? f->sym->sym_offset : 0;
        f->function = tables_symbol_demangled(t, f->sym)->s;
        if (f->module)
            f->file = f->module->path.s;
        f->src_file = f->sym->src_file.len ? f->sym->src_file.s : "";
        f->src_line = f->sym->src_file.len ? f->sym->src_line : 0;
    } else {
        f->src_file = "";
    }
}

int tables_sources;

const tables_str *tables_symbol_demangled(const tables *t, const tables_symbol *s)
{
    if (s->demangled.s)
        return &s->demangled;
    /* worked out once, into the tables' own symbol (arena memory, never const): the first symbol
     * of the name has it for every other (tables.c: sym_names) */
    tables *w = (tables *)t;
    tables_symbol *e = (tables_symbol *)s;
    tables_symbol *first = tables_map_get(&t->sym_names, tables_str_key(e->name.s, e->name.len));
    if (first && first->name.s == e->name.s && first->demangled.s) {
        e->demangled = first->demangled;
        return &e->demangled;
    }
    char *d = NULL;
    e->demangled = e->name; /* (not a C++ name after all, or memory ran out: mem.h says so) */
    if (demangle(e->name.s, e->name.len, &d) == 0 && d) {
        tables_str dem;
        if (tables_copy_str(w, d, (uint32_t)strlen(d), &dem))
            e->demangled = dem;
    }
    free(d);
    if (first && first->name.s == e->name.s)
        first->demangled = e->demangled;
    return &e->demangled;
}

/* symbolize_symbol: the first time e is used, its name (when the record had none) and its
 * file:line from the module's file (symbolize.h). Out of memory leaves e as recorded. */
static void symbolize_symbol(tables *t, tables_symbol *e)
{
    if (e->symbolized)
        return;
    e->symbolized = 1;
    const tables_module *m = e->module_id ? tables_module_get(t, e->module_id) : NULL;
    if (!m || (!t->sym && !(t->sym = symbolize_new())))
        return;
    symbolize_set_sources(t->sym, tables_sources != 0);
    e->src_done = tables_sources != 0;
    symbolize_result r;
    if (symbolize_ip(t->sym, m->module_id, m->path.s, m->base, (const uint8_t *)m->build_id.s,
                     m->build_id.len, e->ip, &r) != SYMBOLIZE_OK)
        return;
    if (!e->name.len && r.name) {
        tables_str name;
        if (!tables_copy_str(t, r.name, (uint32_t)strlen(r.name), &name))
            return;
        char *d;
        if (demangle(name.s, name.len, &d) < 0)
            return; /* out of memory (mem.h says so): left as recorded */
        tables_str dem = name;
        bool ok = !d || tables_copy_str(t, d, (uint32_t)strlen(d), &dem);
        free(d);
        if (!ok)
            return;
        e->name = name;
        e->demangled = dem;
        e->sym_offset = (uint32_t)r.sym_offset;
    }
    if (r.file && tables_copy_str(t, r.file, (uint32_t)strlen(r.file), &e->src_file))
        e->src_line = r.line;
}

/* symbol_source: e's file:line, looked up the first time a view shows it (tables_frame_label)
 * where tables_sources did not have it looked up with its name */
static void symbol_source(tables *t, tables_symbol *e)
{
    symbolize_symbol(t, e);
    if (e->src_done)
        return;
    e->src_done = 1;
    const tables_module *m = e->module_id ? tables_module_get(t, e->module_id) : NULL;
    if (!m || !t->sym)
        return;
    symbolize_set_sources(t->sym, true);
    symbolize_result r;
    int st = symbolize_ip(t->sym, m->module_id, m->path.s, m->base, (const uint8_t *)m->build_id.s,
                          m->build_id.len, e->ip, &r);
    symbolize_set_sources(t->sym, tables_sources != 0);
    if (st == SYMBOLIZE_OK && r.file &&
        tables_copy_str(t, r.file, (uint32_t)strlen(r.file), &e->src_file))
        e->src_line = r.line;
}

const tables_symbol *tables_symbol_named(tables *t, uint64_t ip)
{
    tables_symbol *e = tables_map_get(&t->symbols, ip);
    if (e)
        symbolize_symbol(t, e);
    return e;
}

/* kept: tables_resolve_frame, from t's frames resolved before where one is: a native
 * frame with its symbol (symbolized: tables_symbol_named, and the first SYMBOL record of an ip
 * holds), a Python frame with its code and the interpreter's version cannot change. */
static const tables_frame *kept(tables *t, uint64_t raw, int kind, tables_frame *out)
{
    map *m = kind == TABLES_FRAME_PYTHON ? &t->python_frames : &t->native_frames;
    const tables_frame *k = tables_map_get(m, raw);
    if (k)
        return k;
    tables_resolve_frame(t, raw, kind, out);
    if (kind == TABLES_FRAME_PYTHON ? !out->code || !t->pyinfo : !out->sym || !out->sym->symbolized)
        return out;
    tables_frame *keep = tables_arena_alloc(&t->arena, sizeof *keep);
    if (!keep)
        return out; /* out of memory: resolved again next time */
    *keep = *out;
    return tables_map_put(m, raw, keep) < 0 ? out : keep;
}

/* resolve_kept: the same into out (a caller's array of frames) */
static void resolve_kept(tables *t, uint64_t raw, int kind, tables_frame *out)
{
    const tables_frame *k = kept(t, raw, kind, out);
    if (k != out)
        *out = *k;
}

const tables_frame *tables_frame_of(tables *t, uint64_t raw, int kind, tables_frame *out)
{
    if (kind == TABLES_FRAME_NATIVE)
        tables_symbol_named(t, raw);
    return kept(t, raw, kind, out);
}

const tables_frame *tables_code_frame(const tables *t, uint64_t raw, tables_frame *out)
{
    memset(out, 0, sizeof *out);
    out->kind = TABLES_FRAME_PYTHON;
    out->raw = raw;
    out->line = -1;
    out->code_id = VT_PYFRAME_CODE(raw);
    out->byte_offset = VT_PYFRAME_OFFSET(raw);
    out->code = tables_code_get(t, out->code_id);
    out->function = out->code ? out->code->qualname.s : "";
    out->file = out->code ? out->code->filename.s : "";
    return out;
}

size_t tables_resolve_frames(tables *t, const uint64_t *frames, unsigned n_native,
                             unsigned n_python, tables_frame *out)
{
    size_t total = (size_t)n_native + n_python;
    for (size_t i = 0; i < n_native; i++)
        tables_symbol_named(t, frames[i]);
    /* One list, innermost first, the way a traceback reads: the native frames down to the
     * first frame of the interpreter (libpython / the python executable), then the Python
     * frames, then the rest of the native frames (the interpreter's own and main). */
    size_t split = n_native;
    for (size_t i = 0; i < n_native && n_python; i++) {
        const tables_symbol *sym = tables_symbol_get(t, frames[i]);
        const tables_module *mod =
            sym && sym->module_id ? tables_module_get(t, sym->module_id) : NULL;
        const char *b = mod ? mod->basename : "";
        if (!strncmp(b, "libpython", 9) || !strncmp(b, "python", 6)) {
            split = i;
            break;
        }
    }
    size_t o = 0;
    for (size_t i = 0; i < split; i++)
        resolve_kept(t, frames[i], TABLES_FRAME_NATIVE, &out[o++]);
    for (size_t i = n_native; i < total; i++)
        resolve_kept(t, frames[i], TABLES_FRAME_PYTHON, &out[o++]);
    for (size_t i = split; i < n_native; i++)
        resolve_kept(t, frames[i], TABLES_FRAME_NATIVE, &out[o++]);
    return total;
}

const tables_frame *tables_resolve_stack(tables *t, uint32_t stack_id, size_t *n)
{
    *n = 0;
    resolved *r = tables_map_get(&t->resolved, stack_id);
    if (r) {
        *n = r->n;
        return r->frames;
    }
    const tables_stack *s = stack_id ? tables_stack_get(t, stack_id) : NULL;
    if (!s)
        return NULL;
    size_t total = (size_t)s->n_native + s->n_python;
    r = tables_arena_alloc(&t->arena, sizeof *r);
    tables_frame *fr = tables_arena_alloc(&t->arena, sizeof *fr * (total ? total : 1));
    if (!r || !fr)
        return NULL;
    bool failed = mem_failed();
    r->n = tables_resolve_frames(t, s->frames, s->n_native, s->n_python, fr);
    r->frames = fr;
    /* a name demangled or a line table decoded here, lost for want of memory: no stack (mem.h) */
    if ((!failed && mem_failed()) || tables_map_put(&t->resolved, stack_id, r))
        return NULL;
    *n = total;
    return fr;
}

int tables_module_names(const tables *t, uint32_t module_id)
{
    return symbolize_module_status(t->sym, module_id);
}

const char *tables_short_file(const tables *t, const char *file)
{
    const tables_process *p = tables_process_get(t);
    const char *s = strstr(file, "-packages/");
    if (s && (s - file >= 4) && (!strncmp(s - 4, "site", 4) || !strncmp(s - 4, "dist", 4)))
        return s + strlen("-packages/");
    /* (file is longer than cwd before its byte cwd.len is read: a cwd with a NUL in it compares
     * equal to a shorter file up to that NUL) */
    if (p && p->cwd.len > 1 && strnlen(file, p->cwd.len + 1) > p->cwd.len &&
        !memcmp(file, p->cwd.s, p->cwd.len) && file[p->cwd.len] == '/')
        return file + p->cwd.len + 1;
    return file;
}

const char *tables_frame_source(tables *t, const tables_frame *f, int *line)
{
    tables_symbol *e =
        f->kind == TABLES_FRAME_NATIVE && f->sym ? tables_map_get(&t->symbols, f->ip) : NULL;
    *line = 0;
    if (!e)
        return "";
    symbol_source(t, e);
    *line = e->src_file.len ? e->src_line : 0;
    return e->src_file.len ? e->src_file.s : "";
}

size_t tables_frame_label(tables *t, const tables_frame *f, char *buf, size_t bufsz)
{
    tables_symbol *e =
        f->kind == TABLES_FRAME_NATIVE && f->sym ? tables_map_get(&t->symbols, f->ip) : NULL;
    if (e) { /* its file:line, read the first time it is shown (a frame kept before lacks it) */
        symbol_source(t, e);
        tables_frame g = *f;
        g.src_file = e->src_file.len ? e->src_file.s : "";
        g.src_line = e->src_file.len ? e->src_line : 0;
        return tables_frame_text(&g, buf, bufsz);
    }
    if (f->kind != TABLES_FRAME_PYTHON || !f->code)
        return tables_frame_text(f, buf, bufsz);
    tables_frame g = *f;
    g.file = tables_short_file(t, f->file);
    return tables_frame_text(&g, buf, bufsz);
}

/* A frame's text as snprintf would write it, a piece at a time (snprintf's parsing of its format
 * had been most of a report's naming of its sites): the text truncated to the buffer, always
 * NUL-terminated, its whole length counted. */
typedef struct text_out {
    char *buf;
    size_t size, n; /* n: the length of the whole text so far */
} text_out;

static void put_mem(text_out *o, const char *s, size_t len)
{
    if (o->n + 1 < o->size) {
        size_t room = o->size - 1 - o->n;
        memcpy(o->buf + o->n, s, len < room ? len : room);
    }
    o->n += len;
}

static void put_str(text_out *o, const char *s)
{
    put_mem(o, s, strlen(s));
}

static void put_num(text_out *o, unsigned long long v, unsigned base)
{
    char d[24];
    size_t i = sizeof d;
    do
        d[--i] = "0123456789abcdef"[v % base];
    while ((v /= base) != 0);
    put_mem(o, d + i, sizeof d - i);
}

static void put_int(text_out *o, int v)
{
    if (v < 0)
        put_mem(o, "-", 1);
    put_num(o, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10);
}

size_t tables_frame_text(const tables_frame *f, char *buf, size_t bufsz)
{
    text_out o = {buf, bufsz, 0};
    if (f->kind == TABLES_FRAME_PYTHON) {
        put_str(&o, f->code ? f->file : "?");
        put_mem(&o, ":", 1);
        if (f->line >= 0)
            put_int(&o, f->line);
        else
            put_mem(&o, "?", 1);
        put_mem(&o, " ", 1);
        put_str(&o, f->code ? f->function : "?");
    } else if (f->function[0] || f->module) {
        put_str(&o, f->function[0] ? f->function : f->module->basename);
        put_mem(&o, "+0x", 3);
        put_num(&o, f->function[0] ? f->sym_offset : f->module_offset, 16);
        if (f->function[0] && f->module) {
            put_mem(&o, " (", 2);
            put_str(&o, f->module->basename);
            put_mem(&o, ")", 1);
        }
    } else {
        put_mem(&o, "0x", 2);
        put_num(&o, f->ip, 16);
    }
    if (f->kind == TABLES_FRAME_NATIVE && f->src_file && f->src_file[0]) {
        put_mem(&o, " at ", 4);
        put_str(&o, f->src_file);
        if (f->src_line > 0) {
            put_mem(&o, ":", 1);
            put_int(&o, f->src_line);
        }
    }
    if (bufsz)
        buf[o.n < bufsz ? o.n : bufsz - 1] = '\0';
    return o.n;
}

/* some_file_has: whether a code object's file may contain part: 0 when none does (each file read
 * once, by code_files, where one file's code objects are many), 1 when one may */
static int some_file_has(const tables *t, const char *part)
{
    if (t->files_apart)
        return 1;
    const map *m = &t->code_files;
    for (size_t i = 0; i < m->cap; i++) {
        const tables_code *c = m->vals[i];
        if (c && (!c->filename.s || strstr(c->filename.s, part)))
            return 1;
    }
    return 0;
}

int tables_code_named(const tables *t, const char *file, const char *const *qualnames)
{
    if (!some_file_has(t, file))
        return 0;
    size_t pos = 0;
    const tables_code *c;
    while ((c = tables_code_next(t, &pos))) {
        if (!c->filename.s || !c->qualname.s || !strstr(c->filename.s, file))
            continue;
        for (const char *const *q = qualnames; *q; q++)
            if (!strcmp(c->qualname.s, *q))
                return 1;
    }
    return 0;
}

const tables_code *tables_code_next(const tables *t, size_t *pos)
{
    return *pos < t->code_list.n ? t->code_list.v[(*pos)++] : NULL;
}

int tables_code_find(const tables *t, const char *file_part, const char *qualname,
                     const char *qual_suffix, char *first, size_t len)
{
    size_t pos = 0;
    const tables_code *c;
    if (t && file_part && !some_file_has(t, file_part))
        return 0;
    while (t && (c = tables_code_next(t, &pos))) {
        const char *f = c->filename.s ? c->filename.s : "", *q = c->qualname.s ? c->qualname.s : "";
        if (file_part && !strstr(f, file_part))
            continue;
        if (qualname && strcmp(q, qualname))
            continue;
        size_t ql = strlen(q), sl = qual_suffix ? strlen(qual_suffix) : 0;
        if (qual_suffix && (ql < sl || strcmp(q + ql - sl, qual_suffix)))
            continue;
        if (first)
            snprintf(first, len, "%s", q);
        return 1;
    }
    return 0;
}

int tables_code_file_has(const tables *t, const char *const *needles)
{
    int may = 0;
    for (const char *const *n = needles; *n && !may; n++)
        may = some_file_has(t, *n);
    if (!may)
        return 0;
    size_t pos = 0;
    const tables_code *c;
    while ((c = tables_code_next(t, &pos))) {
        if (!c->filename.s)
            continue;
        for (const char *const *n = needles; *n; n++)
            if (strstr(c->filename.s, *n))
                return 1;
    }
    return 0;
}
