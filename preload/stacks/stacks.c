/* stacks.c — native stacks (libunwind, per-thread cache, depth cap) merged with the Python
 * frames of pyframes.c, interned so each event carries one id; SYMBOL / MODULE records for
 * each new return address (dladdr once per address), written before the STACK that uses them. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/output.h"
#include "core/thread.h"
#include "modinfo.h"
#include "pyframes.h"
#include "stacks.h"
#include "vramtrace/trace_format.h"
#include "writer.h"

#define MAX_NATIVE 128
#define MAX_PY 128
#define STACK_LIMIT (1u << 22) /* distinct stacks kept; past it events carry id 0 */

/* ---- the intern table: open addressing, lock-free lookups, inserts under g_lock ---------
 * An entry is published by its hash (stored last, release); a table, once full, is copied into
 * one twice its size and kept (older) until a fork child empties them all: a lookup that began
 * in it still reads live memory. What a lookup does not find is looked up again and added
 * under g_lock. */
typedef struct stack_entry {
    _Atomic uint64_t hash; /* 0: empty */
    uint64_t *frames;      /* n_native + n_python */
    uint32_t id;
    uint16_t n_native;
    uint16_t n_python : 15, py_cut : 1; /* py_cut: its STACK has VT_STACKF_PY_CUT */
} stack_entry;

typedef struct stack_table {
    uint32_t cap;              /* a power of two */
    struct stack_table *older; /* the table it replaced */
    stack_entry e[];
} stack_table;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(stack_table *) g_tab;
static uint32_t g_count; /* under g_lock */

/* the calling thread's last stack: the entry it was found or added as, valid while g_gen is
 * what it was then (a fork child frees every entry and bumps g_gen). A thread allocating again
 * from where it last did (a loop's steps, a layer's buffers one after another) gives the same
 * frames: compared with the entry's, as a lookup would, without hashing them or probing the
 * table. An entry is never written once published (a grown table copies it and keeps the old
 * one), and the memo is one pointer: a handler interrupting its update reads an entry. */
static __thread const struct stack_entry *t_last;
static __thread uint32_t t_last_gen;
static _Atomic uint32_t g_gen;

/* ip set: addresses that already have a SYMBOL record; module bases with a MODULE record */
static uint64_t *g_ips;
static uint32_t g_ip_cap, g_ip_count;
static uint64_t g_mod_base[1024];
static uint32_t g_mod_count;

/* our own code: frames inside libvramtrace.so are dropped from the top of native stacks */
static uintptr_t g_self_lo, g_self_hi;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
/* g_inited: stacks_init has run (pthread_once's own check took ~30 instructions a capture) */
static _Atomic int g_inited;
_Static_assert(sizeof(void *) == sizeof(uint64_t), "a native frame: an ip as 8 bytes");

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t me = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (me >= lo && me < hi) {
            g_self_lo = lo;
            g_self_hi = hi;
            return 1;
        }
    }
    return 0;
}

static void stacks_init(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&stacks_init);
    atomic_store_explicit(&g_inited, 1, memory_order_release);
}

/* hash_frames: the table's hash of a stack. Four lanes, each a chain of its own over every
 * fourth frame, joined at the end: a multiply waits on the one before in its lane only, where one
 * chain through a stack's 50-odd frames (30 Python functions under ~20 native frames) waited
 * on them all, ~6 cycles a frame. Only where a stack lands in the table depends on it. */
static inline uint64_t lane(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0xff51afd7ed558ccdull;
    return h ^ h >> 32;
}
static uint64_t hash_frames(const uint64_t *f, int n, int np, int cut)
{
    uint64_t a = 0x9e3779b97f4a7c15ull ^ ((uint64_t)cut << 48 | (uint64_t)n << 32 | (uint64_t)np);
    uint64_t b = 0xc2b2ae3d27d4eb4full, c = 0x165667b19e3779f9ull, d = 0x27d4eb2f165667c5ull;
    int i = 0, t = n + np;
    for (; i + 4 <= t; i += 4)
        a = lane(a, f[i]), b = lane(b, f[i + 1]), c = lane(c, f[i + 2]), d = lane(d, f[i + 3]);
    for (; i < t; i++)
        a = lane(a, f[i]);
    uint64_t h = lane(lane(lane(a, b), c), d);
    return h | 1; /* 0 marks an empty slot */
}

/* grow_table: the table replaced by one twice its size, returned (under g_lock); NULL: out of
 * memory (the table stays) */
static stack_table *grow_table(void)
{
    stack_table *t = atomic_load_explicit(&g_tab, memory_order_relaxed);
    uint32_t ncap = t ? t->cap * 2 : 1u << 12;
    stack_table *nt = calloc(1, sizeof *nt + (size_t)ncap * sizeof nt->e[0]);
    if (!nt)
        return NULL;
    nt->cap = ncap;
    nt->older = t;
    for (uint32_t i = 0; t && i < t->cap; i++) {
        uint64_t h = atomic_load_explicit(&t->e[i].hash, memory_order_relaxed);
        if (!h)
            continue;
        uint32_t j = (uint32_t)h & (ncap - 1);
        while (atomic_load_explicit(&nt->e[j].hash, memory_order_relaxed))
            j = (j + 1) & (ncap - 1);
        nt->e[j].frames = t->e[i].frames;
        nt->e[j].id = t->e[i].id;
        nt->e[j].n_native = t->e[i].n_native;
        nt->e[j].n_python = t->e[i].n_python;
        nt->e[j].py_cut = t->e[i].py_cut;
        atomic_store_explicit(&nt->e[j].hash, h, memory_order_relaxed);
    }
    atomic_store_explicit(&g_tab, nt, memory_order_release); /* (its entries with it) */
    return nt;
}

/* holds: entry e is the stack of these frames (n native, np Python; cut: VT_STACKF_PY_CUT) */
static inline int holds(const stack_entry *e, const uint64_t *frames, int n, int np, int cut)
{
    return e->n_native == n && e->n_python == np && e->py_cut == cut &&
           !memcmp(e->frames, frames, (size_t)(n + np) * 8);
}

/* lookup: the entry of frames (hash h) in t, NULL if it has none (no lock: see the table's
 * comment) */
static const stack_entry *lookup(const stack_table *t, uint64_t h, const uint64_t *frames, int n,
                                 int np, int cut)
{
    if (!t)
        return NULL;
    for (uint32_t j = (uint32_t)h & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
        const stack_entry *e = &t->e[j];
        uint64_t eh = atomic_load_explicit(&e->hash, memory_order_acquire);
        if (!eh)
            return NULL;
        if (eh == h && holds(e, frames, n, np, cut))
            return e;
    }
}

/* ip_seen_or_add: 1 if ip already had its SYMBOL record; else adds it and returns 0. */
static int ip_seen_or_add(uint64_t ip)
{
    if (g_ip_count * 2 >= g_ip_cap) {
        uint32_t ncap = g_ip_cap ? g_ip_cap * 2 : 1u << 12;
        uint64_t *n = calloc(ncap, sizeof *n);
        if (!n)
            return 1; /* cannot remember: do not write (the analyzer shows the raw address) */
        for (uint32_t i = 0; i < g_ip_cap; i++) {
            if (!g_ips[i])
                continue;
            uint32_t j = (uint32_t)(g_ips[i] * 0x9e3779b97f4a7c15ull >> 40) & (ncap - 1);
            while (n[j])
                j = (j + 1) & (ncap - 1);
            n[j] = g_ips[i];
        }
        free(g_ips);
        g_ips = n;
        g_ip_cap = ncap;
    }
    uint32_t j = (uint32_t)(ip * 0x9e3779b97f4a7c15ull >> 40) & (g_ip_cap - 1);
    while (g_ips[j]) {
        if (g_ips[j] == ip)
            return 1;
        j = (j + 1) & (g_ip_cap - 1);
    }
    g_ips[j] = ip;
    g_ip_count++;
    return 0;
}

/* module_id: the id of the module at base, which holds addr (MODULE record written the
 * first time, with the module's build-id, and the program's real path for the program). */
static uint32_t module_id(uint64_t base, const char *path, uint64_t addr)
{
    for (uint32_t i = 0; i < g_mod_count; i++)
        if (g_mod_base[i] == base)
            return i + 1;
    if (g_mod_count >= sizeof g_mod_base / sizeof g_mod_base[0])
        return 0;
    g_mod_base[g_mod_count++] = base;
    vt_rec_module m = {g_mod_count, 0, base};
    vt__modinfo mi;
    char exe[4096];
    vt__modinfo_get(addr, &mi);
    if (mi.is_main) { /* dladdr names the program by argv[0], maybe relative */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = 0;
            path = exe;
        }
    }
    const char *s[2] = {path ? path : "", (const char *)mi.build_id};
    uint32_t lens[2] = {(uint32_t)strlen(s[0]), mi.build_id_len};
    vt__write_strings(VT_REC_MODULE, 0, &m, sizeof m, s, lens, 2);
    return g_mod_count;
}

/* sym_info: what dladdr told of a return address, for its SYMBOL record. dladdr is called with
 * no lock of ours held (look_up_new): it takes the loader's lock, which a thread inside dlopen
 * holds while a library's constructor runs, and a constructor that allocates waits in its hook
 * for g_lock; when the thread holding g_lock called dladdr, as it did, both waited for ever
 * (tests/integration/dlopen_ctor.sh: the program hung every run) */
typedef struct sym_info {
    uint64_t ip;
    int found;
    Dl_info info;
} sym_info;

/* ip_seen: ip already has its SYMBOL record (under g_lock) */
static int ip_seen(uint64_t ip)
{
    if (!g_ip_cap)
        return 0;
    uint32_t j = (uint32_t)(ip * 0x9e3779b97f4a7c15ull >> 40) & (g_ip_cap - 1);
    for (; g_ips[j]; j = (j + 1) & (g_ip_cap - 1))
        if (g_ips[j] == ip)
            return 1;
    return 0;
}

/* look_up_new: the native frames of frames[0..n) with no SYMBOL record yet, looked up by dladdr
 * into syms[] with g_lock released meanwhile (held on entry and again on return); their count */
static int look_up_new(const uint64_t *frames, int n, sym_info *syms)
{
    int k = 0;
    for (int i = 0; i < n && k < MAX_NATIVE; i++) /* (a capture keeps MAX_NATIVE at most) */
        if (!ip_seen(frames[i]))
            syms[k++].ip = frames[i];
    if (!k)
        return 0;
    pthread_mutex_unlock(&g_lock);
    for (int i = 0; i < k; i++) {
        memset(&syms[i].info, 0, sizeof syms[i].info);
        /* ip is a return address: look up ip - 1 so a call at a function's end resolves right */
        syms[i].found = dladdr((void *)(uintptr_t)(syms[i].ip - 1), &syms[i].info) != 0;
    }
    pthread_mutex_lock(&g_lock);
    return k;
}

/* write_symbol: the SYMBOL record of ip from what look_up_new found of it in syms[0..k) (none:
 * the raw address alone; not expected: a frame's address once seen stays seen) */
static void write_symbol(uint64_t ip, const sym_info *syms, int k)
{
    const Dl_info *info = NULL;
    for (int i = 0; i < k && !info; i++)
        if (syms[i].ip == ip && syms[i].found)
            info = &syms[i].info;
    vt_rec_symbol r = {ip, 0, 0, 0};
    const char *name = "";
    if (info && info->dli_fbase) {
        r.offset = ip - (uint64_t)(uintptr_t)info->dli_fbase;
        r.module_id = module_id((uint64_t)(uintptr_t)info->dli_fbase, info->dli_fname, ip - 1);
        if (info->dli_sname && info->dli_saddr) {
            name = info->dli_sname;
            r.sym_offset = (uint32_t)(ip - (uint64_t)(uintptr_t)info->dli_saddr);
        }
    }
    const char *s[1] = {name};
    vt__write_strings(VT_REC_SYMBOL, 0, &r, sizeof r, s, NULL, 1);
}

/* add_stack: the entry of frames (n native, np Python; hash h) under g_lock, added (its SYMBOL
 * and STACK records written) when it is not there; NULL when it cannot be. Out of line: the
 * lookups' results (syms, ~6 KiB) take stack only when a stack is new. */
static __attribute__((noinline)) const stack_entry *add_stack(const uint64_t *frames, int n, int np,
                                                              int cut, uint64_t h)
{
    size_t bytes = (size_t)(n + np) * 8;
    const stack_entry *found;
    sym_info syms[MAX_NATIVE];
    pthread_mutex_lock(&g_lock);
    stack_table *t = atomic_load_explicit(&g_tab, memory_order_relaxed);
    if ((found = lookup(t, h, frames, n, np, cut)) != NULL) /* added since the look unlocked */
        goto out;
    int k = look_up_new(frames, n, syms); /* (g_lock released while it looks) */
    t = atomic_load_explicit(&g_tab, memory_order_relaxed);
    if (k && (found = lookup(t, h, frames, n, np, cut)) != NULL) /* added while it looked */
        goto out;
    if (g_count >= STACK_LIMIT || ((!t || (g_count + 1) * 4 >= t->cap * 3) && !(t = grow_table())))
        goto out;
    uint64_t *copy = malloc(bytes ? bytes : 8);
    if (!copy)
        goto out;
    memcpy(copy, frames, bytes);
    for (int i = 0; i < n; i++)
        if (!ip_seen_or_add(frames[i]))
            write_symbol(frames[i], syms, k);
    uint32_t j = (uint32_t)h & (t->cap - 1);
    while (atomic_load_explicit(&t->e[j].hash, memory_order_relaxed))
        j = (j + 1) & (t->cap - 1);
    vt_rec_stack r = {g_count + 1, (uint16_t)n, (uint16_t)np};
    if (vt__write(VT_REC_STACK, cut ? VT_STACKF_PY_CUT : 0, &r, sizeof r, frames, bytes) != 0) {
        free(copy);
        goto out;
    }
    stack_entry *e = &t->e[j];
    e->frames = copy, e->id = ++g_count, e->n_native = (uint16_t)n, e->n_python = (uint16_t)np;
    e->py_cut = cut != 0;
    atomic_store_explicit(&e->hash, h, memory_order_release); /* after its STACK record */
    found = e;
out:
    pthread_mutex_unlock(&g_lock);
    return found;
}

uint32_t vt__stack_intern_cut(const uint64_t *frames, int n, int np, int cut)
{
    const stack_entry *last = t_last;
    cut = cut != 0;
    if (last && t_last_gen == atomic_load_explicit(&g_gen, memory_order_relaxed) &&
        holds(last, frames, n, np, cut))
        return last->id;
    uint64_t h = hash_frames(frames, n, np, cut);
    const stack_entry *found =
        lookup(atomic_load_explicit(&g_tab, memory_order_acquire), h, frames, n, np, cut);
    if (!found && !(found = add_stack(frames, n, np, cut, h)))
        return 0;
    t_last_gen = atomic_load_explicit(&g_gen, memory_order_relaxed);
    t_last = found;
    return found->id;
}

uint32_t vt__stack_intern(const uint64_t *frames, int n, int np)
{
    return vt__stack_intern_cut(frames, n, np, 0);
}

uint32_t vt__stack_capture(int skip)
{
    const vt__config *c = vt__config_get();
    uint64_t frames[MAX_NATIVE + MAX_PY + 8];
    int n = 0, np = 0, cut = 0;
    if (c->stack_mode & VT_STACKS_NATIVE) {
        vt__t_unwind = 1; /* (a pipe libunwind makes goes high: hook_pipe.c) */
        if (!atomic_load_explicit(&g_inited, memory_order_acquire))
            pthread_once(&g_once, stacks_init);
        void *ips[MAX_NATIVE + 16];
        int want = c->stack_depth + 12 + skip; /* room for our own frames */
        if (want > (int)(sizeof ips / sizeof ips[0]))
            want = (int)(sizeof ips / sizeof ips[0]);
        int got = unw_backtrace(ips, want);
        vt__t_unwind = 0;
        int i = 0;
        while (i < got && (uintptr_t)ips[i] >= g_self_lo && (uintptr_t)ips[i] < g_self_hi)
            i++; /* the tracer's own frames */
        i += skip;
        if (i < got) { /* (void * and uint64_t: the same 8 bytes here) */
            n = got - i < c->stack_depth ? got - i : c->stack_depth;
            memcpy(frames, ips + i, (size_t)n * sizeof ips[0]);
            i += n;
        }
        if (i < got)
            vt__writer_note_truncated_stack();
    }
    if (c->stack_mode & VT_STACKS_PYTHON) {
        if (vt__thread_role() == VT_ROLE_AUTOGRAD)
            np = vt__py_last_main_stack(frames + n, MAX_PY, &cut);
        else
            np = vt__py_capture(frames + n, MAX_PY, &cut);
        if (np < 0)
            np = 0;
    }
    if (n + np == 0)
        return 0;
    return vt__stack_intern_cut(frames, n, np, cut);
}

/* ---- fork: the child starts a new file, so every table starts empty ---------------------- */
void vt__stacks_fork_prepare(void)
{
    pthread_mutex_lock(&g_lock);
}

void vt__stacks_fork_parent(void)
{
    pthread_mutex_unlock(&g_lock);
}

void vt__stacks_fork_child(void)
{
    pthread_mutex_init(&g_lock, NULL);
    stack_table *t = atomic_load_explicit(&g_tab, memory_order_relaxed);
    for (uint32_t i = 0; t && i < t->cap; i++) /* (the newest holds every entry) */
        if (atomic_load_explicit(&t->e[i].hash, memory_order_relaxed))
            free(t->e[i].frames);
    while (t) {
        stack_table *older = t->older;
        free(t);
        t = older;
    }
    free(g_ips);
    atomic_store_explicit(&g_gen, atomic_load(&g_gen) + 1, memory_order_relaxed); /* memos */
    atomic_store_explicit(&g_tab, NULL, memory_order_relaxed);
    g_ips = NULL;
    g_count = g_ip_cap = g_ip_count = g_mod_count = 0;
}
