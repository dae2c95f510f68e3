/* demangle.c — C++ symbol demangling for native frames (tables.h: demangle), through
 * libstdc++'s demangler, from its archive (linked statically: the demangler's objects alone, so
 * the analyzer never loads libstdc++.so). No C++ source needed. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "tables.h"

/* The demangler's callback form (the object of __cxa_demangle, which is built on it), declared
 * here so the analyzer stays C: the demangled text handed to callback in pieces; 0, or < 0 when
 * mangled is not a C++ name. It takes no heap memory (its tables are on the stack). */
extern int __gcclibcxx_demangle_callback(const char *mangled,
                                         void (*callback)(const char *, size_t, void *),
                                         void *opaque);

/* A demangled name grows at most this many times its mangled length (+ DEMANGLE_SLACK): a
 * mangled name's back-references can double what it says at each level, so ~500 bytes said
 * hundreds of megabytes (49 such SYMBOL names: report 10.5 s and 777 MB; 3 levels more,
 * gigabytes), while a real name says a few times its bytes, and any under 64 KiB is taken. */
#define DEMANGLE_RATIO 64u
#define DEMANGLE_SLACK (64u << 10)

typedef struct dm_out {
    char *p;
    size_t n, cap, max;
    int oom;
    jmp_buf stop; /* the demangler stopped: its text past max, or no memory for it */
} dm_out;

/* dm_put: the demangler's next piece appended (NUL after it); past o->max, or out of memory, the
 * demangler is left (longjmp: it holds nothing to release) */
static void dm_put(const char *s, size_t n, void *opaque)
{
    dm_out *o = opaque;
    if (n >= o->max - o->n)
        longjmp(o->stop, 1);
    if (o->n + n + 1 > o->cap) {
        size_t cap = (o->n + n + 1) * 2 < o->max ? (o->n + n + 1) * 2 : o->max;
        char *np = realloc(o->p, cap);
        if (!np) {
            o->oom = 1;
            longjmp(o->stop, 1);
        }
        o->p = np;
        o->cap = cap;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = 0;
}

/* dm_run: the demangler on z into o; 0, or < 0 (not a C++ name, or stopped by dm_put) */
static int dm_run(const char *z, dm_out *o)
{
    if (setjmp(o->stop))
        return -2;
    return __gcclibcxx_demangle_callback(z, dm_put, o);
}

int demangle(const char *name, size_t len, char **out)
{
    *out = NULL;
    if (len < 2 || name[0] != '_' || name[1] != 'Z')
        return 0;
    char small[256];
    char *z = len < sizeof small ? small : malloc(len + 1);
    if (!z)
        return -1;
    memcpy(z, name, len);
    z[len] = 0;
    dm_out o = {NULL, 0, 0, DEMANGLE_RATIO * len + DEMANGLE_SLACK, 0};
    int status = dm_run(z, &o);
    if (z != small)
        free(z);
    if (status != 0 || !o.p) { /* not a C++ name, or one whose text is past the bound */
        free(o.p);
        if (o.oom) { /* our allocation failed: not "not a C++ name" */
            mem_note_failure();
            return -1;
        }
        return 0;
    }
    *out = o.p;
    return 0;
}
