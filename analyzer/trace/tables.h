/* tables.h — lookup tables filled from a trace's metadata records as they stream by
 * (threads, stacks, Python code objects, native symbols, modules, devices, process, config,
 * Python version) and the frame resolver that turns stack frames into text. Memory grows
 * with distinct stacks / codes / symbols, never with events. One tables per trace file. */
#ifndef VT_ANALYZER_TABLES_H
#define VT_ANALYZER_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* A string copied out of the trace: NUL-terminated for convenience, but len is the truth
 * (a malformed trace may embed NULs); raw bytes, escape before printing (escape.h). */
typedef struct tables_str {
    const char *s;
    uint32_t len;
} tables_str;

typedef struct tables_thread {
    uint32_t index; /* events' thread field */
    uint32_t tid;
    uint32_t role; /* vt_thread_role */
    tables_str name;
} tables_thread;

typedef struct tables_stack {
    uint32_t stack_id;
    uint16_t n_native;
    uint16_t n_python;
    const uint64_t *frames; /* n_native native (innermost first) then n_python Python */
    uint16_t flags;         /* VT_STACKF_*: PY_CUT, the outer Python frames were not recorded */
} tables_stack;

typedef struct tables_code {
    uint32_t code_id;
    uint32_t first_line;
    tables_str filename;
    tables_str qualname;
    const uint8_t *linetable;
    uint32_t linetable_len;
} tables_code;

typedef struct tables_module {
    uint32_t module_id;
    uint64_t base;
    tables_str path;
    const char *basename; /* last path component, inside path.s */
    tables_str build_id;  /* raw GNU build-id bytes as recorded, len 0 when none */
} tables_module;

typedef struct tables_symbol {
    uint64_t ip;
    uint64_t offset;      /* ip - module base */
    uint32_t module_id;   /* 0 = unknown */
    uint32_t sym_offset;  /* ip - symbol start */
    tables_str name;      /* mangled as recorded, "" if none */
    tables_str demangled; /* demangled (== name when not a C++ name), "" if none; a C++ name's
                           * is worked out when first asked for: read it through
                           * tables_symbol_demangled (.s is NULL until then) */
    /* From the module's file on this machine (symbolize.h), filled when a stack using ip is
     * first resolved: name / demangled become the file's symbol when the record had none;
     * src_file / src_line then where tables_sources is set, else when tables_frame_label first
     * shows the frame (the module's DWARF read only then). */
    tables_str src_file; /* DWARF source file, "" when unknown */
    int src_line;        /* its line, 0 when unknown */
    int symbolized;      /* 1 once looked up (whatever the outcome) */
    int src_done;        /* 1 once its file:line was looked up */
} tables_symbol;

typedef struct tables_device {
    uint32_t ordinal;
    uint32_t cc_major, cc_minor;
    uint64_t total_bytes;
    uint8_t uuid[16];
    tables_str name;
} tables_device;

typedef struct tables_process {
    uint32_t pid, ppid;
    uint64_t start_realtime_ns;
    tables_str exe, cwd, host;
    uint32_t argc;
    const tables_str *argv; /* argc entries */
    uint32_t nenv;
    const tables_str *env; /* nenv entries, "NAME=value" */
} tables_process;

typedef struct tables_config {
    uint64_t card_bytes;
    uint32_t stack_mode, stack_depth, sample_ms;
    tables_str card; /* "" if none */
} tables_config;

/* A FILE record (1.2): a config file the command line named, as recorded at start. */
typedef struct tables_file {
    uint32_t kind;  /* vt_file_kind: VT_FILE_ARG, VT_FILE_DIR_CONFIG */
    uint32_t argi;  /* the argument's index in the PROCESS argv */
    uint64_t size;  /* size on disk */
    uint32_t flags; /* VT_FILEF_*: contents are empty unless 0 */
    tables_str name, path, contents;
} tables_file;

typedef struct tables tables;

/* tables_new: empty tables; NULL when out of memory. Free with tables_free. */
tables *tables_new(void);
/* tables_free: frees the tables and every string/array they handed out; NULL is fine. */
void tables_free(tables *t);

/* tables_add: records what rec says if it is a metadata record (PROCESS, CONFIG, DEVICE,
 * THREAD, STACK, CODE, SYMBOL, MODULE, PYINFO, FILE); events and other types are ignored
 * (cheap to call on every record). Everything is copied: rec may be reused afterwards.
 * A second record with an id already known (thread index, stack id, code id, symbol ip,
 * module id, device ordinal) replaces nothing: the first one wins. PROCESS / CONFIG /
 * PYINFO: the first one wins. Returns 0, or -1 when out of memory (tables unchanged). */
int tables_add(tables *t, const reader_record *rec);

/* Lookups: NULL when unknown. Pointers stay valid until tables_free. */
const tables_thread *tables_thread_get(const tables *t, uint32_t index);
const tables_stack *tables_stack_get(const tables *t, uint32_t stack_id);
const tables_code *tables_code_get(const tables *t, uint32_t code_id);
const tables_symbol *tables_symbol_get(const tables *t, uint64_t ip);
const tables_module *tables_module_get(const tables *t, uint32_t module_id);
const tables_device *tables_device_get(const tables *t, uint32_t ordinal);
const tables_process *tables_process_get(const tables *t); /* NULL: no PROCESS record */
const tables_config *tables_config_get(const tables *t);   /* NULL: no CONFIG record */
/* tables_no_python: the trace's CONFIG record says no Python frames were recorded (--stacks
 * native / none); a trace without one is not said to lack them */
static inline int tables_no_python(const tables *t)
{
    const tables_config *cf = tables_config_get(t);
    return cf && !(cf->stack_mode & VT_STACKS_PYTHON);
}
/* tables_pyinfo_get: the PYINFO record or NULL. */
const vt_rec_pyinfo *tables_pyinfo_get(const tables *t);

/* tables_n_files / tables_file_at: the FILE records in file order (at most
 * VT_FILE_MAX_COUNT kept). tables_file_kind_name: "arg", "dir_config", "unknown". */
size_t tables_n_files(const tables *t);
const tables_file *tables_file_at(const tables *t, size_t i);
const char *tables_file_kind_name(uint32_t kind);

/* Iteration in insertion order: i from 0 to tables_n_*() - 1. */
size_t tables_n_threads(const tables *t);
const tables_thread *tables_thread_at(const tables *t, size_t i);
size_t tables_n_devices(const tables *t);
const tables_device *tables_device_at(const tables *t, size_t i);
size_t tables_n_stacks(const tables *t);
size_t tables_n_codes(const tables *t);
size_t tables_n_symbols(const tables *t);
size_t tables_n_modules(const tables *t);
/* tables_code_file_has: 1 when the file name of a Python code object of the trace (one that
 * was on a recorded stack) contains one of needles (a NULL-terminated list), else 0. */
int tables_code_file_has(const tables *t, const char *const *needles);

/* tables_code_named: 1 when a Python code object of the trace (on a recorded stack) has a file
 * name containing file and one of qualnames (NULL-terminated) as its qualified name, else 0. */
int tables_code_named(const tables *t, const char *file, const char *const *qualnames);

/* tables_env: the value of recorded environment variable name ("RANK", ...) from the
 * PROCESS record, as a NUL-terminated string owned by the tables; NULL when absent. */
const char *tables_env(const tables *t, const char *name);
/* tables_code_find: 1 when a code object's file contains file_part (NULL: any) and its qualname
 * is qualname (NULL: any) or ends with qual_suffix (NULL: no such test); the first match's
 * qualname (in tables_code_next's order) into first (NULL: not wanted). */
int tables_code_find(const tables *t, const char *file_part, const char *qualname,
                     const char *qual_suffix, char *first, size_t len);
/* tables_code_next: the code objects of t one after another, in the order the trace defines
 * them (the first seen on a stack first): start with *pos = 0; NULL when there are no more. */
const tables_code *tables_code_next(const tables *t, size_t *pos);
/* tables_stack_next: the stacks of t one after another (*pos starts at 0), in no order a view may
 * show (the map's: a caller that says what it found orders it itself); NULL after the last. */
const tables_stack *tables_stack_next(const tables *t, size_t *pos);

/* tables_role_name: "other", "main", "autograd", "worker" ("other" for unknown values). */
const char *tables_role_name(uint32_t role);

/* ---- resolver --------------------------------------------------------------------------- */

enum tables_frame_kind { TABLES_FRAME_NATIVE = 0, TABLES_FRAME_PYTHON = 1 };

/* One resolved frame. Strings are owned by the tables (valid until tables_free), raw bytes
 * from the trace (escape before printing); "" when unknown, never NULL. */
typedef struct tables_frame {
    int kind;     /* enum tables_frame_kind */
    uint64_t raw; /* the frame as recorded */
    /* Python: */
    uint32_t code_id;        /* VT_PYFRAME_CODE(raw) */
    uint32_t byte_offset;    /* VT_PYFRAME_OFFSET(raw) */
    int line;                /* from the line table; -1 when unknown (no CODE / no line) */
    const tables_code *code; /* NULL when the code id is unknown */
    /* Native: */
    uint64_t ip;
    const tables_symbol *sym;    /* NULL when no SYMBOL record for ip */
    const tables_module *module; /* NULL when unknown */
    uint64_t module_offset;      /* ip - module base (from SYMBOL, or 0 if unknown) */
    uint64_t sym_offset;         /* ip - symbol start (0 if no symbol) */
    /* Both: */
    const char *function; /* Python qualname / demangled symbol, "" if unknown */
    const char *file;     /* Python filename / module path, "" if unknown */
    /* Native, from debug info (tables_symbol.src_file / src_line): */
    const char *src_file; /* "" if unknown */
    int src_line;         /* 0 if unknown */
} tables_frame;

/* tables_resolve_frame: resolves frame `raw` of kind TABLES_FRAME_* into *out. Never
 * fails: unknown parts are left "" / NULL / -1. */
void tables_resolve_frame(const tables *t, uint64_t raw, int kind, tables_frame *out);

/* tables_resolve_stack: all frames of stack_id, innermost first (native then Python, the
 * order a traceback is read from the allocation outwards), resolved once and cached (native
 * symbols looked up in their module files the first time: symbolize.h): *n
 * gets the count. Returns NULL with *n = 0 for stack 0 or an unknown id, or out of memory
 * (then mem_failed(), mem.h, says so: never show that as "no stack"). The array is owned by
 * the tables. */
const tables_frame *tables_resolve_stack(tables *t, uint32_t stack_id, size_t *n);

/* tables_sources: set it (before the replay) when a view shows every native frame's source
 * file:line (dump, export --memory-viz): else symbols are named from the modules' symbol tables
 * and a module's DWARF is read only when tables_frame_label shows one of its frames (a report's
 * native site), not for the names of the frames around it. */
extern int tables_sources;
/* tables_symbol_demangled: s's demangled name (s->demangled, demangled the first time it is asked
 * for, as resolving its frame does; out of memory leaves the name as recorded: mem.h says so). */
const tables_str *tables_symbol_demangled(const tables *t, const tables_symbol *s);
/* tables_symbol_named: the SYMBOL entry of ip once its module's file on this machine was
 * consulted (the first call looks, symbolize.h): name / demangled from the file when the record
 * had none, src_file / src_line from its debug info; NULL when the trace has no SYMBOL for ip. */
const tables_symbol *tables_symbol_named(tables *t, uint64_t ip);

/* tables_resolve_frames: the frames of a STACK record (frames[0..n_native + n_python): native
 * innermost first, then Python) resolved into out (room for n_native + n_python) in the order
 * tables_resolve_stack gives, keeping no stack: for a caller that sees each stack once and need
 * not store it (dump). Each frame that can no longer change (a symbol's, a code object's) is
 * kept once by its raw value (stacks share most of their frames). Returns the count. Strings
 * as tables_resolve_frame's. */
size_t tables_resolve_frames(tables *t, const uint64_t *frames, unsigned n_native,
                             unsigned n_python, tables_frame *out);
/* tables_frame_of: frame raw of kind (TABLES_FRAME_*) as tables_resolve_stack resolves it, alone:
 * the frame the tables keep for raw, or out filled (valid until out is reused). */
const tables_frame *tables_frame_of(tables *t, uint64_t raw, int kind, tables_frame *out);
/* tables_code_frame: Python frame raw with its code object, qualname and file alone, its line
 * left unknown (-1), into out: for a caller that reads no line (a site's walk over a stack, its
 * module), which then decodes no line table. Returns out. */
const tables_frame *tables_code_frame(const tables *t, uint64_t raw, tables_frame *out);

/* tables_module_names: whether the names of module_id's frames could be looked up in its file
 * on this machine (symbolize.h: SYMBOLIZE_OK, a negative enum symbolize_status saying why not,
 * or SYMBOLIZE_UNTRIED before any of its frames was resolved). */
int tables_module_names(const tables *t, uint32_t module_id);

/* tables_frame_text: human text of a resolved frame into buf (always NUL-terminated,
 * truncated to bufsz): Python "file:line qualname" (line "?" if unknown), native
 * "symbol+0xoff (module basename)" or "module+0xoff" or "0xip", then " at file:line" when
 * debug info gave one. Not escaped. Returns the
 * length it wanted (snprintf-like). */
size_t tables_frame_text(const tables_frame *f, char *buf, size_t bufsz);
/* tables_short_file: a Python file name as people say it: from the package on when under
 * site-packages / dist-packages, relative to the traced process's directory when under it (the
 * same line of code then reads the same in two traces from different machines or checkouts) */
const char *tables_short_file(const tables *t, const char *file);
/* tables_frame_label: tables_frame_text with the Python file made short (tables_short_file): what
 * reports, views and diff name a frame by */
size_t tables_frame_label(tables *t, const tables_frame *f, char *buf, size_t bufsz);
/* tables_frame_source: a native frame's source file from debug info (read the first time it is
 * asked for, as the label does), its line in *line (0: unknown); "" when none */
const char *tables_frame_source(tables *t, const tables_frame *f, int *line);

/* demangle: C++ demangling of a mangled name via __cxa_demangle (demangle.c): *out gets a
 * malloc'ed demangled name, or NULL when name is not a C++ name (does not start with _Z, or the
 * demangler refuses it). Returns 0, or -1 when memory ran out (*out NULL: the name is not known
 * to be other than C++; mem.h has the failure). name needs no NUL: len bytes are used. */
int demangle(const char *name, size_t len, char **out);

#endif
