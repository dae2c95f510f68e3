/* demangle.c — C++ symbol demangling for native frames (tables.h: demangle), through
 * __cxa_demangle from libstdc++'s archive (linked statically: the demangler's objects alone, so
 * the analyzer never loads libstdc++.so). No C++ source needed. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "tables.h"

/* The Itanium C++ ABI entry point, declared here so the analyzer stays C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *demangle(const char *name, size_t len)
{
    if (len < 2 || name[0] != '_' || name[1] != 'Z')
        return NULL;
    char small[256];
    char *z = len < sizeof small ? small : malloc(len + 1);
    if (!z)
        return NULL;
    memcpy(z, name, len);
    z[len] = 0;
    int status = -1;
    char *out = __cxa_demangle(z, NULL, NULL, &status);
    if (z != small)
        free(z);
    if (status != 0) {
        if (status == -1) /* libstdc++'s own allocation failed: not "not a C++ name" */
            mem_note_failure();
        free(out);
        return NULL;
    }
    return out;
}
