/* test_symindex.c — the index of a module's symbols (analyzer/trace/symindex.c) against libdwfl
 * itself on the modules this machine has: this test program, libc, libm, libstdc++, every
 * pyenv libpython (16k symbols in .symtab): at every symbol's edges (start - 1, start, start + 1,
 * middle, end - 1, end), between symbols and at random addresses, each name and offset the
 * index gives is dwfl_module_addrinfo's, and it gives most of them itself (a lookup it leaves
 * to libdwfl is a sizeless label's). Then symbolize_ip with the index from the first name
 * (symbolize_set_index_after 0) against libdwfl alone (UINT_MAX) on this program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <unistd.h>

#include "../../analyzer/trace/symbolize.h"
#include "../../analyzer/trace/symindex.h"
#include "../../preload/stacks/modinfo.h"

static struct {
    __typeof__(dwfl_begin) *begin;
    __typeof__(dwfl_end) *end;
    __typeof__(dwfl_report_begin) *report_begin;
    __typeof__(dwfl_report_elf) *report_elf;
    __typeof__(dwfl_report_end) *report_end;
    __typeof__(dwfl_module_addrinfo) *addrinfo;
    __typeof__(dwfl_module_getsymtab) *getsymtab;
    __typeof__(dwfl_module_getsymtab_first_global) *first_global;
    __typeof__(dwfl_module_getsym_info) *getsym_info;
    __typeof__(dwfl_build_id_find_elf) *find_elf;
    __typeof__(dwfl_standard_find_debuginfo) *find_debuginfo;
    __typeof__(dwfl_offline_section_address) *section_address;
} dw;

static void load_dw(void)
{
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
#define GET(f, name) assert_non_null(*(void **)&dw.f = dlsym(h, name))
    GET(begin, "dwfl_begin");
    GET(end, "dwfl_end");
    GET(report_begin, "dwfl_report_begin");
    GET(report_elf, "dwfl_report_elf");
    GET(report_end, "dwfl_report_end");
    GET(addrinfo, "dwfl_module_addrinfo");
    GET(getsymtab, "dwfl_module_getsymtab");
    GET(first_global, "dwfl_module_getsymtab_first_global");
    GET(getsym_info, "dwfl_module_getsym_info");
    GET(find_elf, "dwfl_build_id_find_elf");
    GET(find_debuginfo, "dwfl_standard_find_debuginfo");
    GET(section_address, "dwfl_offline_section_address");
#undef GET
}

/* one address: the index's answer, where it gives one, is libdwfl's; 1 when it gave one */
static int same(Dwfl_Module *mod, const symindex *x, uint64_t a, const char *path)
{
    const char *name;
    uint64_t off;
    if (!symindex_lookup(x, a, &name, &off))
        return 0;
    GElf_Off goff = 0;
    GElf_Sym sym;
    const char *want = dw.addrinfo(mod, a, &goff, &sym, NULL, NULL, NULL);
    if (name != want || (want && off != goff))
        fail_msg("%s at 0x%llx: index %s+%llu, libdwfl %s+%llu", path, (unsigned long long)a,
                 name ? name : "(none)", (unsigned long long)off, want ? want : "(none)",
                 (unsigned long long)goff);
    return 1;
}

/* check_module: the index of path's symbols (loaded at base) against libdwfl at up to about
 * `most` addresses; the share it answered itself */
static double check_module(const char *path, uint64_t base, int most)
{
    Dwfl_Callbacks cb = {.find_elf = dw.find_elf,
                         .find_debuginfo = dw.find_debuginfo,
                         .section_address = dw.section_address};
    Dwfl *d = dw.begin(&cb);
    assert_non_null(d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    dw.report_begin(d);
    Dwfl_Module *mod = dw.report_elf(d, "m", path, fd, base, false);
    dw.report_end(d, NULL, NULL);
    assert_non_null(mod);
    symindex_fns f = {dw.getsymtab, dw.first_global, dw.getsym_info};
    symindex *x = symindex_build(mod, &f);
    assert_non_null(x);
    int n = dw.getsymtab(mod), step = n / (most / 8) + 1, asked = 0, answered = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr v;
        GElf_Word shndx;
        Elf *elf;
        Dwarf_Addr bias;
        const char *name = dw.getsym_info(mod, i, &sym, &v, &shndx, &elf, &bias);
        if (!name || !v || sym.st_shndx == SHN_UNDEF)
            continue;
        lo = v < lo ? v : lo;
        hi = v + sym.st_size > hi ? v + sym.st_size : hi;
        if (i % step)
            continue;
        uint64_t z = sym.st_size;
        uint64_t at[8] = {v - 1, v, v + 1, v + z / 2, v + z - 1, v + z, v + z + 1, v + z + 64};
        for (int k = 0; k < 8; k++, asked++)
            answered += same(mod, x, at[k], path);
    }
    srand(7);
    for (int k = 0; k < most / 4 && hi > lo; k++, asked++)
        answered +=
            same(mod, x, lo + (((uint64_t)rand() << 31) ^ (uint64_t)rand()) % (hi - lo), path);
    symindex_free(x);
    dw.end(d);
    print_message("%s: %d addresses, %d answered by the index\n", path, asked, answered);
    return asked ? (double)answered / asked : 0;
}

static const char *module_of(const void *p)
{
    static char buf[4][PATH_MAX];
    static int k;
    Dl_info info;
    assert_true(dladdr(p, &info) && info.dli_fname);
    char *out = buf[k++ % 4];
    if (!realpath(info.dli_fname, out))
        snprintf(out, PATH_MAX, "%s", info.dli_fname);
    return out;
}

static void test_index_is_libdwfl(void **state)
{
    (void)state;
    load_dw();
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = 0;
    const char *mods[] = {self, module_of((void *)(uintptr_t)strlen),
                          module_of((void *)(uintptr_t)cos),
                          module_of((void *)(uintptr_t)dw.addrinfo),
                          module_of((void *)(uintptr_t)_cmocka_run_group_tests)};
    for (size_t i = 0; i < sizeof mods / sizeof *mods; i++)
        assert_true(check_module(mods[i], 0x7f0000000000ull, 2400) > 0.5);
    glob_t g;
    const char *home = getenv("HOME");
    char pat[PATH_MAX];
    snprintf(pat, sizeof pat, "%s/.pyenv/versions/*/lib/libpython3*.so.1.0", home ? home : "/");
    if (!glob(pat, 0, NULL, &g)) {
        for (size_t i = 0; i < g.gl_pathc; i++) /* (16k symbols: libdwfl walks them per address) */
            assert_true(check_module(g.gl_pathv[i], 0x7f1000000000ull, 400) > 0.5);
        globfree(&g);
    }
}

__attribute__((noinline, noipa)) static int probe_a(int x)
{
    return x * 7 + 3;
}

__attribute__((noinline, noipa)) static int probe_b(int x)
{
    return x ^ 0x5a5a;
}

/* symbolize_ip names the same through the index as through libdwfl alone */
static void test_symbolize_through_index(void **state)
{
    (void)state;
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    assert_true(n > 0);
    path[n] = 0;
    vt__modinfo mi;
    assert_int_equal(vt__modinfo_get((uint64_t)(uintptr_t)probe_a, &mi), 0);
    Dl_info info;
    assert_true(dladdr((void *)(uintptr_t)probe_a, &info));
    uint64_t base = (uint64_t)(uintptr_t)info.dli_fbase;
    symbolize *fast = symbolize_new(), *slow = symbolize_new();
    symbolize_set_index_after(fast, 0);
    symbolize_set_index_after(slow, UINT_MAX);
    symbolize_set_sources(fast, false);
    symbolize_set_sources(slow, false);
    uint64_t ips[] = {(uint64_t)(uintptr_t)probe_a + 2, (uint64_t)(uintptr_t)probe_b + 2,
                      (uint64_t)(uintptr_t)test_symbolize_through_index + 9,
                      (uint64_t)(uintptr_t)same + 5, base + 1};
    for (size_t i = 0; i < sizeof ips / sizeof *ips; i++) {
        symbolize_result a, b;
        assert_int_equal(
            symbolize_ip(fast, 1, path, base, mi.build_id, mi.build_id_len, ips[i], &a),
            SYMBOLIZE_OK);
        assert_int_equal(
            symbolize_ip(slow, 1, path, base, mi.build_id, mi.build_id_len, ips[i], &b),
            SYMBOLIZE_OK);
        assert_true((a.name == NULL) == (b.name == NULL));
        if (a.name) {
            assert_string_equal(a.name, b.name);
            assert_int_equal(a.sym_offset, b.sym_offset);
        }
    }
    symbolize_result r;
    assert_int_equal(symbolize_ip(fast, 1, path, base, mi.build_id, mi.build_id_len, ips[0], &r),
                     SYMBOLIZE_OK);
    assert_string_equal(r.name, "probe_a");
    assert_true(symbolize_index_answers(fast) >= sizeof ips / sizeof *ips - 1);
    assert_int_equal(symbolize_index_answers(slow), 0);
    assert_int_equal(r.sym_offset, 2); /* ip - 1 is 1 byte in: the offset + 1 */
    symbolize_free(fast);
    symbolize_free(slow);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_is_libdwfl),
        cmocka_unit_test(test_symbolize_through_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
