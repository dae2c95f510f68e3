/* pyoffsets.h — where pyframes.c finds things inside a live CPython: one table of byte
 * offsets per supported version (3.10, 3.11, 3.12 written here; 3.13 filled at run time from
 * the interpreter's own _Py_DebugOffsets). tests/pyprobe/probe.c checks every number below
 * against each installed CPython's internal headers, so a wrong table fails `make test`. */
#ifndef VT_PRELOAD_PYOFFSETS_H
#define VT_PRELOAD_PYOFFSETS_H

#include <stdint.h>
#include <string.h>

#define VT__PYOFF_NONE 0xffffffffu /* the field does not exist in this version */

/* The fields, one X-macro so the table, the probe and the debug-offsets decoder agree.
 *   ts_frame          PyThreadState: 3.10 frame, 3.11/3.12 cframe, 3.13 current_frame
 *   cframe_current    _PyCFrame.current_frame (3.11/3.12 only)
 *   fr_previous       3.10 PyFrameObject.f_back, else _PyInterpreterFrame.previous
 *   fr_code           f_code (3.13: f_executable)
 *   fr_instr          3.10 f_lasti (int, code units); 3.11/3.12 prev_instr; 3.13 instr_ptr
 *   fr_owner          _PyInterpreterFrame.owner (char), 3.11+
 *   co_size           PyVarObject.ob_size of the code object (3.11+: code units)
 *   co_filename, co_name (3.10: co_name; 3.11+: co_qualname), co_firstlineno (int),
 *   co_linetable      bytes object
 *   co_code           3.10: co_code (a bytes object); 3.11+: co_code_adaptive (inline)
 *   co_firsttraceable _co_firsttraceable (int), 3.11+ (3.13's debug offsets lack it: 16 bytes
 *                     before co_code_adaptive, past co_extra, as in 3.11 and 3.12)
 *   bytes_size, bytes_sval   PyBytesObject.ob_size / ob_sval
 *   uni_state, uni_length    PyASCIIObject.state (u32 bit-field) / length
 *   uni_ascii_size, uni_compact_size   sizeof(PyASCIIObject) / sizeof(PyCompactUnicodeObject)
 *   ob_type           PyObject.ob_type */
/* clang-format off */
#define VT__PYOFF_FIELDS(X)                                                                        \
    X(ts_frame)                                                                                    \
    X(cframe_current)                                                                              \
    X(fr_previous)                                                                                 \
    X(fr_code)                                                                                     \
    X(fr_instr)                                                                                    \
    X(fr_owner)                                                                                    \
    X(co_size)                                                                                     \
    X(co_filename)                                                                                 \
    X(co_name)                                                                                     \
    X(co_firstlineno)                                                                              \
    X(co_linetable)                                                                                \
    X(co_code)                                                                                     \
    X(co_firsttraceable)                                                                           \
    X(bytes_size)                                                                                  \
    X(bytes_sval)                                                                                  \
    X(uni_state)                                                                                   \
    X(uni_length)                                                                                  \
    X(uni_ascii_size)                                                                              \
    X(uni_compact_size)                                                                            \
    X(ob_type)
/* clang-format on */

typedef struct vt__pyoffsets {
    int minor; /* 3.<minor> */
#define VT__PYOFF_MEMBER(name) uint32_t name;
    VT__PYOFF_FIELDS(VT__PYOFF_MEMBER)
#undef VT__PYOFF_MEMBER
    int owner_generator; /* FRAME_OWNED_BY_GENERATOR, 3.11+ */
    int owner_cstack;    /* FRAME_OWNED_BY_CSTACK (3.12+), -1 when the version has none */
} vt__pyoffsets;

/* PyASCIIObject.state bit-field positions (same in 3.10-3.13: interned:2, kind:3,
 * compact:1, ascii:1, ...); the probe checks them with the real bit-field. */
#define VT__UNI_KIND(state) (((state) >> 2) & 7u)
#define VT__UNI_COMPACT(state) (((state) >> 5) & 1u)
#define VT__UNI_ASCII(state) (((state) >> 6) & 1u)

/* 3.10.x (x86-64 / aarch64 LP64, default build). */
static const vt__pyoffsets vt__pyoff_310 = {
    .minor = 10,
    .ts_frame = 24,
    .cframe_current = VT__PYOFF_NONE,
    .fr_previous = 24,
    .fr_code = 32,
    .fr_instr = 96,
    .fr_owner = VT__PYOFF_NONE,
    .co_size = VT__PYOFF_NONE,
    .co_filename = 104,
    .co_name = 112,
    .co_firstlineno = 40,
    .co_linetable = 120,
    .co_code = 48,
    .co_firsttraceable = VT__PYOFF_NONE,
    .bytes_size = 16,
    .bytes_sval = 32,
    .uni_state = 32,
    .uni_length = 16,
    .uni_ascii_size = 48,
    .uni_compact_size = 72,
    .ob_type = 8,
    .owner_generator = -1,
    .owner_cstack = -1,
};

/* 3.11.x */
static const vt__pyoffsets vt__pyoff_311 = {
    .minor = 11,
    .ts_frame = 56,
    .cframe_current = 8,
    .fr_previous = 48,
    .fr_code = 32,
    .fr_instr = 56,
    .fr_owner = 69,
    .co_size = 16,
    .co_filename = 112,
    .co_name = 128,
    .co_firstlineno = 72,
    .co_linetable = 136,
    .co_code = 184,
    .co_firsttraceable = 168,
    .bytes_size = 16,
    .bytes_sval = 32,
    .uni_state = 32,
    .uni_length = 16,
    .uni_ascii_size = 48,
    .uni_compact_size = 72,
    .ob_type = 8,
    .owner_generator = 1,
    .owner_cstack = -1,
};

/* 3.12.x */
static const vt__pyoffsets vt__pyoff_312 = {
    .minor = 12,
    .ts_frame = 56,
    .cframe_current = 0,
    .fr_previous = 8,
    .fr_code = 0,
    .fr_instr = 56,
    .fr_owner = 70,
    .co_size = 16,
    .co_filename = 112,
    .co_name = 128,
    .co_firstlineno = 68,
    .co_linetable = 136,
    .co_code = 192,
    .co_firsttraceable = 176,
    .bytes_size = 16,
    .bytes_sval = 32,
    .uni_state = 32,
    .uni_length = 16,
    .uni_ascii_size = 40,
    .uni_compact_size = 56,
    .ob_type = 8,
    .owner_generator = 1,
    .owner_cstack = 3,
};

/* 3.13.x as vt__pyoff_from_debug313 reads it from a default build's _PyRuntime: the walk
 * takes these as constants when the running interpreter's are the same (pyframes.c; the
 * probe derives them from 3.13's own headers), its own offsets otherwise */
static const vt__pyoffsets vt__pyoff_313 = {
    .minor = 13,
    .ts_frame = 72,
    .cframe_current = VT__PYOFF_NONE,
    .fr_previous = 8,
    .fr_code = 0,
    .fr_instr = 56,
    .fr_owner = 70,
    .co_size = 16,
    .co_filename = 112,
    .co_name = 128,
    .co_firstlineno = 68,
    .co_linetable = 136,
    .co_code = 200,
    .co_firsttraceable = 184,
    .bytes_size = 16,
    .bytes_sval = 32,
    .uni_state = 32,
    .uni_length = 16,
    .uni_ascii_size = 40,
    .uni_compact_size = 56,
    .ob_type = 8,
    .owner_generator = 1,
    .owner_cstack = 3,
};

/* ---- 3.13: _Py_DebugOffsets, the first member of _PyRuntime ------------------------------
 * Our own mirror of the 3.13 layout (all u64 after an 8-byte cookie); probe.c checks every
 * member we read against the real struct. Later versions changed this layout: 3.13 only. */
#define VT__PY_DEBUG_COOKIE "xdebugpy"
typedef struct vt__py313_debug_offsets {
    char cookie[8];
    uint64_t version, free_threaded;
    struct {
        uint64_t size, finalizing, interpreters_head;
    } runtime_state;
    struct {
        uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
            gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
            gil_runtime_state_holder;
    } interpreter_state;
    struct {
        uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
            datastack_chunk, status;
    } thread_state;
    struct {
        uint64_t size, previous, executable, instr_ptr, localsplus, owner;
    } interpreter_frame;
    struct {
        uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
            localspluskinds, co_code_adaptive;
    } code_object;
    struct {
        uint64_t size, ob_type;
    } pyobject;
    struct {
        uint64_t size, tp_name, tp_repr, tp_flags;
    } type_object;
    struct {
        uint64_t size, ob_item, ob_size;
    } tuple_object;
    struct {
        uint64_t size, ob_item, ob_size;
    } list_object;
    struct {
        uint64_t size, ma_keys, ma_values;
    } dict_object;
    struct {
        uint64_t size, ob_fval;
    } float_object;
    struct {
        uint64_t size, lv_tag, ob_digit;
    } long_object;
    struct {
        uint64_t size, ob_size, ob_sval;
    } bytes_object;
    struct {
        uint64_t size, state, length, asciiobject_size;
    } unicode_object;
} vt__py313_debug_offsets;

/* vt__pyoff_from_debug313: fills *out from a 3.13 interpreter's debug offsets `d` (read in
 * place from _PyRuntime). Returns 0, or -1 (out untouched) if the cookie, the version
 * (must be 3.13.x), the build (free-threaded is not supported) or an offset looks wrong. */
static inline int vt__pyoff_from_debug313(const vt__py313_debug_offsets *d, vt__pyoffsets *out)
{
    if (memcmp(d->cookie, VT__PY_DEBUG_COOKIE, 8) != 0)
        return -1;
    if (((d->version >> 24) & 0xff) != 3 || ((d->version >> 16) & 0xff) != 13)
        return -1;
    if (d->free_threaded != 0)
        return -1;
    const uint64_t *check[] = {&d->thread_state.current_frame,
                               &d->interpreter_frame.previous,
                               &d->interpreter_frame.executable,
                               &d->interpreter_frame.instr_ptr,
                               &d->interpreter_frame.owner,
                               &d->code_object.filename,
                               &d->code_object.qualname,
                               &d->code_object.linetable,
                               &d->code_object.firstlineno,
                               &d->code_object.co_code_adaptive,
                               &d->bytes_object.ob_size,
                               &d->bytes_object.ob_sval,
                               &d->unicode_object.state,
                               &d->unicode_object.length,
                               &d->unicode_object.asciiobject_size,
                               &d->pyobject.ob_type,
                               &d->tuple_object.ob_size};
    for (size_t i = 0; i < sizeof check / sizeof check[0]; i++)
        if (*check[i] > 65536)
            return -1;
    if (d->code_object.co_code_adaptive < 16)
        return -1; /* (_co_firsttraceable is read 16 bytes before it) */
    vt__pyoffsets o = {
        .minor = 13,
        .ts_frame = (uint32_t)d->thread_state.current_frame,
        .cframe_current = VT__PYOFF_NONE,
        .fr_previous = (uint32_t)d->interpreter_frame.previous,
        .fr_code = (uint32_t)d->interpreter_frame.executable,
        .fr_instr = (uint32_t)d->interpreter_frame.instr_ptr,
        .fr_owner = (uint32_t)d->interpreter_frame.owner,
        /* a code object is a PyVarObject: ob_size sits where it sits in every var object */
        .co_size = (uint32_t)d->tuple_object.ob_size,
        .co_filename = (uint32_t)d->code_object.filename,
        .co_name = (uint32_t)d->code_object.qualname,
        .co_firstlineno = (uint32_t)d->code_object.firstlineno,
        .co_linetable = (uint32_t)d->code_object.linetable,
        .co_code = (uint32_t)d->code_object.co_code_adaptive,
        /* not among the debug offsets: PyCodeObject ends with _co_firsttraceable (an int),
         * co_extra (a pointer), co_code_adaptive in 3.11-3.13 (probe.c checks it) */
        .co_firsttraceable = (uint32_t)d->code_object.co_code_adaptive - 16,
        .bytes_size = (uint32_t)d->bytes_object.ob_size,
        .bytes_sval = (uint32_t)d->bytes_object.ob_sval,
        .uni_state = (uint32_t)d->unicode_object.state,
        .uni_length = (uint32_t)d->unicode_object.length,
        .uni_ascii_size = (uint32_t)d->unicode_object.asciiobject_size,
        /* PyCompactUnicodeObject = PyASCIIObject + utf8_length + utf8 since 3.12 */
        .uni_compact_size = (uint32_t)d->unicode_object.asciiobject_size + 16,
        .ob_type = (uint32_t)d->pyobject.ob_type,
        .owner_generator = 1,
        .owner_cstack = 3,
    };
    *out = o;
    return 0;
}

#endif
