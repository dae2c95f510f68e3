/* realsym.c — finding the real functions behind our hooks: the real dlsym (hook_dlsym.c
 * overrides the exported one), RTLD_NEXT lookups through it, the real libcuda's own symbols,
 * and the walk over the loaded objects that needs no loader lock in a fork child. A core file
 * (not a hook) so unit tests link it. Interface: realsym.h. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "config.h"
#include "realsym.h"

/* ---- the loaded objects, with or without the loader's lock ---------------------------------
 * dl_iterate_phdr holds the loader's lock while it walks. In a fork child of a multithreaded
 * parent that lock may be held for ever (glibc does not reset it in the child), so there the
 * objects are walked from the loader's public list (_r_debug) instead, each program header
 * table found from its mapped ELF header (the program's from the auxiliary vector). Nothing
 * is taken, nothing allocated; the child has one thread when it starts. */
static int walk_unlocked(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    int first = 1;
    for (struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
        struct dl_phdr_info info;
        memset(&info, 0, sizeof info);
        info.dlpi_addr = m->l_addr;
        info.dlpi_name = m->l_name ? m->l_name : "";
        if (first || !info.dlpi_name[0]) { /* the program */
            info.dlpi_phdr = (const ElfW(Phdr) *)getauxval(AT_PHDR);
            info.dlpi_phnum = (ElfW(Half))getauxval(AT_PHNUM);
        } else if (m->l_addr) { /* a shared object: linked at 0, its ELF header first */
            const ElfW(Ehdr) *e = (const ElfW(Ehdr) *)m->l_addr;
            if (memcmp(e->e_ident, ELFMAG, SELFMAG) || e->e_phentsize != sizeof(ElfW(Phdr)) ||
                e->e_phnum > 512)
                continue;
            info.dlpi_phdr = (const ElfW(Phdr) *)(m->l_addr + e->e_phoff);
            info.dlpi_phnum = e->e_phnum;
        }
        first = 0;
        if (!info.dlpi_phdr)
            continue;
        int r = cb(&info, sizeof info, data);
        if (r)
            return r;
    }
    return 0;
}

int vt__loaded_objects(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    if (vt__config_get()->loader_unsafe)
        return walk_unlocked(cb, data);
    return dl_iterate_phdr(cb, data);
}

static int first_gen(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uint64_t *)data = (uint64_t)info->dlpi_adds << 32 ^ (uint64_t)info->dlpi_subs;
    return 1; /* the counts come with every object: the first is enough */
}

uint64_t vt__loaded_generation(void)
{
    uint64_t g = 0;
    if (!vt__config_get()->loader_unsafe) {
        dl_iterate_phdr(first_gen, &g);
        return g;
    }
    /* no counts without the lock: the list's length and last object stand for them */
    for (struct link_map *m = _r_debug.r_map; m; m = m->l_next)
        g = (g + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)m;
    return g;
}

typedef void *(*dlsym_fn)(void *, const char *);

static _Atomic(dlsym_fn) g_real_dlsym;
static _Atomic(void *) g_libcuda;

/* resolve_real_dlsym: glibc 2.34+ versions dlsym as GLIBC_2.34; older as GLIBC_2.2.5. */
static dlsym_fn resolve_real_dlsym(void)
{
    dlsym_fn f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f)
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    atomic_store_explicit(&g_real_dlsym, f, memory_order_release);
    return f;
}

void *vt__real_dlsym_ptr(void)
{
    dlsym_fn f = atomic_load_explicit(&g_real_dlsym, memory_order_acquire);
    return (void *)(f ? f : resolve_real_dlsym());
}

void *vt__real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = (dlsym_fn)vt__real_dlsym_ptr();
    return f ? f(handle, name) : NULL;
}

/* find_in_loaded: walks the loaded objects (not this one) for a definition of name: objects
 * whose path contains `prefer` first, then any. A library loaded RTLD_LOCAL (libcudart as a
 * dependency of torch's dlopen'ed extension, or ctypes.CDLL) is invisible to RTLD_NEXT but
 * is found here through dlopen(path, RTLD_NOLOAD). */
struct find_ctx {
    const char *name, *prefer;
    void *self_base;
    void *found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_ctx *c = data;
    const char *path = info->dlpi_name;
    if (!path || !*path || (void *)info->dlpi_addr == c->self_base)
        return 0;
    if (c->prefer && !strstr(path, c->prefer))
        return 0;
    void *h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return 0;
    void *f = vt__real_dlsym(h, c->name);
    dlclose(h);
    Dl_info di;
    if (f && dladdr(f, &di) && di.dli_fbase != c->self_base) {
        c->found = f;
        return 1;
    }
    return 0;
}

static void *find_in_loaded(const char *name, const char *prefer)
{
    Dl_info self;
    if (!dladdr((void *)&find_in_loaded, &self))
        return NULL;
    struct find_ctx c = {name, prefer, self.dli_fbase, NULL};
    vt__loaded_objects(find_cb, &c);
    if (!c.found && prefer) {
        c.prefer = NULL;
        vt__loaded_objects(find_cb, &c);
    }
    return c.found;
}

/* vt__next: RTLD_NEXT from this library: the first definition after libvramtrace.so (the
 * call to the real dlsym is made from this file, so "next" is relative to us); when the
 * defining library is not in the global scope, the loaded objects are searched. */
void *vt__next(const char *name)
{
    void *f = vt__real_dlsym(RTLD_NEXT, name);
    if (!f)
        f = find_in_loaded(name, !strncmp(name, "cuda", 4) ? "libcudart" : "libcuda");
    return f;
}

static void *libcuda_handle(void)
{
    void *h = atomic_load_explicit(&g_libcuda, memory_order_acquire);
    if (h)
        return h;
    h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (!h && !vt__config_get()->loader_unsafe) /* loading one takes the loader's lock */
        h = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!h)
        return NULL;
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&g_libcuda, &expected, h)) {
        dlclose(h); /* another thread won; drop our extra reference */
        h = expected;
    }
    return h;
}

static _Atomic unsigned long g_lookups;

void *vt__driver_sym(const char *name)
{
    void *h = libcuda_handle();
    atomic_fetch_add_explicit(&g_lookups, 1, memory_order_relaxed);
    return h ? vt__real_dlsym(h, name) : NULL;
}

void *vt__driver_sym_cached(_Atomic(void *) *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (VT__LIKELY(p))
        return p == VT__SYM_MISSING ? NULL : p;
    if (!libcuda_handle())
        return NULL; /* no driver (yet): asked again next time */
    p = vt__driver_sym(name);
    void *expected = NULL;
    atomic_compare_exchange_strong_explicit(slot, &expected, p ? p : VT__SYM_MISSING,
                                            memory_order_acq_rel, memory_order_acquire);
    return p;
}

unsigned long vt__driver_sym_lookups(void)
{
    return atomic_load(&g_lookups);
}
