/* tables.c — lookup tables built from a trace's metadata records (tables.h): an arena for
 * every copied string / frame array / entry (pointers stay valid until tables_free), and
 * open-addressing hash maps keyed by ids / addresses. Frames are resolved in tables_resolve.c. */
#include "tables_impl.h"

#include "hashseed.h"

#include "pylines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------------------------ */

#define ARENA_BLOCK (256u << 10)

/* arena_take: n bytes, 8-aligned, from *head's blocks (zeroed when zero); NULL when out of
 * memory. */
static void *arena_take(arena_block **head, size_t n, int zero)
{
    n = (n + 7) & ~(size_t)7;
    arena_block *b = *head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
        arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        if (b && cap != ARENA_BLOCK) { /* big one-off: keep the current block in front */
            nb->next = b->next;
            b->next = nb;
            nb->used = n;
            if (zero)
                memset(nb->data, 0, n);
            return nb->data;
        }
        nb->next = b;
        *head = b = nb;
    }
    void *p = b->data + b->used;
    b->used += n;
    if (zero)
        memset(p, 0, n);
    return p;
}

void *tables_arena_alloc(arena_block **head, size_t n)
{
    return arena_take(head, n, 1);
}

/* ---- hash map: u64 key -> pointer (NULL = empty slot) ------------------------------------ */

static size_t map_hash(uint64_t k)
{
    return (size_t)hashseed_mix(k);
}

void *tables_map_get(const map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = map_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->vals[i])
            return NULL;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

/* tables_map_put: inserts key -> val (val non-NULL, key not present). Returns 0 or -1 (ENOMEM). */
int tables_map_put(map *m, uint64_t key, void *val)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        uint64_t *nk = malloc(ncap * sizeof *nk); /* (a key is read only where its value is) */
        void **nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->vals[i])
                continue;
            size_t j = map_hash(m->keys[i]) & (ncap - 1);
            while (nv[j])
                j = (j + 1) & (ncap - 1);
            nk[j] = m->keys[i];
            nv[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = ncap;
    }
    size_t i = map_hash(key) & (m->cap - 1);
    while (m->vals[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

static void map_free(map *m)
{
    free(m->keys);
    free(m->vals);
}

/* ---- growable list of pointers (insertion order) ------------------------------------------ */

static int plist_push(plist *l, void *p)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 16;
        void **nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n++] = p;
    return 0;
}

tables *tables_new(void)
{
    return calloc(1, sizeof(tables));
}

void tables_free(tables *t)
{
    if (!t)
        return;
    map *maps[] = {&t->threads,       &t->stacks,    &t->codes,     &t->symbols,
                   &t->modules,       &t->devices,   &t->resolved,  &t->native_frames,
                   &t->python_frames, &t->sym_names, &t->code_files};
    for (size_t i = 0; i < t->lines.cap; i++)
        pylines_table_free(t->lines.vals[i]);
    map_free(&t->lines);
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++)
        map_free(maps[i]);
    free(t->thread_list.v);
    free(t->device_list.v);
    free(t->code_list.v);
    free(t->file_list.v);
    symbolize_free(t->sym);
    for (arena_block *b = t->arena, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    free(t);
}

/* copy_str: an arena copy of len bytes of s with a NUL after them; false on ENOMEM. */
bool tables_copy_str(tables *t, const char *s, uint32_t len, tables_str *out)
{
    char *p = arena_take(&t->arena, (size_t)len + 1,
                         0); /* (its bytes and NUL written here; its padding is never read) */
    if (!p)
        return false;
    memcpy(p, s, len);
    p[len] = 0;
    out->s = p;
    out->len = len;
    return true;
}

/* tables_str_key: the key of len bytes of s in sym_names / code_files (FNV-1a: two strings with one
 * key are told apart by their bytes, the later one then kept apart) */
uint64_t tables_str_key(const char *s, uint32_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* same_str: a's bytes are len bytes of s */
static bool same_str(const tables_str *a, const char *s, uint32_t len)
{
    return a->len == len && !memcmp(a->s, s, len);
}

/* copy_strs: an arena array of list's strings; false on ENOMEM. */
static bool copy_strs(tables *t, const reader_strs *list, const tables_str **out)
{
    tables_str *a = tables_arena_alloc(&t->arena, sizeof *a * (list->n ? list->n : 1));
    if (!a)
        return false;
    uint32_t cur = 0, i = 0;
    reader_str s;
    while (i < list->n && reader_strs_next(list, &cur, &s))
        if (!tables_copy_str(t, s.p, s.len, &a[i++]))
            return false;
    *out = a;
    return true;
}

/* add_*: one per metadata record type; 0 or -1 (ENOMEM). Arena memory taken before a
 * failure stays in the arena (freed with the tables); the maps are untouched then. */
static int add_thread(tables *t, const reader_thread *r)
{
    if (tables_map_get(&t->threads, r->fixed.index))
        return 0;
    tables_thread *e = tables_arena_alloc(&t->arena, sizeof *e);
    if (!e || !tables_copy_str(t, r->name.p, r->name.len, &e->name))
        return -1;
    e->index = r->fixed.index;
    e->tid = r->fixed.tid;
    e->role = r->fixed.role;
    if (plist_push(&t->thread_list, e))
        return -1;
    if (tables_map_put(&t->threads, e->index, e)) {
        t->thread_list.n--;
        return -1;
    }
    return 0;
}

static int add_device(tables *t, const reader_device *r)
{
    if (tables_map_get(&t->devices, r->fixed.ordinal))
        return 0;
    tables_device *e = tables_arena_alloc(&t->arena, sizeof *e);
    if (!e || !tables_copy_str(t, r->name.p, r->name.len, &e->name))
        return -1;
    e->ordinal = r->fixed.ordinal;
    e->cc_major = r->fixed.cc_major;
    e->cc_minor = r->fixed.cc_minor;
    e->total_bytes = r->fixed.total_bytes;
    memcpy(e->uuid, r->fixed.uuid, 16);
    if (plist_push(&t->device_list, e))
        return -1;
    if (tables_map_put(&t->devices, e->ordinal, e)) {
        t->device_list.n--;
        return -1;
    }
    return 0;
}

static int add_stack(tables *t, const reader_stack *r)
{
    if (tables_map_get(&t->stacks, r->stack_id))
        return 0;
    size_t n = (size_t)r->n_native + r->n_python;
    tables_stack *e = tables_arena_alloc(&t->arena, sizeof *e);
    uint64_t *fr = tables_arena_alloc(&t->arena, 8 * (n ? n : 1));
    if (!e || !fr)
        return -1;
    memcpy(fr, r->frames, 8 * n);
    e->stack_id = r->stack_id;
    e->n_native = r->n_native;
    e->n_python = r->n_python;
    e->flags = r->flags;
    e->frames = fr;
    return tables_map_put(&t->stacks, e->stack_id, e);
}

static int add_code(tables *t, const reader_code *r)
{
    if (tables_map_get(&t->codes, r->code_id))
        return 0;
    tables_code *e = tables_arena_alloc(&t->arena, sizeof *e);
    uint64_t fk = tables_str_key(r->filename.p, r->filename.len);
    const tables_code *same = tables_map_get(&t->code_files, fk);
    tables_str lt;
    if (!e)
        return -1;
    if (same && same_str(&same->filename, r->filename.p, r->filename.len))
        e->filename = same->filename; /* (a file's code objects share its name) */
    else if (!tables_copy_str(t, r->filename.p, r->filename.len, &e->filename) ||
             (!same && tables_map_put(&t->code_files, fk, e)))
        return -1;
    else if (same)
        t->files_apart = 1; /* two files with one key: this one is not in code_files */
    if (!tables_copy_str(t, r->qualname.p, r->qualname.len, &e->qualname) ||
        !tables_copy_str(t, r->linetable.p, r->linetable.len, &lt))
        return -1;
    e->code_id = r->code_id;
    e->first_line = r->first_line;
    e->linetable = (const uint8_t *)lt.s;
    e->linetable_len = lt.len;
    if (tables_map_put(&t->codes, e->code_id, e) < 0)
        return -1;
    return plist_push(&t->code_list, e);
}

static int add_symbol(tables *t, const reader_symbol *r)
{
    if (tables_map_get(&t->symbols, r->fixed.ip))
        return 0;
    tables_symbol *e = tables_arena_alloc(&t->arena, sizeof *e);
    if (!e)
        return -1;
    e->ip = r->fixed.ip;
    e->offset = r->fixed.offset;
    e->module_id = r->fixed.module_id;
    e->sym_offset = r->fixed.sym_offset;
    /* the ips of one function share its name and demangling (a symbol given a name from its
     * module's file since, tables_resolve.c, has a name of its own: compared by its bytes) */
    uint64_t nk = tables_str_key(r->name.p, r->name.len);
    const tables_symbol *same = tables_map_get(&t->sym_names, nk);
    if (same && same_str(&same->name, r->name.p, r->name.len)) {
        e->name = same->name;
        e->demangled = same->demangled; /* (none yet while same's is not worked out) */
        return tables_map_put(&t->symbols, e->ip, e);
    }
    if (!tables_copy_str(t, r->name.p, r->name.len, &e->name))
        return -1;
    /* a C++ name is demangled when first asked for (tables_symbol_demangled): most are never
     * shown, and the phases need few (phases_native_may_say) */
    if (r->name.len < 2 || r->name.p[0] != '_' || r->name.p[1] != 'Z')
        e->demangled = e->name;
    if (!same && tables_map_put(&t->sym_names, nk, e))
        return -1;
    return tables_map_put(&t->symbols, e->ip, e);
}

static int add_module(tables *t, const reader_module *r)
{
    if (tables_map_get(&t->modules, r->fixed.module_id))
        return 0;
    tables_module *e = tables_arena_alloc(&t->arena, sizeof *e);
    if (!e || !tables_copy_str(t, r->path.p, r->path.len, &e->path))
        return -1;
    e->module_id = r->fixed.module_id;
    e->base = r->fixed.base;
    const char *slash = strrchr(e->path.s, '/');
    e->basename = slash && slash[1] ? slash + 1 : e->path.s;
    if (!tables_copy_str(t, r->build_id.p, r->build_id.len, &e->build_id))
        return -1;
    return tables_map_put(&t->modules, e->module_id, e);
}

static int add_process(tables *t, const reader_process *r)
{
    if (t->process)
        return 0;
    tables_process *e = tables_arena_alloc(&t->arena, sizeof *e);
    if (!e || !tables_copy_str(t, r->exe.p, r->exe.len, &e->exe) ||
        !tables_copy_str(t, r->cwd.p, r->cwd.len, &e->cwd) ||
        !tables_copy_str(t, r->host.p, r->host.len, &e->host) ||
        !copy_strs(t, &r->argv, &e->argv) || !copy_strs(t, &r->env, &e->env))
        return -1;
    e->pid = r->fixed.pid;
    e->ppid = r->fixed.ppid;
    e->start_realtime_ns = r->fixed.start_realtime_ns;
    e->argc = r->argv.n;
    e->nenv = r->env.n;
    t->process = e;
    return 0;
}

static int add_config(tables *t, const reader_config *r)
{
    if (t->config)
        return 0;
    tables_config *e = tables_arena_alloc(&t->arena, sizeof *e);
    if (!e || !tables_copy_str(t, r->card.p, r->card.len, &e->card))
        return -1;
    e->card_bytes = r->fixed.card_bytes;
    e->stack_mode = r->fixed.stack_mode;
    e->stack_depth = r->fixed.stack_depth;
    e->sample_ms = r->fixed.sample_ms;
    t->config = e;
    return 0;
}

/* add_file: FILE records in file order, at most VT_FILE_MAX_COUNT (the writer's bound). */
static int add_file(tables *t, const reader_file *r)
{
    if (t->file_list.n >= VT_FILE_MAX_COUNT)
        return 0;
    tables_file *e = tables_arena_alloc(&t->arena, sizeof *e);
    if (!e || !tables_copy_str(t, r->name.p, r->name.len, &e->name) ||
        !tables_copy_str(t, r->path.p, r->path.len, &e->path) ||
        !tables_copy_str(t, r->contents.p, r->contents.len, &e->contents) ||
        plist_push(&t->file_list, e) < 0)
        return -1;
    e->kind = r->fixed.kind;
    e->argi = r->fixed.argi;
    e->size = r->fixed.size;
    e->flags = r->fixed.flags;
    return 0;
}

int tables_add(tables *t, const reader_record *rec)
{
    switch (rec->type) {
    case VT_REC_THREAD:
        return add_thread(t, &rec->u.thread);
    case VT_REC_DEVICE:
        return add_device(t, &rec->u.device);
    case VT_REC_STACK:
        return add_stack(t, &rec->u.stack);
    case VT_REC_CODE:
        return add_code(t, &rec->u.code);
    case VT_REC_SYMBOL:
        return add_symbol(t, &rec->u.symbol);
    case VT_REC_MODULE:
        return add_module(t, &rec->u.module);
    case VT_REC_PROCESS:
        return add_process(t, &rec->u.process);
    case VT_REC_CONFIG:
        return add_config(t, &rec->u.config);
    case VT_REC_FILE:
        return add_file(t, &rec->u.file);
    case VT_REC_PYINFO:
        if (!t->pyinfo) {
            t->pyinfo = tables_arena_alloc(&t->arena, sizeof *t->pyinfo);
            if (!t->pyinfo)
                return -1;
            *t->pyinfo = rec->u.pyinfo;
        }
        return 0;
    default:
        return 0;
    }
}

/* ---- lookups ----------------------------------------------------------------------------- */

const tables_thread *tables_thread_get(const tables *t, uint32_t i)
{
    return tables_map_get(&t->threads, i);
}
const tables_stack *tables_stack_get(const tables *t, uint32_t id)
{
    return tables_map_get(&t->stacks, id);
}
const tables_code *tables_code_get(const tables *t, uint32_t id)
{
    return tables_map_get(&t->codes, id);
}
const tables_symbol *tables_symbol_get(const tables *t, uint64_t ip)
{
    return tables_map_get(&t->symbols, ip);
}
const tables_module *tables_module_get(const tables *t, uint32_t id)
{
    return tables_map_get(&t->modules, id);
}
const tables_device *tables_device_get(const tables *t, uint32_t o)
{
    return tables_map_get(&t->devices, o);
}
const tables_process *tables_process_get(const tables *t)
{
    return t->process;
}
const tables_config *tables_config_get(const tables *t)
{
    return t->config;
}
const vt_rec_pyinfo *tables_pyinfo_get(const tables *t)
{
    return t->pyinfo;
}
size_t tables_n_threads(const tables *t)
{
    return t->thread_list.n;
}
size_t tables_n_devices(const tables *t)
{
    return t->device_list.n;
}
const tables_stack *tables_stack_next(const tables *t, size_t *pos)
{
    while (t && *pos < t->stacks.cap) {
        const tables_stack *st = t->stacks.vals[(*pos)++];
        if (st)
            return st;
    }
    return NULL;
}
size_t tables_n_stacks(const tables *t)
{
    return t->stacks.n;
}
size_t tables_n_codes(const tables *t)
{
    return t->codes.n;
}
size_t tables_n_symbols(const tables *t)
{
    return t->symbols.n;
}
size_t tables_n_modules(const tables *t)
{
    return t->modules.n;
}

const tables_thread *tables_thread_at(const tables *t, size_t i)
{
    return i < t->thread_list.n ? t->thread_list.v[i] : NULL;
}

size_t tables_n_files(const tables *t)
{
    return t->file_list.n;
}
const tables_file *tables_file_at(const tables *t, size_t i)
{
    return i < t->file_list.n ? t->file_list.v[i] : NULL;
}

const char *tables_file_kind_name(uint32_t kind)
{
#define VT_FILE_KIND_NAME(name, v, key, doc)                                                       \
    if (kind == v)                                                                                 \
        return key;
    VT_FILE_KINDS(VT_FILE_KIND_NAME)
#undef VT_FILE_KIND_NAME
    return "unknown";
}

const tables_device *tables_device_at(const tables *t, size_t i)
{
    return i < t->device_list.n ? t->device_list.v[i] : NULL;
}

const char *tables_env(const tables *t, const char *name)
{
    if (!t->process)
        return NULL;
    size_t nl = strlen(name);
    for (uint32_t i = 0; i < t->process->nenv; i++) {
        const tables_str *e = &t->process->env[i];
        if (e->len > nl && !memcmp(e->s, name, nl) && e->s[nl] == '=')
            return e->s + nl + 1;
    }
    return NULL;
}

const char *tables_role_name(uint32_t role)
{
    switch (role) {
    case VT_ROLE_MAIN:
        return "main";
    case VT_ROLE_AUTOGRAD:
        return "autograd";
    case VT_ROLE_WORKER:
        return "worker";
    default:
        return "other";
    }
}
