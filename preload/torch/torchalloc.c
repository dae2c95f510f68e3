/* torchalloc.c — the C side of the allocator tracker: finds PyTorch's live caching allocator
 * from libc10_cuda.so's own .symtab, checks it (vtable, method, TraceEntry layout), attaches
 * through bridge.cpp, self-checks the first segment and records each tensor ALLOC / FREE.
 * The segment hooks call vt__torch_segment; see torchalloc.h and docs/torch-allocator.md. */
#include "torchalloc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/attr.h"
#include "core/config.h"
#include "core/quietio.h"
#include "core/realsym.h"
#include "core/record.h"
#include "core/thread.h"
#include "vramtrace/env.h"
#include "vramtrace/trace_format.h"

/* ---- layouts --------------------------------------------------------------------------- */
static const struct {
    const char *mangled, *ns;
} g_layouts[] = {{"", "none"},
#define VT_TORCH_LAYOUT_ROW(id, mangled, ns, rel) {mangled, ns},
                 VT_TORCH_LAYOUTS(VT_TORCH_LAYOUT_ROW)
#undef VT_TORCH_LAYOUT_ROW
};
enum { N_LAYOUTS = sizeof g_layouts / sizeof g_layouts[0] };

int vt__torch_layout_of(const char *mangled)
{
    size_t np = strlen(VT_TORCH_SYM_ATTACH_PREFIX);
    if (!mangled || strncmp(mangled, VT_TORCH_SYM_ATTACH_PREFIX, np))
        return VT_TORCH_LAYOUT_NONE;
    for (int i = 1; i < N_LAYOUTS; i++)
        if (!strcmp(mangled + np, g_layouts[i].mangled))
            return i;
    return VT_TORCH_LAYOUT_NONE;
}

const char *vt__torch_layout_name(int layout)
{
    return layout > 0 && layout < N_LAYOUTS ? g_layouts[layout].ns : "unknown";
}

/* ---- the ELF file's .symtab -------------------------------------------------------------- */
static int in_file(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

int vt__torch_read_symtab(const char *path, uint64_t base, vt__torch_syms *out, char *why,
                          size_t whylen)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open %s", path);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        snprintf(why, whylen, "%s: not an ELF file", path);
        return -1;
    }
    uint64_t size = (uint64_t)st.st_size;
    const unsigned char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(why, whylen, "%s: cannot map", path);
        return -1;
    }
    int rc = -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    const Elf64_Shdr *sh = NULL;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size)) {
        snprintf(why, whylen, "%s: not a 64-bit ELF file", path);
        goto out;
    }
    sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    const Elf64_Shdr *symtab = NULL;
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            symtab = &sh[i];
    if (!symtab || symtab->sh_link >= eh->e_shnum || symtab->sh_entsize != sizeof(Elf64_Sym) ||
        !in_file(symtab->sh_offset, symtab->sh_size, size)) {
        snprintf(why, whylen, "%s has no .symtab (stripped)", path);
        goto out;
    }
    const Elf64_Shdr *strtab = &sh[symtab->sh_link];
    if (!in_file(strtab->sh_offset, strtab->sh_size, size)) {
        snprintf(why, whylen, "%s: bad string table", path);
        goto out;
    }
    const Elf64_Sym *syms = (const Elf64_Sym *)(m + symtab->sh_offset);
    const char *strs = (const char *)(m + strtab->sh_offset);
    uint64_t nsyms = symtab->sh_size / sizeof(Elf64_Sym), nstr = strtab->sh_size;
    uint64_t adj = eh->e_type == ET_DYN ? base : 0;
    for (uint64_t i = 0; i < nsyms; i++) {
        const Elf64_Sym *s = &syms[i];
        if (!s->st_name || s->st_name >= nstr || !s->st_value || s->st_shndx == SHN_UNDEF)
            continue;
        const char *name = strs + s->st_name;
        if (!memchr(name, '\0', nstr - s->st_name))
            continue;
        if (!strcmp(name, VT_TORCH_SYM_ALLOCATOR)) {
            out->allocator = adj + s->st_value;
        } else if (!strcmp(name, VT_TORCH_SYM_INITIALIZED)) {
            out->initialized = adj + s->st_value;
        } else if (!strcmp(name, VT_TORCH_SYM_VTABLE)) {
            out->vtable = adj + s->st_value;
            out->vtable_size = s->st_size;
        } else if (!strncmp(name, VT_TORCH_SYM_ATTACH_PREFIX, strlen(VT_TORCH_SYM_ATTACH_PREFIX))) {
            int layout = vt__torch_layout_of(name);
            if (!out->attach || (layout && !out->layout)) { /* a known layout wins */
                out->attach = adj + s->st_value;
                out->layout = layout;
                snprintf(out->attach_name, sizeof out->attach_name, "%s", name);
            }
        }
    }
    if (!out->allocator || !out->vtable || !out->attach)
        snprintf(why, whylen, "%s: no %s in .symtab", path,
                 !out->allocator ? "c10::cuda::CUDACachingAllocator::allocator"
                 : !out->vtable  ? "vtable for NativeCachingAllocator"
                                 : "NativeCachingAllocator::attachAllocatorTraceTracker");
    else
        rc = 0;
out:
    munmap((void *)m, size);
    return rc;
}

long vt__torch_find_slot(const uint64_t *vtable, uint64_t size, uint64_t vptr, uint64_t fn,
                         char *why, size_t whylen)
{
    if (vptr != (uint64_t)(uintptr_t)(vtable + 2)) {
        snprintf(why, whylen, "the allocator's vtable is %#llx, not NativeCachingAllocator's %#llx",
                 (unsigned long long)vptr, (unsigned long long)(uintptr_t)(vtable + 2));
        return -1;
    }
    uint64_t n = size / 8;
    for (uint64_t i = 2; i < n; i++)
        if (vtable[i] == fn)
            return (long)(i - 2);
    snprintf(why, whylen, "attachAllocatorTraceTracker is not in NativeCachingAllocator's vtable");
    return -1;
}

int vt__torch_check(int action, uint64_t addr, uint64_t size, uint64_t expect_addr,
                    uint64_t expect_size, int expect_map, char *why, size_t whylen)
{
    int ok;
    if (action == VT_TORCH_SEGMENT_ALLOC)
        ok = !expect_map && addr == expect_addr && size == expect_size;
    else if (action == VT_TORCH_SEGMENT_MAP)
        ok = expect_map && expect_addr >= addr && expect_size <= size &&
             expect_addr + expect_size == addr + size;
    else
        ok = 0;
    if (!ok)
        snprintf(why, whylen,
                 "the tracker's first segment (action %d, %#llx, %llu bytes) is not the one the "
                 "hook recorded (%s %#llx, %llu bytes)",
                 action, (unsigned long long)addr, (unsigned long long)size,
                 expect_map ? "map" : "alloc", (unsigned long long)expect_addr,
                 (unsigned long long)expect_size);
    return ok;
}

/* ---- state ----------------------------------------------------------------------------------- */
static _Atomic int g_state = VT_TORCH_IDLE;
static _Atomic int g_claimed; /* one thread attaches, once */
static char g_reason[512];
static __thread uint64_t t_seg_addr, t_seg_size;
static __thread int t_seg_map, t_checker, t_unconfirmed;
static _Atomic uint64_t g_dropped; /* events of other threads while the check was pending */
/* no libc10_cuda.so among the loaded objects when the loader's generation was g_absent_gen
 * (g_absent set): it is looked for again only once that changes (a library was loaded), looked
 * at no more often than every GEN_EVERY_NS of the segments' own event times */
static _Atomic int g_absent;
static _Atomic uint64_t g_absent_gen, g_gen_ns;
#define GEN_EVERY_NS 50000u
int vt__torch_loaded_hint; /* see torchalloc.h: written by the dlsym trampoline */

int vt__torch_state(void)
{
    return atomic_load(&g_state);
}

const char *vt__torch_reason(void)
{
    return atomic_load(&g_state) == VT_TORCH_REFUSED ? g_reason : "";
}

void vt__torch_reset(void)
{
    atomic_store(&g_state, VT_TORCH_IDLE);
    atomic_store(&g_claimed, 0);
    atomic_store(&g_dropped, 0);
    atomic_store(&g_absent, 0);
    atomic_store(&g_gen_ns, 0);
    g_reason[0] = '\0';
    t_seg_addr = t_seg_size = 0;
    t_seg_map = t_checker = t_unconfirmed = 0;
}

static void note(int code, uint64_t detail)
{
    vt__event ev = {VT_API_torchTrackerNote, 0, -1, detail, (uint64_t)code, 0, 0, 0, 0};
    vt__record_alloc(&ev);
}

/* refuse: stop for good, say why once on stderr (unless quiet: an expected other backend) and
 * in the trace. */
static void refuse(int code, const char *why, int quiet)
{
    int prev = atomic_exchange(&g_state, VT_TORCH_REFUSED);
    if (prev == VT_TORCH_REFUSED)
        return;
    snprintf(g_reason, sizeof g_reason, "%s", why);
    if (!quiet)
        vt__quiet_stderr("vramtrace: not using PyTorch's allocator tracker: %s; tensors are not "
                         "recorded, segments are (segment mode)\n",
                         why);
    note(code, 0);
}

/* find_c10: vt__loaded_objects callback: the loaded libc10_cuda.so's path, base and the ranges
 * its PT_LOAD segments occupy (every address taken from the file must lie inside one). */
struct found {
    char path[4096];
    uint64_t base;
    uint64_t lo[16], hi[16];
    int nload;
};
static int find_c10(struct dl_phdr_info *info, size_t sz, void *data)
{
    (void)sz;
    const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
    const char *base = slash ? slash + 1 : name;
    if (!base || strncmp(base, "libc10_cuda.so", 14))
        return 0;
    struct found *f = data;
    snprintf(f->path, sizeof f->path, "%s", name);
    f->base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum && f->nload < 16; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        f->lo[f->nload] = info->dlpi_addr + ph->p_vaddr;
        f->hi[f->nload++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    return 1;
}

/* loaded: [a, a + n) lies inside one loaded segment of the library. */
static int loaded(const struct found *f, uint64_t a, uint64_t n)
{
    for (int i = 0; i < f->nload; i++)
        if (a >= f->lo[i] && a <= f->hi[i] && n <= f->hi[i] - a)
            return 1;
    return 0;
}

/* try_attach: the whole attach, on the thread whose cudaMalloc the allocator is making. */
static void try_attach(void)
{
    char why[700];
    /* one attacher at a time (g_claimed); the library's symbols are read once and kept while
     * the allocator is not initialised yet */
    static struct found f;
    static vt__torch_syms s;
    static int have_syms;
    if (!vt__config_get()->torch_tracker) {
        atomic_store(&g_state, VT_TORCH_REFUSED);
        snprintf(g_reason, sizeof g_reason, "VRAMTRACE_TORCH_TRACKER=0");
        note(VT_TRACKER_OFF, 0);
        return;
    }
    if (!have_syms) {
        memset(&f, 0, sizeof f);
        uint64_t gen = vt__loaded_generation(); /* before the walk: a load during it changes it */
        if (!vt__loaded_objects(find_c10, &f)) {
            /* no PyTorch in this process (yet): looked for again once a library was loaded */
            atomic_store(&g_absent_gen, gen);
            atomic_store(&g_absent, 1);
            atomic_store(&g_claimed, 0);
            return;
        }
        atomic_store(&g_absent, 0);
        if (vt__torch_read_symtab(f.path, f.base, &s, why, sizeof why) < 0) {
            refuse(VT_TRACKER_NO_SYMBOL, why, 0);
            return;
        }
        have_syms = 1;
    }
    if (!s.layout) {
        snprintf(why, sizeof why, "unknown TraceEntry layout in %s", s.attach_name);
        refuse(VT_TRACKER_UNKNOWN_LAYOUT, why, 0);
        return;
    }
    if (!loaded(&f, s.allocator, 8) || !loaded(&f, s.vtable, s.vtable_size) ||
        !loaded(&f, s.attach, 1)) {
        snprintf(why, sizeof why,
                 "%.600s: its symbols lie outside the loaded library (changed on disk?)", f.path);
        refuse(VT_TRACKER_OUTSIDE, why, 0);
        return;
    }
    void *obj = atomic_load((void *_Atomic *)(uintptr_t)s.allocator);
    if (!obj) {
        refuse(VT_TRACKER_NO_ALLOCATOR, "c10::cuda::CUDACachingAllocator::allocator is null", 0);
        return;
    }
    long slot = vt__torch_find_slot((const uint64_t *)(uintptr_t)s.vtable, s.vtable_size,
                                    *(const uint64_t *)obj, s.attach, why, sizeof why);
    if (slot < 0) {
        /* the cudaMallocAsync backend (--tensors) records every tensor already: quiet */
        refuse(VT_TRACKER_OTHER_ALLOCATOR, why, 1);
        return;
    }
    /* not initialised yet (this cudaMalloc is not the allocator's): the per-device allocators
     * do not exist, an attach now would be lost; try again at the next segment */
    char why2[300];
    int init_known =
        s.initialized && loaded(&f, s.initialized, 1) &&
        vt__torch_find_slot((const uint64_t *)(uintptr_t)s.vtable, s.vtable_size,
                            *(const uint64_t *)obj, s.initialized, why2, sizeof why2) >= 0;
    if (init_known && !((unsigned char (*)(void *))(uintptr_t)s.initialized)(obj)) {
        atomic_store(&g_claimed, 0);
        return;
    }
    /* without initialized(), this cudaMalloc must be the allocator's: its SEGMENT_ALLOC has to
     * come before this thread's next cudaMalloc (vt__torch_segment), or the attach was lost */
    t_checker = !init_known;
    t_unconfirmed = 1;
    atomic_store(&g_state, VT_TORCH_CHECKING);
    void *method = (void *)(uintptr_t)((const uint64_t *)(uintptr_t)s.vtable)[2 + slot];
    vt__torch_bridge_attach(obj, method, vt__torch_on_entry);
    note(VT_TRACKER_ATTACHED, (uint64_t)s.layout);
}

/* unchanged_absence: PyTorch's library was not loaded at the last look, and no library was loaded
 * since (or that look was just now, by the segments' times, and no dlsym came since): no attach
 * to try. No lock is taken on the way (the loader's is, at most every GEN_EVERY_NS or after a
 * dlsym). */
static int unchanged_absence(void)
{
    if (!atomic_load_explicit(&g_absent, memory_order_acquire))
        return 0;
    uint64_t now = vt__record_last_ns(),
             last = atomic_load_explicit(&g_gen_ns, memory_order_relaxed);
    int hint = __atomic_load_n(&vt__torch_loaded_hint, __ATOMIC_RELAXED);
    if (!hint && now && now >= last && now - last < GEN_EVERY_NS)
        return 1; /* (a thread with no record's time yet always looks) */
    if (hint)
        __atomic_store_n(&vt__torch_loaded_hint, 0, __ATOMIC_RELAXED);
    atomic_store_explicit(&g_gen_ns, now, memory_order_relaxed);
    return vt__loaded_generation() == atomic_load(&g_absent_gen);
}

/* segment_attach: vt__torch_segment past its quick answers (apart, so that those save no
 * registers: every cudaMalloc without PyTorch asks them) */
static __attribute__((noinline)) void segment_attach(int st, uint64_t addr, uint64_t size, int map)
{
    /* the hook has left its guard: take it again, so nothing the attach calls is recorded,
     * and leave the caller the errno its real call left */
    int err = errno;
    vt__enter();
    if (st == VT_TORCH_CHECKING && t_checker && !map && t_unconfirmed) {
        /* two segments and no tracker event between them: the tracker does not see them */
        refuse(VT_TRACKER_NO_SEGMENT, "the tracker did not report the segment the hook recorded",
               0);
    } else {
        t_seg_addr = addr;
        t_seg_size = size;
        t_seg_map = map;
        if (st == VT_TORCH_IDLE && !atomic_exchange(&g_claimed, 1))
            try_attach();
    }
    vt__leave();
    errno = err;
}

void vt__torch_segment(uint64_t addr, uint64_t size, int map)
{
    int st = atomic_load_explicit(&g_state, memory_order_acquire);
    if (VT__LIKELY(st == VT_TORCH_ACTIVE || st == VT_TORCH_REFUSED))
        return;
    if (st == VT_TORCH_IDLE && unchanged_absence())
        return;
    segment_attach(st, addr, size, map);
}

/* ---- the callback ------------------------------------------------------------------------- */
/* A free the allocator has requested and not completed, per device. PyTorch lowers
 * allocated_bytes (max_memory_allocated's count) at FREE_REQUESTED and requested_bytes at
 * FREE_COMPLETED; for an ordinary free the two come one after the other, and the free is
 * recorded once (torchFree, at FREE_COMPLETED). A block used on another stream (record_stream)
 * completes later: when any other action of its device comes first, the request is recorded
 * (torchFreeRequested) before it, so the block count falls before anything can rise. The
 * allocator calls its trackers under the device's lock: one slot per device is never shared. */
#define VT_TORCH_REQ_DEVICES 64
typedef struct {
    uint64_t addr, size, stream;
    int set;
} requested;
static requested g_requested[VT_TORCH_REQ_DEVICES];

/* requested_of: the slot of e's device, or NULL for a device past the table (not held) */
static requested *requested_of(const vt__torch_entry *e)
{
    unsigned d = (unsigned)(int)e->device;
    return d < VT_TORCH_REQ_DEVICES ? &g_requested[d] : NULL;
}

static void record_request(const vt__torch_entry *e)
{
    requested *q = requested_of(e);
    if (!q || !q->set)
        return;
    q->set = 0;
    if (e->action == VT_TORCH_FREE_COMPLETED && e->addr == q->addr)
        return; /* completed at once: the one torchFree says it */
    vt__event ev = {VT_API_torchFreeRequested, 0, e->device, q->addr, q->size, q->stream, 0, 0, 0};
    vt__record_free(&ev);
}

static void record(const vt__torch_entry *e)
{
    uint16_t api;
    record_request(e);
    switch (e->action) {
    case VT_TORCH_ALLOC:
        api = VT_API_torchAlloc;
        break;
    case VT_TORCH_FREE_COMPLETED:
        api = VT_API_torchFree;
        break;
    case VT_TORCH_SEGMENT_ALLOC:
        api = VT_API_torchSegmentAlloc;
        break;
    case VT_TORCH_SEGMENT_FREE:
        api = VT_API_torchSegmentFree;
        break;
    case VT_TORCH_SEGMENT_MAP:
        api = VT_API_torchSegmentMap;
        break;
    case VT_TORCH_SEGMENT_UNMAP:
        api = VT_API_torchSegmentUnmap;
        break;
    case VT_TORCH_OOM:
        api = VT_API_torchOom;
        break;
    case VT_TORCH_FREE_REQUESTED: {
        requested *q = requested_of(e);
        if (q)
            q->addr = e->addr, q->size = e->size, q->stream = e->stream, q->set = 1;
        return; /* recorded only if another action comes before its completion */
    }
    default:
        return; /* SNAPSHOT: no change of memory */
    }
    vt__event ev = {api, 0, e->device, e->addr, e->size, e->stream, 0, 0, 0};
    if (api == VT_API_torchFree)
        vt__record_free(&ev);
    else
        vt__record_alloc(&ev);
}

void vt__torch_on_entry(const vt__torch_entry *e)
{
    int st = atomic_load_explicit(&g_state, memory_order_acquire);
    if (st != VT_TORCH_ACTIVE && st != VT_TORCH_CHECKING)
        return;
    int rec = vt__enter(); /* nothing our recording does is recorded again */
    if (e->action < VT_TORCH_ALLOC || e->action > VT_TORCH_OOM) {
        char why[96];
        snprintf(why, sizeof why, "the tracker reported action %d", e->action);
        refuse(VT_TRACKER_BAD_ENTRY, why, 0);
    } else if (st == VT_TORCH_CHECKING) {
        int seg = e->action == VT_TORCH_SEGMENT_ALLOC || e->action == VT_TORCH_SEGMENT_MAP;
        if (!seg) {
            atomic_fetch_add(&g_dropped, 1); /* before the check: not trusted */
        } else { /* the segment this thread's hook just recorded (any thread may check) */
            char why[400];
            if (vt__torch_check(e->action, e->addr, e->size, t_seg_addr, t_seg_size, t_seg_map, why,
                                sizeof why)) {
                t_unconfirmed = 0;
                atomic_store(&g_state, VT_TORCH_ACTIVE);
                uint64_t dropped = atomic_load(&g_dropped);
                if (dropped) /* allocated may miss these: say how many */
                    note(VT_TRACKER_DROPPED, dropped);
                if (rec)
                    record(e);
            } else {
                refuse(VT_TRACKER_SEGMENT_MISMATCH, why, 0);
            }
        }
    } else if (rec) {
        record(e);
    }
    vt__leave();
}
