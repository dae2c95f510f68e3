/* dump_json.c — renders the records of a trace as `vramtrace dump` prints them: one JSON
 * object per line (cJSON; events formatted by hand), a header line and a status line. A stack
 * is written once, on its STACK record's line with its frames resolved; events carry its id.
 * Reading the file and the options live in cmd/cmd_dump.c. */
#include "dump_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonw.h"
#include "mem.h"

/* ---- JSON helpers (all tolerate a NULL object after an allocation failure) -------------- */

/* add_u64: an exact integer (cJSON numbers are doubles: exact only below 2^53). */
static void add_u64(cJSON *o, const char *name, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    cJSON_AddRawToObject(o, name, b);
}

static void add_hex(cJSON *o, const char *name, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "0x%" PRIx64, v);
    cJSON_AddStringToObject(o, name, b);
}

static void add_rstr(cJSON *o, const char *name, reader_str s)
{
    jsonw_add(o, name, s.p, s.len);
}

struct dump_json {
    tables *t;
    FILE *out;
    bool resolve;
    uint64_t *raw;    /* a STACK record's frames, aligned (cap of them) */
    tables_frame *fr; /* the same resolved */
    size_t cap;
};

/* add_resolved: what the STACK record's frames need besides their records: each Python frame's
 * line (from its code object's line table, null when unknown) and how many native frames come
 * before the Python ones in a traceback's order (tables_resolve_frames: the rest are the
 * interpreter's own). Everything else about a frame is on its CODE or SYMBOL line. */
static void add_resolved(dump_json *d, cJSON *o, cJSON *py, const reader_stack *s)
{
    size_t n = (size_t)s->n_native + s->n_python;
    if (n > d->cap) {
        uint64_t *raw = realloc(d->raw, n * sizeof *raw);
        if (raw)
            d->raw = raw;
        tables_frame *fr = raw ? realloc(d->fr, n * sizeof *fr) : NULL;
        if (!fr)
            return; /* mem_failed() says it: the caller stops */
        d->fr = fr;
        d->cap = n;
    }
    for (size_t i = 0; i < n; i++)
        d->raw[i] = reader_stack_frame(s, (unsigned)i);
    n = tables_resolve_frames(d->t, d->raw, s->n_native, s->n_python, d->fr);
    size_t split = 0;
    while (split < n && d->fr[split].kind != TABLES_FRAME_PYTHON)
        split++;
    cJSON *f = py ? py->child : NULL;
    for (size_t i = split; f && i < n && d->fr[i].kind == TABLES_FRAME_PYTHON; i++, f = f->next)
        if (d->fr[i].line >= 0)
            cJSON_AddNumberToObject(f, "line", d->fr[i].line);
        else
            cJSON_AddNullToObject(f, "line");
    if (s->n_python && s->n_native)
        cJSON_AddNumberToObject(o, "native_before_python", (double)split);
}

/* ---- events: formatted by hand (they are almost all of a trace) ------------------------- */

/* A line under construction: put_* append (the caller keeps it under sizeof line). */
typedef struct line_buf {
    char b[512];
    size_t n;
} line_buf;

static void put_s(line_buf *l, const char *s)
{
    size_t n = strlen(s);
    memcpy(l->b + l->n, s, n);
    l->n += n;
}

static void put_u(line_buf *l, uint64_t v)
{
    char tmp[24];
    int i = 0;
    do
        tmp[i++] = (char)('0' + v % 10);
    while ((v /= 10));
    while (i)
        l->b[l->n++] = tmp[--i];
}

static void put_i(line_buf *l, int64_t v)
{
    if (v < 0) {
        l->b[l->n++] = '-';
        put_u(l, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u(l, (uint64_t)v);
    }
}

static void put_x(line_buf *l, uint64_t v)
{
    char tmp[20];
    int i = 0;
    do
        tmp[i++] = "0123456789abcdef"[v & 15];
    while ((v >>= 4));
    l->b[l->n++] = '"', l->b[l->n++] = '0', l->b[l->n++] = 'x';
    while (i)
        l->b[l->n++] = tmp[--i];
    l->b[l->n++] = '"';
}

static void put_b(line_buf *l, bool v)
{
    put_s(l, v ? "true" : "false");
}

/* put_api: "api" (name, or the number when unknown), "layer", "kind", "device". */
static void put_api(line_buf *l, unsigned api, unsigned device)
{
    const char *name = reader_api_name(api);
    int layer = reader_api_layer(api);
    put_s(l, ",\"api\":");
    if (name) {
        put_s(l, "\"");
        put_s(l, name);
        put_s(l, "\"");
    } else {
        put_u(l, api);
    }
    put_s(l, layer == VT_LAYER_RUNTIME     ? ",\"layer\":\"runtime\",\"kind\":\""
             : layer == VT_LAYER_DRIVER    ? ",\"layer\":\"driver\",\"kind\":\""
             : layer == VT_LAYER_ALLOCATOR ? ",\"layer\":\"allocator\",\"kind\":\""
                                           : ",\"layer\":\"unknown\",\"kind\":\"");
    put_s(l, reader_kind_name(reader_api_kind(api)));
    put_s(l, "\",\"device\":");
    if (device == VT_DEVICE_UNKNOWN)
        put_s(l, "null");
    else
        put_u(l, device);
}

/* emit_event: one ALLOC / FREE / OOM line (its stack by id: the stack's own line has it). */
static void emit_event(dump_json *d, const reader_record *r)
{
    line_buf l = {.n = 0};
    uint32_t stack_id;
    if (r->type == VT_REC_OOM) {
        const reader_oom *e = &r->u.oom;
        put_s(&l, "{\"type\":\"oom\"");
        put_api(&l, e->api, e->device);
        put_s(&l, ",\"requested\":"), put_u(&l, e->requested);
        put_s(&l, ",\"capacity\":"), put_u(&l, e->capacity);
        put_s(&l, ",\"process_used\":"), put_u(&l, e->process_used);
        put_s(&l, ",\"time_ns\":"), put_u(&l, e->time_ns);
        put_s(&l, ",\"thread\":"), put_u(&l, e->thread);
        put_s(&l, ",\"result\":"), put_i(&l, e->result);
        put_s(&l, ",\"emulated\":"), put_b(&l, e->emulated);
        stack_id = e->stack_id;
    } else {
        const reader_event *e = &r->u.ev;
        put_s(&l, r->type == VT_REC_ALLOC ? "{\"type\":\"alloc\"" : "{\"type\":\"free\"");
        put_api(&l, e->api, e->device);
        put_s(&l, ",\"addr\":"), put_x(&l, e->addr);
        if (r->type == VT_REC_ALLOC)
            put_s(&l, ",\"size\":"), put_u(&l, e->size);
        put_s(&l, ",\"time_ns\":"), put_u(&l, e->time_ns);
        put_s(&l, ",\"thread\":"), put_u(&l, e->thread);
        put_s(&l, ",\"stream\":"), put_u(&l, e->stream);
        put_s(&l, ",\"result\":"), put_i(&l, e->result);
        put_s(&l, ",\"failed\":"), put_b(&l, e->failed);
        put_s(&l, ",\"backward\":"), put_b(&l, e->backward);
        put_s(&l, ",\"emulated\":"), put_b(&l, e->emulated);
        if (e->has_aux)
            put_s(&l, ",\"aux\":"), put_x(&l, e->aux);
        stack_id = e->stack_id;
    }
    put_s(&l, ",\"stack_id\":"), put_u(&l, stack_id);
    put_s(&l, "}\n");
    fwrite_unlocked(l.b, 1, l.n, d->out);
}

/* ---- one record -> one object --------------------------------------------------------- */

static void fill_strs(cJSON *arr, const reader_strs *l)
{
    uint32_t cur = 0;
    reader_str s;
    while (arr && reader_strs_next(l, &cur, &s)) {
        cJSON *it = jsonw_item(s.p, s.len);
        if (it)
            cJSON_AddItemToArray(arr, it);
    }
}

static void fill_record(dump_json *d, cJSON *o, const reader_record *r)
{
    switch (r->type) {
    case VT_REC_STACK: {
        const reader_stack *s = &r->u.stack;
        cJSON_AddNumberToObject(o, "stack_id", s->stack_id);
        if (s->flags & VT_STACKF_PY_CUT) /* (only then: a complete stack's line is as it was) */
            cJSON_AddTrueToObject(o, "python_cut");
        cJSON *nat = cJSON_AddArrayToObject(o, "native");
        cJSON *py = cJSON_AddArrayToObject(o, "python");
        for (unsigned i = 0; i < (unsigned)s->n_native + s->n_python; i++) {
            uint64_t f = reader_stack_frame(s, i);
            char b[24];
            if (i < s->n_native) {
                snprintf(b, sizeof b, "0x%" PRIx64, f);
                if (nat)
                    cJSON_AddItemToArray(nat, cJSON_CreateString(b));
            } else if (py) {
                cJSON *j = cJSON_CreateObject();
                cJSON_AddNumberToObject(j, "code_id", VT_PYFRAME_CODE(f));
                cJSON_AddNumberToObject(j, "offset", VT_PYFRAME_OFFSET(f));
                cJSON_AddItemToArray(py, j);
            }
        }
        if (d->resolve)
            add_resolved(d, o, py, s);
        break;
    }
    case VT_REC_CODE: {
        const reader_code *c = &r->u.code;
        cJSON_AddNumberToObject(o, "code_id", c->code_id);
        cJSON_AddNumberToObject(o, "first_line", c->first_line);
        add_rstr(o, "filename", c->filename);
        add_rstr(o, "qualname", c->qualname);
        char *hex = malloc(2 * (size_t)c->linetable.len + 1);
        if (hex) {
            for (uint32_t i = 0; i < c->linetable.len; i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)c->linetable.p[i]);
            hex[2 * c->linetable.len] = 0;
            cJSON_AddStringToObject(o, "linetable", hex);
            free(hex);
        }
        break;
    }
    case VT_REC_SYMBOL: {
        /* resolving: the module's file is consulted first (tables_symbol_named, once), so
         * "symbol" is the name reports show (recorded, or the file's when the capture had none),
         * "symbol_offset" is from its start, "file" / "line" from the file's debug info */
        const reader_symbol *s = &r->u.symbol;
        const tables_symbol *ts = d->resolve ? tables_symbol_named(d->t, s->fixed.ip)
                                             : tables_symbol_get(d->t, s->fixed.ip);
        add_hex(o, "ip", s->fixed.ip);
        add_u64(o, "offset", s->fixed.offset);
        cJSON_AddNumberToObject(o, "module_id", s->fixed.module_id);
        cJSON_AddNumberToObject(o, "symbol_offset", ts ? ts->sym_offset : s->fixed.sym_offset);
        add_rstr(o, "name", s->name);
        const tables_str *dem = ts ? tables_symbol_demangled(d->t, ts) : NULL;
        if (ts && s->name.len && dem->s != ts->name.s)
            jsonw_add(o, "demangled", dem->s, dem->len);
        if (!d->resolve)
            break;
        if (ts && dem->len)
            jsonw_add(o, "symbol", dem->s, dem->len);
        else
            cJSON_AddNullToObject(o, "symbol");
        if (ts && ts->src_file.len) {
            jsonw_add(o, "file", ts->src_file.s, ts->src_file.len);
            if (ts->src_line > 0)
                cJSON_AddNumberToObject(o, "line", ts->src_line);
        }
        break;
    }
    case VT_REC_MODULE:
        cJSON_AddNumberToObject(o, "module_id", r->u.module.fixed.module_id);
        add_hex(o, "base", r->u.module.fixed.base);
        add_rstr(o, "path", r->u.module.path);
        if (r->u.module.build_id.len) {
            char hex[2 * 64 + 1] = "";
            for (uint32_t i = 0; i < r->u.module.build_id.len && i < 64; i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)r->u.module.build_id.p[i]);
            cJSON_AddStringToObject(o, "build_id", hex);
        }
        break;
    case VT_REC_THREAD:
        cJSON_AddNumberToObject(o, "index", r->u.thread.fixed.index);
        cJSON_AddNumberToObject(o, "tid", r->u.thread.fixed.tid);
        cJSON_AddStringToObject(o, "role", tables_role_name(r->u.thread.fixed.role));
        add_rstr(o, "name", r->u.thread.name);
        break;
    case VT_REC_DEVICE: {
        const reader_device *dev = &r->u.device;
        char uuid[40], *p = uuid;
        for (int i = 0; i < 16; i++)
            p += sprintf(p, "%s%02x", (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "",
                         dev->fixed.uuid[i]);
        cJSON_AddNumberToObject(o, "ordinal", dev->fixed.ordinal);
        add_rstr(o, "name", dev->name);
        add_u64(o, "total_bytes", dev->fixed.total_bytes);
        cJSON_AddStringToObject(o, "uuid", uuid);
        cJSON_AddNumberToObject(o, "cc_major", dev->fixed.cc_major);
        cJSON_AddNumberToObject(o, "cc_minor", dev->fixed.cc_minor);
        break;
    }
    case VT_REC_PROCESS: {
        const reader_process *p = &r->u.process;
        cJSON_AddNumberToObject(o, "pid", p->fixed.pid);
        cJSON_AddNumberToObject(o, "ppid", p->fixed.ppid);
        add_u64(o, "start_realtime_ns", p->fixed.start_realtime_ns);
        add_rstr(o, "exe", p->exe);
        add_rstr(o, "cwd", p->cwd);
        add_rstr(o, "host", p->host);
        fill_strs(cJSON_AddArrayToObject(o, "argv"), &p->argv);
        fill_strs(cJSON_AddArrayToObject(o, "env"), &p->env);
        break;
    }
    case VT_REC_CONFIG:
        add_u64(o, "card_bytes", r->u.config.fixed.card_bytes);
        add_rstr(o, "card", r->u.config.card);
        cJSON_AddBoolToObject(o, "native_stacks", r->u.config.fixed.stack_mode & VT_STACKS_NATIVE);
        cJSON_AddBoolToObject(o, "python_stacks", r->u.config.fixed.stack_mode & VT_STACKS_PYTHON);
        cJSON_AddNumberToObject(o, "stack_depth", r->u.config.fixed.stack_depth);
        cJSON_AddNumberToObject(o, "sample_ms", r->u.config.fixed.sample_ms);
        break;
    case VT_REC_MEMINFO: {
        static const char *const src[] = {"app", "sampler", "context"};
        const reader_meminfo *m = &r->u.meminfo;
        add_u64(o, "time_ns", m->time_ns);
        cJSON_AddNumberToObject(o, "thread", m->thread);
        cJSON_AddNumberToObject(o, "device", m->device);
        add_u64(o, "free_bytes", m->free_bytes);
        add_u64(o, "total_bytes", m->total_bytes);
        if (m->source < 3)
            cJSON_AddStringToObject(o, "source", src[m->source]);
        else
            cJSON_AddNumberToObject(o, "source", m->source);
        break;
    }
    case VT_REC_PYINFO:
        cJSON_AddNumberToObject(o, "major", r->u.pyinfo.major);
        cJSON_AddNumberToObject(o, "minor", r->u.pyinfo.minor);
        cJSON_AddNumberToObject(o, "micro", r->u.pyinfo.micro);
        cJSON_AddBoolToObject(o, "supported", r->u.pyinfo.supported);
        break;
    case VT_REC_FILE: /* contents as text (escaped like every string), kind as a word */
        cJSON_AddStringToObject(o, "kind", tables_file_kind_name(r->u.file.fixed.kind));
        cJSON_AddNumberToObject(o, "argi", r->u.file.fixed.argi);
        add_u64(o, "size", r->u.file.fixed.size);
        cJSON_AddNumberToObject(o, "file_flags", r->u.file.fixed.flags);
        add_rstr(o, "name", r->u.file.name);
        add_rstr(o, "path", r->u.file.path);
        add_rstr(o, "contents", r->u.file.contents);
        break;
    case VT_REC_TRAILER:
        add_u64(o, "end_ns", r->u.trailer.end_ns);
        add_u64(o, "n_events", r->u.trailer.n_events);
        add_u64(o, "n_dropped", r->u.trailer.n_dropped);
        add_u64(o, "n_records", r->u.trailer.n_records);
        cJSON_AddNumberToObject(o, "stacks_truncated", r->u.trailer.stacks_truncated);
#define VT_DUMP_ENDED(name, bit, key)                                                              \
    if (r->flags & bit)                                                                            \
        cJSON_AddStringToObject(o, "ended", key);
        VT_TRAILER_FLAGS(VT_DUMP_ENDED)
#undef VT_DUMP_ENDED
        if (r->flags & ~VT_TRAILER_END_MASK) { /* (every reason, one key: two had been two) */
            cJSON *why = cJSON_AddArrayToObject(o, "lost_why");
#define VT_DUMP_LOST(name, bit, key)                                                               \
    if (r->flags & bit)                                                                            \
        cJSON_AddItemToArray(why, cJSON_CreateString(key));
            VT_TRAILER_LOSSES(VT_DUMP_LOST)
#undef VT_DUMP_LOST
        }
        break;
    case VT_REC_SNAPSHOT: /* 1.3: the ALLOC records that follow are the live set then */
        add_u64(o, "time_ns", r->u.snap.time_ns);
        add_u64(o, "events_before", r->u.snap.fixed.events_before);
        add_u64(o, "n_allocs", r->u.snap.fixed.n_allocs);
        add_u64(o, "live_bytes", r->u.snap.fixed.live_bytes);
        break;
    case VT_REC_STEP: { /* 1.3: a step's end; stacks: [stack_id, live bytes] where changed */
        const vt_rec_step *f = &r->u.step.fixed;
        add_u64(o, "time_ns", r->u.step.time_ns);
        cJSON_AddNumberToObject(o, "step", f->step);
        add_u64(o, "events", f->events);
        cJSON_AddBoolToObject(o, "optimizer", (f->flags & VT_STEPF_OPTIMIZER) != 0);
        cJSON_AddBoolToObject(o, "tensors", (f->flags & VT_STEPF_TENSORS) != 0);
        cJSON_AddBoolToObject(o, "oom", (f->flags & VT_STEPF_OOM) != 0);
        cJSON_AddBoolToObject(o, "partial", (f->flags & VT_STEPF_PARTIAL) != 0);
        cJSON_AddBoolToObject(o, "tail", (f->flags & VT_STEPF_TAIL) != 0);
        add_u64(o, "live_tensor", f->live_tensor);
        add_u64(o, "live_device", f->live_device);
        add_u64(o, "peak_tensor", f->peak_tensor);
        add_u64(o, "peak_device", f->peak_device);
        add_u64(o, "oom_request", f->oom_request);
        cJSON *st = cJSON_AddArrayToObject(o, "stacks");
        for (uint32_t i = 0; st && i < f->n_stacks; i++) {
            vt_step_stack v = reader_step_stack(&r->u.step, i);
            cJSON *pair = cJSON_CreateArray();
            cJSON_AddItemToArray(pair, cJSON_CreateNumber(v.stack_id));
            cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)v.bytes));
            cJSON_AddItemToArray(st, pair);
        }
        break;
    }
    default:
        cJSON_AddNumberToObject(o, "record_type", r->type);
        cJSON_AddNumberToObject(o, "flags", r->flags);
        cJSON_AddNumberToObject(o, "size", r->size);
        break;
    }
}

/* emit: o as one line on out, then freed; -1 when an allocation failed (o's or any before). */
static int emit(FILE *out, cJSON *o)
{
    static char buf[1 << 16];
    if (o && cJSON_PrintPreallocated(o, buf, (int)sizeof buf - 1, 0)) {
        jsonw_fputs(buf, out);
        fputc('\n', out);
    } else if (o) {
        char *s = cJSON_PrintUnformatted(o);
        if (s) {
            jsonw_fputs(s, out);
            fputc('\n', out);
        }
        free(s);
    }
    cJSON_Delete(o);
    return !o || mem_failed() ? -1 : 0;
}

/* ---- the interface (dump_json.h) ------------------------------------------------------- */

dump_json *dump_json_new(tables *t, FILE *out, bool resolve)
{
    dump_json *d = calloc(1, sizeof *d);
    if (d) {
        d->t = t;
        d->out = out;
        d->resolve = resolve;
    }
    return d;
}

void dump_json_free(dump_json *d)
{
    if (!d)
        return;
    free(d->raw);
    free(d->fr);
    free(d);
}

int dump_json_header(dump_json *d, const char *path, const vt_file_header *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "header");
    jsonw_add(o, "file", path, strlen(path));
    cJSON_AddNumberToObject(o, "major", h->major);
    cJSON_AddNumberToObject(o, "minor", h->minor);
    cJSON_AddNumberToObject(o, "header_size", h->header_size);
    add_u64(o, "start_realtime_ns", h->start_realtime_ns);
    add_u64(o, "start_mono_ns", h->start_mono_ns);
    return emit(d->out, o);
}

int dump_json_record(dump_json *d, const reader_record *rec)
{
    if (rec->type == VT_REC_ALLOC || rec->type == VT_REC_FREE || rec->type == VT_REC_OOM) {
        emit_event(d, rec);
        return 0;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", reader_type_name(rec->type));
    fill_record(d, o, rec);
    return emit(d->out, o);
}

int dump_json_status(dump_json *d, reader_status st, uint64_t records, uint64_t offset,
                     const char *message)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "status");
    cJSON_AddStringToObject(o, "status", reader_status_name(st));
    add_u64(o, "records", records);
    if (st != READER_OK) {
        add_u64(o, "offset", offset);
        jsonw_add(o, "message", message, strlen(message));
    }
    return emit(d->out, o);
}
