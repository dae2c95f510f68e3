/* realsym.h — realsym.c's interface: the real functions behind our hooks (the real dlsym,
 * RTLD_NEXT lookups, the real libcuda's own exports). realsym.c calls nothing else of the
 * preload. */
#ifndef VT_PRELOAD_REALSYM_H
#define VT_PRELOAD_REALSYM_H

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

#endif
