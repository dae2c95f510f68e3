/* evalsrc_trace.c — the inline evaluations of one trace's recorded scripts (evalsrc_lines of
 * each, evalsrc.c), and whether a stack passes through one. Interface: evalsrc.h. */
#include "evalsrc.h"

#include "castsrc.h"
#include "datasrc.h"
#include "optsrc.h"
#include "phases.h"
#include "pysrc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a line's bit in evalsrc_file.line beside the evaluations' 1 and 2: data kept on the device
 * (datasrc.h) */
#define DATA_LINE 4
/* ... and the body of the program's own optimizer class (optsrc.h) */
#define OPT_LINE 8
/* ... and a line that constructs an optimizer (a call of a class an optimizer's name names:
 * phases_optim_name; not its class or def line) */
#define OPTIM_LINE 16
/* ... and a line that casts to 16 bits (castsrc.h): by name, or by a variable that holds 16 bits
 * where the run's precision does */
#define CAST_LINE 32
#define CAST_VAR_LINE 64

static int name_byte(char ch);

/* optim_lines: OPTIM_LINE into out[line] of src's lines that call NAME( with NAME an optimizer's
 * class (after no identifier byte, a '.' allowed: torch.optim.Adagrad(); not after class / def);
 * a comment's or a string's text may count too, which runs no constructor. The count set. */
static size_t optim_lines(const char *s, size_t len, uint8_t *out, size_t n)
{
    size_t line = 1, set = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n') {
            line++;
            continue;
        }
        if (!name_byte(s[i]) || (i && name_byte(s[i - 1])))
            continue;
        size_t j = i;
        while (j < len && name_byte(s[j]))
            j++;
        size_t k = i;
        while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t'))
            k--;
        int def =
            (k >= 5 && !memcmp(s + k - 5, "class", 5)) || (k >= 3 && !memcmp(s + k - 3, "def", 3));
        if (j < len && s[j] == '(' && !def && phases_optim_name(s + i, j - i) && line < n &&
            !(out[line] & OPTIM_LINE))
            out[line] |= OPTIM_LINE, set++;
        i = j - 1;
    }
    return set;
}

void evalsrc_free(evalsrc *e)
{
    for (int i = 0; i < e->n; i++)
        free(e->f[i].line);
    free(e->code);
    memset(e, 0, sizeof *e);
}

/* build: the recorded scripts' inline evaluations, anew when the tables hold more FILE records */
static void build(evalsrc *e, const tables *t)
{
    size_t nf = tables_n_files(t);
    if (nf == e->nfiles_seen)
        return;
    evalsrc_free(e);
    e->nfiles_seen = nf;
    for (size_t i = 0; i < nf && e->n < (int)(sizeof e->f / sizeof e->f[0]); i++) {
        const tables_file *f = tables_file_at(t, i);
        size_t ln = f ? f->name.len : 0;
        if (!f || f->kind != VT_FILE_ARG || f->flags || !f->contents.len || ln < 3 ||
            memcmp(f->name.s + ln - 3, ".py", 3))
            continue;
        size_t lines = 2;
        for (uint32_t k = 0; k < f->contents.len; k++)
            lines += f->contents.s[k] == '\n';
        uint8_t *m = malloc(lines);
        if (!m)
            continue;
        size_t ev = evalsrc_lines(f->contents.s, f->contents.len, m, lines);
        ev += optsrc_lines(f->contents.s, f->contents.len, m, lines, OPT_LINE);
        ev += datasrc_lines(f->contents.s, f->contents.len, m, lines, DATA_LINE);
        ev += castsrc_lines(f->contents.s, f->contents.len, m, lines, CAST_LINE, CAST_VAR_LINE);
        if (!optim_lines(f->contents.s, f->contents.len, m, lines) && !ev) {
            free(m);
            continue;
        }
        e->f[e->n].path = f->path.s, e->f[e->n].name = f->name.s, e->f[e->n].fi = i;
        e->f[e->n].line = m, e->f[e->n++].nlines = lines;
    }
}

/* file_of: which recorded script code_id's code object is in: its index, -1 none */
static int file_of(evalsrc *e, const tables *t, uint32_t code_id)
{
    if (code_id < e->ncode && e->code[code_id])
        return e->code[code_id] == 255 ? -1 : e->code[code_id] - 1;
    const tables_code *cd = tables_code_get(t, code_id);
    if (!cd) /* (not known yet: asked again) */
        return -1;
    int k = -1;
    for (int i = 0; i < e->n && k < 0; i++) {
        const char *fn = cd->filename.s, *p = e->f[i].path, *nm = e->f[i].name;
        size_t lf = cd->filename.len, lp = p ? strlen(p) : 0, ln = nm ? strlen(nm) : 0;
        if ((lp && lf == lp && !memcmp(fn, p, lp)) ||
            (!lp && ln && lf >= ln && !memcmp(fn + lf - ln, nm, ln) &&
             (lf == ln || fn[lf - ln - 1] == '/')))
            k = i;
    }
    if (code_id >= e->ncode && code_id <= 2 * tables_n_codes(t) + 1024) {
        size_t n = e->ncode ? e->ncode : 256;
        while (n <= code_id)
            n *= 2;
        uint8_t *m = realloc(e->code, n);
        if (m) {
            memset(m + e->ncode, 0, n - e->ncode);
            e->code = m, e->ncode = n;
        }
    }
    if (code_id < e->ncode)
        e->code[code_id] = k < 0 ? 255 : (uint8_t)(k + 1);
    return k;
}

static int line_bits(const evalsrc *e, int k, int line)
{
    return k >= 0 && line > 0 && (size_t)line < e->f[k].nlines ? e->f[k].line[line] : 0;
}

static int on_line(const evalsrc *e, int k, int line)
{
    return line_bits(e, k, line) & 3;
}

int evalsrc_stack(evalsrc *e, tables *t, const tables_stack *st)
{
    build(e, t);
    if (!e->n)
        return 0;
    for (unsigned i = 0; i < st->n_python; i++) {
        uint64_t raw = st->frames[st->n_native + i];
        int k = file_of(e, t, VT_PYFRAME_CODE(raw));
        if (k < 0)
            continue;
        tables_frame fr;
        tables_resolve_frame(t, raw, TABLES_FRAME_PYTHON, &fr);
        int v = on_line(e, k, fr.line);
        if (v)
            return v;
    }
    return 0;
}

int evalsrc_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n)
{
    build(e, t);
    for (size_t i = 0; e->n && i < n; i++) {
        int v = f[i].kind == TABLES_FRAME_PYTHON
                    ? on_line(e, file_of(e, t, f[i].code_id), f[i].line)
                    : 0;
        if (v)
            return v;
    }
    return 0;
}

/* ctor_step: one Python frame (its script's index k, line, function fn) of a walk innermost
 * first; *init: the last a bare __init__ (no class named: Python 3.10's; a qualname's class is
 * phases_optim_ctor's to tell); *own: no constructor outside the recorded scripts so far (a
 * module's, torch.nn's: its weights). 1 when this frame's line constructs an optimizer and it
 * called such an __init__ */
static int ctor_step(const evalsrc *e, int k, int line, const char *fn, int *init, int *own)
{
    if (*init && *own && (line_bits(e, k, line) & OPTIM_LINE))
        return 1;
    size_t n = fn ? strlen(fn) : 0;
    *own &= k >= 0 || n < 8 || strcmp(fn + n - 8, "__init__");
    *init = k >= 0 && n == 8 && !strcmp(fn, "__init__");
    return 0;
}

int evalsrc_optim_ctor(evalsrc *e, tables *t, const tables_stack *st)
{
    build(e, t);
    int init = 0, own = 1;
    for (unsigned i = 0; e->n && i < st->n_python; i++) {
        uint64_t raw = st->frames[st->n_native + i];
        int k = file_of(e, t, VT_PYFRAME_CODE(raw)), line = -1;
        const char *fn = "";
        /* the frame's line only where ctor_step reads it (a line table looked up, and decoded
         * the first time, for every frame of every stack had been 2 % of a report) */
        if (init && own && k >= 0) {
            tables_frame fr;
            tables_resolve_frame(t, raw, TABLES_FRAME_PYTHON, &fr);
            line = fr.line, fn = fr.function;
        } else {
            const tables_code *cd = tables_code_get(t, VT_PYFRAME_CODE(raw));
            fn = cd ? cd->qualname.s : "";
        }
        if (ctor_step(e, k, line, fn, &init, &own))
            return 1;
    }
    return 0;
}

int evalsrc_optim_ctor_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n)
{
    build(e, t);
    int init = 0, own = 1;
    for (size_t i = 0; e->n && i < n; i++)
        if (f[i].kind == TABLES_FRAME_PYTHON &&
            ctor_step(e, file_of(e, t, f[i].code_id), f[i].line, f[i].function, &init, &own))
            return 1;
    return 0;
}

/* bit_at / bit_frames: whether the Python frame raw (or the py-th Python frame of f[0..n)) is on
 * a line of the recorded scripts that line_bits marks with bit (DATA_LINE, OPT_LINE) */
static int bit_at(evalsrc *e, tables *t, uint64_t raw, unsigned bit)
{
    build(e, t);
    int k = e->n ? file_of(e, t, VT_PYFRAME_CODE(raw)) : -1;
    if (k < 0)
        return 0;
    tables_frame fr;
    tables_resolve_frame(t, raw, TABLES_FRAME_PYTHON, &fr);
    return (line_bits(e, k, fr.line) & bit) != 0;
}

static int bit_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n, int py,
                      unsigned bit)
{
    build(e, t);
    for (size_t i = 0; e->n && py >= 0 && i < n; i++)
        if (f[i].kind == TABLES_FRAME_PYTHON && py-- == 0)
            return (line_bits(e, file_of(e, t, f[i].code_id), f[i].line) & bit) != 0;
    return 0;
}

int evalsrc_data_at(evalsrc *e, tables *t, uint64_t raw)
{
    return bit_at(e, t, raw, DATA_LINE);
}

int evalsrc_data_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n, int py)
{
    return bit_frames(e, t, f, n, py, DATA_LINE);
}

int evalsrc_opt_at(evalsrc *e, tables *t, uint64_t raw)
{
    return bit_at(e, t, raw, OPT_LINE);
}

int evalsrc_opt_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n, int py)
{
    return bit_frames(e, t, f, n, py, OPT_LINE);
}

int evalsrc_data_made(evalsrc *e, tables *t, uint32_t stack_id)
{
    size_t n = 0;
    const tables_frame *fr = stack_id ? tables_resolve_stack(t, stack_id, &n) : NULL;
    if (!fr)
        return 0;
    phases_acc a = PHASES_ACC_INIT;
    for (size_t k = 0; k < n; k++)
        phases_acc_frame(&a, &fr[k], NULL);
    if (evalsrc_data_frames(e, t, fr, n, phases_acc_filled(&a)))
        phases_acc_mark_data(&a);
    return phases_acc_end(&a).data;
}

int evalsrc_data_reaching(evalsrc *e, tables *t, uint32_t stack_id, char *out, size_t n)
{
    size_t nf = 0;
    if (n)
        out[0] = '\0';
    const tables_frame *fr = stack_id && n ? tables_resolve_stack(t, stack_id, &nf) : NULL;
    if (!fr)
        return 0;
    build(e, t);
    phases_acc a = PHASES_ACC_INIT;
    for (size_t k = 0; k < nf; k++)
        phases_acc_frame(&a, &fr[k], NULL);
    int py = phases_acc_filled(&a); /* (the caller's line: the one whose call filled it) */
    const tables_frame *at = NULL, *beyond = NULL;
    for (size_t i = 0; e->n && py >= 0 && i < nf && !beyond; i++) {
        if (fr[i].kind != TABLES_FRAME_PYTHON)
            continue;
        if (at)
            beyond = &fr[i]; /* (the frame that called the line's function) */
        else if (!py--)
            at = &fr[i], py = 0;
    }
    int k = at ? file_of(e, t, at->code_id) : -1;
    const tables_file *f = k >= 0 ? tables_file_at(t, e->f[k].fi) : NULL;
    if (!f || at->line <= 0)
        return 0;
    int call = beyond && beyond->line > 0 && file_of(e, t, beyond->code_id) == k ? beyond->line : 0;
    return datasrc_reaching(f->contents.s, f->contents.len, (uint32_t)at->line, at->function,
                            (uint32_t)call, out, n);
}

static int name_byte(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* reads_on_pass: key (n bytes) is read as a whole name on a line the file k marks 2 */
static int reads_on_pass(const evalsrc *e, const tables *t, int k, const char *key, size_t n)
{
    const tables_file *f = tables_file_at(t, e->f[k].fi);
    if (!f || !n)
        return 0;
    const char *s = f->contents.s;
    size_t len = f->contents.len, line = 1;
    for (size_t i = 0; i < len; line++) {
        size_t end = i;
        while (end < len && s[end] != '\n')
            end++;
        if (line < e->f[k].nlines && (e->f[k].line[line] & 3) == 2)
            for (size_t j = i; j + n <= end && s[j] != '#'; j++)
                if (!memcmp(s + j, key, n) && (j == i || !name_byte(s[j - 1])) &&
                    (j + n == end || !name_byte(s[j + n])))
                    return 1;
        i = end + 1;
    }
    return 0;
}

uint64_t evalsrc_pass_flag(evalsrc *e, tables *t, int argc, const char *const *argv, char *flag,
                           size_t len)
{
    build(e, t);
    for (int i = 1; e->n && argv && i < argc; i++) {
        const char *a = argv[i];
        if (!a || strncmp(a, "--", 2))
            continue;
        char key[64];
        size_t n = strcspn(a + 2, "=");
        if (!n || n >= sizeof key)
            continue;
        for (size_t j = 0; j < n; j++)
            key[j] = a[2 + j] == '-' ? '_' : a[2 + j];
        key[n] = '\0';
        if (!strstr(key, "batch") || strstr(key, "batches")) /* (--max_eval_batches: a count) */
            continue;
        const char *v = a[2 + n] == '=' ? a + 3 + n : i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        unsigned long long b = v ? strtoull(v, &end, 10) : 0;
        if (!v || *v < '0' || *v > '9' || end == v || *end || !b)
            continue;
        for (int k = 0; k < e->n; k++)
            if (reads_on_pass(e, t, k, key, n)) {
                snprintf(flag, len, "--%.*s %llu", (int)(n < 48 ? n : 48), a + 2, b);
                return b;
            }
    }
    return 0;
}

int evalsrc_cast16(evalsrc *e, tables *t, uint32_t stack_id, char *where, size_t n)
{
    size_t nf = 0;
    const tables_frame *fr = stack_id ? tables_resolve_stack(t, stack_id, &nf) : NULL;
    build(e, t);
    for (size_t i = 0; fr && e->n && i < nf; i++) {
        int k = fr[i].kind == TABLES_FRAME_PYTHON ? file_of(e, t, fr[i].code_id) : -1;
        if (k < 0)
            continue;
        /* (the innermost frame in a recorded script: the line that made it) */
        int b = line_bits(e, k, fr[i].line);
        int v = b & CAST_LINE ? 1 : b & CAST_VAR_LINE ? 2 : 0;
        if (v && n)
            snprintf(where, n, "%.60s:%d", pysrc_name(e->f[k].name), fr[i].line);
        return v;
    }
    return 0;
}
