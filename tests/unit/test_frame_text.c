/* test_frame_text.c — a resolved frame's text (analyzer/trace/tables_resolve.c:
 * tables_frame_text): each kind of frame written as the snprintf formats it was written with, at
 * every buffer size from none up (truncated, always NUL-terminated, its whole length returned). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../analyzer/trace/tables.h"

/* reference: the text as snprintf writes it (the formats tables_frame_text stands for) */
static size_t reference(const tables_frame *f, char *buf, size_t bufsz)
{
    int n;
    if (f->kind == TABLES_FRAME_PYTHON) {
        const char *file = f->code ? f->file : "?";
        const char *fn = f->code ? f->function : "?";
        n = f->line >= 0 ? snprintf(buf, bufsz, "%s:%d %s", file, f->line, fn)
                         : snprintf(buf, bufsz, "%s:? %s", file, fn);
    } else if (f->function[0] && f->module) {
        n = snprintf(buf, bufsz, "%s+0x%llx (%s)", f->function, (unsigned long long)f->sym_offset,
                     f->module->basename);
    } else if (f->function[0]) {
        n = snprintf(buf, bufsz, "%s+0x%llx", f->function, (unsigned long long)f->sym_offset);
    } else if (f->module) {
        n = snprintf(buf, bufsz, "%s+0x%llx", f->module->basename,
                     (unsigned long long)f->module_offset);
    } else {
        n = snprintf(buf, bufsz, "0x%llx", (unsigned long long)f->ip);
    }
    if (f->kind == TABLES_FRAME_NATIVE && f->src_file && f->src_file[0]) {
        size_t at = (size_t)n < bufsz ? (size_t)n : bufsz ? bufsz - 1 : 0;
        n += f->src_line > 0 ? snprintf(buf + at, bufsz - at, " at %s:%d", f->src_file, f->src_line)
                             : snprintf(buf + at, bufsz - at, " at %s", f->src_file);
    }
    return (size_t)n;
}

static void same_as_reference(const tables_frame *f)
{
    char want[160], got[160];
    size_t len = reference(f, want, sizeof want);
    assert_true(len < sizeof want);
    for (size_t size = 0; size <= len + 2; size++) {
        memset(want, 'x', sizeof want), memset(got, 'x', sizeof got);
        assert_int_equal(tables_frame_text(f, got, size), reference(f, want, size));
        assert_memory_equal(got, want, sizeof got); /* (nothing written past the size) */
    }
}

static void test_each_kind(void **state)
{
    (void)state;
    static const tables_code code = {0};
    static const tables_module mod = {.basename = "libtorch_cuda.so"};
    tables_frame py = {.kind = TABLES_FRAME_PYTHON,
                       .code = &code,
                       .line = 43,
                       .function = "Block.forward",
                       .file = "model.py"};
    same_as_reference(&py);
    py.line = -1;
    same_as_reference(&py);
    py.line = 0;
    same_as_reference(&py);
    py.code = NULL;
    same_as_reference(&py);
    tables_frame nat = {.kind = TABLES_FRAME_NATIVE,
                        .function = "c10::cuda::malloc(unsigned long)",
                        .module = &mod,
                        .sym_offset = 0x34,
                        .module_offset = 0xabcdef,
                        .ip = 0xffffffffffffffffull,
                        .file = "",
                        .src_file = ""};
    same_as_reference(&nat);
    nat.src_file = "c10/cuda/CUDACachingAllocator.cpp", nat.src_line = 1234;
    same_as_reference(&nat);
    nat.src_line = 0;
    same_as_reference(&nat);
    nat.module = NULL, nat.sym_offset = 0;
    same_as_reference(&nat);
    nat.function = "", nat.module = &mod;
    same_as_reference(&nat);
    nat.module = NULL, nat.src_file = "";
    same_as_reference(&nat);
    nat.ip = 0;
    same_as_reference(&nat);
}

/* a Python file shown relative to the traced process's directory only when it lies under it: a
 * cwd of 20 bytes whose first 5 are "/work" and a NUL, and a code object's file "/work", had
 * compared equal up to the file's NUL and read its byte 20, past its end (the next string in the
 * tables' arena, its qualname here): the file shown was "EVIL.py", a piece of the qualname */
static void test_short_file_cwd_nul(void **state)
{
    (void)state;
    tables *t = tables_new();
    assert_non_null(t);
    reader_record rec;
    memset(&rec, 0, sizeof rec);
    rec.type = VT_REC_PROCESS;
    rec.u.process.exe = (reader_str){"/usr/bin/python3", 16};
    rec.u.process.cwd = (reader_str){"/work\0xxxxxxxxxxxxxx", 20};
    rec.u.process.host = (reader_str){"h", 1};
    assert_int_equal(tables_add(t, &rec), 0);
    memset(&rec, 0, sizeof rec);
    rec.type = VT_REC_CODE;
    rec.u.code.code_id = 1;
    rec.u.code.filename = (reader_str){"/work", 5};
    rec.u.code.qualname = (reader_str){"QQQQQQQQQQQQ/EVIL.py", 20}; /* ('/' 20 bytes on) */
    rec.u.code.linetable = (reader_str){"", 0};
    assert_int_equal(tables_add(t, &rec), 0);
    const tables_code *c = tables_code_get(t, 1);
    assert_non_null(c);
    assert_string_equal(tables_short_file(t, c->filename.s), "/work");
    tables_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_kind),
        cmocka_unit_test(test_short_file_cwd_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
