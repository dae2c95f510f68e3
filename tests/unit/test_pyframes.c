/* test_pyframes.c — preload/stacks/pyframes.c outside Python: a process without CPython gets no
 * frames and writes nothing; the 3.13 _Py_DebugOffsets decoder (pyoffsets.h) accepts only a
 * well-formed 3.13 block. Live-interpreter reading is tested by tests/integration/py_*.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../preload/stacks/pyframes.h"
#include "vramtrace/trace_format.h"
#include "../../preload/stacks/pyoffsets.h"

static char trace_path[256];

/* A process without Python: no frames, no last stack, no record written (no trace file). */
static void test_not_python(void **state)
{
    (void)state;
    uint64_t out[8] = {0};
    assert_int_equal(vt__py_capture(out, 8, NULL), 0);
    assert_int_equal(vt__py_capture(out, 8, NULL), 0); /* cached verdict, same answer */
    assert_int_equal(vt__py_last_main_stack(out, 8, NULL), 0);
    assert_int_equal(access(trace_path, F_OK), -1);
}

/* good313: a debug-offsets block as a 3.13.0 interpreter would carry it (values arbitrary
 * but plausible, distinct so a swapped field shows). */
static vt__py313_debug_offsets good313(void)
{
    vt__py313_debug_offsets d;
    memset(&d, 0, sizeof d);
    memcpy(d.cookie, "xdebugpy", 8);
    d.version = 0x030d00f0;
    d.thread_state.current_frame = 72;
    d.interpreter_frame.previous = 8;
    d.interpreter_frame.executable = 0;
    d.interpreter_frame.instr_ptr = 56;
    d.interpreter_frame.owner = 70;
    d.code_object.filename = 112;
    d.code_object.qualname = 128;
    d.code_object.linetable = 136;
    d.code_object.firstlineno = 68;
    d.code_object.co_code_adaptive = 200;
    d.pyobject.ob_type = 8;
    d.tuple_object.ob_size = 16;
    d.bytes_object.ob_size = 16;
    d.bytes_object.ob_sval = 32;
    d.unicode_object.state = 32;
    d.unicode_object.length = 16;
    d.unicode_object.asciiobject_size = 40;
    return d;
}

static void test_debug313_decodes(void **state)
{
    (void)state;
    vt__py313_debug_offsets d = good313();
    vt__pyoffsets o;
    memset(&o, 0xee, sizeof o);
    assert_int_equal(vt__pyoff_from_debug313(&d, &o), 0);
    assert_int_equal(o.minor, 13);
    assert_int_equal(o.ts_frame, 72);
    assert_int_equal(o.cframe_current, VT__PYOFF_NONE);
    assert_int_equal(o.fr_previous, 8);
    assert_int_equal(o.fr_code, 0);
    assert_int_equal(o.fr_instr, 56);
    assert_int_equal(o.fr_owner, 70);
    assert_int_equal(o.co_size, 16);
    assert_int_equal(o.co_filename, 112);
    assert_int_equal(o.co_name, 128);
    assert_int_equal(o.co_linetable, 136);
    assert_int_equal(o.co_firstlineno, 68);
    assert_int_equal(o.co_code, 200);
    /* not among the debug offsets: 16 bytes before co_code_adaptive, as in 3.11 and 3.12 */
    assert_int_equal(o.co_firsttraceable, 200 - 16);
    assert_int_equal(o.bytes_size, 16);
    assert_int_equal(o.bytes_sval, 32);
    assert_int_equal(o.uni_state, 32);
    assert_int_equal(o.uni_length, 16);
    assert_int_equal(o.uni_ascii_size, 40);
    assert_int_equal(o.uni_compact_size, 56);
    assert_int_equal(o.owner_cstack, 3);
}

static void test_debug313_refuses(void **state)
{
    (void)state;
    vt__pyoffsets o;
    memset(&o, 0x5a, sizeof o);
    vt__pyoffsets before = o;

    vt__py313_debug_offsets d = good313();
    d.cookie[0] = 'y';
    assert_int_equal(vt__pyoff_from_debug313(&d, &o), -1);

    d = good313();
    d.version = 0x030e00f0; /* 3.14: another layout */
    assert_int_equal(vt__pyoff_from_debug313(&d, &o), -1);
    d.version = 0x030c01f0; /* 3.12 */
    assert_int_equal(vt__pyoff_from_debug313(&d, &o), -1);

    d = good313();
    d.free_threaded = 1;
    assert_int_equal(vt__pyoff_from_debug313(&d, &o), -1);

    d = good313();
    d.code_object.qualname = 1u << 20; /* not a field offset */
    assert_int_equal(vt__pyoff_from_debug313(&d, &o), -1);

    assert_memory_equal(&o, &before, sizeof o); /* untouched on refusal */
}

static void test_unicode_state_bits(void **state)
{
    (void)state;
    /* interned:2 kind:3 compact:1 ascii:1: kind 4, compact, not ascii */
    uint32_t st = (1u << 0) | (4u << 2) | (1u << 5);
    assert_int_equal(VT__UNI_KIND(st), 4);
    assert_int_equal(VT__UNI_COMPACT(st), 1);
    assert_int_equal(VT__UNI_ASCII(st), 0);
    st = (1u << 2) | (1u << 5) | (1u << 6);
    assert_int_equal(VT__UNI_KIND(st), 1);
    assert_int_equal(VT__UNI_ASCII(st), 1);
}

int main(void)
{
    snprintf(trace_path, sizeof trace_path, "/tmp/vt-test-pyframes.%d.vt", (int)getpid());
    setenv("VRAMTRACE_OUTPUT", trace_path, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_python),
        cmocka_unit_test(test_debug313_decodes),
        cmocka_unit_test(test_debug313_refuses),
        cmocka_unit_test(test_unicode_state_bits),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(trace_path);
    return rc;
}
