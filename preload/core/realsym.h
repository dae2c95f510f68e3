/* realsym.h — realsym.c's interface: the real functions behind our hooks (the real dlsym,
 * RTLD_NEXT lookups, the real libcuda's own exports, a driver symbol's absence cached, the
 * loaded objects). realsym.c calls only the settings (config.c). */
#ifndef VT_PRELOAD_REALSYM_H
#define VT_PRELOAD_REALSYM_H

#include <stddef.h>
#include <stdint.h>

#include "attr.h"

/* vt__real_dlsym: the real dlsym (never our override). */
void *vt__real_dlsym(void *handle, const char *name);
/* vt__real_dlsym_ptr: the real dlsym itself (for hook_dlsym.c's tail jump). */
void *vt__real_dlsym_ptr(void);
/* vt__next: dlsym(RTLD_NEXT, name) through the real dlsym, else the loaded objects. */
void *vt__next(const char *name);
/* vt__driver_sym: a function of the real libcuda (dlopen'ed RTLD_NOLOAD first, then
 * "libcuda.so.1"), bypassing our wrappers; NULL if absent. */
void *vt__driver_sym(const char *name);

/* vt__loaded_objects: dl_iterate_phdr(cb, data); in a fork child of a multithreaded parent
 * (config loader_unsafe), where the loader's lock may never be released, the same walk without
 * it (the objects' names, bases and program headers; dlpi_adds / dlpi_tls_* are 0). */
struct dl_phdr_info;
int vt__loaded_objects(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);

/* vt__loaded_generation: a number that changes when an object is loaded or unloaded (the loader's
 * dlpi_adds / dlpi_subs from the first object dl_iterate_phdr reports; in a fork child of a
 * multithreaded parent, the loader's list walked without the lock). */
uint64_t vt__loaded_generation(void);

/* A cached answer: NULL = not looked up yet, VT__SYM_MISSING = the driver lacks it. */
#define VT__SYM_MISSING ((void *)1)
/* vt__driver_sym_cached: vt__driver_sym(name) looked up once per slot, an absent symbol
 * included (a driver without cuCtxGetDevice is not searched again on every event). Without
 * a loadable libcuda nothing is cached. Runtime functions (vt__next) are not cached as absent:
 * a libcudart may be loaded later, and a hook whose real function is missing makes no event. A slot
 * another writer fills with a real pointer (cuGetProcAddress) wins over MISSING only if it was
 * still NULL. Thread-safe. */
void *vt__driver_sym_cached(_Atomic(void *) *slot, const char *name);
/* vt__driver_sym_lookups: how many driver lookups were made so far (tests). */
unsigned long vt__driver_sym_lookups(void);

#endif
