/* realsym.c — finding the real functions behind our hooks: the real dlsym (hook_dlsym.c
 * overrides the exported one), RTLD_NEXT lookups through it, and the real libcuda's own
 * symbols. A core file (not a hook) so unit tests link it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core.h"

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

/* vt__next: RTLD_NEXT from this library: the first definition after libvramtrace.so. The
 * call to the real dlsym is made from this file, so "next" is relative to us, as wanted. */
void *vt__next(const char *name)
{
    return vt__real_dlsym(RTLD_NEXT, name);
}

static void *libcuda_handle(void)
{
    void *h = atomic_load_explicit(&g_libcuda, memory_order_acquire);
    if (h)
        return h;
    h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
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

void *vt__driver_sym(const char *name)
{
    void *h = libcuda_handle();
    return h ? vt__real_dlsym(h, name) : NULL;
}
