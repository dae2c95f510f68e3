/* probe.c — checks preload/stacks/pyoffsets.h against one CPython's own internal headers. Compiled
 * by tests/integration/py_offsets.sh once per installed CPython 3.10-3.13 with
 *   -DPy_BUILD_CORE -I$prefix/include/python3.X -I$prefix/include/python3.X/internal
 * Prints one line per field ("ok NAME N" or "MISMATCH NAME table=N header=M") and exits 0
 * when every field agrees, 1 otherwise, 2 for a version it does not know. */
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if PY_MINOR_VERSION == 10
#include <frameobject.h>
#endif
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_frame.h"
#endif
#if PY_MINOR_VERSION >= 13
#include "internal/pycore_runtime.h"
#endif

#include "../../preload/stacks/pyoffsets.h"

static int bad;

/* check: compares one table value with the header's; prints the verdict. */
static void check(const char *name, uint32_t table, size_t header)
{
    if ((size_t)table == header) {
        printf("ok %s %zu\n", name, header);
    } else {
        printf("MISMATCH %s table=%u header=%zu\n", name, table, header);
        bad = 1;
    }
}

/* check_state_bits: sets kind/compact/ascii in a real PyASCIIObject state bit-field and
 * checks that our shift macros read them back from the raw 32-bit word. */
static void check_state_bits(void)
{
    PyASCIIObject a;
    memset(&a, 0, sizeof a);
    a.state.kind = 4;
    a.state.compact = 1;
    a.state.ascii = 0;
    uint32_t raw;
    memcpy(&raw, &a.state, sizeof raw);
    int ok = VT__UNI_KIND(raw) == 4 && VT__UNI_COMPACT(raw) == 1 && VT__UNI_ASCII(raw) == 0;
    memset(&a, 0, sizeof a);
    a.state.kind = 1;
    a.state.ascii = 1;
    memcpy(&raw, &a.state, sizeof raw);
    ok = ok && VT__UNI_KIND(raw) == 1 && VT__UNI_COMPACT(raw) == 0 && VT__UNI_ASCII(raw) == 1;
    printf("%s unicode state bits\n", ok ? "ok" : "MISMATCH");
    if (!ok)
        bad = 1;
}

#define NONE_IS(name) check(#name, t->name, VT__PYOFF_NONE)

int main(void)
{
    printf("probe for CPython %s\n", PY_VERSION);
#if PY_MINOR_VERSION == 10
    const vt__pyoffsets *t = &vt__pyoff_310;
    check("ts_frame", t->ts_frame, offsetof(PyThreadState, frame));
    NONE_IS(cframe_current);
    check("fr_previous", t->fr_previous, offsetof(PyFrameObject, f_back));
    check("fr_code", t->fr_code, offsetof(PyFrameObject, f_code));
    check("fr_instr", t->fr_instr, offsetof(PyFrameObject, f_lasti));
    NONE_IS(fr_owner);
    NONE_IS(co_size);
    check("co_name", t->co_name, offsetof(PyCodeObject, co_name));
    check("co_code", t->co_code, offsetof(PyCodeObject, co_code));
    NONE_IS(co_firsttraceable);
    check("sizeof f_lasti", 4, sizeof(((PyFrameObject *)0)->f_lasti));
#elif PY_MINOR_VERSION == 11 || PY_MINOR_VERSION == 12
#if PY_MINOR_VERSION == 11
    const vt__pyoffsets *t = &vt__pyoff_311;
    check("owner_cstack", (uint32_t)t->owner_cstack, (size_t)(uint32_t)-1);
#else
    const vt__pyoffsets *t = &vt__pyoff_312;
    check("owner_cstack", (uint32_t)t->owner_cstack, FRAME_OWNED_BY_CSTACK);
#endif
    check("ts_frame", t->ts_frame, offsetof(PyThreadState, cframe));
    check("cframe_current", t->cframe_current, offsetof(_PyCFrame, current_frame));
    check("fr_previous", t->fr_previous, offsetof(_PyInterpreterFrame, previous));
    check("fr_code", t->fr_code, offsetof(_PyInterpreterFrame, f_code));
    check("fr_instr", t->fr_instr, offsetof(_PyInterpreterFrame, prev_instr));
    check("fr_owner", t->fr_owner, offsetof(_PyInterpreterFrame, owner));
    check("co_size", t->co_size, offsetof(PyCodeObject, ob_base.ob_size));
    check("co_name", t->co_name, offsetof(PyCodeObject, co_qualname));
    check("co_code", t->co_code, offsetof(PyCodeObject, co_code_adaptive));
    check("co_firsttraceable", t->co_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
    check("owner_generator", (uint32_t)t->owner_generator, FRAME_OWNED_BY_GENERATOR);
    check("sizeof owner", 1, sizeof(((_PyInterpreterFrame *)0)->owner));
#elif PY_MINOR_VERSION == 13
    /* The mirror of _Py_DebugOffsets must match the real one member for member. */
#define MIRROR(m)                                                                                  \
    check("debug." #m, (uint32_t)offsetof(vt__py313_debug_offsets, m),                             \
          offsetof(_Py_DebugOffsets, m))
    MIRROR(version);
    MIRROR(free_threaded);
    MIRROR(thread_state.current_frame);
    MIRROR(interpreter_frame.previous);
    MIRROR(interpreter_frame.executable);
    MIRROR(interpreter_frame.instr_ptr);
    MIRROR(interpreter_frame.owner);
    MIRROR(code_object.filename);
    MIRROR(code_object.qualname);
    MIRROR(code_object.linetable);
    MIRROR(code_object.firstlineno);
    MIRROR(code_object.co_code_adaptive);
    MIRROR(pyobject.ob_type);
    MIRROR(tuple_object.ob_size);
    MIRROR(bytes_object.ob_size);
    MIRROR(bytes_object.ob_sval);
    MIRROR(unicode_object.state);
    MIRROR(unicode_object.length);
    MIRROR(unicode_object.asciiobject_size);
    /* What the decoder derives must equal the real layout (values CPython itself puts in
     * _PyRuntime.debug_offsets are offsetof() of these same fields). */
    vt__py313_debug_offsets d;
    memset(&d, 0, sizeof d);
    memcpy(d.cookie, VT__PY_DEBUG_COOKIE, 8);
    d.version = PY_VERSION_HEX;
    d.thread_state.current_frame = offsetof(PyThreadState, current_frame);
    d.interpreter_frame.previous = offsetof(_PyInterpreterFrame, previous);
    d.interpreter_frame.executable = offsetof(_PyInterpreterFrame, f_executable);
    d.interpreter_frame.instr_ptr = offsetof(_PyInterpreterFrame, instr_ptr);
    d.interpreter_frame.owner = offsetof(_PyInterpreterFrame, owner);
    d.code_object.filename = offsetof(PyCodeObject, co_filename);
    d.code_object.qualname = offsetof(PyCodeObject, co_qualname);
    d.code_object.linetable = offsetof(PyCodeObject, co_linetable);
    d.code_object.firstlineno = offsetof(PyCodeObject, co_firstlineno);
    d.code_object.co_code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
    d.pyobject.ob_type = offsetof(PyObject, ob_type);
    d.tuple_object.ob_size = offsetof(PyTupleObject, ob_base.ob_size);
    d.bytes_object.ob_size = offsetof(PyBytesObject, ob_base.ob_size);
    d.bytes_object.ob_sval = offsetof(PyBytesObject, ob_sval);
    d.unicode_object.state = offsetof(PyASCIIObject, state);
    d.unicode_object.length = offsetof(PyASCIIObject, length);
    d.unicode_object.asciiobject_size = sizeof(PyASCIIObject);
    vt__pyoffsets o, *t = &o;
    if (vt__pyoff_from_debug313(&d, &o) != 0) {
        printf("MISMATCH decoder refused the debug offsets\n");
        return 1;
    }
    check("co_size", t->co_size, offsetof(PyCodeObject, ob_base.ob_size));
    check("co_firsttraceable (derived)", t->co_firsttraceable,
          offsetof(PyCodeObject, _co_firsttraceable));
    check("uni_compact_size (derived)", t->uni_compact_size, sizeof(PyCompactUnicodeObject));
    check("owner_cstack", (uint32_t)t->owner_cstack, FRAME_OWNED_BY_CSTACK);
    check("owner_generator", (uint32_t)t->owner_generator, FRAME_OWNED_BY_GENERATOR);
    check("sizeof owner", 1, sizeof(((_PyInterpreterFrame *)0)->owner));
    /* the walk's constant table for 3.13 is what a default build's debug offsets give */
    check("vt__pyoff_313 (as derived)", memcmp(&vt__pyoff_313, &o, sizeof o) == 0, 1);
#else
    printf("no table for CPython %s\n", PY_VERSION);
    return 2;
#endif
    /* common to every version */
    check("co_filename", t->co_filename, offsetof(PyCodeObject, co_filename));
    check("co_firstlineno", t->co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
    check("co_linetable", t->co_linetable, offsetof(PyCodeObject, co_linetable));
    check("bytes_size", t->bytes_size, offsetof(PyBytesObject, ob_base.ob_size));
    check("bytes_sval", t->bytes_sval, offsetof(PyBytesObject, ob_sval));
    check("uni_state", t->uni_state, offsetof(PyASCIIObject, state));
    check("uni_length", t->uni_length, offsetof(PyASCIIObject, length));
    check("uni_ascii_size", t->uni_ascii_size, sizeof(PyASCIIObject));
    check("uni_compact_size", t->uni_compact_size, sizeof(PyCompactUnicodeObject));
    check("ob_type", t->ob_type, offsetof(PyObject, ob_type));
    check("sizeof co_firstlineno", 4, sizeof(((PyCodeObject *)0)->co_firstlineno));
    check_state_bits();
    return bad;
}
