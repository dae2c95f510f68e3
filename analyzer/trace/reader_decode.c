/* reader_decode.c — decodes one record's payload into reader_record.u (reader.h): fixed
 * fields by type, then the packed strings after them, checked against the record's end.
 * Framing (header, sizes, buffering, truncation) lives in reader.c. */
#include "reader_decode.h"

#define READER_FIXED_MAX 256u /* fixed-shape records may grow (appended fields) to this */

/* Size limits per known type: smallest legal record and largest (fixed-shape records may
 * only grow by appended fields, so they stay small). Index = type. */
static const struct {
    uint32_t min, max;
} reader_sizes[VT_REC_MAX_KNOWN + 1] = {
    [VT_REC_PROCESS] = {8 + sizeof(vt_rec_process) + 3 * 4, VT_REC_MAX_SIZE},
    [VT_REC_CONFIG] = {8 + sizeof(vt_rec_config) + 4, VT_REC_MAX_SIZE},
    [VT_REC_DEVICE] = {8 + sizeof(vt_rec_device) + 4, VT_REC_MAX_SIZE},
    [VT_REC_THREAD] = {8 + sizeof(vt_rec_thread) + 4, VT_REC_MAX_SIZE},
    [VT_REC_ALLOC] = {VT_ALLOC_REC_SIZE, READER_FIXED_MAX},
    [VT_REC_FREE] = {VT_FREE_REC_SIZE, READER_FIXED_MAX},
    [VT_REC_STACK] = {8 + sizeof(vt_rec_stack), VT_REC_MAX_SIZE},
    [VT_REC_CODE] = {8 + sizeof(vt_rec_code) + 3 * 4, VT_REC_MAX_SIZE},
    [VT_REC_SYMBOL] = {8 + sizeof(vt_rec_symbol) + 4, VT_REC_MAX_SIZE},
    [VT_REC_MODULE] = {8 + sizeof(vt_rec_module) + 4, VT_REC_MAX_SIZE},
    [VT_REC_MEMINFO] = {8 + sizeof(vt_rec_meminfo), READER_FIXED_MAX},
    [VT_REC_OOM] = {8 + sizeof(vt_rec_oom), READER_FIXED_MAX},
    [VT_REC_PYINFO] = {8 + sizeof(vt_rec_pyinfo), READER_FIXED_MAX},
    [VT_REC_TRAILER] = {8 + sizeof(vt_rec_trailer), READER_FIXED_MAX},
    [VT_REC_FILE] = {8 + sizeof(vt_rec_file) + 3 * 4, VT_REC_MAX_SIZE},
    [VT_REC_SLOT] = {VT_SLOT_REC_SIZE, READER_FIXED_MAX},
    [VT_REC_CHUNK] = {8 + sizeof(vt_rec_chunk), VT_REC_MAX_SIZE},
    [VT_REC_SNAPSHOT] = {8 + sizeof(vt_rec_snapshot), READER_FIXED_MAX},
    [VT_REC_STEP] = {8 + sizeof(vt_rec_step), VT_REC_MAX_SIZE},
    [VT_REC_BLOCK] = {VT_BLOCK_HEAD_SIZE, VT_REC_MAX_SIZE}, /* (2.0: reader_blocks.c opens them) */
};

bool reader_size_ok(unsigned type, uint32_t size)
{
    if (type == 0 || type > VT_REC_MAX_KNOWN)
        return true;
    if (size < reader_sizes[type].min || size > reader_sizes[type].max)
        return false;
    if (type == VT_REC_ALLOC)
        return size == VT_ALLOC_REC_SIZE || size >= VT_ALLOC_AUX_REC_SIZE;
    if (type == VT_REC_FREE)
        return size == VT_FREE_REC_SIZE || size >= VT_FREE_EXT_REC_SIZE;
    return true;
}

bool reader_strs_next(const reader_strs *list, uint32_t *cursor, reader_str *out)
{
    if (*cursor + 4 > list->bytes)
        return false;
    uint32_t n = rd32(list->p + *cursor);
    out->p = (const char *)list->p + *cursor + 4;
    out->len = n;
    *cursor += 4 + n;
    return true;
}

/* A cursor over the strings after a record's fixed part. */
typedef struct strcur {
    const uint8_t *p, *end;
    bool bad;
} strcur;

/* take_str: the next packed string, or bad (and an empty string) when it runs past the
 * record. */
static reader_str take_str(strcur *c)
{
    reader_str s = {"", 0};
    if (c->bad || (size_t)(c->end - c->p) < 4) {
        c->bad = true;
        return s;
    }
    uint32_t n = rd32(c->p);
    if (n > (size_t)(c->end - c->p) - 4) {
        c->bad = true;
        return s;
    }
    s.p = (const char *)c->p + 4;
    s.len = n;
    c->p += 4 + n;
    return s;
}

/* take_strs: n packed strings as a list; bad when they run past the record. */
static reader_strs take_strs(strcur *c, uint32_t n)
{
    reader_strs l = {c->p, 0, 0};
    if ((uint64_t)n * 4 > (uint64_t)(c->end - c->p)) {
        c->bad = true;
        return l;
    }
    for (uint32_t i = 0; i < n && !c->bad; i++)
        take_str(c);
    if (c->bad)
        return l;
    l.n = n;
    l.bytes = (uint32_t)(c->p - l.p);
    return l;
}

/* reader_decode: fills rec->u from the payload. Returns NULL, or why the record is malformed. */
const char *reader_decode(reader_record *rec)
{
    const uint8_t *p = rec->payload;
    uint32_t n = rec->payload_len;
    strcur c = {0};
    switch (rec->type) {
    case VT_REC_ALLOC:
    case VT_REC_FREE:
        reader_decode_event(rec);
        return NULL;
    case VT_REC_STACK: {
        reader_stack *s = &rec->u.stack;
        vt_rec_stack f;
        memcpy(&f, p, sizeof f);
        s->stack_id = f.stack_id;
        s->n_native = f.n_native;
        s->n_python = f.n_python;
        s->flags = rec->flags;
        s->frames = p + sizeof f;
        if ((uint64_t)(f.n_native + f.n_python) * 8 > n - sizeof f)
            return "stack frames run past the record";
        if ((uint64_t)(f.n_native + f.n_python) * 8 != n - sizeof f)
            return "stack size does not match its frame count";
        return NULL;
    }
    case VT_REC_OOM: {
        reader_oom *o = &rec->u.oom;
        vt_rec_oom f;
        memcpy(&f, p, sizeof f);
        reader_event e;
        reader_decode_flags(rec->flags, f.tt, &e);
        o->time_ns = e.time_ns;
        o->thread = e.thread;
        o->flags = e.flags;
        o->api = e.api;
        o->device = e.device;
        o->emulated = e.emulated;
        o->requested = f.requested;
        o->capacity = f.capacity;
        o->process_used = f.process_used;
        o->stack_id = f.stack_id;
        o->result = f.result;
        return NULL;
    }
    case VT_REC_MEMINFO: {
        vt_rec_meminfo f;
        memcpy(&f, p, sizeof f);
        rec->u.meminfo = (reader_meminfo){VT_TT_NS(f.tt), VT_TT_THREAD(f.tt), f.free_bytes,
                                          f.total_bytes,  f.device,           f.source};
        return NULL;
    }
    case VT_REC_PYINFO:
        memcpy(&rec->u.pyinfo, p, sizeof(vt_rec_pyinfo));
        return NULL;
    case VT_REC_TRAILER:
        memcpy(&rec->u.trailer, p, sizeof(vt_rec_trailer));
        return NULL;
    case VT_REC_SNAPSHOT:
        memcpy(&rec->u.snap.fixed, p, sizeof(vt_rec_snapshot));
        rec->u.snap.time_ns = VT_TT_NS(rec->u.snap.fixed.tt);
        return NULL;
    case VT_REC_STEP: {
        reader_step *st = &rec->u.step;
        memcpy(&st->fixed, p, sizeof st->fixed);
        if ((uint64_t)st->fixed.n_stacks > VT_STEP_MAX_STACKS ||
            sizeof st->fixed + 16ull * st->fixed.n_stacks != n)
            return "its stack count does not match its size";
        st->time_ns = VT_TT_NS(st->fixed.tt);
        st->stacks = p + sizeof st->fixed;
        return NULL;
    }
    case VT_REC_PROCESS: {
        reader_process *pr = &rec->u.process;
        memcpy(&pr->fixed, p, sizeof pr->fixed);
        c = (strcur){p + sizeof pr->fixed, p + n, false};
        pr->exe = take_str(&c);
        pr->cwd = take_str(&c);
        pr->host = take_str(&c);
        pr->argv = take_strs(&c, pr->fixed.argc);
        pr->env = take_strs(&c, pr->fixed.nenv);
        break;
    }
    case VT_REC_CONFIG:
        memcpy(&rec->u.config.fixed, p, sizeof(vt_rec_config));
        c = (strcur){p + sizeof(vt_rec_config), p + n, false};
        rec->u.config.card = take_str(&c);
        break;
    case VT_REC_DEVICE:
        memcpy(&rec->u.device.fixed, p, sizeof(vt_rec_device));
        c = (strcur){p + sizeof(vt_rec_device), p + n, false};
        rec->u.device.name = take_str(&c);
        break;
    case VT_REC_THREAD:
        memcpy(&rec->u.thread.fixed, p, sizeof(vt_rec_thread));
        c = (strcur){p + sizeof(vt_rec_thread), p + n, false};
        rec->u.thread.name = take_str(&c);
        break;
    case VT_REC_CODE: {
        reader_code *cd = &rec->u.code;
        vt_rec_code f;
        memcpy(&f, p, sizeof f);
        cd->code_id = f.code_id;
        cd->first_line = f.first_line;
        c = (strcur){p + sizeof f, p + n, false};
        cd->filename = take_str(&c);
        cd->qualname = take_str(&c);
        cd->linetable = take_str(&c);
        break;
    }
    case VT_REC_SYMBOL:
        memcpy(&rec->u.symbol.fixed, p, sizeof(vt_rec_symbol));
        c = (strcur){p + sizeof(vt_rec_symbol), p + n, false};
        rec->u.symbol.name = take_str(&c);
        break;
    case VT_REC_MODULE:
        memcpy(&rec->u.module.fixed, p, sizeof(vt_rec_module));
        c = (strcur){p + sizeof(vt_rec_module), p + n, false};
        rec->u.module.path = take_str(&c);
        rec->u.module.build_id = (reader_str){"", 0};
        if (!c.bad && c.end - c.p >= 4) /* 1.1: the build-id follows the path */
            rec->u.module.build_id = take_str(&c);
        break;
    case VT_REC_FILE: {
        reader_file *fi = &rec->u.file;
        memcpy(&fi->fixed, p, sizeof fi->fixed);
        c = (strcur){p + sizeof fi->fixed, p + n, false};
        fi->name = take_str(&c);
        fi->path = take_str(&c);
        fi->contents = take_str(&c);
        if (!c.bad && fi->contents.len > VT_FILE_MAX_BYTES)
            return "a FILE record's contents exceed VT_FILE_MAX_BYTES";
        break;
    }
    default:
        return NULL; /* unknown: nothing to decode */
    }
    return c.bad ? "a string runs past the end of its record" : NULL;
}

/* reader_partial_ok (reader_decode.h): whether the `have` bytes present of a record cut by EOF are
 * consistent with its header (a writer cut mid-record) rather than a corrupt size: a STACK's size
 * must match its frame count; strings present must fit inside the declared size. */
bool reader_partial_ok(const vt_rec_header *h, const uint8_t *b, size_t have)
{
    if (h->type == VT_REC_STACK && have >= 16) {
        vt_rec_stack s;
        memcpy(&s, b + 8, sizeof s);
        return 16u + 8u * ((uint64_t)s.n_native + s.n_python) == h->size;
    }
    size_t fixed = 0;
    switch (h->type) {
    case VT_REC_PROCESS:
        fixed = sizeof(vt_rec_process);
        break;
    case VT_REC_CONFIG:
        fixed = sizeof(vt_rec_config);
        break;
    case VT_REC_DEVICE:
        fixed = sizeof(vt_rec_device);
        break;
    case VT_REC_THREAD:
        fixed = sizeof(vt_rec_thread);
        break;
    case VT_REC_CODE:
        fixed = sizeof(vt_rec_code);
        break;
    case VT_REC_SYMBOL:
        fixed = sizeof(vt_rec_symbol);
        break;
    case VT_REC_MODULE:
        fixed = sizeof(vt_rec_module);
        break;
    case VT_REC_FILE:
        fixed = sizeof(vt_rec_file);
        break;
    default:
        return true;
    }
    /* walk the string lengths that are present: each must end inside the declared size */
    uint64_t at = 8 + fixed;
    while (at + 4 <= have) {
        uint32_t n = rd32(b + at);
        at += 4 + (uint64_t)n;
        if (at > h->size)
            return false;
    }
    return true;
}
