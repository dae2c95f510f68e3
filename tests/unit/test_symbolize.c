/* test_symbolize.c — native symbolization (analyzer/trace/symbolize.c) on this test binary
 * itself: a static function named from .symtab with its file:line, refusals (no build-id,
 * missing file, other build-id: told from the file's notes without loading libdw); a file's
 * build-id read from its note segments, hostile files included (analyzer/trace/elf_note.c);
 * the build-id note parser and in-memory lookup (preload/stacks/modinfo.c); MODULE records
 * with and without the 1.1 build-id tail (analyzer/trace/reader.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../analyzer/trace/elf_note.h"
#include "../../analyzer/trace/mem.h"
#include "../../analyzer/trace/reader.h"
#include "../../analyzer/trace/symbolize.h"
#include "../../analyzer/trace/tables.h"
#include "../../preload/stacks/modinfo.h"
#include "trace_enc.h"

enum { TARGET_LINE = __LINE__ + 2 }; /* the line of target's body below */
__attribute__((noinline, noipa)) static int target(int x)
{
    return x * 3 + 1;
}

/* this program: path, base (dladdr's start of the first mapping), build-id in memory */
typedef struct self {
    char path[4096];
    uint64_t base;
    vt__modinfo mi;
} self;

static void get_self(self *s)
{
    ssize_t n = readlink("/proc/self/exe", s->path, sizeof s->path - 1);
    assert_true(n > 0);
    s->path[n] = 0;
    Dl_info info;
    assert_true(dladdr((void *)(uintptr_t)target, &info));
    s->base = (uint64_t)(uintptr_t)info.dli_fbase;
    assert_int_equal(vt__modinfo_get((uint64_t)(uintptr_t)target, &s->mi), 0);
}

static void test_modinfo(void **state)
{
    (void)state;
    self s;
    get_self(&s);
    assert_int_equal(s.mi.build_id_len, 20); /* GNU ld's default sha1 build-id */
    assert_true(s.mi.is_main);
    vt__modinfo lib;
    assert_int_equal(vt__modinfo_get((uint64_t)(uintptr_t)strlen, &lib), 0);
    assert_false(lib.is_main);
    assert_memory_not_equal(lib.build_id, s.mi.build_id, 20);
    assert_int_equal(vt__modinfo_get(8, &lib), -1); /* no object at address 8 */
}

static void test_note_parser(void **state)
{
    (void)state;
    /* an NT_GNU_PROPERTY_TYPE_0-like note, then the build-id note (4-aligned) */
    uint8_t notes[64] = {0}, out[64];
    uint32_t h1[3] = {4, 8, 5}, h2[3] = {4, 6, 3};
    memcpy(notes, h1, 12);
    memcpy(notes + 12, "GNU", 4);
    memcpy(notes + 24, h2, 12);
    memcpy(notes + 36, "GNU", 4);
    memcpy(notes + 40, "\x01\x02\x03\x04\x05\x06", 6);
    assert_int_equal(vt__note_build_id(notes, 48, 4, out, sizeof out), 6);
    assert_memory_equal(out, "\x01\x02\x03\x04\x05\x06", 6);
    assert_int_equal(vt__note_build_id(notes, 48, 4, out, 3), 3);          /* cut to cap */
    assert_int_equal(vt__note_build_id(notes, 44, 4, out, sizeof out), 0); /* desc cut */
    assert_int_equal(vt__note_build_id(notes, 24, 4, out, sizeof out), 0); /* no build-id */
    uint32_t huge[3] = {0xfffffff0u, 4, 3};
    memcpy(notes, huge, 12);
    assert_int_equal(vt__note_build_id(notes, 48, 4, out, sizeof out), 0); /* namesz lies */
}

/* Another build of a module's file (a trace from another machine names this one's libc) is
 * told from the file's own notes: refused without loading libdw and its libraries. Runs before
 * any test that loads it. */
static void test_mismatch_without_libdw(void **state)
{
    (void)state;
    self s;
    get_self(&s);
    uint8_t id[64];
    int fd = open(s.path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(elf_note_build_id(fd, id, sizeof id), s.mi.build_id_len);
    assert_memory_equal(id, s.mi.build_id, s.mi.build_id_len);
    assert_int_equal(elf_note_build_id(fd, id, 4), 0); /* longer than the room: none */
    close(fd);
    uint8_t other[20];
    memcpy(other, s.mi.build_id, 20);
    other[0] ^= 0x80;
    symbolize *z = symbolize_new();
    symbolize_result r;
    uint64_t ip = (uint64_t)(uintptr_t)target + 1;
    assert_int_equal(symbolize_ip(z, 3, s.path, s.base, other, 20, ip, &r), SYMBOLIZE_MISMATCH);
    assert_null(dlopen("libdw.so.1", RTLD_NOW | RTLD_NOLOAD));
    symbolize_free(z);
}

/* elf_file: an ELF64 header with one program header (ph, at 64) and body at 120, written to a
 * new file; its descriptor */
static int elf_file(char *path, const Elf64_Ehdr *e, const Elf64_Phdr *ph, const void *body,
                    size_t n)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, e, sizeof *e), (ssize_t)sizeof *e);
    assert_int_equal(write(fd, ph, sizeof *ph), (ssize_t)sizeof *ph);
    assert_int_equal(write(fd, body, n), (ssize_t)n);
    return fd;
}

/* A file's build-id from its note segments: 8-aligned notes (a property note first), and every
 * length that lies read as "none", never past the file or the buffers. */
static void test_elf_notes(void **state)
{
    (void)state;
    Elf64_Ehdr e;
    memset(&e, 0, sizeof e);
    memcpy(e.e_ident, ELFMAG, SELFMAG);
    e.e_ident[EI_CLASS] = ELFCLASS64, e.e_ident[EI_DATA] = ELFDATA2LSB;
    e.e_phoff = 64, e.e_phentsize = sizeof(Elf64_Phdr), e.e_phnum = 1;
    uint8_t body[80] = {0}, id[64];
    /* a 6-byte name: its descriptor at 24 (8-aligned), not 20; the build-id note at 32 */
    uint32_t other[3] = {6, 4, 0x100}, bid[3] = {4, 20, NT_GNU_BUILD_ID};
    memcpy(body, other, 12), memcpy(body + 12, "LINUX", 6), memcpy(body + 24, "\1\2\3\4", 4);
    memcpy(body + 32, bid, 12), memcpy(body + 44, "GNU", 4);
    for (int i = 0; i < 20; i++)
        body[48 + i] = (uint8_t)(0xa0 + i);
    Elf64_Phdr ph = {.p_type = PT_NOTE, .p_offset = 120, .p_filesz = 68, .p_align = 8};
    char path[] = "/tmp/vt-elfnote-XXXXXX";
    int fd = elf_file(path, &e, &ph, body, sizeof body);
    assert_int_equal(elf_note_build_id(fd, id, sizeof id), 20);
    assert_int_equal(id[0], 0xa0);
    assert_int_equal(id[19], 0xb3);
    close(fd), unlink(path);
    struct {
        const char *what;
        Elf64_Ehdr e;
        Elf64_Phdr ph;
        uint32_t descsz;
    } bad[] = {
        {"program headers past the file", e, ph, 20},
        {"65535 program headers", e, ph, 20},
        {"a note segment past the file", e, ph, 20},
        {"a build-id longer than its segment", e, ph, 24},
        {"a build-id longer than any", e, ph, 0x7fffffffu},
        {"not ELF64", e, ph, 20},
    };
    bad[0].e.e_phoff = 1u << 20;
    bad[1].e.e_phnum = 0xffff;
    bad[2].ph.p_filesz = 1u << 12;
    bad[5].e.e_ident[EI_CLASS] = ELFCLASS32;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint32_t b2[3] = {4, bad[i].descsz, NT_GNU_BUILD_ID};
        memcpy(body + 32, b2, 12);
        char p2[] = "/tmp/vt-elfnote-XXXXXX";
        fd = elf_file(p2, &bad[i].e, &bad[i].ph, body, sizeof body);
        if (elf_note_build_id(fd, id, sizeof id) != 0)
            fail_msg("%s: a build-id read", bad[i].what);
        close(fd), unlink(p2);
    }
}

static void test_static_function(void **state)
{
    (void)state;
    assert_int_equal(target(1), 4);
    self s;
    get_self(&s);
    symbolize *z = symbolize_new();
    assert_non_null(z);
    symbolize_result r;
    uint64_t ip = (uint64_t)(uintptr_t)target + 1; /* a "return address" inside target */
    assert_int_equal(symbolize_ip(z, 7, s.path, s.base, s.mi.build_id, s.mi.build_id_len, ip, &r),
                     SYMBOLIZE_OK);
    assert_non_null(r.name);
    assert_string_equal(r.name, "target");
    assert_int_equal(r.sym_offset, 1);
    assert_non_null(r.file);
    const char *tail = "tests/unit/test_symbolize.c";
    size_t fl = strlen(r.file), tl = strlen(tail);
    assert_true(r.file[0] == '/' && fl > tl && !strcmp(r.file + fl - tl, tail));
    assert_true(r.line >= TARGET_LINE - 1 && r.line <= TARGET_LINE + 1);
    /* same module id again: reused, same answer */
    assert_int_equal(symbolize_ip(z, 7, "/nonexistent", 0, NULL, 0, ip, &r), SYMBOLIZE_OK);
    assert_string_equal(r.name, "target");
    symbolize_free(z);
    /* names only (a report): the symbol table names it, no file:line; asked later, the module's
     * DWARF is read then */
    z = symbolize_new();
    symbolize_set_sources(z, false);
    assert_int_equal(symbolize_ip(z, 7, s.path, s.base, s.mi.build_id, s.mi.build_id_len, ip, &r),
                     SYMBOLIZE_OK);
    assert_string_equal(r.name, "target");
    assert_int_equal(r.sym_offset, 1);
    assert_null(r.file);
    assert_int_equal(r.line, 0);
    symbolize_set_sources(z, true);
    assert_int_equal(symbolize_ip(z, 7, s.path, s.base, s.mi.build_id, s.mi.build_id_len, ip, &r),
                     SYMBOLIZE_OK);
    assert_non_null(r.file);
    assert_true(r.line >= TARGET_LINE - 1 && r.line <= TARGET_LINE + 1);
    symbolize_free(z);
}

static void test_refusals(void **state)
{
    (void)state;
    self s;
    get_self(&s);
    uint64_t ip = (uint64_t)(uintptr_t)target + 1;
    symbolize *z = symbolize_new();
    symbolize_result r;
    assert_int_equal(symbolize_ip(z, 1, s.path, s.base, NULL, 0, ip, &r), SYMBOLIZE_NO_BUILD_ID);
    assert_null(r.name);
    assert_null(r.file);
    assert_int_equal(symbolize_ip(z, 2, "/nonexistent/x.so", s.base, s.mi.build_id, 20, ip, &r),
                     SYMBOLIZE_NO_FILE);
    /* a path from a hostile trace naming a FIFO or a directory: refused, never opened to
     * block (the alarm kills the test if it does) */
    char fifo[] = "/tmp/vt-test-fifo-XXXXXX";
    assert_non_null(mkdtemp(fifo));
    char fp[64];
    snprintf(fp, sizeof fp, "%s/f", fifo);
    assert_int_equal(mkfifo(fp, 0600), 0);
    alarm(10);
    assert_int_equal(symbolize_ip(z, 4, fp, s.base, s.mi.build_id, 20, ip, &r), SYMBOLIZE_NO_FILE);
    assert_int_equal(symbolize_ip(z, 5, fifo, s.base, s.mi.build_id, 20, ip, &r),
                     SYMBOLIZE_NO_FILE);
    alarm(0);
    unlink(fp);
    rmdir(fifo);
    uint8_t other[20];
    memcpy(other, s.mi.build_id, 20);
    other[19] ^= 1;
    assert_int_equal(symbolize_ip(z, 3, s.path, s.base, other, 20, ip, &r), SYMBOLIZE_MISMATCH);
    assert_null(r.name);
    /* a refused module stays refused for every address */
    assert_int_equal(symbolize_ip(z, 3, s.path, s.base, s.mi.build_id, 20, ip, &r),
                     SYMBOLIZE_MISMATCH);
    symbolize_free(z);
    setenv("VRAMTRACE_SYMBOLIZE", "0", 1);
    z = symbolize_new();
    assert_int_equal(symbolize_ip(z, 1, s.path, s.base, s.mi.build_id, 20, ip, &r), SYMBOLIZE_OFF);
    symbolize_free(z);
    unsetenv("VRAMTRACE_SYMBOLIZE");
}

/* forked: fn run in a child, its wait status (a child: libdw's state, the handlers and the
 * failure flag it changes are its own; SIGSEGV's and SIGBUS's handlers the default, as in
 * vramtrace, not cmocka's; no core file left behind; SIGALRM if it hangs) */
static int forked(int (*fn)(const self *), const self *s)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (!pid) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        alarm(20);
        _exit(fn(s));
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static int dfl(int sig) /* whether sig's handler is the default */
{
    struct sigaction now;
    return !sigaction(sig, NULL, &now) && now.sa_handler == SIG_DFL;
}

/* crash_in_libdw: libdw reading a copy of this program that is cut short after it mapped it
 * (SIGBUS inside dwfl_module_addrinfo, as a SIGSEGV when one of its allocations fails): the
 * lookup answers nothing, libdw is not called again, the failure is noted with its words, and
 * the handlers from before are back after. 0, or the number of the check that failed. */
static int crash_in_libdw(const self *s)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s/vt-symbolize-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int out = mkstemp(copy), in = open(s->path, O_RDONLY);
    char buf[65536];
    ssize_t n;
    while (out >= 0 && in >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            return 1;
    close(in);
    close(out);
    symbolize *z = symbolize_new();
    symbolize_set_sources(z, false);
    symbolize_set_index_after(z, UINT_MAX); /* libdwfl's walk of the mapped table, each time */
    symbolize_result r;
    uint64_t ip = (uint64_t)(uintptr_t)target + 1, ip2 = (uint64_t)(uintptr_t)forked + 1;
    int rc = 0;
    sigset_t blocked;
    if (symbolize_ip(z, 1, copy, s->base, s->mi.build_id, 20, ip, &r) != SYMBOLIZE_OK || !r.name)
        rc = 2;
    else if (dfl(SIGSEGV) || dfl(SIGBUS)) /* guarded while libdw is in use */
        rc = 3;
    else if (truncate(copy, 0) ||
             symbolize_ip(z, 1, copy, s->base, s->mi.build_id, 20, ip2, &r) != SYMBOLIZE_NO_LIBDW)
        rc = 4;
    else if (r.name || !mem_failed() || !mem_crash() || !strstr(mem_crash(), "SIGBUS"))
        rc = 5;
    else if (sigprocmask(SIG_BLOCK, NULL, &blocked) || sigismember(&blocked, SIGBUS))
        rc = 8; /* (the handler left by siglongjmp: unblocked again) */
    else if (symbolize_ip(z, 1, copy, s->base, s->mi.build_id, 20, ip, &r) != SYMBOLIZE_NO_LIBDW)
        rc = 6; /* never called again */
    symbolize_free(z);
    unlink(copy);
    if (!rc && (!dfl(SIGSEGV) || !dfl(SIGBUS)))
        rc = 7;
    return rc;
}

/* libdw_in_use: a frame of this executable named through libdw (its guard installed); 0 when
 * it was */
static int libdw_in_use(const self *s)
{
    symbolize *z = symbolize_new();
    symbolize_result r;
    uint64_t ip = (uint64_t)(uintptr_t)target + 1;
    return symbolize_ip(z, 1, s->path, s->base, s->mi.build_id, 20, ip, &r) != SYMBOLIZE_OK;
}

/* fault_elsewhere / sent_elsewhere: a SIGSEGV outside libdw while it is in use, from a fault
 * or sent: the process dies of it, as it would without the guard */
static int fault_elsewhere(const self *s)
{
    if (libdw_in_use(s))
        return 1;
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
    return 2;
}

static int sent_elsewhere(const self *s)
{
    if (libdw_in_use(s))
        return 1;
    raise(SIGSEGV);
    return 2;
}

static void test_libdw_crash(void **state)
{
    (void)state;
    self s;
    get_self(&s);
    int st = forked(crash_in_libdw, &s);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    st = forked(fault_elsewhere, &s);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = forked(sent_elsewhere, &s);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
}

/* put_module: a MODULE record (path, and the build-id when bid) appended to w */
static void put_module(wbuf *w, uint32_t id, const char *path, const char *bid)
{
    vt_rec_module m = {id, 0, 0x1000u * id};
    const char *strs[2] = {path, bid};
    w_rec_strs(w, VT_REC_MODULE, 0, &m, sizeof m, strs, bid ? 2 : 1);
}

static void test_module_records(void **state)
{
    (void)state;
    wbuf w = {0};
    w_header(&w, VT_VERSION_MAJOR, 0);
    put_module(&w, 1, "/a.so", NULL);     /* 1.0: 7 zero padding bytes after the path */
    put_module(&w, 2, "/lib/a.so", NULL); /* 1.0: 3 padding bytes, no room for a length */
    put_module(&w, 3, "/lib/c.so", "\x01\x02\x03");
    const char *path = save(&w);
    free(w.p);
    char msg[256];
    reader *rd = reader_open(path, msg, sizeof msg);
    assert_non_null(rd);
    reader_record rec;
    uint32_t lens[3], seen = 0;
    while (reader_next(rd, &rec))
        if (rec.type == VT_REC_MODULE) {
            uint32_t i = rec.u.module.fixed.module_id - 1;
            assert_true(i < 3);
            lens[i] = rec.u.module.build_id.len;
            seen++;
            if (i == 2)
                assert_memory_equal(rec.u.module.build_id.p, "\x01\x02\x03", 3);
        }
    assert_int_equal(seen, 3);
    assert_int_equal(lens[0], 0);
    assert_int_equal(lens[1], 0);
    assert_int_equal(lens[2], 3);
    reader_close(rd);
    unlink(path);
}

/* a SYMBOL's mangled name whose back-references (S<n>_) name the previous level twice at each
 * level (46 levels in 495 bytes) is left as recorded: demangled it had been hundreds of megabytes
 * (a trace of 49 such names: report 10.5 s, 777 MB); a real name still demangles */
static void test_demangle_bound(void **state)
{
    (void)state;
    static const char d36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char bomb[640], *d;
    int n = snprintf(bomb, sizeof bomb, "_Z1fI1AIiiE");
    for (int k = 0; k < 46; k++) {
        char id[3] = {k < 36 ? d36[k] : d36[k / 36], k < 36 ? 0 : d36[k % 36], 0};
        n += snprintf(bomb + n, sizeof bomb - (size_t)n, "S_IS%s_S%s_E", id, id);
    }
    n += snprintf(bomb + n, sizeof bomb - (size_t)n, "EvT_");
    assert_int_equal(demangle(bomb, (size_t)n, &d), 0);
    assert_null(d);
    assert_int_equal(demangle("_ZNSt6vectorISsSaISsEE9push_backERKSs", 37, &d), 0);
    assert_non_null(d);
    assert_string_equal(d, "std::vector<std::string, std::allocator<std::string> >::push_back("
                           "std::string const&)");
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modinfo),
        cmocka_unit_test(test_note_parser),
        cmocka_unit_test(test_mismatch_without_libdw),
        cmocka_unit_test(test_elf_notes),
        cmocka_unit_test(test_static_function),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_libdw_crash),
        cmocka_unit_test(test_module_records),
        cmocka_unit_test(test_demangle_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
