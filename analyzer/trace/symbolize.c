/* symbolize.c — native frame names and file:line from the module files (symbolize.h), one
 * libdwfl session per module of the trace, opened at the recorded base so the recorded
 * return addresses look up as they are. Local files only: separate debug files are found
 * by build-id / .gnu_debuglink under /usr/lib/debug, never fetched from a server. */
#include "symbolize.h"

#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_note.h"
#include "mem.h"
#include "symindex.h"

typedef struct sym_module {
    uint32_t module_id;
    int status; /* enum symbolize_status */
    int dwarf;  /* its DWARF looked for (the first file:line asked of it) */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    unsigned lookups; /* names asked of it so far */
    int indexed;      /* its index built (or tried: idx NULL where it could not be) */
    symindex *idx;    /* its symbols by address (symindex.h), once lookups reach index_after */
} sym_module;

struct symbolize {
    bool off;
    bool no_sources;      /* names only: no module's DWARF read (symbolize_set_sources) */
    char path[4096];      /* the last file name joined with its compilation directory */
    unsigned index_after; /* a module's names come from its index from this many lookups on */
    uint64_t from_index;  /* names the indexes answered (symbolize_index_answers) */
    sym_module *mods;
    size_t n, cap;
};

static char *g_debuginfo_path; /* NULL: libdwfl's default (/usr/lib/debug) */

/* libdw is loaded the first time a module's file is there to be read (dw_load), not when the
 * program starts: most commands on most traces never read one, and loading it (with libelf,
 * libz, liblzma, libbz2) cost every command 0.25 ms of CPU. Its functions, called through dw: */
#define DW_FUNCS(X)                                                                                \
    X(dwfl_begin)                                                                                  \
    X(dwfl_end)                                                                                    \
    X(dwfl_errno)                                                                                  \
    X(dwfl_errmsg)                                                                                 \
    X(dwfl_report_begin)                                                                           \
    X(dwfl_report_elf)                                                                             \
    X(dwfl_report_end)                                                                             \
    X(dwfl_module_build_id)                                                                        \
    X(dwfl_module_getdwarf)                                                                        \
    X(dwarf_new_oom_handler)                                                                       \
    X(dwfl_module_addrinfo)                                                                        \
    X(dwfl_module_getsymtab)                                                                       \
    X(dwfl_module_getsymtab_first_global)                                                          \
    X(dwfl_module_getsym_info)                                                                     \
    X(dwfl_module_getsrc)                                                                          \
    X(dwfl_lineinfo)                                                                               \
    X(dwfl_line_comp_dir)                                                                          \
    X(dwfl_build_id_find_elf)                                                                      \
    X(dwfl_standard_find_debuginfo)                                                                \
    X(dwfl_offline_section_address)

static struct {
#define X(f) __typeof__(f) *f;
    DW_FUNCS(X)
#undef X
} lib;
static int dw_state;             /* 0 not tried, 1 loaded, -1 could not be */
static char dw_why[256];         /* why not (dlerror's words) */
static Dwfl_Callbacks callbacks; /* libdwfl's own finders, once loaded */

/* ---- a crash inside libdw ------------------------------------------------------------------
 * libdw itself (elfutils 0.188) can crash when one of its own allocations fails: a 200-byte one
 * failing inside the first dwfl_module_addrinfo of a module, it then reads memory it never set,
 * a SIGSEGV as the addresses fall (allocations 109 and 3,130 of the 5,451 of `report --json` on
 * a tiny simulated run's trace; 109 crashed in 12 runs of 20, and in every one with
 * MALLOC_PERTURB_=165). Every call of libdw's runs inside DW(...), dw_in set: a SIGSEGV or
 * SIGBUS raised then returns (dw_catch) to the symbolize_ip or symbolize_free that made it
 * (dw_jmp, set once per call of them: a frame's batch of libdw calls), which stops using libdw
 * for good (its state is not to be trusted) and stops the command as out of memory does
 * (dw_crashed): exit 2, nothing from the replay printed. Any other SIGSEGV or SIGBUS goes to
 * the handler there was before (the default: the process dies of it, as without this one).
 * The handler is there from when libdw is first used (dw_guard) until the last symbolizer is
 * freed, which puts the one from before back. */
static _Thread_local sigjmp_buf dw_jmp;
static _Thread_local volatile sig_atomic_t dw_in, dw_sig; /* in a libdw call; what it raised */
#define DW_CRASHED (-2)                                   /* dw_state once libdw crashed */
static const int dw_sigs[2] = {SIGSEGV, SIGBUS};
static struct sigaction dw_old[2]; /* their handlers before dw_guard's */
static int dw_guarded;             /* dw_catch is theirs */
static unsigned dw_live;           /* symbolizers alive (symbolize_new, symbolize_free) */

/* DW(stmt): stmt, a call of libdw's, with dw_in set while it runs (a dw_jmp armed around it) */
#define DW(...)                                                                                    \
    do {                                                                                           \
        dw_in = 1;                                                                                 \
        __VA_ARGS__;                                                                               \
        dw_in = 0;                                                                                 \
    } while (0)

static void dw_catch(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (dw_in) {
        dw_in = 0;
        dw_sig = sig;
        siglongjmp(dw_jmp, 1);
    }
    /* not raised inside libdw: the handler from before, as if this one had never been there
     * (a fault raises it again as the instruction runs again; one sent is sent again) */
    int k = sig == SIGBUS;
    sigaction(sig, &dw_old[k], NULL);
    if (si->si_code <= 0)
        raise(sig);
}

/* dw_guard: dw_catch made SIGSEGV's and SIGBUS's handler (once libdw is loaded) */
static void dw_guard(void)
{
    if (dw_guarded)
        return;
    struct sigaction sa = {.sa_sigaction = dw_catch, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < 2; k++)
        sigaction(dw_sigs[k], &sa, &dw_old[k]);
    dw_guarded = 1;
}

/* dw_unguard: the handlers from before dw_guard back */
static void dw_unguard(void)
{
    if (!dw_guarded)
        return;
    for (int k = 0; k < 2; k++)
        sigaction(dw_sigs[k], &dw_old[k], NULL);
    dw_guarded = 0;
}

/* dw_crashed: after libdw crashed (dw_jmp came back): it is not called again, and the command
 * stops as out of memory does (mem_note_crash), in words that say what happened */
static void dw_crashed(void)
{
    sigset_t m; /* (siglongjmp left the handler with the signal still blocked) */
    sigemptyset(&m);
    sigaddset(&m, dw_sig);
    sigprocmask(SIG_UNBLOCK, &m, NULL);
    /* a SIGBUS is a file it had mapped cut short (or unreadable) as it read it, not memory */
    int bus = dw_sig == SIGBUS;
    snprintf(dw_why, sizeof dw_why, "it crashed (%s)", bus ? "SIGBUS" : "SIGSEGV");
    dw_state = DW_CRASHED;
    mem_note_crash(bus ? "libdw (elfutils) crashed (SIGBUS) while naming native frames: a file "
                         "it read changed or could not be read as it read it (output written "
                         "before this is incomplete, do not use it); run it again"
                       : "libdw (elfutils) crashed (SIGSEGV) while naming native frames, most "
                         "likely out of memory (an allocation failing inside it does that: "
                         "output written before this is incomplete, do not use it); free memory "
                         "or raise the limit (ulimit -v) and run it again");
}

/* dw_load: libdw's functions, loaded once; 0, or -1 (dw_why says why). */
static int dw_load(void)
{
    if (dw_state)
        return dw_state > 0 ? 0 : -1;
    dw_state = -1;
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    const char *err = h ? NULL : dlerror();
#define X(f)                                                                                       \
    if (h && !err && !(*(void **)&lib.f = dlsym(h, #f)))                                           \
        err = dlerror();
    DW_FUNCS(X)
#undef X
    if (err) {
        snprintf(dw_why, sizeof dw_why, "%s", err);
        /* the loader could not get memory (malloc, or mmap under `ulimit -v`): the analyzer's
         * own out of memory (mem.h), never "could not be loaded" (glibc's words for it:
         * "cannot create shared object descriptor", "cannot allocate dependency list", "cannot
         * extend global scope", ...; a failed calloc there had been read as no libdw, the
         * native frames named from the symbol tables alone, exit 0) */
        if (strstr(err, "allocate memory") || strstr(err, "out of memory") ||
            strstr(err, "failed to map segment") || strstr(err, "cannot create") ||
            strstr(err, "cannot allocate") || strstr(err, "cannot extend") ||
            strstr(err, "cannot map zero-fill"))
            mem_note_failure();
        return -1;
    }
    callbacks = (Dwfl_Callbacks){.find_elf = lib.dwfl_build_id_find_elf,
                                 .find_debuginfo = lib.dwfl_standard_find_debuginfo,
                                 .section_address = lib.dwfl_offline_section_address,
                                 .debuginfo_path = &g_debuginfo_path};
    dw_state = 1;
    return 0;
}

const char *symbolize_libdw_error(void)
{
    return dw_state < 0 ? dw_why : NULL;
}

/* nomem: whether libdwfl's last error was an allocation that failed (it has no public code for
 * it: its message, and libelf's, is "out of memory"); recorded as the analyzer's own (mem.h),
 * so a name it could not look up for want of memory is never shown as "no symbol". */
static void nomem(void)
{
    int e;
    const char *why = NULL;
    DW(e = lib.dwfl_errno(); why = e ? lib.dwfl_errmsg(e) : NULL);
    if (why && strstr(why, "out of memory"))
        mem_note_failure();
}

/* oom_exit: libdw's handler for an allocation that fails deep inside it (reading DWARF), which
 * cannot return: the default prints "cannot allocate memory" and exits 1, the code for a
 * finding. This one says what every command says and exits 2 (the one exit outside main). */
__attribute__((noreturn)) static void oom_exit(void)
{
    fprintf(stderr, "vramtrace: %s\n", MEM_OOM_MESSAGE);
    _exit(2);
}

symbolize *symbolize_new(void)
{
    symbolize *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    const char *env = getenv("VRAMTRACE_SYMBOLIZE");
    s->off = env && !strcmp(env, "0");
    s->index_after = SYMBOLIZE_INDEX_AFTER;
    /* libdwfl asks the debuginfod servers named there for debug files it cannot find:
     * a report must not go to the network, so this process forgets them. */
    unsetenv("DEBUGINFOD_URLS");
    dw_live++;
    return s;
}

void symbolize_set_sources(symbolize *s, bool on)
{
    s->no_sources = !on;
}

void symbolize_set_index_after(symbolize *s, unsigned n)
{
    s->index_after = n;
}

uint64_t symbolize_index_answers(const symbolize *s)
{
    return s->from_index;
}

void symbolize_free(symbolize *s)
{
    if (!s)
        return;
    if (sigsetjmp(dw_jmp, 0))
        dw_crashed(); /* the sessions left are left (libdw's state is not to be trusted) */
    for (size_t i = 0; i < s->n; i++) {
        symindex_free(s->mods[i].idx);
        s->mods[i].idx = NULL;
        Dwfl *d = s->mods[i].dwfl;
        s->mods[i].dwfl = NULL;
        if (d && dw_state > 0)
            DW(lib.dwfl_end(d));
    }
    free(s->mods);
    free(s);
    if (!--dw_live)
        dw_unguard();
}

/* open_module: a libdwfl session for path at base; status per enum symbolize_status. */
static void open_module(sym_module *m, const char *path, uint64_t base, const uint8_t *id,
                        size_t id_len)
{
    m->status = SYMBOLIZE_NO_FILE;
    if (!path || path[0] != '/')
        return;
    /* the path comes from the trace: only a regular file is opened (never a FIFO, a device);
     * a missing file says so before a missing build-id does (what the views tell people) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return;
    bool regular = !fstat(fd, &st) && S_ISREG(st.st_mode);
    if (regular && !id_len)
        m->status = SYMBOLIZE_NO_BUILD_ID; /* the file is there, but cannot be checked */
    /* another build of the file (a trace from another machine names this one's libc): told
     * from its note segments, without loading libdw and its libraries for it */
    uint8_t fid[64];
    size_t fn = regular && id_len ? elf_note_build_id(fd, fid, sizeof fid) : 0;
    if (fn && (fn != id_len || memcmp(fid, id, id_len))) {
        m->status = SYMBOLIZE_MISMATCH;
        close(fd);
        return;
    }
    if (regular && id_len && dw_load() < 0) {
        m->status = SYMBOLIZE_NO_LIBDW;
        close(fd);
        return;
    }
    if (regular && id_len) {
        dw_guard();
        DW(m->dwfl = lib.dwfl_begin(&callbacks));
    }
    if (!m->dwfl) {
        if (regular && id_len)
            nomem(); /* dwfl_begin fails only for memory */
        close(fd);
        return;
    }
    const char *slash = strrchr(path, '/');
    DW(lib.dwfl_report_begin(m->dwfl);
       m->mod = lib.dwfl_report_elf(m->dwfl, slash + 1, path, fd, base, false); /* takes fd */
       lib.dwfl_report_end(m->dwfl, NULL, NULL));
    if (!m->mod) {
        nomem();
        close(fd); /* not consumed on failure */
        return;
    }
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n;
    DW(n = lib.dwfl_module_build_id(m->mod, &bits, &vaddr));
    if (n < 0)
        nomem();
    if (n <= 0 || (size_t)n != id_len || memcmp(bits, id, id_len)) {
        m->status = SYMBOLIZE_MISMATCH;
        return;
    }
    m->status = SYMBOLIZE_OK; /* its DWARF is read when a file:line is first asked (dwarf_of) */
}

/* dwarf_of: m's DWARF, read the first time a file:line is asked of m (libdw decompresses every
 * debug section of the file then: 45 ms of a 50 ms report whose trace named a libpython that
 * carries them, which the report's names never need) */
static void dwarf_of(sym_module *m)
{
    if (m->dwarf)
        return;
    m->dwarf = 1;
    Dwarf_Addr bias;
    Dwarf *dw;
    DW(dw = lib.dwfl_module_getdwarf(m->mod, &bias));
    if (dw)
        DW(lib.dwarf_new_oom_handler(dw, oom_exit));
    else
        nomem(); /* no DWARF is fine (symbols only); no memory is not */
}

static sym_module *get_module(symbolize *s, uint32_t module_id, const char *path, uint64_t base,
                              const uint8_t *id, size_t id_len)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->mods[i].module_id == module_id)
            return &s->mods[i];
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        sym_module *m = realloc(s->mods, cap * sizeof *m);
        if (!m)
            return NULL;
        s->mods = m;
        s->cap = cap;
    }
    sym_module *m = &s->mods[s->n++];
    memset(m, 0, sizeof *m);
    m->module_id = module_id;
    open_module(m, path, base, id, id_len);
    if (m->status != SYMBOLIZE_OK && m->dwfl) {
        DW(lib.dwfl_end(m->dwfl));
        m->dwfl = NULL;
        m->mod = NULL;
    }
    return m;
}

/* the index's calls of libdw (symindex_fns), each inside DW */
static int getsymtab(Dwfl_Module *mod)
{
    int n;
    DW(n = lib.dwfl_module_getsymtab(mod));
    return n;
}

static int first_global(Dwfl_Module *mod)
{
    int n;
    DW(n = lib.dwfl_module_getsymtab_first_global(mod));
    return n;
}

static const char *getsym_info(Dwfl_Module *mod, int i, GElf_Sym *sym, GElf_Addr *addr,
                               GElf_Word *shndx, Elf **elf, Dwarf_Addr *bias)
{
    const char *name;
    DW(name = lib.dwfl_module_getsym_info(mod, i, sym, addr, shndx, elf, bias));
    return name;
}

/* name_of: the symbol containing a in m and a's offset in it + 1 (dwfl_module_addrinfo's answer):
 * from m's index once it has been asked index_after names (libdwfl walks every symbol of the
 * module for each address; building the index walks them once), else, or where the index
 * leaves it to libdwfl, libdwfl's */
static const char *name_of(symbolize *s, sym_module *m, GElf_Addr a, uint64_t *off1)
{
    if (!m->indexed && ++m->lookups > s->index_after) {
        m->indexed = 1;
        symindex_fns f = {getsymtab, first_global, getsym_info};
        m->idx = symindex_build(m->mod, &f);
    }
    const char *name;
    uint64_t off;
    if (m->idx && symindex_lookup(m->idx, a, &name, &off)) {
        *off1 = off + 1;
        s->from_index++;
        return name;
    }
    GElf_Off goff = 0;
    GElf_Sym sym;
    DW(name = lib.dwfl_module_addrinfo(m->mod, a, &goff, &sym, NULL, NULL, NULL));
    if (!name)
        nomem();
    *off1 = goff + 1;
    return name;
}

/* lookup: symbolize_ip's work, dw_jmp armed */
static int lookup(symbolize *s, uint32_t module_id, const char *path, uint64_t base,
                  const uint8_t *build_id, size_t build_id_len, uint64_t ip, symbolize_result *out)
{
    sym_module *m = get_module(s, module_id, path, base, build_id, build_id_len);
    if (!m)
        return SYMBOLIZE_NO_FILE;
    if (m->status != SYMBOLIZE_OK)
        return m->status;
    /* ip is a return address: ip - 1 is inside the call instruction */
    GElf_Addr a = ip ? ip - 1 : 0;
    const char *name = name_of(s, m, a, &out->sym_offset);
    if (name && name[0])
        out->name = name;
    else
        out->sym_offset = 0;
    if (s->no_sources)
        return SYMBOLIZE_OK;
    dwarf_of(m);
    Dwfl_Line *l;
    DW(l = lib.dwfl_module_getsrc(m->mod, a));
    if (!l)
        nomem();
    int line = 0;
    const char *file = NULL, *dir = NULL;
    DW(file = l ? lib.dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
       dir = l && file && file[0] != '/' ? lib.dwfl_line_comp_dir(l) : NULL);
    if (dir && dir[0] == '/' &&
        (size_t)snprintf(s->path, sizeof s->path, "%s/%s", dir, file) < sizeof s->path)
        file = s->path; /* a relative name is relative to the compilation directory */
    if (file && file[0]) {
        out->file = file;
        out->line = line > 0 ? line : 0;
    }
    return SYMBOLIZE_OK;
}

int symbolize_ip(symbolize *s, uint32_t module_id, const char *path, uint64_t base,
                 const uint8_t *build_id, size_t build_id_len, uint64_t ip, symbolize_result *out)
{
    memset(out, 0, sizeof *out);
    if (s->off)
        return SYMBOLIZE_OFF;
    if (dw_state == DW_CRASHED)
        return SYMBOLIZE_NO_LIBDW; /* (it crashed: not called again) */
    if (sigsetjmp(dw_jmp, 0)) {    /* libdw crashed in this lookup */
        dw_crashed();
        memset(out, 0, sizeof *out);
        return SYMBOLIZE_NO_LIBDW;
    }
    return lookup(s, module_id, path, base, build_id, build_id_len, ip, out);
}

int symbolize_module_status(const symbolize *s, uint32_t module_id)
{
    if (s && s->off)
        return SYMBOLIZE_OFF;
    for (size_t i = 0; s && i < s->n; i++)
        if (s->mods[i].module_id == module_id)
            return s->mods[i].status;
    return SYMBOLIZE_UNTRIED;
}
